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


def run_body(body: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run `body` (which declares its globals) as `func.func @main()` on `inputs`."""
    return run_module(parse("func.func @main() {\n" + body + "\n  func.return\n}"), inputs)


def binary(op: str, t: str, xs, ys, dtype) -> np.ndarray:
    """`uop.<op>` of x[i], y[i] into out[i], for every i."""
    n = len(xs)
    body = f"""
  %x = uop.define_global "input" 0 "x" : !uop.buffer<{n}x{t}>
  %y = uop.define_global "input" 1 "y" : !uop.buffer<{n}x{t}>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<{n}x{t}>
  uop.range %i = 0 to {n} {{
    %pa = uop.gep %x[%i] : !uop.buffer<{n}x{t}>
    %pb = uop.gep %y[%i] : !uop.buffer<{n}x{t}>
    %po = uop.gep %o[%i] : !uop.buffer<{n}x{t}>
    %a = uop.load %pa : {t}
    %b = uop.load %pb : {t}
    %r = uop.{op} %a, %b : {t}
    uop.store %r, %po : {t}
  }}"""
    (out,) = run_body(body, [np.array(xs, dtype), np.array(ys, dtype)])
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
    (out,) = run_body(body, [np.array(xs, dtype)])
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
    (out,) = run_body(body, [np.array([1 + 2.0**-12], np.float32)])
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
    (out,) = run_body(body, [x])
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
        run_body(body, [np.zeros(4, np.float32)])


def test_planned_scratch_buffers_share_the_arena_bytes():
    # Two buffers the plan puts at one offset: the second store overwrites the first's value.
    body = """
  abi.arena "scratch" size 16 align 16
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
    (out,) = run_body(body, [])
    assert list(out) == [9]


def test_scratch_arenas_of_different_memories_do_not_share_bytes():
    # place-memories: one scratch arena per board memory, offsets relative to each.
    body = """
  abi.arena "scratch" size 16 align 16 memory "dtcm"
  abi.arena "scratch" size 16 align 16 memory "sram"
  %o = uop.define_global "output" 0 "o" : !uop.buffer<2xi32>
  %a = uop.define_local "a" at 0 in "dtcm" : !uop.buffer<1xi32>
  %b = uop.define_local "b" at 0 in "sram" : !uop.buffer<1xi32>
  %c0 = uop.const 0 : index
  %c1 = uop.const 1 : index
  %seven = uop.const 7 : i32
  %nine = uop.const 9 : i32
  %pa = uop.gep %a[%c0] : !uop.buffer<1xi32>
  %pb = uop.gep %b[%c0] : !uop.buffer<1xi32>
  uop.store %seven, %pa : i32
  uop.store %nine, %pb : i32
  %va = uop.load %pa : i32
  %vb = uop.load %pb : i32
  %q0 = uop.gep %o[%c0] : !uop.buffer<2xi32>
  uop.store %va, %q0 : i32
  %q1 = uop.gep %o[%c1] : !uop.buffer<2xi32>
  uop.store %vb, %q1 : i32"""
    (out,) = run_body(body, [])
    assert list(out) == [7, 9]


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
    (out,) = run_body(body, [x])
    assert int(out[0]) == 1000 + int(np.dot(x[:4].astype(int), x[4:].astype(int)))


def test_arm_mve_ops_gather_and_multiply_accumulate_across_lanes():
    body = """
  %x = uop.define_global "input" 0 "x" : !uop.buffer<32xi8>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<1xi32>
  %c0 = uop.const 0 : index
  %c16 = uop.const 16 : index
  %p = uop.gep %x[%c0] : !uop.buffer<32xi8>
  %g = arm_mve.vldrb_gather %p [0, 2, 4, 6, 8, 10, 12, 14] : !uop.ptr<i8> -> vector<8xi16>
  %h = arm_mve.vldrb_gather %p [1, 3, 5, 7, 9, 11, 13, 15] : !uop.ptr<i8> -> vector<8xi16>
  %q = uop.gep %x[%c16] : !uop.buffer<32xi8>
  %a = uop.vload %p : vector<16xi8>
  %b = uop.vload %q : vector<16xi8>
  %acc = uop.const -7 : i32
  %s = arm_mve.vmlava %acc, %a, %b : vector<16xi8>
  %t = arm_mve.vmlava %s, %g, %h : vector<8xi16>
  %r = uop.gep %o[%c0] : !uop.buffer<1xi32>
  uop.store %t, %r : i32"""
    x = np.random.default_rng(5).integers(-128, 128, 32).astype(np.int8)
    (out,) = run_body(body, [x])
    wide = x.astype(int)
    assert int(out[0]) == -7 + int(wide[:16] @ wide[16:]) + int(wide[0:16:2] @ wide[1:16:2])


def test_every_op_of_the_loop_level_dialects_has_an_implementation():
    from zant.dialects import abi, arm_dsp, arm_mve, image, uop
    from zant.interpreter.functions import SUPPORTED

    for dialect in (uop.UOp, abi.ABI, arm_dsp.ArmDsp, arm_mve.ArmMve, image.Image):
        missing = [op.name for op in dialect.operations if op not in SUPPORTED]
        assert not missing, f"the interpreter cannot run {missing}"


def test_a_failed_uop_check_stops_the_run_with_its_status():
    body = """
  %x = uop.define_global "input" 0 "x" : !uop.buffer<1xi64>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<1xi64>
  %c0 = uop.const 0 : index
  %p = uop.gep %x[%c0] : !uop.buffer<1xi64>
  %v = uop.load %p : i64
  %two = uop.const 2 : i64
  %ok = uop.cmpeq %v, %two : i64
  abi.check %ok, 4
  %q = uop.gep %o[%c0] : !uop.buffer<1xi64>
  uop.store %v, %q : i64"""
    assert list(run_body(body, [np.array([2], np.int64)])[0]) == [2]
    with pytest.raises(InterpreterTrap, match="returns status 4"):
        run_body(body, [np.array([3], np.int64)])


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


# -- the lit suite's numerics cases: every pass checked by the interpreter, then the
# interpreter against the Zig build of the final module --------------------------------------

SUITE = ROOT / "tests" / "filecheck"

MAKE_MODEL_KINDS = {"mlp": {}, "conv": {}, "old_opset": {}, "passthrough": {}, "hostile": {}, "symbolic": {"x": [4, 3]}}
"""The models the frontend lit tests generate with Inputs/make_model.py (input shapes fixed)."""
SLOW_MAKE_MODEL_KINDS = {"big": {}}

def _variants(module) -> list[tuple[str, list[str]]]:
    """(case suffix, pipelines to try in order) for a lit module: an onnx-dialect one goes through
    the host's and the Cortex-M4's pipelines, each a case; a uop one through the host's uop passes
    or, where they do not fit, planning and printing only."""
    from zant.pipelines import LOOP_STAGES, PLAN_STAGES, PRINT_STAGES, pipeline_for

    if any(op.name.startswith("onnx.") for op in module.walk()):
        return [(f" @{target}", [pipeline_for(target)]) for target in ("host", "cortex-m4")]
    return [("", [
        ",".join((*LOOP_STAGES, "coalesce-loops", "split-index-sets{width=16}", "vectorize{width=16}", *PLAN_STAGES,
                  *PRINT_STAGES)),
        ",".join((*PLAN_STAGES, *PRINT_STAGES)),
    ])]


def _checked_through(module, pipelines: list[str], available) -> tuple[object | None, str]:
    """The module after the first of `pipelines` it goes through with every pass checked, or
    None and why not."""
    import warnings

    from xdsl.passes import PassPipeline

    outcome = "skipped: no pipeline"
    for pipeline in pipelines:
        candidate = module.clone()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check_each_pass(
                    candidate,
                    PassPipeline.parse_spec(available, pipeline).passes,
                    make_context(),
                    seed=0,
                    after_each=lambda _p, m: m.verify(),
                )
        except PassChangedResult as error:
            return None, f"changed: {error}"
        except ZantError as error:
            outcome = f"skipped: {str(error).splitlines()[0]}"
            if "traps" in str(error):
                return None, outcome  # its input traps (data used as an index): Zig would too
            continue
        except Exception as error:  # a pipeline that does not fit this case
            outcome = f"skipped: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            continue
        return candidate, ""
    return None, outcome


def _lit_modules(slow: bool):
    """(case name, module of one graph function, input shapes) for every lit case that parses,
    verifies, has a graph function and expects no pass to refuse it: each function of an .mlir
    split on its own, and the models the frontend tests generate."""
    import importlib.util

    from xdsl.dialects.builtin import ModuleOp

    from zant.frontend.onnx_importer import import_model_bytes
    from zant.interpreter import graph_functions

    for path in sorted(SUITE.rglob("*.mlir")):
        if "Output" in path.parts:
            continue
        for k, chunk in enumerate(path.read_text().split("// -----")):
            if "expected-error" in chunk:  # a module a pass must refuse (an illegal arena plan ...)
                continue
            try:
                module = parse(chunk)
                module.verify()
            except Exception:  # the invalid.mlir cases, and the frontend tests' RUN-only files
                continue
            for function in graph_functions(module):
                alone = ModuleOp([function.clone()])
                yield f"{path.relative_to(SUITE)}#{k}@{function.sym_name.data}", alone
    spec = importlib.util.spec_from_file_location("make_model", INPUTS / "make_model.py")
    make_model = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_model)
    kinds = MAKE_MODEL_KINDS | (SLOW_MAKE_MODEL_KINDS if slow else {})
    for kind, shapes in kinds.items():
        model = getattr(make_model, kind)()
        yield f"Inputs/make_model.py {kind}", import_model_bytes(model.SerializeToString(), str(INPUTS), shapes)


