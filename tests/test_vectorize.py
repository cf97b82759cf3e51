"""End-to-end numerics of the `vectorize` pass: models compiled through a pipeline with it, built
in ReleaseSafe, against the ONNX reference evaluator. Lengths are not multiples of the vector
width (scalar and overlapping tails), several element types (f16 goes through lossless vector
casts to its f32 accumulator, i8 and i32 through wrapping integer vectors)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from e2e import random_inputs
from onnx import TensorProto, helper, numpy_helper

from zant.driver import CompileOptions, compile_model
from zant.runtime import load_compiled, reference_outputs
from zant.pipelines import PRINT_PIPELINE, pipeline_for


def pipeline(width: int) -> str:
    vector = f"coalesce-loops,split-index-sets{{width={width}}},vectorize{{width={width}}}"
    return f"fold-constants,onnx-to-uop,{vector},plan-arenas,verify-arena-plan,{PRINT_PIPELINE}"


def check_vectorized(
    model: onnx.ModelProto, width: int, rtol: float, atol: float, vectors: bool = True, uses: tuple[str, ...] = ()
) -> None:
    """Compile with `vectorize{width=…}`, check the Zig uses vectors (and the helpers `uses`),
    compare with the reference."""
    feeds = random_inputs(model)
    with tempfile.TemporaryDirectory(prefix="zant-vec-") as folder:
        path = Path(folder) / "model.onnx"
        onnx.save(model, path)
        options = CompileOptions(name="m", optimize="ReleaseSafe", pipeline=pipeline(width))
        result = compile_model(path, Path(folder) / "out", options)
        source = result.zig_path.read_text()
        assert (f"@Vector({width}," in source) == vectors
        assert all(f"{helper}(" in source for helper in uses)
        ours = load_compiled(result)(*(feeds[s.name] for s in result.inputs))
        reference = reference_outputs(path, feeds)
    for index, (got, want) in enumerate(zip(ours, reference, strict=True)):
        want = np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape
        if want.dtype.kind in "iu":
            np.testing.assert_array_equal(got, want, err_msg=f"output {index}")
        else:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"output {index}")


def model(nodes, inputs, outputs, initializers=()) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "vectorize",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        list(initializers),
    )
    # opset 14: Add, Sub and Mul take int8 from there on (the i8 cases)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


ROWS, COLS, OUT = 3, 21, 13
"""Lengths no vector width divides: 21 and 13 leave tails for 4, 8 and 16 lanes."""


def arithmetic(elem: int, products: bool) -> onnx.ModelProto:
    """An element-wise Add, Mul (by a broadcast row), Max, Sub chain on (3, 21) tensors;
    for `products`, MatMul (vectorized over output columns) and Gemm with transB (a dot
    product: vectorized over the reduction, a vector accumulator)."""
    shape = [ROWS, COLS]
    nodes = [
        helper.make_node("Add", ["a", "b"], ["sum"]),
        helper.make_node("Mul", ["sum", "row"], ["scaled"]),
        helper.make_node("Max", ["scaled", "a"], ["max"]),
        helper.make_node("Sub", ["max", "b"], ["y"]),
    ]
    inputs = [("a", elem, shape), ("b", elem, shape), ("row", elem, [COLS])]
    outputs = [("y", elem, shape)]
    if products:
        nodes += [
            helper.make_node("MatMul", ["a", "m"], ["matmul"]),
            helper.make_node("Gemm", ["a", "g"], ["gemm"], transB=1),
        ]
        inputs += [("m", elem, [COLS, OUT]), ("g", elem, [OUT, COLS])]
        outputs += [("matmul", elem, [ROWS, OUT]), ("gemm", elem, [ROWS, OUT])]
    return model(nodes, inputs, outputs)


@pytest.mark.parametrize(
    "width, elem, products, rtol, atol",
    [
        (4, TensorProto.FLOAT, True, 1e-5, 1e-5),
        (8, TensorProto.FLOAT, True, 1e-5, 1e-5),
        (16, TensorProto.FLOAT, True, 1e-5, 1e-5),
        (8, TensorProto.FLOAT16, True, 1e-2, 1e-2),
        (8, TensorProto.INT32, True, 0, 0),
        (16, TensorProto.INT8, False, 0, 0),
    ],
    ids=["f32-w4", "f32-w8", "f32-w16", "f16-w8", "i32-w8", "i8-w16"],
)
def test_arithmetic(width, elem, products, rtol, atol):
    check_vectorized(arithmetic(elem, products), width, rtol, atol)


def test_convolutions():
    """Convs vectorized over output columns: a padded 3×3 (its interior, and the interior
    columns of its border rows after index-set splitting), a pointwise, a depthwise, a
    stride-2 Conv (strided vector loads); Relu and the bias epilogue too."""
    rng = np.random.default_rng(0)

    def weight(name, shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c3"], ["r3"]),
        helper.make_node("Conv", ["r3", "wd"], ["dw"], pads=[1, 1, 1, 1], group=8),
        helper.make_node("Conv", ["dw", "w1", "b1"], ["y"]),
        helper.make_node("Conv", ["x", "ws"], ["strided"], pads=[1, 1, 1, 1], strides=[2, 2]),
    ]
    initializers = [
        weight("w3", [8, 3, 3, 3]),
        weight("b3", [8]),
        weight("wd", [8, 1, 3, 3]),
        weight("w1", [4, 8, 1, 1]),
        weight("b1", [4]),
        weight("ws", [4, 3, 3, 3]),
    ]
    m = model(
        nodes,
        [("x", TensorProto.FLOAT, [1, 3, 11, 13])],
        [("y", TensorProto.FLOAT, [1, 4, 11, 13]), ("strided", TensorProto.FLOAT, [1, 4, 6, 7])],
        initializers,
    )
    check_vectorized(m, 8, 1e-4, 1e-5)


def test_transposes():
    """Transposes whose output rows are shorter than a vector: the loop over output rows is
    vectorized, its stores moving a row length per lane (strided vector stores, scatters),
    its loads unit-stride; 21 and 13 rows leave overlapping tails."""
    nodes = [
        helper.make_node("Transpose", ["a"], ["t"], perm=[1, 0]),
        helper.make_node("Transpose", ["b"], ["u"], perm=[2, 0, 1]),
    ]
    m = model(
        nodes,
        [("a", TensorProto.FLOAT, [3, COLS]), ("b", TensorProto.FLOAT, [2, 3, OUT])],
        [("t", TensorProto.FLOAT, [COLS, 3]), ("u", TensorProto.FLOAT, [OUT, 2, 3])],
    )
    check_vectorized(m, 8, 0, 0, uses=("zant_vscatter",))


def test_index_picked_by_where_is_not_coalesced():
    """MaxPool's Indices output picks an index with `uop.where`: loop coalescing must see it as
    not affine (it used to take only binary index ops and crashed on this one)."""
    nodes = [helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], strides=[2, 2])]
    m = model(
        nodes,
        [("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [("y", TensorProto.FLOAT, [1, 3, 4, 4]), ("i", TensorProto.INT64, [1, 3, 4, 4])],
    )
    check_vectorized(m, 8, 0, 0, vectors=False)


def conv_model() -> onnx.ModelProto:
    weights = numpy_helper.from_array(np.ones([16, 3, 3, 3], np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])]
    return model(nodes, [("x", TensorProto.FLOAT, [1, 3, 20, 20])], [("y", TensorProto.FLOAT, [1, 16, 20, 20])], [weights])


@pytest.mark.parametrize("cpu, lanes", [("x86-64-avx2", 16), ("x86-64-sse", 8)])
def test_the_lowering_and_the_vector_passes_read_one_width(cpu, lanes):
    """Convs lowered and vectorized for the module's target (`set-target`, no width spelled):
    the widest vectors are the host CPU's lanes, the Conv's register tiles among them."""
    from zant.driver import run_pipeline
    from zant.frontend.onnx_importer import import_model_bytes

    module = import_model_bytes(conv_model().SerializeToString(), ".")
    run_pipeline(module, f"set-target{{target=host cpu={cpu}}},onnx-to-uop,fuse-loops,split-index-sets,vectorize")
    widths = {int(w) for w in re.findall(r"vector<(\d+)xf32>", str(module))}
    assert max(widths) == lanes


def test_many_strided_accesses_in_one_function_compile(tmp_path):
    """Zig counts every `inline fn` call against its caller's comptime branch quota (1000): a
    kernel with more strided vector loads and stores than that did not compile ("evaluation
    exceeded 1000 backwards branches" at a zant_vscatter call in ONNX's light_densenet121). The
    helpers are plain generic functions: 1,100 of each in one function build."""
    from zant.backend.build import build_zig
    from zant.backend.zig_helpers import HELPERS

    calls = "\n".join(
        f"    zant_vscatter(16, f32, 81, &buf[{i % 7}], zant_vgather(16, f32, 81, &buf[{i % 5}]));" for i in range(1100)
    )
    source = tmp_path / "many.zig"
    source.write_text(
        f"{HELPERS['zant_vgather'].source}\n{HELPERS['zant_vscatter'].source}\n"
        f"export fn many(buf: [*]f32) void {{\n{calls}\n}}\n"
    )
    assert build_zig(source, tmp_path / "many.o", optimize="ReleaseSafe", kind="obj").exists()


def _densenet_block(kernel: int) -> onnx.ModelProto:
    """A DenseNet bottleneck on a 7x7 map: 1x1 Conv (16 channels), Relu, padded kernel x kernel
    Conv (8 channels)."""
    rng = np.random.default_rng(0)

    def weight(name, shape):
        return numpy_helper.from_array((0.2 * rng.standard_normal(shape)).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Conv", ["r", "w2"], ["y"], pads=[kernel // 2] * 4),
    ]
    return model(
        nodes,
        [("x", TensorProto.FLOAT, [1, 32, 7, 7])],
        [("y", TensorProto.FLOAT, [1, 8, 7, 7])],
        [weight("w1", [16, 32, 1, 1]), weight("b1", [16]), weight("w2", [8, 16, kernel, kernel])],
    )


CONTIGUOUS_STORE = r"(addr_\d+) = &scratch_y_padded\[.*\n\s*@as\(\*align\(1\) \[16\]f32, @ptrCast\(\1\)\)\.\* = "


@pytest.mark.parametrize(
    ("kernel", "layouts", "store"),
    [
        # 16 channels under 25 taps, the graph's layouts left NCHW: the 5x5 Conv reads an NCHW
        # padded 11x11 copy, so the 1x1 Conv's channel lanes are stored 121 elements apart (the
        # call light_densenet121's 3x3 layers failed on, before they read channels-last copies).
        (5, False, r"zant_vscatter\(16, f32, 121, "),
        # The same with assign-host-layouts (the default): the 1x1 Conv's output is channels-last,
        # the 5x5 Conv's padded copy too, and the channel lanes land there as one contiguous store.
        (5, True, CONTIGUOUS_STORE),
        # 16 channels over 9 taps: the 3x3 Conv reads channels innermost from a channels-last
        # padded copy, and the 1x1 Conv's channel lanes land there as one contiguous store.
        (3, True, CONTIGUOUS_STORE),
    ],
)
def test_densenet_block_stores_into_the_padded_buffer(kernel, layouts, store):
    """The block compiled with the host's default pipeline (`layouts` False: without
    assign-host-layouts): the 1x1 Conv's channel lanes are stored into the second Conv's padded
    copy of its input, as the regex `store` spells, and the model builds and matches the reference."""
    m = _densenet_block(kernel)
    feeds = random_inputs(m)
    stages = pipeline_for("host").split(",")
    pipeline = ",".join(stages if layouts else [s for s in stages if s != "assign-host-layouts"])
    with tempfile.TemporaryDirectory(prefix="zant-vec-") as folder:
        path = Path(folder) / "model.onnx"
        onnx.save(m, path)
        options = CompileOptions(name="m", optimize="ReleaseSafe", pipeline=None if layouts else pipeline)
        result = compile_model(path, Path(folder) / "out", options)
        assert re.search(store, result.zig_path.read_text())
        (got,) = load_compiled(result)(feeds["x"])
        (want,) = reference_outputs(path, feeds)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
