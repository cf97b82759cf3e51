"""`normalize-exports`: one spelling for what the torch exporters write in two.

The legacy (TorchScript) exporter and the dynamo exporter write the same torchvision network
with different ops at its head: `adaptive_avg_pool2d(x, 1)` is a GlobalAveragePool in the one
and a ReduceMean over the spatial axes in the other, and `torch.flatten(x, 1)` a Flatten in the
one and a Reshape to `[N, -1]` in the other. The passes after this one and the layout decisions
see op types, so each pattern rewrites the second spelling into the first and both exports
compile to the same kernels:

| written | becomes | when |
|---|---|---|
| ReduceMean(x, axes) | GlobalAveragePool(x), then Flatten(axis=1) for `keepdims=0` | float x of rank ≥ 4 (an image or a volume), constant `axes` naming every spatial axis (2 … rank−1, in any order or sign) and only those |
| Reshape(x, shape) | Flatten(x, axis=k) | a constant `shape`, a rank-2 result whose first extent is x's extents before axis k multiplied (k ≥ 1) |

Each rewrite computes the same values: the mean over the spatial axes is the global average
pool's, and a row-major Reshape to `[prod(x.shape[:k]), prod(x.shape[k:])]` is Flatten at k. A
ReduceMean over other axes, of integers (GlobalAveragePool is float only) or with run-time
axes, and any other Reshape, are left alone; so is the mean over the last axis of a rank-3
tensor, which is a transformer's LayerNorm (`[batch, tokens, features]`) far more often than a
1-D CNN's head.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from zant.dialects.onnx import (
    ConstantOp,
    FlattenOp,
    GlobalAveragePoolOp,
    ReduceMeanOp,
    ReshapeOp,
    get_attr,
    inputs,
)
from zant.ir.resources import constant_array
from zant.ir.types import numpy_dtype


def _constant(value: SSAValue | None) -> np.ndarray | None:
    owner = value.owner if value is not None else None
    if isinstance(owner, ConstantOp) and "value" in owner.properties:
        return constant_array(owner)
    return None


def _static_shape(value: SSAValue) -> tuple[int, ...] | None:
    if not isinstance(value.type, TensorType):
        return None
    shape = tuple(value.type.get_shape())
    return shape if all(d >= 0 for d in shape) else None


def _replace(rewriter: PatternRewriter, op: Operation, new: Operation, dropped: list[SSAValue | None]) -> None:
    """Replace `op` by `new` (its result keeps the name), erasing the constants only `op` read."""
    new.results[0].name_hint = op.results[0].name_hint
    new.location = op.location
    rewriter.replace(op, new)
    for value in dropped:
        if value is not None and not value.uses and _constant(value) is not None:
            rewriter.erase(value.owner)


class GlobalPoolFromReduceMean(RewritePattern):
    """ReduceMean over every spatial axis → GlobalAveragePool (dynamo's adaptive average pool)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ReduceMeanOp):
            return
        operands = inputs(op)
        x, axes = operands[0], _constant(operands[1]) if len(operands) > 1 else None
        shape = _static_shape(x)
        if axes is None or shape is None or len(shape) < 4 or numpy_dtype(x.type.get_element_type()).kind != "f":
            return
        rank = len(shape)
        named = sorted(int(a) % rank for a in axes.reshape(-1))
        if named != list(range(2, rank)):
            return
        pooled_type = TensorType(x.type.get_element_type(), [*shape[:2], *[1] * (rank - 2)])
        pool = GlobalAveragePoolOp.from_onnx([x], [pooled_type], {})
        if get_attr(op, "keepdims"):
            _replace(rewriter, op, pool, operands[1:])
            return
        pool.results[0].name_hint = f"{op.results[0].name_hint or 'mean'}_pooled"
        pool.location = op.location
        rewriter.insert_op(pool)
        flatten = FlattenOp.from_onnx([pool.results[0]], [op.results[0].type], {"axis": IntegerAttr(1, i64)})
        _replace(rewriter, op, flatten, operands[1:])


class FlattenFromReshape(RewritePattern):
    """Reshape to a rank-2 shape that splits x's extents at an axis → Flatten at that axis
    (dynamo's `torch.flatten(x, 1)`)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ReshapeOp):
            return
        x, shape = inputs(op)[:2]
        before, after = _static_shape(x), _static_shape(op.results[0])
        # A run-time shape stays a Reshape: its values are checked against x at the call.
        if _constant(shape) is None or before is None or after is None or len(after) != 2 or len(before) < 2:
            return
        axis = next((k for k in range(1, len(before) + 1) if math.prod(before[:k]) == after[0]), None)
        if axis is None:
            return
        flatten = FlattenOp.from_onnx([x], [op.results[0].type], {"axis": IntegerAttr(axis, i64)})
        _replace(rewriter, op, flatten, [shape])


@dataclass(frozen=True)
class NormalizeExportsPass(ModulePass):
    """Rewrite the dynamo exporter's spellings of a global average pool and of a flatten into the
    legacy exporter's (see the module docstring)."""

    name = "normalize-exports"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([GlobalPoolFromReduceMean(), FlattenFromReshape()]),
            apply_recursively=False,
        ).rewrite_module(op)
