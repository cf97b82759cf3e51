"""`uop.fma`: a·b + c rounded once. The interpreter computes it exactly (against rationals
rounded to the type by hand), the printed `@mulAdd` agrees with it bit for bit, scalar and
vectorized, and it differs from a multiply then an add where a single rounding must."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from zant.interpreter.semantics import fma

A, B, C = 1 + 2.0**-15, 2.0**-24 * (1 - 2.0**-15), 1 + 2.0**-23
"""a·b + c = 1 + 2^-23 + 2^-24 - 2^-54, just below the midpoint between 1 + 2^-23 and 1 + 2^-22:
rounded once it is 1 + 2^-23; rounded to f64 first (the midpoint) and then to f32 (ties to even)
it would be 1 + 2^-22, and so is f32 a·b (2^-24) plus c."""


def rounded(exact: Fraction, dtype) -> float:
    """`exact` rounded to nearest, ties to even, in `dtype` (overflow: ±inf)."""
    dtype = np.dtype(dtype)
    try:
        guess = dtype.type(float(exact))  # within one step of the answer
    except OverflowError:
        return dtype.type(np.inf if exact > 0 else -np.inf)
    if not np.isfinite(guess):
        return guess
    candidates = [np.nextafter(guess, dtype.type(-np.inf)), guess, np.nextafter(guess, dtype.type(np.inf))]
    finite = [v for v in candidates if np.isfinite(v)]
    even = lambda v: int(np.array(v, dtype).view(f"u{dtype.itemsize}")) & 1  # noqa: E731
    return min(finite, key=lambda v: (abs(Fraction(float(v)) - exact), even(v)))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_the_interpreter_rounds_once_exactly(dtype):
    rng = np.random.default_rng(7)
    n = 3000
    a = (rng.standard_normal(n) * 4).astype(dtype)
    b = (rng.standard_normal(n) * 4).astype(dtype)
    # c near -a·b: the sum cancels, so the product's low bits decide the result.
    c = (-(a.astype(np.float64) * b) * (1 + rng.integers(-4, 5, n) * np.finfo(dtype).eps)).astype(dtype)
    c[: n // 3] = (rng.standard_normal(n // 3) * 4).astype(dtype)
    got = fma(a, b, c)
    assert got.dtype == dtype
    for i in range(n):
        exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
        assert got[i] == rounded(exact, dtype), (a[i], b[i], c[i])
    assert fma(a[0], b[0], c[0]) == got[0] and isinstance(fma(a[0], b[0], c[0]), dtype)


def test_a_single_rounding_where_two_would_differ():
    a, b, c = np.float32(A), np.float32(B), np.float32(C)
    assert (a, b, c) == (A, B, C)  # exact f32 values
    assert fma(a, b, c) == np.float32(1 + 2.0**-23)
    assert a * b + c == np.float32(1 + 2.0**-22)  # mul, then add
    assert np.float32(np.float64(a) * np.float64(b) + np.float64(c)) == np.float32(1 + 2.0**-22)  # via f64


def test_special_values():
    f = np.float32
    inf, nan = f(np.inf), f(np.nan)
    assert np.isnan(fma(inf, f(0), f(1))) and np.isnan(fma(nan, f(1), f(1))) and np.isnan(fma(inf, f(1), -inf))
    assert fma(f(3e38), f(2), f(-3e38)) == f(3e38)  # the product is not rounded to inf first
    assert fma(f(3e38), f(3e38), f(0)) == inf and fma(f(-3e38), f(3e38), f(0)) == -inf
    assert np.signbit(fma(f(-0.0), f(1), f(-0.0))) and not np.signbit(fma(f(1), f(-1), f(1)))
    assert fma(f(2.0**-100), f(2.0**-49), f(0)) == f(2.0**-149)  # a subnormal result
    d = np.float64
    assert fma(d(1.5e308), d(2), d(-1.5e308)) == d(1.5e308)  # f64, in rationals: no overflow either
    assert fma(d(1.5e308), d(2), d(0)) == d(np.inf)


MODULE = """
builtin.module {{
  func.func @main() {{
    %a = uop.define_global "input" 0 "a" : !uop.buffer<{n}xf32>
    %b = uop.define_global "input" 1 "b" : !uop.buffer<{n}xf32>
    %c = uop.define_global "input" 2 "c" : !uop.buffer<{n}xf32>
    %o = uop.define_global "output" 0 "o" : !uop.buffer<{n}xf32>
    uop.range %i = 0 to {n} {{
      %pa = uop.gep %a[%i] : !uop.buffer<{n}xf32>
      %pb = uop.gep %b[%i] : !uop.buffer<{n}xf32>
      %pc = uop.gep %c[%i] : !uop.buffer<{n}xf32>
      %po = uop.gep %o[%i] : !uop.buffer<{n}xf32>
      %x = uop.load %pa : f32
      %y = uop.load %pb : f32
      %z = uop.load %pc : f32
      %r = uop.fma %x, %y, %z : f32
      uop.store %r, %po : f32
    }}
    func.return
  }}
}}"""


@pytest.mark.parametrize("pipeline", ["", "vectorize{width=16},"], ids=["scalar", "vector"])
def test_printed_mul_add_agrees_with_the_interpreter(pipeline, tmp_path):
    from xdsl.parser import Parser

    from zant.backend.build import build_zig
    from zant.backend.zig_printer import print_zig
    from zant.driver import make_context, run_pipeline
    from zant.interpreter import run_module
    from zant.pipelines import PRINT_PIPELINE

    n = 40
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    c = (-(a.astype(np.float64) * b) * (1 + rng.integers(-3, 4, n) * 2.0**-23)).astype(np.float32)
    a[0], b[0], c[0] = A, B, C
    a[1], b[1], c[1] = 3e38, 2, -3e38
    ctx = make_context()
    module = Parser(ctx, MODULE.format(n=n)).parse_module()
    run_pipeline(module, f"{pipeline}plan-arenas,{PRINT_PIPELINE}", ctx)
    source = print_zig(module, "m")
    assert ("@mulAdd(@Vector(16, f32)" if pipeline else "@mulAdd(f32") in source
    (want,) = run_module(module, [a, b, c])
    (tmp_path / "m.zig").write_text(source)
    import ctypes

    library = ctypes.CDLL(str(build_zig(tmp_path / "m.zig", tmp_path / "libm.so", "host", "ReleaseSafe", "shared")))
    got = np.zeros(n, np.float32)
    assert library.m_predict(*(v.ctypes.data_as(ctypes.c_void_p) for v in (a, b, c, got))) == 0
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    assert got[0] == np.float32(1 + 2.0**-23) and got[1] == np.float32(3e38)
