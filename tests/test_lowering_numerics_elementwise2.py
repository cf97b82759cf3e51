"""End-to-end numerics of the element-wise ops beyond arithmetic: casts, Where, comparisons,
logic and bitwise ops, Mod, BitShift, Sign/IsNaN/IsInf/Round, integer Pow, trigonometry and the
activations. Each group runs in at least two element types against `onnx.reference`.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from e2e import check_model
from onnx import TensorProto, helper

rng = np.random.default_rng(1)


def _single(op, feeds: dict[str, np.ndarray], out_dtype, out_shape=None, **attrs) -> onnx.ModelProto:
    """A model with one node `op` over the graph inputs `feeds`, output `y` of `out_dtype`."""
    if out_shape is None:
        out_shape = np.broadcast_shapes(*(a.shape for a in feeds.values()))
    inputs = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape))
        for n, a in feeds.items()
    ]
    output = helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(np.dtype(out_dtype)), list(out_shape))
    graph = helper.make_graph([helper.make_node(op, list(feeds), ["y"], **attrs)], "g", inputs, [output])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", onnx.defs.onnx_opset_version())])


def _check(op, feeds, out_dtype, out_shape=None, rtol=1e-4, atol=1e-5, **attrs):
    check_model(_single(op, feeds, out_dtype, out_shape, **attrs), feeds, rtol=rtol, atol=atol)


def _ints(dtype, *shape, low=-20, high=21):
    info = np.iinfo(dtype)
    return rng.integers(max(low, info.min), min(high, info.max + 1), shape).astype(dtype)


SPECIAL = np.array([0.0, -0.0, 0.5, 1.5, 2.5, -2.5, -1.7, 3.99, 300.7, -300.2, np.inf, -np.inf, np.nan, 1e-8, 7.0], np.float64)

# -- Cast / CastLike ------------------------------------------------------------------------------

CASTS = [
    (np.float32, np.float16), (np.float16, np.float32), (np.float64, np.float16), (np.float32, np.float64),
    (np.float32, np.int32), (np.float64, np.int8), (np.float32, np.uint8), (np.float16, np.int64),
    (np.int32, np.float32), (np.int64, np.float16), (np.uint16, np.float64),
    (np.int32, np.int8), (np.int8, np.uint32), (np.uint8, np.int16), (np.int64, np.uint64),
    (np.float32, np.bool_), (np.int16, np.bool_), (np.bool_, np.float32), (np.bool_, np.int64),
]


def _cast_input(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        finite_only = SPECIAL[np.isfinite(SPECIAL)]
        return finite_only.astype(dtype).reshape(2, 6)
    if dtype.kind == "b":
        return rng.integers(0, 2, (2, 6)).astype(bool)
    return _ints(dtype, 2, 6, low=-300, high=301)


@pytest.mark.parametrize("src, dst", CASTS, ids=lambda t: np.dtype(t).name)
def test_cast(src, dst):
    x = _cast_input(src)
    if np.dtype(dst).kind in "iu" and np.dtype(src).kind == "f":
        x = np.clip(x, np.iinfo(dst).min, np.iinfo(dst).max)  # out-of-range float->int is undefined
    _check("Cast", {"x": x}, dst, to=helper.np_dtype_to_tensor_dtype(np.dtype(dst)))


@pytest.mark.parametrize("src, dst", [(np.float32, np.float16), (np.float64, np.float32)], ids=lambda t: np.dtype(t).name)
def test_cast_float_specials(src, dst):
    """NaN, ±inf, -0.0 and tiny values survive float-to-float casts."""
    x = SPECIAL.astype(src)
    _check("Cast", {"x": x}, dst, to=helper.np_dtype_to_tensor_dtype(np.dtype(dst)))


@pytest.mark.parametrize("src, dst", [(np.float32, np.int64), (np.int32, np.float16), (np.float64, np.bool_)], ids=lambda t: np.dtype(t).name)
def test_cast_like(src, dst):
    x = _cast_input(src)
    like = np.zeros((3,), dst)  # another shape: only its element type matters
    _check("CastLike", {"x": x, "like": like}, dst, out_shape=x.shape)


def test_cast_to_bfloat16_rounds_to_nearest_even():
    """bfloat16 is kept as its bits and converted through f32 (tests/test_element_types.py has
    the special values)."""
    x = np.array([1.0, 1 + 2.0**-8, 1 + 3 * 2.0**-8, -0.1], np.float32)  # two ties, one inexact
    model = _single("Cast", {"x": x}, np.float32, to=TensorProto.BFLOAT16)
    model.graph.output[0].type.tensor_type.elem_type = TensorProto.BFLOAT16
    check_model(model, {"x": x})


# -- Where, comparisons, logic, bitwise -------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.float16], ids=lambda t: np.dtype(t).name)
def test_where_three_way_broadcast(dtype):
    c = rng.integers(0, 2, (2, 1, 4)).astype(bool)
    x = _cast_input(dtype).reshape(-1)[:3].reshape(3, 1)
    z = _cast_input(dtype).reshape(-1)[:4]
    _check("Where", {"c": c, "x": x, "z": z}, dtype)


COMPARISONS = ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.float64], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("op", COMPARISONS)
def test_comparison(op, dtype):
    if np.dtype(dtype).kind == "f":
        a = np.array([[1.0, 2.0, np.nan, -np.inf], [0.0, -0.0, 3.0, 5.0]], dtype)
        b = np.array([2.0, 2.0, np.nan, 5.0], dtype)
    else:
        a, b = _ints(dtype, 3, 4, low=0, high=4), _ints(dtype, 4, low=0, high=4)
    _check(op, {"a": a, "b": b}, np.bool_)


def test_comparison_on_bool():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    for op in ("Equal", "Xor"):
        _check(op, {"a": a, "b": b}, np.bool_)


@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
def test_logic(op):
    a = rng.integers(0, 2, (3, 4)).astype(bool)
    b = rng.integers(0, 2, (4,)).astype(bool)
    _check(op, {"a": a, "b": b}, np.bool_)


def test_not():
    _check("Not", {"x": rng.integers(0, 2, (2, 5)).astype(bool)}, np.bool_)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64, np.uint16], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
def test_bitwise(op, dtype):
    a, b = _ints(dtype, 2, 4, low=-100, high=200), _ints(dtype, 4, low=-100, high=200)
    _check(op, {"a": a, "b": b}, dtype)


@pytest.mark.parametrize("dtype", [np.int8, np.uint32], ids=lambda t: np.dtype(t).name)
def test_bitwise_not(dtype):
    x = _ints(dtype, 2, 4, low=-100, high=200)
    _check("BitwiseNot", {"x": x}, dtype)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.uint64], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift(direction, dtype):
    x = _ints(dtype, 2, 5, low=0, high=250)
    shift = np.array([0, 1, 3, 7, np.iinfo(dtype).bits - 1], dtype)
    _check("BitShift", {"x": x, "s": shift}, dtype, direction=direction)


# -- Mod --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.int64, np.uint16], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("fmod", [0, 1])
def test_mod_integers(fmod, dtype):
    a = _ints(dtype, 3, 4, low=-30, high=31)
    b = np.array([3, -7, 5, -2], dtype) if np.dtype(dtype).kind == "i" else np.array([3, 7, 5, 2], dtype)
    _check("Mod", {"a": a, "b": b}, dtype, fmod=fmod)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda t: np.dtype(t).name)
def test_mod_floats(dtype):
    a = (rng.standard_normal((3, 4)) * 10).astype(dtype)
    b = np.array([3.0, -7.5, 1.25, -2.0], dtype)
    _check("Mod", {"a": a, "b": b}, dtype, fmod=1, rtol=1e-3, atol=1e-3)


# -- Sign, IsNaN, IsInf, Round, integer Pow -----------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.float16], ids=lambda t: np.dtype(t).name)
def test_sign(dtype):
    _check("Sign", {"x": _cast_input(dtype)}, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda t: np.dtype(t).name)
def test_isnan(dtype):
    _check("IsNaN", {"x": SPECIAL.astype(dtype)}, np.bool_)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("positive, negative", [(1, 1), (1, 0), (0, 1), (0, 0)])
def test_isinf(dtype, positive, negative):
    _check("IsInf", {"x": SPECIAL.astype(dtype)}, np.bool_, detect_positive=positive, detect_negative=negative)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda t: np.dtype(t).name)
def test_round_half_to_even(dtype):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, 2.6, -2.6, 0.0, 7.0, np.nan], dtype)
    _check("Round", {"x": x}, dtype)


@pytest.mark.parametrize(
    "base, exponent",
    [(np.int32, np.int32), (np.int64, np.int64), (np.int32, np.float32), (np.int64, np.float32), (np.float32, np.int64), (np.float64, np.float64)],
    ids=lambda t: np.dtype(t).name,
)
def test_pow_types(base, exponent):
    x = np.array([[1, 2, 3, -2], [0, 5, -3, 4]], base)
    e = np.array([4, 5, 3, 2], exponent)
    _check("Pow", {"x": x, "e": e}, base)


# -- trigonometry -------------------------------------------------------------------------------------

TRIG_DOMAIN = {"Asin": (-0.99, 0.99), "Acos": (-0.99, 0.99), "Atanh": (-0.95, 0.95), "Acosh": (1.0, 5.0), "Tan": (-1.4, 1.4)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("op", ["Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"])
def test_trigonometry(op, dtype):
    low, high = TRIG_DOMAIN.get(op, (-3.0, 3.0))
    x = rng.uniform(low, high, (2, 5)).astype(dtype)
    tolerance = 2e-3 if dtype == np.float16 else 1e-5
    _check(op, {"x": x}, dtype, rtol=tolerance, atol=tolerance)


def test_trigonometry_rejects_integers():
    from zant.errors import ZantError

    x = np.ones((3,), np.int32)
    with pytest.raises(ZantError, match="int32"):
        check_model(_single("Sin", {"x": x}, np.int32), {"x": x})


# -- activations --------------------------------------------------------------------------------------

ACTIVATIONS = [
    ("Elu", {}), ("Elu", {"alpha": 0.5}),
    ("Selu", {}), ("Selu", {"alpha": 2.0, "gamma": 3.0}),
    ("Celu", {}), ("Celu", {"alpha": 2.0}),
    ("Gelu", {}), ("Gelu", {"approximate": "tanh"}),
    ("HardSigmoid", {}), ("HardSigmoid", {"alpha": 0.5, "beta": 0.6}),
    ("HardSwish", {}),
    ("Mish", {}),
    ("Softplus", {}),
    ("Softsign", {}),
    ("Swish", {}), ("Swish", {"alpha": 0.5}),
    ("ThresholdedRelu", {}), ("ThresholdedRelu", {"alpha": 0.3}),
    ("Shrink", {}), ("Shrink", {"lambd": 1.0, "bias": 0.2}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("op, attrs", ACTIVATIONS, ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}{w}" for k, w in v.items()) or "default")
def test_activation(op, attrs, dtype):
    if op == "Swish" and onnx.defs.onnx_opset_version() < 24:
        pytest.skip("Swish needs opset 24")
    x = np.concatenate([rng.standard_normal(10) * 3, [-30.0, -12.0, 0.0, 12.0, 30.0]]).astype(dtype).reshape(3, 5)
    tolerance = 3e-3 if dtype == np.float16 else 1e-5
    _check(op, {"x": x}, dtype, rtol=tolerance, atol=tolerance, **attrs)


@pytest.mark.parametrize("dtype", [np.int32, np.int64], ids=lambda t: np.dtype(t).name)
def test_shrink_integers(dtype):
    x = _ints(dtype, 2, 6, low=-5, high=6)
    _check("Shrink", {"x": x}, dtype, lambd=1.5, bias=1.0)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("slope_shape", [(1,), (4,), (3, 1), (2, 3, 4)], ids=str)
def test_prelu_slope_broadcast(slope_shape, dtype):
    x = _cast_input(dtype).reshape(-1)[:12].reshape(3, 4)
    x = np.broadcast_to(x, (2, 3, 4)).copy()
    slope = (rng.uniform(0.1, 2, slope_shape) * (1 if np.dtype(dtype).kind == "f" else 3)).astype(dtype)
    _check("PRelu", {"x": x, "slope": slope}, dtype, out_shape=x.shape)
