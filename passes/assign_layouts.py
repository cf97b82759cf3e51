"""`assign-layouts`: which int8 activations are stored channels-last, chosen per target from what
their readers' kernels cost in each layout.

An activation of rank ≥ 3 is NCHW as ONNX writes it, or channels-last (N, spatial…, C in
memory): the lowering allocates a marked op's result in that order and publishes it as a view
indexed (N, C, spatial…) (`kernel.result_layout`), so every reader stays correct whatever it
is given, and the layout costs no copy and no RAM: the tensor exists once, in one order.

The pass runs on the onnx dialect, before `onnx-to-uop`. It groups each integer `QLinearConv`
result with the `Clip` / `Relu` chain that follows it (one layout for the chain: an element-wise
op writes in its input's order), and gives the group the layout whose reads cost least, summed
over its readers on the module's target:

* a pointwise `QLinearConv` (1x1, unit strides, no pads, ungrouped, constant weights: the
  column form of `conv_columns`) reads NCHW by copying each block of pixels' channels into a
  column (about `COPY_CYCLES` per byte, every byte once) and re-reads all its weights from
  flash once per column; channels-last, it reads X in place with one pair of weight rows
  cached over the whole image (`conv_columns._pointwise_channels_last`): no copy;
* any other reader (a depthwise or 3x3 Conv's row kernels, pools, Add, Reshape, the graph's
  output) is costed for NCHW only: channels-last would make it read across a stride (or copy),
  so a single such reader keeps the group NCHW (`UNSUPPORTED`). A depthwise Conv with rows of
  3 taps reads its NCHW rows as words (`conv_depthwise`: a word and its two `SXTB16` halves per
  row of two outputs); channels-last, each tap of a channel is a byte at the stride C and each
  word holds 4 channels, whose products `SMLAD` cannot pair (2 instructions per product or
  more, against about 1.2 for the rows).

* a pointwise `QLinearConv` whose widened form (`conv_columns._pointwise_wide`) fits within the
  graph's layer bound only with its output written over X, both NCHW (its output read by a
  depthwise Conv, X by it alone: `widened_over_nchw`), reads NCHW at no cost and forgoes that
  form channels-last (`WIDE_GAIN` per product): a DS-CNN's 64-channel blocks, whose pointwise
  X and Y are the graph's peak (the bench KWS int8 on the M4: 4,235,477 -> 3,323,432
  instructions, the plan at 16,000 B).

So on MobileNet-like graphs each depthwise output (read by a pointwise Conv) is channels-last
and each pointwise output (read by a depthwise Conv, whose 3-tap rows are words in NCHW) stays
NCHW: no transposes anywhere, and the graph's inputs and outputs keep ONNX's layout. The decision
is taken only on targets with channels-last kernels: the DSP cores without Helium
(`PassParameters.conv_word_taps`); elsewhere the pass changes nothing.

The mark is the unit attribute `zant.channels_last` on the producing ops (`kernel.CHANNELS_LAST`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp, TensorType, UnitAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from zant.analysis.layer_bound import graph_layer_bound, value_bytes
from zant.dialects.onnx import ClipOp, ConcatOp, ConstantOp, OnnxOp, QLinearConvOp, ReluOp, get_attr, input_value
from zant.dialects.zant import target_parameters
from zant.ir.resources import constant_array
from zant.passes.onnx_to_uop.conv_columns import CHANNELS, MIN_CHANNELS, PIXELS, wide_in_place_only
from zant.passes.onnx_to_uop.kernel import CHANNELS_LAST

COPY_CYCLES = 2
"""Cycles per byte the NCHW column form spends copying its input into columns (a byte load and
a byte store; the loop's own overhead left out)."""

UNSUPPORTED = math.inf
"""The cost of a layout a reader has no kernel for."""

FOLLOWERS: tuple[type[OnnxOp], ...] = (ClipOp, ReluOp)
"""Element-wise ops that write their result in their input's layout (one input tensor)."""


def _shape(value: SSAValue) -> tuple[int, ...] | None:
    return tuple(value.type.get_shape()) if isinstance(value.type, TensorType) else None


def _is_integer_activation(value: SSAValue) -> bool:
    shape = _shape(value)
    return (
        shape is not None and len(shape) >= 3 and all(d > 0 for d in shape)
        and isinstance(value.type.get_element_type(), IntegerType)  # type: ignore[attr-defined]
    )


def _constant(value: SSAValue | None) -> bool:
    owner = value.owner if value is not None else None
    return isinstance(owner, ConstantOp) and "value" in owner.properties


def _zero_or_absent(value: SSAValue | None) -> bool:
    if value is None:
        return True
    owner = value.owner
    return _constant(value) and not constant_array(owner).any()  # type: ignore[arg-type]


def pointwise_column_conv(op: Operation, value: SSAValue) -> bool:
    """Whether `op` is a QLinearConv reading `value` as X through the pointwise column form:
    ungrouped 1x1, unit strides, no pads, constant weights, bias and x zero point, a zero (or
    absent) weight zero point, at least `MIN_CHANNELS` input channels, an even number of
    output channels, `PIXELS` pixels or more."""
    if not isinstance(op, QLinearConvOp) or input_value(op, 0) is not value:
        return False
    if any(v is value for i, v in enumerate(op.operands) if i > 0):
        return False
    w = input_value(op, 3)
    if not _constant(w) or not _constant(input_value(op, 2)) or not _zero_or_absent(input_value(op, 5)):
        return False
    weights = constant_array(w.owner)  # type: ignore[arg-type, union-attr]
    if weights.size == 0 or (weights == weights.flat[0]).all():
        return False  # one weight everywhere: a window sum, not the column form
    bias = input_value(op, 8)
    if bias is not None and not _constant(bias):
        return False
    x_shape, w_shape = _shape(value), _shape(w)  # type: ignore[arg-type]
    if x_shape is None or w_shape is None or len(w_shape) != len(x_shape):
        return False
    strides, pads, dilations = (get_attr(op, a) for a in ("strides", "pads", "dilations"))
    return (
        get_attr(op, "group") == 1 and all(k == 1 for k in w_shape[2:])
        and all(s == 1 for s in strides or []) and not any(pads or []) and all(d == 1 for d in dilations or [])
        and get_attr(op, "auto_pad") in ("NOTSET", "VALID")
        and x_shape[1] >= MIN_CHANNELS and w_shape[0] % CHANNELS == 0 and math.prod(x_shape[2:]) >= PIXELS
    )


WIDE_GAIN = 0.3
"""Cycles per product the widened pointwise form saves over the 2 x 2 tiles (VWW's 128-channel
layers on the L4R5: 987 K -> 790 K cycles for 590 K products; the bench KWS int8's 64-channel
layers on the M4: 759 K -> 577 K instructions for 512 K)."""


def read_cost(reader: Operation, value: SSAValue, channels_last: bool, layer_bound: int = 0) -> float:
    """Cycles `reader` spends on reading `value` in that layout, beyond what it spends in the
    cheaper one (module docstring); `layer_bound`: the graph's, where a pointwise reader whose
    widened form fits only written over its NCHW input (`widened_over_nchw`) forgoes it
    channels-last."""
    if pointwise_column_conv(reader, value):
        if layer_bound and widened_over_nchw(reader, value, layer_bound):
            w_shape = _shape(input_value(reader, 3)) or ()
            return WIDE_GAIN * math.prod(w_shape) * math.prod((_shape(value) or ())[2:]) if channels_last else 0
        return 0 if channels_last else COPY_CYCLES * math.prod(_shape(value) or ())
    return UNSUPPORTED if channels_last else 0


def widened_over_nchw(reader: Operation, value: SSAValue, layer_bound: int) -> bool:
    """Whether the pointwise Conv `reader` takes the widened form only with its output written
    over `value`, its int8 X, both NCHW (`conv_columns.wide_in_place_applies`): X read by it
    alone, its output kept NCHW by a reader without a channels-last kernel (a depthwise Conv),
    and the form's copies within `layer_bound` only so. Channels-last, X would go to the 2 x 2
    tiles (an NCHW Y over a channels-last X reaches pixels not yet read)."""
    x_shape, w = _shape(value), input_value(reader, 3)
    if x_shape is None or len(list(value.uses)) != 1 or value.type.get_element_type() != IntegerType(8):  # type: ignore[attr-defined]
        return False
    if constant_array(w.owner).dtype != np.int8:  # type: ignore[arg-type, union-attr]
        return False
    outputs = [g for g in layout_groups_of(reader)]
    if not outputs or not math.isinf(outputs[0].cost(True)):
        return False
    return wide_in_place_only(x_shape, (_shape(w) or (0,))[0], layer_bound)


@dataclass(frozen=True)
class LayoutGroup:
    """A QLinearConv and the Clip/Relu chain after it: the ops that share one layout, and the
    readers (op, value read) outside the chain."""

    ops: tuple[Operation, ...]
    readers: tuple[tuple[Operation, SSAValue], ...]

    def cost(self, channels_last: bool, layer_bound: int = 0) -> float:
        return sum(read_cost(op, value, channels_last, layer_bound) for op, value in self.readers)

    def convs(self) -> Iterator[QLinearConvOp]:
        """The QLinearConvs writing or reading the group's tensor."""
        yield self.ops[0]  # type: ignore[misc]
        yield from (op for op, _ in self.readers if isinstance(op, QLinearConvOp))


def _over(conv: QLinearConvOp, budget: int) -> bool:
    """Whether `conv`'s input and output take more than `budget` bytes together."""
    return sum(value_bytes(v) for v in (input_value(conv, 0), conv.results[0]) if v is not None) > budget


def channels_last_copy(group: LayoutGroup, budget: int) -> ConcatOp | None:
    """Under `budget`, where `group` keeps NCHW because one of its Convs writes over its input,
    a channels-last copy of the group's tensor for its readers, when they all are pointwise
    column Convs within the budget and the copy fits beside the tensor and beside each reader's
    output: a one-input Concat marked channels-last (its lowering walks its output in memory
    order, so it is a transposing copy), which the readers then read in place, one pair of
    weight rows over the whole image (`conv_columns._pointwise_channels_last`), where NCHW they
    copy it anyway, a column at a time, and read their weights again per column. MLPerf VWW
    under 22,118 B: the 12x12x32 output of the stride-2 depthwise Conv (written over its
    24x24x32 input) copied for the 32 -> 64 pointwise Conv after it, 535 K -> 429 K cycles on
    the L4R5 for a copy of 15 K. The copy, or None."""
    values = {id(value): value for _, value in group.readers}
    if len(values) != 1 or not all(pointwise_column_conv(op, value) for op, value in group.readers):
        return None
    (value,) = values.values()
    size = value_bytes(value)
    if any(_over(op, budget) or size + size + value_bytes(op.results[0]) > budget for op, _ in group.readers):
        return None
    copy = ConcatOp.create(operands=[value], result_types=[value.type], properties={"axis": IntegerAttr(1, 64)})
    copy.results[0].name_hint = f"{value.name_hint or 'conv'}_channels_last"
    copy.attributes[CHANNELS_LAST] = UnitAttr()
    value.owner.parent_block().insert_op_after(copy, value.owner)  # type: ignore[union-attr]
    for op, _ in group.readers:
        op.operands[0] = copy.results[0]
    return copy


def layout_groups(function: func.FuncOp) -> Iterator[LayoutGroup]:
    """Each integer QLinearConv's group (`LayoutGroup`)."""
    for op in function.body.walk():
        yield from layout_groups_of(op)


def layout_groups_of(op: Operation) -> Iterator[LayoutGroup]:
    """`op`'s group, if it is an integer QLinearConv."""
    if isinstance(op, QLinearConvOp) and _is_integer_activation(op.results[0]):
        ops, readers, frontier = [op], [], [op.results[0]]
        while frontier:
            value = frontier.pop()
            for use in value.uses:
                user = use.operation
                follows = isinstance(user, FOLLOWERS) and use.index == 0 and _shape(user.results[0]) == _shape(value)
                if follows and user not in ops:
                    ops.append(user)
                    frontier.append(user.results[0])
                elif not follows:
                    readers.append((user, value))
        yield LayoutGroup(tuple(ops), tuple(readers))


@dataclass(frozen=True)
class AssignLayoutsPass(ModulePass):
    """Mark the integer activations whose readers are cheaper channels-last (`zant.channels_last`
    on their producers), on targets that have channels-last kernels."""

    name = "assign-layouts"

    budget: int = 0
    """Bytes of RAM a budgeted build's scratch may take (0: none): a QLinearConv whose input and
    output together take more must write one over the other (`schedule-in-place`), which only
    its NCHW nests can, so its input and output keep ONNX's layout; pointwise readers of such a
    tensor within the budget read a channels-last copy of it where one fits
    (`channels_last_copy`)."""

    in_place_blocks: bool = True
    """Whether to choose layouts for the widened form written over its NCHW input
    (`widened_over_nchw`), whose row asm runs only in ReleaseFast: `zant.driver.mode_pipeline`
    sets it false in a microcontroller's other modes. The bench KWS int8 on the M4:
    ReleaseFast 4,235,477 -> 3,323,432 instructions with it; ReleaseSafe 4,346,686 -> 6,311,174
    (its blocks' products in plain Zig: a frame pointer leaves the row's asm too few
    registers), ReleaseSmall 40,037 -> 45,615 B of flash (each layer's block loop, tail block
    and pair)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not target_parameters(op).conv_word_taps:
            return
        for function in op.walk():
            if not isinstance(function, func.FuncOp) or function.is_declaration:
                continue
            # A budget's Convs over it keep NCHW anyway (below); its bound is not the graph's.
            bound = graph_layer_bound(function) if self.in_place_blocks and not self.budget else 0
            for group in list(layout_groups(function)):
                if self.budget and any(_over(conv, self.budget) for conv in group.convs()):
                    channels_last_copy(group, self.budget)
                    continue
                if group.readers and group.cost(True, bound) < group.cost(False, bound):
                    for member in group.ops:
                        member.attributes[CHANNELS_LAST] = UnitAttr()
