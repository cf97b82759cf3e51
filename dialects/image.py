"""`image`: decoders of compressed images, beside uop, each one op that the Zig printer prints as a
call of its decoder (a Zig function of the generated file) and the interpreter runs by its
Python reference.

* `%ok = image.decode_jpeg %data, %out, %work {height = H, width = W, format = "rgb", size = N}`
  — the `N` bytes at `%data` decoded as a baseline JPEG (sequential DCT, Huffman, 8-bit samples)
  of `H` x `W` into `%out` (`H·W·3` bytes, RGB or BGR; `H·W` for "gray"), with `%work`
  (`work_bytes(H, W)` bytes: the component planes) as its only memory besides fixed-size locals.
  `%ok` is false, and `%out` untouched, when the bytes are not such a JPEG. The decoder is
  `dialects/image_jpeg.zig` (its comment states the limits: bounded work, no access outside the
  three buffers whatever the bytes); `image_reference.decode_jpeg` is the same algorithm in Python.

The op declares its Zig and its semantics as the target dialects' ops do (`zant.ir.target_ops`):
the helper (`ZIG_HELPERS`), its call (`zig_call`) and `reference`, which reads `%data` and writes
`%out` and `%work` through the interpreter's pointers (`WRITES`).
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import I64, IntegerAttr, IntegerType, StringAttr
from xdsl.ir import Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import MemoryEffectKind
from xdsl.utils.exceptions import VerifyException

from zant.dialects.uop import Accesses, PtrType
from zant.ir.target_ops import Read, ZigCall, ZigHelper

FORMATS = ("rgb", "bgr", "gray")
"""The pixel layouts `image.decode_jpeg` writes: 3 channels in RGB or BGR order, or 1 (luma)."""


HUFFMAN_TABLE_BYTES = 1 + 16 + 256
"""A Huffman table as the decoder keeps it in `%work`: defined, 16 counts, 256 symbols."""


def work_bytes(height: int, width: int) -> int:
    """The bytes of `%work` a height x width JPEG needs: three component planes of the image
    rounded up to whole 16 x 16 MCUs (sampling factors 1 and 2), then 4 DC and 4 AC Huffman
    tables (zant_jpeg_work_bytes in Zig: a call passing fewer does not compile)."""
    return 3 * (-(-height // 16) * 16) * (-(-width // 16) * 16) + 8 * HUFFMAN_TABLE_BYTES


JPEG_HELPER = ZigHelper(
    "zant_jpeg_decode",
    resources.files("zant.dialects").joinpath("image_jpeg.zig").read_text().rstrip("\n"),
    inline=False,
)
"""The decoder: dialects/image_jpeg.zig, printed once into a file that calls it."""


@irdl_op_definition
class DecodeJpegOp(IRDLOperation):
    """`%ok = image.decode_jpeg %data, %out, %work {height = H, width = W, format = "rgb", size = N}`:
    the `N` bytes at `%data` decoded as a baseline JPEG of H x W into `%out`; false (and `%out`
    untouched) when they are not one."""

    name = "image.decode_jpeg"

    data = operand_def(PtrType)
    out = operand_def(PtrType)
    work = operand_def(PtrType)
    height = prop_def(IntegerAttr[I64])
    width = prop_def(IntegerAttr[I64])
    format = prop_def(StringAttr)
    size = prop_def(IntegerAttr[I64])
    ok = result_def(IntegerType(1))

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$data `,` $out `,` $work attr-dict `:` type($data) `,` type($out) `,` type($work)"

    traits = traits_def(
        Accesses(MemoryEffectKind.READ, "data"),
        Accesses(MemoryEffectKind.WRITE, "out"),
        Accesses(MemoryEffectKind.WRITE, "work"),
    )

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = (JPEG_HELPER,)
    WRITES: ClassVar[tuple[str, ...]] = ("out", "work")
    """The pointer operands `reference` writes through (the interpreter passes writers)."""

    def __init__(self, data: SSAValue, out: SSAValue, work: SSAValue, height: int, width: int, format: str, size: int):
        super().__init__(
            operands=[data, out, work],
            properties={
                "height": IntegerAttr(height, 64), "width": IntegerAttr(width, 64), "format": StringAttr(format),
                "size": IntegerAttr(size, 64),
            },
            result_types=[IntegerType(1)],
        )

    @property
    def channels(self) -> int:
        return 1 if self.format.data == "gray" else 3

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        h, w, n = self.height.value.data, self.width.value.data, self.size.value.data
        work = str(work_bytes(h, w))
        return ZigCall("zant_jpeg_decode", (str(h), str(w), f".{self.format.data}", str(n), work, *args))

    def reference(self, read: Read, write_out, write_work) -> tuple[bool]:
        from zant.dialects.image_reference import decode_jpeg

        h, w = self.height.value.data, self.width.value.data
        data = bytes(read(range(self.size.value.data)).astype(np.uint8).tobytes())
        pixels = decode_jpeg(data, h, w, self.format.data)
        if pixels is None:
            return (False,)
        write_work(range(work_bytes(h, w)), np.zeros(work_bytes(h, w), np.uint8))
        write_out(range(pixels.size), pixels.ravel())
        return (True,)

    def verify_(self) -> None:
        if self.format.data not in FORMATS:
            raise VerifyException(f"decode_jpeg writes one of {', '.join(FORMATS)}, got '{self.format.data}'")
        if self.height.value.data < 1 or self.width.value.data < 1 or self.height.value.data > 65535 or self.width.value.data > 65535:
            raise VerifyException(
                f"decode_jpeg decodes images of 1 to 65535 rows and columns, got {self.height.value.data} x {self.width.value.data}"
            )
        for name, element in (("data", self.data), ("out", self.out), ("work", self.work)):
            element_type = element.type.element_type  # type: ignore[attr-defined]
            if not (isinstance(element_type, IntegerType) and element_type.width.data == 8):
                raise VerifyException(f"decode_jpeg's {name} holds bytes, got a pointer to {element_type}")


Image = Dialect("image", [DecodeJpegOp], [])
