"""`image`: decoders of compressed images, beside uop, each one op that the Zig printer prints as a
call of its decoder (a Zig function of the generated file) and the interpreter runs by its
Python reference (`zant.dialects.image_reference`).

* `%ok = image.decode_jpeg %data, %out, %work {height = H, width = W, format = "rgb", size = N}`
  — the `N` bytes at `%data` decoded as a baseline JPEG (sequential DCT, Huffman, 8-bit samples)
  of `H` x `W` into `%out` (`H·W·3` bytes, RGB or BGR; `H·W` for "gray"), with `%work`
  (`jpeg_work_bytes(H, W)` bytes: the component planes and Huffman tables) as its only memory
  besides fixed-size locals. The decoder is `dialects/image_jpeg.zig`.
* `%ok = image.decode_png %data, %out, %work {…}` — the same for an 8-bit, non-interlaced PNG
  (gray, gray + alpha, RGB, RGBA or palette; alpha dropped), `%work` holding the inflated rows
  (`png_work_bytes(H, W)`). The decoder is `dialects/image_png.zig`.
* `%ok = image.decode_tiff %data, %out, %work {…}` — the same for an uncompressed 8-bit TIFF
  (gray, gray + alpha, RGB or RGBA in strips; alpha dropped), copied from the input: `%work` is
  one unused byte. The decoder is `dialects/image_tiff.zig`.

* `%ok = image.decode_jp2 %data, %out, %work {…}` — the same for a JPEG 2000 image (a JP2 file or
  a bare codestream; 5/3 or 9/7 wavelet, 8-bit samples), `%work` holding three i32 component
  planes and one precinct's code-block state (`jp2_work_bytes(H, W)`). The decoder is
  `dialects/image_jp2.zig`.

* `%ok = image.decode_webp %data, %out, %work {…}` — the same for a lossy WebP (a RIFF file of
  one 'VP8 ' key frame, possibly extended: 'VP8X', alpha dropped), `%work` holding its Y, U and V planes rounded up to whole macroblocks and
  the contexts of a macroblock row (`webp_work_bytes(H, W)`). The decoder is
  `dialects/image_webp.zig`.

`%ok` is false, and `%out` untouched, when the bytes are not such an image. Each decoder's
comment states its limits: bounded work, no access outside the three buffers whatever the bytes.

The ops declare their Zig and their semantics as the target dialects' ops do
(`zant.ir.target_ops`): the helper (`ZIG_HELPERS`), its call (`zig_call`) and `reference`, which
reads `%data` and writes `%out` and `%work` through the interpreter's pointers (`WRITES`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
"""The pixel layouts the decoders write: 3 channels in RGB or BGR order, or 1 (luma)."""


HUFFMAN_TABLE_BYTES = 1 + 16 + 256
"""A Huffman table as the JPEG decoder keeps it in `%work`: defined, 16 counts, 256 symbols."""


def jpeg_work_bytes(height: int, width: int) -> int:
    """The bytes of `%work` a height x width JPEG needs: three component planes of the image
    rounded up to whole 16 x 16 MCUs (sampling factors 1 and 2), then 4 DC and 4 AC Huffman
    tables (zant_jpeg_work_bytes in Zig: a call passing fewer does not compile)."""
    return 3 * (-(-height // 16) * 16) * (-(-width // 16) * 16) + 8 * HUFFMAN_TABLE_BYTES


def png_work_bytes(height: int, width: int) -> int:
    """The bytes of `%work` a height x width PNG needs: its inflated rows, a filter byte and up to
    4 samples a pixel each (zant_png_work_bytes in Zig)."""
    return height * (1 + 4 * width)


def tiff_work_bytes(height: int, width: int) -> int:
    """TIFF's `%work`: one byte, unused (its pixels are copied from the input)."""
    return 1


