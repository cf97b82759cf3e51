"""`resolve-sequences` numerics: models on sequences and optionals, imported with compile-time
lengths, resolved, lowered and interpreted (the uop interpreter, no Zig build), against ONNX's
reference evaluator on the same data; the checker also compares every pass with the one before.
Sequence inputs and outputs are their tensors in order, as in the C ABI.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from zant.driver import make_context
from zant.errors import ZantError
from zant.frontend.onnx_importer import import_model_bytes
from zant.interpreter import PassChecker
from zant.passes import pass_class

F, I64 = TensorProto.FLOAT, TensorProto.INT64
STAGES = ("resolve-sequences", "fold-constants", "dce", "onnx-to-uop", "fuse-loops", "dce")


def _model(nodes, inputs, outputs, initializers=(), opset=21) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(np.asarray(v), n) for n, v in initializers])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _seq(name, elem=F):
    return helper.make_tensor_sequence_value_info(name, elem, None)


def _flat(values) -> list[np.ndarray]:
    flat = []
    for v in values:
        if isinstance(v, list):
            flat += [np.asarray(x) for x in v]
        elif v is not None:
            flat.append(np.asarray(v))
    return flat


def _check(model: onnx.ModelProto, feeds: dict, input_shapes: dict | None = None) -> list[np.ndarray]:
    """The model through STAGES on `feeds` equals the reference (every pass checked on the way)."""
    module = import_model_bytes(model.SerializeToString(), ".", input_shapes or {})
    names = [v.name for v in model.graph.input]
    checker = None
    ctx = make_context()
    for stage in STAGES:
        pass_class(stage)().apply(ctx, module)
        module.verify()
        if checker is None:  # from the first module without sequences on
            checker = PassChecker(module, inputs=[x.reshape(-1) for x in _flat([feeds[n] for n in names])])
        else:
            checker.after(stage)
    assert checker.level == "uop"
    want = _flat(ReferenceEvaluator(model).run(None, feeds))
    got = checker.outputs()
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w.reshape(-1).astype(g.dtype), rtol=1e-6, atol=1e-6)
    return got


def test_sequence_input_map_concat_and_output():
    """A sequence input of elements of different lengths: SequenceMap (Add of a tensor, Relu),
    the mapped sequence returned (3 outputs) and concatenated; SequenceAt, SequenceLength."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["e", "k"], ["m"]), helper.make_node("Relu", ["m"], ["r"])], "body",
        [helper.make_tensor_value_info("e", F, None), helper.make_tensor_value_info("k", F, [1])],
        [helper.make_tensor_value_info("r", F, None)],
    )
    model = _model(
        [
            helper.make_node("SequenceMap", ["xs", "k"], ["ys"], body=body, name="map"),
            helper.make_node("ConcatFromSequence", ["ys"], ["cat"], axis=0),
            helper.make_node("SequenceAt", ["xs", "minus_one"], ["last"]),
            helper.make_node("SequenceLength", ["ys"], ["n"]),
        ],
        [_seq("xs"), helper.make_tensor_value_info("k", F, [1])],
        [_seq("ys"), helper.make_tensor_value_info("cat", F, [9]), helper.make_tensor_value_info("last", F, [2]),
         helper.make_tensor_value_info("n", I64, [])],
        [("minus_one", np.array(-1, np.int64))],
    )
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(n).astype(np.float32) for n in (3, 4, 2)]
    got = _check(model, {"xs": xs, "k": np.array([-2.0], np.float32)}, {"xs": [[3], [4], [2]]})
    assert [g.size for g in got] == [3, 4, 2, 9, 2, 1]


