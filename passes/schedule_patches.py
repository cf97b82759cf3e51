"""`schedule-patches`: run the early high-resolution stage patch by patch (MCUNetV2's idea).

The first layers of a vision network hold its largest activations (VWW's MobileNetV1 at 96x96:
its first convolution's 48x48x8 output beside a padded copy of the input, its first pointwise
convolution's 48x48x16 output); a layer-by-layer plan needs the largest input + output of one
layer at once. This pass splits the stage's output into a grid of spatial tiles and computes
each tile through every layer of the stage from the tile of the graph input its receptive field
covers (`zant.analysis.patches`): each layer's tile is the part of its output the next layer's
tile reads, its halo recomputed by the neighbouring tiles, and each tile's convolutions pad only
at the tensor's borders (`pads` per tile). So no intermediate tensor of the stage exists whole:
the tiles' buffers live one tile long, and the stage output is assembled by one Concat per row
of tiles and one of the rows, marked `CONCAT_DESTINATION`: each tile's last layer stores
straight into its slice of the stage output (`onnx-to-uop`), so the Concats copy nothing.

It runs on the `onnx` dialect, before `onnx-to-uop`, because that is where the stage is a chain
of named layers with their windows and pads: each tile is then ordinary Slice (a view of the
graph input) -> layers -> Concat that every lowering (scalar, the DSP cores' column and region
forms) compiles as it compiles the whole layer, computing each output element from the same
window, weights and requantization: the same bytes. A rewrite of the uop nests instead would
need one per loop form. The cost is the code of one set of layers per tile (flash) and the
recomputed halo (MACs).

Which stage and grid: among the prefixes of what starts at a 4-D graph input (the ops that read
only it and the results before them: a layout Transpose, convolutions, element-wise ops with
scalar parameters, residual Adds; cut where one tensor alone crosses) and square grids of
2 .. `max-tiles` a side, `zant.analysis.patches.choose`: with `budget` (bytes), the fewest MACs
whose estimated peak fits it; without, the smallest estimated peak. A tensor two layers of the
stage read (a residual's skip) is computed per tile over the union of what they read, and the
reader that needs less takes a Slice of it. Only under a RAM budget the layer-by-layer plans
miss (`zant.driver.fit_ram`, docs/ram-budget.md); never in a default pipeline. The ops it
writes carry `zant.patch = "ROW,COL of RxC"`, the last Concat `zant.patch_stage` (the plan's
summary: grid, MACs and the recomputed ones, estimated peak) and the module `zant.patches`
(the plan JSON's `schedules`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, DictionaryAttr, IntegerAttr, IntegerType, ModuleOp, StringAttr, TensorType, UnitAttr, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.analysis.patches import PatchPlan, Span, choose, shape_of, stages
from zant.dialects.onnx import ClipOp, ConstantOp, OnnxOp, inputs, onnx_op_class
from zant.dialects.onnx_nodes import constant_op
from zant.ir.resources import constant_array
from zant.ir.walk import ops_of
from zant.passes.onnx_to_uop.kernel import CHANNELS_LAST, CONCAT_DESTINATION

PATCH_ATTRIBUTE = "zant.patch"
"""On each op of a tile: which tile ("r,c of RxC")."""
STAGE_ATTRIBUTE = "zant.patch_stage"
"""On the Concat that assembles the stage: the plan's summary."""
MODULE_ATTRIBUTE = "zant.patches"
"""On the module, one dictionary per stage run patch by patch (it outlives the lowering): what
the plan JSON's `schedules` reports (`zant.backend.plan`)."""


def _tensor(value: SSAValue, spans, axes=(2, 3)) -> TensorType:
    shape = shape_of(value)
    for axis, (lo, hi) in zip(axes, spans):
        shape[axis] = hi - lo
    return TensorType(value.type.element_type, shape)  # type: ignore[attr-defined]


def _insert(op: Operation, before: Operation, mark: str | None) -> SSAValue:
    if mark is not None:
        op.attributes[PATCH_ATTRIBUTE] = StringAttr(mark)
    op.location = before.location
    Rewriter.insert_op(op, InsertPoint.before(before))
    return op.results[0]


