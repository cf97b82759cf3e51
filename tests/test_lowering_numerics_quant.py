"""End-to-end numerics of the quantization lowerings against the ONNX reference evaluator.

Integer outputs are compared exactly (check_model does so for integer dtypes). Each test builds
one model holding several independent nodes, so one Zig build covers a batch of cases.
"""

from __future__ import annotations

import numpy as np
import pytest
from e2e import check_model
from onnx import TensorProto, helper, numpy_helper

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


def test_quantize_linear_f32_rounds_and_saturates_at_the_edges():
    """The f32 path rounds by adding 1.5·2^23 and saturates on the sum's bits: ratios at ties,
    at and past ±2^22 (where that add stops rounding to integers), near -1.5·2^23 (where the sum
    changes sign) and out to ±2^30 (the reference rounds into int32 and adds the zero point
    there, so near ±2^31 it wraps); every integer type, zero points at both ends."""
    edges = [0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, 127.5, -128.5, -129.5, 254.5, 255.5,
             32766.5, 32767.5, -32768.5, 65534.5, 65535.5, 2.0**22 - 0.5, 2.0**22, 2.0**22 + 1, -(2.0**22) - 1,
             2.0**23, -(2.0**23), -1.5 * 2.0**23, -1.5 * 2.0**23 - 2, -1.5 * 2.0**23 + 2, -(2.0**24), 2.0**24,
             2.0**30, -(2.0**30), 1e-30, -1e-30]
    g = Graph()
    x = g.input("x", np.array(edges, np.float32))
    g.const("s", np.float32(1.0))
    for name, t, zps in (("i8", INT8, (-128, 0, 127)), ("u8", UINT8, (0, 255)), ("i16", INT16, (-32768, 32767)),
                         ("u16", UINT16, (0, 65535))):
        for zp in zps:
            g.const(f"zp_{name}_{zp}", np.array(zp, _np(t)))
            g.node("QuantizeLinear", [x, "s", f"zp_{name}_{zp}"], [(f"y_{name}_{zp}", t)])
    g.check()


def test_quantize_linear_float16_precision_and_runtime_scale():
    g = Graph(opset=23)
    x = g.input("x", _halves([5], 0.5).astype(np.float16))
    s = g.input("s", np.array([0.5], np.float16))
    g.const("zp", np.array(-100, np.int8))
    g.node("QuantizeLinear", [x, s, "zp"], [("y", INT8)])
    # x / scale in float16 although both are float32: 2050.5 is 2050 in float16, so 4100 not 4101.
    x32 = g.input("x32", np.array([1000.25, 3.3, -7.77, 2050.5], np.float32))
    g.const("s32", np.float32(0.5))
    g.const("zp16", np.array(0, np.int16))
    g.node("QuantizeLinear", [x32, "s32", "zp16"], [("y_precision", INT16)], precision=TensorProto.FLOAT16)
    g.node("QuantizeLinear", [x32, "s32", "zp16"], [("y_full", INT16)])
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


def _ints(t: int, shape, low: int = -128, high: int = 128) -> np.ndarray:
    info = np.iinfo(_np(t))
    return RNG.integers(max(low, info.min), min(high, int(info.max) + 1), shape).astype(_np(t))


def test_dynamic_quantize_linear():
    g = Graph(opset=11)
    rows = {
        "mixed": RNG.standard_normal([2, 5]).astype(np.float32) * 3,
        "positive": RNG.random([5]).astype(np.float32) + 1,
        "negative": -RNG.random([3, 2]).astype(np.float32) - 0.5,
        "zeros": np.zeros([4], np.float32),
    }
    for name, x in rows.items():
        g.input(name, x)
        g.node(
            "DynamicQuantizeLinear",
            [name],
            [(f"y_{name}", UINT8), (f"s_{name}", TensorProto.FLOAT), (f"zp_{name}", UINT8)],
        )
    g.check(rtol=0, atol=0)