@pytest.mark.parametrize("split, keepdims", [(None, 0), (None, 1), (np.array(2, np.int64), 1), (np.array([1, 4], np.int64), 1)])
def test_split_erase_insert(split, keepdims):
    """SplitToSequence (no split, with keepdims both ways; a scalar chunk with a remainder;
    sizes), SequenceErase of the first piece, SequenceInsert at a negative position, back
    together with ConcatFromSequence (new_axis where the pieces lost the axis)."""
    inputs = ["x"] if split is None else ["x", "split"]
    initializers = [("zero", np.array(0, np.int64)), ("minus_one", np.array(-1, np.int64))]
    if split is not None:
        initializers.append(("split", split))
    model = _model(
        [
            helper.make_node("SplitToSequence", inputs, ["s"], axis=1, keepdims=keepdims),
            helper.make_node("SequenceErase", ["s", "zero"], ["t"]),
            helper.make_node("SequenceAt", ["s", "zero"], ["first"]),
            helper.make_node("SequenceInsert", ["t", "first", "minus_one"], ["u"]),
            helper.make_node("ConcatFromSequence", ["u"], ["y"], axis=1, new_axis=int(split is None and not keepdims)),
        ],
        [helper.make_tensor_value_info("x", F, [3, 5])],
        [helper.make_tensor_value_info("y", F, [3, 5])],
        initializers,
    )
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    _check(model, {"x": x})


@pytest.mark.parametrize("present", [True, False])
def test_optional_input(present):
    """An optional tensor input compiled present (one ABI tensor) or empty (none): HasElement
    is a constant; GetElement of a present one the tensor."""
    opt = helper.make_value_info("o", helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [4])))
    nodes = [helper.make_node("OptionalHasElement", ["o"], ["has"])]
    outputs = [helper.make_tensor_value_info("has", TensorProto.BOOL, [])]
    if present:
        nodes.append(helper.make_node("OptionalGetElement", ["o"], ["got"]))
        outputs.append(helper.make_tensor_value_info("got", F, [4]))
    model = _model(nodes, [opt], outputs, opset=18)
    value = np.arange(4, dtype=np.float32) if present else None
    got = _check(model, {"o": value}, {"o": [4] if present else None})
    assert bool(got[0][0]) is present


def test_runtime_position_is_an_error_naming_the_node():
    model = _model(
        [helper.make_node("SequenceAt", ["xs", "p"], ["y"], name="pick"), helper.make_node("Relu", ["y"], ["z"])],
        [_seq("xs"), helper.make_tensor_value_info("p", I64, [])],
        [helper.make_tensor_value_info("z", F, [2])],
    )
    # Over elements of one shape the position picks at run time (test_positions_known_at_run_time);
    # over shapes that differ, the shape an op reads would depend on it (a graph output is a
    # bounded output: tests/test_bounded_sequences.py).
    module = import_model_bytes(model.SerializeToString(), ".", {"xs": [[2], [3]]})
    with pytest.raises(ZantError, match=r"the position of 'pick' \(onnx.SequenceAt\) is computed at run time over elements of different shapes"):
        pass_class("resolve-sequences")().apply(make_context(), module)


def test_sequence_input_needs_its_layout():
    model = _model([helper.make_node("Identity", ["xs"], ["ys"])], [_seq("xs")], [_seq("ys")])
    with pytest.raises(ZantError, match=r"input 'xs' is a sequence: give its length and element shapes"):
        import_model_bytes(model.SerializeToString(), ".", {})
    with pytest.raises(ZantError, match=r"one shape per element"):
        import_model_bytes(model.SerializeToString(), ".", {"xs": [2, 3]})


def test_map_over_sequences_of_different_lengths_is_an_error():
    body = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["c"])], "body",
        [helper.make_tensor_value_info("a", F, None), helper.make_tensor_value_info("b", F, None)],
        [helper.make_tensor_value_info("c", F, None)],
    )
    model = _model([helper.make_node("SequenceMap", ["xs", "ys"], ["zs"], body=body, name="add")],
                   [_seq("xs"), _seq("ys")], [_seq("zs")])
    module = import_model_bytes(model.SerializeToString(), ".", {"xs": [[2], [2]], "ys": [[2]]})
    with pytest.raises(ZantError, match=r"the sequences of 'add' \(onnx.SequenceMap\) differ in length"):
        pass_class("resolve-sequences")().apply(make_context(), module)


def _loop_body(nodes, carried_in, carried_out):
    """A Loop body: (iteration, condition, carried sequence) -> (condition, carried sequence)."""
    return helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), *nodes], "body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         carried_in],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), carried_out],
    )


