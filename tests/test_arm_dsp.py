"""`arm-dsp-dot` end to end: int8 dense layers become `SXTB16`/`SMLAD` on Cortex-M cores with
the DSP extension, and compute exactly what the loops they replace computed.

The model is two quantized Gemms (fold-qdq makes them 1x1 integer Convs whose reductions run
over contiguous int8 in both operands); the first's 70 inputs leave a 2-element remainder loop.
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
from zant.pipelines import OUTLINE_STAGE, pipeline_for, stages_for
from zant.runtime import load_compiled

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from e2e import firmware_modes  # noqa: E402
from int8_layers import firmware_equals_host  # noqa: E402
from models import GraphBuilder, quantize  # noqa: E402

OBJDUMP = shutil.which("llvm-objdump") or "/usr/bin/llvm-objdump"
DSP_CORES = ("cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55")


def dense_int8(folder: Path) -> Path:
    pytest.importorskip("onnxruntime")
    g = GraphBuilder("dense", seed=5)
    x = g.relu(g.gemm("input", 70, 12))
    x = g.gemm(x, 12, 5, gain=1.0)
    path = folder / "dense_int8.onnx"
    onnx.save(quantize(g.build([("input", [1, 70])], [(x, "out", [1, 5])])), path)
    return path


def pointwise_int8(folder: Path) -> Path:
    """Two 1x1 Convs over NCHW activations: the reduction over input channels reads x with
    stride H·W = 25 and the weights contiguously; 10 channels leave a 2-element remainder."""
    pytest.importorskip("onnxruntime")
    g = GraphBuilder("pointwise", seed=7)
    x = g.relu(g.conv("input", 10, 8, 1))
    x = g.conv(x, 8, 6, 1)
    path = folder / "pointwise_int8.onnx"
    onnx.save(quantize(g.build([("input", [1, 10, 5, 5])], [(x, "out", [1, 6, 5, 5])])), path)
    return path


def wide_pointwise_int8(folder: Path) -> Path:
    """A 1x1 Conv whose weights (40 x 10 bytes) outgrow a flash accelerator's data cache over
    rows of few channels: the M4's column form holds 13 of its 25 pixels per column (2 blocks,
    the last overlapping the first by one pixel; an odd column, its last pair overlapping too);
    then a narrow one (6 x 40 bytes)."""
    pytest.importorskip("onnxruntime")
    g = GraphBuilder("wide_pointwise", seed=11)
    x = g.relu(g.conv("input", 10, 40, 1))
    x = g.conv(x, 40, 6, 1)
    path = folder / "wide_pointwise_int8.onnx"
    onnx.save(quantize(g.build([("input", [1, 10, 5, 5])], [(x, "out", [1, 6, 5, 5])])), path)
    return path


def depthwise_int8(folder: Path) -> Path:
    """A padded 3x3 depthwise Conv (8 channels, 6x7: border regions and an interior in pixel
    blocks) and a strided one (stride 2, pads 1)."""
    pytest.importorskip("onnxruntime")
    g = GraphBuilder("depthwise", seed=13)
    x = g.relu(g.conv("input", 8, 8, 3, pads=[1, 1, 1, 1], group=8))
    x = g.conv(x, 8, 8, 3, stride=2, pads=[1, 1, 1, 1], group=8)
    path = folder / "depthwise_int8.onnx"
    onnx.save(quantize(g.build([("input", [1, 8, 6, 7])], [(x, "out", [1, 8, 3, 4])])), path)
    return path


def window_int8(folder: Path) -> Path:
    """Convs the window's column form takes on the M4: 3x3 over 4 or more channels, padded 8 -> 6
    channels over 5x5 (25 pixels: the last block of 2 overlaps the one before) and a strided
    one 6 -> 4 (3x3 outputs), then a strided 1x1 4 -> 6 (2x2 outputs)."""
    pytest.importorskip("onnxruntime")
    g = GraphBuilder("window", seed=17)
    x = g.relu(g.conv("input", 8, 6, 3, pads=[1, 1, 1, 1]))
    x = g.relu(g.conv(x, 6, 4, 3, stride=2, pads=[1, 1, 1, 1]))
    x = g.conv(x, 4, 6, 1, stride=2)
    path = folder / "window_int8.onnx"
    onnx.save(quantize(g.build([("input", [1, 8, 5, 5])], [(x, "out", [1, 6, 2, 2])])), path)
    return path


def tile_int8(folder: Path) -> Path:
    """Pointwise Convs over 64 channels, which `arm-dsp-tile-loops` makes assembly loops (16 steps
    of 4 channels: `MIN_STEPS`), 3x3 pixels (an odd count: the last pixel pair overlaps the one
    before), with a narrow 8 -> 64 layer between them whose 2 steps are straight-line assembly."""
    pytest.importorskip("onnxruntime")
    g = GraphBuilder("tile", seed=19)
    x = g.relu(g.conv("input", 64, 8, 1))
    x = g.relu(g.conv(x, 8, 64, 1))
    x = g.conv(x, 64, 6, 1)
    path = folder / "tile_int8.onnx"
    onnx.save(quantize(g.build([("input", [1, 64, 3, 3])], [(x, "out", [1, 6, 3, 3])])), path)
    return path


DSP_STAGES = ("arm-dsp-dot", "interleave-dot-rows", "fuse-smlad-bytes", "arm-dsp-tile-loops", "unroll-dot-loops", "arm-dsp-requant")


def without_dsp(target: str) -> str:
    return ",".join(s for s in stages_for(target) if s not in DSP_STAGES)


def nchw(pipeline: str) -> str:
    """`pipeline` without `assign-layouts`: every activation NCHW, read by the NCHW forms."""
    return ",".join(s for s in pipeline.split(",") if s != "assign-layouts")


def gathered(pipeline: str) -> str:
    """`pipeline` with pointwise Convs in the gathered form (X read along its channels at the
    stride H·W), not the column form the M4's lowering picks (`conv_columns`), every activation
    NCHW (no `assign-layouts`)."""
    pipeline = nchw(pipeline)
    assert ",onnx-to-uop," in pipeline
    return pipeline.replace(",onnx-to-uop,", ",onnx-to-uop{conv-word-taps=false},")


def test_only_cores_with_the_dsp_extension_run_the_pass():
    for target in DSP_CORES:
        stages = stages_for(target)
        outline = stages.index(OUTLINE_STAGE)  # the DSP stages last before the kernels are outlined
        assert stages[outline - len(DSP_STAGES):outline] == DSP_STAGES
        assert "seed-accumulators" in stages_for(target)  # bias as each sum's first value
    for target in ("host", "cortex-m0plus", "cortex-m3", "riscv32"):
        assert "arm-dsp-dot" not in stages_for(target)


def test_portable_zig_equals_the_loops_it_replaces(tmp_path):
    """On the host the arm_dsp helpers are plain Zig: the rewritten module's outputs equal the
    pass-less build's bit for bit, on inputs spanning the whole int8 range."""
    model = dense_int8(tmp_path)
    dsp = compile_model(model, tmp_path / "dsp", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=pipeline_for("cortex-m4")))
    plain = compile_model(model, tmp_path / "plain", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=without_dsp("cortex-m4")))
    zig = (tmp_path / "dsp" / "net.zig").read_text()
    # each weight word's SXTB16 pair and SMLAD pair fused (fuse-smlad-bytes), the input's shared
    assert zig.count("zant_smlad_bytes(") >= 4 and "zant_sxtb16(" in zig and "zant_load_word(" in zig
    assert "zant_smlad" not in (tmp_path / "plain" / "net.zig").read_text()
    run_dsp, run_plain = load_compiled(dsp), load_compiled(plain)
    rng = np.random.default_rng(0)
    for scale in (0.5, 3.0, 50.0):  # the last saturates the int8 input: -128 and 127 everywhere
        x = (rng.standard_normal((1, 70)) * scale).astype(np.float32)
        np.testing.assert_array_equal(run_dsp(x)[0], run_plain(x)[0])