ZIG_RTOL, ZIG_ATOL = 1e-6, 1e-6
"""Interpreter against Zig: the same operations in the same order, so the same floats but for
the math library (exp, tanh … may differ in the last place)."""

RUNNER = """
import pickle, sys
from zant.runtime import CompiledModel
library, cases, out = sys.argv[1], pickle.load(open(sys.argv[2], "rb")), sys.argv[3]
results = {}
for name, inputs_in, outputs_in, inputs in cases:
    print(name, flush=True)
    results[name] = CompiledModel(library, name, inputs_in, outputs_in)(*inputs)
pickle.dump(results, open(out, "wb"))
"""


def _run_built(library: Path, cases: list, folder: Path) -> dict:
    """The outputs of each built case, run in a child process (a ReleaseSafe trap kills only
    it: then {"_died": which case it was running})."""
    import pickle

    spec = folder / "cases.pkl"
    out = folder / "outputs.pkl"
    spec.write_bytes(pickle.dumps([(c[1], c[2], c[3], c[4]) for c in cases]))
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(library), str(spec), str(out)], capture_output=True, text=True
    )
    if done.returncode != 0:
        running = done.stdout.split()[-1:] or ["?"]
        return {"_died": f"the Zig build died running {running[0]}: {done.stderr.strip()[-200:]}"}
    return pickle.loads(out.read_bytes())


