"""docs/mlperf-tiny.md is a measurement: its AD int8 row recomputed now must read the same.

Instructions (a TCG plugin) and the cycles the timing model derives from the same runs are
deterministic for a given image, so a change to the generated code, the start-up code, the
pipeline or the timing model that moves the smallest MLPerf Tiny model's figures fails this test
until `python bench/mlperf_tiny.py --output-md docs/mlperf-tiny.md` is run again. The models are
not in the repository: the test skips without `../shared/mlperf_tiny/onnx` beside it. The table's
parsing and rendering and the bench's errors need neither the models nor QEMU.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from zant.backend.build import BOARDS
from zant.backend.firmware import qemu_missing

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import mlperf_tiny  # noqa: E402

DOC = ROOT / "docs" / "mlperf-tiny.md"
MEASURED = ("instructions", "cycles", "ms", "cycles/MAC", "flash B", "RAM B", "stack B", "scratch B", "max err")


def row(**changes) -> dict:
    return {"model": "kws_int8", "board": "nucleo-l4r5zi", "seed": 0, "input": "uniform int8", "instructions": 5_000_000,
            "cycles": 6_000_000, "ms": 50.0, "macs": 2_656_768, "flash_bytes": 46_031, "ram_bytes": 16_276,
            "stack_bytes": 244, "scratch_bytes": 16_000, "max_error": 1.0, "integer_output": True, **changes}


def test_table_parsing_reads_what_rendering_writes():
    int8, fp32 = row(), row(model="kws_fp32", max_error=3.7e-9, integer_output=False, cycles=12_000_000, ms=100.0)
    parsed = mlperf_tiny.parse_markdown_rows("\n".join(["text", "", *mlperf_tiny.markdown_table([int8, fp32]), "", "more"]))
    assert [p["model"] for p in parsed] == ["kws_int8", "kws_fp32"]
    assert parsed[0]["cycles"] == "6,000,000" and parsed[0]["ms"] == "50.00" and parsed[0]["cycles/MAC"] == "2.26"
    assert parsed[0]["max err"] == "1 LSB" and parsed[1]["max err"] == "3.7e-09"
    # Beside Plumerai's published 47.78 ms at 120 MHz: 5,733,600 cycles.
    assert parsed[0]["Plumerai cycles"] == "5,733,600" and parsed[0]["ours / Plumerai"] == "1.05"
    assert parsed[1]["ours / Plumerai"] == "2.09"
    # The published table is not read as measured rows.
    assert mlperf_tiny.parse_markdown_rows("\n".join(mlperf_tiny.published_table())) == []
    printed = mlperf_tiny.format_table([int8]).splitlines()
    assert printed[0].split()[:3] == ["model", "instructions", "cycles"] and printed[2].startswith("kws_int8")


def test_missing_models_folder_is_a_one_line_error(capsys, tmp_path):
    assert mlperf_tiny.main(["--models-dir", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("mlperf_tiny.py: error: no MLPerf Tiny models") and len(err.splitlines()) == 1
    assert "mlcommons/tiny" in err and "--convert-from" in err
    assert mlperf_tiny.main(["--models-dir", str(tmp_path), "--models", "ad_int8"]) == 1
    assert "no ad_int8.onnx in" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("tf2onnx") is not None, reason="tf2onnx is installed here")
def test_conversion_without_tf2onnx_is_a_one_line_error(capsys, tmp_path):
    status = mlperf_tiny.main(["--convert-from", str(tmp_path), "--tf2onnx-python", sys.executable,
                               "--models-dir", str(tmp_path / "onnx")])
    err = capsys.readouterr().err
    assert status == 1 and "cannot import tf2onnx" in err and len(err.splitlines()) == 1


def test_conversion_runs_tf2onnx_from_the_given_python(tmp_path):
    # A stand-in for another environment's python: records its arguments, writes the --output file.
    fake = tmp_path / "python"
    fake.write_text('#!/bin/sh\necho "$@" >> "$(dirname "$0")/calls"\n'
                    'while [ $# -gt 0 ]; do [ "$1" = --output ] && echo onnx > "$2"; shift; done\n')
    fake.chmod(0o755)
    (tmp_path / "tflite").mkdir()
    (tmp_path / "tflite" / "ad_int8.tflite").write_bytes(b"tflite")
    mlperf_tiny.convert(tmp_path / "tflite", tmp_path / "onnx", str(fake), ["ad_int8"])
    assert (tmp_path / "onnx" / "ad_int8.onnx").read_text() == "onnx\n"
    probe, call = (tmp_path / "calls").read_text().splitlines()
    assert probe == "-c import tf2onnx"
    assert call == f"-m tf2onnx.convert --tflite {tmp_path / 'tflite' / 'ad_int8.tflite'} --output {tmp_path / 'onnx' / 'ad_int8.onnx'} --opset 17"
    with pytest.raises(mlperf_tiny.ZantError, match="no '.*kws_int8.tflite'"):
        mlperf_tiny.convert(tmp_path / "tflite", tmp_path / "onnx", str(fake), ["kws_int8"])


def test_unknown_model_is_refused(capsys):
    with pytest.raises(SystemExit):
        mlperf_tiny.main(["--models", "kws_int4"])
    assert "unknown model: kws_int4" in capsys.readouterr().err


def test_the_document_has_all_eight_models_beside_the_published_table():
    documented = {r["model"]: r for r in mlperf_tiny.parse_markdown_rows(DOC.read_text(encoding="utf-8"))}
    assert set(documented) == set(mlperf_tiny.MODELS)
    number = lambda text: int(text.replace(",", ""))  # noqa: E731
    for name, cells in documented.items():
        assert number(cells["cycles"]) >= number(cells["instructions"]), name
    assert number(documented["kws_int8"]["cycles"]) < number(documented["kws_fp32"]["cycles"])
    assert "Plumerai" in DOC.read_text(encoding="utf-8") and f"default_rng({mlperf_tiny.DEFAULT_SEED})" in DOC.read_text(encoding="utf-8")


def test_ad_int8_row_is_current(tmp_path):
    path = mlperf_tiny.DEFAULT_MODELS_DIR / "ad_int8.onnx"
    if not path.is_file():
        pytest.skip(f"the MLPerf Tiny models are not here ({mlperf_tiny.DEFAULT_MODELS_DIR}): see /work/shared/mlperf_tiny/README.md")
    missing = qemu_missing(BOARDS[mlperf_tiny.BOARD])
    if missing:
        pytest.skip(missing)
    (documented,) = [r for r in mlperf_tiny.parse_markdown_rows(DOC.read_text(encoding="utf-8")) if r["model"] == "ad_int8"]
    fresh_row = mlperf_tiny.measure("ad_int8", path, tmp_path, mlperf_tiny.DEFAULT_SEED)
    (fresh,) = mlperf_tiny.parse_markdown_rows("\n".join(mlperf_tiny.markdown_table([fresh_row])))
    stale = {k: (documented[k], fresh[k]) for k in MEASURED if documented[k] != fresh[k]}
    assert not stale, f"docs/mlperf-tiny.md is stale (documented, measured now): {stale}; rerun bench/mlperf_tiny.py"
