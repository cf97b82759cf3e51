"""Col2Im scatters each column of its input into the image: a zeroed output and a loop nest over
(n, c, block…, column…) that adds every element at its position when it lies inside."""

from __future__ import annotations

import math

from xdsl.ir import Operation

from zant.dialects.onnx import get_attr, input_value
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    layout_of,
    tensor_element_type,
    tensor_shape,
)
from zant.passes.onnx_to_uop.resample import constant_input

# -- Col2Im ---------------------------------------------------------------------------------


class Col2ImLowering(OnnxLowering):
    """`Col2Im`: input (N, C·Πblock, L) viewed as (N, C, block…, positions…); each element is
    added into the image at position·stride - pad_begin + offset·dilation, when inside."""

    op_names = frozenset({"onnx.Col2Im"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        image = constant_input(op, 1, "image_shape")
        block = constant_input(op, 2, "block_shape")
        if image is None or block is None or len(image) != len(block):
            raise ValueError("image_shape and block_shape must be non-empty constants of one length")
        image, block = [int(v) for v in image], [int(v) for v in block]
        rank = len(image)
        dilations = get_attr(op, "dilations") or [1] * rank
        strides = get_attr(op, "strides") or [1] * rank
        pads = get_attr(op, "pads") or [0] * (2 * rank)
        if len(dilations) != rank or len(strides) != rank or len(pads) != 2 * rank:
            raise ValueError(f"dilations, strides and pads do not fit {rank} spatial axes")
        counts = [
            (size + pads[d] + pads[rank + d] - dilations[d] * (block[d] - 1) - 1) // strides[d] + 1
            for d, size in enumerate(image)
        ]
        x = layout_of(input_value(op, 0))
        n, rows, columns = x.shape
        channels = rows // math.prod(block) if math.prod(block) else 0
        if channels * math.prod(block) != rows or math.prod(counts) != columns:
            raise ValueError(f"input of shape {x.shape} does not fit blocks {block} over image {image}")
        columns_view = x.reshape([n, channels, *block, *counts])
        if columns_view is None:
            raise NotImplementedError("Col2Im of a non-contiguous input")
        element_type = tensor_element_type(op.results[0])
        y = kb.alloc(result_name(op), tensor_shape(op.results[0]), element_type)
        with kb.loop_nest(y.shape) as ivs:
            kb.store(kb.const(0, element_type), y, ivs)
        with kb.loop_nest(columns_view.shape) as ivs:
            offsets, positions = ivs[2 : 2 + rank], ivs[2 + rank :]
            pixel, inside = [], None
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
        return [y]


PATTERNS = (Col2ImLowering(),)

__all__ = ["PATTERNS", "Col2ImLowering"]