def check_lit_cases(folder: Path, slow: bool) -> dict[str, str]:
    """Run every lit case through its pipelines with `check_each_pass`, then build the final
    modules into one library and compare them with the interpreter; {case: outcome}."""
    from xdsl.transforms import get_all_passes

    from zant.plugins import all_passes
    from zant.tools import batch

    available = {**get_all_passes(), **all_passes()}
    outcomes: dict[str, str] = {}
    cases = []
    for lit_case, module in _lit_modules(slow):
        for suffix, pipelines in _variants(module):
            case = lit_case + suffix
            final, outcomes[case] = _checked_through(module, pipelines, available)
            if final is not None:
                built = _emit_case(final, f"c{len(cases)}", folder)
                if isinstance(built, str):
                    outcomes[case] = built
                else:
                    cases.append((case, *built))
                    outcomes[case] = "built"
    if not cases:
        return outcomes
    library, broken, _ = batch.build_batch(folder, [c[1] for c in cases], "lit")
    for case, name, *_ in cases:
        if name in broken:
            outcomes[case] = f"zig build failed: {broken[name]}"
    if library is None:
        return outcomes
    runnable = [c for c in cases if c[1] not in broken]
    got = _run_built(library, runnable, folder)
    for case, name, _, _, _, expected, defined in runnable:
        if name not in got:
            outcomes[case] = got.get("_died", "not run")
            continue
        difference = first_difference(expected, got[name], ZIG_RTOL, ZIG_ATOL, defined)
        outcomes[case] = "agrees" if difference is None else f"differs: {difference}"
    return outcomes