def jp2_work_bytes(height: int, width: int) -> int:
    """The bytes of `%work` a height x width JPEG 2000 image needs (zant_jp2_work_bytes in Zig):
    4 bytes of alignment slack, three i32 planes, one i32 line, the u16 significance states of the
    largest code block, the lengths, pass counts and zero bit planes of one precinct's code blocks
    in 3 subbands, and its 6 tag trees (u16 value and lower bound per node)."""
    blocks = ((width + 3) // 4 + 1) * ((height + 3) // 4 + 1)
    nodes = 2 * blocks + 64
    flags = min((min(width, 1024) + 2) * (min(height, 1024) + 2), 6156)
    return 4 + 12 * height * width + 4 * max(height, width) + 2 * flags + 18 * blocks + 24 * nodes


def webp_work_bytes(height: int, width: int) -> int:
    """The bytes of `%work` a height x width lossy WebP needs (zant_webp_work_bytes in Zig): the
    Y, U and V planes of its 16 x 16 macroblocks (384 bytes each), one loop-filter byte per
    macroblock, and 4 subblock modes and 9 non-zero flags per macroblock column."""
    columns, rows = -(-width // 16), -(-height // 16)
    return 384 * columns * rows + columns * rows + 13 * columns


def _helper(name: str, file: str, calls: tuple[str, ...] = ()) -> ZigHelper:
    source = resources.files("zant.dialects").joinpath(file).read_text().rstrip("\n")
    return ZigHelper(name, source, calls, inline=False)


PIXEL_HELPER = _helper("zant_image_pixel", "image_pixels.zig")
"""The pixel formats and the one pixel store every decoder calls (`dialects/image_pixels.zig`)."""


class _DecodeOp(IRDLOperation):
    """The operands, properties, Zig call and reference every decoder op shares."""

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

    WRITES: ClassVar[tuple[str, ...]] = ("out", "work")
    """The pointer operands `reference` writes through (the interpreter passes writers)."""
    WORK_BYTES: ClassVar[Callable[[int, int], int]]
    DECODE: ClassVar[str]
    """The name of the function of `image_reference` that decodes the format."""

    def __init__(self, data: SSAValue, out: SSAValue, work: SSAValue, height: int, width: int, format: str, size: int):
        super().__init__(
            operands=[data, out, work],
            properties={
                "height": IntegerAttr(height, 64), "width": IntegerAttr(width, 64), "format": StringAttr(format),
                "size": IntegerAttr(size, 64),
            },
            result_types=[IntegerType(1)],
        )

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        h, w, n = self.height.value.data, self.width.value.data, self.size.value.data
        work = str(type(self).WORK_BYTES(h, w))
        return ZigCall(self.ZIG_HELPERS[0].name, (str(h), str(w), f".{self.format.data}", str(n), work, *args))  # type: ignore[attr-defined]

    def reference(self, read: Read, write_out, write_work) -> tuple[bool]:
        from zant.dialects.image_reference import decode_jp2, decode_jpeg, decode_png, decode_tiff, decode_webp

        decode = {
            "decode_jpeg": decode_jpeg, "decode_png": decode_png, "decode_tiff": decode_tiff, "decode_jp2": decode_jp2,
            "decode_webp": decode_webp,
        }[self.DECODE]
        h, w = self.height.value.data, self.width.value.data
        data = bytes(read(range(self.size.value.data)).astype(np.uint8).tobytes())
        pixels = decode(data, h, w, self.format.data)
        if pixels is None:
            return (False,)
        work = type(self).WORK_BYTES(h, w)
        write_work(range(work), np.zeros(work, np.uint8))  # what the decoder leaves there is no result
        write_out(range(pixels.size), pixels.ravel())
        return (True,)

    def verify_(self) -> None:
        op = self.name.split(".")[-1]
        if self.format.data not in FORMATS:
            raise VerifyException(f"{op} writes one of {', '.join(FORMATS)}, got '{self.format.data}'")
        h, w = self.height.value.data, self.width.value.data
        if not (1 <= h <= 65535 and 1 <= w <= 65535):
            raise VerifyException(f"{op} decodes images of 1 to 65535 rows and columns, got {h} x {w}")
        for name, element in (("data", self.data), ("out", self.out), ("work", self.work)):
            element_type = element.type.element_type  # type: ignore[attr-defined]
            if not (isinstance(element_type, IntegerType) and element_type.width.data == 8):
                raise VerifyException(f"{op}'s {name} holds bytes, got a pointer to {element_type}")


@irdl_op_definition
class DecodeJpegOp(_DecodeOp):
    """`%ok = image.decode_jpeg %data, %out, %work {height = H, width = W, format = "rgb", size = N}`:
    the `N` bytes at `%data` decoded as a baseline JPEG of H x W into `%out`; false (and `%out`
    untouched) when they are not one."""

    name = "image.decode_jpeg"

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = (_helper("zant_jpeg_decode", "image_jpeg.zig", (PIXEL_HELPER.name,)), PIXEL_HELPER)
    WORK_BYTES: ClassVar[Callable[[int, int], int]] = staticmethod(jpeg_work_bytes)
    DECODE: ClassVar[str] = "decode_jpeg"


@irdl_op_definition
class DecodePngOp(_DecodeOp):
    """`%ok = image.decode_png %data, %out, %work {height = H, width = W, format = "rgb", size = N}`:
    the `N` bytes at `%data` decoded as an 8-bit non-interlaced PNG of H x W into `%out`; false
    (and `%out` untouched) when they are not one."""

    name = "image.decode_png"

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = (_helper("zant_png_decode", "image_png.zig", (PIXEL_HELPER.name,)), PIXEL_HELPER)
    WORK_BYTES: ClassVar[Callable[[int, int], int]] = staticmethod(png_work_bytes)
    DECODE: ClassVar[str] = "decode_png"


@irdl_op_definition
class DecodeTiffOp(_DecodeOp):
    """`%ok = image.decode_tiff %data, %out, %work {height = H, width = W, format = "rgb", size = N}`:
    the `N` bytes at `%data` read as an uncompressed 8-bit TIFF of H x W into `%out`; false (and
    `%out` untouched) when they are not one."""

    name = "image.decode_tiff"

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = (_helper("zant_tiff_decode", "image_tiff.zig", (PIXEL_HELPER.name,)), PIXEL_HELPER)
    WORK_BYTES: ClassVar[Callable[[int, int], int]] = staticmethod(tiff_work_bytes)
    DECODE: ClassVar[str] = "decode_tiff"


@irdl_op_definition
class DecodeJp2Op(_DecodeOp):
    """`%ok = image.decode_jp2 %data, %out, %work {height = H, width = W, format = "rgb", size = N}`:
    the `N` bytes at `%data` decoded as a JPEG 2000 image (JP2 or J2K, 5/3 or 9/7, 8-bit) of
    H x W into `%out`; false (and `%out` untouched) when they are not one."""

    name = "image.decode_jp2"

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = (_helper("zant_jp2_decode", "image_jp2.zig", (PIXEL_HELPER.name,)), PIXEL_HELPER)
    WORK_BYTES: ClassVar[Callable[[int, int], int]] = staticmethod(jp2_work_bytes)
    DECODE: ClassVar[str] = "decode_jp2"


@irdl_op_definition
class DecodeWebpOp(_DecodeOp):
    """`%ok = image.decode_webp %data, %out, %work {height = H, width = W, format = "rgb", size = N}`:
    the `N` bytes at `%data` decoded as a lossy WebP (one VP8 key frame) of H x W into `%out`;
    false (and `%out` untouched) when they are not one."""

    name = "image.decode_webp"

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = (_helper("zant_webp_decode", "image_webp.zig", (PIXEL_HELPER.name,)), PIXEL_HELPER)
    WORK_BYTES: ClassVar[Callable[[int, int], int]] = staticmethod(webp_work_bytes)
    DECODE: ClassVar[str] = "decode_webp"


Image = Dialect("image", [DecodeJpegOp, DecodePngOp, DecodeTiffOp, DecodeJp2Op, DecodeWebpOp], [])
