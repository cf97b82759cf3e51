"""bench/latency.py and bench/mcu.py take what a researcher has: `.onnx` paths beside the bench
models, a host and an MCU pipeline apart, and a second pipeline measured side by side.

Argument handling is checked with `--dry-run` (nothing built); one tiny model is measured for
real by latency.py to check the rows' shape (spread, scratch per build), not its timings.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import latency  # noqa: E402
import mcu  # noqa: E402

from zant.pipelines import MCU_PIPELINE, pipeline_for  # noqa: E402

FUSION_OFF = pipeline_for("cortex-m4").replace("fuse-loops,", "")


def tiny_model(path: Path) -> Path:
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
        [numpy_helper.from_array(np.linspace(-1, 1, 8, dtype=np.float32), "b")],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_latency_separate_host_and_mcu_pipelines(capsys, tmp_path):
    model = tiny_model(tmp_path / "my-net.onnx")
    assert latency.main([str(model), "kws", "--compare-mcu-pipeline", FUSION_OFF, "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"models: my_net ({model}), kws",
        f"variant A: host pipeline {pipeline_for('host')}",
        f"variant A: cortex-m4 pipeline {pipeline_for('cortex-m4')}",
        f"variant B: host pipeline {pipeline_for('host')}",  # not compared: the first variant's
        f"variant B: cortex-m4 pipeline {FUSION_OFF}",
    ]
    assert latency.main(["kws", "--mcu-target", "riscv32", "--pipeline", MCU_PIPELINE, "--dry-run"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        f"variant A: host pipeline {MCU_PIPELINE}",
        f"variant A: riscv32 pipeline {MCU_PIPELINE}",
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        (["no-such-model"], "unknown model 'no-such-model'"),
        (["missing.onnx"], "no model file 'missing.onnx'"),
        (["kws", "--compare-host-pipeline", "onnx-to-uop{conv-lane=16}"], "unknown option 'conv-lane'"),
    ],
)
def test_latency_bad_arguments_are_one_line(capsys, args, message):
    assert latency.main([*args, "--dry-run"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("latency.py: error: ") and message in err and len(err.splitlines()) == 1


def test_latency_measures_two_pipelines_side_by_side(tmp_path):
    model = tiny_model(tmp_path / "net.onnx")
    variants = [latency.Variant("A", pipeline_for("host"), pipeline_for("cortex-m4")),
                latency.Variant("B", MCU_PIPELINE, FUSION_OFF)]
    rows = latency.measure("net", model, variants, [], 0.0, tmp_path)
    assert [r["variant"] for r in rows] == ["A", "B"]
    for row in rows:
        for spread in (row["ours_ms"], row["ort_ms"]):
            assert 0 < spread["min"] <= spread["median"] <= spread["max"]
        assert row["rounds"] >= 20 and row["max_abs_error"] == 0.0
        assert row["mcu_scratch_bytes"] >= 0 and row["host_scratch_bytes"] >= 0 and row["mcu_text_bytes"] > 0
    header, _, first, second = latency.format_table(rows).splitlines()
    assert "ours ms min/med/max" in header and "cortex-m4 scratch B" in header and "host scratch B" in header
    assert first.startswith("net    A") and second.startswith("net    B")
    assert rows[0]["ort_ms"] == rows[1]["ort_ms"]  # one ort, timed in the same rounds as both builds


def test_latency_copies_time_each_build_from_libraries_of_their_own(tmp_path):
    """`--copies 2`: the build's library and a copy of it are both loaded (each its own mapping,
    so its own scratch pages) and timed; the row pools them and gives each copy's median."""
    model = tiny_model(tmp_path / "net.onnx")
    variants = [latency.Variant("A", pipeline_for("host"), pipeline_for("cortex-m4"))]
    (row,) = latency.measure("net", model, variants, [], 0.0, tmp_path, copies=2)
    assert row["copies"] == 2 and len(row["copy_ms"]) == 2 and all(ms > 0 for ms in row["copy_ms"])
    assert row["rounds"] >= 20 and row["max_abs_error"] == 0.0
    mapped = Path("/proc/self/maps").read_text()
    copy = tmp_path / "net-A-copies" / "libnet-copy1.so"
    assert copy.exists() and str(copy) in mapped and str(tmp_path / "net-A-host" / "libnet.so") in mapped
    with pytest.raises(ValueError, match="copies"):
        latency.measure("net", model, variants, [], 0.0, tmp_path, copies=0)