def _emit_case(final, name: str, folder: Path, inputs: list[np.ndarray] | None = None):
    """Interpret a final module on `inputs` (default seeded ones) and write its Zig as `name`
    into `folder`: (name, input and output signatures, inputs, outputs, defined masks), or why
    not."""
    from zant.driver import emit_artifacts
    from zant.interpreter import InterpreterTrap, graph_functions, run_defined, seeded_inputs
    from zant.interpreter.run import input_buffers
    from zant.interpreter.semantics import dtype_of
    from zant.signature import TensorSignature

    (function,) = graph_functions(final)
    inputs = seeded_inputs(function, 0) if inputs is None else inputs
    try:
        expected, defined = run_defined(function, inputs)
        source, _header, _plan = emit_artifacts(final, name)
    except (InterpreterTrap, ZantError) as error:
        return f"skipped: {str(error).splitlines()[0]}"
    files = source if isinstance(source, dict) else {f"{name}.zig": source}
    for file_name, content in files.items():
        (folder / file_name).write_bytes(content if isinstance(content, bytes) else content.encode())
    signature_in = [
        TensorSignature(f"in{i}", [t.size.data], dtype_of(t.element_type).name)
        for i, (_, t) in enumerate(input_buffers(function))
    ]
    signature_out = [TensorSignature(f"out{i}", [len(e)], e.dtype.name) for i, e in enumerate(expected)]
    return name, signature_in, signature_out, inputs, expected, defined


def test_lit_numerics_cases_agree_with_their_zig_builds(tmp_path):
    """Every lit case the interpreter can run goes through the host's passes with every pass
    checked, and its final module agrees with its Zig build (elements nothing writes aside)."""
    outcomes = check_lit_cases(tmp_path, slow=False)
    _assert_lit_outcomes(outcomes)


@pytest.mark.slow
def test_lit_numerics_sweep_with_the_large_models(tmp_path):
    outcomes = check_lit_cases(tmp_path, slow=True)
    _assert_lit_outcomes(outcomes)


def _assert_lit_outcomes(outcomes: dict[str, str]) -> None:
    bad = {
        case: outcome
        for case, outcome in outcomes.items()
        if not (outcome == "agrees" or outcome.startswith("skipped:"))
    }
    assert not bad, "\n".join(f"{case}: {outcome}" for case, outcome in bad.items())
    agreeing = [case for case, outcome in outcomes.items() if outcome == "agrees"]
    assert len(agreeing) >= 60, f"only {len(agreeing)} lit cases ran: {outcomes}"
    assert any(case.startswith("Inputs/make_model.py conv") for case in agreeing)
    assert any(case.startswith("passes/arm-dsp-dot.mlir") for case in agreeing)  # SXTB16/SMLAD
    assert any(case.startswith("passes/vectorize.mlir") for case in agreeing)


# -- whole models: the interpreter against the Zig build of the same pipeline ------------------


def int8_conv_model():
    """x int8 → QLinearConv (3x3, 8 → 6 channels, per-tensor scales, a bias) → int8 y."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)
    inits = [
        numpy_helper.from_array(np.array(0.05, np.float32), "xs"),
        numpy_helper.from_array(np.array(3, np.int8), "xz"),
        numpy_helper.from_array(rng.integers(-127, 128, (6, 8, 3, 3)).astype(np.int8), "w"),
        numpy_helper.from_array(np.array(0.01, np.float32), "ws"),
        numpy_helper.from_array(np.array(0, np.int8), "wz"),
        numpy_helper.from_array(np.array(0.2, np.float32), "ys"),
        numpy_helper.from_array(np.array(-2, np.int8), "yz"),
        numpy_helper.from_array(rng.integers(-500, 500, 6).astype(np.int32), "b"),
    ]
    node = helper.make_node(
        "QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"], pads=[1, 1, 1, 1]
    )
    graph = helper.make_graph(
        [node], "int8_conv",
        [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 8, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 6, 5, 5])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def float_mlp_model():
    """Gemm 24 → 40 → Relu → Gemm 40 → 10 → Softmax: the host pipeline vectorizes it."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(4)
    inits = [
        numpy_helper.from_array(rng.standard_normal((40, 24)).astype(np.float32), "w1"),
        numpy_helper.from_array(rng.standard_normal(40).astype(np.float32), "b1"),
        numpy_helper.from_array(rng.standard_normal((10, 40)).astype(np.float32), "w2"),
    ]
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Gemm", ["r", "w2"], ["z"], transB=1),
        helper.make_node("Softmax", ["z"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 24])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


