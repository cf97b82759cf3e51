"""The lit/FileCheck suite (tests/filecheck) run once per pytest session, in the background.

lit's work is a few hundred short `zant-opt | filecheck` processes, while most of the pytest
suite runs in one process (Python, then one Zig build or QEMU run at a time) and leaves the
machine's other cores idle. So the session starts lit as soon as collection ends, on the cores
pytest does not use (all but one; all of them when the lit items are all the session runs), and
`test_lit.py`'s items wait for its results when their turn comes: the suite's wall time is then
mostly hidden behind the rest (on the 2-core CI machine lit alone took 160 s of it).

`tests/conftest.py` calls `start` after collection and `stop` at the end of the session; the
results are lit's own JSON report (`-o`), one entry per test file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

SUITE = Path(__file__).parent / "filecheck"
LIT = [sys.executable, "-c", "from lit.main import main; main()"]
TEST_FILE = "test_lit.py"
"""The test module whose `test_lit_file[<lit test name>]` items report the suite."""
STASH = pytest.StashKey["LitRun"]()
"""Where the session keeps its lit run (`pytest.Config.stash`)."""


@dataclass
class LitRun:
    """A lit process over some of the suite's files, writing its JSON results to `output`."""

    process: subprocess.Popen
    output: Path
    scratch: tempfile.TemporaryDirectory

    def results(self) -> dict[str, dict]:
        """Each lit test's result by its name relative to the suite (`passes/dce.mlir`), once
        lit has finished; a lit that wrote no report raises with its output."""
        stdout, stderr = self.process.communicate()
        if not self.output.exists():
            raise RuntimeError(f"lit wrote no results (exit {self.process.returncode}):\n{stdout}{stderr}")
        tests = json.loads(self.output.read_text())["tests"]
        return {r["name"].split(" :: ", 1)[1]: r for r in tests if " :: " in r["name"]}

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()
        self.scratch.cleanup()


@cache
def discover() -> tuple[list[str], str]:
    """The suite's tests as lit names them relative to the suite (`passes/dce.mlir`: lit.cfg's
    suffixes and excludes decide), and lit's output when it found none."""
    result = subprocess.run([*LIT, "--show-tests", str(SUITE)], capture_output=True, text=True)
    tests = [line.split(" :: ", 1)[1].strip() for line in result.stdout.splitlines() if " :: " in line]
    return tests, "" if tests else result.stdout + result.stderr


def start(selected: list[str], others: int) -> LitRun:
    """Start lit over the `selected` tests (the whole suite when they are all of it) beside
    `others` pytest items: on every core but the one pytest runs in when there are others."""
    all_tests, _ = discover()
    cores = os.cpu_count() or 1
    workers = max(1, cores - 1) if others else cores
    scratch = tempfile.TemporaryDirectory(prefix="zant-lit-")
    output = Path(scratch.name) / "results.json"
    paths = [str(SUITE)] if set(selected) == set(all_tests) else [str(SUITE / t) for t in selected]
    process = subprocess.Popen(
        [*LIT, "-q", "-j", str(workers), "-o", str(output), *paths],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    return LitRun(process, output, scratch)


def lit_items(items) -> list:
    """The session's `test_lit_file` items (each names its lit test in its `test` parameter)."""
    return [
        item for item in items
        if item.path.name == TEST_FILE and hasattr(item, "callspec") and "test" in item.callspec.params
    ]
