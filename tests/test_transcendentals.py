"""`expand-transcendentals`: the polynomial exp, sigmoid, tanh and erf against float64 libm
rounded to f32, over every f32 exponent of both signs and the special values, run by the uop
interpreter (IEEE f32 arithmetic); and the expanded ops vectorize and build."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.parser import Parser

from zant.driver import make_context
from zant.interpreter import run_module
from zant.passes.expand_transcendentals import ExpandTranscendentalsPass

MAX_ULP = {"exp": 1, "sigmoid": 2, "tanh": 1, "erf": 2}
"""The error bounds the pass's docstring states, in f32 ulp."""

REFERENCE = {
    "exp": np.exp,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "tanh": np.tanh,
    "erf": np.vectorize(math.erf, otypes=[np.float64]),
}

BODIES = {
    "exp": "%r = uop.exp %a : f32",
    "tanh": "%r = uop.tanh %a : f32",
    "erf": "%r = uop.erf %a : f32",
    # Sigmoid as onnx-to-uop lowers it: e = exp(-|x|), (x < 0 ? e : 1) / (1 + e).
    "sigmoid": """%m = uop.abs %a : f32
    %n = uop.neg %m : f32
    %e = uop.exp %n : f32
    %one = uop.const 1.0 : f32
    %zero = uop.const 0.0 : f32
    %neg = uop.cmplt %a, %zero : f32
    %num = uop.where %neg, %e, %one : f32
    %d = uop.add %one, %e : f32
    %r = uop.div %num, %d : f32""",
}


def sweep() -> np.ndarray:
    """±(every f32 exponent, subnormals' included, × 12 mantissas), ±0, ±inf, NaN, the largest
    and smallest floats and the points around exp's overflow and underflow."""
    rng = np.random.default_rng(18)
    exponents = np.arange(256, dtype=np.uint32)
    mantissas = np.concatenate([[0, 1, 0x7FFFFF, 0x400000], rng.integers(0, 1 << 23, 8)]).astype(np.uint32)
    bits = (exponents[:, None] << 23 | mantissas[None, :]).ravel()
    magnitudes = bits.view(np.float32)
    values = np.concatenate([magnitudes, -magnitudes, np.float32([
        88.72283, 88.72284, 89.0, -87.33654, -87.33655, -103.97208, -103.97209, -104.0, 0.625, -0.625, 1.0, -1.0,
        np.nextafter(np.float32(1), np.float32(0)), 9.0, 10.0, 1e-30, -1e-30,
    ])])
    return values.astype(np.float32)


def ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in units in the last place of f32 (ordered bit patterns); NaN vs NaN is 0."""

    def ordered(a: np.ndarray) -> np.ndarray:
        i = a.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    distance = np.abs(ordered(got) - ordered(want))
    both_nan = np.isnan(got) & np.isnan(want)
    return np.where(both_nan, 0, np.where(np.isnan(got) | np.isnan(want), 1 << 40, distance))


def expanded_results(name: str, x: np.ndarray) -> np.ndarray:
    n = len(x)
    text = f"""
func.func @main() {{
  %x = uop.define_global "input" 0 "x" : !uop.buffer<{n}xf32>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<{n}xf32>
  uop.range %i = 0 to {n} {{
    %px = uop.gep %x[%i] : !uop.buffer<{n}xf32>
    %po = uop.gep %o[%i] : !uop.buffer<{n}xf32>
    %a = uop.load %px : f32
    {BODIES[name]}
    uop.store %r, %po : f32
  }}
  func.return
}}"""
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    ExpandTranscendentalsPass().apply(ctx, module)
    module.verify()
    names = {op.name for op in module.walk()}
    assert not names & {"uop.exp", "uop.tanh", "uop.erf"}
    (out,) = run_module(module, [x])
    return out


@pytest.mark.parametrize("name", sorted(MAX_ULP))
def test_error_bound_over_the_float_range(name):
    x = sweep()
    with np.errstate(all="ignore"):
        want = REFERENCE[name](x.astype(np.float64)).astype(np.float32)
        got = expanded_results(name, x)
    distance = ulp_distance(got, want)
    worst = int(np.argmax(distance))
    assert distance.max() <= MAX_ULP[name], f"{name}({x[worst]!r}) = {got[worst]!r}, want {want[worst]!r}"


@pytest.mark.parametrize("name", sorted(MAX_ULP))
def test_special_values_are_exact(name):
    x = np.float32([np.nan, np.inf, -np.inf, 0.0, -1000.0, 1000.0])
    with np.errstate(all="ignore"):
        want = REFERENCE[name](x.astype(np.float64)).astype(np.float32)
    got = expanded_results(name, x)
    np.testing.assert_array_equal(got, want)  # NaN where NaN, the exact limits


def test_other_float_types_keep_their_call():
    ctx = make_context()
    module = Parser(ctx, """
func.func @main() {
  %c = uop.const 1.0 : f64
  %e = uop.exp %c : f64
  func.return
}""").parse_module()
    ExpandTranscendentalsPass().apply(ctx, module)
    assert "uop.exp" in {op.name for op in module.walk()}


@pytest.mark.parametrize("op", ["Exp", "Tanh", "Erf", "Sigmoid"])
def test_built_host_code_keeps_the_bound(op):
    """The same sweep through an ONNX model built with the host pipeline (expanded, vectorized
    16 lanes wide, Zig ReleaseSafe): the printed code keeps the interpreter's error bound."""
    from e2e import compile_and_run
    from onnx import TensorProto, helper

    x = sweep()
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"])], op.lower(),
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(x)])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [len(x)])],
    )
    (got,) = compile_and_run(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), {"x": x})
    name = op.lower()
    with np.errstate(all="ignore"):
        want = REFERENCE[name](x.astype(np.float64)).astype(np.float32)
    distance = ulp_distance(got, want)
    worst = int(np.argmax(distance))
    assert distance.max() <= MAX_ULP[name], f"{name}({x[worst]!r}) = {got[worst]!r}, want {want[worst]!r}"
