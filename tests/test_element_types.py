"""Storage element types (bfloat16, the float8 types) through Cast, bit for bit: special values
(NaN of both signs, ±Inf, ±0, the largest finite value and beyond it, the smallest subnormal
and below it, round-to-nearest-even ties) against onnx's reference evaluator (which converts with
ml_dtypes), compiled for the host (ReleaseSafe) and in the uop interpreter after onnx-to-uop."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper
from onnx.reference import ReferenceEvaluator

from e2e import check_model, compile_and_run
from zant.frontend.onnx_importer import import_model_bytes
from zant.interpreter import run_module
from zant.passes import builtin_passes

FLOAT8 = [T.FLOAT8E4M3FN, T.FLOAT8E4M3FNUZ, T.FLOAT8E5M2, T.FLOAT8E5M2FNUZ]
STORAGE = [T.BFLOAT16, *FLOAT8]


def _specials() -> np.ndarray:
    """f32 values at every edge of the storage types."""
    values = [0.0, -0.0, 1.0, -1.0, 0.1, -3.3, np.inf, -np.inf, np.nan, 65504.0, 3.4e38, 1.5e-45, 2.0**-126]
    for onnx_type in STORAGE:
        dtype = helper.tensor_dtype_to_np_dtype(onnx_type)
        info = ml_dtypes.finfo(dtype)
        top, tiny = float(info.max), float(info.smallest_subnormal)
        ulp_top = float(info.eps) * 2.0 ** np.floor(np.log2(top))  # the spacing just below max
        values += [top, -top, top + ulp_top / 4, top + ulp_top / 2, top + ulp_top, 2 * top, -2 * top]
        values += [tiny, -tiny, tiny / 2, tiny * 0.51, tiny * 1.5, tiny * 2.5, float(info.smallest_normal)]
        values += [1 + float(info.eps) / 2, 1 + 1.5 * float(info.eps), 1 + float(info.eps) / 4]  # ties, rounding
    negative_nan = np.array([0xFFC00000], np.uint32).view(np.float32)  # -NaN: the sign bit set
    with np.errstate(over="ignore"):  # 2·max of bfloat16 is Inf in f32
        return np.concatenate([np.array(values, np.float32), negative_nan])


X = _specials()


def _casts_model() -> onnx.ModelProto:
    """x (f32) cast to every storage type, float8 with saturate 1 and 0, and each result back."""
    nodes, outputs = [], []
    for onnx_type in STORAGE:
        for saturate in (1, 0) if onnx_type in FLOAT8 else (1,):
            name = f"{T.DataType.Name(onnx_type).lower()}_{saturate}"
            nodes.append(helper.make_node("Cast", ["x"], [name], to=onnx_type, saturate=saturate))
            nodes.append(helper.make_node("Cast", [name], [f"{name}_f32"], to=T.FLOAT))
            outputs += [helper.make_tensor_value_info(name, onnx_type, [X.size]),
                        helper.make_tensor_value_info(f"{name}_f32", T.FLOAT, [X.size])]
    graph = helper.make_graph(nodes, "casts", [helper.make_tensor_value_info("x", T.FLOAT, [X.size])], outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def _bits(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).view(f"u{np.asarray(a).dtype.itemsize}")


def _assert_bits_equal(got: list[np.ndarray], want: list[np.ndarray], names: list[str]) -> None:
    for g, w, name in zip(got, want, names):
        g, w = np.asarray(g).reshape(-1), np.asarray(w).reshape(-1)
        assert g.dtype == w.dtype, name
        if w.dtype == np.float32:  # NaN's payload is not specified: NaN where NaN, bits elsewhere
            assert np.array_equal(np.isnan(g), np.isnan(w)), name
            g, w = np.where(np.isnan(g), 0, g), np.where(np.isnan(w), 0, w)
        bad = np.nonzero(_bits(g) != _bits(w))[0]
        assert bad.size == 0, f"{name}: x={X[bad[:5]]} got {_bits(g)[bad[:5]]} want {_bits(w)[bad[:5]]}"


def test_casts_to_and_from_storage_floats_match_the_reference():
    model = _casts_model()
    names = [o.name for o in model.graph.output]
    want = ReferenceEvaluator(model).run(None, {"x": X})
    got = compile_and_run(model, {"x": X})
    _assert_bits_equal(got, want, names)


def test_interpreter_casts_match_the_reference():
    """The uop interpreter's `uop.cast` / `uop.cast_unsaturated` after onnx-to-uop."""
    from zant.driver import make_context

    model = _casts_model()
    names = [o.name for o in model.graph.output]
    want = ReferenceEvaluator(model).run(None, {"x": X})
    module = import_model_bytes(model.SerializeToString(), ".")
    builtin_passes()["onnx-to-uop"]()().apply(make_context(), module)
    got = run_module(module, [X])
    _assert_bits_equal([np.asarray(g).astype(w.dtype) for g, w in zip(got, want)], want, names)


