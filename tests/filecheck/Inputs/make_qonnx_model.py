"""Writes small models holding QONNX's Quant / BipolarQuant / Trunc (domain
qonnx.custom_op.general, as Brevitas' export_qonnx writes them) for tests/filecheck/frontend/qonnx.mlir.

    python make_qonnx_model.py CASE OUT.onnx     (CASE: activations, weights, wide, floor, bits20, runtime_scale, trunc_floor)
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DOMAIN = "qonnx.custom_op.general"


def const(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(value, dtype), name)


def quant(x, out, scale, zp, bits, **attrs):
    return helper.make_node("Quant", [x, scale, zp, bits], [out], name=out, domain=DOMAIN, **attrs)


def model(nodes, initializers, x_shape, y_shape, inputs=()):
    graph = helper.make_graph(
        nodes, "qonnx", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape), *inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 2)])


def activations(trunc_rounding="round"):
    """x → Quant(4-bit signed) → Quant(8-bit unsigned, narrow) → AveragePool → Trunc(v2, ROUND, 6 → 8
    bits) and a BipolarQuant of x."""
    inits = [const("s4", 0.5), const("s8", 0.25), const("z", 0.0), const("b4", 4), const("b8", 8),
             const("b6", 6), const("sp", 0.0625), const("so", 0.015625)]
    nodes = [
        quant("x", "q4", "s4", "z", "b4", signed=1, narrow=0, rounding_mode="ROUND"),
        quant("q4", "q8", "s8", "z", "b8", signed=0, narrow=1, rounding_mode="ROUND"),
        helper.make_node("AveragePool", ["q8"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Trunc", ["pool", "sp", "z", "b6", "so", "b8"], ["t"], name="t", domain=DOMAIN,
                         signed=0, narrow=0, rounding_mode=trunc_rounding),
        helper.make_node("BipolarQuant", ["x", "s4"], ["bip"], name="bip", domain=DOMAIN),
        helper.make_node("MaxPool", ["bip"], ["bp"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Add", ["t", "bp"], ["y"]),
    ]
    return model(nodes, inits, [1, 2, 4, 4], [1, 2, 2, 2])


def weights():
    """Conv of a Quant'd activation with a 4-bit per-channel Quant'd weight, then a Conv with a
    BipolarQuant'd weight: both weights become integer constants and a DequantizeLinear."""
    w = np.linspace(-1, 1, 2 * 2 * 3 * 3, dtype=np.float32).reshape(2, 2, 3, 3)
    inits = [const("s", 0.5), const("z", 0.0), const("b8", 8), const("w", w), const("ws", [[[[0.125]]], [[[0.25]]]]),
             const("b4", 4), const("w2", w[:, :, :1, :1]), const("s2", 0.5)]
    nodes = [
        quant("x", "qx", "s", "z", "b8", signed=1, narrow=0, rounding_mode="ROUND"),
        quant("w", "qw", "ws", "z", "b4", signed=1, narrow=1, rounding_mode="ROUND"),
        helper.make_node("Conv", ["qx", "qw"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BipolarQuant", ["w2", "s2"], ["bw"], name="bw", domain=DOMAIN),
        helper.make_node("Conv", ["c", "bw"], ["y"]),
    ]
    return model(nodes, inits, [1, 2, 4, 4], [1, 2, 4, 4])


def wide():
    """A 12-bit unsigned Quant: uint16 codes (opset raised to 21 for its QuantizeLinear)."""
    inits = [const("s", 0.001), const("z", 0.0), const("b", 12)]
    return model([quant("x", "y", "s", "z", "b", signed=0, narrow=0, rounding_mode="ROUND")], inits, [4], [4])


def floor():
    """FLOOR on a run-time tensor: no integer form (a clear error)."""
    inits = [const("s", 0.5), const("z", 0.0), const("b", 8)]
    return model([quant("x", "y", "s", "z", "b", signed=1, narrow=0, rounding_mode="FLOOR")], inits, [4], [4])


def bits20():
    inits = [const("s", 0.5), const("z", 0.0), const("b", 20)]
    return model([quant("x", "y", "s", "z", "b", signed=1, narrow=0, rounding_mode="ROUND")], inits, [4], [4])


def runtime_scale():
    """The scale a graph input (Brevitas lists its initializers as inputs): not a constant."""
    inits = [const("s", 0.5), const("z", 0.0), const("b", 8)]
    return model([quant("x", "y", "s", "z", "b", signed=1, narrow=0, rounding_mode="ROUND")], inits, [4], [4],
                 [helper.make_tensor_value_info("s", TensorProto.FLOAT, [])])


def trunc_floor():
    """`activations` with Trunc rounding FLOOR (Brevitas' TruncAvgPool2d default), 8 → 6 bits."""
    m = activations("FLOOR")
    for t in m.graph.initializer:
        if t.name == "so":  # output scale 4 × the input's: t = 4, floor(q / 4)
            t.CopyFrom(const("so", 0.25))
    return m


CASES = {f.__name__: f for f in (activations, weights, wide, floor, bits20, runtime_scale, trunc_floor)}

if __name__ == "__main__":
    onnx.save(CASES[sys.argv[1]](), sys.argv[2])
