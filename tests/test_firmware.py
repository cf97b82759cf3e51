"""Firmware images under QEMU: the model, its inputs and a thin runtime on an emulated MCU.

Each image prints its outputs through semihosting; they must equal the host build's on the same
inputs. Tests that run QEMU skip (saying how to install it) where it is missing. The default run
covers the Cortex-M4 and Cortex-M55 boards in the shipped `-O` mode (`e2e.firmware_modes`), the
other modes under `-m slow`; every other board runs under `-m slow` (these tests skip otherwise,
so a plain `pytest` stays fast even without a `-m 'not slow'` default).
"""

from __future__ import annotations

import shutil
import re
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from zant.backend.build import BOARDS, DEFAULT_BOARDS, OPTIMIZE_MODES, board_for, build_zig
from zant.backend.firmware import (
    ImageModel,
    build_firmware,
    count_instructions,
    linker_script,
    qemu_missing,
    run_firmware,
    run_image,
    run_models,
    write_firmware,
    write_image,
)
from zant.driver import CompileOptions, CompileResult, TensorSignature, build_image, compile_model
from zant.errors import ZantError
from zant.runtime import complete_feeds, load_compiled

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "examples" / "digits" / "digits_cnn.onnx"
sys.path.insert(0, str(ROOT / "bench"))

from e2e import firmware_modes  # noqa: E402
from models import INT8_PIPELINE, MODELS, QUANTIZED  # noqa: E402


def int8_kws(folder: Path) -> Path:
    """The QDQ int8 KWS model (onnxruntime's quantize_static; skipped without onnxruntime)."""
    pytest.importorskip("onnxruntime")
    path = folder / "kws_int8.onnx"
    onnx.save(QUANTIZED["kws_int8"](), path)
    return path


def require_qemu(board_name: str) -> None:
    missing = qemu_missing(BOARDS[board_name])
    if missing:
        pytest.skip(missing)


@pytest.fixture
def slow(request):
    """Skips a `slow` test unless the run selects it (`pytest -m slow`)."""
    if "slow" not in (request.config.getoption("markexpr") or "") or "not slow" in request.config.getoption("markexpr"):
        pytest.skip("a slow test: run with `pytest -m slow`")


def run_on_board(model_path: Path, target: str, folder: Path, inputs=None, rtol=1e-4, atol=1e-5, pipeline=None):
    """Build the model for the host and as a firmware image (with `pipeline`, if given); assert
    the image's outputs equal the host build's on the same inputs; return the compile result
    and the run."""
    require_qemu(DEFAULT_BOARDS[target])
    passes = {} if pipeline is None else {"pipeline": pipeline}
    firmware = compile_model(
        model_path, folder / target,
        CompileOptions(name="net", target=target, optimize="ReleaseSafe", firmware=True, inputs=inputs, **passes),
    )
    host = compile_model(model_path, folder / "host", CompileOptions(name="net", optimize="ReleaseSafe", **passes))
    assert firmware.feeds is not None and firmware.board is not None and firmware.firmware_path
    expected = load_compiled(host)(*(firmware.feeds[s.name] for s in host.inputs))
    run = run_firmware(firmware.firmware_path, firmware.board, firmware.outputs)
    for index, (got, want) in enumerate(zip(run.outputs, expected, strict=True)):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"output {index} on {target}")
    assert 0 < run.stack_bytes < firmware.board.ram.size
    return firmware, run


# -- without QEMU ----------------------------------------------------------------------------------


def test_every_mcu_target_has_a_board_with_its_core():
    for target, board in DEFAULT_BOARDS.items():
        assert BOARDS[board].target == target
    assert board_for("cortex-m4").name == "mps2-an386"


def test_linker_script_follows_the_memory_map():
    m4 = linker_script("net", BOARDS["mps2-an386"])
    assert "ORIGIN = 0x00000000, LENGTH = 0x400000" in m4 and "ORIGIN = 0x20000000" in m4
    assert "KEEP(*(.vectors))" in m4 and "ENTRY(net_reset)" in m4 and "} > RAM AT > FLASH" in m4
    # A separate region for the weights where the boot flash is small (the M55's ITCM).
    m55 = linker_script("net", BOARDS["mps3-an547"])
    assert "WEIGHTS (r) : ORIGIN = 0x11000000" in m55 and "} > RAM AT > WEIGHTS" in m55
    assert "ENTRY(_start)" in linker_script("net", BOARDS["virt"])


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(firmware=True), "needs an MCU target"),
        (dict(firmware=True, target="riscv32", board="mps2-an386"), "has a cortex-m4 core, not riscv32"),
        (dict(firmware=True, target="cortex-m4", board="nope"), "unknown board 'nope'"),
        (dict(target="cortex-m4", board="mps2-an386"), "add --firmware"),
        (dict(firmware=True, target="cortex-m4", build=False), "needs a build"),
    ],
)
def test_bad_firmware_options_are_clear_errors(tmp_path, options, message):
    with pytest.raises(ZantError, match=message):
        compile_model(DIGITS, tmp_path, CompileOptions(**options))
    assert not list(tmp_path.iterdir())


