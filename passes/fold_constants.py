"""`fold-constants`: evaluate shape subgraphs and constant-only ops at compile time.

Shapes are static after import, so `onnx.Shape` and `onnx.Size` are constants whatever their
input; any other op whose inputs are all `onnx.Constant` (ConstantOfShape, Range, arithmetic on
shape tensors, Gather of a shape, Concat, Cast, Unsqueeze/Reshape of constants …) is evaluated
once with `onnx.reference.ReferenceEvaluator` on a one-node model rebuilt from the op. Each
folded op becomes an `onnx.Constant`; constants left without uses are erased. One walk in
program order folds whole chains, since a folded result is a constant for the ops after it.

An op is left alone when its result would hold more than `max_elements` elements (a folded
tensor goes to flash) — unless that result only ever becomes a weight (`WEIGHT_OPERANDS`: a
Conv's W, a Gemm's B, an RNN's W and R …, directly or through ops that fold too): a weight
computed from constants (ConstantOfShape, Tile, Expand, arithmetic of initializers, as ONNX's
"light" models write them) is a constant whatever its size, not a scratch buffer rebuilt on
every call — when it is random or has no inputs, or when the reference cannot run it.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    Builtin,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from zant.dialects.onnx import (
    NOT_A_FUNCTION_OF_INPUTS,
    NODE_NAME,
    OPSET,
    BatchNormalizationOp,
    ConstantOp,
    ConvIntegerOp,
    ConvOp,
    ConvTransposeOp,
    GemmOp,
    GRUOp,
    InstanceNormalizationOp,
    LayerNormalizationOp,
    LSTMOp,
    MatMulIntegerOp,
    MatMulOp,
    PReluOp,
    QLinearConvOp,
    QLinearMatMulOp,
    RNNOp,
    IfOp,
    LoopOp,
    OnnxOp,
    ScanOp,
    ShapeOp,
    SizeOp,
    inputs,
    onnx_op_class,
    outputs,
    string_value,
)
from zant.ir.resources import MAX_FOLDED_ELEMENTS, attr_to_array, constant_array, make_constant_attr
from zant.ir.strings import StringType
from zant.ir.types import numpy_dtype

NEVER_FOLDED: frozenset[type[OnnxOp]] = frozenset(
    {ConstantOp, IfOp, LoopOp, ScanOp} | {onnx_op_class(op_type) for op_type in NOT_A_FUNCTION_OF_INPUTS}
)
"""Ops whose value is not a function of their inputs (or that hold subgraphs)."""


WEIGHT_OPERANDS: dict[type[OnnxOp], frozenset[int]] = {
    ConvOp: frozenset({1, 2}),
    ConvTransposeOp: frozenset({1, 2}),
    ConvIntegerOp: frozenset({1, 3}),
    QLinearConvOp: frozenset({3, 4, 5, 8}),
    GemmOp: frozenset({1, 2}),
    MatMulOp: frozenset({1}),
    MatMulIntegerOp: frozenset({1, 3}),
    QLinearMatMulOp: frozenset({3, 4, 5}),
    LSTMOp: frozenset({1, 2, 3, 7}),
    GRUOp: frozenset({1, 2, 3}),
    RNNOp: frozenset({1, 2, 3}),
    BatchNormalizationOp: frozenset({1, 2, 3, 4}),
    LayerNormalizationOp: frozenset({1, 2}),
    InstanceNormalizationOp: frozenset({1, 2}),
    PReluOp: frozenset({1}),
}
"""Op → the operands that are weights (read-only parameters of the op, not the data)."""


def _only_weights(value, depth: int = 8) -> bool:
    """Whether every use of `value` is a weight operand (`WEIGHT_OPERANDS`), or an operand of an
    op whose other inputs are constants and whose results are only weights in turn (it will fold
    next: the walk is in program order)."""
    if depth == 0 or not value.uses:
        return False
    for use in value.uses:
        consumer = use.operation
        if use.index in WEIGHT_OPERANDS.get(type(consumer), ()):
            continue
        if not isinstance(consumer, OnnxOp) or type(consumer) in NEVER_FOLDED:
            return False
        others = [v for v in inputs(consumer) if v is not None and v is not value]
        if not all(_is_constant(v) for v in others):
            return False
        if not all(_only_weights(r, depth - 1) for r in consumer.results):
            return False
    return True


def _is_constant(value) -> bool:
    owner = value.owner if value is not None else None
    return isinstance(owner, ConstantOp) and "value" in owner.properties


def _onnx_attribute(op: OnnxOp, name: str, attr):
    """The AttributeProto of one property, typed from the op's schema; None if not expressible."""
    from onnx import helper, numpy_helper

    schema_attr = op.spec().schema.attributes.get(name)
    if schema_attr is None:
        return None
    match attr:
        case IntegerAttr():
            value = attr.value.data
        case FloatAttr():
            value = attr.value.data
        case StringAttr():
            value = string_value(attr)
        case DenseArrayBase():
            value = list(attr.get_values())
        case ArrayAttr():
            value = [string_value(s) for s in attr.data]
        case DenseIntOrFPElementsAttr() | DenseResourceAttr():
            value = numpy_helper.from_array(attr_to_array(attr))
        case _:
            return None
    return helper.make_attribute(name, value, attr_type=schema_attr.type)