def _constant(values: list[int], hint: str, before: Operation) -> SSAValue:
    array = np.array(values, np.int64)
    op = constant_op(array, TensorType(IntegerType(64), [len(values)]), hint)
    op.results[0].name_hint = hint
    return _insert(op, before, None)


def _read(
    value: SSAValue, spans: tuple[Span, ...], axes: tuple[int, int],
    tiles: dict[SSAValue, tuple[SSAValue, tuple[Span, ...]]], anchor: Operation, mark: str,
) -> SSAValue:
    """The tile of `value` over `spans`: the tile computed for it if it spans as much, else a
    Slice (a view) of that tile, or of the stage input."""
    base, offset = value, [0, 0]
    if value in tiles:
        base, region = tiles[value]
        if region == spans:
            return base
        offset = [lo for lo, _ in region]
    starts = [lo - o for (lo, _), o in zip(spans, offset)]
    ends = [hi - o for (_, hi), o in zip(spans, offset)]
    op = onnx_op_class("Slice").from_onnx(
        [
            base,
            _constant(starts, "patch_starts", anchor),
            _constant(ends, "patch_ends", anchor),
            _constant(list(axes), "patch_axes", anchor),
        ],
        [_tensor(base, spans, axes)],
    )
    return _insert(op, anchor, mark)


def rewrite(plan: PatchPlan) -> SSAValue:
    """Replace the stage by its tiles and Concats (before the stage's last op); the new stage
    output."""
    stage = plan.stage
    anchor = stage[-1].op  # every operand of the stage's ops is defined before it
    grid = f"{plan.rows}x{plan.cols}"
    strips: list[SSAValue] = []
    row_tiles: list[SSAValue] = []
    for index, ((r, c), per_layer) in enumerate(plan.tiles):
        mark = f"{r},{c} of {grid}"
        tiles: dict[SSAValue, tuple[SSAValue, tuple[Span, ...]]] = {}
        for layer, tile in zip(stage, per_layer):
            if layer is stage[-1] and _is_identity_clip(layer.op) and inputs(layer.op)[0] in tiles:
                value = tiles[inputs(layer.op)[0]][0]  # its input's tile stores into the stage output
                break
            operands = inputs(layer.op)
            for k, activation in zip(layer.sources, layer.activations):
                operands[k] = _read(activation, tile.in_spans, layer.in_axes, tiles, anchor, mark)
            properties = dict(layer.op.properties)
            if layer.window is not None:
                properties["pads"] = DenseArrayBase.from_list(i64, [p[0] for p in tile.pads] + [p[1] for p in tile.pads])
            op = type(layer.op).from_onnx(
                operands, [_tensor(layer.output, tile.out_spans)], properties, dict(layer.op.attributes)
            )
            value = _insert(op, anchor, mark)
            value.name_hint = f"{layer.output.name_hint or 'patch'}_r{r}c{c}"
            tiles[layer.output] = (value, tile.out_spans)
        row_tiles.append(value)
        at_row_end = index + 1 == len(plan.tiles) or plan.tiles[index + 1][0][0] != r
        if at_row_end:
            strips.append(_concat(row_tiles, 3, anchor, f"row {r} of {grid}"))
            strips[-1].name_hint = f"{plan.stage_output.name_hint or 'patch'}_row{r}"
            row_tiles = []
    result = _concat(strips, 2, anchor, None)
    result.owner.attributes[STAGE_ATTRIBUTE] = StringAttr(plan.describe())  # type: ignore[union-attr]
    result.name_hint = plan.stage_output.name_hint
    plan.stage_output.replace_all_uses_with(result)
    for layer in reversed(stage):
        layer.op.detach()
        layer.op.erase()
    return result


def _is_identity_clip(op: Operation) -> bool:
    """A Clip of integers whose constant bounds span its type (an int8 ReLU whose zero point is
    -128): the identity. Left in a tile it would be the layer that stores into the stage output
    (`CONCAT_DESTINATION`), a copy of the convolution's output; dropped, the convolution stores
    there itself, where layer by layer `fuse-loops` folds it into the convolution's stores."""
    element = op.results[0].type.element_type if isinstance(op.results[0].type, TensorType) else None
    if not isinstance(op, ClipOp) or not isinstance(element, IntegerType):
        return False
    info = np.iinfo(f"{'u' if element.signedness.data.name == 'UNSIGNED' else ''}int{element.width.data}")
    bounds = inputs(op)[1:] + [None] * (3 - len(inputs(op)))
    for value, limit, holds in ((bounds[0], info.min, np.less_equal), (bounds[1], info.max, np.greater_equal)):
        if value is None:
            continue
        owner = value.owner
        if not (isinstance(owner, ConstantOp) and "value" in owner.properties):
            return False
        if not np.all(holds(constant_array(owner).astype(np.int64), limit)):
            return False
    return True


