"""Function-body expansion: the protobuf machinery (zant/dialects/onnx_functions.py), what the
importer inlines itself (zant/frontend/expand.py) and the `inline-functions` pass."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from e2e import check_model
from xdsl.context import Context

from zant.dialects.onnx import NegativeLogLikelihoodLossOp
from zant.frontend.expand import expand_functions, function_body, inline_before_import, spell_out_defaults
from zant.frontend.onnx_importer import _has_lowering, _infer_shapes, import_model_bytes
from zant.passes.inline_functions import InlineFunctionsPass

OPSET = onnx.defs.onnx_opset_version()


def _nll_model(reduction: str | None, with_weight: bool) -> onnx.ModelProto:
    """Two NLL losses over the same input: their inlined bodies must not share value names."""
    attributes = {} if reduction is None else {"reduction": reduction}
    weight = ["W"] if with_weight else []
    nodes = [
        helper.make_node("NegativeLogLikelihoodLoss", ["X", "T", *weight], ["L1"], **attributes),
        helper.make_node("NegativeLogLikelihoodLoss", ["X", "T"], ["L2"], reduction="sum"),
    ]
    out_shape = [2, 3] if reduction == "none" else []
    inputs = [
        helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 4, 3]),
        helper.make_tensor_value_info("T", TensorProto.INT64, [2, 3]),
    ]
    if with_weight:
        inputs.append(helper.make_tensor_value_info("W", TensorProto.FLOAT, [4]))
    graph = helper.make_graph(
        nodes,
        "nll",
        inputs,
        [
            helper.make_tensor_value_info("L1", TensorProto.FLOAT, out_shape),
            helper.make_tensor_value_info("L2", TensorProto.FLOAT, []),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def _expand(model: onnx.ModelProto) -> onnx.ModelProto:
    infer = lambda m: _infer_shapes(m, OPSET)  # noqa: E731
    return expand_functions(infer(model), OPSET, _has_lowering, infer)


def test_function_body_found_for_context_dependent_op():
    model = onnx.shape_inference.infer_shapes(_nll_model("mean", False))
    types = {v.name: v.type for v in model.graph.input}
    body = function_body(model.graph.node[0], OPSET, types)
    assert body is not None and len(body.node) > 3


def test_op_without_function_body_is_left_alone():
    node = helper.make_node("Conv", ["X", "W"], ["Y"])
    assert function_body(node, OPSET, {}) is None


def test_expansion_replaces_both_nodes_with_distinct_names():
    expanded = _expand(_nll_model("mean", True))
    ops = [n.op_type for n in expanded.graph.node]
    assert "NegativeLogLikelihoodLoss" not in ops
    produced = [name for n in expanded.graph.node for name in n.output if name]
    assert len(produced) == len(set(produced)), "inlined bodies reuse a value name"
    assert {"L1", "L2"} <= set(produced)


def test_importer_keeps_the_op_and_the_pass_inlines_it():
    """The importer imports a function-bodied op as itself; `inline-functions` replaces it by
    its body's ops, typed, each named after its node."""
    module = import_model_bytes(_nll_model("mean", True).SerializeToString(), ".")
    ops = [op for op in module.walk() if isinstance(op, NegativeLogLikelihoodLossOp)]
    assert len(ops) == 2
    InlineFunctionsPass().apply(Context(), module)
    module.verify()
    names = [op.name for op in module.walk()]
    assert "onnx.NegativeLogLikelihoodLoss" not in names and "onnx.GatherElements" in names


def test_bodies_with_control_flow_are_inlined_by_the_importer():
    """LinearAttention's body holds a Scan (a GRAPH attribute the dialect has no form for), and
    FlexAttention is of another domain: those stay on the protobuf; NLL's body goes to the pass."""
    model = onnx.shape_inference.infer_shapes(_nll_model("mean", False))
    node = model.graph.node[0]
    types = {v.name: v.type for v in model.graph.input}
    assert not inline_before_import(node, function_body(node, OPSET, types))
    flex = _flex_attention_model(score_mod=False).graph.node[0]
    assert inline_before_import(flex, onnx.FunctionProto())
    scan = helper.make_node("Scan", ["s"], ["t"], body=helper.make_graph([], "b", [], []), num_scan_inputs=1)
    body = onnx.FunctionProto(node=[scan])
    assert inline_before_import(helper.make_node("LinearAttention", ["Q"], ["Y"]), body)


