"""Run-time bounded sequences (docs/sequences.md): a sequence whose length or element shapes only
the data decide (SplitToSequence by a run-time split, SequenceInsert at a run-time position among
elements of different shapes, a Loop building a sequence over a run-time trip count) compiled
with a capacity and called, against ONNX's reference, with values inside and outside it: an
out-of-range value is STATUS_BAD_PARAMETER, never a read or write outside the buffers.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import zant
from zant.errors import ZantError
from zant.signature import TensorSignature, valid_outputs

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _model(nodes, inputs, outputs, opset=21) -> onnx.ModelProto:
    return helper.make_model(helper.make_graph(nodes, "g", inputs, outputs), opset_imports=[helper.make_opsetid("", opset)])


def _same(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    assert [g.shape for g in got] == [np.asarray(w).shape for w in want]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_valid_outputs_drop_the_slots_past_a_run_time_length():
    """The ABI as a caller reads it: bounded slots cut to their extents, the slots of a
    run-time-length sequence past its length dropped (entries after the bounded ones)."""
    signatures = [
        TensorSignature("s.0", [3], "float32", bounded_dim=0, sequence=0),
        TensorSignature("s.1", [3], "float32", bounded_dim=0, sequence=0),
        TensorSignature("s.2", [3], "float32", bounded_dim=0, sequence=0),
        TensorSignature("n", [], "int64"),
        TensorSignature("extents", [4], "int32", extents=True),
    ]
    arrays = [np.arange(3.0), np.arange(3.0) + 3, np.zeros(3), np.array(2), np.array([3, 1, 0, 2], np.int32)]
    kept = valid_outputs(signatures, arrays)
    assert [s.name for s, _ in kept] == ["s.0", "s.1", "n"]
    assert [a.tolist() for _, a in kept] == [[0.0, 1.0, 2.0], [3.0], 2]


def test_split_by_run_time_sizes_and_chunks():
    """SplitToSequence of a 3x6 tensor by a run-time chunk size (run-time length) and by run-time
    sizes (run-time piece shapes), host build against the reference; sizes that do not sum to
    the extent, a negative size or a chunk below 1 are refused at the call."""
    model = _model(
        [
            helper.make_node("SplitToSequence", ["x", "chunk"], ["chunks"], axis=1),
            helper.make_node("SplitToSequence", ["x", "sizes"], ["pieces"], axis=0),
        ],
        [helper.make_tensor_value_info("x", F, [3, 6]), helper.make_tensor_value_info("chunk", I64, []),
         helper.make_tensor_value_info("sizes", I64, [2])],
        [helper.make_tensor_sequence_value_info("chunks", F, None), helper.make_tensor_sequence_value_info("pieces", F, None)],
    )
    compiled = zant.compile(model)
    assert [o.name for o in compiled.result.outputs][-1] == "extents"
    reference = ReferenceEvaluator(model)
    x = np.arange(18, dtype=np.float32).reshape(3, 6)
    for chunk, sizes in ((1, [0, 3]), (2, [1, 2]), (4, [3, 0]), (6, [2, 1]), (7, [1, 2]), (2**62, [1, 2])):
        feeds = {"x": x, "chunk": np.array(chunk, np.int64), "sizes": np.array(sizes, np.int64)}
        got = list(compiled.predict(feeds).values())
        chunks, pieces = reference.run(None, feeds)
        _same(got, [*chunks, *pieces])
    for chunk, sizes in ((0, [1, 2]), (-2, [1, 2]), (2, [2, 2]), (2, [-1, 4]), (2, [2**63 - 1, 2**63 - 1])):
        with pytest.raises(ZantError, match="returned 4"):
            compiled.predict({"x": x, "chunk": np.array(chunk, np.int64), "sizes": np.array(sizes, np.int64)})


def test_insert_at_a_run_time_position_among_different_shapes():
    """onnx's test_sequence_insert_at_front as written: [4], [3], [2] and a [3] inserted at a
    run-time position; each slot holds 4 entries and its run-time extent. (Not the insertion at
    the length: onnx.reference wraps that position to 0, where the definition appends.)"""
    model = _model(
        [helper.make_node("SequenceInsert", ["xs", "t", "p"], ["ys"])],
        [helper.make_tensor_sequence_value_info("xs", I64, None), helper.make_tensor_value_info("t", I64, [3]),
         helper.make_tensor_value_info("p", I64, [1])],
        [helper.make_tensor_sequence_value_info("ys", I64, None)],
    )
    compiled = zant.compile(model, input_shapes={"xs": [[4], [3], [2]]})
    reference = ReferenceEvaluator(model)
    xs = [np.array([1, 2, 3, 4]), np.array([5, 6, 7]), np.array([8, 9])]
    t = np.array([-2, -1, 0])
    for p in (0, 1, 2, -1, -2, -3):
        got = compiled.predict({"xs.0": xs[0], "xs.1": xs[1], "xs.2": xs[2], "t": t, "p": np.array([p])})
        (want,) = reference.run(None, {"xs": xs, "t": t, "p": np.array([p])})
        _same(list(got.values()), want)
    got = compiled.predict({"xs.0": xs[0], "xs.1": xs[1], "xs.2": xs[2], "t": t, "p": np.array([3])})
    _same(list(got.values()), [*xs, t])
    for p in (4, -4, 2**40):
        with pytest.raises(ZantError, match="returned 4"):
            compiled.predict({"xs.0": xs[0], "xs.1": xs[1], "xs.2": xs[2], "t": t, "p": np.array([p])})


def _loop_model() -> onnx.ModelProto:
    """onnx's test_loop13_seq: a Loop over a run-time trip count appending x[:i + 1] to a sequence."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Constant", [], ["x"], value=helper.make_tensor("x", F, [5], [1, 2, 3, 4, 5])),
            helper.make_node("Constant", [], ["one"], value=helper.make_tensor("one", I64, [], [1])),
            helper.make_node("Constant", [], ["start"], value=helper.make_tensor("start", I64, [1], [0])),
            helper.make_node("Constant", [], ["axes"], value=helper.make_tensor("axes", I64, [1], [0])),
            helper.make_node("Add", ["i", "one"], ["end"]),
            helper.make_node("Unsqueeze", ["end", "axes"], ["stop"]),
            helper.make_node("Slice", ["x", "start", "stop"], ["piece"]),
            helper.make_node("SequenceInsert", ["seq_in", "piece"], ["seq_out"]),
        ],
        "body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("seq_in", F, None)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), helper.make_tensor_sequence_value_info("seq_out", F, None)],
    )
    return _model(
        [helper.make_node("Loop", ["trip", "cond", "empty"], ["result"], body=body, name="grow")],
        [helper.make_tensor_value_info("trip", I64, []), helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("empty", F, None)],
        [helper.make_tensor_sequence_value_info("result", F, None)], opset=13,
    )


