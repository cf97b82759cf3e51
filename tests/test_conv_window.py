"""`conv_window`'s tiles as `arm_dsp.smlad_window` (3x3 int8 Convs over a channels-last padded
copy whose runs of taps are whole words): the widened weights' order, the op's semantics, and
whole models against the gathered form on the host, under the interpreter after every pass,
and as Cortex-M4 firmware under QEMU (the assembly loop) in every build mode (the shipped one
in the default run, `e2e.firmware_modes`)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from zant.driver import CompileOptions, compile_model
from zant.pipelines import pipeline_for
from zant.runtime import load_compiled

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from e2e import firmware_modes  # noqa: E402
from int8_layers import firmware_equals_host  # noqa: E402
from models import GraphBuilder, quantize  # noqa: E402
from test_arm_dsp import disassembly, gathered  # noqa: E402


@pytest.fixture(scope="module")
def odd_windows(tmp_path_factory) -> Path:
    """`odd_windows_int8`, quantized once for the module's tests."""
    return odd_windows_int8(tmp_path_factory.mktemp("odd_windows"))


def odd_windows_int8(folder: Path) -> Path:
    """3x3 Convs, padded: 12 -> 8 channels over 5x7 (runs of 3·12 bytes, whole words though 12
    is no multiple of 4; 7 columns: the last pixel pair overlaps the one before), 8 -> 6 at
    stride 2 (the pair's second run 2·8 bytes on), then 6 -> 4 (runs of 18 bytes: the
    byte-wise channels-last form)."""
    pytest.importorskip("onnxruntime")
    g = GraphBuilder("odd_windows", seed=23)
    x = g.relu(g.conv("input", 12, 8, 3, pads=[1, 1, 1, 1]))
    x = g.relu(g.conv(x, 8, 6, 3, stride=2, pads=[1, 1, 1, 1]))
    x = g.conv(x, 6, 4, 3, pads=[1, 1, 1, 1])
    path = folder / "odd_windows_int8.onnx"
    onnx.save(quantize(g.build([("input", [1, 12, 5, 7])], [(x, "out", [1, 4, 3, 4])])), path)
    return path


def test_window_weights_pair_each_words_bytes_as_sxtb16_halves():
    from zant.passes.onnx_to_uop.conv_window import window_weights

    values = np.arange(4 * 8, dtype=np.int8).reshape(4, 8)  # 4 channels, 2 words each
    got = window_weights(values).reshape(2, 2, 2, 4)  # pair, word, channel, half-element
    for p in range(2):
        for g in range(2):
            for i in range(2):
                word = values[2 * p + i, 4 * g: 4 * g + 4]
                np.testing.assert_array_equal(got[p, g, i], word[[0, 2, 1, 3]])


def test_smlad_window_reference_is_the_tiles_dot_products():
    """The op's semantics (what the interpreter runs) against a plain dot product: rows of X a
    row stride apart, the second pixel's run x_next on, wrapping int32 sums."""
    from zant.dialects.arm_dsp import SmladWindowOp
    from zant.passes.onnx_to_uop.conv_window import window_weights

    rng = np.random.default_rng(1)
    rows, steps, x_row, x_next = 3, 6, 40, 8
    x = rng.integers(-128, 128, 3 * x_row + 64).astype(np.int8)
    w = rng.integers(-128, 128, (2, rows * steps * 4)).astype(np.int8)
    pairs = window_weights(w).astype(np.int16)

    class Op:  # the properties `reference` reads
        pass

    op = Op()
    for name, value in dict(rows=rows, steps=steps, x_row=x_row, x_next=x_next).items():
        setattr(op, name, type("Int", (), {"data": value})())
    start = [2**31 - 5, -7, 11, -(2**31)]  # wraps
    got = SmladWindowOp.reference(op, lambda r: x[list(r)], lambda r: pairs[list(r)], *start)
    for j in range(2):
        run = np.concatenate([x[r * x_row + j * x_next: r * x_row + j * x_next + 4 * steps] for r in range(rows)])
        for i in range(2):
            total = start[2 * j + i] + int(np.dot(run.astype(np.int64), w[i].astype(np.int64)))
            assert got[2 * j + i] == ((total + 2**31) % 2**32) - 2**31