def test_loop_over_sequence_length_is_unrolled():
    """SequenceMap's function body: a Loop for SequenceLength(xs) iterations (known: xs's layout
    holds 3 tensors) carrying a sequence from SequenceEmpty, each iteration SequenceAt(xs, i) of
    its own shape ([3], [1], [2]: ONNX's inference leaves the dimension open, the unroller
    declares each) plus k, SequenceInsert'ed; unrolled, resolved and equal to the reference."""
    body = _loop_body(
        [helper.make_node("SequenceAt", ["xs", "i"], ["e"]), helper.make_node("Add", ["e", "k"], ["f"]),
         helper.make_node("SequenceInsert", ["acc_in", "f"], ["acc_out"])],
        _seq("acc_in"), _seq("acc_out"),
    )
    model = _model(
        [helper.make_node("SequenceLength", ["xs"], ["n"]), helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
         helper.make_node("Loop", ["n", "true", "empty"], ["ys"], body=body)],
        [_seq("xs"), helper.make_tensor_value_info("k", F, [1])], [_seq("ys")],
        [("true", np.array(True))],
    )
    xs = [np.arange(n, dtype=np.float32) - 1 for n in (3, 1, 2)]
    got = _check(model, {"xs": xs, "k": np.array([0.5], np.float32)}, {"xs": [[3], [1], [2]]})
    assert [g.size for g in got] == [3, 1, 2]


def test_loop_carrying_an_optional_sequence():
    """ONNX's loop16_seq_none: an optional sequence carried through a constant 3 iterations, the
    body's If on OptionalHasElement (known per copy: the input's layout, then SequenceInsert's
    result) choosing a fresh sequence or the carried one, a growing slice inserted each time."""
    opt_seq = helper.make_optional_type_proto(helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, None)))
    then_branch = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["zero"], ["fresh"])], "then", [], [_seq("fresh")],
        [numpy_helper.from_array(np.array([0.0], np.float32), "zero")],
    )
    else_branch = helper.make_graph([helper.make_node("OptionalGetElement", ["o_in"], ["kept"])], "else", [], [_seq("kept")])
    body = _loop_body(
        [helper.make_node("OptionalHasElement", ["o_in"], ["has"]), helper.make_node("Not", ["has"], ["none"]),
         helper.make_node("If", ["none"], ["s"], then_branch=then_branch, else_branch=else_branch),
         helper.make_node("Add", ["i", "one"], ["end"]), helper.make_node("Unsqueeze", ["end", "axes"], ["ends"]),
         helper.make_node("Slice", ["x", "starts", "ends"], ["piece"]),
         helper.make_node("SequenceInsert", ["s", "piece"], ["o_out"])],
        helper.make_value_info("o_in", opt_seq), _seq("o_out"),
    )
    model = _model(
        [helper.make_node("Loop", ["three", "true", "o"], ["ys"], body=body)],
        [helper.make_tensor_value_info("x", F, [5]), helper.make_value_info("o", opt_seq)], [_seq("ys")],
        [("three", np.array(3, np.int64)), ("true", np.array(True)), ("one", np.array(1, np.int64)),
         ("axes", np.array([0], np.int64)), ("starts", np.array([0], np.int64))],
        opset=18,
    )
    x = np.arange(5, dtype=np.float32) + 1
    for o, layout in (([np.array([7.0, 8.0], np.float32)], [[2]]), (None, None)):
        got = _check(model, {"x": x, "o": o}, {"o": layout})
        assert [g.size for g in got] == [*(([2]) if o else [1]), 1, 2, 3]