@pytest.mark.parametrize("onnx_type", STORAGE, ids=lambda t: T.DataType.Name(t))
def test_every_bit_pattern_converts_to_f32_exactly(onnx_type):
    """Every one of the 256 (float8) or 65,536 (bfloat16) values to f32 and back (unsaturated,
    so ±Inf stays ±Inf): exact, NaN stays NaN, the round trip keeps every non-NaN pattern."""
    dtype = helper.tensor_dtype_to_np_dtype(onnx_type)
    width = np.dtype(dtype).itemsize
    patterns = np.arange(1 << (8 * width), dtype=f"u{width}").view(dtype)
    node_in = helper.make_node("Cast", ["x"], ["y"], to=T.FLOAT)
    node_back = helper.make_node("Cast", ["y"], ["z"], to=onnx_type, saturate=0)
    graph = helper.make_graph(
        [node_in, node_back], "g", [helper.make_tensor_value_info("x", onnx_type, [patterns.size])],
        [helper.make_tensor_value_info("y", T.FLOAT, [patterns.size]),
         helper.make_tensor_value_info("z", onnx_type, [patterns.size])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    y, z = compile_and_run(model, {"x": patterns})
    want = patterns.astype(np.float32)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(y), nan)
    assert np.array_equal(_bits(y)[~nan], _bits(want)[~nan])
    assert np.array_equal(_bits(z)[~nan], _bits(patterns)[~nan])
    assert np.isnan(z.astype(np.float32)[nan]).all()


def test_bfloat16_arithmetic_computes_in_f32():
    """Ops other than casts and data movement on bfloat16 compute in f32 between casts (the
    frontend widens them), one rounding per result; the reference rounds in bfloat16 after each
    op, so within two of its ulps (as onnx's backend runner compares bfloat16)."""
    bf16 = T.BFLOAT16
    nodes = [
        helper.make_node("MatMul", ["a", "b"], ["m"]),
        helper.make_node("Softmax", ["m"], ["s"], axis=-1),
        helper.make_node("Sigmoid", ["s"], ["c"]),
        helper.make_node("Transpose", ["c"], ["y"], perm=[1, 0]),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("a", bf16, [3, 4]), helper.make_tensor_value_info("b", bf16, [4, 5])],
        [helper.make_tensor_value_info("y", bf16, [5, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    rng = np.random.default_rng(0)
    feeds = {name: rng.standard_normal(shape).astype(ml_dtypes.bfloat16) for name, shape in (("a", (3, 4)), ("b", (4, 5)))}
    check_model(model, feeds, rtol=2.0**-6, atol=1e-6)


# -- packed types: int4, uint4, int2, uint2, float4e2m1 -------------------------------------------

PACKED = [T.INT4, T.UINT4, T.INT2, T.UINT2, T.FLOAT4E2M1]


def _cast_model(sources: dict[str, tuple[int, list[int]]], casts: list[tuple[str, str, int]],
                outputs: list[tuple[str, int, list[int]]], initializers=()) -> onnx.ModelProto:
    nodes = [helper.make_node("Cast", [src], [dst], to=to) for src, dst, to in casts]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, t, s) for n, (t, s) in sources.items()],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs], list(initializers),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])


