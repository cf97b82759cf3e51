"""End-to-end numerics of the nn lowerings (MatMul, Gemm, Conv, pools) against the ONNX
reference evaluator: each case is a one-node model built with `onnx.helper`."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx import TensorProto, helper

from e2e import check_model, compile_and_run


def one_node_model(op_type, inputs, output_shape, **attributes):
    """A single-node float32 graph; `inputs` maps input names to shapes."""
    node = helper.make_node(op_type, list(inputs), ["y"], **attributes)
    graph = helper.make_graph(
        [node],
        op_type.lower(),
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, output_shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


MATMUL = {
    "2d": ({"a": [3, 4], "b": [4, 5]}, [3, 5]),
    "batched-broadcast": ({"a": [2, 1, 3, 4], "b": [3, 4, 2]}, [2, 3, 3, 2]),
    "1d-by-2d": ({"a": [4], "b": [4, 3]}, [3]),
    "3d-by-1d": ({"a": [2, 3, 4], "b": [4]}, [2, 3]),
    "1d-by-1d": ({"a": [4], "b": [4]}, []),
}


@pytest.mark.parametrize("case", MATMUL)
def test_matmul(case):
    inputs, out = MATMUL[case]
    check_model(one_node_model("MatMul", inputs, out))


GEMM = {
    "plain": ({"a": [3, 4], "b": [4, 5]}, {}),
    "transB-bias-row": ({"a": [3, 4], "b": [5, 4], "c": [5]}, {"transB": 1}),
    "transA-alpha-beta-scalar-c": (
        {"a": [4, 3], "b": [4, 5], "c": [1]},
        {"transA": 1, "alpha": 0.5, "beta": 2.0},
    ),
    "both-trans-full-c": ({"a": [4, 3], "b": [5, 4], "c": [3, 5]}, {"transA": 1, "transB": 1}),
    "column-c": ({"a": [3, 4], "b": [4, 5], "c": [3, 1]}, {"beta": -1.0}),
}


@pytest.mark.parametrize("case", GEMM)
def test_gemm(case):
    inputs, attributes = GEMM[case]
    check_model(one_node_model("Gemm", inputs, [3, 5], **attributes))


CONV = {
    "pads-strides": ([1, 2, 7, 7], [3, 2, 3, 3], False, [1, 3, 4, 4], {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    "asymmetric-pads-bias": ([2, 3, 5, 6], [4, 3, 3, 2], True, [2, 4, 5, 6], {"pads": [2, 0, 0, 1]}),
    "dilations": ([1, 2, 9, 9], [2, 2, 3, 3], True, [1, 2, 5, 5], {"dilations": [2, 2]}),
    "groups": ([1, 4, 6, 6], [6, 2, 3, 3], True, [1, 6, 6, 6], {"group": 2, "pads": [1, 1, 1, 1]}),
    "depthwise": ([1, 3, 6, 6], [3, 1, 3, 3], True, [1, 3, 3, 3], {"group": 3, "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "same-upper": ([1, 2, 7, 8], [3, 2, 4, 3], False, [1, 3, 4, 4], {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    "same-lower": ([1, 2, 6, 6], [2, 2, 2, 2], True, [1, 2, 6, 6], {"auto_pad": "SAME_LOWER"}),
    "valid": ([1, 1, 6, 5], [2, 1, 3, 2], False, [1, 2, 2, 2], {"auto_pad": "VALID", "strides": [2, 2]}),
    "1d": ([2, 3, 10], [4, 3, 3], True, [2, 4, 5], {"pads": [1, 1], "strides": [2]}),
}


@pytest.mark.parametrize("case", CONV)
def test_conv(case):
    x, w, bias, out, attributes = CONV[case]
    inputs = {"x": x, "w": w} | ({"b": [w[0]]} if bias else {})
    check_model(one_node_model("Conv", inputs, out, **attributes))


POOL = {
    "max-pads-strides": ("MaxPool", [1, 2, 6, 6], [1, 2, 3, 3], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    "max-ceil-mode": ("MaxPool", [1, 2, 5, 5], [1, 2, 3, 3], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}),
    "max-dilations": ("MaxPool", [1, 1, 7, 7], [1, 1, 3, 3], {"kernel_shape": [3, 3], "dilations": [2, 2]}),
    "max-same-upper": ("MaxPool", [1, 2, 5, 5], [1, 2, 3, 3], {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    "max-1d": ("MaxPool", [2, 3, 9], [2, 3, 4], {"kernel_shape": [3], "strides": [2]}),
    "avg-exclude-pad": ("AveragePool", [1, 2, 5, 5], [1, 2, 3, 3], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    "avg-include-pad": ("AveragePool", [1, 2, 5, 5], [1, 2, 3, 3], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2], "count_include_pad": 1}),
    "avg-ceil-mode": ("AveragePool", [1, 2, 5, 5], [1, 2, 3, 3], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}),
    "avg-ceil-include-pad": ("AveragePool", [1, 1, 6, 6], [1, 1, 4, 4], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2], "ceil_mode": 1, "count_include_pad": 1}),
    "avg-no-pad": ("AveragePool", [1, 2, 4, 4], [1, 2, 2, 2], {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "avg-3d": ("AveragePool", [1, 1, 4, 4, 4], [1, 1, 2, 2, 2], {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]}),
    "global-avg": ("GlobalAveragePool", [2, 3, 4, 5], [2, 3, 1, 1], {}),
    "global-max": ("GlobalMaxPool", [2, 3, 4, 5], [2, 3, 1, 1], {}),
}


@pytest.mark.parametrize("case", POOL)
def test_pool(case):
    op_type, x, out, attributes = POOL[case]
    check_model(one_node_model(op_type, {"x": x}, out, **attributes))


def test_lenet_block():
    """Conv → MaxPool → Gemm through views of each other's buffers (a Flatten-free chain)."""
    rng = np.random.default_rng(1)
    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 1, 3, 3], rng.standard_normal(36).astype(np.float32))
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["g"]),
        helper.make_node("MatMul", ["p", "p"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4, 4]),
            helper.make_tensor_value_info("g", TensorProto.FLOAT, [1, 4, 1, 1]),
        ],
        initializer=[w],
    )
    check_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))


