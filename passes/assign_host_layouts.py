"""`assign-host-layouts`: which float activations are stored channels-last on targets with
vector registers, chosen for the whole graph from what their writers and readers cost in each
layout (the host's counterpart of `assign-layouts`, which decides for the int8 kernels of DSP
cores).

A marked op (`kernel.CHANNELS_LAST`) allocates its result as (N, spatial…, C) in memory and
publishes it indexed (N, C, spatial…) (`kernel.result_layout`), so every reader stays correct
whatever it is given; the decision only moves cost.

Tensors that must share a layout form a group: an element-wise op (`LAYOUT_ELEMENTWISE`) walks
its output in its layout's memory order, so it ties its output to each operand of the output's
shape (a residual Add ties both branches and its result; a Relu its input and output); a pool
ties its X and result, a Concat its inputs and result (each input's writer stores into its slice
of the result), and a 1x1 Conv in pixel lanes (`conv.pointwise_pixel_lanes`) its X and Y: it
takes pixel lanes from NCHW to NCHW and channel lanes from channels-last to channels-last, at the
difference of the two forms' estimated cycles (`switch_cycles`); so does a depthwise Conv in
depthwise rows (`conv.depthwise_row_lanes`), which takes depthwise lanes channels-last. A group
is channels-last when the cycles its writers and readers spend beyond their cheaper layout
(`write_cost`, `read_cost`, per element) and its Convs' switches sum to less that way:

* a Conv in a channel-lane form (`conv.conv_form`: channel lanes, depthwise lanes, constant
  weights) computes a vector of L output channels per pixel: it stores that vector whole into a
  channels-last result, and as L scalar stores at the stride H·W into an NCHW one
  (`SCATTER_CYCLES` per element);
* a Conv that copies its X channels-last before reading it (`conv.copies_channels_last`: 3x3
  windows over many channels, depthwise lanes) gathers each pixel's channels from an NCHW X at
  the stride H·W (`GATHER_CYCLES` per element); from a channels-last X the copy is front to back;
* a 1x1 Conv in channel lanes reads one X element per channel and pixel, broadcast: either
  layout alike;
* an element-wise op inside the group reads and writes in the group's layout;
* a global pool (or a pool with one output pixel) loops over (N, C), vectorized over C: a
  run of channels per tap channels-last, a gather at the stride H·W from NCHW;
* every other writer or reader (graph inputs and outputs, Reshape, Gemm, any other Conv in
  pixel lanes, whose vectors are rows of pixels, an element-wise op that broadcasts
  the tensor) has a kernel for NCHW only: channels-last would cost it a strided walk, so one of them
  keeps the group NCHW (`UNSUPPORTED`).

A Conv is weighed in the form it takes for the layout weighed (`conv_form` told the layout of
its Y): into a channels-last Y a 3x3 Conv whose direct form is pixel lanes may take the Winograd
form (`conv_winograd.PLANE_SETS` keeps it direct into an NCHW Y), and an image's stem over
`FEW_CHANNELS` input channels takes channel lanes; `onnx-to-uop` then reads the marks.

So the tensors between the Convs of a ResNet block or a MobileNet inverted residual are
channels-last, and the graph's inputs and outputs keep ONNX's layout.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, UnitAttr
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from zant.dialects.onnx import (
    AveragePoolOp,
    ConcatOp,
    ConstantOp,
    ConvOp,
    GlobalAveragePoolOp,
    GlobalMaxPoolOp,
    MaxPoolOp,
    input_value,
)
from zant.dialects.zant import target_parameters
from zant.dialects.uop import is_float_type
from zant.passes.onnx_to_uop.conv import conv_form, copies_channels_last, depthwise_row_lanes, pointwise_pixel_lanes
from zant.passes.onnx_to_uop.conv_tiling import VectorConv
from zant.passes.onnx_to_uop.elementwise import BINARY, UNARY
from zant.passes.onnx_to_uop.kernel import CHANNELS_LAST

SCATTER_CYCLES = 1.0
"""Cycles per element a channel-lane Conv spends storing its L-channel vectors into an NCHW
result as scalars, beyond one vector store into a channels-last one."""

GATHER_CYCLES = 1.0
"""Cycles per element a Conv spends gathering its X's channels from NCHW into its channels-last
copy, beyond copying a channels-last X front to back."""

DEPTHWISE_LANE_CYCLES = 0.25
"""Cycles per output element a depthwise Conv at unit stride spends in depthwise lanes beyond
depthwise rows (`conv.depthwise_row_lanes`). Measured in MobileNetV2 224 (mobilenet_v2_legacy,
both builds and onnxruntime interleaved in one process, each build from two copies of its
library, thread CPU time): its 112x112, 56x56 and 28x28 stages channels-last with their 3x3
depthwise Convs in lanes against NCHW with them in rows: 6.390 -> 6.277 ms; the 56x56 stage
kept NCHW (what 0.5 chooses): 6.331. Every one of those stages switches at up to 0.3."""

UNSUPPORTED = math.inf
"""The cost of a layout a writer or reader has no kernel for."""

LAYOUT_ELEMENTWISE = frozenset(UNARY) | frozenset(BINARY)
"""Element-wise ops that write their result in their `CHANNELS_LAST` mark's layout, walking it
in memory order (`elementwise.lower_elementwise`), each operand read through its own view."""

LAYOUT_POOLS = (MaxPoolOp, AveragePoolOp)
"""Pools (without MaxPool's Indices) that walk a channels-last result channels innermost, reading
a channels-last X (`pool._lower_pool`): the pool ties its X and its result to one layout."""

GLOBAL_POOLS = (GlobalAveragePoolOp, GlobalMaxPoolOp)
"""Pools whose output loops are (N, C) (and a `LAYOUT_POOLS` pool with one output pixel):
vectorized over C, each tap a run of a channels-last X, a gather at the stride H·W from an
NCHW one."""

LANE_FORMS = ("channel lanes", "depthwise lanes")


def _shape(value: SSAValue) -> tuple[int, ...] | None:
    return tuple(value.type.get_shape()) if isinstance(value.type, TensorType) else None


def _is_float_activation(value: SSAValue) -> bool:
    shape = _shape(value)
    # One pixel or one channel: both layouts are the same bytes in the same order.
    return (
        shape is not None and len(shape) >= 3 and shape[1] > 1 and math.prod(shape[2:]) > 1
        and all(d > 0 for d in shape) and is_float_type(value.type.get_element_type())  # type: ignore[attr-defined]
    )


def _constant_weights(conv: Operation) -> bool:
    w = input_value(conv, 1)
    return w is not None and isinstance(w.owner, ConstantOp) and "value" in w.owner.properties


def _switches(vector: VectorConv, op: Operation) -> bool:
    """Whether `op` is a Conv whose form follows its layout (constant weights): a 1x1 Conv
    (`conv.pointwise_pixel_lanes`) takes pixel lanes from an NCHW X into an NCHW Y, channel lanes
    from a channels-last X into a channels-last Y; a depthwise Conv (`conv.depthwise_row_lanes`)
    depthwise rows NCHW to NCHW, depthwise lanes channels-last to channels-last."""
    return isinstance(op, ConvOp) and _constant_weights(op) and (
        pointwise_pixel_lanes(vector, op) or depthwise_row_lanes(vector, op)
    )


def switch_cycles(vector: VectorConv, conv: Operation) -> float:
    """Cycles a `_switches` Conv's channel-lane form takes beyond its pixel-lane form
    (`VectorConv.pointwise_cycles`; negative where it is estimated cheaper), a depthwise Conv's
    lanes beyond its rows (`DEPTHWISE_LANE_CYCLES` per output element)."""
    (batch, out_channels, *spatial), channels = _shape(conv.results[0]), _shape(conv.operands[1])[1]
    if depthwise_row_lanes(vector, conv):
        return batch * out_channels * math.prod(spatial) * DEPTHWISE_LANE_CYCLES
    lanes, pixels = (vector.pointwise_cycles(channels, out_channels, spatial, f) for f in (True, False))
    return batch * (lanes - pixels)


def _ties(op: Operation, vector: VectorConv | None = None) -> list[SSAValue]:
    """The values an op ties to its result's layout: an element-wise op's result and each
    operand of its shape (broadcast operands, such as Clip's bounds or a per-channel scale, are
    read through their own views); a pool's result and its X (`LAYOUT_POOLS`); a Concat's result
    and its inputs; with `vector`, a `_switches` Conv's result and its X."""
    if len(op.results) != 1 or not _is_float_activation(op.results[0]):
        return []
    if isinstance(op, LAYOUT_POOLS) or (vector is not None and _switches(vector, op)):
        x = op.operands[0]
        return [op.results[0], x] if _is_float_activation(x) else []
    if isinstance(op, ConcatOp):
        # Each input is copied into its slice in the result's memory order, where its writer then
        # stores directly (`ConcatLowering`, `fuse-loops`): a Fire module's two expand Convs.
        return [op.results[0], *(v for v in op.operands if _is_float_activation(v))]
    if op.name not in LAYOUT_ELEMENTWISE:
        return []
    shape = _shape(op.results[0])
    # Operands of another element type (Where's condition, a Cast's input) are not activations
    # a layout is chosen for: read through their own views, as broadcast operands are.
    return [op.results[0], *(v for v in op.operands if _shape(v) == shape and _is_float_activation(v))]


def write_cost(vector: VectorConv, value: SSAValue, channels_last: bool, by_layout: bool = True) -> float:
    """Cycles the writer of `value` (outside its group's element-wise ops) spends in that
    layout beyond the cheaper one (module docstring); a Conv in the form it takes for that
    layout of its Y (`conv_form`; `by_layout` False: in its form as the Conv stands)."""
    writer = value.owner
    if isinstance(value, BlockArgument) or not isinstance(writer, Operation):
        return UNSUPPORTED if channels_last else 0
    form_layout = channels_last if by_layout else None
    if isinstance(writer, ConvOp) and _constant_weights(writer) and conv_form(vector, writer, form_layout) in LANE_FORMS:
        return 0 if channels_last else SCATTER_CYCLES * math.prod(_shape(value) or ())
    return UNSUPPORTED if channels_last else 0


def read_cost(vector: VectorConv, reader: Operation, value: SSAValue, channels_last: bool, by_layout: bool = True) -> float:
    """Cycles `reader` (outside the group) spends reading `value` in that layout beyond the
    cheaper one (module docstring). A Conv reader is weighed in the form it takes with its own
    Y channels-last (`by_layout`; False: as it stands): its Y's group is weighed apart, and
    should that group stay NCHW, the reader's direct form still copies X into a padded buffer
    first, from a channels-last X at about the gather this saves."""
    if isinstance(reader, ConvOp) and input_value(reader, 0) is value and not any(
        v is value for v in reader.operands[1:]
    ):
        if copies_channels_last(vector, reader, True if by_layout else None):
            return 0 if channels_last else GATHER_CYCLES * math.prod(_shape(value) or ())
        if conv_form(vector, reader) == "channel lanes" and _constant_weights(reader):
            return 0
    if isinstance(reader, GLOBAL_POOLS) or (isinstance(reader, LAYOUT_POOLS) and not _is_float_activation(reader.results[0])):
        return 0 if channels_last else GATHER_CYCLES * math.prod(_shape(value) or ())
    return UNSUPPORTED if channels_last else 0


@dataclass(frozen=True)
class LayoutGroup:
    """Float activations that share one layout: the ops that write them (marked together), the
    values written outside the group's element-wise ops, and the readers outside them."""

    members: tuple[Operation, ...]
    written: tuple[SSAValue, ...]
    readers: tuple[tuple[Operation, SSAValue], ...]

    def cost(self, vector: VectorConv, channels_last: bool, by_layout: bool = True) -> float:
        switched = sum(switch_cycles(vector, op) for op in self.members if by_layout and _switches(vector, op))
        return (switched if channels_last else 0) + sum(
            write_cost(vector, v, channels_last, by_layout) for v in self.written
        ) + sum(read_cost(vector, op, v, channels_last, by_layout) for op, v in self.readers)


def layout_groups(function: func.FuncOp, vector: VectorConv | None = None) -> Iterator[LayoutGroup]:
    """The function's float activations (rank ≥ 3, more than one channel) in groups tied by
    element-wise ops, pools, Concats and, with `vector`, the Convs whose form follows their
    layout (`_ties`), with their writers and outside readers."""
    parent: dict[SSAValue, SSAValue] = {}

    def find(v: SSAValue) -> SSAValue:
        while parent[v] is not v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    ops = list(function.body.walk())
    values = [*function.body.block.args, *(r for op in ops for r in op.results)]
    for v in values:
        if _is_float_activation(v):
            parent[v] = v
    tied: set[Operation] = set()
    for op in ops:
        ties = _ties(op, vector)
        if len(ties) > 0:
            tied.add(op)
            for v in ties[1:]:
                parent[find(v)] = find(ties[0])
    groups: dict[SSAValue, list[SSAValue]] = {}
    for v in parent:
        groups.setdefault(find(v), []).append(v)
    for values in groups.values():
        inside = set(values)
        readers = tuple(
            (use.operation, v)
            for v in values for use in v.uses
            if not (use.operation in tied and use.operation.results[0] in inside)
        )
        yield LayoutGroup(
            tuple(v.owner for v in values if isinstance(v.owner, Operation)),
            tuple(v for v in values if v.owner not in tied),
            readers,
        )


def host_vector_conv(module: ModuleOp) -> VectorConv | None:
    """The Conv forms `onnx-to-uop` takes on the module's target by default (None: no vector
    registers, no channel-lane forms)."""
    p = target_parameters(module)
    if not p.vector_lanes:
        return None
    return VectorConv(p.vector_lanes, p.conv_tile, p.vector_registers, p.vector_lane_registers or 1)


@dataclass(frozen=True)
class AssignHostLayoutsPass(ModulePass):
    """Mark the float activations whose writers and readers are cheaper channels-last
    (`zant.channels_last` on their writers), on targets with vector registers.

    `forms-by-layout` (default true) weighs each Conv in the form it takes for the layout
    weighed (`conv_form`: the Winograd form into a channels-last Y, channel lanes for an
    image's stem, and a 1x1 Conv in pixel lanes ties its X and Y); false weighs the Conv's form
    as it stands without marks (the rule before, for measuring the difference)."""

    name = "assign-host-layouts"

    forms_by_layout: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        vector = host_vector_conv(op)
        if vector is None:
            return
        for function in op.walk():
            if not isinstance(function, func.FuncOp) or function.is_declaration:
                continue
            for group in list(layout_groups(function, vector if self.forms_by_layout else None)):
                if group.cost(vector, True, self.forms_by_layout) < group.cost(vector, False, self.forms_by_layout):
                    for member in group.members:
                        member.attributes[CHANNELS_LAST] = UnitAttr()
