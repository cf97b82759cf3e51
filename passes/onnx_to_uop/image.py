"""ImageDecoder: 24-bit BMP (BI_RGB), binary PPM (P6, maxval 255), baseline JPEG, PNG,
uncompressed TIFF, JPEG 2000 (5/3 or 9/7) and lossy WebP.

The encoded bytes are a run-time input, so the format is found at run time; the output is
compiled for the shape the model declares ([H, W, 3] for RGB and BGR, [H, W, 1] for Grayscale).
Four steps, none reading past the input:

1. header: BMP's fields sit at fixed offsets (read only when the input is long enough to hold
   them); PPM's are ASCII numbers separated by whitespace and comments, parsed by one loop
   over the bytes before the last 3·H·W (where its pixels must start at the latest);
2. JPEG, PNG, TIFF, JPEG 2000 and WebP: `image.decode_jpeg`, `image.decode_png`,
   `image.decode_tiff`, `image.decode_jp2`, `image.decode_webp` (dialects/image.py, their decoders dialects/image_*.zig) decode the bytes
   into the output when they are such an image of H x W, each with a scratch buffer (its `WORK_BYTES`: JPEG's
   component planes and Huffman tables, PNG's inflated rows, one byte for TIFF, JPEG 2000's
   coefficient planes, WebP's Y, U and V planes) the arena plan places, and write nothing otherwise;
3. check: `abi.check` ends NAME_predict with `abi.Status.OUTPUT_SIZE` unless the bytes are one
   of the seven formats, of the compiled width and height, with every pixel inside the input;
4. pixels: one loop nest over [H, W] reads each channel where the header said (BMP: rows
   padded to 4 bytes, bottom-up unless the height is negative, BGR order; PPM: RGB order), or,
   after a JPEG, PNG or TIFF, stores each decoded byte back. Grayscale is PIL's convert("L") of the RGB.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import IndexType, IntegerType
from xdsl.ir import Operation, SSAValue

from zant.dialects import abi, image, uop
from zant.dialects.onnx import ImageDecoderOp, get_attr, inputs
from zant.errors import ZantError
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout, layout_of, tensor_element_type, tensor_shape
from zant.passes.onnx_to_uop.parameters import I64, check
BMP_HEADER = 54
"""Bytes of a BMP's file header (14) and BITMAPINFOHEADER (40), the fields read."""
PPM_NUMBER_CAP = 1 << 20
"""PPM header numbers are clamped here while parsed (no overflow; larger ones never match)."""


@dataclass
class Scalars:
    """i64 and i1 scalar code: the bytes of the input, comparisons, logic."""

    kb: KernelBuilder
    data: Layout

    def c(self, value: int) -> SSAValue:
        return self.kb.const(value, I64)

    def byte(self, index: int | SSAValue) -> SSAValue:
        at = self.kb.index(index) if isinstance(index, int) else index
        return self.kb.cast(self.kb.load(self.data, [at]), I64)

    def little_endian(self, offset: int, size: int) -> SSAValue:
        """The unsigned little-endian integer of bytes [offset, offset + size)."""
        value = self.byte(offset)
        for k in range(1, size):
            value = self.kb.alu("add", value, self.kb.alu("mul", self.byte(offset + k), self.c(256**k)))
        return value

    def eq(self, value: SSAValue, expected: int) -> SSAValue:
        return self.kb.alu("cmpeq", value, self.c(expected))

    def between(self, value: SSAValue, low: int, high: int) -> SSAValue:
        return self.all(self.kb.alu("cmple", self.c(low), value), self.kb.alu("cmple", value, self.c(high)))

    def all(self, *conditions: SSAValue) -> SSAValue:
        result = conditions[0]
        for condition in conditions[1:]:
            result = self.kb.alu("and", result, condition)
        return result

    def any(self, *conditions: SSAValue) -> SSAValue:
        result = conditions[0]
        for condition in conditions[1:]:
            result = self.kb.alu("or", result, condition)
        return result

    def not_(self, condition: SSAValue) -> SSAValue:
        return self.kb.alu("not", condition)

    def any_sum(self, values: list[SSAValue]) -> SSAValue:
        total = values[0]
        for value in values[1:]:
            total = self.kb.alu("add", total, value)
        return total

    def false(self) -> SSAValue:
        return self.kb.const(False, IntegerType(1))

    def whitespace(self, byte: SSAValue) -> SSAValue:
        """Space, \\t, \\n, \\v, \\f or \\r."""
        return self.any(self.eq(byte, ord(" ")), self.between(byte, 9, 13))


@dataclass
class Source:
    """Where the pixels are: a format's test, and the i64 index of channel `k` (R, G, B) of pixel
    (row, column)."""

    ok: SSAValue
    first: SSAValue  # index of the first byte of the top row
    row_step: SSAValue  # bytes from one row to the next one down (negative: bottom-up)
    rgb_offsets: tuple[int, int, int]  # R, G, B within a pixel