def test_cli_firmware_options_need_firmware(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "zant.tools.cli", "compile", str(DIGITS), "-o", str(tmp_path), "--board", "microbit"],
        capture_output=True, text=True,
    )
    assert result.returncode == 1 and "add --firmware" in result.stderr and "Traceback" not in result.stderr


# -- under QEMU, Cortex-M4 -------------------------------------------------------------------------


def test_digits_on_cortex_m4_equals_host_build(tmp_path):
    images = np.load(ROOT / "examples" / "digits" / "digits_heldout.npz")["images"]
    firmware, run = run_on_board(DIGITS, "cortex-m4", tmp_path, inputs={"image": images[3][None]})
    sizes = firmware.firmware_sizes
    weights = sum(a["size"] for a in firmware.plan["arenas"] if a["role"] == "constant")
    assert sizes is not None and sizes["flash"] >= sizes[".rodata"] >= weights > 0
    assert "OUTPUT net 0 " in run.stdout and "STACK " in run.stdout
    # Measured, exactly: the same image executes the same instructions every time.
    assert firmware.board is not None and firmware.firmware_path is not None
    count = count_instructions(firmware.board, firmware.firmware_path)
    assert 10_000 < count == count_instructions(firmware.board, firmware.firmware_path)


def test_mlperf_tiny_kws_int8_on_cortex_m4_equals_host_build(tmp_path):
    firmware, _ = run_on_board(int8_kws(tmp_path), "cortex-m4", tmp_path, rtol=0, atol=0, pipeline=INT8_PIPELINE)
    # The folded model: int8 activations in a scratch arena below TVM/USMP's 17,232 B for KWS.
    scratch = next(a["size"] for a in firmware.plan["arenas"] if a["role"] == "scratch")
    assert scratch < 17_232


FAKE_MODEL = """\
export fn net_predict(x: [*]const f32, y: [*]f32) callconv(.c) i32 {{
    y[0] = x[0];
    {body}
}}
"""


# 32 KB of stack: more than the micro:bit's 16 KB of RAM.
STACK_OVERFLOW = """\
var big: [32768]u8 = undefined;
    const v: *volatile [32768]u8 = &big;
    for (0..v.len) |i| v[i] = @truncate(i);
    return v[0];"""


@pytest.mark.parametrize(
    "board_name, body, status, printed",
    [
        ("mps2-an386", "return 7;", "status 1 (predict)", "ERROR net returned 7"),
        ("mps2-an386", '@panic("boom");', "status 2 (panic)", "PANIC net boom"),
        ("microbit", STACK_OVERFLOW, "locked up", "the stack overflows RAM"),
    ],
)
def test_a_failing_predict_exits_non_zero(tmp_path, board_name, body, status, printed):
    require_qemu(board_name)
    board = BOARDS[board_name]
    (tmp_path / "net.zig").write_text(FAKE_MODEL.format(body=body))
    signature = [TensorSignature("x", [1], "float32")], [TensorSignature("y", [1], "float32")]
    root = write_firmware(tmp_path, "net", *signature, [np.ones(1, np.float32)], board)
    elf = build_firmware(root, "net", board, "ReleaseSafe")
    with pytest.raises(ZantError, match=r"status") as error:
        run_image(board, elf)
    assert status in str(error.value) and printed in str(error.value)


