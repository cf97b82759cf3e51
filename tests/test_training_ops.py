"""ai.onnx.preview.training optimizers (Adagrad, Adam, Momentum) and Optional ops on tensors end
to end: numerics in ReleaseSafe against ONNX's reference evaluator and the backend suite's
expected outputs, with R and T as run-time inputs; the errors for what is not supported."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import onnx
import pytest
from e2e import check_model, compile_and_run
from onnx import TensorProto, helper

from zant.errors import ZantError

TRAINING = "ai.onnx.preview.training"

SUITE_CASES = (
    "test_adagrad",
    "test_adagrad_multiple",
    "test_adam",
    "test_adam_multiple",
    "test_momentum",
    "test_momentum_multiple",
    "test_nesterov_momentum",
    "test_optional_get_element_tensor",
    "test_optional_has_element_empty_no_input_tensor_input",
    "test_optional_has_element_empty_no_input_name_optional_input",
)


@functools.cache
def _suite_cases() -> dict:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {c.name: c for c in collect_testcases() if c.name in SUITE_CASES}


@pytest.mark.parametrize("name", SUITE_CASES)
def test_backend_suite_case(name):
    case = _suite_cases()[name]
    for inputs, outputs in case.data_sets:
        feeds = {v.name: x for v, x in zip(case.model.graph.input, inputs, strict=True)}
        got = check_model(case.model, feeds)
        for g, want in zip(got, outputs, strict=True):
            np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-7)


def _optimizer_model(op_type, shapes, states, elem=TensorProto.FLOAT, **attrs):
    """One optimizer node over tensors of `shapes`: R, T, then X*, G*, and each state's tensors."""
    names = [f"{kind}{i}" for kind in ("X", "G", *states) for i in range(len(shapes))]
    outputs = [f"{kind}{i}_new" for kind in ("X", *states) for i in range(len(shapes))]
    shape_of = lambda name: shapes[int(name.rstrip("_new")[1:])]  # noqa: E731
    node = helper.make_node(op_type, ["R", "T", *names], outputs, domain=TRAINING, **attrs)
    graph = helper.make_graph(
        [node],
        op_type,
        [helper.make_tensor_value_info("R", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("T", TensorProto.INT64, []),
         *(helper.make_tensor_value_info(n, elem, shape_of(n)) for n in names)],
        [helper.make_tensor_value_info(n, elem, shape_of(n)) for n in outputs],
    )
    imports = [helper.make_opsetid("", 21), helper.make_opsetid(TRAINING, 1)]
    return helper.make_model(graph, opset_imports=imports)


def _feeds(model, step, seed=0):
    rng = np.random.default_rng(seed)
    feeds = {"R": np.array(0.1, np.float32), "T": np.array(step, np.int64)}
    for value in model.graph.input[2:]:
        dtype = helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type)
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        sample = rng.standard_normal(shape)
        # Accumulated squared gradients (H) are never negative.
        feeds[value.name] = (np.abs(sample) if value.name.startswith("H") else sample).astype(dtype)
    return feeds


OPTIMIZERS = {
    "adagrad": ("Adagrad", ("H",), dict(decay_factor=0.3, epsilon=1e-6, norm_coefficient=0.05)),
    "adam": ("Adam", ("V", "H"), dict(alpha=0.8, beta=0.95, epsilon=1e-3, norm_coefficient=0.02, norm_coefficient_post=0.1)),
    "momentum": ("Momentum", ("V",), dict(alpha=0.7, beta=0.4, mode="standard", norm_coefficient=0.01)),
    "nesterov": ("Momentum", ("V",), dict(alpha=0.7, beta=0.4, mode="nesterov", norm_coefficient=0.01)),
}


@pytest.mark.parametrize("step", [0, 3], ids=["first_update", "later_update"])
@pytest.mark.parametrize("kind", OPTIMIZERS)
def test_optimizer_groups_of_several_shapes(kind, step):
    """Three tensors of different ranks in one node; T = 0 takes the first update's rule
    (no bias correction, gradient coefficient 1), T > 0 the other."""
    op_type, states, attrs = OPTIMIZERS[kind]
    model = _optimizer_model(op_type, [[3], [2, 3], [1, 2, 2]], states, **attrs)
    check_model(model, _feeds(model, step), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["adagrad", "adam"])
def test_optimizer_in_double(kind):
    op_type, states, attrs = OPTIMIZERS[kind]
    model = _optimizer_model(op_type, [[5]], states, TensorProto.DOUBLE, **attrs)
    check_model(model, _feeds(model, 7), rtol=1e-12, atol=1e-12)


def test_momentum_with_an_unknown_mode_is_refused():
    model = _optimizer_model("Momentum", [[2]], ("V",), alpha=0.7, beta=0.4, mode="heavy", norm_coefficient=0.0)
    model.graph.node[0].name = "sgd"
    with pytest.raises(ZantError, match=r"node 'sgd' \(onnx.training.Momentum\): mode 'heavy' \(expected 'standard' or 'nesterov'\)"):
        compile_and_run(model, _feeds(model, 1))