@pytest.mark.parametrize("c", [True, False])
def test_if_choosing_sequences_at_run_time(c):
    """A run-time condition selects between two sequences of one length and element shapes
    element by element (ONNX's if_seq); a constant one picks its branch."""
    branches = {
        f"{k}_branch": helper.make_graph(
            [helper.make_node("SequenceConstruct", [x, "x"], [f"{k}_out"])], k, [], [_seq(f"{k}_out")],
            [numpy_helper.from_array(np.full(2, v, np.float32), x)],
        ) for k, x, v in (("then", "t", 1.0), ("else", "e", -1.0))
    }
    model = _model([helper.make_node("If", ["c"], ["ys"], name="choose", **branches)],
                   [helper.make_tensor_value_info("c", TensorProto.BOOL, []), helper.make_tensor_value_info("x", F, [2])],
                   [_seq("ys")])
    x = np.array([3.0, 4.0], np.float32)
    got = _check(model, {"c": np.array(c), "x": x})
    np.testing.assert_array_equal(got[0], np.full(2, 1.0 if c else -1.0, np.float32))
    constant = _model([helper.make_node("If", ["c"], ["ys"], name="choose", **branches)],
                      [helper.make_tensor_value_info("x", F, [2])], [_seq("ys")], [("c", np.array(c))])
    _check(constant, {"x": x})


def _optional_if_model(content: str, read: bool) -> onnx.ModelProto:
    """ONNX's if_opt: a run-time condition decides whether the result holds a value (then: empty,
    else: x, or the sequence [x] for `content` "sequence"), and its HasElement; with `read`,
    also GetElement's value (a sequence's element 0) plus 1."""
    inner = helper.make_tensor_type_proto(F, [2])
    if content == "sequence":
        inner = helper.make_sequence_type_proto(inner)
    opt = helper.make_optional_type_proto(inner)
    held = [helper.make_node("SequenceConstruct", ["x"], ["xs"]), helper.make_node("Optional", ["xs"], ["some"])] \
        if content == "sequence" else [helper.make_node("Optional", ["x"], ["some"])]
    branches = {
        "then_branch": helper.make_graph([helper.make_node("Optional", [], ["none"], type=inner)],
                                         "then", [], [helper.make_value_info("none", opt)]),
        "else_branch": helper.make_graph(held, "else", [], [helper.make_value_info("some", opt)]),
    }
    nodes = [helper.make_node("If", ["c"], ["o"], name="choose", **branches), helper.make_node("OptionalHasElement", ["o"], ["has"])]
    outputs = [helper.make_value_info("o", opt), helper.make_tensor_value_info("has", TensorProto.BOOL, [])]
    if read:
        nodes.append(helper.make_node("OptionalGetElement", ["o"], ["got"]))
        if content == "sequence":
            nodes.append(helper.make_node("SequenceAt", ["got", "zero"], ["first"]))
        nodes.append(helper.make_node("Add", ["first" if content == "sequence" else "got", "one"], ["plus"]))
        outputs.append(helper.make_tensor_value_info("plus", F, [2]))
    return _model(nodes, [helper.make_tensor_value_info("c", TensorProto.BOOL, []), helper.make_tensor_value_info("x", F, [2])],
                  outputs, [("zero", np.array(0, np.int64)), ("one", np.array(1, np.float32))], opset=18)


@pytest.mark.parametrize("content", ["tensor", "sequence"])
def test_if_choosing_an_optional_at_run_time(tmp_path, content):
    """The optional's presence is a run-time flag: the output is returned as a sequence of its
    tensors whose length (its extents array entry) is 1 or 0, so a caller reads it present or
    absent; HasElement is the flag; GetElement of an empty one makes NAME_predict return
    STATUS_BAD_PARAMETER (ONNX calls reading an empty optional an error)."""
    from zant.driver import CompileOptions, compile_model
    from zant.runtime import load_compiled

    x = np.array([3.0, 4.0], np.float32)
    compiled = {}
    for read in (False, True):
        path = tmp_path / f"m{int(read)}.onnx"
        onnx.save(_optional_if_model(content, read), path)
        compiled[read] = load_compiled(compile_model(path, tmp_path / f"out{int(read)}", CompileOptions(name="m")))
    assert [s.name for s in compiled[False].outputs] == ["o.0", "has"]
    present, absent = compiled[False](np.array(False), x), compiled[False](np.array(True), x)
    assert len(present) == 2 and np.array_equal(present[0], x) and bool(present[1])
    assert len(absent) == 1 and not bool(absent[0])
    o, has, plus = compiled[True](np.array(False), x)
    assert np.array_equal(o, x) and bool(has) and np.array_equal(plus, x + 1)
    from zant.dialects.abi import Status

    with pytest.raises(ZantError, match=f"returned {int(Status.BAD_PARAMETER)}$"):
        compiled[True](np.array(True), x)
    # The interpreter agrees pass by pass; its raw outputs: the slot, HasElement, the extents
    # array (the slot's length: 1 present, 0 absent).
    for c in (False, True):
        module = import_model_bytes(_optional_if_model(content, False).SerializeToString(), ".", {})
        checker, ctx = None, make_context()
        for stage in STAGES:
            pass_class(stage)().apply(ctx, module)
            if checker is None:
                checker = PassChecker(module, inputs=[np.array([c]), x])
            else:
                checker.after(stage)
        slot, has, extents = checker.outputs()
        assert has.tolist() == [not c] and extents.tolist() == [0 if c else 1]
        if not c:
            np.testing.assert_array_equal(slot, x)


