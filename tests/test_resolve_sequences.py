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
        [helper.make_node("SequenceAt", ["xs", "p"], ["y"], name="pick")],
        [_seq("xs"), helper.make_tensor_value_info("p", I64, [])],
        [helper.make_tensor_value_info("y", F, [2])],
    )
    module = import_model_bytes(model.SerializeToString(), ".", {"xs": [[2], [2]]})
    with pytest.raises(ZantError, match=r"the position of 'pick' \(onnx.SequenceAt\) is computed at run time"):
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