def _gradient_model(nodes, y: str = "y") -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("dy_dx", TensorProto.FLOAT, [2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(TRAINING, 1)])


def test_gradient_is_expanded_in_reverse_mode():
    """expand-gradients: y = (x · x - x) / (x + 3), broadcast against a [1] constant; dy/dx
    summed over y's elements (a seed of ones)."""
    three = helper.make_tensor("three", TensorProto.FLOAT, [1], [3.0])
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["square"]),
        helper.make_node("Sub", ["square", "x"], ["top"]),
        helper.make_node("Add", ["x", "three"], ["bottom"]),
        helper.make_node("Div", ["top", "bottom"], ["quotient"]),
        helper.make_node("Neg", ["quotient"], ["y"]),
        helper.make_node("Gradient", ["x", "three"], ["dy_dx", "dy_dthree"], domain=TRAINING, xs=["x", "three"], y="y"),
    ]
    model = _gradient_model(nodes)
    model.graph.initializer.append(three)
    model.graph.output.append(helper.make_tensor_value_info("dy_dthree", TensorProto.FLOAT, [1]))
    x = np.array([0.5, -2.0], np.float32)
    dx, dthree = compile_and_run(model, {"x": x})
    want_dx = -((2 * x - 1) * (x + 3) - (x * x - x)) / (x + 3) ** 2
    want_dthree = np.sum((x * x - x) / (x + 3) ** 2, keepdims=True)[:1]
    np.testing.assert_allclose(dx, want_dx, rtol=1e-6)
    np.testing.assert_allclose(dthree, want_dthree, rtol=1e-6)


def test_gradient_refusals_name_the_node():
    """y computed after the Gradient node, and an op without a derivative rule on the way."""
    after = _gradient_model([
        helper.make_node("Gradient", ["x"], ["dy_dx"], domain=TRAINING, name="grad", xs=["x"], y="y"),
        helper.make_node("Relu", ["x"], ["y"]),
    ])
    with pytest.raises(ZantError, match=r"node 'grad' \(Gradient\): its y 'y' is not computed before it"):
        compile_and_run(after, {"x": np.zeros(2, np.float32)})
    through = _gradient_model([
        helper.make_node("Relu", ["x"], ["y"], name="relu"),
        helper.make_node("Gradient", ["x"], ["dy_dx"], domain=TRAINING, name="grad", xs=["x"], y="y"),
    ])
    with pytest.raises(ZantError, match=r"expand-gradients: 'grad' \(onnx.training.Gradient\) differentiates through 'relu' \(onnx.Relu\), which has no derivative rule"):
        compile_and_run(through, {"x": np.zeros(2, np.float32)})


def test_optional_ops_on_a_tensor_and_on_nothing():
    """OptionalGetElement of a tensor is the tensor; OptionalHasElement says whether its input
    is given, in a graph that also computes."""
    nodes = [
        helper.make_node("OptionalGetElement", ["x"], ["got"]),
        helper.make_node("Relu", ["got"], ["y"]),
        helper.make_node("OptionalHasElement", ["x"], ["given"]),
        helper.make_node("OptionalHasElement", [""], ["absent"]),
    ]
    graph = helper.make_graph(
        nodes, "optional",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("given", TensorProto.BOOL, []),
         helper.make_tensor_value_info("absent", TensorProto.BOOL, [])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    y, given, absent = check_model(model, {"x": x})
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    assert given.shape == absent.shape == () and bool(given) and not bool(absent)


def test_conformance_gives_these_cases_to_the_compiler():
    """Training ops and Optional ops are classified like other ops (compiled, or unsupported
    naming the op); an `Optional` node (an optional-typed value) too, since `resolve-sequences`
    resolves optionals known at compile time (ebdc8f9)."""
    from types import SimpleNamespace

    from zant.passes.onnx_to_uop import supported_ops
    from zant.tools.conformance import classify

    def record(model):
        case = SimpleNamespace(name="test_x", model=model, data_sets=[], rtol=1e-3, atol=1e-7)
        return classify(case, 0, supported_ops())

    op_type, states, attrs = OPTIMIZERS["adam"]
    assert record(_optimizer_model(op_type, [[2]], states, **attrs)).status == ""
    gradient = _optimizer_model(op_type, [[2]], states, **attrs)
    gradient.graph.node[0].op_type = "Gradient"
    assert record(gradient).status == ""  # expand-gradients rewrites it
    gradient.graph.node[0].op_type = "Backward"
    found = record(gradient)
    assert found.status == "unsupported" and found.missing_ops == [f"{TRAINING}.Backward"]
    x, flag = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]), helper.make_tensor_value_info("b", TensorProto.BOOL, [])
    has = helper.make_model(helper.make_graph([helper.make_node("OptionalHasElement", ["x"], ["b"])], "g", [x], [flag]))
    assert record(has).status == ""
    wrapped = helper.make_model(helper.make_graph(
        [helper.make_node("Optional", ["x"], ["o"]), helper.make_node("OptionalHasElement", ["o"], ["b"])], "g", [x], [flag]
    ))
    assert record(wrapped).status == ""
