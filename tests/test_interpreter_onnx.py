"""The onnx-dialect interpreter (`zant.interpreter.onnx_reference`) and `check_each_pass` from the
first pass: onnx-level results against the ONNX reference on the whole model, Zant's integer ops
against their lowering (exactly), seeded bugs in an onnx-level pass and in a lowering named, and
the default pipelines of the bench models checked from their first pass."""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser
from xdsl.passes import PassPipeline
from xdsl.transforms import get_all_passes

from zant.driver import make_context
from zant.frontend.onnx_importer import import_model, import_model_bytes
from zant.interpreter import (
    PassChangedResult,
    PassChecker,
    check_each_pass,
    onnx_graph_functions,
    onnx_opsets,
    run_module,
    run_onnx_function,
    seeded_arrays,
)
from zant.interpreter import onnx_reference
from zant.interpreter.onnx_reference import onnx_input_types
from zant.pipelines import pipeline_for
from zant.plugins import all_passes, load_module, passes_in

ROOT = Path(__file__).resolve().parent.parent
INPUTS = ROOT / "tests" / "filecheck" / "Inputs"
SUITE = ROOT / "tests" / "filecheck"


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def passes(spec: str):
    return PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, spec).passes


def plugin(name: str):
    (found,) = passes_in(load_module(str(INPUTS / name)))
    return found()


def test_onnx_module_runs_as_the_reference_runs_the_whole_model(tmp_path):
    """The mlp of make_model.py, op by op, equals onnx.reference on the model file."""
    import importlib.util

    from onnx.reference import ReferenceEvaluator

    spec = importlib.util.spec_from_file_location("make_model", INPUTS / "make_model.py")
    make_model = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_model)
    model = make_model.mlp()
    module = import_model_bytes(model.SerializeToString(), str(INPUTS), None)
    (function,) = onnx_graph_functions(module)
    x = seeded_arrays(onnx_input_types(function), 3)
    (got,) = run_onnx_function(function, x, onnx_opsets(module))
    (want,) = ReferenceEvaluator(model).run(None, {"x": x[0].reshape(1, 3)})
    np.testing.assert_array_equal(got, want.reshape(-1))