# -- pools: ceil_mode x auto_pad x count_include_pad, each followed by another node ----------

POOL_GRIDS = [
    ([1, 1, 4, 4], [1, 1], [2, 2]),  # issue 32: ceil mode's last window would start past the input
    ([1, 1, 5, 6], [2, 3], [2, 2]),
    ([1, 2, 7, 5], [3, 2], [3, 2]),
    ([1, 1, 6, 6], [3, 3], [2, 2]),
]
POOL_PADS = [None, [1, 0, 0, 1], [0, 1, 1, 1]]


def _pool_sweep_cases():
    """(op, x shape, attributes) for every ceil_mode, auto_pad, count_include_pad and explicit
    pads (with NOTSET) on each grid; onnxruntime refuses SAME pads for a kernel below the stride."""
    cases = []
    for x_shape, kernel, strides in POOL_GRIDS:
        for op in ("MaxPool", "AveragePool"):
            for ceil, auto_pad, include, pads in itertools.product([0, 1], ["NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"], [0, 1], POOL_PADS):
                if (op == "MaxPool" and include) or (auto_pad != "NOTSET" and pads) or (auto_pad.startswith("SAME") and min(kernel) < max(strides)):
                    continue
                if pads and any(p >= k for p, k in zip(pads, kernel * 2)):
                    continue
                attributes = {"kernel_shape": kernel, "strides": strides, "ceil_mode": ceil, "auto_pad": auto_pad}
                attributes |= {"pads": pads} if pads else {}
                attributes |= {"count_include_pad": include} if op == "AveragePool" else {}
                cases.append((op, x_shape, attributes))
    return cases


