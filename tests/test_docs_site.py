"""The documentation site (mkdocs.yml, docs/): the generated reference (`zant.tools.gen_docs`)
against the registries it must cover, so a new pass, op, dialect, command or option without
documentation fails here; the README as a short landing page whose quick-start commands are the
ones the project runs; and the site itself, built with `mkdocs build --strict` (warnings, broken
links and anchors are errors) when MkDocs is installed (`pip install -e '.[docs]'`; .ci/run does)."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from zant.tools import gen_docs

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return gen_docs.reference_pages()


def section(text: str, heading: str) -> str:
    """From the line `heading` to the next heading of the same or a higher level."""
    level = heading.split(" ")[0]
    start = text.index("\n" + heading + "\n")
    ends = [m.start() for m in re.finditer(rf"\n#{{1,{len(level)}}} ", text) if m.start() > start]
    return text[start : min(ends, default=len(text))]


def test_every_registered_pass_has_its_docstring_and_options(pages):
    from zant.diagnostics import pass_options
    from zant.passes import builtin_passes

    text = pages["reference/passes.md"]
    assert set(re.findall(r"^## `([\w-]+)`$", text, re.M)) == set(builtin_passes())
    for name, factory in builtin_passes().items():
        part = section(text, f"## `{name}`")
        assert "(no docstring)" not in part, f"pass '{name}' has no docstring: the reference has nothing to say"
        for option, _, default in pass_options(factory()):
            row = re.search(rf"^\| `{re.escape(option)}` \|.*$", part, re.M)
            assert row, f"option '{option}' of pass '{name}' is not in the reference"
            assert ("required" if default is None else f"`{default}`") in row.group(0), row.group(0)


def test_every_op_of_every_registered_dialect(pages):
    from zant.dialects import get_all_dialects
    from zant.driver import make_context

    ctx = make_context()
    names = list(get_all_dialects())
    assert {"onnx", "uop", "arm_dsp", "arm_mve"} <= set(names)
    index = pages["reference/index.md"]
    for name in names:
        dialect = ctx.get_optional_dialect(name)
        assert dialect is not None, name
        page = pages[f"reference/dialects/{name}.md"]
        assert f"(dialects/{name}.md)" in index, f"the reference index does not link the {name} dialect"
        ops_part = page.split("\n## Types and attributes\n")[0]
        documented = set(re.findall(r"^### `([\w.]+)`$", ops_part, re.M))
        registered = {op.get_irdl_definition().name for op in dialect.operations}
        assert documented == registered, (name, sorted(documented ^ registered))
        attributes = set(re.findall(r"^### `([\w.]+)`$", page.split("\n## Types and attributes\n")[-1], re.M))
        assert {a.name for a in dialect.attributes} <= attributes | documented


def test_an_op_shows_its_definition(pages):
    """uop.check: its operand and property with their constraints, its format and the messages
    of its verifier, taken from the definition."""
    from zant.dialects import get_all_dialects

    owner = next(
        name for name, factory in get_all_dialects().items()
        if any(op.get_irdl_definition().name.endswith(".check") for op in factory().operations)
    )
    dialect = get_all_dialects()[owner]()
    check = next(op for op in dialect.operations if op.get_irdl_definition().name.endswith(".check"))
    definition = check.get_irdl_definition()
    part = section(pages[f"reference/dialects/{owner}.md"], f"### `{definition.name}`")
    assert definition.assembly_format and definition.assembly_format in part
    assert "| `condition` | `i1` |" in part
    assert "| `status` |" in part
    assert "status 0 means success" in part  # a VerifyException raised by its verify_


def _parser_options(parser: argparse.ArgumentParser) -> list[str]:
    return [
        action.option_strings[0] if action.option_strings else action.dest
        for action in parser._actions
        if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
    ]


def test_every_cli_command_and_option(pages):
    from zant.tools.cli import make_parser

    text = pages["reference/cli.md"]
    commands = gen_docs.subcommands(make_parser())
    assert {"compile", "run", "plan", "profile", "conformance", "lit-config"} <= set(commands)
    for name, (parser, _) in commands.items():
        part = section(text, f"### `zant {name}`")
        for option in _parser_options(parser):
            assert re.search(rf"^\| `{re.escape(option)}\b", part, re.M), f"zant {name} {option}"
    part = section(text, "## `zant-opt`")
    options = _parser_options(gen_docs.zant_opt_parser())
    assert {"-p", "--check-each-pass", "--load-passes", "--list-passes"} <= set(options)
    for option in options:
        assert re.search(rf"^\| `{re.escape(option)}\b", part, re.M), f"zant-opt {option}"


def test_every_status_of_the_header_with_its_value(pages):
    text = pages["reference/status-codes.md"]
    rows = dict(re.findall(r"^\| `NAME_(STATUS_\w+)` \| (\d+) \|", text, re.M))
    assert {
        "STATUS_NOT_INITIALIZED", "STATUS_BAD_CONSTANTS", "STATUS_PLAN_MISMATCH", "STATUS_BAD_PARAMETER",
        "STATUS_OUTPUT_SIZE", "STATUS_BAD_INDEX", "STATUS_BAD_BUFFER",
    } <= set(rows)
    assert len(set(rows.values())) == len(rows) and "0" not in rows.values()


def quick_start_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Quick start")
    part = text[start : text.index("\n## ", start + 1)]
    return re.findall(r"```sh\n(.*?)\n```", part, re.S)


def test_readme_is_a_short_landing_page():
    size = len(README.read_bytes())
    assert size < 10 * 1024, f"README.md is {size:,} B; the user guide lives in docs/ (10 KB at most)"


def test_readme_quick_start_runs_what_the_project_runs():
    demo, tests = quick_start_commands()[:2]
    venv = "python3 -m venv .venv && . .venv/bin/activate && "
    assert demo == venv + "pip install -e . && python examples/digits/demo.py"
    assert tests == venv + "pip install -e '.[test]' && python -m pytest -q"
    # The demo is run by the test suite, the test command is CI's.
    assert "examples/digits/demo.py" in (ROOT / "tests" / "test_models.py").read_text()
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert any(re.fullmatch(r"python -m pip install( --quiet)? -e '\.\[[^]]*\btest\b[^]]*\]'", line) for line in ci), ci
    assert "python -m pytest -q" in ci
    # "it deselects the slow tests": pytest's own options say so
    assert "-m 'not slow'" in (ROOT / "pyproject.toml").read_text()




def test_quick_start_page_has_the_readme_commands():
    page = (ROOT / "docs" / "quick-start.md").read_text(encoding="utf-8")
    for command in quick_start_commands()[:2]:
        assert f"```sh\n{command}\n```" in page, command


def test_mkdocs_nav_names_every_page():
    """Every Markdown page under docs/ is in the nav (or generated into it by the hook)."""
    config = (ROOT / "mkdocs.yml").read_text()
    for page in sorted((ROOT / "docs").rglob("*.md")):
        relative = page.relative_to(ROOT / "docs").as_posix()
        if relative.startswith("hooks/"):
            continue
        assert re.search(rf"^\s*- (.*: )?{re.escape(relative)}$", config, re.M), f"docs/{relative} is not in mkdocs.yml's nav"


def test_the_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="MkDocs is not installed: pip install -e '.[docs]' (.ci/run installs it)")
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert (site / "index.html").is_file()
    passes = (site / "reference" / "passes.html").read_text(encoding="utf-8")
    assert "plan-arenas" in passes
    # Nothing fetched at run time: no script or stylesheet from another host.
    for html in site.rglob("*.html"):
        external = re.findall(r"<(?:script|link)[^>]+(?:src|href)=\"(?:https?:)?//[^\"]+\"", html.read_text(encoding="utf-8"))
        assert not external, (html, external[:3])
    shutil.rmtree(site)


def test_hand_written_option_tables_name_real_options():
    """The option tables of docs/compiling.md and docs/measurements.md name only options the
    parsers have (the generated CLI reference lists them all)."""
    from zant.tools.cli import make_parser

    commands = gen_docs.subcommands(make_parser())
    pages = {
        "compile": ("compiling.md", "`zant compile MODEL.onnx -o OUTDIR [options]`"),
        "run": ("compiling.md", "`zant run MODEL.onnx [options]`"),
        "conformance": ("measurements.md", "`zant conformance [options]`"),
    }
    for command, (page, start) in pages.items():
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        rows = re.search(r"^((?:\|.*\n)+)", text[text.index(start):], re.M)  # the first table after it
        assert rows, (page, start)
        known = {s for action in commands[command][0]._actions for s in action.option_strings}
        named = set()
        for line in rows.group(1).splitlines()[2:]:
            named |= set(re.findall(r"`(--?[A-Za-z][\w-]*)", line.split(" | ")[0]))
        assert named, (page, command)
        assert named <= known, f"docs/{page} documents options zant {command} does not have: {sorted(named - known)}"


def test_compiling_page_spells_the_default_pipelines_as_they_are():
    """docs/compiling.md writes out the Cortex-M4 and the AVX2 host pipelines: they are
    `pipeline_for`'s, stage for stage (a pass added to the pipelines updates the page)."""
    from zant.pipelines import pipeline_for
    from zant.targets import CPUS

    page = (ROOT / "docs" / "compiling.md").read_text()
    for pipeline in (pipeline_for("cortex-m4"), pipeline_for("host", cpu=CPUS["x86-64-avx2"])):
        assert f"`{pipeline}`" in page, pipeline
