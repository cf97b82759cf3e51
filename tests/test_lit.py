"""The lit/FileCheck suite (tests/filecheck) in pytest, one item per lit test file.

The items are the tests lit itself discovers (`lit --show-tests`: lit.cfg's suffixes and
excludes decide). lit runs once per session, over the selected items' files only (`-k`
narrows it), in its own worker processes as `lit tests/filecheck` does, and writes its
results as JSON (`-o`); each item then reports its file's result: PASS passes, XFAIL is an
expected failure, UNSUPPORTED skips with lit's reason, any other result fails with lit's
output (the RUN line that failed, its stderr, FileCheck's diagnostics).
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

SUITE = Path(__file__).parent / "filecheck"
LIT = [sys.executable, "-c", "from lit.main import main; main()"]


def _discover() -> tuple[list[str], str]:
    """The suite's tests as lit names them relative to the suite (`passes/dce.mlir`), and
    lit's output when it found none."""
    result = subprocess.run([*LIT, "--show-tests", str(SUITE)], capture_output=True, text=True)
    tests = [line.split(" :: ", 1)[1].strip() for line in result.stdout.splitlines() if " :: " in line]
    return tests, "" if tests else result.stdout + result.stderr


TESTS, DISCOVERY_OUTPUT = _discover()


def test_lit_discovers_the_suite():
    assert TESTS, f"lit discovered no test in {SUITE}:\n{DISCOVERY_OUTPUT}"


@pytest.fixture(scope="module")
def lit_results(request, tmp_path_factory) -> dict[str, dict]:
    """Run lit once over the files of the selected `test_lit_file` items; their results by name."""
    selected = [
        item.callspec.params["test"]
        for item in request.session.items
        if item.module is request.module and hasattr(item, "callspec") and "test" in item.callspec.params
    ]
    output = tmp_path_factory.mktemp("lit") / "results.json"
    paths = [str(SUITE)] if set(selected) == set(TESTS) else [str(SUITE / t) for t in selected]
    run = subprocess.run([*LIT, "-q", "-o", str(output), *paths], capture_output=True, text=True)
    if not output.exists():
        pytest.fail(f"lit wrote no results (exit {run.returncode}):\n{run.stdout}{run.stderr}", pytrace=False)
    results = json.loads(output.read_text())["tests"]
    return {r["name"].split(" :: ", 1)[1]: r for r in results if " :: " in r["name"]}


@pytest.mark.parametrize("test", TESTS)
def test_lit_file(test, lit_results):
    result = lit_results.get(test)
    assert result is not None, f"lit reported no result for {test}"
    code, output = result["code"], result["output"]
    if code == "UNSUPPORTED":
        pytest.skip(f"lit: UNSUPPORTED {output}".strip())
    if code == "XFAIL":
        pytest.xfail("lit: XFAIL (the file's XFAIL line expects it to fail)")
    if code != "PASS":
        pytest.fail(f"lit: {code}: {test}\n{output}", pytrace=False)
