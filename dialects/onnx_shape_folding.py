"""Static shapes for models whose shapes are computed by subgraphs (`Shape → Gather → Concat →
Reshape`, `ConstantOfShape`, `Range` …).

ONNX shape inference propagates only a little data, so such a model can leave values without a
static shape even though every shape is known at compile time. This step alternates the two:
fold what is computable now into initializers (Shape/Size of a tensor with a static shape; any
deterministic node whose inputs are all constants, evaluated with ONNX's reference evaluator),
then infer shapes again, until every value is static or nothing more folds. It runs only when
shape inference left something unknown, so ordinary models import untouched.

What still has no static shape may get one from its consumer: a value whose only consumer is a
shape-preserving unary node (Cast, Log, Sqrt ...) has that node's output shape, declared in the
model or inferred (`shapes_from_consumers`). That is how a ReduceSum whose `axes` is a run-time
input, followed by Log and a declared output, gets its shape (ReduceLogSum as a function body).
The only operand of a broadcasting op (Add, Mul ...) without a static shape is given the result's
shape too: a guess, which the node computing it from a run-time value (a Range, an Expand ...)
checks when the code runs (a window op's function body: Range, then Cos and Mul).

Why on the protobuf (issue 31 item 3): every value of the IR has a static tensor type, given
when its op is made; these folds exist to get those types from ONNX's inference, so they run
before the ops exist: in the importer, and in `inline-functions` on the one-node model of an op
whose function body it types (Attention's body computes its reshapes' shapes). (`fold-constants`
folds on the IR afterwards, for the code, not for the types.)
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import ModelProto, NodeProto, numpy_helper

from zant.dialects.onnx import NOT_A_FUNCTION_OF_INPUTS
import zant.dialects.onnx_schemas  # noqa: F401 (registers Guard's schema with onnx.defs, for ONNX's inference)
from zant.ir.resources import MAX_FOLDED_ELEMENTS

MAX_ROUNDS = 16


def static_shape(value_type: onnx.TypeProto) -> list[int] | None:
    """The dimensions of a tensor type when all of them are known; None otherwise."""
    if not value_type.HasField("tensor_type") or not value_type.tensor_type.HasField("shape"):
        return None
    dims = value_type.tensor_type.shape.dim
    if any(not d.HasField("dim_value") for d in dims):
        return None
    return [d.dim_value for d in dims]


def all_shapes_static(model: ModelProto) -> bool:
    graph = model.graph
    typed = {v.name: v.type for v in [*graph.input, *graph.value_info, *graph.output]}
    constants = {i.name for i in graph.initializer}
    for node in graph.node:
        for name in node.output:
            if name and name not in constants and (name not in typed or static_shape(typed[name]) is None):
                return False
    return True


def shape_node_value(node: NodeProto, shape: list[int]) -> np.ndarray:
    """The value a Shape (with its start/end) or Size node computes on a tensor of `shape`."""
    attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    if node.op_type == "Size":
        return np.array(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)
    start = attributes.get("start", 0)
    end = attributes.get("end", len(shape))
    return np.array(shape[slice(start, end)], dtype=np.int64)


def evaluate_node(node: NodeProto, feeds: dict[str, np.ndarray], opset: int) -> list[np.ndarray] | None:
    """`node`'s outputs on constant `feeds`, by ONNX's reference evaluator; None if it cannot run it."""
    from onnx.reference import ReferenceEvaluator

    try:
        results = ReferenceEvaluator(node, opsets={"": opset}).run(None, feeds)
    except Exception:  # the reference cannot run it: leave the node to its lowering
        return None
    return [np.asarray(r) for r in results]


NOT_A_TENSOR_RESULT = frozenset({"SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceErase", "SplitToSequence", "Optional"})
"""Ops whose result is a sequence or an optional, which an initializer cannot hold."""


def is_foldable(node: NodeProto) -> bool:
    """Whether `node` may be computed at compile time: a deterministic default-domain op without
    subgraphs whose results are tensors."""
    return (
        node.domain in ("", "ai.onnx")
        and node.op_type not in NOT_A_FUNCTION_OF_INPUTS
        and node.op_type not in NOT_A_TENSOR_RESULT
        and not any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute)
    )


def _fold_round(model: ModelProto, opset: int) -> bool:
    """Replace every node computable now by initializers; True if anything was folded."""
    graph = model.graph
    known = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    typed = {v.name: v.type for v in [*graph.input, *graph.value_info, *graph.output]}
    kept: list[NodeProto] = []
    folded = False
    for node in graph.node:
        values = None
        if node.op_type in ("Shape", "Size") and node.input[0] in typed and is_foldable(node):
            shape = static_shape(typed[node.input[0]])
            if shape is not None:
                values = [shape_node_value(node, shape)]
        elif all(not name or name in known for name in node.input) and is_foldable(node):
            values = evaluate_node(node, {name: known[name] for name in node.input if name}, opset)
        if values is None or len(values) != len(node.output) or any(v.size > MAX_FOLDED_ELEMENTS for v in values):
            kept.append(node)
            continue
        for name, value in zip(node.output, values):
            if name:
                known[name] = value
                graph.initializer.append(numpy_helper.from_array(value, name))
        folded = True
    if folded:
        del graph.node[:]
        graph.node.extend(kept)
        constants = {i.name for i in graph.initializer}
        remaining = [v for v in graph.value_info if v.name not in constants]
        del graph.value_info[:]
        graph.value_info.extend(remaining)
    return folded


SAME_SHAPE_UNARY = frozenset(
    "Abs Acos Acosh Asin Asinh Atan Atanh Cast CastLike Ceil Cos Cosh Elu Erf Exp Floor HardSigmoid "
    "HardSwish Identity IsInf IsNaN LeakyRelu Log Mish Neg Not Reciprocal Relu Round Selu Sigmoid Sign "
    "Sin Sinh Softplus Softsign Sqrt Tan Tanh ThresholdedRelu".split()
)
"""Ops whose output (the first) has the shape of their first input."""

BROADCASTING = frozenset(
    "Add And BitShift Div Equal Greater GreaterOrEqual Less LessOrEqual Max Mean Min Mod Mul Or Pow "
    "PRelu Sub Sum Where Xor".split()
)
"""Element-wise ops whose output has the broadcast shape of their inputs."""


def shapes_from_consumers(model: ModelProto) -> bool:
    """Give each value without a static shape the statically known output shape of its
    consumers that are `SAME_SHAPE_UNARY` (as their first input) or `BROADCASTING` nodes, when
    they agree on one; True if any value got one."""
    graph = model.graph
    infos = {v.name: v for v in [*graph.input, *graph.value_info, *graph.output]}
    consumers: dict[str, list[NodeProto]] = {}
    for node in graph.node:
        for name in set(node.input):
            consumers.setdefault(name, []).append(node)
    outputs = {v.name for v in graph.output}
    changed = False
    for node in reversed(graph.node):
        for name in node.output:
            info = infos.get(name)
            if not name or name in outputs or (info is not None and static_shape(info.type) is not None):
                continue
            shapes = set()
            for user in consumers.get(name, []):
                if user.op_type in SAME_SHAPE_UNARY and user.input[0] != name:
                    continue
                if user.op_type not in SAME_SHAPE_UNARY | BROADCASTING:
                    continue
                # A broadcasting operand may have been smaller than the result: taking the
                # result's shape is a guess. It is safe: the node whose shape depends on a value
                # (Range, Expand ...) checks that value against it when the code runs.
                out = infos.get(user.output[0])
                shape = None if out is None else static_shape(out.type)
                if shape is not None:
                    shapes.add(tuple(shape))
            if len(shapes) != 1:
                continue
            (shape,) = shapes
            if info is None:
                info = graph.value_info.add()
                info.name = name
                infos[name] = info
            tensor_type = info.type.tensor_type
            if tensor_type.HasField("shape") and len(tensor_type.shape.dim) != len(shape):
                continue
            tensor_type.shape.Clear()
            for size in shape:
                tensor_type.shape.dim.add().dim_value = size
            changed = True
    return changed


def fold_shape_subgraphs(model: ModelProto, opset: int) -> ModelProto:
    """Fold and re-infer until every value has a static shape or nothing more folds; then take
    shapes from consumers (`shapes_from_consumers`) and infer again while that helps."""
    for _ in range(MAX_ROUNDS):
        if all_shapes_static(model) or not _fold_round(model, opset):
            break
        model = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    for _ in range(MAX_ROUNDS):
        if all_shapes_static(model):
            break
        trial = ModelProto()
        trial.CopyFrom(model)
        if not shapes_from_consumers(trial):
            break
        try:
            model = onnx.shape_inference.infer_shapes(trial, check_type=True, strict_mode=True, data_prop=True)
        except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError):
            break  # a guess that contradicts the model: the values stay without a static shape
    return model