def test_matmul_integer():
    g = Graph(opset=10)
    a8, b8 = g.input("a8", _ints(UINT8, [3, 4], 0, 256)), g.input("b8", _ints(UINT8, [4, 5], 0, 256))
    g.const("a_zp", np.array(12, np.uint8))
    g.const("b_zp_col", _ints(UINT8, [5], 0, 256))
    g.node("MatMulInteger", [a8, b8, "a_zp", "b_zp_col"], [("y_u8", INT32)])
    g.node("MatMulInteger", [a8, b8], [("y_nozp", INT32)])
    # int8 with broadcast batch dimensions and single-element zero points
    a = g.input("a", _ints(INT8, [2, 1, 3, 4]))
    b = g.input("b", _ints(INT8, [3, 4, 2]))
    g.const("a_zp1", np.array([-3], np.int8))
    g.const("b_zp1", np.array([5], np.int8))
    g.node("MatMulInteger", [a, b, "a_zp1", "b_zp1"], [("y_i8", INT32)])
    g.check()


CONV_INTEGER = {
    "pads-strides-channel-zp": ([1, 2, 6, 7], [3, 2, 3, 3], {"pads": [1, 2, 0, 1], "strides": [2, 1]}),
    "groups-dilations": ([2, 4, 7, 7], [4, 2, 2, 3], {"group": 2, "dilations": [2, 1]}),
    "1d-same-upper": ([1, 3, 9], [2, 3, 4], {"auto_pad": "SAME_UPPER", "strides": [2]}),
}


def test_conv_integer():
    g = Graph(opset=10)
    for name, (x_shape, w_shape, attributes) in CONV_INTEGER.items():
        x = g.input(f"x_{name}", _ints(UINT8, x_shape, 0, 256))
        w = g.input(f"w_{name}", _ints(UINT8, w_shape, 0, 256))
        g.const(f"x_zp_{name}", np.array(100, np.uint8))
        # The reference takes per-channel zero points of a 2-D kernel only.
        channels = [w_shape[0]] if len(w_shape) == 4 else []
        g.const(f"w_zp_{name}", _ints(UINT8, channels, 100, 140))
        g.node("ConvInteger", [x, w, f"x_zp_{name}", f"w_zp_{name}"], [(f"y_{name}", INT32)], **attributes)
    x = g.input("x_i8", _ints(INT8, [1, 2, 5, 5]))
    w = g.input("w_i8", _ints(INT8, [2, 2, 3, 3]))
    g.node("ConvInteger", [x, w], [("y_i8", INT32)], pads=[1, 1, 1, 1])
    g.check()


def _qlinear_inputs(
    g: Graph, prefix: str, t: int, scale_type, scale_count: int = 1, magnitude: float = 0.05
) -> list[str]:
    """(scale, zero point) constant names; several scales make a per-axis parameter. Output
    scales take a larger `magnitude`, so that most results fall inside the output range."""
    shape = [scale_count] if scale_count > 1 else []
    scale = ((RNG.random(shape) + 0.5) * magnitude).astype(scale_type)
    middle = (int(np.iinfo(_np(t)).min) + int(np.iinfo(_np(t)).max) + 1) // 2
    zero_point = _ints(t, shape, middle - 10, middle + 10)
    return [g.const(f"{prefix}_scale", scale), g.const(f"{prefix}_zp", zero_point)]


QLINEAR_MATMUL = {
    # name: (types of a, b and y, scale type, a shape, b shape, per-column b scale and zero point)
    "u8-f32": ((UINT8,) * 3, np.float32, [3, 4], [4, 5], False),
    "u8-i8-mixed": ((UINT8, INT8, UINT8), np.float32, [2, 5], [5, 3], True),
    "i8-f16-batched": ((INT8,) * 3, np.float16, [2, 3, 6], [6, 2], False),
    "i8-f32-per-column": ((INT8,) * 3, np.float32, [3, 8], [8, 4], True),
}


def test_qlinear_matmul():
    g = Graph()
    for name, ((a_t, b_t, y_t), scale_type, a_shape, b_shape, per_column) in QLINEAR_MATMUL.items():
        a = g.input(f"a_{name}", _ints(a_t, a_shape, -128, 256))
        b = g.input(f"b_{name}", _ints(b_t, b_shape, -128, 256))
        columns = b_shape[-1] if per_column else 1
        inputs = [
            a, *_qlinear_inputs(g, f"a_{name}", a_t, scale_type),
            b, *_qlinear_inputs(g, f"b_{name}", b_t, scale_type, columns),
            *_qlinear_inputs(g, f"y_{name}", y_t, scale_type, magnitude=2.0),
        ]
        g.node("QLinearMatMul", inputs, [(f"y_{name}", y_t)])
    g.check()