def test_strided_activations_pack_and_equal_the_loops_they_replace(tmp_path):
    """Pointwise Convs in NCHW: the strided x bytes are packed into halfword pairs for SMLAD
    against the contiguous weight words; outputs equal the pass-less build's bit for bit."""
    model = pointwise_int8(tmp_path)
    dsp = compile_model(model, tmp_path / "dsp", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=gathered(pipeline_for("cortex-m4"))))
    plain = compile_model(model, tmp_path / "plain", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=gathered(without_dsp("cortex-m4"))))
    zig = (tmp_path / "dsp" / "net.zig").read_text()
    assert zig.count("& @as(i32, 65535)") >= 4 and zig.count("zant_smlad_bytes(") >= 4
    run_dsp, run_plain = load_compiled(dsp), load_compiled(plain)
    rng = np.random.default_rng(1)
    for scale in (0.5, 3.0, 50.0):  # the last saturates the int8 input: -128 and 127 everywhere
        x = (rng.standard_normal((1, 10, 5, 5)) * scale).astype(np.float32)
        np.testing.assert_array_equal(run_dsp(x)[0], run_plain(x)[0])


def test_cortex_m4_packs_strided_bytes_with_pkhbt(tmp_path):
    """LLVM makes one PKHBT of each (lo & 0xffff) | (hi << 16) pack on a DSP core."""
    model = pointwise_int8(tmp_path)
    pipeline = gathered(pipeline_for("cortex-m4"))
    result = compile_model(model, tmp_path / "m4", CompileOptions(name="net", target="cortex-m4", firmware=True, pipeline=pipeline))
    text = disassembly(result.firmware_path)
    assert "pkhbt" in text and text.count("smlad") >= 4