@pytest.mark.parametrize(
    "make, target, marker",
    [
        (float_mlp_model, "host", "uop.reduce_add"),  # the host pipeline's vector code
        (int8_conv_model, "cortex-m4", "uop.shr"),  # int8, requantized in fixed point
        (int8_conv_model, "cortex-m55", "arm_mve.vmlava"),  # Helium dot products
        (int8_conv_model, "host", "uop.shr"),
    ],
)
def test_interpreter_agrees_with_the_zig_build_of_a_model(make, target, marker):
    from e2e import compile_and_run, random_inputs

    from zant.driver import compile_to_module
    from zant.interpreter import graph_functions, run_defined
    from zant.pipelines import pipeline_for

    model = make()
    planned = compile_to_module(model, target)
    assert marker in str(planned.module)
    feeds = random_inputs(model, seed=2)
    (function,) = graph_functions(planned.module)
    ours, defined = run_defined(function, [feeds[s.name] for s in planned.inputs])
    assert all(mask.all() for mask in defined)
    zig = compile_and_run(model, feeds, pipeline=pipeline_for(target))
    for got, want in zip(ours, zig):
        want = want.reshape(-1)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
        else:
            np.testing.assert_array_equal(got, want)


def test_check_each_pass_names_the_seeded_bug_through_the_python_api():
    from zant.plugins import load_module, passes_in
    from zant.passes.fuse_loops import FuseLoopsPass

    (buggy,) = passes_in(load_module(str(INPUTS / "buggy_fuse_loops.py")))
    text = (SUITE / "passes" / "check-each-pass.mlir").read_text()
    report = check_each_pass(parse(text), [FuseLoopsPass()], make_context(), seed=7)
    assert report.checked == ["fuse-loops"]
    with pytest.raises(PassChangedResult, match=r"pass 'buggy-fuse-loops' changed output 0: max abs diff") as found:
        check_each_pass(parse(text), [FuseLoopsPass(), buggy()], make_context(), seed=7)
    assert found.value.pass_name == "buggy-fuse-loops"


def test_a_pass_that_leaves_the_module_as_it_was_is_checked_without_a_run(monkeypatch):
    """check_each_pass interprets the module again only after a pass that changed it: here
    fuse-loops finds nothing to fuse (before and after plan-arenas) and is checked by the last
    run (the same IR computes the same results); plan-arenas changes the module and runs; a
    seeded bug after an unchanged module is still run and named."""
    from zant.interpreter import check
    from zant.passes.fuse_loops import FuseLoopsPass
    from zant.passes.plan_arenas import PlanArenasPass
    from zant.plugins import load_module, passes_in

    runs = []
    interpret = check.PassChecker._interpret
    monkeypatch.setattr(check.PassChecker, "_interpret", lambda self, stage: runs.append(stage) or interpret(self, stage))
    text = (SUITE / "passes" / "check-each-pass.mlir").read_text()
    passes = [FuseLoopsPass(), PlanArenasPass(), FuseLoopsPass()]
    report = check_each_pass(parse(text), passes, make_context(), seed=7)
    assert report.checked == ["fuse-loops", "plan-arenas", "fuse-loops"] and len(report.levels) == 4
    assert runs == [None, "plan-arenas"]
    (buggy,) = passes_in(load_module(str(INPUTS / "buggy_fuse_loops.py")))
    with pytest.raises(PassChangedResult, match="pass 'buggy-fuse-loops' changed output 0"):
        check_each_pass(parse(text), [FuseLoopsPass(), buggy()], make_context(), seed=7)
    assert runs[-2:] == [None, "buggy-fuse-loops"]


