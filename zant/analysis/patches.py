"""Receptive fields and the cost of patch-based execution of an early stage (`schedule-patches`).

A *stage* starts at a graph input: the ops that read only it and the results of the ops before
them (a layout Transpose, Convs: float, QLinearConv, ConvInteger; element-wise ops with scalar
parameters: Clip, Relu ...; the Adds of residual blocks), up to a point where one tensor alone
crosses. Run patch by patch, each spatial tile of the stage's output is computed through every
layer from the tile of the graph input its receptive field covers; each layer's tile is the
part of its output the layers after it read in that tile (the halo is recomputed by the
neighbouring tiles), so no intermediate tensor of the stage ever exists whole.

This module only measures: for a stage and a grid of tiles it gives each layer's tile (its
region, its padding at the tensor's borders), the MACs of the tiled stage against the
layer-by-layer ones (the recomputed halo) and an estimate of the bytes live at once while the
stage runs, and it ranks the choices (`choose`). The pass does the rewrite.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue

from zant.dialects.onnx import (
    AddOp,
    ClipOp,
    ConstantOp,
    ConvIntegerOp,
    ConvOp,
    LeakyReluOp,
    OnnxOp,
    QLinearAddOp,
    QLinearConvOp,
    ReluOp,
    TransposeOp,
    get_attr,
    inputs,
)

WINDOW_OPS = (ConvOp, QLinearConvOp, ConvIntegerOp)
"""Convolutions (NCHW, two spatial axes, input 0 the activation, the rest parameters)."""
ELEMENTWISE_OPS = (ClipOp, ReluOp, LeakyReluOp)
"""Element-wise ops a stage may hold (their other inputs scalars)."""
BINARY_OPS = (AddOp, QLinearAddOp)
"""The Adds of residual blocks: two activations of one shape (their other inputs scalars)."""

Span = tuple[int, int]
"""A half-open range [lo, hi) of one spatial axis."""


@dataclass(frozen=True)
class Layer:
    """One op of a stage and how its output's spatial axes map onto its inputs'."""

    op: OnnxOp
    in_axes: tuple[int, int]
    """The input's axes that hold the output's rows and columns (2, 3 but for a Transpose)."""
    window: tuple[tuple[int, int, int, int, int], ...] | None
    """Per spatial axis (kernel, stride, dilation, pad begin, pad end); None: element-wise."""
    sources: tuple[int, ...] = (0,)
    """The ONNX inputs that are activations (the rest are parameters): 0, or both addends."""

    @cached_property
    def input(self) -> SSAValue:
        return inputs(self.op)[self.sources[0]]  # type: ignore[return-value]

    @cached_property
    def activations(self) -> list[SSAValue]:
        return [inputs(self.op)[k] for k in self.sources]  # type: ignore[misc]

    @cached_property
    def in_lengths(self) -> tuple[int, int]:
        shape = shape_of(self.input)
        return shape[self.in_axes[0]], shape[self.in_axes[1]]

    @cached_property
    def pixel_bytes(self) -> int:
        """Bytes of one output pixel (all channels)."""
        shape = shape_of(self.output)
        return nbytes(self.output) // (shape[2] * shape[3])

    @cached_property
    def output_bytes(self) -> int:
        return nbytes(self.output)

    @cached_property
    def pixel_macs(self) -> int:
        """MACs of one output pixel (all channels)."""
        return self.macs_per_output() * math.prod(shape_of(self.output)[:2])

    @property
    def output(self) -> SSAValue:
        return self.op.results[0]

    def in_spans(self, out: Sequence[Span]) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
        """The input spans `out` reads (clamped to the input) and the padding the tile's op adds
        at each end (begin, end) for the positions outside the input."""
        spans, pads = [], []
        for d, (lo, hi) in enumerate(out):
            length = self.in_lengths[d]
            if self.window is None:
                spans.append((lo, hi))
                pads.append((0, 0))
                continue
            kernel, stride, dilation, begin, _ = self.window[d]
            a = lo * stride - begin
            b = (hi - 1) * stride - begin + (kernel - 1) * dilation + 1
            spans.append((max(a, 0), min(b, length)))
            pads.append((max(0, -a), max(0, b - length)))
        return tuple(spans), tuple(pads)

    def macs_per_output(self) -> int:
        """Multiply-accumulates per output element (0 for element-wise ops)."""
        if self.window is None:
            return 0
        weight = shape_of(inputs(self.op)[3 if isinstance(self.op, QLinearConvOp) else 1])  # type: ignore[arg-type]
        return math.prod(weight[1:])


def shape_of(value: SSAValue) -> list[int]:
    assert isinstance(value.type, TensorType)
    return list(value.type.get_shape())


def nbytes(value: SSAValue, spans: Sequence[Span] | None = None, axes: Sequence[int] = (2, 3)) -> int:
    """Bytes of `value`, or of its tile `spans` over `axes`."""
    assert isinstance(value.type, TensorType)
    shape = shape_of(value)
    if spans is not None:
        for axis, (lo, hi) in zip(axes, spans):
            shape[axis] = hi - lo
    width = value.type.element_type.bitwidth  # type: ignore[attr-defined]
    return math.prod(shape) * max(width, 8) // 8


def _scalar_parameters(op: OnnxOp, sources: Sequence[int] = (0,)) -> bool:
    rest = [v for k, v in enumerate(inputs(op)) if v is not None and k not in sources]
    return all(isinstance(v.type, TensorType) and math.prod(v.type.get_shape()) == 1 for v in rest)


def _four_d(value: SSAValue | None) -> bool:
    return value is not None and isinstance(value.type, TensorType) and len(value.type.get_shape()) == 4


def layer_of(op: OnnxOp) -> Layer | None:
    """The op as a stage layer, or None if a stage cannot hold it."""
    value = inputs(op)[0] if inputs(op) else None
    if not _four_d(value) or len(op.results) != 1:
        return None
    if isinstance(op, TransposeOp):
        perm = get_attr(op, "perm")
        if perm is None or list(perm[:2]) not in ([0, 3], [0, 1]) or sorted(perm) != [0, 1, 2, 3]:
            return None
        return Layer(op, (perm[2], perm[3]), None)
    if isinstance(op, ELEMENTWISE_OPS):
        return Layer(op, (2, 3), None) if _scalar_parameters(op) else None
    if isinstance(op, BINARY_OPS):
        sources = (0, 3) if isinstance(op, QLinearAddOp) else (0, 1)
        other = inputs(op)[sources[1]]
        if not _four_d(other) or shape_of(other) != shape_of(value) or shape_of(op.results[0]) != shape_of(value):  # type: ignore[arg-type]
            return None
        return Layer(op, (2, 3), None, sources) if _scalar_parameters(op, sources) else None
    if isinstance(op, WINDOW_OPS):
        if get_attr(op, "auto_pad") != "NOTSET":
            return None
        weight = inputs(op)[3 if isinstance(op, QLinearConvOp) else 1]
        if weight is None or len(shape_of(weight)) != 4:
            return None
        kernel = get_attr(op, "kernel_shape") or shape_of(weight)[2:]
        strides = get_attr(op, "strides") or [1, 1]
        dilations = get_attr(op, "dilations") or [1, 1]
        pads = get_attr(op, "pads") or [0, 0, 0, 0]
        window = tuple((kernel[d], strides[d], dilations[d], pads[d], pads[2 + d]) for d in range(2))
        return Layer(op, (2, 3), window)
    return None


def stages(function: func.FuncOp) -> list[list[Layer]]:
    """From each 4-D graph input, the ops in program order that read only it and the results of
    the ops before them (a layout Transpose first, convolutions, element-wise ops, the Adds of
    residual blocks), up to the first op that reads them and cannot join; its prefixes that end
    in a single tensor (`prefix_ends`) are the stages."""
    result = []
    for argument in function.body.block.args:
        if not _four_d(argument):
            continue
        chain: list[Layer] = []
        values: set[SSAValue] = {argument}
        for op in function.body.block.ops:
            if not any(operand in values for operand in op.operands):
                continue
            layer = layer_of(op) if isinstance(op, OnnxOp) else None
            if (
                layer is None or any(a not in values for a in layer.activations)
                or (isinstance(op, TransposeOp) and chain)
                or (argument in layer.activations and chain)  # the input has one user: the first
            ):
                break
            chain.append(layer)
            values.add(layer.output)
        if any(layer.window is not None for layer in chain):
            result.append(chain)
    return result


def prefix_ends(stage: Sequence[Layer]) -> list[int]:
    """The k whose prefix stage[: k + 1] ends in one tensor: every other result of the prefix is
    read only inside it (the stage's output may be read anywhere)."""
    inside: set = set()
    ends = []
    for k, layer in enumerate(stage):
        inside.add(layer.op)
        if all(
            all(use.operation in inside for use in other.output.uses) for other in stage[:k]
        ):
            ends.append(k)
    return ends


def _split(length: int, parts: int) -> list[Span]:
    bounds = [round(k * length / parts) for k in range(parts + 1)]
    return [(bounds[k], bounds[k + 1]) for k in range(parts) if bounds[k + 1] > bounds[k]]


@dataclass(frozen=True)
class TileLayer:
    """One layer of one tile: the spans of its activations it reads, the padding it adds, and
    the spans of its output it computes (all its users in the tile read, so at least as large
    as what each reads: a residual's skip is read at the Add's spans and by the next convolution
    with a halo)."""

    in_spans: tuple[Span, ...]
    pads: tuple[Span, ...]
    out_spans: tuple[Span, ...]


@dataclass(frozen=True)
class PatchPlan:
    """A stage run `rows` x `cols` tiles of its output, each through every layer."""

    stage: tuple[Layer, ...]
    rows: int
    cols: int
    tiles: tuple[tuple[tuple[int, int], tuple[TileLayer, ...]], ...]
    """((row, col), one TileLayer per layer), row by row."""
    macs: int
    """MACs of the tiled stage."""
    layer_macs: int
    """MACs of the same layers run layer by layer."""
    peak_bytes: int
    """Estimated bytes live at once while the stage runs (its input if it is scratch, the tiles'
    outputs kept for the Concat, the tile buffers live at one layer) and at the Concats."""
    after_bytes: int = 0
    """Estimated bytes live at once in the rest of the network, after the stage (`after_stage`;
    0 when not estimated)."""

    @property
    def estimated_bytes(self) -> int:
        """What the scratch arena needs, as estimated: the stage's peak or the rest's."""
        return max(self.peak_bytes, self.after_bytes)

    @property
    def extra_macs(self) -> int:
        return self.macs - self.layer_macs

    @property
    def stage_output(self) -> SSAValue:
        return self.stage[-1].output

    def describe(self) -> str:
        """One line: grid, layers, MACs, peak (the pass's report and the op attribute)."""
        first, last = self.stage[0].op, self.stage[-1].op
        return (
            f"{self.rows}x{self.cols} tiles of {'x'.join(map(str, shape_of(self.stage_output)))}, "
            f"{len(self.stage)} layers ({first.name} .. {last.name}): {self.macs:,} MACs "
            f"(+{self.extra_macs:,}, {100 * self.extra_macs / max(self.layer_macs, 1):.1f}% recomputed halo), "
            f"~{self.peak_bytes:,} B live at once"
        )


def _last_uses(stage: Sequence[Layer]) -> list[int]:
    """Per layer, the index of the last layer reading its output (len(stage) for the output)."""
    index = {layer.output: k for k, layer in enumerate(stage)}
    last = list(range(len(stage)))
    for k, layer in enumerate(stage):
        for value in layer.activations:
            if value in index:
                last[index[value]] = max(last[index[value]], k)
    last[-1] = len(stage)
    return last


def _pixels(spans: Sequence[Span]) -> int:
    return math.prod(hi - lo for lo, hi in spans)


def _union(a: tuple[Span, ...] | None, b: tuple[Span, ...]) -> tuple[Span, ...]:
    return b if a is None else tuple((min(x[0], y[0]), max(x[1], y[1])) for x, y in zip(a, b))


def tile_layers(stage: Sequence[Layer], spans: tuple[Span, ...]) -> tuple[TileLayer, ...]:
    """Each layer's spans for the tile `spans` of the stage's output, from the last layer back:
    a layer computes the union of what its users read."""
    wanted: dict[SSAValue, tuple[Span, ...]] = {stage[-1].output: spans}
    per_layer: list[TileLayer] = []
    for layer in reversed(stage):
        out = wanted[layer.output]
        in_spans, pads = layer.in_spans(out)
        per_layer.append(TileLayer(in_spans, pads, out))
        for value in layer.activations:
            wanted[value] = _union(wanted.get(value), in_spans)
    return tuple(reversed(per_layer))


def plan_patches(stage: Sequence[Layer], rows: int, cols: int) -> PatchPlan:
    """The tiles of `stage` for a `rows` x `cols` grid over its output, their MACs and peak."""
    out = shape_of(stage[-1].output)
    col_spans = _split(out[3], cols)
    tiles = []
    macs = 0
    for r, row_span in enumerate(_split(out[2], rows)):
        for c, col_span in enumerate(col_spans):
            per_layer = tile_layers(stage, (row_span, col_span))
            for layer, tile in zip(stage, per_layer):
                macs += layer.pixel_macs * _pixels(tile.out_spans)
            tiles.append(((r, c), per_layer))
    layer_macs = sum(layer.pixel_macs * math.prod(shape_of(layer.output)[2:]) for layer in stage)
    start = stage[0].input
    held = 0 if isinstance(start, BlockArgument) else nbytes(start)
    last = _last_uses(stage)
    done = row_tiles = peak = 0
    for (r, c), per_layer in tiles:
        sizes = [layer.pixel_bytes * _pixels(tile.out_spans) for layer, tile in zip(stage, per_layer)]
        live = 0  # the tile buffers produced before layer k and read at k or later
        for k in range(len(stage)):
            live -= sum(sizes[j] for j in range(k) if last[j] == k - 1 and j != len(stage) - 1)
            peak = max(peak, held + done + row_tiles + live + sizes[k])
            live += sizes[k] if k != len(stage) - 1 else 0
        row_tiles += sizes[-1]
        if c == len(col_spans) - 1:  # the row's Concat: its tiles and the strip
            peak = max(peak, held + done + 2 * row_tiles)
            done += row_tiles
            row_tiles = 0
    peak = max(peak, 2 * nbytes(stage[-1].output))  # the strips and the stage output
    return PatchPlan(tuple(stage), rows, cols, tuple(tiles), macs, layer_macs, peak)


def candidates(stage: Sequence[Layer], max_tiles: int = 8) -> list[PatchPlan]:
    """Every prefix of `stage` that ends in one tensor after a window op (and the element-wise
    ops right after it) with every square grid of 2 .. `max_tiles` tiles a side (no more than
    the output's side)."""
    result = []
    for end in prefix_ends(stage):
        prefix = stage[: end + 1]
        if not any(layer.window is not None for layer in prefix):
            continue
        if end + 1 < len(stage) and stage[end + 1].window is None and len(stage[end + 1].sources) == 1:
            continue  # end a stage after the element-wise ops of its last window op
        if 2 * prefix[-1].output_bytes >= layer_bound(prefix):
            continue  # the Concats alone need as much as the layers
        out = shape_of(prefix[-1].output)
        for n in range(2, min(max_tiles, out[2], out[3]) + 1):
            result.append(plan_patches(prefix, n, n))
    return result


def layer_bound(stage: Sequence[Layer]) -> int:
    """The most bytes the stage's tensors take at once run layer by layer (each layer's output
    beside the results still to be read; the graph input is the caller's)."""
    last = _last_uses(stage)
    return max(
        sum(stage[j].output_bytes for j in range(k) if last[j] >= k) + layer.output_bytes
        for k, layer in enumerate(stage)
    ) + (0 if isinstance(stage[0].input, BlockArgument) else nbytes(stage[0].input))


def _in_place_savings(op: OnnxOp, value: SSAValue, nchw: Callable[[OnnxOp, SSAValue], bool]) -> int:
    """Bytes an op's output may share with its input `value` (which dies there): an
    element-wise op's or a residual Add's (`plan-arenas`' in-place rule), a pointwise or
    depthwise convolution's of one element type where `nchw` says its input and output keep
    ONNX's layout (`schedule-in-place` rewrites those nests, not the channels-last forms)."""
    layer = layer_of(op)
    if layer is None or value not in layer.activations:
        return 0
    if layer.output.type.element_type != value.type.element_type:  # type: ignore[attr-defined]
        return 0
    if layer.window is None:
        return min(nbytes(value), layer.output_bytes) if isinstance(op, ELEMENTWISE_OPS + BINARY_OPS) else 0
    channels = shape_of(value)[1]
    pointwise = all(w[0] == 1 and w[1] == 1 for w in layer.window)
    if not pointwise and (get_attr(op, "group") or 1) != channels or not nchw(op, value):
        return 0
    return min(nbytes(value), layer.output_bytes)


def after_stage(
    function: func.FuncOp, nchw: Callable[[OnnxOp, SSAValue], bool] = lambda op, value: True,
) -> dict[Operation, int]:
    """For each op of `function`'s body, the most bytes the ops after it keep live at once,
    estimated on the `onnx` graph: at each op, the results read there or later (not the
    constants, the graph's inputs or the results it returns, which are the caller's) and its
    own, less what a pointwise or depthwise convolution may write over its dying input
    (`schedule-in-place`, where `nchw(conv, input)`: both in ONNX's layout). A stage's plan
    needs at least this for the layers after it."""
    ops = list(function.body.block.ops)
    index = {op: k for k, op in enumerate(ops)}
    returned = {v for op in ops if isinstance(op, func.ReturnOp) for v in op.operands}

    def top(op: Operation) -> int:
        while op.parent_op() is not function:
            op = op.parent_op()  # type: ignore[assignment]
        return index[op]

    def counted(value: SSAValue) -> bool:
        return (
            isinstance(value.type, TensorType) and value not in returned
            and not isinstance(value.owner, ConstantOp) and not isinstance(value, BlockArgument)
        )

    last = {
        r: max((top(use.operation) for use in r.uses), default=k)
        for k, op in enumerate(ops) for r in op.results if counted(r)
    }
    events = [0] * (len(ops) + 1)
    for value, end in last.items():
        events[index[value.owner]] += nbytes(value)  # type: ignore[index]
        events[end + 1] -= nbytes(value)
    live, at = 0, []
    for k, op in enumerate(ops):
        live += events[k]
        saving = max(
            (_in_place_savings(op, v, nchw) for v in op.operands if v in last and last[v] == k),  # type: ignore[arg-type]
            default=0,
        ) if isinstance(op, OnnxOp) else 0
        at.append(live - saving)
    result, peak = {}, 0
    for k in range(len(ops) - 1, -1, -1):
        result[ops[k]] = peak
        peak = max(peak, at[k])
    return result


def choose(
    stage: Sequence[Layer], budget: int | None, max_tiles: int = 8, after: dict[Operation, int] | None = None,
) -> PatchPlan | None:
    """The plan with the fewest MACs whose estimated bytes (the stage's peak, or the rest's
    from `after`, `after_stage`'s, when larger) are within `budget` (ties: the smaller peak);
    without a budget or when none is within it, the smallest estimate (ties: fewer MACs). None
    when no plan's peak is below the stage's layer-by-layer bound."""
    plans = [
        replace(p, after_bytes=(after or {}).get(p.stage[-1].op, 0))
        for p in candidates(stage, max_tiles) if p.peak_bytes < layer_bound(stage)
    ]
    if not plans:
        return None
    within = [p for p in plans if budget is not None and p.estimated_bytes <= budget]
    if within:
        return min(within, key=lambda p: (p.macs, p.estimated_bytes, p.rows))
    return min(plans, key=lambda p: (p.estimated_bytes, p.macs, p.rows))