def test_mcu_dry_run_and_pipelines(capsys, tmp_path):
    model = tiny_model(tmp_path / "net.onnx")
    status = mcu.main([str(model), "--boards", "mps2-an386,virt", "--compare-mcu-pipeline", FUSION_OFF, "--dry-run"])
    assert status == 0
    assert capsys.readouterr().out.splitlines() == [
        f"models: {model}",
        f"host reference pipeline: {MCU_PIPELINE}",
        f"variant A: mps2-an386 (cortex-m4) pipeline {pipeline_for('cortex-m4')}",
        f"variant A: virt (riscv32) pipeline {pipeline_for('riscv32')}",
        f"variant B: mps2-an386 (cortex-m4) pipeline {FUSION_OFF}",
        f"variant B: virt (riscv32) pipeline {FUSION_OFF}",
    ]
    assert mcu.main(["nope.onnx", "--dry-run"]) == 1
    assert "mcu.py: error: no model file 'nope.onnx'" in capsys.readouterr().err
    assert mcu.main(["kws", "--mcu-pipeline", "fuse-loop", "--dry-run"]) == 1
    assert "unknown pass 'fuse-loop' (did you mean 'fuse-loops'?" in capsys.readouterr().err


def test_mcu_error_is_against_onnxruntime(tmp_path):
    """`err vs ORT` compares the image with onnxruntime on the model file as given (the
    reference), each output flattened: a firmware output is a flat array."""
    model = tiny_model(tmp_path / "net.onnx")
    x = np.linspace(-2, 2, 32, dtype=np.float32).reshape(4, 8)
    (y,) = mcu.onnxruntime_outputs(model, {"x": x})
    want = np.maximum(x + np.linspace(-1, 1, 8, dtype=np.float32), 0)
    np.testing.assert_array_equal(y, want)
    image = want.reshape(-1).copy()
    image[5] += 0.25
    assert mcu.max_error([image], [y]) == 0.25 and mcu.max_error([want.reshape(-1)], [y]) == 0.0


def test_mcu_table_labels_variants_only_when_compared():
    row = {"model": "m", "board": "b", "core": "c", "mode": "ReleaseFast", "flash_bytes": 1, "ram_bytes": 2,
           "stack_bytes": 3, "instructions": 40, "cycles": 60, "ms": 0.5, "macs": 10,
           "max_error_vs_onnxruntime": 0.0, "max_error_vs_host": 0.0, "scratch_bytes": 64}
    assert mcu.markdown_table([row])[0].startswith("| model | board |")
    (a, b) = mcu.parse_markdown_rows("\n".join(mcu.markdown_table([{**row, "variant": "A"}, {**row, "variant": "B", "cycles": 80}])))
    assert (a["variant"], b["variant"], a["instr/MAC"], a["board"]) == ("A", "B", "4.00", "b")
    assert (a["cycles"], a["cycles/MAC"], a["ms"], b["cycles/MAC"]) == ("60", "6.00", "0.50", "8.00")
    header = mcu.format_table([row]).splitlines()[0].split()
    assert header.index("instructions") < header.index("cycles") < header.index("cycles/MAC") < header.index("ms")


def test_latency_held_apart_set_is_its_own(capsys):
    from models import HELD_APART

    assert latency.main(["--held-apart", "--dry-run"]) == 0
    models_line = capsys.readouterr().out.splitlines()[0]
    assert models_line == f"models: {', '.join(HELD_APART)}"
    assert not set(HELD_APART) & set(latency.BENCH_MODELS)


def test_latency_summary_gives_geometric_mean_and_worst():
    rows = [{"variant": "A", "ratio": r} for r in (0.5, 2.0, 0.5)] + [{"variant": "B", "ratio": 1.0}]
    assert latency.summary(rows).splitlines() == [
        "variant A: ours/ort geometric mean 0.79, median 0.50, worst 2.00 over 3 models",
        "variant B: ours/ort geometric mean 1.00, median 1.00, worst 1.00 over 1 models",
    ]


def test_latency_thread_clock_leaves_out_waiting():
    """`--clock thread` times each call by the thread's CPU time: a call that sleeps 20 ms costs
    about nothing, where the wall clock counts the 20 ms; a bad clock name is refused."""
    import time

    def sleeper():
        time.sleep(0.02)

    (wall,) = latency.interleaved_times([sleeper], 0.0, min_rounds=3)
    (thread,) = latency.interleaved_times([sleeper], 0.0, min_rounds=3, clock="thread")
    assert min(wall) >= 0.02 and max(thread) < 0.01
    assert latency.make_parser().parse_args(["--clock", "thread"]).clock == "thread"
    with pytest.raises(SystemExit):
        latency.make_parser().parse_args(["--clock", "cpu"])