def add_model(width: int) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["y"], name="add")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, width])],
        [numpy_helper.from_array(np.arange(width, dtype=np.float32), "b")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_cli_compile_firmware_and_run_under_qemu(tmp_path):
    require_qemu("mps2-an386")
    # 400 bytes of output: printed over several semihosting writes.
    onnx.save(add_model(50), tmp_path / "m.onnx")
    np.save(tmp_path / "x.npy", np.full((2, 50), 0.5, np.float32))
    cli = [sys.executable, "-m", "zant.tools.cli"]
    compiled = subprocess.run(
        [*cli, "compile", tmp_path / "m.onnx", "-o", tmp_path / "out", "--name", "net", "--target", "cortex-m4",
         "--firmware", "--input", f"x={tmp_path / 'x.npy'}"],
        capture_output=True, text=True,
    )
    assert compiled.returncode == 0, compiled.stderr
    assert (tmp_path / "out" / "net.elf").exists() and "firmware" in compiled.stdout
    ran = subprocess.run(
        [*cli, "run", tmp_path / "m.onnx", "--target", "cortex-m4", "--input", f"x={tmp_path / 'x.npy'}"],
        capture_output=True, text=True,
    )
    assert ran.returncode == 0, ran.stderr
    assert "mps2-an386 [ 0.5  1.5  2.5" in ran.stdout and "max abs error 0\n" in ran.stdout
    assert "stack" in ran.stdout
    # one inference's cost: instructions, the timing model's cycles, milliseconds at the board's clock
    assert re.search(r"one inference   [\d,]+ instructions, [\d,]+ cycles, [\d.]+ ms at 25 MHz", ran.stdout), ran.stdout


# -- several models in one image ------------------------------------------------------------------


def test_an_image_needs_distinct_models_with_sources(tmp_path):
    board = BOARDS["mps2-an386"]
    (tmp_path / "a.zig").write_text("")
    with pytest.raises(ZantError, match=r"distinct names, not \['a', 'a'\]"):
        write_image(tmp_path, "image", [ImageModel("a", [], []), ImageModel("a", [], [])], board)
    with pytest.raises(ZantError, match=r"image 'image': no b.zig in"):
        write_image(tmp_path, "image", [ImageModel("a", [], []), ImageModel("b", [], [])], board)
    assert [p.name for p in tmp_path.iterdir()] == ["a.zig"]


def test_several_models_in_one_image_equal_their_host_builds(tmp_path):
    require_qemu("mps2-an386")
    board = BOARDS["mps2-an386"]
    onnx.save(add_model(3), tmp_path / "add.onnx")
    image = np.load(ROOT / "examples" / "digits" / "digits_heldout.npz")["images"][5][None]
    models, expected = [], {}
    for name, path, given in [("add", tmp_path / "add.onnx", {}), ("digits", DIGITS, {"image": image})]:
        sources = compile_model(path, tmp_path / "image", CompileOptions(name=name, target="cortex-m4", build=False))
        host = compile_model(path, tmp_path / "host", CompileOptions(name=name, optimize="ReleaseSafe"))
        feeds, _ = complete_feeds(sources.inputs, given)
        models.append(ImageModel(name, sources.inputs, sources.outputs, [feeds[s.name] for s in sources.inputs]))
        expected[name] = load_compiled(host)(*(feeds[s.name] for s in host.inputs))
    root = write_image(tmp_path / "image", "image", models, board)
    run = run_models(build_firmware(root, "image", board, "ReleaseFast"), board, models)
    assert run.errors == {} and run.not_run == [] and run.stack_bytes is not None and run.stack_bytes > 0
    assert list(run.outputs) == ["add", "digits"]
    # A leaf model may need no stack at all (ReleaseFast gives the frame pointer back).
    assert 0 <= run.model_stack["add"] < run.model_stack["digits"] < run.stack_bytes
    for name, want in expected.items():
        for got, ref in zip(run.outputs[name], want, strict=True):
            np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5, err_msg=name)


FAKE_STEP = """\
export fn {name}_predict(x: [*]const f32, y: [*]f32) callconv(.c) i32 {{
    y[0] = x[0] + 1;
    {body}
}}
"""


@pytest.mark.parametrize(
    "body, error, not_run",
    [
        ("return -7;", "returned -7", []),
        ('@panic("boom");', "panic: boom", ["after"]),
        ('asm volatile ("udf #0");\n    return 0;', "fault", ["after"]),
    ],
    ids=["error", "panic", "fault"],
)
def test_a_failing_model_is_named_and_the_others_keep_their_outputs(tmp_path, body, error, not_run):
    require_qemu("mps2-an386")
    board = BOARDS["mps2-an386"]
    bodies = {"before": "return 0;", "failing": body, "after": "return 0;"}
    for name, text in bodies.items():
        (tmp_path / f"{name}.zig").write_text(FAKE_STEP.format(name=name, body=text))
    signature = [TensorSignature("x", [1], "float32")], [TensorSignature("y", [1], "float32")]
    models = [ImageModel(name, *signature, [np.full(1, 0.5, np.float32)]) for name in bodies]
    root = write_image(tmp_path, "image", models, board)
    run = run_models(build_firmware(root, "image", board, "ReleaseSafe"), board, models)
    assert run.errors == {"failing": error} and run.not_run == not_run
    assert {name: out[0].tolist() for name, out in run.outputs.items()} == {
        name: [1.5] for name in ["before", "after"] if name not in not_run
    }
    assert (run.stack_bytes is None) == bool(not_run)


# -- every -O mode ---------------------------------------------------------------------------------


@dataclass
class Reference:
    """A model, the inputs its images embed and the host build's outputs on them."""

    path: Path
    feeds: dict[str, np.ndarray]
    expected: list[np.ndarray]


