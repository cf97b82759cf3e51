"""`mve-dot` end to end: int8 dot products become Helium (MVE) vector loads and `VMLAVA` on the
Cortex-M55, and compute exactly what the loops they replace computed.

Depthwise Convs take `conv_depthwise_mve`'s form on the M55 (four outputs of a channel a vector,
VMLA by a scalar per tap) and pointwise ones over 16 or more channels `conv_pointwise_mve`'s
(rows of X copied channels-last), checked against the generic nests they replace (`without_mve`).

Two models: quantized Gemms (fold-qdq makes them 1x1 integer Convs whose reductions run over
contiguous int8 in both operands: 16 lanes, `VMLAVA.S8`; 70 = 64 + 6 leaves a remainder that
`arm-dsp-dot` takes), pointwise Convs over NCHW activations (the reduction over input channels
reads x with stride H·W = 25: 16-lane gathers, two `VLDRB.U16` with offset vectors joined by
`VMOVNT`, and `VMLAVA.S8`; 20 channels = 16 + 4), and a padded first layer whose 4x3 windows
are unrolled (8 taps gathered by `VLDRB.S16`, `VMLAVA.S16`, 4 scalar).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from zant.driver import CompileOptions, compile_model
from zant.pipelines import pipeline_for, stages_for
from zant.runtime import load_compiled

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from models import GraphBuilder, quantize  # noqa: E402

OBJDUMP = shutil.which("llvm-objdump") or "/usr/bin/llvm-objdump"


def dense_int8(folder: Path) -> Path:
    pytest.importorskip("onnxruntime")
    g = GraphBuilder("dense", seed=5)
    x = g.relu(g.gemm("input", 70, 12))
    x = g.gemm(x, 12, 5, gain=1.0)
    path = folder / "dense_int8.onnx"
    onnx.save(quantize(g.build([("input", [1, 70])], [(x, "out", [1, 5])])), path)
    return path


def pointwise_int8(folder: Path) -> Path:
    pytest.importorskip("onnxruntime")
    g = GraphBuilder("pointwise", seed=7)
    x = g.relu(g.conv("input", 20, 16, 1))
    x = g.conv(x, 16, 6, 1)
    path = folder / "pointwise_int8.onnx"
    onnx.save(quantize(g.build([("input", [1, 20, 5, 5])], [(x, "out", [1, 6, 5, 5])])), path)
    return path


def window_int8(folder: Path) -> Path:
    """A first layer as KWS's: one input channel, a 4x3 window over 12x8 with pads, stride 2.
    Its input is small, so the lowering pads a copy of it and every output takes the interior's
    loops; mve-dot unrolls each window (12 taps: one gather of rows 0-1, 4 scalar taps)."""
    pytest.importorskip("onnxruntime")
    g = GraphBuilder("window", seed=3)
    x = g.relu(g.conv("input", 1, 8, (4, 3), stride=2, pads=[1, 1, 2, 1]))
    path = folder / "window_int8.onnx"
    onnx.save(quantize(g.build([("input", [1, 1, 12, 8])], [(x, "out", [1, 8, 6, 4])])), path)
    return path


def depthwise_int8(folder: Path) -> Path:
    """A depthwise 3x3 layer as KWS's on 5-wide rows: conv_depthwise_mve's form down the 7-row
    columns (vectors at rows 0 and 3), the columns copied into the plane a byte at a time."""
    pytest.importorskip("onnxruntime")
    g = GraphBuilder("depthwise", seed=11)
    x = g.relu(g.conv("input", 8, 8, 3, pads=[1, 1, 1, 1], group=8))
    path = folder / "depthwise_int8.onnx"
    onnx.save(quantize(g.build([("input", [1, 8, 7, 5])], [(x, "out", [1, 8, 7, 5])])), path)
    return path


def pointwise_rows_int8(folder: Path) -> Path:
    """A 1x1 layer as KWS's over 32 channels of 10x5: conv_pointwise_mve's form (each row of X
    copied channels-last in 8-byte gathers, 3 blocks of 4 output channels, 16-byte VMLAVA)."""
    pytest.importorskip("onnxruntime")
    g = GraphBuilder("pointwise_rows", seed=19)
    x = g.relu(g.conv("input", 32, 12, 1))
    path = folder / "pointwise_rows_int8.onnx"
    onnx.save(quantize(g.build([("input", [1, 32, 10, 5])], [(x, "out", [1, 12, 10, 5])])), path)
    return path


def depthwise_tall_int8(folder: Path) -> Path:
    """KWS's depthwise layer on 16 channels (25x5): the 25-row columns copied into the plane in
    8-byte gathers (mve-gather), at 0, 8, 16 and 17, and 7 vectors per column."""
    pytest.importorskip("onnxruntime")
    g = GraphBuilder("depthwise_tall", seed=13)
    x = g.relu(g.conv("input", 16, 16, 3, pads=[1, 1, 1, 1], group=16))
    path = folder / "depthwise_tall_int8.onnx"
    onnx.save(quantize(g.build([("input", [1, 16, 25, 5])], [(x, "out", [1, 16, 25, 5])])), path)
    return path


def depthwise_wide_int8(folder: Path) -> Path:
    """A 3x5 depthwise window over 20-wide rows, 2 pads each side of a row: the vectors run
    along the rows, which are copied 16 bytes at a time (at 0 and 4)."""
    pytest.importorskip("onnxruntime")
    g = GraphBuilder("depthwise_wide", seed=17)
    x = g.relu(g.conv("input", 8, 8, (3, 5), pads=[1, 2, 1, 2], group=8))
    path = folder / "depthwise_wide_int8.onnx"
    onnx.save(quantize(g.build([("input", [1, 8, 6, 20])], [(x, "out", [1, 8, 6, 20])])), path)
    return path


MODELS = {
    "dense": (dense_int8, (1, 70)),
    "depthwise": (depthwise_int8, (1, 8, 7, 5)),
    "depthwise_tall": (depthwise_tall_int8, (1, 16, 25, 5)),
    "depthwise_wide": (depthwise_wide_int8, (1, 8, 6, 20)),
    "pointwise": (pointwise_int8, (1, 20, 5, 5)),
    "pointwise_rows": (pointwise_rows_int8, (1, 32, 10, 5)),
    "window": (window_int8, (1, 1, 12, 8)),
}


def without_mve(target: str) -> str:
    """`target`'s pipeline without the Helium passes and with the generic depthwise nest."""
    stages = stages_for(target)
    skipped = ("mve-gather", "mve-dot", "mve-requantize", "seed-accumulators")
    return ",".join("onnx-to-uop{conv-mve=false}" if s == "onnx-to-uop" else s for s in stages if s not in skipped)