def test_every_pass_is_checked_from_the_first():
    """The onnx-level passes run on the ONNX reference, onnx-to-uop is the first uop module."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.frontend.onnx_importer import import_model_bytes
    from zant.pipelines import pipeline_for
    from zant.plugins import all_passes

    module = import_model_bytes(float_mlp_model().SerializeToString(), str(INPUTS), None)
    passes = PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, pipeline_for("cortex-m4")).passes
    report = check_each_pass(module, passes, make_context(), seed=1)
    assert report.unchecked == [] and report.why == {}
    assert report.checked == [p.name for p in passes]
    levels = [level for _stage, level in report.levels]
    folds = [p.name for p in passes].index("onnx-to-uop")  # the onnx-level passes before it
    assert levels == ["onnx"] * (folds + 1) + ["uop"] * (len(passes) - folds)  # and the input module


def test_random_graph_localize_hook():
    """`random_graphs --localize`: a graph whose interpreted result matches the reference after
    every pass points at the Zig side; one whose expected outputs are off points at the first
    uop module."""
    import copy

    from zant.tools import random_graphs as rg

    graph = next(g for g in (rg.prepared(0, i) for i in range(10)) if not isinstance(g, str))
    assert rg.localize(graph, None).startswith("the interpreter agrees with the reference after every pass")
    wrong = copy.copy(graph)
    wrong.expected = [y + np.ones_like(y) for y in graph.expected]
    assert rg.localize(wrong, None) == (
        "the module after 'onnx-to-uop' (the first in uop) already differs from the reference"
    )


# -- edge values: every ALU op and cast on NaN, infinities, signed zeros, subnormals, integer
# extremes, against its Zig build ------------------------------------------------------------

FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5, 3.7, -3.7, 1e-40, 1e30, -1e30,
               float("inf"), float("-inf"), float("nan"), 0.1, 100.0, 88.5, -88.5, 1e-5]
TRANSCENDENTAL = {"exp", "log", "tanh", "erf", "sin", "cos", "tan", "asin", "acos", "atan",
                  "sinh", "cosh", "asinh", "acosh", "atanh", "pow"}
"""Ops the interpreter computes with NumPy's math library and Zig with its own: a few ulp apart
(`EDGE_ULPS`); every other op must give the same bits (NaN payloads aside)."""
EDGE_ULPS = {"erf f64": 16, "pow f64": 16}
"""How many ulp a transcendental op may differ by (4 unless named): zant_erf is within 16 ulp
in f64 (its docstring; 8 measured here), std.math.pow and NumPy's pow by 6 on these values."""


def _edge_values(t: str) -> tuple[np.ndarray, np.ndarray, np.dtype]:
    """x and y operands of type `t`: the edge values, and a shuffle of them (integer divisors
    that would trap replaced)."""
    from zant.interpreter.semantics import dtype_of
    from xdsl.parser import Parser as AttrParser

    dtype = dtype_of(AttrParser(make_context(), t).parse_type())
    if dtype.kind == "f":
        with np.errstate(over="ignore"):  # 1e30 is inf in f16
            x = np.array(FLOAT_EDGES, np.float64).astype(dtype)
    else:
        info = np.iinfo(dtype)
        values = [0, 1, 2, 3, 7, 8, 31, 64, 100, info.max, info.max - 1, info.min, info.min + 1]
        values += [-v for v in (1, 2, 7, 100)] if info.min < 0 else [200, 255, 128, 127]
        x = np.array([v for v in values if info.min <= v <= info.max], dtype)
    y = np.roll(x, 3)
    return x, y, dtype