def _static_shape(op: Operation) -> tuple[int, ...] | None:
    result_type = op.results[0].type
    return tuple(result_type.get_shape()) if isinstance(result_type, TensorType) else None


def _shape_or_size(op: OnnxOp) -> np.ndarray | None:
    """Shape (with start/end) and Size of a statically shaped input."""
    source = inputs(op)[0]
    if not isinstance(source.type, TensorType):
        return None
    shape = list(source.type.get_shape())
    if isinstance(op, SizeOp):
        return np.array(math.prod(shape), dtype=np.int64)
    start = op.properties.get("start")
    end = op.properties.get("end")
    # Python slicing clamps and wraps negative bounds exactly as ONNX Shape specifies.
    start_value = start.value.data if isinstance(start, IntegerAttr) else 0
    end_value = end.value.data if isinstance(end, IntegerAttr) else None
    return np.array(shape[start_value:end_value], dtype=np.int64)


def _evaluate(op: OnnxOp, opset: int) -> list[np.ndarray] | None:
    """Run the op on its constant inputs with the ONNX reference evaluator."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    attributes = []
    for name, attr in op.properties.items():
        if name in ("operandSegmentSizes", "resultSegmentSizes"):
            continue
        proto = _onnx_attribute(op, name, attr)
        if proto is None:
            return None
        attributes.append(proto)
    feeds: dict[str, np.ndarray] = {}
    input_names = []
    for index, value in enumerate(inputs(op)):
        if value is None:
            input_names.append("")
            continue
        input_names.append(f"in{index}")
        feeds[f"in{index}"] = constant_array(value.owner)
    output_names = ["" if v is None else f"out{i}" for i, v in enumerate(outputs(op))]
    node = helper.make_node(op.name.removeprefix("onnx."), input_names, output_names)
    node.attribute.extend(attributes)
    graph = helper.make_graph(
        [node],
        "fold",
        [
            helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)
            for name, array in feeds.items()
        ],
        [helper.make_empty_tensor_value_info(name) for name in output_names if name],
        [],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = ReferenceEvaluator(model).run(None, feeds)
    return [np.asarray(r) for r in results]


@dataclass(frozen=True)
class FoldConstantsPass(ModulePass):
    """Replace Shape, Size and ops whose inputs are all constants by `onnx.Constant`."""

    name = "fold-constants"

    max_elements: int = MAX_FOLDED_ELEMENTS
    """Ops whose result would have more elements than this are not folded, unless it is only
    ever a weight."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        opset_attr = op.attributes.get(OPSET)
        opset = opset_attr.value.data if isinstance(opset_attr, IntegerAttr) else 22
        folded_any = False
        for candidate in list(op.walk()):
            if isinstance(candidate, OnnxOp) and self._fold(candidate, opset):
                folded_any = True
        if folded_any:
            # Folded values may live in the builtin dialect's resource section: printing it
            # needs the dialect loaded.
            if all(d.name != "builtin" for d in ctx.loaded_dialects):
                if "builtin" in ctx.registered_dialect_names:
                    ctx.load_registered_dialect("builtin")
                else:
                    ctx.load_dialect(Builtin)
            for dead in reversed(list(op.walk())):
                if isinstance(dead, ConstantOp) and not dead.results[0].uses:
                    Rewriter.erase_op(dead)

    def _fold(self, op: OnnxOp, opset: int) -> bool:
        if type(op) in NEVER_FOLDED or not op.results or op.regions and op.regions[0].blocks:
            return False
        if any(isinstance(v.type, TensorType) and isinstance(v.type.get_element_type(), StringType)
               for v in (*op.operands, *op.results)):
            return False  # a string constant's value is its fields' bytes, not what ONNX holds
        for result in op.results:
            if not isinstance(result.type, TensorType):
                return False
            if math.prod(result.type.get_shape()) > self.max_elements and not _only_weights(result):
                return False
        present = [v for v in inputs(op) if v is not None]
        if isinstance(op, ShapeOp | SizeOp):
            values = [_shape_or_size(op)]
        elif present and all(_is_constant(v) for v in present):
            try:
                values = _evaluate(op, opset)
            except Exception:  # the reference cannot run it: leave the op to its lowering
                return False
        else:
            return False
        if values is None or any(v is None for v in values):
            return False
        results = [r for r in op.results]
        if len(values) < len(results):
            return False
        constants = []
        for result, value in zip(results, values):
            shape = tuple(result.type.get_shape())
            dtype = numpy_dtype(result.type.get_element_type())
            if value.shape != shape:
                return False
            name = result.name_hint or op.name.removeprefix("onnx.").lower()
            constant = ConstantOp.from_onnx(
                [], [result.type], {"value": make_constant_attr(np.asarray(value, dtype=dtype), name)}
            )
            constant.results[0].name_hint = result.name_hint
            constant.location = op.location
            if NODE_NAME in op.attributes:
                constant.attributes[NODE_NAME] = op.attributes[NODE_NAME]
            constants.append(constant)
        Rewriter.replace_op(op, constants, [c.results[0] for c in constants])
        return True


__all__ = ["FoldConstantsPass"]
