"""Loops whose trip count or condition is only known at run time, unrolled for the extent the
model declares for their scan outputs (`zant/frontend/control_flow.py`, `onnx.Guard`).

Compiled once each (host, ReleaseSafe), called with values that run the loop exactly the declared
number of times (the reference's result) and values that do not (Status.BAD_PARAMETER; the outputs
left as they were when the graph inputs alone decide it, before any copy of the body has run)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from tests.test_runtime_parameters import Compiled, _model, _tensor
from zant.dialects.abi import Status

FLOAT, INT64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _body(nodes, carried_in, outputs):
    """A Loop body: (iteration, condition, carried ...) -> (condition, carried ..., scans ...)."""
    return helper.make_graph(
        nodes,
        "body",
        [_tensor("i", INT64, []), _tensor("cond_in", BOOL, []), *carried_in],
        outputs,
    )


def _accumulate(cond_out: list) -> helper.GraphProto:
    """y += i + 1 each iteration; the running sum is also the scan output."""
    nodes = [
        helper.make_node("Cast", ["i"], ["i_f"], to=FLOAT),
        helper.make_node("Add", ["y_in", "i_f"], ["y_mid"]),
        helper.make_node("Add", ["y_mid", "one"], ["y_out"]),
        helper.make_node("Identity", ["y_out"], ["scan"]),
        *cond_out,
    ]
    body = _body(
        nodes,
        [_tensor("y_in", FLOAT, [1])],
        [_tensor("cond_out", BOOL, []), _tensor("y_out", FLOAT, [1]), _tensor("scan", FLOAT, [1])],
    )
    body.initializer.append(helper.make_tensor("one", FLOAT, [1], [1.0]))
    return body


def _trip_count_and_condition_inputs():
    """Loop(trip_count, cond, y) with both run-time inputs; the scan output declares 4 rows."""
    body = _accumulate([helper.make_node("Identity", ["cond_in"], ["cond_out"])])
    loop = helper.make_node("Loop", ["trip_count", "cond", "y"], ["y_final", "ys"], body=body)
    return _model(
        [loop],
        [_tensor("trip_count", INT64, []), _tensor("cond", BOOL, []), _tensor("y", FLOAT, [1])],
        [_tensor("y_final", FLOAT, [1]), _tensor("ys", FLOAT, [4, 1])],
    )


def test_run_time_trip_count_and_condition(tmp_path):
    compiled = Compiled(_trip_count_and_condition_inputs(), tmp_path)
    y = np.array([0.5], np.float32)
    compiled.check(np.array(4, np.int64), np.array(True), y)
    for trips, cond in ((3, True), (5, True), (0, True), (-1, True), (4, False)):
        compiled.refuses(np.array(trips, np.int64), np.array(cond), y)


def _condition_from_the_data():
    """No trip count: the body goes on while the running sum is below `limit`; 3 rows declared."""
    body = _accumulate([helper.make_node("Less", ["y_out_s", "limit"], ["cond_out"])])
    body.node.insert(3, helper.make_node("Squeeze", ["y_out"], ["y_out_s"]))
    loop = helper.make_node("Loop", ["", "go", "y"], ["y_final", "ys"], body=body)
    return _model(
        [loop],
        [_tensor("go", BOOL, []), _tensor("limit", FLOAT, []), _tensor("y", FLOAT, [1])],
        [_tensor("y_final", FLOAT, [1]), _tensor("ys", FLOAT, [3, 1])],
    )


def test_condition_computed_by_the_body(tmp_path):
    # From y = 0 the sums are 1, 3, 6, 10 ...: the loop goes on while the sum is below the
    # limit, so it runs exactly 3 iterations for 3 < limit <= 6.
    compiled = Compiled(_condition_from_the_data(), tmp_path)
    y = np.zeros(1, np.float32)
    for limit in (3.5, 6.0):
        compiled.check(np.array(True), np.array(limit, np.float32), y)
    compiled.refuses(np.array(False), np.array(6.0, np.float32), y)  # no iteration at all
    # Decided after the copies of the body (which may have written the outputs).
    for limit in (3.0, 6.5, 100.0):
        status, _ = compiled(np.array(True), np.array(limit, np.float32), y)
        assert status == Status.BAD_PARAMETER


def _range_as_a_loop():
    """Range(start, limit, delta) as its function body writes it: a Loop of
    max(ceil((limit - start) / delta), 0) iterations; the output declares 3 elements."""
    nodes = [
        helper.make_node("Sub", ["limit", "start"], ["span"]),
        helper.make_node("Div", ["span", "delta"], ["steps"]),
        helper.make_node("Ceil", ["steps"], ["ceiled"]),
        helper.make_node("Relu", ["ceiled"], ["count"]),
        helper.make_node("Cast", ["count"], ["trips"], to=INT64),
        helper.make_node("Cast", ["count"], ["go"], to=BOOL),
    ]
    body = _body(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Add", ["prev", "delta"], ["current"]),
            helper.make_node("Identity", ["prev"], ["element"]),
        ],
        [_tensor("prev", FLOAT, [])],
        [_tensor("cond_out", BOOL, []), _tensor("current", FLOAT, []), _tensor("element", FLOAT, [])],
    )
    nodes.append(helper.make_node("Loop", ["trips", "go", "start"], ["last", "output"], body=body))
    return _model(
        nodes,
        [_tensor(name, FLOAT, []) for name in ("start", "limit", "delta")],
        [_tensor("output", FLOAT, [3])],
    )


def test_range_function_body_with_run_time_bounds(tmp_path):
    compiled = Compiled(_range_as_a_loop(), tmp_path)
    scalars = lambda *values: [np.array(v, np.float32) for v in values]  # noqa: E731
    for start, limit, delta in ((1, 4, 1), (10, 4, -2), (0, 1, 0.4)):
        status, (output,) = compiled(*scalars(start, limit, delta))
        assert status == 0
        # (ONNX's reference evaluator stacks scalar scan outputs as [3, 1]; the model says [3].)
        np.testing.assert_allclose(output, np.arange(start, limit, delta, dtype=np.float32), rtol=1e-6)
    for start, limit, delta in ((1, 5, 1), (1, 3, 1), (4, 1, 1), (0, 1, 1)):
        compiled.refuses(*scalars(start, limit, delta))
