"""`expand-gradients`: the `Gradient` operator (ai.onnx.preview.training) as the ops of its derivative.

`Gradient(x_1 … x_n) {xs = […], y = "Y"}` gives ∂Y/∂x_i for each x_i, the sum of Y's elements
differentiated where Y is not a scalar (the seed is a tensor of ones shaped like Y). The pass
writes the derivative out in reverse mode, as ONNX ops before the Gradient op: it walks back from
Y over the ops between the x_i and Y, in reverse program order, and gives each operand of each
op its share of the gradient of the op's result (the adjoint rules, `RULES`), summing the shares
of a value used more than once. A share whose operand was broadcast is summed over the broadcast
dimensions (`onnx.ReduceSum`, then `onnx.Reshape` to the operand's shape). An x_i that Y does not
depend on gets a gradient of zeros.

The importer binds `y`: it names a tensor of the graph, not an input of the node, so the
Gradient op is given Y's value as its last operand, after those of `xs` and `zs` (the node's
inputs); the op is then a use of Y, and Y must be computed before the Gradient node.

An op on the way from an x_i to Y without a rule here (`RULES`: Add, Sub, Mul, Div, Neg,
Identity) is a `ZantError` naming it. Afterwards no Gradient op is left.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, NameLoc, StringAttr, TensorType, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.dialects import onnx as onnx_dialect
from zant.dialects.onnx import NODE_NAME, OnnxOp
from zant.dialects.onnx_nodes import array_type, constant_op
from zant.errors import ZantError
from zant.ir.types import numpy_dtype

DIFFERENTIATED_OPS = frozenset({"Gradient"})
"""The ai.onnx.preview.training ops this pass rewrites away (the importer imports them)."""


def _label(op: Operation) -> str:
    name = op.attributes.get(NODE_NAME)
    if not (isinstance(name, StringAttr) and name.data) and isinstance(op.location, NameLoc):
        name = op.location.desc
    return f"'{name.data}' ({op.name})" if isinstance(name, StringAttr) and name.data else op.name


class _Builder:
    """Inserts the derivative's ops before the Gradient op."""

    def __init__(self, gradient: Operation):
        self.gradient = gradient

    def insert(self, new: Operation) -> SSAValue:
        Rewriter.insert_op(new, InsertPoint.before(self.gradient))
        new.location = self.gradient.location
        return new.results[0]

    def constant(self, array: np.ndarray, hint: str) -> SSAValue:
        return self.insert(constant_op(array, array_type(array, hint), hint))

    def fill(self, like: SSAValue, value: float, hint: str) -> SSAValue:
        t = like.type
        return self.constant(np.full(tuple(t.get_shape()), value, numpy_dtype(t.get_element_type())), hint)

    def binary(self, kind: type[OnnxOp], a: SSAValue, b: SSAValue, result: TensorType) -> SSAValue:
        return self.insert(kind.from_onnx([a, b], [result]))

    def unary(self, kind: type[OnnxOp], a: SSAValue) -> SSAValue:
        return self.insert(kind.from_onnx([a], [a.type]))

    def unbroadcast(self, share: SSAValue, operand: SSAValue) -> SSAValue:
        """`share` (shaped like the op's result) summed down to `operand`'s shape."""
        shape, target = list(share.type.get_shape()), list(operand.type.get_shape())
        if shape == target:
            return share
        padded = [1] * (len(shape) - len(target)) + target
        axes = [i for i, (s, t) in enumerate(zip(shape, padded)) if t == 1 and s != 1]
        element = share.type.get_element_type()
        if axes:
            kept = [1 if i in axes else s for i, s in enumerate(shape)]
            axes_value = self.constant(np.array(axes, np.int64), "gradient_axes")
            share = self.insert(onnx_dialect.ReduceSumOp.from_onnx(
                [share, axes_value], [TensorType(element, kept)], {"keepdims": IntegerAttr(1, i64)}
            ))
        shape_value = self.constant(np.array(target, np.int64), "gradient_shape")
        return self.insert(onnx_dialect.ReshapeOp.from_onnx([share, shape_value], [TensorType(element, target)]))


Rule = Callable[[_Builder, OnnxOp, SSAValue], list[SSAValue | None]]
"""(builder, op, gradient of its result) → the share of each operand, shaped like the result."""


def _add(b: _Builder, op: OnnxOp, g: SSAValue) -> list[SSAValue | None]:
    return [g, g]


def _sub(b: _Builder, op: OnnxOp, g: SSAValue) -> list[SSAValue | None]:
    return [g, b.unary(onnx_dialect.NegOp, g)]


def _mul(b: _Builder, op: OnnxOp, g: SSAValue) -> list[SSAValue | None]:
    x, y = op.operands
    return [b.binary(onnx_dialect.MulOp, g, y, g.type), b.binary(onnx_dialect.MulOp, g, x, g.type)]