def test_pointwise_columns_equal_the_gathered_form(tmp_path):
    """The M4's lowering copies a pointwise Conv's input a block of 2 pixels at a time into a
    column (25 pixels: the last block overlaps the one before) and reads both operands as
    words: its outputs equal the gathered form's bit for bit, and the column's dot products
    are word SMLADs shared by a 2 x 2 tile (no strided packs left), each word widened once."""
    model = pointwise_int8(tmp_path)
    columns = compile_model(model, tmp_path / "columns", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=pipeline_for("cortex-m4")))
    rows = compile_model(model, tmp_path / "rows", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=gathered(pipeline_for("cortex-m4"))))
    zig = (tmp_path / "columns" / "net.zig").read_text()
    assert "_columns" in zig and "& @as(i32, 65535)" not in zig
    # each 2 x 2 tile's reduction one smlad_tile (fuse-smlad-bytes' pairs, then arm-dsp-tile-loops),
    # each word widened once for its two sums
    assert zig.count("zant_smlad_tile(") >= 2 and "_columns" not in (tmp_path / "rows" / "net.zig").read_text()
    run_columns, run_rows = load_compiled(columns), load_compiled(rows)
    rng = np.random.default_rng(2)
    for scale in (0.5, 3.0, 50.0):  # the last saturates the int8 input: -128 and 127 everywhere
        x = (rng.standard_normal((1, 10, 5, 5)) * scale).astype(np.float32)
        np.testing.assert_array_equal(run_columns(x)[0], run_rows(x)[0])


def test_wide_pointwise_columns_equal_the_gathered_form(tmp_path):
    """A column of 13 pixels (weights too large to stay cached, rows short enough to): each
    weight pair read once per column by a loop over its pixel pairs; outputs equal the gathered
    form's bit for bit. With `assign-layouts` (the M4's default) the second Conv reads the
    first one's output channels-last, in place: its column goes."""
    model = wide_pointwise_int8(tmp_path)
    columns = compile_model(model, tmp_path / "columns", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=nchw(pipeline_for("cortex-m4"))))
    default = compile_model(model, tmp_path / "default", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=pipeline_for("cortex-m4")))
    rows = compile_model(model, tmp_path / "rows", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=gathered(pipeline_for("cortex-m4"))))
    for result, sizes in ((columns, [2 * 40, 13 * 10]), (default, [13 * 10])):
        plan = {t["name"]: t["size"] for t in result.plan["tensors"]}
        assert sorted(size for name, size in plan.items() if name.endswith("_columns")) == sizes
    run_columns, run_default, run_rows = load_compiled(columns), load_compiled(default), load_compiled(rows)
    rng = np.random.default_rng(5)
    for scale in (0.5, 3.0, 50.0):
        x = (rng.standard_normal((1, 10, 5, 5)) * scale).astype(np.float32)
        np.testing.assert_array_equal(run_columns(x)[0], run_rows(x)[0])
        np.testing.assert_array_equal(run_default(x)[0], run_rows(x)[0])


def test_depthwise_regions_outermost_equal_the_host(tmp_path):
    """The M4's depthwise Convs loop over the channels inside each region of the output (one
    region's code hot at a time): its outputs equal the host pipeline's bit for bit."""
    model = depthwise_int8(tmp_path)
    m4 = compile_model(model, tmp_path / "m4", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=pipeline_for("cortex-m4")))
    host = compile_model(model, tmp_path / "host", CompileOptions(name="net", optimize="ReleaseSafe"))
    run_m4, run_host = load_compiled(m4), load_compiled(host)
    rng = np.random.default_rng(7)
    for scale in (0.5, 3.0, 50.0):
        x = (rng.standard_normal((1, 8, 6, 7)) * scale).astype(np.float32)
        np.testing.assert_array_equal(run_m4(x)[0], run_host(x)[0])