def test_loop_building_a_sequence_over_a_run_time_trip_count():
    """With --sequence-capacity 4: 4 copies of the body, the sequence after as many as run (0 to 4,
    an initial condition false runs none, a negative trip count none); a trip count past the
    capacity is refused at the call. Without it, a compile error naming the node and the option."""
    model = _loop_model()
    with pytest.raises(ZantError, match=r"'grow' \(Loop\).*--sequence-capacity N"):
        zant.compile(model, input_shapes={"empty": []}, build=False)
    compiled = zant.compile(model, input_shapes={"empty": []}, sequence_capacity=4)
    reference = ReferenceEvaluator(model)
    for trip in (0, 1, 3, 4, -1):
        for cond in (True, False):
            feeds = {"trip": np.array(trip, np.int64), "cond": np.array(cond)}
            (want,) = reference.run(None, {**feeds, "empty": []})
            _same(list(compiled.predict(feeds).values()), want)
    with pytest.raises(ZantError, match="returned 4"):
        compiled.predict({"trip": np.array(5, np.int64), "cond": np.array(True)})
    assert compiled.predict({"trip": np.array(5, np.int64), "cond": np.array(False)}) == {}


def test_at_a_run_time_position_among_different_shapes_as_a_graph_output():
    """onnx's simple/test_sequence_model1 as written: [2,3,4], [1,3,4] and [3,3,4] (inserted at a
    run-time position), SequenceAt a run-time position returned: an output bounded along the
    first dimension (capacity 3), its extent chosen with it. An empty extent split by run-time
    sizes (simple/test_sequence_model8) gives that many empty pieces, every size checked to be 0."""
    info = helper.make_tensor_value_info
    model = _model(
        [
            helper.make_node("SequenceEmpty", [], ["e"], dtype=F),
            helper.make_node("SequenceInsert", ["e", "x"], ["s1"]),
            helper.make_node("SequenceInsert", ["s1", "y"], ["s2"]),
            helper.make_node("SequenceInsert", ["s2", "z", "pos"], ["s3"]),
            helper.make_node("SequenceAt", ["s3", "at"], ["out"]),
            helper.make_node("SplitToSequence", ["none", "sizes"], ["empties"]),
            helper.make_node("SequenceLength", ["empties"], ["n"]),
        ],
        [info("x", F, [2, 3, 4]), info("y", F, [1, 3, 4]), info("z", F, [3, 3, 4]), info("pos", I64, []), info("at", I64, []),
         info("none", F, [0]), info("sizes", I64, [3])],
        [info("out", F, ["d", 3, 4]), info("n", I64, [])],
    )
    compiled = zant.compile(model)
    reference = ReferenceEvaluator(model)
    rng = np.random.default_rng(5)
    base = {"x": rng.standard_normal((2, 3, 4)).astype(np.float32), "y": rng.standard_normal((1, 3, 4)).astype(np.float32),
            "z": rng.standard_normal((3, 3, 4)).astype(np.float32), "none": np.zeros(0, np.float32), "sizes": np.zeros(3, np.int64)}
    for pos in (-2, -1, 0, 1):
        for at in (-3, -1, 0, 1, 2):
            feeds = {**base, "pos": np.array(pos, np.int64), "at": np.array(at, np.int64)}
            _same(list(compiled.predict(feeds).values()), reference.run(None, feeds))
    for pos, at, sizes in ((3, 0, [0, 0, 0]), (0, 3, [0, 0, 0]), (0, -4, [0, 0, 0]), (0, 0, [0, 1, -1])):
        with pytest.raises(ZantError, match="returned 4"):
            compiled.predict({**base, "pos": np.array(pos, np.int64), "at": np.array(at, np.int64), "sizes": np.array(sizes, np.int64)})