def _edge_module(op: str, source: str, target: str | None = None, lanes: int = 0) -> tuple[str, list[np.ndarray]]:
    """A uop function applying `op` (an ALU op name, or `cast`/`bitcast`) to every x[i] (and
    y[i]) into o[i]: its text and inputs. With `lanes`, on vectors of that many lanes (a compare
    then selects between x and y lane by lane)."""
    x, y, dtype = _edge_values(source)
    if lanes:
        return _vector_edge_module(op, source, target, lanes, x, y)
    if op in ("div", "rem") and dtype.kind != "f":
        y = np.where(y == 0, 1, y).astype(dtype)
        if dtype.kind == "i":
            y = np.where((x == np.iinfo(dtype).min) & (y == -1), 2, y).astype(dtype)
    if op in ("shl", "shr"):
        y = (np.arange(len(x)) % 12 - 2).astype(dtype) if dtype.kind == "i" else (np.arange(len(x)) % 12).astype(dtype)
        y[-1] = dtype.itemsize * 8  # a shift by the width
    n, r = len(x), target or source
    compare = op.startswith("cmp")
    result = "i1" if compare else r
    binary = op in ("add", "sub", "mul", "div", "rem", "max", "min", "pow", "and", "or", "xor", "shl", "shr") or compare
    if op in ("cast", "bitcast"):
        expr = f"uop.{op} %a : {source} to {r}"
    elif binary:
        expr = f"uop.{op} %a, %b : {source}"
    else:
        expr = f"uop.{op} %a : {source}"
    text = f"""
func.func @main() {{
  %x = uop.define_global "input" 0 "x" : !uop.buffer<{n}x{source}>
  %y = uop.define_global "input" 1 "y" : !uop.buffer<{n}x{source}>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<{n}x{result}>
  uop.range %i = 0 to {n} {{
    %px = uop.gep %x[%i] : !uop.buffer<{n}x{source}>
    %py = uop.gep %y[%i] : !uop.buffer<{n}x{source}>
    %po = uop.gep %o[%i] : !uop.buffer<{n}x{result}>
    %a = uop.load %px : {source}
    %b = uop.load %py : {source}
    %v = {expr}
    uop.store %v, %po : {result}
  }}
  func.return
}}"""
    return text, [x, y]