def disassembly(elf: Path) -> str:
    if not Path(OBJDUMP).exists():
        pytest.skip("llvm-objdump is missing")
    return subprocess.run([OBJDUMP, "-d", str(elf)], capture_output=True, text=True, check=True).stdout


def test_only_the_cortex_m55_runs_the_pass_before_arm_dsp_dot():
    stages = stages_for("cortex-m55")
    start = stages.index("seed-accumulators")
    assert stages[start:start + 5] == ("seed-accumulators", "mve-gather", "mve-dot", "mve-requantize", "arm-dsp-dot")
    for target in ("host", "cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33", "riscv32"):
        assert not {"mve-gather", "mve-dot", "mve-requantize"} & set(stages_for(target))


@pytest.mark.parametrize("model", sorted(MODELS))
def test_portable_zig_equals_the_loops_it_replaces(tmp_path, model):
    """On the host the gather helper is plain Zig and the vector ops are @Vector: the rewritten
    module's outputs equal the pass-less build's bit for bit, on inputs spanning the int8 range."""
    make, shape = MODELS[model]
    path = make(tmp_path)
    options = dict(name="net", optimize="ReleaseSafe")
    mve = compile_model(path, tmp_path / "mve", CompileOptions(pipeline=pipeline_for("cortex-m55"), **options))
    plain = compile_model(path, tmp_path / "plain", CompileOptions(pipeline=without_mve("cortex-m55"), **options))
    zig = (tmp_path / "mve" / "net.zig").read_text()
    assert ("zant_vmlava(" in zig) == (not model.startswith("depthwise"))  # depthwise: VMLA by a scalar
    assert ("_plane" in zig) == model.startswith("depthwise")
    assert ("_row: [*]i8" in zig) == model.startswith("pointwise")  # the second layer's 16 channels, or 32
    assert ("zant_vstrb_narrow16(" in zig) == (model in ("depthwise_tall", "pointwise", "pointwise_rows"))  # 8-byte gathers copied
    assert "zant_vmulh(" in zig and "zant_vrshr(" in zig  # each model requantizes 4 outputs at once
    assert ("zant_vldrb_gather16(.{ 0, 50, 100," in zig) == (model == "pointwise")  # even lanes
    assert ("zant_vldrb_gather(.{ 0, 1, 2, 10, 11, 12, 20, 21 }" in zig) == (model == "window")  # 10-wide padded rows
    run_mve, run_plain = load_compiled(mve), load_compiled(plain)
    rng = np.random.default_rng(0)
    for scale in (0.5, 3.0, 50.0):  # the last saturates the int8 input: -128 and 127 everywhere
        x = (rng.standard_normal(shape) * scale).astype(np.float32)
        np.testing.assert_array_equal(run_mve(x)[0], run_plain(x)[0])


