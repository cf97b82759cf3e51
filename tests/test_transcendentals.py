"""`expand-transcendentals`: the polynomial exp, sigmoid, tanh and erf against float64 libm
rounded to f32, over every f32 exponent of both signs and the special values, run by the uop
interpreter (IEEE f32 arithmetic; `uop.fma` rounded once, exactly), with and without `fma`; a
denser random sweep through the vectorized form; and the expanded ops vectorize and build."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from xdsl.parser import Parser

from zant.driver import make_context
from zant.interpreter import run_module
from zant.passes.expand_transcendentals import ExpandTranscendentalsPass
from zant.passes.vectorize import VectorizePass

MAX_ULP = {"exp": 1, "exp_of_minus_abs": 1, "sigmoid": 2, "sigmoid_recurrent": 2, "sigmoid_recip": 2,
           "tanh": 1, "erf": 2}
"""The error bounds the pass's docstring states, in f32 ulp."""


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


REFERENCE = {
    "exp": np.exp,
    "exp_of_minus_abs": lambda x: np.exp(-np.abs(x)),
    "sigmoid": _sigmoid,
    "sigmoid_recurrent": _sigmoid,
    "sigmoid_recip": _sigmoid,
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
    # The recurrent cells' σ and the ML ops' (recip) σ.
    "sigmoid_recurrent": """%n = uop.neg %a : f32
    %e = uop.exp %n : f32
    %one = uop.const 1.0 : f32
    %d = uop.add %one, %e : f32
    %r = uop.div %one, %d : f32""",
    "sigmoid_recip": """%n = uop.neg %a : f32
    %e = uop.exp %n : f32
    %one = uop.const 1.0 : f32
    %d = uop.add %e, %one : f32
    %r = uop.recip %d : f32""",
    # Softplus's exp(-|x|): one power-of-two factor.
    "exp_of_minus_abs": """%m = uop.abs %a : f32
    %n = uop.neg %m : f32
    %r = uop.exp %n : f32""",
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


def dense() -> np.ndarray:
    """About a million random values: uniform where the algorithms switch (±12, exp's whole
    clamped range), normal ones as activations are, and log-uniform magnitudes 2^-30 … 2^3."""
    rng = np.random.default_rng(19)
    magnitudes = np.exp2(rng.uniform(-30, 3, 250_000)) * rng.choice([-1, 1], 250_000)
    return np.concatenate([
        rng.uniform(-12, 12, 300_000), rng.uniform(-110, 95, 200_000), rng.standard_normal(250_000) * 2,
        magnitudes,
    ]).astype(np.float32)


def expanded_module(name: str, n: int, fma: bool = False, width: int | None = None):
    """The loop computing `name` over n elements, expanded (and vectorized `width` lanes wide)."""
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
    ExpandTranscendentalsPass(fma=fma).apply(ctx, module)
    if width is not None:
        VectorizePass(width=width).apply(ctx, module)
    module.verify()
    return module


def expanded_results(name: str, x: np.ndarray, fma: bool = False, vector: bool = False) -> np.ndarray:
    """`name` of x through the uop interpreter: one element per loop iteration, or (`vector`)
    the whole of x as one vector (the lane-wise NumPy forms: fast)."""
    module = expanded_module(name, len(x), fma, len(x) if vector else None)
    names = {op.name for op in module.walk()}
    assert not names & {"uop.exp", "uop.tanh", "uop.erf"}
    assert ("uop.fma" in names) == fma
    (out,) = run_module(module, [x])
    return out


def assert_within_bound(name: str, x: np.ndarray, got: np.ndarray) -> None:
    with np.errstate(all="ignore"):
        want = REFERENCE[name](x.astype(np.float64)).astype(np.float32)
    distance = ulp_distance(got, want)
    worst = int(np.argmax(distance))
    assert distance.max() <= MAX_ULP[name], f"{name}({x[worst]!r}) = {got[worst]!r}, want {want[worst]!r}"


@pytest.mark.parametrize("fma", [False, True], ids=["mul-add", "fma"])
@pytest.mark.parametrize("name", sorted(MAX_ULP))
def test_error_bound_over_the_float_range(name, fma):
    x = sweep()
    with np.errstate(all="ignore"):
        got = expanded_results(name, x, fma)
    assert_within_bound(name, x, got)


@pytest.mark.parametrize("fma", [False, True], ids=["mul-add", "fma"])
@pytest.mark.parametrize("name", sorted(MAX_ULP))
def test_error_bound_on_a_million_values_vectorized(name, fma):
    x = dense()
    with np.errstate(all="ignore"):
        got = expanded_results(name, x, fma, vector=True)
    assert_within_bound(name, x, got)


@pytest.mark.parametrize("fma", [False, True], ids=["mul-add", "fma"])
@pytest.mark.parametrize("name", sorted(MAX_ULP))
def test_special_values_are_exact(name, fma):
    x = np.float32([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, -1000.0, 1000.0, 1e-45, -1e-45])
    with np.errstate(all="ignore"):
        want = REFERENCE[name](x.astype(np.float64)).astype(np.float32)
    got = expanded_results(name, x, fma)
    np.testing.assert_array_equal(got, want)  # NaN where NaN, the exact limits
    finite = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[finite]), np.signbit(want[finite]))  # tanh(-0) = -0


