"""docs/mcu.md is a measurement, not prose: a row of it recomputed now must read the same.

Instruction counts under QEMU's TCG plugin are exact and deterministic for a given image, the
cycles the timing model derives from the same runs are too, and the image is deterministic for a
given compiler, so any change to the generated code, the start-up code
or the pipeline that moves the digits model's figures on the Cortex-M4 fails this test until
`python bench/mcu.py --output-md docs/mcu.md` (and its sections) is run again.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from zant.backend.build import BOARDS
from zant.backend.firmware import qemu_missing

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import mcu  # noqa: E402

DOC = ROOT / "docs" / "mcu.md"
MEASURED = (
    "flash B", "RAM B", "stack B", "instructions", "cycles", "cycles/MAC", "ms", "err vs ORT", "err vs host", "scratch B",
)


def documented_row(model: str, board: str, mode: str) -> dict[str, str]:
    rows = [
        r for r in mcu.parse_markdown_rows(DOC.read_text(encoding="utf-8"))
        if (r.get("model"), r.get("board"), r.get("mode")) == (model, board, mode)
    ]
    assert rows, f"docs/mcu.md has no row for {model} on {board} in {mode}: regenerate it"
    return rows[0]


def test_the_main_table_measures_the_default_mode():
    main_rows = mcu.parse_markdown_rows(DOC.read_text(encoding="utf-8").split("\n## ")[0])
    assert main_rows and {r["mode"] for r in main_rows} == {mcu.DEFAULT_MODE}
    # Every board of the package is in it, so a board added without a measurement shows.
    assert {r["board"] for r in main_rows} == set(BOARDS)


def test_parse_markdown_rows_reads_what_markdown_table_writes():
    row = {"model": "m", "board": "b", "core": "c", "mode": "ReleaseFast", "flash_bytes": 1234, "ram_bytes": 5,
           "stack_bytes": 4, "instructions": 1_000_000, "cycles": 1_300_000, "ms": 52.0, "macs": 400_000,
           "max_error_vs_onnxruntime": 1.5e-07, "max_error_vs_host": 0.0, "scratch_bytes": 64}
    (parsed,) = mcu.parse_markdown_rows("\n".join(mcu.markdown_table([row])))
    assert parsed["flash B"] == "1,234" and parsed["instructions"] == "1,000,000" and parsed["mode"] == "ReleaseFast"
    assert parsed["instr/MAC"] == "2.50" and parsed["CMSIS-NN"] == ""
    # The error against the reference and against the host build of the same pipeline, apart.
    assert (parsed["err vs ORT"], parsed["err vs host"]) == ("1.5e-07", "0.0e+00")
    assert (parsed["cycles"], parsed["cycles/MAC"], parsed["ms"]) == ("1,300,000", "3.25", "52.00")
    # A board without a stated clock has cycles but no milliseconds.
    (parsed,) = mcu.parse_markdown_rows("\n".join(mcu.markdown_table([{**row, "ms": None}])))
    assert (parsed["cycles"], parsed["ms"]) == ("1,300,000", "")
    # KWS int8 on the boards CMSIS-NN was measured on: our instructions over CMSIS-NN's.
    kws = {**row, "model": "kws_int8", "board": "mps2-an386", "instructions": 2 * mcu.CMSIS_NN_INSTRUCTIONS[("kws_int8", "mps2-an386")]}
    (parsed,) = mcu.parse_markdown_rows("\n".join(mcu.markdown_table([kws])))
    assert parsed["CMSIS-NN"] == "2.00×"
    # The CMSIS-NN baseline is instructions: the ratio does not move with our cycles.
    (parsed,) = mcu.parse_markdown_rows("\n".join(mcu.markdown_table([{**kws, "cycles": 10 * kws["instructions"]}])))
    assert parsed["CMSIS-NN"] == "2.00×"


@pytest.mark.parametrize("mode", [mcu.DEFAULT_MODE])
def test_digits_row_on_cortex_m4_is_current(tmp_path, mode):
    board = "mps2-an386"
    missing = qemu_missing(BOARDS[board])
    if missing:
        pytest.skip(missing)
    documented = documented_row("digits", board, mode)
    _, path = mcu.resolve_model("digits", tmp_path)
    host = mcu.load_compiled(mcu.compile_model(path, tmp_path / "host", mcu.options("digits")))
    (fresh,) = mcu.parse_markdown_rows("\n".join(mcu.markdown_table([mcu.measure("digits", path, board, mode, host, tmp_path)])))
    stale = {k: (documented.get(k), fresh[k]) for k in MEASURED if documented.get(k) != fresh[k]}
    assert not stale, f"docs/mcu.md is stale (documented, measured now): {stale}; rerun bench/mcu.py"