def _runtime_positions_model() -> onnx.ModelProto:
    """Three [2, 3] tensors; SequenceErase, SequenceInsert and SequenceAt at positions that are
    graph inputs (run time), the sequence concatenated."""
    info = lambda name, shape, elem=F: helper.make_tensor_value_info(name, elem, shape)  # noqa: E731
    return _model(
        [
            helper.make_node("SequenceConstruct", ["x", "y", "z"], ["s"]),
            helper.make_node("SequenceErase", ["s", "erase"], ["t"]),
            helper.make_node("SequenceInsert", ["t", "x", "insert"], ["u"]),
            helper.make_node("SequenceAt", ["u", "at"], ["picked"]),
            helper.make_node("ConcatFromSequence", ["u"], ["all"], axis=0),
        ],
        [info("x", [2, 3]), info("y", [2, 3]), info("z", [2, 3]),
         info("erase", [], I64), info("insert", [1], I64), info("at", [], TensorProto.INT32)],
        [info("picked", [2, 3]), info("all", [6, 3])],
    )


@pytest.mark.parametrize("erase, insert, at", [(0, 0, 0), (-1, -1, -1), (1, -2, 2), (-3, 1, 1)])
def test_positions_known_at_run_time(erase, insert, at):
    """Positions given at run time over elements of one type: each resulting element chosen by
    onnx.Where (negative positions counted from the end), against the reference. (Not an
    insertion at the length: onnx.reference wraps that position to 0, where the definition
    appends, as the compiler does.)"""
    rng = np.random.default_rng(3)
    x, y, z = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(3))
    feeds = {"x": x, "y": y, "z": z, "erase": np.array(erase, np.int64), "insert": np.array([insert], np.int64),
             "at": np.array(at, np.int32)}
    _check(_runtime_positions_model(), feeds)


def test_position_out_of_range_at_run_time_is_a_bad_parameter(tmp_path):
    from tests.test_runtime_parameters import Compiled

    compiled = Compiled(_runtime_positions_model(), tmp_path)
    x, y, z = (np.full((2, 3), v, np.float32) for v in (1, 2, 3))
    compiled.check(x, y, z, np.array(-3, np.int64), np.array([1], np.int64), np.array(-3, np.int32))
    for erase, insert, at in ((3, 0, 0), (-4, 0, 0), (0, 3, 0), (0, -3, 0), (0, 0, 3), (0, 0, -4)):
        compiled.refuses(x, y, z, np.array(erase, np.int64), np.array([insert], np.int64), np.array(at, np.int32))


def test_position_at_run_time_over_different_shapes_is_refused():
    model = _runtime_positions_model()
    model.graph.input[1].type.tensor_type.shape.dim[0].dim_value = 4
    model.graph.output[1].type.tensor_type.shape.dim[0].dim_value = 8
    module = import_model_bytes(model.SerializeToString(), ".", {})
    with pytest.raises(ZantError, match=r"the position of .*SequenceErase.* is computed at run time over elements of different shapes"):
        pass_class("resolve-sequences")().apply(make_context(), module)
