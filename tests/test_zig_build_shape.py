"""The generated code keeps the shape that Zig builds quickly, in every pipeline (no timing here).

Four constructs made builds slow, up to minutes (bench/build_time.py measures them):

* a runtime check on every address: ReleaseSafe's overflow, sign and bounds checks on each gep
  of a Conv kernel made LLVM's loop passes (LoopIdiomRecognize, IndVarSimplify) superlinear in
  the function (three Conv 3×3 layers: 21 s of CPU against 1.3 s in ReleaseFast; ResNet-8 for
  the Cortex-M4: 100 s). An address proven inside its buffer is now unchecked;
* a Clip bound loaded from the constant arena for every element, instead of a literal (and
  clamped with NaN tests on both operands);
* a load of a constant at a fixed address, which Zig evaluates at compile time by reinterpreting
  the whole constant blob, for each load (MobileNet's 280 Clip bounds: 25 s in every mode);
* every layer in one function: LLVM's GVN is superlinear in it (MobileNet, Cortex-M4
  ReleaseSafe: 11.4 s of CPU in one function, 4.5 s with a function per loop nest).
* the weights as Zig literals (MobileNetV1 1.0: a 103 MB `.zig`), or their `@embedFile` coerced
  to `[N]u8`, which Zig's Sema copies byte by byte (16.9 MB: 10.6 s of CPU before LLVM starts).

The checks that remain must still trap: an index read from memory is checked against its buffer.
"""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from zant.driver import CompileOptions, CompileResult, compile_model
from zant.pipelines import DEFAULT_PIPELINE, MCU_PIPELINE, pipeline_for

GEP = re.compile(r"= &(\w+)(\[0\.\.\d+\])?\[(.*)\];$", re.MULTILINE)
"""A printed gep: `const addr_… = &buffer[address];` (checked ones index `buffer[0..N]`)."""


def clip_stack(blocks: int = 4, channels: int = 8, size: int = 8) -> onnx.ModelProto:
    """Conv 3×3 (padding 1) + Clip(0, 6) blocks, as MobileNet's ReLU6 layers."""
    rng = np.random.default_rng(0)
    nodes, initializers = [], [
        numpy_helper.from_array(np.array(0.0, np.float32), "low"),
        numpy_helper.from_array(np.array(6.0, np.float32), "high"),
    ]
    x = "x"
    for i in range(blocks):
        cin = 3 if i == 0 else channels
        weights = rng.standard_normal((channels, cin, 3, 3)).astype(np.float32)
        initializers.append(numpy_helper.from_array(weights, f"w{i}"))
        initializers.append(numpy_helper.from_array(rng.standard_normal(channels).astype(np.float32), f"b{i}"))
        conv = helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [f"conv{i}"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        nodes.append(conv)
        x = "y" if i == blocks - 1 else f"clip{i}"
        nodes.append(helper.make_node("Clip", [f"conv{i}", "low", "high"], [x]))
    graph = helper.make_graph(
        nodes, "clip_stack",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, size, size])],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def generated_zig(model: onnx.ModelProto, folder, pipeline: str, **settings) -> tuple[str, CompileResult]:
    """The Zig source `model` compiles to with `pipeline`, and the compile result."""
    onnx.save(model, folder / "model.onnx")
    result = compile_model(folder / "model.onnx", folder / "out", CompileOptions(name="m", pipeline=pipeline, **settings))
    return result.zig_path.read_text(), result


@pytest.mark.parametrize("pipeline", [MCU_PIPELINE, DEFAULT_PIPELINE], ids=["mcu", "host"])
def test_conv_clip_stack_has_no_runtime_checked_address(tmp_path, pipeline):
    zig, _ = generated_zig(clip_stack(), tmp_path, pipeline, build=False)
    geps = GEP.findall(zig)
    assert len(geps) > 50  # the kernels are there
    # Every index is a loop variable or a clamp of one: all addresses are proven in bounds, so
    # none may carry ReleaseSafe's checks (the shape that made LLVM take minutes).
    checked = [g for g in geps if g[1] or "@intCast" in g[2]]
    assert not checked, checked[:3]
    assert all(g[2].isdigit() or g[2].startswith("@as(usize, @bitCast(") for g in geps)