def _bmp(s: Scalars, size: int, height: int, width: int) -> Source:
    """BITMAPFILEHEADER + BITMAPINFOHEADER (or a later version), 24 bits, no compression."""
    stride = (3 * width + 3) // 4 * 4
    if size < BMP_HEADER:
        return Source(s.false(), s.c(0), s.c(0), (2, 1, 0))
    offset, signed_height = s.little_endian(10, 4), s.little_endian(22, 4)
    bottom_up = s.eq(signed_height, height)
    ok = s.all(
        s.eq(s.byte(0), ord("B")), s.eq(s.byte(1), ord("M")),
        s.between(s.little_endian(14, 4), 40, 1 << 16),  # not the 16-bit BITMAPCOREHEADER
        s.eq(s.little_endian(18, 4), width),
        s.any(bottom_up, s.eq(signed_height, 2**32 - height)),  # negative: top-down
        s.eq(s.little_endian(26, 2), 1), s.eq(s.little_endian(28, 2), 24), s.eq(s.little_endian(30, 4), 0),
        s.kb.alu("cmple", offset, s.c(size - stride * height)),
    )
    kb = s.kb
    first = kb.where(bottom_up, kb.alu("add", offset, s.c(stride * (height - 1))), offset)
    step = kb.where(bottom_up, s.c(-stride), s.c(stride))
    return Source(ok, first, step, (2, 1, 0))


def _ppm(s: Scalars, size: int, height: int, width: int) -> Source:
    """"P6", whitespace, then width, height and maxval in ASCII, separated by whitespace and
    '#' comments (to the end of the line), then one whitespace byte and the RGB pixels."""
    pixels = 3 * height * width
    if size < pixels + 3:
        return Source(s.false(), s.c(0), s.c(0), (0, 1, 2))
    kb = s.kb
    # Parser state: numbers done (width, height, maxval), the one being read, in a number or a
    # comment, a stray byte seen, where the pixels start.
    names = ("done", "value", "in_number", "in_comment", "stray", "width", "height", "maxval", "start")
    state = {name: kb.define_acc(0, I64) for name in names}
    with kb.loop(size - pixels, start=2) as i:
        get = {name: kb.acc_get(acc) for name, acc in state.items()}
        byte = s.byte(i)
        one = lambda name: s.eq(get[name], 1)  # noqa: E731
        digit, space, hash_ = s.between(byte, ord("0"), ord("9")), s.whitespace(byte), s.eq(byte, ord("#"))
        reading = s.all(kb.alu("cmplt", get["done"], s.c(3)), s.not_(one("in_comment")))
        step = s.all(reading, digit)
        end = s.all(reading, space, one("in_number"))
        opens = s.all(reading, hash_, s.not_(one("in_number")))
        stray = s.all(reading, s.not_(s.any(digit, space, opens)))
        line_end = s.any(s.eq(byte, ord("\n")), s.eq(byte, ord("\r")))
        comment = kb.where(one("in_comment"), s.not_(line_end), opens)
        grown = kb.alu("add", kb.alu("mul", get["value"], s.c(10)), kb.alu("sub", byte, s.c(ord("0"))))
        value = kb.where(step, kb.alu("min", grown, s.c(PPM_NUMBER_CAP)), kb.where(end, s.c(0), get["value"]))
        updates = {
            "done": kb.where(end, kb.alu("add", get["done"], s.c(1)), get["done"]),
            "value": value,
            "in_number": kb.where(step, s.c(1), kb.where(end, s.c(0), get["in_number"])),
            "in_comment": kb.cast(comment, I64),
            "stray": kb.where(stray, s.c(1), get["stray"]),
            "start": kb.where(s.all(end, s.eq(get["done"], 2)), kb.alu("add", kb.cast(i, I64), s.c(1)), get["start"]),
        }
        for k, name in enumerate(("width", "height", "maxval")):
            updates[name] = kb.where(s.all(end, s.eq(get["done"], k)), get["value"], get[name])
        for name, value in updates.items():
            kb.acc_set(state[name], value)
    get = {name: kb.acc_get(acc) for name, acc in state.items()}
    ok = s.all(
        s.eq(s.byte(0), ord("P")), s.eq(s.byte(1), ord("6")), s.not_(s.between(s.byte(2), ord("0"), ord("9"))),
        s.eq(get["done"], 3), s.eq(get["stray"], 0),
        s.eq(get["width"], width), s.eq(get["height"], height), s.eq(get["maxval"], 255),
        s.kb.alu("cmple", get["start"], s.c(size - pixels)),
    )
    return Source(ok, get["start"], s.c(3 * width), (0, 1, 2))


FORMATS = {"RGB": "rgb", "BGR": "bgr", "Grayscale": "gray"}
"""ImageDecoder's pixel formats by the names the image dialect's decoders give them."""
LUMA = (19595, 38470, 7471)
"""Grayscale from RGB as PIL's convert("L") computes it (what onnx's reference returns): ITU-R
601-2 luma in 16-bit fixed point, (19595 R + 38470 G + 7471 B + 2^15) >> 16."""


