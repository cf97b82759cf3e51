"""`inline-functions`: function calls become the function's body, in the onnx dialect.

First each `onnx.call` of a model-local function (`onnx.function`, as the importer translates a
model's `functions`) is replaced by a copy of the callee's body, its arguments the call's
operands, its `onnx.return`'s values the call's results, each copied op located at
`call/inner` (the call's node name, then the body node's); calls in a body are inlined in turn,
and the functions, then unused, are erased.

Then the schema functions: the importer imports a node whose op ONNX defines by a function body
as its op (ONNX's inference types its results through the schema). This pass replaces each
onnx-dialect op of the default domain that onnx-to-uop has no
lowering for and whose schema has a function body (NegativeLogLikelihoodLoss,
SoftmaxCrossEntropyLoss, Attention, RotaryEmbedding, SwiGLU ...) by that body's ops:

1. the op is written back as a one-node ONNX model (`node_of_op`, the schema's defaults spelled
   out: ONNX's inference of a body does not apply them), its operands graph inputs of their
   types, an operand an `onnx.Constant` makes an initializer of its value (context-dependent
   bodies and the inference of Reshape-like body ops read those values);
2. the body is inlined into that model, repeatedly with ONNX's shape inference in between, as
   `zant.dialects.onnx_functions.expand_functions` does (bodies call other functions: the loss
   ops nest; an f16/bf16 op runs in f32 between two casts);
3. the model's nodes are made ops (`op_of_node`, each typed by the inference, located at its
   node's name `Op/Inner_k`) in place of the op, its results replaced by the body's outputs.

An op whose body gets no static type for some value, or holds control flow (a GRAPH attribute
the dialect has no form for; the importer inlines those bodies itself, on the protobuf), is a
`ZantError` naming it. The module's `onnx.opset` (else the installed onnx's) selects the bodies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import onnx
from onnx import ModelProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects.builtin import LocationAttr, ModuleOp, NameLoc, NoneAttr, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from zant.dialects.onnx import NODE_NAME, OPSET, CallOp, ConstantOp, FunctionOp, OnnxOp, inputs, op_name, outputs
from zant.dialects.onnx_functions import DEFAULT_DOMAINS, expand_functions, has_function_body
from zant.dialects.onnx_nodes import (
    array_type,
    constant_node_array,
    constant_op,
    node_label,
    node_of_op,
    op_of_node,
    static_tensor_type,
    tensor_array,
)
from zant.dialects.onnx_shape_folding import all_shapes_static, fold_shape_subgraphs
from zant.errors import ZantError
from zant.ir.onnx_graph import subgraphs
from zant.ir.resources import constant_array
from zant.ir.types import MLIR_TO_ONNX_ELEMENT_TYPE
from zant.passes.onnx_to_uop import supported_ops


def module_opset(module: ModuleOp) -> int:
    """The default-domain opset the module was imported at (`onnx.opset`), else the installed onnx's."""
    value = module.attributes.get(OPSET)
    return value.value.data if value is not None else onnx.defs.onnx_opset_version()


def has_inlinable_body(op: OnnxOp, opset: int, lowered: frozenset[str]) -> bool:
    """Whether the pass replaces `op`: a default-domain op without a lowering whose schema
    defines it by a function body at `opset`."""
    schema = op.spec().schema
    return (
        op.name not in lowered
        and schema.domain in DEFAULT_DOMAINS
        and has_function_body(schema.name, opset, schema.domain)
    )


def _op_label(op: OnnxOp) -> str:
    name = op.attributes.get(NODE_NAME)
    return f"'{name.data}' ({op.name})" if isinstance(name, StringAttr) else op.name