def test_hostile_values_touch_nothing_outside_the_buffers():
    """Splits, positions and trip counts from int64's extremes, each call's buffers against guard
    pages on both sides (`zant.tools.memory_safety.call_guarded`, the host library in
    ReleaseFast): every call returns 0 or STATUS_BAD_PARAMETER (4), none faults."""
    from zant.tools.memory_safety import call_guarded

    extremes = [np.iinfo(np.int64).min, -(2**62), -7, -1, 0, 1, 3, 6, 7, 2**31, 2**62, np.iinfo(np.int64).max]
    wrap = lambda v: (v + 2**63) % 2**64 - 2**63  # noqa: E731 (int64 arithmetic: 3 - c may wrap)
    x = np.arange(18, dtype=np.float32).reshape(3, 6)
    split = _model(
        [helper.make_node("SplitToSequence", ["x", "chunk"], ["chunks"], axis=1),
         helper.make_node("SplitToSequence", ["x", "sizes"], ["pieces"], axis=0)],
        [helper.make_tensor_value_info("x", F, [3, 6]), helper.make_tensor_value_info("chunk", I64, []),
         helper.make_tensor_value_info("sizes", I64, [2])],
        [helper.make_tensor_sequence_value_info("chunks", F, None), helper.make_tensor_sequence_value_info("pieces", F, None)],
    )
    insert = _model(
        [helper.make_node("SequenceInsert", ["xs", "t", "p"], ["ys"]), helper.make_node("SequenceAt", ["ys", "q"], ["y"])],
        [helper.make_tensor_sequence_value_info("xs", I64, None), helper.make_tensor_value_info("t", I64, [3]),
         helper.make_tensor_value_info("p", I64, []), helper.make_tensor_value_info("q", I64, [])],
        [helper.make_tensor_sequence_value_info("ys", I64, None), helper.make_tensor_value_info("y", I64, ["n"])],
    )
    trials = [
        (split, {}, None, [[x, np.array(c, np.int64), np.array([a, b], np.int64)] for c in extremes for a, b in
                           ((1, 2), (c, wrap(3 - c)), (c, c), (extremes[-1], 2))]),
        (insert, {"xs": [[4], [3], [2]]}, None, [[np.arange(4), np.arange(3), np.arange(2), np.arange(3), np.array(p, np.int64),
                                                  np.array(q, np.int64)] for p in extremes for q in extremes[::3]]),
        (_loop_model(), {"empty": []}, 4, [[np.array(t, np.int64), np.array(c)] for t in extremes for c in (True, False)]),
    ]
    for model, shapes, capacity, calls in trials:
        compiled = zant.compile(model, input_shapes=shapes, sequence_capacity=capacity)
        sizes = [int(np.prod(o.shape, dtype=np.int64)) * np.dtype(o.dtype).itemsize for o in compiled.result.outputs]
        for inputs in calls:
            for placement in ("start", "end"):
                outcome = call_guarded(compiled.paths["library"], compiled.name, inputs, sizes, placement)
                assert outcome.crash is None and outcome.status in (0, 4), (inputs, placement, outcome)


