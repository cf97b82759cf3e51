"""Normalizations: BatchNormalization (inference) and Softmax / LogSoftmax along one axis.

BatchNormalization is element-wise once its per-channel operands are read through views that
broadcast them along every dimension but the channel one. Softmax is a row kernel: for each
index of the other dimensions, one pass for the maximum, one for the sum of exponentials
(writing them to the output), one to normalize.
"""

from __future__ import annotations

from dataclasses import replace

from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import Operation

from zant.dialects.onnx import get_attr, inputs
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    layout_of,
    tensor_element_type,
    tensor_shape,
)


def _per_channel(layout: Layout, shape: tuple[int, ...]) -> Layout:
    """A (C,) tensor read at [n, c, d1, …] of `shape`: stride 0 everywhere but dimension 1."""
    if layout.shape != (shape[1],):
        raise ValueError(f"per-channel operand of shape {layout.shape}, expected ({shape[1]},)")
    strides = (0, layout.strides[0]) + (0,) * (len(shape) - 2)
    return replace(layout, shape=shape, strides=strides)


def _require_float(op: Operation) -> None:
    element_type = tensor_element_type(op.results[0])
    if not isinstance(element_type, AnyFloat):
        raise ValueError(f"{op.name} on {element_type} is not defined")


class BatchNormalizationLowering(OnnxLowering):
    """Inference BatchNormalization: `y = scale[c] * (x - mean[c]) / sqrt(var[c] + eps) + B[c]`."""

    op_names = frozenset({"onnx.BatchNormalization"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        if get_attr(op, "training_mode"):
            raise NotImplementedError("training_mode=1 (batch statistics) is not supported")
        if len(op.results) != 1:
            raise NotImplementedError("running mean/var outputs are only produced in training")
        _require_float(op)
        x, scale, bias, mean, var = inputs(op)
        shape = tensor_shape(op.results[0])
        if len(shape) < 2:
            raise ValueError(f"input of rank {len(shape)}, expected (N, C, …)")
        x_layout = layout_of(x)
        scale_l, bias_l, mean_l, var_l = (
            _per_channel(layout_of(v), shape) for v in (scale, bias, mean, var)
        )
        element_type = tensor_element_type(op.results[0])
        out = kb.alloc(result_name(op), shape, element_type)
        epsilon = kb.const(get_attr(op, "epsilon"), element_type)
        with kb.loop_nest(shape) as ivs:
            std = kb.alu("sqrt", kb.alu("add", kb.load(var_l, ivs), epsilon))
            centered = kb.alu("sub", kb.load(x_layout, ivs), kb.load(mean_l, ivs))
            scaled = kb.alu("mul", kb.load(scale_l, ivs), centered)
            y = kb.alu("add", kb.alu("div", scaled, std), kb.load(bias_l, ivs))
            kb.store(y, out, ivs)
        return [out]


class SoftmaxLowering(OnnxLowering):
    """Softmax and LogSoftmax along `axis` (opset ≥ 13), stabilized by subtracting the maximum.

    Softmax: `y = exp(x - max) / Σ exp(x - max)`; LogSoftmax: `y = x - max - log Σ exp(x - max)`.
    """

    op_names = frozenset({"onnx.Softmax", "onnx.LogSoftmax"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        _require_float(op)
        (x,) = inputs(op)
        shape = tensor_shape(op.results[0])
        rank = len(shape)
        axis = get_attr(op, "axis")
        if not -rank <= axis < rank:
            raise ValueError(f"axis {axis} out of range for rank {rank}")
        axis %= rank
        element_type = tensor_element_type(op.results[0])
        out = kb.alloc(result_name(op), shape, element_type)
        n = shape[axis]
        if n == 0:
            return [out]

        # Move `axis` last in both layouts, so a row is the innermost index.
        perm = [d for d in range(rank) if d != axis] + [axis]
        x_rows = layout_of(x).permute(perm)
        out_rows = out.permute(perm)
        log = op.name == "onnx.LogSoftmax"

        with kb.loop_nest(x_rows.shape[:-1]) as outer:
            maximum = kb.define_acc(0, element_type)
            kb.acc_set(maximum, kb.load(x_rows, [*outer, kb.index(0)]))
            with kb.loop(n, start=1) as k:
                kb.acc_set(maximum, kb.alu("max", kb.acc_get(maximum), kb.load(x_rows, [*outer, k])))

            total = kb.define_acc(0, element_type)
            with kb.loop(n) as k:
                shifted = kb.alu("sub", kb.load(x_rows, [*outer, k]), kb.acc_get(maximum))
                exp = kb.alu("exp", shifted)
                if not log:
                    kb.store(exp, out_rows, [*outer, k])
                kb.acc_set(total, kb.alu("add", kb.acc_get(total), exp))

            with kb.loop(n) as k:
                if log:
                    shifted = kb.alu("sub", kb.load(x_rows, [*outer, k]), kb.acc_get(maximum))
                    y = kb.alu("sub", shifted, kb.alu("log", kb.acc_get(total)))
                else:
                    y = kb.alu("div", kb.load(out_rows, [*outer, k]), kb.acc_get(total))
                kb.store(y, out_rows, [*outer, k])
        return [out]


PATTERNS = (BatchNormalizationLowering(), SoftmaxLowering())