@pytest.mark.parametrize("pipeline", [MCU_PIPELINE, DEFAULT_PIPELINE], ids=["mcu", "host"])
def test_each_loop_nest_is_a_function_of_its_own(tmp_path, pipeline):
    zig, _ = generated_zig(clip_stack(), tmp_path, pipeline, build=False)
    # LLVM's passes are superlinear in the size of a function: the entry point only calls the
    # kernels, each a loop nest (at least one per fused Conv + Clip block), kept apart in
    # ReleaseSafe, whose checks make them large.
    entry = zig[zig.index("export fn m_predict"):]
    kernels = re.findall(r"^fn (kernel_\w+)\(", zig, re.MULTILINE)
    assert "while" not in entry and len(kernels) >= 4
    assert all(f"@call(kernel_call, {kernel}, " in entry for kernel in kernels)
    assert '.safe or @hasDecl(@import("root"), "zant_profile_kernels")) .never_inline else .auto;' in zig


@pytest.mark.parametrize("pipeline", [MCU_PIPELINE, DEFAULT_PIPELINE], ids=["mcu", "host"])
def test_clip_bounds_are_literals(tmp_path, pipeline):
    zig, _ = generated_zig(clip_stack(), tmp_path, pipeline, build=False)
    # Not loaded from the constant arena at a fixed address (each such load made Zig reinterpret
    # the whole blob), and clamped with one compare and select, not the NaN-testing helpers.
    assert not re.search(r"= &const_\w+\[\d+\];", zig)
    assert "zant_fmax" not in zig and "zant_vfmax" not in zig
    six = "@as(f32, 0x1.8000000000000p+2)"
    assert f"{six} < " in zig and f") {six} else" in zig  # min(x, 6): expand-float-minmax's compare and where


@pytest.mark.parametrize("mode", ["embedded", "staged"])
def test_constant_arena_is_embedded_with_its_own_type(tmp_path, mode):
    # The placement is plan-arenas' decision: the pipeline names it (as zant compile --constants does).
    pipeline = pipeline_for("cortex-m4", constants=mode)
    zig, result = generated_zig(clip_stack(), tmp_path, pipeline, build=False, constants=mode)
    arena = "m_constants" if mode == "embedded" else "m_constants_source"
    blob = (result.zig_path.parent / "m.weights.bin").read_bytes()
    # `@embedFile`'s [N:0]u8 as it is (only aligned), never coerced to [N]u8, and no byte literals.
    declaration = re.search(rf"^const {arena}\b.*$", zig, re.MULTILINE)
    assert declaration and declaration[0] == f'const {arena} align(16) = @embedFile("m.weights.bin").*;'
    assert f"@sizeOf(@TypeOf({arena})) == {len(blob) + 1})" in zig
    assert not re.search(r"\]u8[^=]*= @embedFile", zig) and not re.search(r"0x[0-9a-f]{2}, 0x", zig)


def gather_model() -> onnx.ModelProto:
    """Rows of a constant table picked by a run-time index: an address with no static bound."""
    table = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "table")
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "i"], ["y"], axis=0)], "gather",
        [helper.make_tensor_value_info("i", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [table],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


CALL = """
import sys, numpy as np
from zant.driver import TensorSignature
from zant.runtime import CompiledModel
model = CompiledModel(sys.argv[1], "m", [TensorSignature("i", [2], "int64")], [TensorSignature("y", [2, 3], "float32")])
print(model(np.array([int(v) for v in sys.argv[2:]], np.int64))[0].tolist())
"""


def test_index_from_memory_stays_checked(tmp_path):
    zig, result = generated_zig(gather_model(), tmp_path, MCU_PIPELINE, optimize="ReleaseSafe")
    assert any(g[1] and "@intCast" in g[2] for g in GEP.findall(zig))

    def call(*indices: int) -> subprocess.CompletedProcess:
        command = [sys.executable, "-c", CALL, str(result.library_path), *map(str, indices)]
        return subprocess.run(command, capture_output=True, text=True, timeout=120)

    ok = call(3, -4)  # negative indices count from the end
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == "[[9.0, 10.0, 11.0], [0.0, 1.0, 2.0]]"
    # out of range: NAME_STATUS_BAD_INDEX from check-data-indices before any kernel runs (it was a
    # ReleaseSafe trap before that pass), never a read past the table
    bad = call(0, 4)
    assert bad.returncode == 1 and "returned 6" in bad.stderr, bad.stderr