def _one_node_model(op: OnnxOp, opset: int) -> tuple[ModelProto, dict[str, SSAValue]]:
    """`op` as a one-node model, and its inputs' names → the operands they stand for."""
    named: dict[SSAValue, str] = {}
    graph_inputs, initializers = [], []
    input_names = []
    for index, value in enumerate(inputs(op)):
        if value is None:
            input_names.append("")
            continue
        if value not in named:
            named[value] = name = f"input{index}"
            if isinstance(value.owner, ConstantOp):
                initializers.append(numpy_helper.from_array(constant_array(value.owner), name))
            else:
                element = MLIR_TO_ONNX_ELEMENT_TYPE[value.type.get_element_type()]
                graph_inputs.append(helper.make_tensor_value_info(name, element, value.type.get_shape()))
        input_names.append(named[value])
    output_names = ["" if r is None else f"output{i}" for i, r in enumerate(outputs(op))]
    name = op.attributes.get(NODE_NAME)
    node = node_of_op(op, input_names, output_names, name.data if isinstance(name, StringAttr) else "", defaults=True)
    graph = helper.make_graph(
        [node], "function", graph_inputs,
        [helper.make_empty_tensor_value_info(n) for n in output_names if n], initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return model, {name: value for value, name in named.items()}


def _inference(opset: int) -> Callable[[ModelProto], ModelProto]:
    """The importer's inference: strict, with data propagation, shape subgraphs folded when that
    is not enough (the folded values become initializers)."""

    def infer(model: ModelProto) -> ModelProto:
        model = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
        return model if all_shapes_static(model) else fold_shape_subgraphs(model, opset)

    return infer


def inlined_body(op: OnnxOp, opset: int, lowered: frozenset[str]) -> tuple[ModelProto, dict[str, SSAValue]]:
    """The one-node model of `op` with its function bodies inlined and every value typed, and
    its inputs' names → the operands they stand for."""
    model, operands = _one_node_model(op, opset)
    try:
        infer = _inference(opset)
        return expand_functions(infer(model), opset, lambda op_type: op_name(op_type) in lowered, infer), operands
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ZantError(f"inline-functions: ONNX's inference of the body of {_op_label(op)} fails: {first}") from None


def inline_op(op: OnnxOp, opset: int, lowered: frozenset[str]) -> None:
    """Replace `op` by the ops of its function body (see the module docstring)."""
    model, operands = inlined_body(op, opset, lowered)
    graph = model.graph
    types = {v.name: v.type for v in [*graph.input, *graph.value_info, *graph.output]}
    values: dict[str, SSAValue] = dict(operands)
    new_ops = []
    for tensor in graph.initializer:  # values the shape folding computed
        if tensor.name not in values:
            array = tensor_array(tensor)
            new_ops.append(constant_op(array, array_type(array, tensor.name), tensor.name))
            values[tensor.name] = new_ops[-1].results[0]
    for index, node in enumerate(graph.node):
        if any(True for a in node.attribute for _ in subgraphs(a)):
            raise ZantError(f"inline-functions: the body of {_op_label(op)} holds control flow "
                            f"({node_label(node)}), which the onnx dialect cannot hold")

        def result_type(name: str):
            found = static_tensor_type(types.get(name), name)
            if found is None:
                raise ZantError(f"inline-functions: no static type for '{name}' in the body of {_op_label(op)}")
            return found

        if node.op_type == "Constant" and node.domain in DEFAULT_DOMAINS:
            new = constant_op(constant_node_array(node), result_type(node.output[0]), node.output[0])
            if node.name:
                new.attributes[NODE_NAME] = StringAttr(node.name)
        else:
            new = op_of_node(
                node, [values[n] if n else None for n in node.input], [result_type(n) if n else None for n in node.output]
            )
        new.location = NameLoc(StringAttr(node.name or f"{node.op_type}_{index}"), NoneAttr())
        for name, result in zip([n for n in node.output if n], new.results, strict=True):
            result.name_hint = None
            values[name] = result
        new_ops.append(new)
    Rewriter.insert_op(new_ops, InsertPoint.before(op))
    for index, old in enumerate(outputs(op)):
        if old is not None:
            new_value = values[f"output{index}"]
            new_value.name_hint = old.name_hint
            old.replace_all_uses_with(new_value)
    Rewriter.erase_op(op)


MAX_CALL_DEPTH = 64
"""Model-local functions call each other a few levels deep; a cycle (which ONNX forbids) stops here."""


def _located(call: CallOp, inner: Operation) -> LocationAttr:
    """Where a copied body op comes from: `call/inner`, each the node's name (`onnx.node_name`)
    or location."""

    def label(op: Operation) -> str | None:
        name = op.attributes.get(NODE_NAME)
        if isinstance(name, StringAttr):
            return name.data
        return op.location.desc.data if isinstance(op.location, NameLoc) else None

    outer, own = label(call), label(inner)
    if outer is not None and own is not None:
        return NameLoc(StringAttr(f"{outer}/{own}"), NoneAttr())
    return inner.location if own is not None else call.location


def inline_call(call: CallOp) -> None:
    """Replace `call` by a copy of its callee's body."""
    function = SymbolTable.lookup_symbol(call, call.callee)
    if not isinstance(function, FunctionOp):
        raise ZantError(f"inline-functions: @{call.callee.string_value()} is not an onnx.function of the module")
    block = function.body.block
    values: dict[SSAValue, SSAValue] = dict(zip(block.args, call.arguments, strict=True))
    call_name = call.attributes.get(NODE_NAME)
    copies = []
    for inner in block.ops:
        if inner is block.last_op:
            break
        copy = inner.clone(value_mapper=values)
        copy.location = _located(call, inner)
        if isinstance(call_name, StringAttr) and isinstance(copy.location, NameLoc):
            copy.attributes[NODE_NAME] = StringAttr(copy.location.desc.data)
        copies.append(copy)
    Rewriter.insert_op(copies, InsertPoint.before(call))
    results = [values.get(v, v) for v in block.last_op.operands]
    for old, new in zip(call.res, results, strict=True):
        if new.name_hint is None or old.name_hint is not None:
            new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    Rewriter.erase_op(call)


def inline_calls(module: ModuleOp) -> None:
    """Inline every `onnx.call` outside the functions (their bodies' calls come along and are
    inlined next round), then erase the functions."""
    for _ in range(MAX_CALL_DEPTH):
        calls = [op for op in module.walk() if isinstance(op, CallOp) and not _in_function(op)]
        if not calls:
            break
        for call in calls:
            inline_call(call)
    else:
        raise ZantError(f"inline-functions: model-local functions call each other more than {MAX_CALL_DEPTH} deep (a cycle?)")
    for function in [op for op in module.ops if isinstance(op, FunctionOp)]:
        Rewriter.erase_op(function)


def _in_function(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, FunctionOp):
            return True
        parent = parent.parent_op()
    return False


@dataclass(frozen=True)
class InlineFunctionsPass(ModulePass):
    """Model-local function calls, then each op without a lowering that ONNX defines by a
    function body, become the bodies' ops."""

    name = "inline-functions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        inline_calls(op)
        opset = module_opset(op)
        lowered = supported_ops()
        for candidate in list(op.walk()):
            if isinstance(candidate, OnnxOp) and has_inlinable_body(candidate, opset, lowered):
                inline_op(candidate, opset, lowered)
