"""The lit/FileCheck suite (tests/filecheck) in pytest, one item per lit test file.

The items are the tests lit itself discovers (`lit --show-tests`: lit.cfg's suffixes and
excludes decide). lit runs once per session, over the selected items' files only (`-k`
narrows it), in its own worker processes as `lit tests/filecheck` does, started in the
background as soon as collection ends (`lit_run.py`), and writes its results as JSON (`-o`);
each item then reports its file's result: PASS passes, XFAIL is an
expected failure, UNSUPPORTED skips with lit's reason, any other result fails with lit's
output (the RUN line that failed, its stderr, FileCheck's diagnostics).
"""

import lit_run
import pytest

TESTS, DISCOVERY_OUTPUT = lit_run.discover()


def test_lit_discovers_the_suite():
    assert TESTS, f"lit discovered no test in {lit_run.SUITE}:\n{DISCOVERY_OUTPUT}"


@pytest.fixture(scope="module")
def lit_results(request) -> dict[str, dict]:
    """The results of the lit run the session started after collection (`conftest.py`), over
    the files of the selected `test_lit_file` items, by name."""
    run = request.config.stash.get(lit_run.STASH, None)
    if run is None:
        pytest.fail("no lit run was started for this session (tests/conftest.py starts it after collection)", pytrace=False)
    try:
        return run.results()
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)


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
