"""`fold-pads`: fold an explicit constant Pad into the padding of the window op that reads it.

Exporters write `Pad → Conv` (PyTorch's explicit padding, TFLite's PAD before a strided Conv,
and in quantized graphs `DQ → Pad → Q → DQ → Conv`, which `fold-qdq` turns into an int8 Pad
whose value is the zero point, then a QLinearConv). The padded copy is a buffer of its own: on
MobileNetV2 at 224x224 the largest of the plan (a 114x114x96 copy of a 112x112x96 tensor). A
window op pads with the same value itself, so when the Pad's only use is such an op the Pad goes
and its amounts join the op's `pads`:

| consumer | the Pad's value must be |
|---|---|
| Conv, ConvInteger, QLinearConv | what the op pads with: 0 for Conv, the x zero point for the integer ones |
| AveragePool with `count_include_pad=1` | 0 (the padding counts in every window either way) |

Nothing fires unless the Pad is `constant` mode with constant, non-negative amounts on the
spatial axes only (none on batch and channels), the consumer's `auto_pad` is NOTSET and the
value is a constant equal to the one above. The result is the same bytes: the consumer reads
the same values at the same positions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from zant.dialects.onnx import (
    AveragePoolOp,
    ConstantOp,
    ConvIntegerOp,
    ConvOp,
    OnnxOp,
    PadOp,
    QLinearConvOp,
    get_attr,
    inputs,
)
from zant.ir.locations import fuse_locations
from zant.ir.resources import constant_array


def _constant(value: SSAValue | None) -> np.ndarray | None:
    owner = value.owner if value is not None else None
    if isinstance(owner, ConstantOp) and "value" in owner.properties:
        return constant_array(owner)
    return None


@dataclass(frozen=True)
class PadAmounts:
    """A constant Pad's amounts per axis (begins, ends) and its value."""

    begins: list[int]
    ends: list[int]
    value: np.ndarray | None  # None: absent (0)


def pad_amounts(pad: OnnxOp) -> PadAmounts | None:
    """What a constant-mode Pad with constant amounts adds on each axis, or None."""
    if get_attr(pad, "mode") != "constant":
        return None
    operands = inputs(pad)
    rank = len(operands[0].type.get_shape())
    amounts = _constant(operands[1]) if len(operands) > 1 else None
    if amounts is None:
        return None
    axes = list(range(rank))
    if len(operands) > 3 and operands[3] is not None:
        given = _constant(operands[3])
        if given is None:
            return None
        axes = [int(a) % rank for a in given.reshape(-1)]
    amounts = [int(a) for a in amounts.reshape(-1)]
    if len(amounts) != 2 * len(axes):
        return None
    begins, ends = [0] * rank, [0] * rank
    for i, axis in enumerate(axes):
        begins[axis], ends[axis] = amounts[i], amounts[len(axes) + i]
    value = None
    if len(operands) > 2 and operands[2] is not None:
        value = _constant(operands[2])
        if value is None:
            return None
    return PadAmounts(begins, ends, value)


def _zero_point(op: OnnxOp, index: int) -> np.ndarray:
    operands = inputs(op)
    if len(operands) <= index or operands[index] is None:
        return np.zeros(1)
    value = _constant(operands[index])
    return value if value is not None else np.array([np.nan])


def _pads_with(op: OnnxOp) -> np.ndarray | None:
    """The value `op` pads its input with (a scalar array), or None when a Pad cannot join it."""
    if isinstance(op, ConvOp):
        return np.zeros(1)
    if isinstance(op, QLinearConvOp | ConvIntegerOp):  # x_zero_point: input 2 of both
        return _zero_point(op, 2)
    if isinstance(op, AveragePoolOp) and get_attr(op, "count_include_pad") == 1:
        return np.zeros(1)
    return None


class FoldPadIntoWindow(RewritePattern):
    """`Pad(x) → op` becomes `op(x)` with the Pad's spatial amounts added to the op's `pads`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, PadOp):
            return
        result = op.results[0]
        if not result.has_one_use():
            return
        use = next(iter(result.uses))
        consumer = use.operation
        if not isinstance(consumer, OnnxOp) or use.index != 0:
            return
        fill = _pads_with(consumer)
        if fill is None or get_attr(consumer, "auto_pad") != "NOTSET":
            return
        amounts = pad_amounts(op)
        if amounts is None:
            return
        value = np.zeros(1) if amounts.value is None else amounts.value.reshape(-1)
        if fill.size != 1 or value.size != 1 or float(value[0]) != float(fill.reshape(-1)[0]):
            return
        spatial = len(amounts.begins) - 2
        if any(amounts.begins[:2]) or any(amounts.ends[:2]) or min(amounts.begins + amounts.ends) < 0:
            return
        current = get_attr(consumer, "pads") or [0] * (2 * spatial)
        pads = [current[i] + amounts.begins[2 + i] for i in range(spatial)]
        pads += [current[spatial + i] + amounts.ends[2 + i] for i in range(spatial)]
        properties = dict(consumer.properties)
        properties["pads"] = DenseArrayBase.from_list(i64, pads)
        operands = inputs(consumer)
        operands[0] = inputs(op)[0]
        folded = type(consumer).from_onnx(
            operands, [r.type for r in consumer.results], properties, dict(consumer.attributes)
        )
        for old, new in zip(consumer.results, folded.results):
            new.name_hint = old.name_hint
        folded.location = fuse_locations(op.location, consumer.location)
        pad_operands = inputs(op)[1:]
        rewriter.replace(consumer, folded)
        rewriter.erase(op)
        for value in pad_operands:
            if value is not None and not value.uses and _constant(value) is not None:
                rewriter.erase(value.owner)


@dataclass(frozen=True)
class FoldPadsPass(ModulePass):
    """Fold constant Pads into the padding of the Conv, ConvInteger, QLinearConv or AveragePool
    reading them (see the module docstring)."""

    name = "fold-pads"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FoldPadIntoWindow(), apply_recursively=False).rewrite_module(op)
