import sys
from pathlib import Path

# Test helpers (`e2e.py`, `lit_run.py`) import as plain modules from this folder.
sys.path.insert(0, str(Path(__file__).parent))

import lit_run  # noqa: E402


def pytest_collection_finish(session):
    """Start the lit suite in the background as soon as the session knows which of its files it
    runs (`lit_run`): `test_lit.py`'s items collect its results when their turn comes."""
    if session.config.option.collectonly:
        return
    items = lit_run.lit_items(session.items)
    if items:
        selected = [item.callspec.params["test"] for item in items]
        session.config.stash[lit_run.STASH] = lit_run.start(selected, len(session.items) - len(items))


def pytest_sessionfinish(session):
    run = session.config.stash.get(lit_run.STASH, None)
    if run is not None:
        run.stop()
