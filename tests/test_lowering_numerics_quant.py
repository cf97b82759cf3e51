"""End-to-end numerics of the quantization lowerings against the ONNX reference evaluator.

Integer outputs are compared exactly (check_model does so for integer dtypes). Each test builds
one model holding several independent nodes, so one Zig build covers a batch of cases.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from e2e import check_model
from zant.errors import ZantError

RNG = np.random.default_rng(7)

INT8, UINT8, INT16, UINT16, INT32 = (
    TensorProto.INT8,
    TensorProto.UINT8,
    TensorProto.INT16,
    TensorProto.UINT16,
    TensorProto.INT32,
)


def _np(t: int):
    return helper.tensor_dtype_to_np_dtype(t)


class Graph:
    """A multi-node graph under construction: graph inputs with feeds, initializers, outputs."""

    def __init__(self, opset: int = 21):
        self.opset = opset
        self.nodes, self.inputs, self.outputs, self.initializers = [], [], [], []
        self.feeds: dict[str, np.ndarray] = {}

    def input(self, name: str, array: np.ndarray) -> str:
        self.inputs.append(
            helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)
        )
        self.feeds[name] = array
        return name

    def const(self, name: str, array) -> str:
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op_type: str, inputs: list[str], outputs: list[tuple[str, int]], **attributes) -> None:
        self.nodes.append(helper.make_node(op_type, inputs, [n for n, _ in outputs], **attributes))
        self.outputs += [helper.make_tensor_value_info(n, t, None) for n, t in outputs]

    def model(self):
        graph = helper.make_graph(self.nodes, "quant", self.inputs, self.outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])
        from onnx import shape_inference

        return shape_inference.infer_shapes(model, strict_mode=True)

    def check(self, **tolerances):
        return check_model(self.model(), self.feeds, **tolerances)


def _halves(shape, scale):
    """Floats on and around the half-way points of `scale`, to exercise round-half-to-even."""
    base = RNG.integers(-300, 300, shape).astype(np.float32) * 0.5
    return (base * scale).astype(np.float32)


def test_quantize_linear():
    g = Graph()
    x = g.input("x", _halves([2, 3, 4], 0.25))
    g.const("s", np.float32(0.25))
    # per-tensor, to each integer type, with and without a zero point
    for name, t, zp in (("u8", UINT8, 3), ("i8", INT8, -4), ("u16", UINT16, 1000), ("i16", INT16, -7)):
        g.const(f"zp_{name}", np.array(zp, _np(t)))
        g.node("QuantizeLinear", [x, "s", f"zp_{name}"], [(f"y_{name}", t)])
    g.node("QuantizeLinear", [x, "s"], [("y_default", UINT8)])
    g.node("QuantizeLinear", [x, "s"], [("y_dtype", INT16)], output_dtype=INT16)
    # per-axis along axis 1, a negative axis, and blocked along the last axis
    g.const("s_axis", np.array([0.5, 0.25, 2.0], np.float32))
    g.const("zp_axis", np.array([0, 5, -5], np.int8))
    g.node("QuantizeLinear", [x, "s_axis", "zp_axis"], [("y_axis", INT8)], axis=-2)
    g.const("s_block", (RNG.random([2, 3, 2]) + 0.1).astype(np.float32))
    g.const("zp_block", RNG.integers(0, 20, [2, 3, 2]).astype(np.uint8))
    g.node("QuantizeLinear", [x, "s_block", "zp_block"], [("y_block", UINT8)], axis=2, block_size=2)
    # a block size that does not divide the axis: the last block is short
    g.const("s_short", np.array([[0.5, 1.0], [0.25, 2.0], [1.5, 0.75]] * 2, np.float32).reshape(2, 3, 2))
    g.node("QuantizeLinear", [x, "s_short"], [("y_short", UINT8)], axis=2, block_size=3)
    g.check()


def test_quantize_linear_float16_and_runtime_scale():
    g = Graph()
    x = g.input("x", _halves([5], 0.5).astype(np.float16))
    s = g.input("s", np.array([0.5], np.float16))
    g.const("zp", np.array(-100, np.int8))
    g.node("QuantizeLinear", [x, s, "zp"], [("y", INT8)])
    g.check()


def test_dequantize_linear():
    g = Graph()
    for name, t in (("u8", UINT8), ("i8", INT8), ("u16", UINT16), ("i16", INT16), ("i32", INT32)):
        info = np.iinfo(_np(t))
        x = g.input(f"x_{name}", RNG.integers(max(info.min, -1000), min(info.max, 1000), [2, 3, 4]).astype(_np(t)))
        g.const(f"zp_{name}", np.array(min(info.max, 7), _np(t)))
        g.node("DequantizeLinear", [x, "s", f"zp_{name}"], [(f"y_{name}", TensorProto.FLOAT)])
    g.const("s", np.float32(0.1))
    g.node("DequantizeLinear", ["x_i8", "s"], [("y_nozp", TensorProto.FLOAT)])
    g.const("s_axis", np.array([0.5, 0.25, 2.0], np.float32))
    g.const("zp_axis", np.array([0, 5, -5], np.int8))
    g.node("DequantizeLinear", ["x_i8", "s_axis", "zp_axis"], [("y_axis", TensorProto.FLOAT)], axis=1)
    g.const("s_block", (RNG.random([2, 2, 4]) + 0.1).astype(np.float32))
    g.const("zp_block", RNG.integers(0, 20, [2, 2, 4]).astype(np.uint8))
    g.node("DequantizeLinear", ["x_u8", "s_block", "zp_block"], [("y_block", TensorProto.FLOAT)], axis=1, block_size=2)
    g.const("s_f16", np.float16(0.125))
    g.node("DequantizeLinear", ["x_i8", "s_f16"], [("y_f16", TensorProto.FLOAT16)])
    g.check(rtol=0, atol=0)


def test_quantize_rejects_a_mismatched_scale():
    g = Graph()
    x = g.input("x", np.zeros([2, 3], np.float32))
    g.const("s", np.array([1.0, 2.0], np.float32))
    g.node("QuantizeLinear", [x, "s"], [("y", UINT8)], axis=0, block_size=1)
    with pytest.raises(ZantError, match="QuantizeLinear.*blocked scale"):
        check_model(g.model(), g.feeds)