def test_op_with_a_lowering_is_kept():
    graph = helper.make_graph(
        [helper.make_node("LayerNormalization", ["X", "S"], ["Y"])],
        "ln",
        [
            helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 4]),
            helper.make_tensor_value_info("S", TensorProto.FLOAT, [4]),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 4])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    assert [n.op_type for n in _expand(model).graph.node] == ["LayerNormalization"]


def test_expanded_losses_match_the_reference():
    rng = np.random.default_rng(3)
    feeds = {
        "X": rng.standard_normal((2, 4, 3)).astype(np.float32),
        "T": rng.integers(0, 4, (2, 3)).astype(np.int64),
        "W": rng.random(4).astype(np.float32),
    }
    # The default reduction ("mean") comes from the schema, not from the node.
    check_model(_nll_model(None, True), feeds)
    check_model(_nll_model("none", True), feeds)


def _flex_attention_model(score_mod: bool) -> onnx.ModelProto:
    """FlexAttention (domain ai.onnx.preview), optionally with a score_mod subgraph (scores · 0.5)."""
    attributes = {}
    if score_mod:
        half = helper.make_tensor("half", TensorProto.FLOAT, [], [0.5])
        body = helper.make_graph(
            [helper.make_node("Mul", ["s", "half"], ["t"])],
            "score_mod",
            [helper.make_tensor_value_info("s", TensorProto.FLOAT, None)],
            [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)],
            [half],
        )
        attributes["score_mod"] = body
    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain="ai.onnx.preview", **attributes)
    shape = [1, 2, 3, 4]
    graph = helper.make_graph(
        [node],
        "flex",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in "QKV"],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, shape)],
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("ai.onnx.preview", 1)]
    )


def test_preview_domain_op_is_expanded_from_its_body():
    model = _expand(_flex_attention_model(score_mod=False))
    assert {n.domain for n in model.graph.node} <= {"", "ai.onnx"}
    assert "Softmax" in {n.op_type for n in model.graph.node}


def test_flex_attention_with_score_mod_numerics():
    rng = np.random.default_rng(0)
    feeds = {n: rng.standard_normal((1, 2, 3, 4)).astype(np.float32) for n in "QKV"}
    check_model(_flex_attention_model(score_mod=True), feeds, rtol=1e-5, atol=1e-6)


def test_schema_defaults_are_spelled_out_for_shape_inference():
    """MeanVarianceNormalization without `axes`: ONNX's inference of its body needs the default."""
    node = helper.make_node("MeanVarianceNormalization", ["X"], ["Y"])
    shape = [2, 3, 2, 2]
    graph = helper.make_graph(
        [node], "mvn", [helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, shape)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    spelled = onnx.ModelProto()
    spelled.CopyFrom(model)
    spell_out_defaults(spelled, OPSET)
    assert [(a.name, list(a.ints)) for a in spelled.graph.node[0].attribute] == [("axes", [0, 2, 3])]
    assert not model.graph.node[0].attribute
    check_model(model, {"X": np.random.default_rng(1).standard_normal(shape).astype(np.float32)})


def test_narrow_float_op_is_expanded_in_f32():
    """An f16 Attention is one operator: its body runs in f32 between two casts, so the result is
    the f32 computation rounded once (within 1 f16 ulp of it), not a chain of f16 roundings."""
    shape = [1, 2, 4, 8]
    node = helper.make_node("Attention", ["Q", "K", "V"], ["Y"])
    graph = helper.make_graph(
        [node], "attention16",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT16, shape) for n in "QKV"],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT16, shape)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    expanded = _expand(model)
    casts = [n for n in expanded.graph.node if n.op_type == "Cast"]
    assert casts[0].input[0] == "Q" and casts[-1].output[0] == "Y"
    assert {a.i for n in casts[:3] for a in n.attribute} == {TensorProto.FLOAT}
    from e2e import compile_and_run

    rng = np.random.default_rng(3)
    feeds = {n: rng.standard_normal(shape).astype(np.float16) for n in "QKV"}
    (ours,) = compile_and_run(model, feeds)
    f32 = onnx.ModelProto()
    f32.CopyFrom(model)
    for value in [*f32.graph.input, *f32.graph.output]:
        value.type.tensor_type.elem_type = TensorProto.FLOAT
    from onnx.reference import ReferenceEvaluator

    (exact,) = ReferenceEvaluator(f32).run(None, {k: v.astype(np.float32) for k, v in feeds.items()})
    ulp = np.abs(np.spacing(exact.astype(np.float16)).astype(np.float32))
    assert (np.abs(ours.astype(np.float32) - exact) <= ulp).all()