@pytest.mark.parametrize("onnx_type", PACKED, ids=lambda t: T.DataType.Name(t))
def test_packed_types_cast_as_the_reference(onnx_type):
    """f32 → the type (float4: rounded to nearest even, ±6 beyond, NaN as the reference; the
    integers wrap after truncation toward zero, as the reference) and every code back to f32, on an odd
    count so the last byte is half used; the buffers are the ABI's packed bytes."""
    x = np.concatenate([X, np.arange(-9, 16, dtype=np.float32), [0.25, 0.75, 2.5, 5.0, -5.0, 3.5]]).astype(np.float32)
    if onnx_type != T.FLOAT4E2M1:  # float to int beyond int32 (and NaN, ±Inf) is undefined in ONNX
        x = x[np.isfinite(x) & (np.abs(x) < 2.0**31)]
    x = x[: x.size - (x.size % 2 == 0)]  # odd
    dtype = helper.tensor_dtype_to_np_dtype(onnx_type)
    bits = 4 if onnx_type in (T.INT4, T.UINT4, T.FLOAT4E2M1) else 2
    codes = np.arange(1 << bits, dtype=np.uint8)
    if onnx_type in (T.INT4, T.INT2):  # NumPy holds the signed codes sign-extended
        codes = np.where(codes >= 1 << (bits - 1), codes | (0xFF << bits) & 0xFF, codes).astype(np.uint8)
    every = codes.view(dtype)
    model = _cast_model(
        {"x": (T.FLOAT, [x.size]), "c": (onnx_type, [every.size])},
        [("x", "y", onnx_type), ("c", "z", T.FLOAT)],
        [("y", onnx_type, [x.size]), ("z", T.FLOAT, [every.size])],
    )
    want = ReferenceEvaluator(model).run(None, {"x": x, "c": every})
    got = compile_and_run(model, {"x": x, "c": every})
    assert got[0].dtype == want[0].dtype
    # as values (ml_dtypes may keep a signed code sign-extended or not in its byte); -0 kept
    assert np.array_equal(_bits(got[0].astype(np.float32)), _bits(want[0].astype(np.float32))), (x, got[0], want[0])
    assert np.array_equal(_bits(got[1]), _bits(want[1]))
    # the uop interpreter after onnx-to-uop (its buffers hold one element per NumPy byte)
    from zant.driver import make_context

    module = import_model_bytes(model.SerializeToString(), ".")
    builtin_passes()["onnx-to-uop"]()().apply(make_context(), module)
    interpreted = run_module(module, [x, every])
    assert np.array_equal(_bits(np.asarray(interpreted[0]).astype(np.float32)), _bits(want[0].astype(np.float32)))
    assert np.array_equal(_bits(np.asarray(interpreted[1])), _bits(want[1]))


def test_packed_constants_stay_packed():
    """An int4 initializer of 9 elements is 5 bytes in the constant arena, read element by
    element (zant_load_packed) to the reference's values."""
    from zant.driver import CompileOptions, compile_model
    from zant.runtime import load_compiled
    import tempfile
    from pathlib import Path

    values = np.array([-8, -1, 0, 1, 7, 3, -5, 6, 2], ml_dtypes.int4)
    weight = onnx.numpy_helper.from_array(values, "w")
    node = helper.make_node("DequantizeLinear", ["w", "s"], ["y"])  # s a run-time input: not folded
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("s", T.FLOAT, [])],
                              [helper.make_tensor_value_info("y", T.FLOAT, [9])], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    s = np.array(0.5, np.float32)
    with tempfile.TemporaryDirectory() as folder:
        onnx.save(model, Path(folder) / "m.onnx")
        result = compile_model(Path(folder) / "m.onnx", Path(folder) / "out", CompileOptions(name="m"))
        (y,) = load_compiled(result)(s)
        constants = [t for t in result.plan["tensors"] if t["role"] == "constant"]
    assert [t["size"] for t in constants] == [5]
    np.testing.assert_array_equal(y, values.astype(np.float32) * 0.5)


@pytest.mark.parametrize("onnx_type", [T.INT4, T.UINT4, T.INT2, T.UINT2, T.FLOAT4E2M1, T.FLOAT8E4M3FN, T.FLOAT8E5M2],
                         ids=lambda t: T.DataType.Name(t))
