"""A build for size keeps its hot kernels fast (issue 27, item 5): `mark-hot-kernels` marks the
kernels doing most of the multiplies, the Zig printer puts them in a module of their own
(`NAME.hot.zig`, module `NAME_hot`) and the build compiles that module ReleaseFast inside a
ReleaseSmall library or image (`zant.backend.build.HOT_OPTIMIZE`); the other kernels alike up to
their buffers and constants are one (`share-kernels`, `zant.driver.size_stages`). The outputs
are the same."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from xdsl.dialects import func

from zant.backend.build import BOARDS, HOT_OPTIMIZE, model_modules
from zant.backend.firmware import count_instructions, image_sizes, qemu_missing, run_firmware
from zant.backend.zig_printer import hot_file_name, zig_files
from zant.dialects.zant import HOT
from zant.passes.mark_hot_kernels import NO_PRODUCTS, PRODUCTS, kernel_products
from zant.driver import CompileOptions, compile_model, compile_to_module, mode_pipeline, size_stages
from zant.pipelines import REACH_STAGE
from zant.pipelines import pipeline_for, without_in_place_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from models import QUANTIZED  # noqa: E402


@pytest.fixture(scope="module")
def kws_int8(tmp_path_factory) -> Path:
    pytest.importorskip("onnxruntime")
    path = tmp_path_factory.mktemp("kws") / "kws_int8.onnx"
    onnx.save(QUANTIZED["kws_int8"](), path)
    return path


def test_the_convolutions_doing_most_multiplies_are_hot(kws_int8):
    """KWS int8 on the Cortex-M4: the fewest kernels holding 80% of the products the build's
    mode compiles are hot (the pointwise Convs' are in assembly loops: none of them)."""
    module = compile_to_module(kws_int8, "cortex-m4").module
    kernels = [op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_visibility is not None]
    products = {k.sym_name.data: kernel_products(k) for k in kernels}
    hot = [k.sym_name.data for k in kernels if HOT in k.attributes]
    total = sum(products.values())
    assert sum(products[name] for name in hot) >= 0.8 * total
    assert sum(products[name] for name in hot) - min(products[name] for name in hot) < 0.8 * total
    assert all(products[name] >= products[other] for name in hot for other in products if other not in hot)
    assert "kernel_relu_9_QuantizeLinear_Output" in hot  # the first Conv
    # Printed apart only for a build for size; otherwise NAME.zig is what it was.
    plain = zig_files(module, "net")
    split = zig_files(module, "net", hot=True)
    assert hot_file_name("net") not in plain and set(split) == {*plain, hot_file_name("net")}
    assert 'const net_hot = @import("net_hot");' in split["net.zig"] and "net_hot" not in plain["net.zig"]
    for name in hot:
        assert f"pub fn {name}(" in split[hot_file_name("net")] and f"fn {name}(" not in split["net.zig"]
        assert f"@call(hot_kernel_call, net_hot.{name}," in split["net.zig"]
    for kernel in kernels:
        kernel.attributes.pop(HOT, None)
    assert zig_files(module, "net", hot=True) == plain
    # A caller's arena is declared in each kernel from NAME.zig's pointer: nothing moves.
    assert zig_files(compile_to_module(kws_int8, "cortex-m4").module, "net", hot=True, arena="caller").keys() == plain.keys()


def test_every_target_op_is_known_to_multiply_or_not():
    """mark-hot-kernels counts the products of each op it knows (`PRODUCTS`): a new dot-product op
    of a target dialect must say how many, or that it has none (`NO_PRODUCTS`)."""
    from zant.dialects.arm_dsp import ArmDsp
    from zant.dialects.arm_mve import ArmMve

    ops = {*ArmDsp.operations, *ArmMve.operations}
    assert ops <= set(PRODUCTS) | NO_PRODUCTS, sorted(op.name for op in ops - set(PRODUCTS) - NO_PRODUCTS)


def test_model_modules_build_the_hot_one_for_speed_in_a_build_for_size(tmp_path):
    assert model_modules(tmp_path, "net", "ReleaseSmall") == []
    (tmp_path / "net.zig").write_text("")
    (tmp_path / "net.hot.zig").write_text("")
    modes = {optimize: [m.optimize for m in model_modules(tmp_path, "net", optimize)] for optimize in
             ("Debug", "ReleaseSafe", "ReleaseFast", "ReleaseSmall")}
    assert modes == {"Debug": ["Debug"] * 2, "ReleaseSafe": ["ReleaseSafe"] * 2, "ReleaseFast": ["ReleaseFast"] * 2,
                     "ReleaseSmall": ["ReleaseSmall", "ReleaseFast"]}
    assert HOT_OPTIMIZE == {"ReleaseSmall": "ReleaseFast"}
    assert [m.deps for m in model_modules(tmp_path, "net", "ReleaseSmall")] == [("net_hot",), ("net",)]


def test_a_build_for_size_runs_its_hot_kernels_fast_with_the_same_outputs(kws_int8, tmp_path):
    """`zant compile -O ReleaseSmall --firmware` of KWS int8 for the Cortex-M4: as zant compile
    builds it (hot kernels apart, the other layers' kernels shared: `size_stages`), with the
    target's pipeline for size (`without_in_place_blocks`: hot kernels apart, a kernel per layer) and without
    mark-hot-kernels either: the outputs are byte for byte the same; the hot kernels built for
    speed run fewer instructions, the shared kernels take less flash (at 4c0225f with the
    products of assembly loops left out: 5.13 M instructions at 44,016 B without hot kernels;
    4.70 M at 40,379 B as zant compile builds it); users get NAME.zig whole, without the hot
    module."""
    board = BOARDS["mps2-an386"]
    if qemu_missing(board):
        pytest.skip(qemu_missing(board))
    assert size_stages("cortex-m4", "ReleaseSmall") == ("share-kernels", REACH_STAGE)
    assert size_stages("cortex-m4", "ReleaseFast") == () == size_stages("host", "ReleaseSmall")
    assert size_stages("cortex-m4", "ReleaseSmall", arena="caller") == ()
    # The layouts of a build for size in all three (`mode_pipeline`), so only the kernels differ.
    hot_pipeline = without_in_place_blocks(pipeline_for("cortex-m4"))
    plain_pipeline = ",".join(s for s in hot_pipeline.split(",") if s != "mark-hot-kernels")
    counts, outputs, flash = {}, {}, {}
    for label, pipeline in (("shared", None), ("hot", hot_pipeline), ("plain", plain_pipeline)):
        passes = {} if pipeline is None else {"pipeline": pipeline}
        result = compile_model(kws_int8, tmp_path / label, CompileOptions(
            name="net", target="cortex-m4", board="mps2-an386", optimize="ReleaseSmall", firmware=True, **passes
        ))
        assert result.firmware_path is not None
        assert not (tmp_path / label / hot_file_name("net")).exists()
        assert "net_hot" not in (tmp_path / label / "net.zig").read_text()
        outputs[label] = run_firmware(result.firmware_path, board, result.outputs).outputs
        counts[label] = count_instructions(board, result.firmware_path)
        flash[label] = image_sizes(result.firmware_path)["flash"]
    for label in ("hot", "plain"):
        for got, want in zip(outputs["shared"], outputs[label], strict=True):
            assert got.dtype == want.dtype and np.array_equal(got, want)
    assert counts["hot"] < 0.97 * counts["plain"], counts
    assert counts["shared"] < counts["plain"] and flash["shared"] < flash["hot"] - 2500, (counts, flash)
    assert (tmp_path / "hot" / "net.zig").read_text() != (tmp_path / "shared" / "net.zig").read_text()


def test_a_model_whose_every_kernel_is_hot_builds_for_size(tmp_path):
    """A Conv and its Relu fused into one kernel, that kernel hot: the main module calls no kernel
    of its own, yet `hot_kernel_call` defaults to `kernel_call` (declared all the same; it was
    not, and Zig refused the build)."""
    from onnx import TensorProto, helper, numpy_helper

    weights = numpy_helper.from_array(np.random.default_rng(0).standard_normal((64, 64, 3, 3)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Relu", ["c"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 7, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 5, 5])], [weights],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "m.onnx")
    planned = compile_to_module(tmp_path / "m.onnx", "cortex-m4")
    printed = zig_files(planned.module, "net", hot=True)
    assert hot_file_name("net") in printed and "@call(kernel_call" not in printed["net.zig"]
    result = compile_model(tmp_path / "m.onnx", tmp_path / "out", CompileOptions(
        name="net", target="cortex-m4", optimize="ReleaseSmall",
    ))
    assert result.library_path.exists()


def test_build_modes_pipeline():
    """What a microcontroller's build runs in each mode (`zant.driver.mode_pipeline`): in
    ReleaseFast the target's pipeline; in the other modes with `assign-layouts{in-place-blocks=false}`
    (an option given is kept), in ReleaseSmall with `share-kernels` and the reach check after it
    last too (the library's arena only); a host build as given."""
    off = "assign-layouts{in-place-blocks=false}"
    small = mode_pipeline(pipeline_for("cortex-m4"), "cortex-m4", "ReleaseSmall").split(",")
    assert off in small and small[-2:] == ["share-kernels", REACH_STAGE]
    safe = mode_pipeline(pipeline_for("cortex-m4"), "cortex-m4", "ReleaseSafe").split(",")
    assert safe == [off if s == "assign-layouts" else s for s in pipeline_for("cortex-m4").split(",")]
    assert mode_pipeline(pipeline_for("cortex-m4"), "cortex-m4", "Debug").split(",") == safe
    assert mode_pipeline("assign-layouts{in-place-blocks=true},dce", "cortex-m4", "ReleaseSmall") == f"assign-layouts{{in-place-blocks=true}},dce,share-kernels,{REACH_STAGE}"
    assert mode_pipeline(pipeline_for("cortex-m4"), "cortex-m4", "ReleaseFast") == pipeline_for("cortex-m4")
    assert mode_pipeline("dce", "host", "ReleaseSmall") == "dce"
    assert mode_pipeline(pipeline_for("cortex-m4"), "cortex-m4", "ReleaseSmall", arena="caller").split(",") == safe
