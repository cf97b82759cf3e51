"""The uop interpreter (zant.interpreter): per-op semantics on hand-written modules, agreement
with the Zig builds, and `check_each_pass` naming a seeded bug."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from zant.driver import make_context
from zant.errors import ZantError
from zant.interpreter import (
    InterpreterTrap,
    PassChangedResult,
    check_each_pass,
    first_difference,
    run_module,
)

ROOT = Path(__file__).resolve().parents[1]
INPUTS = ROOT / "tests" / "filecheck" / "Inputs"


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def run_body(body: str, inputs: list[np.ndarray], outputs: list[tuple[int, str]]) -> list[np.ndarray]:
    """Run `body` inside `func.func @main()`: one input global per array (typed by `inputs`'
    dtypes, as declared in the body by the caller) and the given outputs."""
    return run_module(parse("func.func @main() {\n" + body + "\n  func.return\n}"), inputs)


def binary(op: str, t: str, xs, ys, dtype) -> np.ndarray:
    """`uop.<op>` of x[i], y[i] into out[i], for every i."""
    n = len(xs)
    body = f"""
  %x = uop.define_global "input" 0 "x" : !uop.buffer<{n}x{t}>
  %y = uop.define_global "input" 1 "y" : !uop.buffer<{n}x{t}>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<{n}x{t}>
  uop.range %i = 0 to {n} {{
    %a = uop.load %pa : {t}
    %b = uop.load %pb : {t}
    %r = uop.{op} %a, %b : {t}
    uop.store %r, %po : {t}
  }}"""
    # geps first (the loads use them)
    body = body.replace(
        f"    %a = uop.load",
        f"    %pa = uop.gep %x[%i] : !uop.buffer<{n}x{t}>\n"
        f"    %pb = uop.gep %y[%i] : !uop.buffer<{n}x{t}>\n"
        f"    %po = uop.gep %o[%i] : !uop.buffer<{n}x{t}>\n    %a = uop.load",
    )
    (out,) = run_body(body, [np.array(xs, dtype), np.array(ys, dtype)], [])
    return out


def unary(op: str, t: str, xs, dtype, result: str | None = None) -> np.ndarray:
    n, r = len(xs), result or t
    body = f"""
  %x = uop.define_global "input" 0 "x" : !uop.buffer<{n}x{t}>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<{n}x{r}>
  uop.range %i = 0 to {n} {{
    %pa = uop.gep %x[%i] : !uop.buffer<{n}x{t}>
    %po = uop.gep %o[%i] : !uop.buffer<{n}x{r}>
    %a = uop.load %pa : {t}
    %v = {op.format(a="%a", t=t, r=r)}
    uop.store %v, %po : {r}
  }}"""
    (out,) = run_body(body, [np.array(xs, dtype)], [])
    return out


# -- integers: exact, wrapping as the generated Zig does ----------------------------------------


def test_integer_add_sub_mul_wrap_in_their_type():
    assert list(binary("add", "i8", [100, -128, 5], [100, -1, 6], np.int8)) == [-56, 127, 11]
    assert list(binary("sub", "ui8", [0, 200], [1, 100], np.uint8)) == [255, 100]
    assert list(binary("mul", "i32", [2**30, -7], [4, 3], np.int32)) == [0, -21]


def test_integer_division_truncates_and_remainder_takes_the_dividends_sign():
    assert list(binary("div", "i32", [-7, 7, -7], [2, -2, -2], np.int32)) == [-3, -3, 3]
    assert list(binary("rem", "i32", [-7, 7, -7], [2, -2, -2], np.int32)) == [-1, 1, -1]


def test_integer_division_by_zero_traps():
    with pytest.raises(InterpreterTrap, match="division by zero"):
        binary("div", "i32", [1], [0], np.int32)


def test_shifts_have_no_undefined_counts():
    # zant_shl: 0 for a count < 0 or >= width; zant_shr: sign fill for a signed type.
    assert list(binary("shl", "i8", [1, 1, 1, 3], [3, 8, -1, 6], np.int8)) == [8, 0, 0, -64]
    assert list(binary("shr", "i8", [-128, -128, 64], [3, 9, -2], np.int8)) == [-16, -1, 0]
    assert list(binary("shr", "ui8", [128, 128], [7, 8], np.uint8)) == [1, 0]


def test_integer_unary_ops():
    assert list(unary("uop.neg {a} : {t}", "i8", [-128, 5], np.int8)) == [-128, -5]
    assert list(unary("uop.abs {a} : {t}", "i8", [-128, -5], np.int8)) == [-128, 5]
    assert list(unary("uop.not {a} : {t}", "ui8", [0, 15], np.uint8)) == [255, 240]
    assert list(unary("uop.sign {a} : {t}", "i32", [-9, 0, 4], np.int32)) == [-1, 0, 1]


# -- floats: IEEE in their own type -------------------------------------------------------------


def test_float_ops_round_once_in_f32():
    x = np.array([1.0, 0.1, 3.0], np.float32)
    y = np.array([2.0**-24, 0.2, 7.0], np.float32)
    np.testing.assert_array_equal(binary("add", "f32", x, y, np.float32), x + y)
    np.testing.assert_array_equal(binary("div", "f32", x, y, np.float32), x / y)
    assert binary("add", "f32", x, y, np.float32)[0] == np.float32(1.0)  # ties to even


def test_float_max_min_propagate_nan():
    nan = float("nan")
    got = binary("max", "f32", [nan, 1.0, 2.0], [1.0, nan, -3.0], np.float32)
    assert math.isnan(got[0]) and math.isnan(got[1]) and got[2] == 2.0
    got = binary("min", "f32", [nan, 1.0], [1.0, -4.0], np.float32)
    assert math.isnan(got[0]) and got[1] == -4.0


def test_float_rem_and_round_half_to_even():
    assert list(binary("rem", "f32", [-7.5, 7.5], [2.0, -2.0], np.float32)) == [-1.5, 1.5]
    got = unary("uop.round {a} : {t}", "f32", [0.5, 1.5, 2.5, -2.5, 2.6], np.float32)
    assert list(got) == [0.0, 2.0, 2.0, -2.0, 3.0]


@pytest.mark.parametrize(
    "source, target, xs, dtype, want",
    [
        ("f32", "i8", [300.0, -300.0, float("nan"), -7.9, 7.9], np.float32, [127, -128, 0, -7, 7]),
        ("f32", "ui8", [-1.0, 255.9, float("inf")], np.float32, [0, 255, 255]),
        ("i32", "i8", [300, -129], np.int32, [44, 127]),
        ("i8", "ui32", [-1], np.int8, [2**32 - 1]),
        ("i32", "i1", [0, 5, -1], np.int32, [False, True, True]),
        ("i32", "f32", [2**24 + 1], np.int32, [2.0**24]),
    ],
)
def test_casts_are_zant_cast(source, target, xs, dtype, want):
    got = unary("uop.cast {a} : {t} to {r}", source, xs, dtype, target)
    assert list(got) == want


def test_bitcast_keeps_the_bits():
    got = unary("uop.bitcast {a} : {t} to {r}", "f32", [-0.0, 1.0], np.float32, "i32")
    assert list(got) == [-(2**31), 0x3F800000]


def test_fused_mulacc_rounds_once():
    # (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24: lost by a rounded product, kept by a fused one.
    body = """
  %x = uop.define_global "input" 0 "x" : !uop.buffer<1xf32>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<2xf32>
  %c0 = uop.const 0 : index
  %c1 = uop.const 1 : index
  %p = uop.gep %x[%c0] : !uop.buffer<1xf32>
  %a = uop.load %p : f32
  %f = uop.define_acc -1.00048828125 : f32
  uop.mulacc fused %f, %a, %a : !uop.acc<f32>, f32
  %u = uop.define_acc -1.00048828125 : f32
  uop.mulacc %u, %a, %a : !uop.acc<f32>, f32
  %fv = uop.acc_get %f : !uop.acc<f32>, f32
  %uv = uop.acc_get %u : !uop.acc<f32>, f32
  %q0 = uop.gep %o[%c0] : !uop.buffer<2xf32>
  uop.store %fv, %q0 : f32
  %q1 = uop.gep %o[%c1] : !uop.buffer<2xf32>
  uop.store %uv, %q1 : f32"""
    (out,) = run_body(body, [np.array([1 + 2.0**-12], np.float32)], [])
    assert list(out) == [2.0**-24, 0.0]


# -- vectors, memory, accumulators --------------------------------------------------------------


def test_strided_vector_load_store_reduce_and_select():
    body = """
  %x = uop.define_global "input" 0 "x" : !uop.buffer<8xi8>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<9xi8>
  %c0 = uop.const 0 : index
  %c1 = uop.const 1 : index
  %c8 = uop.const 8 : index
  %p = uop.gep %x[%c0] : !uop.buffer<8xi8>
  %v = uop.vload %p stride 2 : vector<4xi8>
  %q = uop.gep %x[%c1] : !uop.buffer<8xi8>
  %w = uop.vload %q stride 2 : vector<4xi8>
  %s = uop.add %v, %w : vector<4xi8>
  %m = uop.cmplt %v, %w : vector<4xi8>
  %z = uop.where %m, %s, %v : vector<4xi1>, vector<4xi8>
  %out = uop.gep %o[%c0] : !uop.buffer<9xi8>
  uop.vstore %z, %out stride 2 : vector<4xi8>
  %r = uop.reduce_add %s : vector<4xi8> to i8
  %last = uop.gep %o[%c8] : !uop.buffer<9xi8>
  uop.store %r, %last : i8"""
    x = np.array([1, 2, 100, 50, 7, 3, -5, -1], np.int8)
    (out,) = run_body(body, [x], [])
    v, w = x[0::2].astype(int), x[1::2].astype(int)
    s = (v + w + 128) % 256 - 128
    assert list(out[0:8:2]) == list(np.where(v < w, s, v))
    assert int(out[8]) == (int(s.sum()) + 128) % 256 - 128


def test_a_gep_outside_its_buffer_traps_naming_it():
    body = """
  %x = uop.define_global "input" 0 "x" : !uop.buffer<4xf32>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<4xf32>
  uop.range %i = 0 to 5 {
    %p = uop.gep inbounds %x[%i] : !uop.buffer<4xf32>
    %a = uop.load %p : f32
    %q = uop.gep %o[%i] : !uop.buffer<4xf32>
    uop.store %a, %q : f32
  }"""
    with pytest.raises(InterpreterTrap, match="element 4 of 'x', which has 4 elements"):
        run_body(body, [np.zeros(4, np.float32)], [])


def test_planned_scratch_buffers_share_the_arena_bytes():
    # Two buffers the plan puts at one offset: the second store overwrites the first's value.
    body = """
  uop.arena "scratch" size 16 align 16
  %o = uop.define_global "output" 0 "o" : !uop.buffer<1xi32>
  %a = uop.define_local "a" at 0 : !uop.buffer<1xi32>
  %b = uop.define_local "b" at 0 : !uop.buffer<1xi32>
  %c0 = uop.const 0 : index
  %seven = uop.const 7 : i32
  %nine = uop.const 9 : i32
  %pa = uop.gep %a[%c0] : !uop.buffer<1xi32>
  %pb = uop.gep %b[%c0] : !uop.buffer<1xi32>
  uop.store %seven, %pa : i32
  uop.store %nine, %pb : i32
  %v = uop.load %pa : i32
  %q = uop.gep %o[%c0] : !uop.buffer<1xi32>
  uop.store %v, %q : i32"""
    (out,) = run_body(body, [], [])
    assert list(out) == [9]


def test_arm_dsp_ops_compute_sxtb16_and_smlad():
    body = """
  %x = uop.define_global "input" 0 "x" : !uop.buffer<8xi8>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<1xi32>
  %c0 = uop.const 0 : index
  %c4 = uop.const 4 : index
  %px = uop.gep %x[%c0] : !uop.buffer<8xi8>
  %pw = uop.gep %x[%c4] : !uop.buffer<8xi8>
  %a = arm_dsp.load_word %px : !uop.ptr<i8>
  %b = arm_dsp.load_word %pw : !uop.ptr<i8>
  %a02 = arm_dsp.sxtb16 %a : i32
  %b02 = arm_dsp.sxtb16 %b : i32
  %a13 = arm_dsp.sxtb16 %a ror 8 : i32
  %b13 = arm_dsp.sxtb16 %b ror 8 : i32
  %acc = uop.const 1000 : i32
  %s = arm_dsp.smlad %a02, %b02, %acc : i32
  %t = arm_dsp.smlad %a13, %b13, %s : i32
  %q = uop.gep %o[%c0] : !uop.buffer<1xi32>
  uop.store %t, %q : i32"""
    x = np.array([-128, 127, -3, 5, -128, -128, 77, -9], np.int8)
    (out,) = run_body(body, [x], [])
    assert int(out[0]) == 1000 + int(np.dot(x[:4].astype(int), x[4:].astype(int)))


def test_an_op_outside_uop_is_refused_by_name():
    module = parse(
        """
func.func @main() {
  %c = arith.constant 1 : i32
  func.return
}"""
    )
    with pytest.raises(ZantError, match="cannot run 'arith.constant'"):
        run_module(module, [])


# -- comparing two runs -------------------------------------------------------------------------


def test_first_difference_is_exact_for_integers_and_tolerant_for_floats():
    assert first_difference([np.array([1, 2], np.int8)], [np.array([1, 3], np.int8)]).index == 1
    a = np.array([1.0, float("nan"), 1e-7], np.float32)
    assert first_difference([a], [a * np.float32(1 + 2e-6)]) is None
    found = first_difference([a], [np.array([1.0, float("nan"), 0.5], np.float32)])
    assert found is not None and found.index == 2 and found.max_abs_diff == pytest.approx(0.5)