DECODERS = {
    "jpeg": image.DecodeJpegOp, "png": image.DecodePngOp, "tiff": image.DecodeTiffOp, "jp2": image.DecodeJp2Op,
    "webp": image.DecodeWebpOp,
}
"""The compressed formats, each decoded by an op of the image dialect."""


def _decoded(kb: KernelBuilder, decoder: type, data: Layout, out: Layout, name: str, pixel_format: str) -> SSAValue:
    """`decoder` (an image-dialect op) of the input bytes into `out`, with a scratch buffer of its
    `WORK_BYTES`: true when the bytes were such an image of the compiled height and width (else
    `out` untouched)."""
    height, width, _ = out.shape
    kind = next(k for k, d in DECODERS.items() if d is decoder)
    work = kb.alloc(f"{name}_{kind}_work", (decoder.WORK_BYTES(height, width),), data.element_type)
    # Each a contiguous run of bytes: the address of its first element in its buffer.
    pointers = [kb.insert(uop.GepOp(layout.buffer, [kb.index(layout.offset)])).result for layout in (data, out, work)]
    return kb.insert(decoder(*pointers, height=height, width=width, format=FORMATS[pixel_format], size=data.size)).ok


class ImageDecoderLowering(OnnxLowering):
    """ImageDecoder (RGB, BGR or Grayscale) of a 24-bit BMP, a binary PPM, a baseline JPEG, a PNG,
    an uncompressed TIFF, a JPEG 2000 image or a lossy WebP of the declared shape, the format told
    apart at run time.

    `formats` names the compressed formats to decode (keys of `DECODERS`; empty, the default:
    all): every ImageDecoder carries each one's decoder, so a model whose images are all of one
    format leaves the others' code out of its flash (onnx-to-uop's `image-formats` option). BMP
    and PPM, copy loops, are always read."""

    op_names = frozenset({ImageDecoderOp.name})

    def __init__(self, formats: tuple[str, ...] = ()):
        unknown = sorted(set(formats) - set(DECODERS))
        if unknown:
            raise ZantError(f"onnx-to-uop: image-formats names {', '.join(DECODERS)}; got {', '.join(unknown)}")
        self.decoders = [d for k, d in DECODERS.items() if not formats or k in formats]

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        pixel_format = get_attr(op, "pixel_format")
        if pixel_format not in FORMATS:
            raise NotImplementedError(f"pixel_format '{pixel_format}' (RGB, BGR and Grayscale are supported)")
        height, width, channels = tensor_shape(op.results[0])
        if channels != (1 if pixel_format == "Grayscale" else 3):
            raise ValueError(f"output shape {[height, width, channels]} has {channels} channels, {pixel_format} {1 if pixel_format == 'Grayscale' else 3}")
        data = layout_of(inputs(op)[0])
        if not data.is_contiguous():
            raise NotImplementedError("the encoded bytes as a strided view (a contiguous byte tensor is decoded)")
        size = data.shape[0]
        s = Scalars(kb, data)
        bmp, ppm = _bmp(s, size, height, width), _ppm(s, size, height, width)
        out = kb.alloc(result_name(op), (height, width, channels), tensor_element_type(op.results[0]))
        decoded = [_decoded(kb, d, data, out, result_name(op), pixel_format) for d in self.decoders]
        check(kb, s.any(bmp.ok, ppm.ok, *decoded), abi.Status.OUTPUT_SIZE)
        # BMP and PPM: the pixels copied from where the header said. After a JPEG, PNG or TIFF
        # (decoded into `out` already) the same loop stores each output byte back and reads byte 0
        # of the input.
        compressed = s.any(*decoded) if decoded else s.false()
        pick = lambda a, b: kb.where(bmp.ok, a, b)  # noqa: E731
        first, row_step = pick(bmp.first, ppm.first), pick(bmp.row_step, ppm.row_step)
        with kb.loop(height) as row:
            row_start = kb.alu("add", first, kb.alu("mul", kb.cast(row, I64), row_step))
            with kb.loop(width) as column:
                pixel = kb.alu("add", row_start, kb.alu("mul", kb.cast(column, I64), s.c(3)))
                rgb = []
                for channel in range(3):
                    offset = pick(s.c(bmp.rgb_offsets[channel]), s.c(ppm.rgb_offsets[channel]))
                    at = kb.where(compressed, s.c(0), kb.alu("add", pixel, offset))
                    rgb.append(kb.load(data, [kb.cast(at, IndexType())]))
                if pixel_format == "Grayscale":
                    weighted = [kb.alu("mul", kb.cast(v, I64), s.c(w)) for v, w in zip(rgb, LUMA)]
                    luma = kb.alu("shr", kb.alu("add", s.any_sum(weighted), s.c(1 << 15)), s.c(16))
                    values = [kb.cast(luma, out.element_type)]
                else:
                    values = rgb if pixel_format == "RGB" else rgb[::-1]
                for k, value in enumerate(values):
                    index = [row, column, kb.index(k)]
                    kb.store(kb.where(compressed, kb.load(out, index), value), out, index)
        return [out]


PATTERNS = (ImageDecoderLowering(),)

__all__ = ["PATTERNS", "ImageDecoderLowering"]