def test_sigmoid_is_replaced_whole():
    # Sigmoid's select and exp go: one division of two values, no compare.
    for name in ("sigmoid", "sigmoid_recurrent", "sigmoid_recip"):
        module = expanded_module(name, 4, fma=True)
        names = [op.name for op in module.walk()]
        assert names.count("uop.div") == 1 and names.count("uop.fma") == 9, name
        assert not {"uop.where", "uop.cmplt", "uop.exp", "uop.abs", "uop.recip"} & set(names), name


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


@pytest.mark.parametrize("fma", [False, True], ids=["mul-add", "fma"])
@pytest.mark.parametrize("op", ["Exp", "Tanh", "Erf", "Sigmoid"])
def test_built_host_code_keeps_the_bound(op, fma):
    """The same sweep through an ONNX model built with the host pipeline (expanded, vectorized
    16 lanes wide, Zig ReleaseSafe), the expansion with and without `fma` (`@mulAdd`): the
    printed code keeps the interpreter's error bound."""
    from e2e import compile_and_run
    from onnx import TensorProto, helper

    from zant.pipelines import pipeline_for

    stage = "expand-transcendentals{fma=true}" if fma else "expand-transcendentals"
    pipeline, found = re.subn(r"expand-transcendentals(\{[^}]*\})?", stage, pipeline_for("host"))
    assert found == 1
    x = sweep()
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"])], op.lower(),
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(x)])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [len(x)])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    (got,) = compile_and_run(model, {"x": x}, pipeline=pipeline)
    name = op.lower()
    with np.errstate(all="ignore"):
        want = REFERENCE[name](x.astype(np.float64)).astype(np.float32)
    distance = ulp_distance(got, want)
    worst = int(np.argmax(distance))
    assert distance.max() <= MAX_ULP[name], f"{name}({x[worst]!r}) = {got[worst]!r}, want {want[worst]!r}"


def test_the_host_pipeline_fuses_where_the_cpu_has_an_fma():
    from zant.backend.cpus import CPUS
    from zant.pipelines import pipeline_for

    from zant.dialects.zant import TargetAttr

    for name, cpu in CPUS.items():
        stages = pipeline_for("host", cpu=cpu).split(",")
        expand = [s for s in stages if s.startswith("expand-transcendentals")]
        # The pass reads the FMA from the module's #zant.target, which names the CPU.
        assert expand == ["expand-transcendentals"] and stages[0] == f"set-target{{target=host cpu={name}}}"
        assert TargetAttr("host", name).parameters.fma == cpu.fma, name
    assert {cpu.fma for cpu in CPUS.values()} == {False, True}  # both kinds are described
    assert not any(s.startswith("expand-transcendentals") for s in pipeline_for("cortex-m4").split(","))