def test_a_run_time_split_as_cortex_m4_firmware():
    """The same ABI as firmware (mps2-an386 under QEMU): the image prints every slot and the
    extents array, and the reader keeps the valid part, by name."""
    from zant.backend.boards import BOARDS
    from zant.backend.firmware import qemu_missing

    missing = qemu_missing(BOARDS["mps2-an386"])
    if missing:
        pytest.skip(missing)
    model = _model(
        [helper.make_node("SplitToSequence", ["x", "chunk"], ["chunks"], axis=1), helper.make_node("Relu", ["x"], ["r"])],
        [helper.make_tensor_value_info("x", F, [3, 6]), helper.make_tensor_value_info("chunk", I64, [])],
        [helper.make_tensor_sequence_value_info("chunks", F, None), helper.make_tensor_value_info("r", F, [3, 6])],
    )
    x = np.arange(18, dtype=np.float32).reshape(3, 6) - 9
    compiled = zant.compile(model, target="cortex-m4", inputs={"x": x, "chunk": np.array(4, np.int64)})
    run = compiled.run_firmware()
    chunks, r = ReferenceEvaluator(model).run(None, {"x": x, "chunk": np.array(4, np.int64)})
    assert list(run.outputs) == ["chunks.0", "chunks.1", "r"]
    _same(list(run.outputs.values()), [*chunks, r])
    with pytest.raises(ZantError, match="returned 4"):  # a chunk below 1: the status, no fault
        compiled.run_firmware({"x": x, "chunk": np.array(np.iinfo(np.int64).min, np.int64)})


def test_zant_run_shows_a_run_time_length_sequence(tmp_path, capsys):
    """`zant run` of a Loop building a sequence (the initial one made in the graph) with
    --sequence-capacity: the elements the run holds, each beside the reference's (onnxruntime
    returns the sequence as a list); without the option, the compile error names it."""
    from zant.tools.cli import main

    model = _loop_model()
    del model.graph.input[2]
    model.graph.node.insert(0, helper.make_node("SequenceEmpty", [], ["empty"], dtype=F))
    onnx.save(model, tmp_path / "loop.onnx")
    np.save(tmp_path / "trip.npy", np.array(2, np.int64))
    np.save(tmp_path / "cond.npy", np.array(True))
    args = ["run", str(tmp_path / "loop.onnx"), "--input", f"trip={tmp_path / 'trip.npy'}", "--input", f"cond={tmp_path / 'cond.npy'}"]
    assert main(args) == 1
    assert "--sequence-capacity N" in capsys.readouterr().err
    assert main([*args, "--sequence-capacity", "3"]) == 0
    out = capsys.readouterr().out
    assert "output 'result.0' [1] float32" in out and "output 'result.1' [2] float32" in out
    assert "result.2" not in out and out.count("max abs error 0") == 2