def _ort_shape(op, x_shape, attributes):
    ort = pytest.importorskip("onnxruntime")
    model = one_node_model(op, {"x": x_shape}, None, **attributes)
    x = np.zeros(x_shape, np.float32)
    return list(ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0].shape)


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_pools_with_every_ceil_mode_auto_pad_and_count_include_pad(target):
    """Each pool feeds a Relu, whose shape follows the pool's: onnx's shape inference keeps a
    ceil-mode window that would start past the input (x 4x4, 1x1 kernel, strides 2: 3x3 where
    onnxruntime and the definition give 2x2), so no declared shape compiled; ceil_mode with
    auto_pad VALID or SAME_* was refused. Against onnxruntime (onnx.reference refuses ceil_mode
    with auto_pad for AveragePool)."""
    from zant.pipelines import pipeline_for

    ort = pytest.importorskip("onnxruntime")
    nodes, inputs, outputs, feeds = [], [], [], {}
    rng = np.random.default_rng(3)
    for index, (op, x_shape, attributes) in enumerate(_pool_sweep_cases()):
        x, p, y = f"x{index}", f"p{index}", f"y{index}"
        nodes += [helper.make_node(op, [x], [p], **attributes), helper.make_node("Relu", [p], [y])]
        inputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, x_shape))
        outputs.append(helper.make_tensor_value_info(y, TensorProto.FLOAT, _ort_shape(op, x_shape, attributes)))
        outputs[-1].doc_string = f"{op} {x_shape} {attributes}"
        feeds[x] = rng.standard_normal(x_shape).astype(np.float32)
    model = helper.make_model(helper.make_graph(nodes, "pools", inputs, outputs), opset_imports=[helper.make_opsetid("", 19)])
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = compile_and_run(model, feeds, pipeline=None if target == "host" else pipeline_for(target))
    for output, g, w in zip(outputs, got, want, strict=True):
        assert g.shape == w.shape, output.doc_string
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=output.doc_string)


def test_idle_ceil_mode_is_dropped_before_shape_inference():
    """The frontend writes ceil_mode 0 where ceil mode only adds dropped windows, so that onnx's
    strict shape inference gives the pool (and the Relu after it) onnxruntime's 2x2; a ceil mode
    that adds a real window is kept (3x3 windows, strides 2 over 4: 2, not 1)."""
    import onnx

    from zant.frontend.inference_fixes import rewrite_misinferred

    nodes = [
        helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[1, 1], strides=[2, 2], ceil_mode=1),
        helper.make_node("Relu", ["p"], ["y"]),
        helper.make_node("AveragePool", ["y"], ["z"], kernel_shape=[1, 1], strides=[2, 2], ceil_mode=1),
        helper.make_node("MaxPool", ["x"], ["q"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 1, 1, 1]), helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, 1, 2, 2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    with pytest.raises(onnx.shape_inference.InferenceError):
        onnx.shape_inference.infer_shapes(model, strict_mode=True)
    rewrite_misinferred(model)
    assert [next(a.i for a in n.attribute if a.name == "ceil_mode") for n in model.graph.node if n.op_type != "Relu"] == [0, 0, 1]
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in inferred.graph.value_info}
    assert shapes["p"] == [1, 1, 2, 2]


def test_ceil_mode_rewrites_keep_the_windows():
    """An axis whose ceil window is dropped beside one whose ceil window stays: the first loses
    the end pad no window reaches, or (without it) floor mode with the second's end pad widened;
    an AveragePool counting its pads keeps that form as it is. onnxruntime gives the same
    values before and after each rewrite."""
    ort = pytest.importorskip("onnxruntime")
    from zant.frontend.inference_fixes import rewrite_ceil_mode

    def run(node, x):
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
        return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]

    cases = [  # 7 rows: 3-row windows, strides 3 add a window (2 -> 3); the columns drop theirs
        ("MaxPool", [3, 2], [1, 1, 7, 5], {"pads": [0, 1, 1, 1]}, {"pads": [0, 1, 1, 0], "ceil_mode": 1}),
        ("AveragePool", [3, 2], [1, 1, 7, 5], {"pads": [0, 1, 1, 1], "count_include_pad": 1}, {"pads": [0, 1, 1, 0], "ceil_mode": 1}),
        ("MaxPool", [3, 1], [1, 1, 7, 4], {}, {"pads": [0, 0, 2, 0], "ceil_mode": 0}),
        ("AveragePool", [3, 1], [1, 1, 7, 4], {"auto_pad": "VALID"}, {"pads": [0, 0, 2, 0], "ceil_mode": 0, "auto_pad": "NOTSET"}),
        ("AveragePool", [3, 1], [1, 1, 7, 4], {"count_include_pad": 1}, None),
    ]
    x_rng = np.random.default_rng(4)
    for op, kernel, x_shape, extra, after in cases:
        node = helper.make_node(op, ["x"], ["y"], kernel_shape=kernel, strides=[3, 2], ceil_mode=1, **extra)
        x = x_rng.standard_normal(x_shape).astype(np.float32)
        before = run(node, x)
        assert rewrite_ceil_mode(node, x_shape[2:]) == (after is not None)
        if after is not None:
            attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            assert {k: attributes[k] for k in after} == {k: (v.encode() if isinstance(v, str) else v) for k, v in after.items()}
            np.testing.assert_array_equal(run(node, x), before)