QLINEAR_CONV = {
    # name: (types of x, w and y, x shape, w shape, per-channel w scale and zero point, bias, attributes)
    "u8-pads-strides-bias": ((UINT8,) * 3, [1, 2, 6, 6], [3, 2, 3, 3], False, True, {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    "i8-per-channel-groups": ((INT8,) * 3, [1, 4, 5, 5], [4, 2, 2, 2], True, True, {"group": 2}),
    "u8-i8-per-channel-no-bias": ((UINT8, INT8, UINT8), [2, 1, 4, 4], [2, 1, 3, 3], True, False, {"pads": [0, 1, 2, 1]}),
}


def test_qlinear_conv():
    g = Graph()
    for name, ((x_t, w_t, y_t), x_shape, w_shape, per_channel, bias, attributes) in QLINEAR_CONV.items():
        x = g.input(f"x_{name}", _ints(x_t, x_shape, -128, 256))
        w = g.input(f"w_{name}", _ints(w_t, w_shape, -128, 256))
        channels = w_shape[0] if per_channel else 1
        inputs = [
            x, *_qlinear_inputs(g, f"x_{name}", x_t, np.float32),
            w, *_qlinear_inputs(g, f"w_{name}", w_t, np.float32, channels),
            *_qlinear_inputs(g, f"y_{name}", y_t, np.float32, magnitude=2.0),
        ]
        if bias:
            inputs.append(g.input(f"b_{name}", RNG.integers(-2000, 2000, [w_shape[0]]).astype(np.int32)))
        g.node("QLinearConv", inputs, [(f"y_{name}", y_t)], **attributes)
    g.check()


def test_integer_kernels_reject_what_they_do_not_support():
    g = Graph(opset=10)
    a, b = g.input("a", _ints(UINT8, [3, 4], 0, 256)), g.input("b", _ints(UINT8, [4, 5], 0, 256))
    g.const("a_zp_rows", np.array([1, 2, 3], np.uint8))
    g.node("MatMulInteger", [a, b, "a_zp_rows"], [("y", INT32)])
    with pytest.raises(ZantError, match="MatMulInteger.*single-element"):
        check_model(g.model(), g.feeds)


def test_dequantize_to_bfloat16_computes_in_f32():
    """A bfloat16 scale: the frontend widens the node to f32 between casts (bfloat16 is kept as
    bits), one rounding on the result."""
    g = Graph()
    x = g.input("x", np.arange(-4, 4, dtype=np.int8))
    g.initializers.append(helper.make_tensor("s", TensorProto.BFLOAT16, [], [0.3]))
    g.node("DequantizeLinear", [x, "s"], [("y", TensorProto.BFLOAT16)])
    check_model(g.model(), g.feeds, rtol=2.0**-6)


def test_quantize_linear_of_int32():
    g = Graph(opset=23)  # from 23 on, an int32 x takes a float scale (21: the scale has x's type)
    x = g.input("x", RNG.integers(-1000, 1000, [7]).astype(np.int32))
    g.const("s", np.float32(3.0))
    g.const("zp", np.array(5, np.int16))
    g.node("QuantizeLinear", [x, "s", "zp"], [("y", INT16)])
    g.check()


def test_ties_reachable_is_the_brute_force_answer():
    """`ties_reachable` (whether some |sum| ≤ bound puts sum · m exactly on a half of 2^shift,
    the only case the tie-to-even check changes) against every sum up to the bound; a tie found
    one past the bound shows the bound is tight."""
    from zant.passes.onnx_to_uop.quant import ties_reachable

    rng = np.random.default_rng(11)
    m = np.array([1, 2, 3, 12, 40, 64, 96, 0, *rng.integers(1, 1 << 12, 24)])
    for shift in (0, 1, 3, 6, 9):
        for bound in (0, 1, 5, 17, 64):
            sums = np.arange(-bound, bound + 1, dtype=np.int64)
            half, full = (1 << shift) >> 1, 1 << shift
            want = [shift > 0 and bool(np.any((sums * mc) % full == half)) for mc in m]
            got = ties_reachable(m, np.full(len(m), shift), bound)
            assert got.tolist() == want, (shift, bound)
    # m = 3 · 2^2, shift 6: the first tie is at |sum| = 2^3 (8 · 12 = 96 = 64 + 32).
    assert not ties_reachable(np.array([12]), np.array([6]), 7)[0]
    assert ties_reachable(np.array([12]), np.array([6]), 8)[0]
