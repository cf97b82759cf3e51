"""Control flow unrolled at compile time (zant/frontend/control_flow.py): the unrolled graph has
no If/Loop/Scan left, and the compiled model matches the reference evaluator (onnxruntime for
reverse Scan directions) on the original."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from e2e import check_model, compile_and_run, random_inputs
from onnx import TensorProto, helper, numpy_helper
from ort_reference import check_with_onnxruntime

from zant.errors import ZantError
from zant.frontend.control_flow import CONTROL_FLOW_OPS, unroll_control_flow

F = TensorProto.FLOAT


def tensor(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "control_flow", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def branch(name, nodes, output, shape=(2, 3)):
    return helper.make_graph(nodes, name, [], [tensor(output, list(shape))])


def if_node(condition, output, tag):
    """then: x + 1, else: x · x (both read x from the enclosing scope)."""
    then_branch = branch(f"{tag}_then", [helper.make_node("Add", ["x", "one"], [f"{tag}_t"])], f"{tag}_t")
    else_branch = branch(f"{tag}_else", [helper.make_node("Mul", ["x", "x"], [f"{tag}_e"])], f"{tag}_e")
    return helper.make_node("If", [condition], [output], then_branch=then_branch, else_branch=else_branch)


def no_control_flow_left(m):
    unrolled = unroll_control_flow(m)
    onnx.checker.check_model(unrolled)
    assert not {n.op_type for n in unrolled.graph.node} & CONTROL_FLOW_OPS
    return unrolled


def test_if_constant_and_runtime_conditions():
    m = model(
        [
            if_node("yes", "a", "c1"),  # a constant condition: the then branch, inlined
            helper.make_node("Equal", ["two", "three"], ["no"]),
            if_node("no", "b", "c2"),  # a foldable condition: the else branch
            if_node("flag", "c", "r1"),  # a run-time condition: both branches and a Where
            helper.make_node("Not", ["flag"], ["not_flag"]),
            helper.make_node("Reshape", ["not_flag", "shape_1x1x1"], ["not_flag_1x1x1"]),
            if_node("not_flag_1x1x1", "d", "r2"),  # a one-element condition of higher rank than x
        ],
        [tensor("x", [2, 3]), tensor("flag", [], TensorProto.BOOL)],
        [tensor(n, [2, 3]) for n in "abcd"],
        [const("yes", True), const("one", np.float32(1)), const("two", 2), const("three", 3), const("shape_1x1x1", [1, 1, 1])],
    )
    unrolled = no_control_flow_left(m)
    assert [n.op_type for n in unrolled.graph.node].count("Where") == 2
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    check_model(m, {"x": x, "flag": np.array(True)})


def loop_body():
    """y ← y + x·i; the scan output is y; the condition is i < 2 (so 3 iterations run); an If
    on i == 0 inside the body folds once i is a constant."""
    nodes = [
        helper.make_node("Cast", ["i"], ["i_f"], to=F),
        helper.make_node("Mul", ["x", "i_f"], ["xi"]),
        helper.make_node("Add", ["y_in", "xi"], ["y_sum"]),
        helper.make_node("Equal", ["i", "zero"], ["first"]),
        helper.make_node(
            "If",
            ["first"],
            ["y_out"],
            then_branch=branch("first_then", [helper.make_node("Neg", ["y_sum"], ["neg"])], "neg"),
            else_branch=branch("first_else", [helper.make_node("Identity", ["y_sum"], ["same"])], "same"),
        ),
        helper.make_node("Less", ["i", "two"], ["cond_out"]),
        helper.make_node("Identity", ["y_out"], ["y_scan"]),
    ]
    return helper.make_graph(
        nodes,
        "body",
        [tensor("i", [], TensorProto.INT64), tensor("cond_in", [], TensorProto.BOOL), tensor("y_in", [2, 3])],
        [tensor("cond_out", [], TensorProto.BOOL), tensor("y_out", [2, 3]), tensor("y_scan", [2, 3])],
    )


def scan_body():
    """state ← state · a + b (a read forwards along axis 1, b backwards along axis 0); the
    scan outputs are the state and a − b."""
    nodes = [
        helper.make_node("Mul", ["s_in", "a"], ["s_times_a"]),
        helper.make_node("Add", ["s_times_a", "b"], ["s_out"]),
        helper.make_node("Sub", ["a", "b"], ["diff"]),
        helper.make_node("Identity", ["s_out"], ["s_scan"]),
    ]
    return helper.make_graph(
        nodes,
        "scan_body",
        [tensor("s_in", [3]), tensor("a", [3]), tensor("b", [3])],
        [tensor("s_out", [3]), tensor("s_scan", [3]), tensor("diff", [3])],
    )


def test_loop_and_scan():
    m = model(
        [
            helper.make_node("Loop", ["trips", "", "y0"], ["y_final", "ys"], body=loop_body()),
            helper.make_node(
                "Scan",
                ["s0", "sa", "sb"],
                ["s_final", "states", "diffs"],
                body=scan_body(),
                num_scan_inputs=2,
                scan_input_axes=[1, 0],
                scan_input_directions=[0, 1],
                scan_output_axes=[0, -1],
                scan_output_directions=[1, 0],
            ),
        ],
        [tensor("x", [2, 3]), tensor("y0", [2, 3]), tensor("s0", [3]), tensor("sa", [3, 4]), tensor("sb", [4, 3])],
        [
            tensor("y_final", [2, 3]),
            tensor("ys", [3, 2, 3]),
            tensor("s_final", [3]),
            tensor("states", [4, 3]),
            tensor("diffs", [3, 4]),
        ],
        [const("trips", np.int64(5)), const("zero", np.int64(0)), const("two", np.int64(2))],
    )
    no_control_flow_left(m)
    # The reference evaluator refuses reverse scan directions.
    check_with_onnxruntime(m, random_inputs(m))


@pytest.mark.parametrize(
    "nodes, inputs, initializers, message",
    [
        (
            [helper.make_node("Loop", ["trips", "", "y0"], ["y_final", "ys"], body=loop_body())],
            [tensor("trips", [], TensorProto.INT64), tensor("x", [2, 3]), tensor("y0", [2, 3])],
            [const("zero", np.int64(0)), const("two", np.int64(2))],
            "trip count is only known at run time",
        ),
        (
            [
                helper.make_node(
                    "If",
                    ["flag"],
                    ["y_final"],
                    then_branch=branch("t", [helper.make_node("Identity", ["x"], ["tx"])], "tx"),
                    else_branch=branch("e", [helper.make_node("Identity", ["y0"], ["ty"])], "ty", (3, 2)),
                )
            ],
            [tensor("flag", [], TensorProto.BOOL), tensor("x", [2, 3]), tensor("y0", [3, 2])],
            [],
            "do not have one declared static shape",
        ),
    ],
)
def test_what_cannot_be_unrolled_is_a_clear_error(nodes, inputs, initializers, message):
    m = model(nodes, inputs, [tensor("y_final", [2, 3])], initializers)
    with pytest.raises(ZantError, match=message):
        unroll_control_flow(m)
    with pytest.raises(ZantError, match=message):
        compile_and_run(m, {})