def test_requantization_is_the_definition_not_the_lowerings():
    """The interpreter requantizes as ONNX defines it: exactly, ties to even (QuantizeLinear's
    rounding). onnx-to-uop's fixed point (a 31-bit multiplier m0 and a shift, ties up) agrees
    with it except at ties and where total·M is within the multiplier's error of one: measured
    here on 20 float32 multipliers x 4,000 sums, every difference is 1 and at such a point."""
    from zant.passes.onnx_to_uop import quant

    half = Fraction(1, 2)
    ties = onnx_reference._quantize(np.array([1, 3, -1, -3, 5]), half, 0, None, np.dtype(np.int8))
    assert ties.tolist() == [0, 2, 0, -2, 2]
    rng = np.random.default_rng(0)
    totals = rng.integers(-(2**20), 2**20, 4000)
    differing = 0
    for multiplier in rng.uniform(1e-4, 1.0, 20).astype(np.float32):
        ratio = Fraction(float(multiplier))
        want = onnx_reference._quantize(totals, ratio, 0, None, np.dtype(np.int32)).astype(np.int64)
        m0, shift = (int(v[0]) for v in quant.fixed_point_multipliers(np.array([float(multiplier)])))
        lowered = (totals * m0 + (1 << (shift - 1))) >> shift
        for index in np.flatnonzero(lowered != want):
            exact = int(totals[index]) * ratio
            assert abs(int(lowered[index]) - int(want[index])) == 1
            distance = abs(exact - (exact.numerator // exact.denominator) - half)
            assert distance <= abs(int(totals[index])) * Fraction(1, 2**30), (multiplier, totals[index])
            differing += 1
    # ties: M = 0.5 makes every odd sum one, where the plain step rounds up and ONNX to even (the
    # lowering adds a tie check where m · 2^-shift is M exactly: quant.exact_channels)
    m0, shift = (int(v[0]) for v in quant.fixed_point_multipliers(np.array([0.5])))
    odd = np.array([1, 3, -1, -3])
    assert ((odd * m0 + (1 << (shift - 1))) >> shift).tolist() == [1, 2, 0, -1]
    assert onnx_reference._quantize(odd, half, 0, None, np.dtype(np.int8)).tolist() == [0, 2, 0, -2]


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_a_quantized_matmul_at_a_tie_rounds_to_even(target):
    """Q(DQ(x, 1) @ DQ(w, 0.5), 1) with x = [1, 0, 0, 0] and w all ones: y = 0.5 exactly, which
    QuantizeLinear rounds to 0; (sum·m0 + 2^(shift-1)) >> shift alone gives 1, so the lowering
    checks for the tie where its multiplier is exact, and the pass checker (its reference the
    definition) finds every pass equal to it."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [
        helper.make_node("DequantizeLinear", ["x", "one", "zero"], ["xf"]),
        helper.make_node("DequantizeLinear", ["w", "half", "zero"], ["wf"]),
        helper.make_node("MatMul", ["xf", "wf"], ["yf"]),
        helper.make_node("QuantizeLinear", ["yf", "one", "zero"], ["y"]),
    ]
    constants = {"w": np.ones((4, 4), np.int8), "one": np.float32(1.0), "half": np.float32(0.5), "zero": np.int8(0)}
    graph = helper.make_graph(
        nodes, "tie", [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 4])],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in constants.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    module = import_model_bytes(model.SerializeToString(), str(INPUTS), None)
    checker = PassChecker(module, inputs=[np.array([[1, 0, 0, 0]], np.int8)])
    ctx = make_context()
    for p in passes(pipeline_for(target)):
        p.apply(ctx, module)
        checker.after(p.name)


def _constant(name: str, array: np.ndarray, mlir_type: str) -> str:
    flat = ", ".join(str(int(v)) if array.dtype.kind in "iu" else repr(float(v)) for v in array.reshape(-1))
    shape = "x".join(map(str, array.shape))
    tensor = f"tensor<{shape}x{mlir_type}>" if array.ndim else f"tensor<{mlir_type}>"
    value = f"dense<{flat}>" if array.ndim == 0 else f"dense<[{flat}]>" if array.ndim == 1 else None
    if value is None:
        nested = np.array2string(array, separator=", ", threshold=10**6).replace("\n", "")
        value = f"dense<{nested}>"
    return f"    %{name} = onnx.Constant() {{value = {value} : {tensor}}} : () -> {tensor}\n"


def _integer_ops_module() -> str:
    """QLinearAdd, QLinearMul, QLinearLeakyRelu, QLinearSoftmax, LookupTable and fixed-point
    QLinearConv / QLinearMatMul on int8 inputs, one output each."""
    rng = np.random.default_rng(1)
    body = ""
    for name, value in (("sa", 0.05), ("sb", 0.03), ("sc", 0.07), ("sy", 0.125)):
        body += _constant(name, np.array(value, np.float32), "f32")
    for name, value in (("za", 3), ("zb", -7), ("zc", 1), ("zy", -128)):
        body += _constant(name, np.array(value, np.int8), "i8")
    body += _constant("table", rng.integers(-128, 128, 256).astype(np.int8), "i8")
    body += _constant("w", rng.integers(-127, 128, (4, 2, 3, 3)).astype(np.int8), "i8")
    body += _constant("sw", rng.uniform(0.001, 0.01, 4).astype(np.float32), "f32")
    body += _constant("zw", np.zeros(4, np.int8), "i8")
    body += _constant("bias", rng.integers(-500, 500, 4).astype(np.int32), "i32")
    body += _constant("m", rng.integers(-127, 128, (8, 6)).astype(np.int8), "i8")
    body += _constant("sm", rng.uniform(0.001, 0.01, 6).astype(np.float32), "f32")
    body += _constant("zm", np.zeros(6, np.int8), "i8")
    t, s, z = "tensor<2x8xi8>", "tensor<f32>", "tensor<i8>"
    img, out = "tensor<1x2x5x5xi8>", "tensor<1x4x5x5xi8>"
    ops = f"""    %add = onnx.QLinearAdd(%a, %sa, %za, %b, %sb, %zb, %sc, %zc) : ({t}, {s}, {z}, {t}, {s}, {z}, {s}, {z}) -> {t}
    %mul = onnx.QLinearMul(%a, %sa, %za, %b, %sb, %zb, %sc, %zc) : ({t}, {s}, {z}, {t}, {s}, {z}, {s}, {z}) -> {t}
    %leaky = onnx.QLinearLeakyRelu(%a, %sa, %za, %sc, %zc) {{alpha = 0.1 : f32}} : ({t}, {s}, {z}, {s}, {z}) -> {t}
    %soft = onnx.QLinearSoftmax(%a, %sa, %za, %sy, %zy) : ({t}, {s}, {z}, {s}, {z}) -> {t}
    %look = onnx.LookupTable(%a, %table) : ({t}, tensor<256xi8>) -> {t}
    %conv = onnx.QLinearConv(%x, %sa, %za, %w, %sw, %zw, %sc, %zc, %bias) {{pads = array<i64: 1, 1, 1, 1>, zant.fixed_point}} : ({img}, {s}, {z}, tensor<4x2x3x3xi8>, tensor<4xf32>, tensor<4xi8>, {s}, {z}, tensor<4xi32>) -> {out}
    %mm = onnx.QLinearMatMul(%a, %sa, %za, %m, %sm, %zm, %sc, %zc) {{zant.fixed_point}} : ({t}, {s}, {z}, tensor<8x6xi8>, tensor<6xf32>, tensor<6xi8>, {s}, {z}) -> tensor<2x6xi8>
"""
    results = [("add", t), ("mul", t), ("leaky", t), ("soft", t), ("look", t), ("conv", out), ("mm", "tensor<2x6xi8>")]
    return f"""builtin.module attributes {{onnx.opset = 22 : i64}} {{
  func.func @main(%a: {t}, %b: {t}, %x: {img}) -> ({", ".join(r[1] for r in results)}) {{
{body}{ops}    func.return {", ".join("%" + r[0] for r in results)} : {", ".join(r[1] for r in results)}
  }}
}}
"""


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_zant_integer_ops_equal_their_lowering_exactly(seed):
    """onnx-to-uop keeps every result of Zant's integer ops bit for bit (int8 outputs are
    compared exactly), so the checker can tell a wrong lowering from a legal one."""
    module = parse(_integer_ops_module())
    checker = PassChecker(module, seed=seed)
    onnx_level = [o.copy() for o in checker.outputs()]
    for p in passes("onnx-to-uop"):
        p.apply(make_context(), module)
        checker.after(p.name)
    assert checker.report.checked == ["onnx-to-uop"]
    assert [level for _stage, level in checker.report.levels] == ["onnx", "uop"]
    assert all(o.dtype == np.int8 for o in onnx_level) and any(np.ptp(o) > 10 for o in onnx_level)
    for got, want in zip(checker.outputs(), onnx_level):
        np.testing.assert_array_equal(got, want)


def test_a_wrong_onnx_level_fold_is_named_before_lowering():
    text = (SUITE / "passes" / "check-each-pass-onnx-batchnorm.mlir").read_text()
    report = check_each_pass(parse(text), passes("fold-batchnorm,dce,onnx-to-uop"), make_context())
    assert report.checked == ["fold-batchnorm", "dce", "onnx-to-uop"]
    with pytest.raises(PassChangedResult, match=r"pass 'buggy-fold-batchnorm' changed output 0: max abs diff") as found:
        check_each_pass(parse(text), [plugin("buggy_fold_batchnorm.py"), *passes("dce,onnx-to-uop")], make_context())
    assert found.value.pass_name == "buggy-fold-batchnorm"


def test_a_wrong_lowering_is_named():
    text = (SUITE / "passes" / "check-each-pass-onnx-batchnorm.mlir").read_text()
    with pytest.raises(PassChangedResult) as found:
        check_each_pass(parse(text), [*passes("fold-batchnorm,dce"), plugin("buggy_onnx_to_uop.py")], make_context())
    assert found.value.pass_name == "buggy-onnx-to-uop" and found.value.output == 0


def test_a_module_the_reference_cannot_run_is_unchecked_not_an_error():
    text = (SUITE / "passes" / "check-each-pass-onnx-unchecked.mlir").read_text()
    report = check_each_pass(parse(text), passes("dce"), make_context())
    assert report.checked == [] and report.unchecked == ["dce"]
    assert set(report.why) == {"input", "dce"}
    assert "the ONNX reference fails on 'onnx.Gather'" in report.why["dce"]


def _bench_model(name: str, folder: Path) -> Path:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import models
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return models.model_file(name, folder)


def _check_default_pipeline(name: str, target: str, folder: Path, stop: str | None = None) -> list[str]:
    """Check `target`'s pipeline on the bench model `name` from its first pass (up to `stop`);
    the interpreted module's output at the end against the uop interpreter's."""
    module = import_model(str(_bench_model(name, folder)))
    pipeline = passes(pipeline_for(target))
    if stop is not None:
        pipeline = pipeline[: [p.name for p in pipeline].index(stop) + 1]
    checker = PassChecker(module)
    ctx = make_context()
    for p in pipeline:
        p.apply(ctx, module)
        checker.after(p.name)
    assert checker.report.unchecked == [], checker.report.why
    levels = [level for _stage, level in checker.report.levels]
    assert levels[:2] == ["onnx", "onnx"] and levels[-1] == "uop"
    for got, want in zip(run_module(module, checker.inputs["main"]), checker.outputs()):
        np.testing.assert_array_equal(got, want)
    return checker.report.checked


def test_digits_host_pipeline_is_checked_from_its_first_pass(tmp_path):
    checked = _check_default_pipeline("digits", "host", tmp_path)
    stages = [p.name for p in passes(pipeline_for("host"))]
    graph = stages[stages.index("fold-qoperator") : stages.index("onnx-to-uop") + 1]
    assert {"fold-qdq", "normalize-exports", "assign-host-layouts"} <= set(graph)
    start = checked.index("fold-qoperator")
    assert checked[start : start + len(graph)] == graph  # each graph stage and the lowering, checked


@pytest.mark.slow
def test_digits_cortex_m4_pipeline_is_checked_from_its_first_pass(tmp_path):
    assert "arm-dsp-dot" in _check_default_pipeline("digits", "cortex-m4", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_kws_int8_is_checked_through_fold_qdq_and_onnx_to_uop(tmp_path, target):
    """The int8 KWS model's folds (fold-qdq's QLinearConv, fixed point) and its lowering keep
    its result (the later passes take the uop interpreter minutes on it)."""
    checked = _check_default_pipeline("kws_int8", target, tmp_path, stop="onnx-to-uop")
    assert "fold-qdq" in checked and checked[-1] == "onnx-to-uop"


def test_conformance_localize_names_the_pass_or_the_side(monkeypatch):
    """`zant conformance --localize`: a passing case agrees after every pass (a mismatch would
    be the Zig side's), wrong expected data differ at the first interpreted module, and a wrong
    lowering in the pipeline is named."""
    import copy

    import zant.plugins
    from zant.tools import conformance

    cases = conformance.load_cases()
    index = next(k for k, case in enumerate(cases) if case.name == "test_relu")
    case = cases[index]
    host = pipeline_for("host")
    assert conformance.localize_case(case, index, host, "frozen", 0.0, 0.0).startswith(
        "the interpreter agrees with the expected outputs after every pass"
    )
    wrong = copy.copy(case)
    wrong.data_sets = [(ins, [y + 1 for y in outs]) for ins, outs in case.data_sets]
    assert conformance.localize_case(wrong, index, host, "frozen", 0.0, 0.0) == (
        "the input module (the first interpreted) already differs from the expected outputs"
    )
    buggy = type(plugin("buggy_onnx_to_uop.py"))
    everything = zant.plugins.all_passes()
    monkeypatch.setattr(zant.plugins, "all_passes", lambda: {**everything, buggy.name: lambda: buggy})
    culprit = conformance.localize_case(case, index, host.replace("onnx-to-uop", "buggy-onnx-to-uop"), "frozen", 0.0, 0.0)
    assert culprit.startswith("pass 'buggy-onnx-to-uop' changed output 0: max abs diff")