def _concat(values: list[SSAValue], axis: int, before: Operation, mark: str | None) -> SSAValue:
    if len(values) == 1:
        return values[0]
    shape = shape_of(values[0])
    shape[axis] = sum(shape_of(v)[axis] for v in values)
    op = onnx_op_class("Concat").from_onnx(
        values, [TensorType(values[0].type.element_type, shape)], {"axis": IntegerAttr(axis, 64)}  # type: ignore[attr-defined]
    )
    op.attributes[CONCAT_DESTINATION] = UnitAttr()  # the tiles store into the stage output: no copies
    return _insert(op, before, mark)


def summary(plan: PatchPlan) -> DictionaryAttr:
    """The plan as the module attribute records it."""
    return DictionaryAttr({
        "schedule": StringAttr("patches"),
        "output": StringAttr(plan.stage_output.name_hint or ""),
        "layers": IntegerAttr(len(plan.stage), 64),
        "first": StringAttr(plan.stage[0].op.name),
        "tiles": ArrayAttr([IntegerAttr(plan.rows, 64), IntegerAttr(plan.cols, 64)]),
        "macs": IntegerAttr(plan.macs, 64),
        "layer_macs": IntegerAttr(plan.layer_macs, 64),
        "estimated_peak_bytes": IntegerAttr(plan.peak_bytes, 64),
    })


def _nchw(conv: OnnxOp, value: SSAValue) -> bool:
    """Whether `conv` reads `value` and writes its output in ONNX's layout: `assign-layouts`
    marks channels-last producers, whose convolutions `schedule-in-place` cannot write over
    their inputs, so the cost model keeps both whole beside the stage (VWW under 22,118 B with
    the channels-last kernels: a longer stage, docs/ram-budget.md)."""
    return CHANNELS_LAST not in conv.attributes and not (
        isinstance(value.owner, Operation) and CHANNELS_LAST in value.owner.attributes
    )


def schedule_function(function: func.FuncOp, budget: int | None, tiles: int, max_tiles: int) -> list[PatchPlan]:
    """Patch the stages of `function` (see the module docstring); the plans applied."""
    from zant.analysis.patches import after_stage, plan_patches, prefix_ends

    done = []
    after = after_stage(function, _nchw)
    for stage in stages(function):
        if tiles:
            ends = [k for k in prefix_ends(stage) if any(layer.window is not None for layer in stage[: k + 1])]
            stage = stage[: max(ends) + 1]
            plan: PatchPlan | None = plan_patches(stage, tiles, tiles)
        else:
            plan = choose(stage, budget, max_tiles, after)
        if plan is None:
            continue
        rewrite(plan)
        done.append(plan)
    return done


@dataclass(frozen=True)
class SchedulePatchesPass(ModulePass):
    """Run the early high-resolution stage tile by tile (see the module docstring); on the
    `onnx` dialect, before `onnx-to-uop`."""

    name = "schedule-patches"

    budget: int = 0
    """Bytes the stage may keep live at once (estimated): the plan with the fewest MACs within
    it; 0: the smallest peak."""
    tiles: int = 0
    """Force a `tiles` x `tiles` grid over the whole chain (testing); 0: chosen by the cost model."""
    max_tiles: int = 8
    """The largest grid side the cost model considers."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        done = []
        for function in list(ops_of(op, func.FuncOp)):
            if any(isinstance(o, OnnxOp) for o in function.walk()):
                done += schedule_function(function, self.budget or None, self.tiles, self.max_tiles)
        if done:
            recorded = op.attributes.get(MODULE_ATTRIBUTE)
            before = list(recorded.data) if isinstance(recorded, ArrayAttr) else []
            op.attributes[MODULE_ATTRIBUTE] = ArrayAttr(before + [summary(plan) for plan in done])
