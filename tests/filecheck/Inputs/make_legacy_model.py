"""Write ONNX models of the oldest opsets for the frontend tests: `make_legacy_model.py KIND OUT.onnx`
(IR version 3: initializers are graph inputs too)."""

from __future__ import annotations

import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def _model(nodes, inputs, outputs, opset, initializers=()):
    inputs = [*inputs, *(helper.make_tensor_value_info(t.name, t.data_type, t.dims) for t in initializers)]
    graph = helper.make_graph(nodes, "legacy", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=3)


def _f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def prelu_opset6():
    """PRelu-6 with a slope per channel over (N, C, H, W)."""
    slope = numpy_helper.from_array(np.array([0.1, 0.2, 0.3], np.float32), "slope")
    node = helper.make_node("PRelu", ["x", "slope"], ["y"], name="prelu")
    return _model([node], [_f32("x", [1, 3, 2, 2])], [_f32("y", [1, 3, 2, 2])], 6, [slope])


def batchnorm_spatial0():
    """BatchNormalization-7 with spatial=0: statistics per (C, W) element."""
    stats = [numpy_helper.from_array(np.full((3, 2), v, np.float32), n) for n, v in (("s", 2), ("b", 1), ("m", 0.5), ("v", 4))]
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn", spatial=0, epsilon=0.25)
    return _model([node], [_f32("x", [1, 3, 2])], [_f32("y", [1, 3, 2])], 7, stats)


if __name__ == "__main__":
    with open(sys.argv[2], "wb") as file:
        file.write(globals()[sys.argv[1]]().SerializeToString())
