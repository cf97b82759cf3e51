"""Col2Im scatters each column of its input into the image: a zeroed output and a loop nest over
(n, c, block…, column…) that adds every element at its position when it lies inside."""

from __future__ import annotations

import itertools
import math

from xdsl.ir import Operation, SSAValue

from zant.dialects.onnx import Col2ImOp, get_attr, input_value
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    layout_of,
    tensor_element_type,
    tensor_shape,
)
from zant.passes.onnx_to_uop.parameters import I64, all_of, any_of, check, guard_builder, load_all, runtime_input
from zant.passes.onnx_to_uop.resample import constant_input

# -- Col2Im ---------------------------------------------------------------------------------


class Col2ImLowering(OnnxLowering):
    """`Col2Im`: input (N, C·Πblock, L) viewed as (N, C, block…, positions…); each element is
    added into the image at position·stride - pad_begin + offset·dilation, when inside.

    A run-time image_shape must be the result's spatial shape; a run-time block_shape may be
    any that fits the input's rows and columns: one scatter per such shape, the value picking
    the one that adds. Other values make NAME_predict return STATUS_BAD_PARAMETER (`abi.check`).
    """

    op_names = frozenset({Col2ImOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        out_shape = tensor_shape(op.results[0])
        x = layout_of(input_value(op, 0))
        n, rows, columns = x.shape
        rank = len(out_shape) - 2
        dilations = get_attr(op, "dilations") or [1] * rank
        strides = get_attr(op, "strides") or [1] * rank
        pads = get_attr(op, "pads") or [0] * (2 * rank)
        if len(dilations) != rank or len(strides) != rank or len(pads) != 2 * rank:
            raise ValueError(f"dilations, strides and pads do not fit {rank} spatial axes")

        def counts(image: list[int], block: list[int]) -> list[int]:
            return [
                (size + pads[d] + pads[rank + d] - dilations[d] * (block[d] - 1) - 1) // strides[d] + 1
                for d, size in enumerate(image)
            ]

        gb = guard_builder(kb, op, [1, 2])
        conditions = []
        if runtime_input(op, 1) is not None:
            # The image is the result's spatial shape; the value must say so.
            image = list(out_shape[2:])
            values = load_all(gb, input_value(op, 1))
            if len(values) != rank:
                raise ValueError(f"image_shape has {len(values)} values for {rank} spatial axes")
            conditions += [gb.alu("cmpeq", v, gb.const(size, I64)) for v, size in zip(values, image)]
        else:
            constant = constant_input(op, 1, "image_shape")
            if constant is None or len(constant) != rank:
                raise ValueError("image_shape must have one value per spatial axis")
            image = [int(v) for v in constant]
        channels = out_shape[1]
        selects: list[SSAValue | None] = [None]
        if runtime_input(op, 2) is not None:
            # The block shapes that fit the input's rows and columns; one masked kernel each,
            # the value picks the one that adds.
            per_block = rows // channels if channels else 0
            blocks = [
                list(b)
                for b in itertools.product(*([d for d in range(1, per_block + 1) if per_block % d == 0] for _ in range(rank)))
                if math.prod(b) == per_block and math.prod(counts(image, list(b))) == columns
                and all(c > 0 for c in counts(image, list(b)))
            ]
            if not blocks or channels * per_block != rows:
                raise ValueError(f"no block shape fits an input of shape {list(x.shape)} into {list(out_shape)}")
            values = load_all(gb, input_value(op, 2))
            if len(values) != rank:
                raise ValueError(f"block_shape has {len(values)} values for {rank} spatial axes")
            selects = [all_of(gb, [gb.alu("cmpeq", v, gb.const(b, I64)) for v, b in zip(values, block)]) for block in blocks]
            conditions.append(any_of(gb, selects))
        else:
            constant = constant_input(op, 2, "block_shape")
            if constant is None or len(constant) != rank:
                raise ValueError("block_shape must have one value per spatial axis")
            blocks = [[int(v) for v in constant]]
        if conditions:
            check(gb, all_of(gb, conditions))
        for block in blocks:
            if channels * math.prod(block) != rows or math.prod(counts(image, block)) != columns:
                raise ValueError(f"input of shape {x.shape} does not fit blocks {block} over image {image}")
        element_type = tensor_element_type(op.results[0])
        y = kb.alloc(result_name(op), out_shape, element_type)
        with kb.loop_nest(y.shape) as ivs:
            kb.store(kb.const(0, element_type), y, ivs)
        for block, select in zip(blocks, selects):
            columns_view = x.reshape([n, channels, *block, *counts(image, block)])
            if columns_view is None:
                raise NotImplementedError("Col2Im of a non-contiguous input")
            self.scatter(kb, columns_view, y, image, strides, dilations, pads, select)
        return [y]

    @staticmethod
    def scatter(kb, columns_view, y, image, strides, dilations, pads, select) -> None:
        """Adds every column element into the image where it lands inside (and `select` holds)."""
        rank = len(image)
        with kb.loop_nest(columns_view.shape) as ivs:
            offsets, positions = ivs[2 : 2 + rank], ivs[2 + rank :]
            pixel, inside = [], select
            for d in range(rank):
                at = kb.alu(
                    "add",
                    kb.alu("mul", positions[d], kb.index(strides[d])),
                    kb.alu("mul", offsets[d], kb.index(dilations[d])),
                )
                at = kb.alu("sub", at, kb.index(pads[d]))
                ok = kb.alu("and", kb.alu("cmple", kb.index(0), at), kb.alu("cmplt", at, kb.index(image[d])))
                inside = ok if inside is None else kb.alu("and", inside, ok)
                pixel.append(kb.alu("min", kb.alu("max", at, kb.index(0)), kb.index(image[d] - 1)))
            target = [ivs[0], ivs[1], *pixel]
            old = kb.load(y, target)
            new = kb.alu("add", old, kb.load(columns_view, ivs))
            assert inside is not None
            kb.store(kb.where(inside, new, old), y, target)


PATTERNS = (Col2ImLowering(),)

__all__ = ["PATTERNS", "Col2ImLowering"]