def _vector_edge_module(op, source, target, lanes, x, y):
    n = -(-len(x) // lanes) * lanes
    x, y = np.resize(x, n), np.resize(y, n)
    r = target or source
    vs, vr = f"vector<{lanes}x{source}>", f"vector<{lanes}x{r}>"
    if op == "cast":
        expr = f"uop.cast %a : {vs} to {vr}"
    elif op.startswith("cmp"):
        expr = f"uop.{op} %a, %b : {vs}\n    %v = uop.where %m, %a, %b : vector<{lanes}xi1>, {vs}"
        expr = expr.replace("uop.", "%m = uop.", 1).removeprefix("%m = ")
    elif op in ("neg", "abs", "sqrt"):
        expr = f"uop.{op} %a : {vs}"
    else:
        expr = f"uop.{op} %a, %b : {vs}"
    first = "%m = " if op.startswith("cmp") else "%v = "
    text = f"""
func.func @main() {{
  %x = uop.define_global "input" 0 "x" : !uop.buffer<{n}x{source}>
  %y = uop.define_global "input" 1 "y" : !uop.buffer<{n}x{source}>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<{n}x{r}>
  %s = uop.define_global "output" 1 "s" : !uop.buffer<1x{r}>
  %acc = uop.define_acc 0 : {r} to {vr}
  uop.range %i = 0 to {n} step {lanes} {{
    %px = uop.gep %x[%i] : !uop.buffer<{n}x{source}>
    %py = uop.gep %y[%i] : !uop.buffer<{n}x{source}>
    %po = uop.gep %o[%i] : !uop.buffer<{n}x{r}>
    %a = uop.vload %px : {vs}
    %b = uop.vload %py : {vs}
    {first}{expr}
    uop.vstore %v, %po : {vr}
    uop.mulacc %acc, %v, %v : !uop.acc<{vr}>, {vr}
  }}
  %c0 = uop.const 0 : index
  %total = uop.acc_get %acc : !uop.acc<{vr}>, {vr}
  %sum = uop.reduce_add %total : {vr} to {r}
  %ps = uop.gep %s[%c0] : !uop.buffer<1x{r}>
  uop.store %sum, %ps : {r}
  func.return
}}"""
    return text, [x, y]


def _edge_cases() -> list[tuple[str, str, str | None, int]]:
    """(op, operand type, result type of a cast, lanes or 0 for scalars)."""
    from zant.dialects import uop

    cases: list = []
    for t in ("f32", "f64", "f16"):
        ops = [*uop.BINARY_OPS, *uop.FLOAT_BINARY_OPS, *uop.UNARY_OPS, *uop.FLOAT_UNARY_OPS, *uop.COMPARE_OPS]
        cases += [(op, t, None) for op in ops if not (t == "f16" and op in TRANSCENDENTAL)]
    for t in ("i8", "ui8", "i32", "i64", "ui32"):
        ops = [*uop.BINARY_OPS, *uop.INTEGER_BINARY_OPS, *uop.UNARY_OPS, *uop.INTEGER_UNARY_OPS, *uop.COMPARE_OPS]
        cases += [(op, t, None) for op in ops if not (op in ("abs", "neg", "sign") and t.startswith("u"))]
    for source, target in [("f32", "i8"), ("f32", "ui8"), ("f32", "i32"), ("f32", "i64"), ("f64", "i32"),
                           ("f64", "f32"), ("f32", "f16"), ("i32", "f32"), ("i64", "f32"), ("i8", "ui32"),
                           ("i32", "i8"), ("ui8", "i8"), ("i64", "i1"), ("f32", "i1"), ("i32", "f64")]:
        cases.append(("cast", source, target))
    cases += [("bitcast", "f32", "i32"), ("bitcast", "i64", "f64")]
    cases = [(op, source, target, 0) for op, source, target in cases]
    compares = [*uop.COMPARE_OPS]
    for t, lanes in (("f32", 8), ("f64", 4), ("f16", 8)):
        cases += [(op, t, None, lanes) for op in ("add", "sub", "mul", "div", "max", "min", "neg", "abs", "sqrt", *compares)]
    for t, lanes in (("i8", 16), ("ui8", 16), ("i32", 4), ("i64", 2)):
        ops = ["add", "sub", "mul", "max", "min", "and", "or", "xor", *compares]
        cases += [(op, t, None, lanes) for op in ops + ([] if t.startswith("u") else ["neg", "abs"])]
    for source, target in (("i8", "i32"), ("ui8", "i16"), ("i32", "f32"), ("f32", "f64"), ("f16", "f32")):
        cases.append(("cast", source, target, 4))
    return cases


def _bitwise_difference(label: str, inputs, want: np.ndarray, have: np.ndarray, ulps: dict) -> str | None:
    """Where the interpreter's and the Zig's outputs differ in their bits (NaN payloads aside;
    a transcendental op within its ulp budget), or None."""
    from zant.tools import batch

    if want.dtype.kind == "f":
        same = (want.view(np.uint8).reshape(len(want), -1) == have.view(np.uint8).reshape(len(have), -1)).all(axis=1)
        same |= np.isnan(want) & np.isnan(have)
        if label.split()[0] in TRANSCENDENTAL:
            ulps[label] = max(ulps.get(label, 0.0), batch.ulp_distance(want, have))
            if ulps[label] <= EDGE_ULPS.get(label, 4):
                return None
    else:
        same = want == have
    if same.all():
        return None
    bad = np.flatnonzero(~same)
    operands = f"x={inputs[0][bad].tolist()} y={inputs[1][bad].tolist()} " if len(want) == len(inputs[0]) else ""
    return f"{label}: {operands}interpreter {want[bad].tolist()} zig {have[bad].tolist()}"


def test_alu_edge_values_match_the_zig_build(tmp_path):
    from zant.driver import run_pipeline
    from zant.pipelines import PLAN_STAGES, PRINT_STAGES
    from zant.tools import batch

    built, ulps = [], {}
    for op, source, target, lanes in _edge_cases():
        text, inputs = _edge_module(op, source, target, lanes)
        module = parse(text)
        run_pipeline(module, ",".join((*PLAN_STAGES, *PRINT_STAGES)))
        name = f"e{len(built)}"
        case = _emit_case(module, name, tmp_path, inputs)
        label = f"{op} {source}{' to ' + target if target else ''}{f' x{lanes}' if lanes else ''}"
        assert not isinstance(case, str), f"{label}: {case}"
        built.append((label, *case))
    library, broken, _ = batch.build_batch(tmp_path, [b[1] for b in built], "edges")
    assert library is not None and not broken, broken
    got = _run_built(library, built, tmp_path)
    assert "_died" not in got, got.get("_died")
    wrong = []
    for label, name, _, _, inputs, wants, _ in built:
        for want, have in zip(wants, got[name]):
            problem = _bitwise_difference(label, inputs, want, have, ulps)
            if problem:
                wrong.append(problem)
    assert not wrong, "\n".join(wrong)
    print("largest ulp distances:", sorted(ulps.items(), key=lambda kv: -kv[1])[:6])
