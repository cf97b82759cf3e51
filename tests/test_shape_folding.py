"""Shapes computed by subgraphs ONNX's shape inference cannot evaluate are folded at import."""

import numpy as np
import onnx
import pytest
from e2e import check_model
from onnx import TensorProto, helper, numpy_helper

from zant.dialects.onnx_shape_folding import all_shapes_static, fold_shape_subgraphs


def computed_reshape_model() -> onnx.ModelProto:
    """y = Reshape(x, Max(Constant [3, 4], Shape(x)[:0] ++ [1, 1])): the target shape is a Max of
    constants, which ONNX's data propagation does not evaluate."""
    nodes = [
        helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.array([3, 4], np.int64))),
        helper.make_node("Max", ["c", "ones"], ["target"]),
        helper.make_node("Reshape", ["x", "target"], ["r"]),
        helper.make_node("Relu", ["r"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "computed_reshape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])],
        [numpy_helper.from_array(np.array([1, 1], np.int64), "ones")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_inference_alone_leaves_the_shape_unknown_and_folding_fixes_it():
    model = onnx.shape_inference.infer_shapes(computed_reshape_model(), strict_mode=True, data_prop=True)
    assert not all_shapes_static(model)
    folded = fold_shape_subgraphs(model, 17)
    assert all_shapes_static(folded)
    assert [n.op_type for n in folded.graph.node] == ["Reshape", "Relu"]


def test_computed_reshape_compiles_and_matches_reference():
    check_model(computed_reshape_model())


@pytest.mark.parametrize("op", ["RandomNormal", "RandomUniform"])
def test_random_ops_are_never_folded(op):
    node = helper.make_node(op, [], ["r"], shape=[2, 2])
    graph = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("r", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    folded = fold_shape_subgraphs(model, 17)
    assert [n.op_type for n in folded.graph.node] == [op]
