"""`fold-constants` folds a weight computed from constants whatever its size (issue 34: ONNX's
"light" models build their weights with ConstantOfShape and arithmetic): it goes to the constant
arena, not to a scratch buffer filled on every call. A large value that is data stays unfolded."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from e2e import check_compiled
from onnx import TensorProto, helper, numpy_helper

from zant.pipelines import pipeline_for

SMALL_LIMIT = 1000  # fold-constants{max-elements}: below the 64 x 64 values built here


def _model(use: str) -> onnx.ModelProto:
    """A 64 x 64 value made of ConstantOfShape x 0.01 + a constant, used as MatMul's B
    (`weight`) or added to the input (`data`)."""
    value = helper.make_tensor_value_info
    constants = [
        numpy_helper.from_array(np.array([64, 64], np.int64), "shape"),
        numpy_helper.from_array(np.array(0.01, np.float32), "k"),
        numpy_helper.from_array(np.linspace(-1, 1, 64, dtype=np.float32), "row"),
    ]
    nodes = [
        helper.make_node("ConstantOfShape", ["shape"], ["ones"], value=numpy_helper.from_array(np.array([1.0], np.float32))),
        helper.make_node("Mul", ["ones", "k"], ["scaled"]),
        helper.make_node("Add", ["scaled", "row"], ["w"]),
        helper.make_node("MatMul", ["x", "w"], ["y"]) if use == "weight" else helper.make_node("Add", ["x", "w"], ["y"]),
    ]
    shape = [3, 64] if use == "weight" else [64, 64]
    graph = helper.make_graph(nodes, "cos", [value("x", TensorProto.FLOAT, shape)], [value("y", TensorProto.FLOAT, None)], constants)
    return onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def _limited(target: str) -> str:
    return pipeline_for(target).replace("fold-constants", f"fold-constants{{max-elements={SMALL_LIMIT}}}", 1)


def _arena(result, role: str) -> int:
    return next(a["size"] for a in result.plan["arenas"] if a["role"] == role)


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_a_weight_folds_whatever_its_size(target):
    result, _ = check_compiled(_model("weight"), pipeline=_limited(target))
    assert _arena(result, "scratch") == 0
    assert _arena(result, "constant") >= 64 * 64 * 4
    assert not [t for t in result.plan["tensors"] if t["role"] == "scratch"]


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_a_large_value_used_as_data_stays_computed(target):
    result, _ = check_compiled(_model("data"), pipeline=_limited(target))
    assert _arena(result, "constant") < 64 * 64 * 4  # not folded: the limit holds for data