@pytest.mark.parametrize("weight_cache", [0, 64])
def test_window_columns_equal_the_gathered_form(tmp_path, weight_cache):
    """The M4's 3x3 Convs over 4+ channels read each window's runs of taps x channels from a
    channels-last padded copy of X (`conv_window`), the strided 1x1 copies each block of 2
    pixels into a column, and both reduce in word SMLADs shared by 2 x 2 tiles: outputs equal
    the gathered form's (X read along its channels in NCHW) bit for bit, with each pair of
    weight rows read where it is or (a cache smaller than two pairs) from a scratch copy."""
    model = window_int8(tmp_path)
    pipeline = pipeline_for("cortex-m4", weight_cache=weight_cache)
    columns = compile_model(model, tmp_path / "columns", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=pipeline))
    rows = compile_model(model, tmp_path / "rows", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=gathered(pipeline_for("cortex-m4"))))
    zig = (tmp_path / "columns" / "net.zig").read_text()
    names = [t["name"] for t in columns.plan["tensors"]]
    assert len([name for name in names if name.endswith("_columns")]) == 1  # the strided 1x1's
    # The 8 -> 6 layer's runs (3·8 bytes) are whole words: its tiles are `smlad_window`s over a
    # pair of rows widened into RAM whatever the cache; the 6 -> 4 layer's (18 bytes) are not:
    # its rows are staged only under a small cache.
    assert len([name for name in names if name.endswith("_columns_weights")]) == (2 if weight_cache else 1)
    assert "zant_smlad_window(3, 6, " in zig  # 3 rows of 6 words
    assert "zant_smlad_tile(" in zig  # the tiles' reductions (arm-dsp-tile-loops)
    assert "_columns" not in (tmp_path / "rows" / "net.zig").read_text()
    run_columns, run_rows = load_compiled(columns), load_compiled(rows)
    rng = np.random.default_rng(9)
    for scale in (0.5, 3.0, 50.0):
        x = (rng.standard_normal((1, 8, 5, 5)) * scale).astype(np.float32)
        np.testing.assert_array_equal(run_columns(x)[0], run_rows(x)[0])


def disassembly(elf: Path) -> str:
    if not Path(OBJDUMP).exists():
        pytest.skip("llvm-objdump is missing")
    return subprocess.run([OBJDUMP, "-d", str(elf)], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_firmware_runs_smlad_and_equals_the_host(tmp_path, target):
    from zant.backend.build import BOARDS, DEFAULT_BOARDS
    from zant.backend.firmware import qemu_missing, run_firmware

    missing = qemu_missing(BOARDS[DEFAULT_BOARDS[target]])
    if missing:
        pytest.skip(missing)
    model = dense_int8(tmp_path)
    firmware = compile_model(model, tmp_path / target, CompileOptions(name="net", target=target, firmware=True))
    text = disassembly(firmware.firmware_path)
    assert text.count("smlad") >= 4 and "sxtb16" in text
    host = compile_model(model, tmp_path / "host", CompileOptions(name="net", optimize="ReleaseSafe"))
    assert "zant_smlad" not in (tmp_path / "host" / "net.zig").read_text()
    expected = load_compiled(host)(*(firmware.feeds[s.name] for s in host.inputs))
    run = run_firmware(firmware.firmware_path, firmware.board, firmware.outputs)
    for got, want in zip(run.outputs, expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_tile_loops_equal_the_gathered_form(tmp_path):
    """The tiles as `smlad_tile` (their portable Zig on the host), a loop over the 64-channel
    layers' 16 steps and straight-line over the 8-channel one's 2: outputs equal the gathered
    form's bit for bit."""
    model = tile_int8(tmp_path)
    tiles = compile_model(model, tmp_path / "tiles", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=pipeline_for("cortex-m4")))
    rows = compile_model(model, tmp_path / "rows", CompileOptions(name="net", optimize="ReleaseSafe", pipeline=gathered(pipeline_for("cortex-m4"))))
    zig = (tmp_path / "tiles" / "net.zig").read_text()
    assert zig.count("zant_smlad_tile(16, ") == 2 and "zant_smlad_tile(2, " in zig and "zant_smlad_bytes_pair(" not in zig
    run_tiles, run_rows = load_compiled(tiles), load_compiled(rows)
    rng = np.random.default_rng(3)
    for scale in (0.5, 3.0, 50.0):  # the last saturates the int8 input: -128 and 127 everywhere
        x = (rng.standard_normal((1, 64, 3, 3)) * scale).astype(np.float32)
        np.testing.assert_array_equal(run_tiles(x)[0], run_rows(x)[0])


@pytest.mark.parametrize("optimize", firmware_modes())
def test_firmware_tile_loops_equal_the_host(tmp_path, optimize):
    """The tiles' assembly (`zant_smlad_tile`: LDR, SXTB16 and SMLAD in 13 registers, a loop or
    straight-line) builds in every mode (14 registers did not in Debug and ReleaseSafe) and, run
    on the Cortex-M4 under QEMU, gives the host build's outputs bit for bit."""
    x = (np.random.default_rng(4).standard_normal((1, 64, 3, 3)) * 3.0).astype(np.float32)
    firmware = firmware_equals_host(tile_int8(tmp_path), tmp_path, x, optimize)
    text = disassembly(firmware.firmware_path)
    assert text.count("smlad") >= 16 and "sxtb16" in text


def test_interpreter_checks_the_tile_loops(tmp_path):
    """`--check-each-pass` through the Cortex-M4 pipeline over `tile_int8`: arm-dsp-tile-loops
    (the interpreter's `smlad_tile` reads the words the loop read) leaves the outputs as they
    were."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import make_context
    from zant.frontend.onnx_importer import import_model
    from zant.interpreter import check_each_pass
    from zant.plugins import all_passes

    module = import_model(str(tile_int8(tmp_path)))
    passes = PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, pipeline_for("cortex-m4")).passes
    report = check_each_pass(module, passes, make_context(), seed=5)
    assert "arm-dsp-tile-loops" in report.checked
    assert sum(op.name == "arm_dsp.smlad_tile" for op in module.walk()) == 3


def test_cortex_m3_firmware_has_no_dsp_instruction(tmp_path):
    model = dense_int8(tmp_path)
    result = compile_model(model, tmp_path / "m3", CompileOptions(name="net", target="cortex-m3", firmware=True))
    text = disassembly(result.firmware_path)
    assert "smlad" not in text and "sxtb16" not in text


def test_interpreter_checks_every_dsp_pass(tmp_path):
    """`--check-each-pass` through the Cortex-M4 pipeline: arm-dsp-dot, interleave-dot-rows,
    fuse-smlad-bytes and unroll-dot-loops each leave the interpreted outputs as they were (the
    interpreter's `smlad_bytes` is what the instructions compute; a swapped pair of halves there
    was named as fuse-smlad-bytes changing output 0)."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import make_context
    from zant.frontend.onnx_importer import import_model
    from zant.interpreter import check_each_pass
    from zant.plugins import all_passes

    module = import_model(str(dense_int8(tmp_path)))
    passes = PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, pipeline_for("cortex-m4")).passes
    report = check_each_pass(module, passes, make_context(), seed=3)
    assert set(DSP_STAGES) <= set(report.checked)
    assert any(op.name == "arm_dsp.smlad_bytes" for op in module.walk())


