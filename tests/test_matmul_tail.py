"""The column-lane form's last N mod L columns (`linalg.padded_tail_product`): every column of a
constant-B product is the same chain of FMAs, so equal columns give bit-equal outputs (ONNX's
`light` models feed such logits, 1.2e21 in each column, to a Softmax)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import zant


@pytest.mark.parametrize("columns", [20, 1000])
def test_equal_columns_give_equal_outputs(columns):
    rng = np.random.default_rng(0)
    weights = np.full((columns, 256), 0.02, np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Gemm", ["a", "w", "c"], ["logits"], transB=1),
            helper.make_node("MatMul", ["a", "wt"], ["product"]),
            helper.make_node("Softmax", ["logits"], ["probabilities"]),
        ],
        "tail",
        [helper.make_tensor_value_info("a", onnx.TensorProto.FLOAT, [3, 256])],
        [
            helper.make_tensor_value_info("product", onnx.TensorProto.FLOAT, [3, columns]),
            helper.make_tensor_value_info("probabilities", onnx.TensorProto.FLOAT, [3, columns]),
        ],
        [
            numpy_helper.from_array(weights, "w"),
            numpy_helper.from_array(np.ascontiguousarray(weights.T), "wt"),
            numpy_helper.from_array(np.full(columns, 0.5, np.float32), "c"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    a = (rng.random((3, 256)) * 1e18).astype(np.float32)
    outputs = zant.compile(model).predict(a=a)
    for name in ("product", "probabilities"):
        for row in outputs[name]:
            assert np.unique(row).size == 1, f"{name}: columns differ: {np.unique(row)}"
    np.testing.assert_allclose(outputs["probabilities"], np.full((3, columns), 1 / columns, np.float32), rtol=1e-6)