def test_window_tiles_equal_the_gathered_form(tmp_path, odd_windows):
    model = odd_windows
    tiles = compile_model(model, tmp_path / "tiles", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=pipeline_for("cortex-m4")))
    rows = compile_model(model, tmp_path / "rows", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=gathered(pipeline_for("cortex-m4"))))
    zig = (tmp_path / "tiles" / "net.zig").read_text()
    assert "zant_smlad_window(3, 9, 108, 12, " in zig  # 12 channels: 3 rows of 9 words, rows 9·12 apart
    assert "zant_smlad_window(3, 6, 72, 16, " in zig  # stride 2: the second run 2·8 bytes on, rows 9·8 apart
    assert zig.count("zant_smlad_window(3, ") == 2  # 6 channels: runs of 18 bytes, not whole words
    run_tiles, run_rows = load_compiled(tiles), load_compiled(rows)
    rng = np.random.default_rng(5)
    for scale in (0.5, 3.0, 50.0):  # the last saturates: -128 and 127 everywhere
        x = (rng.standard_normal((1, 12, 5, 7)) * scale).astype(np.float32)
        np.testing.assert_array_equal(run_tiles(x)[0], run_rows(x)[0])


def test_interpreter_checks_the_window_tiles(odd_windows):
    """`--check-each-pass` through the Cortex-M4 pipeline: onnx-to-uop's `smlad_window` (the
    interpreter runs its `reference`) and every later pass leave the outputs as they were."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import make_context
    from zant.frontend.onnx_importer import import_model
    from zant.interpreter import check_each_pass
    from zant.plugins import all_passes

    module = import_model(str(odd_windows))
    passes = PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, pipeline_for("cortex-m4")).passes
    report = check_each_pass(module, passes, make_context(), seed=6)
    assert "onnx-to-uop" in report.checked
    assert sum(op.name == "arm_dsp.smlad_window" for op in module.walk()) == 2


@pytest.mark.parametrize("optimize", firmware_modes())
def test_firmware_window_tiles_equal_the_host(tmp_path, odd_windows, optimize):
    """The assembly loop (`zant_smlad_window`: 13 registers, the rows' bound on the stack)
    builds in every mode and, on the Cortex-M4 under QEMU, gives the host build's outputs."""
    x = (np.random.default_rng(7).standard_normal((1, 12, 5, 7)) * 3.0).astype(np.float32)
    firmware = firmware_equals_host(odd_windows, tmp_path, x, optimize)
    text = disassembly(firmware.firmware_path)
    assert text.count("smlad") >= 8 and "sxtb16" in text


def test_firmware_window_tiles_of_8_steps_a_pass_equal_the_host(tmp_path):
    """A 32-channel window (rows of 24 words: 3 passes of 8 steps, the loop ResNet-8's wide
    layers run) as Cortex-M4 firmware under QEMU gives the host build's outputs."""
    pytest.importorskip("onnxruntime")
    g = GraphBuilder("wide_window", seed=29)
    x = g.conv("input", 32, 4, 3, pads=[1, 1, 1, 1])
    model = tmp_path / "wide_window_int8.onnx"
    onnx.save(quantize(g.build([("input", [1, 32, 3, 4])], [(x, "out", [1, 4, 3, 4])])), model)
    x = (np.random.default_rng(8).standard_normal((1, 32, 3, 4)) * 3.0).astype(np.float32)
    firmware = firmware_equals_host(model, tmp_path, x)
    assert "zant_smlad_window(3, 24, " in firmware.zig_path.read_text()