def test_interpreter_checks_the_pointwise_columns(tmp_path):
    """The same through the column form of pointwise Convs (odd pixel count: an overlapping
    last block) and fuse-smlad-bytes' pairs: every pass leaves the interpreted outputs as
    they were."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import make_context
    from zant.frontend.onnx_importer import import_model
    from zant.interpreter import check_each_pass
    from zant.plugins import all_passes

    module = import_model(str(pointwise_int8(tmp_path)))
    passes = PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, pipeline_for("cortex-m4")).passes
    report = check_each_pass(module, passes, make_context(), seed=4)
    assert set(DSP_STAGES) <= set(report.checked)
    names = {op.name for op in module.walk()}
    assert "arm_dsp.smlad_tile" in names and "uop.min" in names


def test_interpreter_checks_the_window_columns(tmp_path):
    """The same through the window's column form (`window_int8`)."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import make_context
    from zant.frontend.onnx_importer import import_model
    from zant.interpreter import check_each_pass
    from zant.plugins import all_passes

    module = import_model(str(window_int8(tmp_path)))
    passes = PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, pipeline_for("cortex-m4")).passes
    report = check_each_pass(module, passes, make_context(), seed=8)
    assert set(DSP_STAGES) <= set(report.checked)
    assert any(op.name == "arm_dsp.smlad_tile" for op in module.walk())


def test_interpreter_checks_the_wide_columns(tmp_path):
    """The same through a column of 13 pixels (`wide_pointwise_int8`)."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import make_context
    from zant.frontend.onnx_importer import import_model
    from zant.interpreter import check_each_pass
    from zant.plugins import all_passes

    module = import_model(str(wide_pointwise_int8(tmp_path)))
    passes = PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, pipeline_for("cortex-m4")).passes
    report = check_each_pass(module, passes, make_context(), seed=6)
    assert set(DSP_STAGES) <= set(report.checked)
    assert any(op.name == "arm_dsp.smlad_tile" for op in module.walk())