def _div(b: _Builder, op: OnnxOp, g: SSAValue) -> list[SSAValue | None]:
    # d(x / y) = dx / y - dy · (x / y) / y
    x, y = op.operands
    over_y = b.binary(onnx_dialect.DivOp, g, y, g.type)
    quotient = op.results[0]
    return [over_y, b.unary(onnx_dialect.NegOp, b.binary(onnx_dialect.MulOp, over_y, quotient, g.type))]


def _neg(b: _Builder, op: OnnxOp, g: SSAValue) -> list[SSAValue | None]:
    return [b.unary(onnx_dialect.NegOp, g)]


def _identity(b: _Builder, op: OnnxOp, g: SSAValue) -> list[SSAValue | None]:
    return [g]


RULES: dict[type[OnnxOp], Rule] = {
    onnx_dialect.AddOp: _add,
    onnx_dialect.SubOp: _sub,
    onnx_dialect.MulOp: _mul,
    onnx_dialect.DivOp: _div,
    onnx_dialect.NegOp: _neg,
    onnx_dialect.IdentityOp: _identity,
}
"""The adjoint rule of each op the derivative may pass through."""


def _float(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and np.issubdtype(numpy_dtype(value.type.get_element_type()), np.floating)


def expand_gradient(op: onnx_dialect.TrainingGradientOp) -> None:
    """Replace one Gradient op by its derivative's ops (module docstring)."""
    xs = [a.data for a in op.xs] if op.xs is not None else []
    zs = [a.data for a in op.zs] if op.zs is not None else []
    if len(op.operands) != len(xs) + len(zs) + 1:
        raise ZantError(
            f"expand-gradients: {_label(op)} has {len(op.operands)} operands; expected those of xs and zs "
            f"({len(xs) + len(zs)}) and y's value last, as the importer gives them"
        )
    inputs, target = list(op.operands[: len(xs)]), op.operands[-1]
    if len(op.results) != len(inputs):
        raise ZantError(f"expand-gradients: {_label(op)} has {len(op.results)} results for {len(inputs)} xs")
    for value in [*inputs, target]:
        if not _float(value):
            raise ZantError(f"expand-gradients: {_label(op)} differentiates {value.type}, not a float tensor")
    # The ops that depend on an x (forward), among those Y depends on (backward).
    block = op.parent_block()
    ops = list(block.ops)[: list(block.ops).index(op)]
    depends: set[SSAValue] = set(inputs)
    for candidate in ops:
        if any(v in depends for v in candidate.operands):
            depends.update(candidate.results)
    needed: set[SSAValue] = {target}
    path: list[Operation] = []
    for candidate in reversed(ops):
        # An op computed from an x (an x itself, a constant's result, is where the walk stops).
        if any(r in needed for r in candidate.results) and any(v in depends for v in candidate.operands):
            path.append(candidate)
            needed.update(v for v in candidate.operands if v in depends)
    builder = _Builder(op)
    shares: dict[SSAValue, list[SSAValue]] = {}
    if target in depends:
        shares[target] = [builder.fill(target, 1.0, "gradient_seed")]

    def total(value: SSAValue) -> SSAValue | None:
        parts = shares.get(value)
        if not parts:
            return None
        result = parts[0]
        for part in parts[1:]:
            result = builder.binary(onnx_dialect.AddOp, result, part, result.type)
        return result

    for forward in path:  # reverse program order
        (result,) = forward.results if len(forward.results) == 1 else (None,)
        rule = RULES.get(type(forward))
        if rule is None or result is None:
            raise ZantError(
                f"expand-gradients: {_label(op)} differentiates through {_label(forward)}, which has no "
                f"derivative rule (rules: {', '.join(sorted(k.name for k in RULES))})"
            )
        g = total(result)
        if g is None:
            continue
        for operand, share in zip(forward.operands, rule(builder, forward, g), strict=True):
            if share is not None and operand in depends:
                shares.setdefault(operand, []).append(builder.unbroadcast(share, operand))
    given: set[SSAValue] = set(inputs)  # a value that is already an x or another x's gradient gets a copy
    for x, result in zip(inputs, op.results, strict=True):
        gradient = total(x)
        if gradient is None:
            gradient = builder.fill(x, 0.0, "gradient_zero")
        elif gradient.type != result.type:
            raise ZantError(f"expand-gradients: {_label(op)}'s result is declared {result.type}, the gradient is {gradient.type}")
        if gradient in given:
            gradient = builder.unary(onnx_dialect.IdentityOp, gradient)
        given.add(gradient)
        gradient.name_hint = result.name_hint
        result.replace_all_uses_with(gradient)
    Rewriter.erase_op(op)


@dataclass(frozen=True)
class ExpandGradientsPass(ModulePass):
    """Each Gradient op becomes the ops of its derivative."""

    name = "expand-gradients"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for gradient in [o for o in op.walk() if isinstance(o, onnx_dialect.TrainingGradientOp)]:
            expand_gradient(gradient)


__all__ = ["DIFFERENTIATED_OPS", "RULES", "ExpandGradientsPass", "expand_gradient"]