@pytest.mark.parametrize("model", sorted(MODELS))
def test_firmware_runs_vmlava_and_equals_the_host(tmp_path, model):
    """On the Cortex-M55 (mps3-an547 under QEMU) the image multiplies with VMLAVA (and gathers
    with VLDRB.S16 for the strided operand) and its outputs equal the host build's."""
    from zant.backend.build import BOARDS, DEFAULT_BOARDS
    from zant.backend.firmware import qemu_missing, run_firmware

    missing = qemu_missing(BOARDS[DEFAULT_BOARDS["cortex-m55"]])
    if missing:
        pytest.skip(missing)
    make, _ = MODELS[model]
    path = make(tmp_path)
    firmware = compile_model(path, tmp_path / "m55", CompileOptions(name="net", target="cortex-m55", firmware=True))
    text = disassembly(firmware.firmware_path)
    gathers = [line for line in text.splitlines() if "vldrb" in line and ", q" in line.split("[", 1)[-1]]
    if model == "dense":
        assert "vmlava.s8" in text and not gathers
    elif model.startswith("depthwise"):  # 4 outputs a vector: per tap VLDRB.S32 and VMLA.S32 by a scalar
        assert "vmla.s32" in text and "vldrb.s32" in text and "vmlava." not in text
        if model == "depthwise_tall":  # the columns copied 8 bytes at a time
            assert any("vldrb.s16" in line for line in gathers) and "vstrb.16" in text
    elif model == "window":  # 12 taps: 8 gathered (VLDRB.S16), 4 scalar
        assert "vmlava.s16" in text and any("vldrb.s16" in line for line in gathers)
    elif model == "pointwise_rows":  # X's rows copied channels-last by gathers: contiguous VMLAVA.S8
        assert "vmlava.s8" in text and "vstrb.16" in text and any("vldrb.s16" in line for line in gathers)
        assert "vmovnt.i16" not in text
    else:  # 16 channels at once: two VLDRB.U16 gathers joined by VMOVNT
        assert "vmlava.s8" in text and "vmovnt.i16" in text and any("vldrb.u16" in line for line in gathers)
    # the requantization, 4 outputs at once (mve-requantize)
    assert "vmulh.s32" in text and "vrshr.s32" in text and "vstrb.32" in text
    host = compile_model(path, tmp_path / "host", CompileOptions(name="net", optimize="ReleaseSafe"))
    expected = load_compiled(host)(*(firmware.feeds[s.name] for s in host.inputs))
    run = run_firmware(firmware.firmware_path, firmware.board, firmware.outputs)
    for got, want in zip(run.outputs, expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_cortex_m4_image_has_no_mve_instruction(tmp_path):
    path = pointwise_int8(tmp_path)
    result = compile_model(path, tmp_path / "m4", CompileOptions(name="net", target="cortex-m4", firmware=True))
    text = disassembly(result.firmware_path)
    assert "vmlava" not in text and "vldrb" not in text


def test_vmulh_then_vrshr_is_the_scalar_rounding():
    """`mve-requantize`'s identity on the ops' own semantics: for 33 <= s <= 62,
    vrshr(vmulh(a, m), s - 32) == (a·m + 2^(s-1)) >> s, on random int32 pairs and the extremes."""
    from zant.dialects.arm_mve import high_product, rounding_shift
    from zant.passes.mve_requantize import SHIFTS

    rng = np.random.default_rng(1)
    edges = np.array([-2**31, -2**31 + 1, -1, 0, 1, 2**31 - 1], dtype=np.int64)
    a = np.concatenate([rng.integers(-2**31, 2**31, 4000), np.repeat(edges, len(edges))])
    m = np.concatenate([rng.integers(-2**31, 2**31, 4000), np.tile(edges, len(edges))])
    for s in SHIFTS:
        scalar = np.array([(int(x) * int(y) + (1 << (s - 1))) >> s for x, y in zip(a, m)], dtype=np.int64)
        vector = rounding_shift(high_product(a.astype(np.int32), m.astype(np.int32)), s - 32)
        np.testing.assert_array_equal(vector.astype(np.int64), scalar, err_msg=f"shift {s}")


@pytest.mark.parametrize("model", ["pointwise", "pointwise_rows", "depthwise", "depthwise_tall", "depthwise_wide"])
def test_every_m55_pass_keeps_the_outputs(tmp_path, model):
    """The uop interpreter runs the model after each pass of the Cortex-M55 pipeline from
    onnx-to-uop on (seeded inputs): mve-requantize's vector epilogues compute what the scalar
    ones did, and it made some (the depthwise layers' down a column of 5-wide rows, or along a
    row); mve-gather's copies copy."""
    sys.path.insert(0, str(ROOT / "tests"))
    from e2e import check_passes_after_lowering

    module, report = check_passes_after_lowering(onnx.load(MODELS[model][0](tmp_path)), "cortex-m55")
    assert "mve-requantize" in report.checked
    scatters = [op for op in module.walk() if op.name == "arm_mve.vstrb_scatter"]
    assert scatters
    if model in ("depthwise", "depthwise_tall"):  # 4 outputs down a column, no vmov_lane left
        assert any(op.byte_offsets == [0, 5, 10, 15] for op in scatters)
        assert not [op for op in module.walk() if op.name in ("arm_mve.vmov_lane", "arm_mve.vmov_lanes")]
    if model == "depthwise_wide":
        assert any(op.byte_offsets == [0, 1, 2, 3] for op in scatters)
    if model == "pointwise_rows":  # 4 channels of a pixel, 50 apart; the rows copied by gathers
        assert any(op.byte_offsets == [0, 50, 100, 150] for op in scatters)
        assert any(op.byte_offsets == list(range(8)) for op in scatters)
    if model == "depthwise_tall":
        assert "mve-gather" in report.checked
        assert any(op.byte_offsets == list(range(8)) for op in scatters)