class ModeModels:
    """Each model's host reference and each target's generated sources, made once per module:
    an image per mode then costs only its link (the `-O` mode changes nothing before the build)."""

    def __init__(self, folder: Path):
        self.folder = folder

    @cache
    def reference(self, model: str) -> Reference:
        if model == "digits":
            path = DIGITS
            given = {"image": np.load(ROOT / "examples" / "digits" / "digits_heldout.npz")["images"][3][None]}
        else:
            path = self.folder / f"{model}.onnx"
            onnx.save(MODELS[model](), path)
            given = {}
        host = compile_model(path, self.folder / model / "host", CompileOptions(name="net", optimize="ReleaseSafe"))
        feeds, _ = complete_feeds(host.inputs, given)
        expected = load_compiled(host)(*(feeds[s.name] for s in host.inputs))
        return Reference(path, feeds, expected)

    @cache
    def sources(self, model: str, target: str) -> CompileResult:
        folder = self.folder / model / target
        return compile_model(self.reference(model).path, folder, CompileOptions(name="net", target=target, build=False))


@pytest.fixture(scope="module")
def mode_models(tmp_path_factory) -> ModeModels:
    return ModeModels(tmp_path_factory.mktemp("modes"))


def check_image_in_mode(models: ModeModels, model: str, target: str, optimize: str) -> None:
    """Link `model`'s image for `target` in `optimize` mode, as `zant compile --firmware` does,
    run it and compare its outputs with the host build's."""
    board = board_for(target)
    require_qemu(board.name)
    reference, sources = models.reference(model), models.sources(model, target)
    folder = sources.zig_path.parent / optimize
    folder.mkdir()
    shutil.copy(sources.zig_path, folder)
    shutil.copy(sources.zig_path.with_suffix(".weights.bin"), folder)  # the constants it embeds
    elf = build_image(folder, "net", sources.inputs, sources.outputs, reference.feeds, board, optimize)
    run = run_firmware(elf, board, sources.outputs)
    for index, (got, want) in enumerate(zip(run.outputs, reference.expected, strict=True)):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=f"output {index}, {target} {optimize}")
    assert 0 < run.stack_bytes < board.ram.size
    # The model's own stack, painted just before its call: inside the image's, below the
    # harness's printing (its 128-byte line buffers) at least.
    assert run.model_stack_bytes is not None and 0 < run.model_stack_bytes <= run.stack_bytes - 128


# 16 images in ~35 s on two loaded cores (4 in the default run, the shipped mode's); the slowest,
# KWS (MLPerf-Tiny's float DS-CNN) in ReleaseSafe, links in ~7 s, and its Debug image runs in
# ~1 s under QEMU.
@pytest.mark.parametrize("optimize", firmware_modes())
@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("model", ["digits", "kws"])
def test_image_runs_in_every_mode(mode_models, model, target, optimize):
    check_image_in_mode(mode_models, model, target, optimize)


# -- the other boards (slow) -----------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("optimize", OPTIMIZE_MODES)
@pytest.mark.parametrize("target", sorted(set(DEFAULT_BOARDS) - {"cortex-m4", "cortex-m55"}))
@pytest.mark.parametrize("model", ["digits", "kws"])
def test_image_runs_in_every_mode_on_other_boards(mode_models, slow, model, target, optimize):
    if model == "kws" and target == "cortex-m0plus":
        pytest.skip("the micro:bit's 16 KB of RAM cannot hold float KWS's 64 KB arena")
    if (model, target, optimize) == ("digits", "cortex-m0plus", "Debug"):
        # Unoptimized frames: 12.6 KB of stack on the M4, more in Thumb-1; 13.8 KB are left.
        pytest.skip("digits' Debug stack overflows the micro:bit's 16 KB of RAM (the image locks up)")
    check_image_in_mode(mode_models, model, target, optimize)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cortex-m7", "cortex-m33", "cortex-m55", "riscv32"])
def test_mlperf_tiny_resnet8_on_other_boards(tmp_path, slow, target):
    onnx.save(MODELS["resnet8"](), tmp_path / "resnet8.onnx")
    run_on_board(tmp_path / "resnet8.onnx", target, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.mark.slow
# Not the micro:bit (M0+) here: with this explicit pipeline KWS keeps its 16,000 B layer-by-layer
# arena, more than 16 KB of RAM leaves beside a stack; under the board's budget it runs in 8,704 B
# (schedule-in-place), which tests/test_ram_budget.py runs on the micro:bit.
@pytest.mark.parametrize("target", sorted(set(DEFAULT_BOARDS) - {"cortex-m4", "cortex-m0plus"}))
def test_mlperf_tiny_kws_int8_on_other_boards(tmp_path, slow, target):
    run_on_board(int8_kws(tmp_path), target, tmp_path, rtol=0, atol=0, pipeline=INT8_PIPELINE)
