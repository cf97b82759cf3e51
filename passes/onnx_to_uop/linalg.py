"""Matrix products: MatMul (NumPy `matmul`) and Gemm.

Both are one loop nest over the output with an accumulator reduced over K. Everything that only
changes how operands are read (1-D promotion, broadcast batch dimensions, transA/transB, Gemm's
broadcast C) is a view: a permuted or stride-0 Layout, no copy.
"""

from __future__ import annotations

from dataclasses import replace

from xdsl.ir import Operation, SSAValue
from zant.dialects.onnx import get_attr, input_value
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    accumulator_type,
    layout_of,
    tensor_element_type,
    tensor_shape,
)


def _insert_unit_dim(layout: Layout, axis: int) -> Layout:
    """The same elements with a size-1 dimension inserted before `axis` (NumPy's 1-D promotion)."""
    return replace(
        layout,
        shape=layout.shape[:axis] + (1,) + layout.shape[axis:],
        strides=layout.strides[:axis] + (0,) + layout.strides[axis:],
    )


def _reduce_k(
    kb: KernelBuilder,
    a: Layout,
    b: Layout,
    batch: list[SSAValue],
    i: SSAValue,
    j: SSAValue,
) -> SSAValue:
    """Σ_k a[*batch, i, k] · b[*batch, k, j]."""
    acc = kb.define_acc(0, accumulator_type(a.element_type))
    with kb.loop(a.shape[-1]) as k:
        kb.mulacc(acc, kb.load(a, [*batch, i, k]), kb.load(b, [*batch, k, j]))
    return kb.cast(kb.acc_get(acc), a.element_type)


class MatMulLowering(OnnxLowering):
    """`MatMul` with NumPy semantics.

    A 1-D A is read as a 1×K matrix and a 1-D B as K×1 (the unit dimension is dropped from the
    result); batch dimensions broadcast against each other through stride-0 views.
    """

    op_names = frozenset({"onnx.MatMul"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        a, b = layout_of(input_value(op, 0)), layout_of(input_value(op, 1))
        out_shape = tensor_shape(op.results[0])
        if a.rank == 0 or b.rank == 0:
            raise ValueError("MatMul operands must have rank ≥ 1")
        y = kb.alloc(result_name(op), out_shape, tensor_element_type(op.results[0]))

        # The output as a (batch…, M, N) array: a 1-D operand's dropped dimension comes back.
        full_y = y
        if a.rank == 1:
            a = _insert_unit_dim(a, 0)
            full_y = _insert_unit_dim(full_y, full_y.rank - (0 if b.rank == 1 else 1))
        if b.rank == 1:
            b = _insert_unit_dim(b, 1)
            full_y = _insert_unit_dim(full_y, full_y.rank)
        if a.shape[-1] != b.shape[-2]:
            raise ValueError(f"inner dimensions differ: {a.shape} @ {b.shape}")
        *batch_shape, m, n = full_y.shape
        a = a.broadcast_to([*batch_shape, m, a.shape[-1]])
        b = b.broadcast_to([*batch_shape, b.shape[-2], n])

        with kb.loop_nest(full_y.shape) as (*batch, i, j):
            kb.store(_reduce_k(kb, a, b, batch, i, j), full_y, [*batch, i, j])
        return [y]


class GemmLowering(OnnxLowering):
    """`Gemm`: Y = alpha · A' · B' + beta · C, where A' and B' are A and B, transposed (as views)
    when transA / transB is set, and C is broadcast to (M, N) as a view."""

    op_names = frozenset({"onnx.Gemm"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        a, b = layout_of(input_value(op, 0)), layout_of(input_value(op, 1))
        c_value = input_value(op, 2)
        out_shape = tensor_shape(op.results[0])
        element_type = tensor_element_type(op.results[0])
        if a.rank != 2 or b.rank != 2:
            raise ValueError(f"Gemm takes 2-D A and B, got {a.shape} and {b.shape}")
        if get_attr(op, "transA"):
            a = a.permute([1, 0])
        if get_attr(op, "transB"):
            b = b.permute([1, 0])
        if a.shape[1] != b.shape[0]:
            raise ValueError(f"inner dimensions differ: {a.shape} @ {b.shape}")
        c = layout_of(c_value).broadcast_to(out_shape) if c_value is not None else None
        alpha, beta = get_attr(op, "alpha"), get_attr(op, "beta")

        y = kb.alloc(result_name(op), out_shape, element_type)
        with kb.loop_nest(out_shape) as (i, j):
            value = _reduce_k(kb, a, b, [], i, j)
            if alpha != 1:
                value = kb.alu("mul", value, kb.const(alpha, element_type))
            if c is not None and beta != 0:
                bias = kb.load(c, [i, j])
                if beta != 1:
                    bias = kb.alu("mul", bias, kb.const(beta, element_type))
                value = kb.alu("add", value, bias)
            kb.store(value, y, [i, j])
        return [y]


PATTERNS = (MatMulLowering(), GemmLowering())
