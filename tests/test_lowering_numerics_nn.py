"""End-to-end numerics of the nn lowerings (MatMul, Gemm, Conv, pools) against the ONNX
reference evaluator: each case is a one-node model built with `onnx.helper`."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from e2e import check_model


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