def test_quantize_and_dequantize_blocked(onnx_type):
    """QuantizeLinear to the type with scales per block of 2 along axis 1 (integers: rounded
    half to even and saturated; floats: converted, saturating), then DequantizeLinear back,
    against the reference; x spans values far beyond the type's range."""
    x = (np.random.default_rng(1).standard_normal((3, 6)) * 40).astype(np.float32)
    scale = np.array([[0.5, 2.0, 8.0]] * 3, np.float32)
    zero_dtype = helper.tensor_dtype_to_np_dtype(onnx_type)
    zero = np.zeros((3, 3), zero_dtype)
    if onnx_type in (T.INT4, T.UINT4):
        zero = np.array([[1, 0, 2]] * 3).astype(zero_dtype)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1, block_size=2),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1, block_size=2),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, [3, 6])],
        [helper.make_tensor_value_info("q", onnx_type, [3, 6]), helper.make_tensor_value_info("y", T.FLOAT, [3, 6])],
        [onnx.numpy_helper.from_array(scale, "s"), onnx.numpy_helper.from_array(zero, "z")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    want = ReferenceEvaluator(model).run(None, {"x": x})
    got = compile_and_run(model, {"x": x})
    assert np.array_equal(_bits(got[0].astype(np.float32)), _bits(want[0].astype(np.float32)))
    np.testing.assert_array_equal(got[1], want[1])


def test_element_types_as_cortex_m4_firmware(tmp_path):
    """On the Cortex-M4 under QEMU: an int4 weight (packed in flash) dequantized, an int4 input
    quantized to an int4 output, f32 to float8 (saturated and not) and to bfloat16, bit for bit
    as onnx's reference."""
    from zant.backend.build import BOARDS, DEFAULT_BOARDS
    from zant.backend.firmware import qemu_missing, run_firmware
    from zant.driver import CompileOptions, compile_model

    missing = qemu_missing(BOARDS[DEFAULT_BOARDS["cortex-m4"]])
    if missing:
        pytest.skip(missing)
    w = np.array([-8, -1, 0, 1, 7, 3, -5], ml_dtypes.int4)
    nodes = [
        helper.make_node("DequantizeLinear", ["w", "s"], ["dw"]),
        helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
        helper.make_node("Cast", ["x"], ["f8"], to=T.FLOAT8E4M3FN),
        helper.make_node("Cast", ["x"], ["f8u"], to=T.FLOAT8E5M2, saturate=0),
        helper.make_node("Cast", ["x"], ["bf"], to=T.BFLOAT16),
        helper.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", T.FLOAT, [X.size]), helper.make_tensor_value_info("s", T.FLOAT, []),
         helper.make_tensor_value_info("i", T.INT4, [5])],
        [helper.make_tensor_value_info("dw", T.FLOAT, [7]), helper.make_tensor_value_info("q", T.INT4, [X.size]),
         helper.make_tensor_value_info("f8", T.FLOAT8E4M3FN, [X.size]),
         helper.make_tensor_value_info("f8u", T.FLOAT8E5M2, [X.size]),
         helper.make_tensor_value_info("bf", T.BFLOAT16, [X.size]), helper.make_tensor_value_info("fi", T.FLOAT, [5])],
        [onnx.numpy_helper.from_array(w, "w"), onnx.numpy_helper.from_array(np.array(1, ml_dtypes.int4), "zp")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    # (x / s overflowing to Inf: the reference's QuantizeLinear casts Inf to int, undefined)
    x = np.where(np.isfinite(X) & (np.abs(X) < 1e30), X, 0).astype(np.float32)
    feeds = {"x": x, "s": np.array(0.25, np.float32), "i": np.array([-8, -3, 0, 5, 7], ml_dtypes.int4)}
    onnx.save(model, tmp_path / "m.onnx")
    result = compile_model(tmp_path / "m.onnx", tmp_path / "fw",
                           CompileOptions(name="m", target="cortex-m4", firmware=True, inputs=feeds))
    run = run_firmware(result.firmware_path, result.board, result.outputs)
    want = ReferenceEvaluator(model).run(None, feeds)
    for got, expected, name in zip(run.outputs, want, [o.name for o in graph.output]):
        assert got.dtype == expected.dtype, name
        assert np.array_equal(_bits(got.astype(np.float32)), _bits(expected.astype(np.float32))), name


@pytest.mark.parametrize("saturate", [1, 0])
def test_float8e8m0_rounds_up_as_the_reference(saturate):
    """f32 to float8e8m0 (round_mode "up", ONNX's default: the exponent, plus one for a
    fraction; NaN, ±Inf to 0xFF; beyond 2^127 saturated or NaN) and every code back to f32,
    compiled and in the interpreter, bit for bit as onnx's reference."""
    codes = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)
    model = _cast_model(
        {"x": (T.FLOAT, [X.size]), "c": (T.FLOAT8E8M0, [256])},
        [("x", "y", T.FLOAT8E8M0), ("c", "z", T.FLOAT)],
        [("y", T.FLOAT8E8M0, [X.size]), ("z", T.FLOAT, [256])],
    )
    model.graph.node[0].attribute.extend([helper.make_attribute("saturate", saturate)])
    want = ReferenceEvaluator(model).run(None, {"x": X, "c": codes})
    got = compile_and_run(model, {"x": X, "c": codes})
    _assert_bits_equal(got, want, ["y", "z"])
    from zant.driver import make_context

    module = import_model_bytes(model.SerializeToString(), ".")
    builtin_passes()["onnx-to-uop"]()().apply(make_context(), module)
    interpreted = [np.asarray(a).astype(w.dtype) for a, w in zip(run_module(module, [X, codes]), want)]
    _assert_bits_equal(interpreted, want, ["y", "z"])
