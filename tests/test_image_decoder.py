"""ImageDecoder compiled for the declared shape: uncompressed images (24-bit BMP, binary PPM),
baseline JPEG and PNG.

One model (three ImageDecoder nodes, RGB, BGR and Grayscale, on one run-time input of 102 bytes)
is compiled once (host, ReleaseSafe: an out-of-bounds read traps and kills the process) and
called through ctypes with images encoded here: BMPs bottom-up and top-down with padded rows,
PPMs with comments and odd whitespace, all padded to the same size. Bytes that are not such an
image of the compiled shape make `m_predict` return Status.OUTPUT_SIZE and leave the outputs as
they were.

JPEG: a 13 x 21 model of the same three nodes decodes the JPEGs of tests/data/jpeg/jpegs.npz
(Pillow-encoded: 4:2:0, 4:2:2 with restart markers, 4:4:4 with optimized tables, quality 100,
grayscale) to exactly the pixels Pillow decodes them to, and refuses a progressive one, truncated
and malformed ones; randomly corrupted streams give what the Python reference
(zant.dialects.image_reference) gives, status and pixels. The node suite's 32 x 32 JPEG is
checked through the uop interpreter (the reference's other user) on the host and Cortex-M4
pipelines.

PNG: files written here (every filter, stored, fixed and dynamic zlib blocks, several IDAT
chunks, gray, gray + alpha, RGB, RGBA, palette) decode to the pixels they were made from;
malformed ones are refused; streams corrupted under right CRCs agree with the reference (zlib).

JPEG 2000: a 13 x 21 model decodes the files of tests/data/jp2/jp2s.npz (OpenJPEG-encoded: one
component, the five progression orders, precincts, tiles, SOP/EPH, code-block styles) to the
samples OpenJPEG decodes them to (9/7 and lossy-rate files too), refuses tile-parts, two layers,
bypass and malformed files, refuses every cut of two files without a trap, and agrees with
image_reference.decode_jp2 on corrupted ones; the node suite's 32 x 32 JP2 decodes to onnx's data
in RGB, BGR and Grayscale.
"""

from __future__ import annotations

import ctypes
import struct
import zlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from zant.dialects.abi import Status
from zant.driver import CompileOptions, compile_model
from zant.errors import ZantError

HEIGHT, WIDTH = 3, 5  # BMP rows of 15 bytes padded to 16
SIZE = 54 + 16 * HEIGHT
SENTINEL = 0xA5
PIXELS = np.random.default_rng(0).integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)


def bmp(pixels: np.ndarray, top_down: bool = False, **fields) -> bytes:
    """A 24-bit BI_RGB BMP of RGB `pixels`; `fields` override header values (width, height, bpp,
    offset, compression)."""
    height, width, _ = pixels.shape
    stride = (3 * width + 3) // 4 * 4
    rows = [bytes(row[:, ::-1].tobytes()).ljust(stride, b"\0") for row in pixels]
    data = b"".join(rows if top_down else rows[::-1])
    f = {"offset": 54, "width": width, "height": -height if top_down else height, "bpp": 24, "compression": 0, **fields}
    header = b"BM" + struct.pack("<IHHI", 54 + len(data), 0, 0, f["offset"])
    info = struct.pack("<IiiHHIIiiII", 40, f["width"], f["height"], 1, f["bpp"], f["compression"], len(data), 2835, 2835, 0, 0)
    return header + info + data


def ppm(pixels: np.ndarray, header: str) -> bytes:
    """`header` (which must end in one whitespace byte) then the RGB `pixels`."""
    return header.encode() + pixels.tobytes()


def padded_header(body: str, size: int = SIZE) -> str:
    """`body` ('P6', numbers, a final whitespace) with a comment after 'P6' that makes the file
    `size` bytes long."""
    filler = size - PIXELS.size - len(body) - len("#\n")
    return body.replace("P6", "P6#" + "c" * filler + "\n", 1)


@pytest.fixture(scope="module")
def predict(tmp_path_factory):
    return _compiled(tmp_path_factory.mktemp("image"), HEIGHT, WIDTH, SIZE)


def _model(height: int, width: int, size: int, formats=("RGB", "BGR", "Grayscale")) -> onnx.ModelProto:
    nodes = [helper.make_node("ImageDecoder", ["data"], [f.lower()], pixel_format=f) for f in formats]
    graph = helper.make_graph(
        nodes, "decode",
        [helper.make_tensor_value_info("data", TensorProto.UINT8, [size])],
        [
            helper.make_tensor_value_info(f.lower(), TensorProto.UINT8, [height, width, 1 if f == "Grayscale" else 3])
            for f in formats
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def _compiled(folder, height: int, width: int, size: int):
    """`run(bytes) -> (status, rgb, bgr, gray)` of the three-node model built for the host."""
    onnx.save(_model(height, width, size), folder / "model.onnx")
    result = compile_model(folder / "model.onnx", folder / "out", CompileOptions(name="m", optimize="ReleaseSafe"))
    function = ctypes.CDLL(str(result.library_path)).m_predict
    function.restype = ctypes.c_int32

    def run(encoded: bytes) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        assert len(encoded) == size, len(encoded)
        data = np.frombuffer(encoded, np.uint8).copy()
        rgb, bgr = (np.full((height, width, 3), SENTINEL, np.uint8) for _ in range(2))
        gray = np.full((height, width, 1), SENTINEL, np.uint8)
        status = function(*(ctypes.c_void_p(a.ctypes.data) for a in (data, rgb, bgr, gray)))
        return status, rgb, bgr, gray

    return run


def luma(rgb: np.ndarray) -> np.ndarray:
    """PIL's convert("L"), what onnx's reference gives for Grayscale: (19595 R + 38470 G + 7471 B
    + 2^15) >> 16."""
    r, g, b = (rgb[..., k].astype(np.int64) for k in range(3))
    return ((19595 * r + 38470 * g + 7471 * b + 32768) >> 16).astype(np.uint8)[..., None]


DECODED = {
    "bmp_bottom_up": lambda: bmp(PIXELS),
    "bmp_top_down": lambda: bmp(PIXELS, top_down=True),
    "ppm_comment_and_whitespace": lambda: ppm(PIXELS, padded_header("P6\n5\t 3\r\n# maxval next\n255\n")),
    # The pixels start right after the header; bytes after them are not read.
    "ppm_trailing_bytes": lambda: ppm(PIXELS, padded_header("P6 5 3 255\n", SIZE - 4)) + b"tail",
}


@pytest.mark.parametrize("name", DECODED)
def test_decodes_rgb_bgr_and_grayscale(predict, name):
    status, rgb, bgr, gray = predict(DECODED[name]())
    assert status == 0
    np.testing.assert_array_equal(rgb, PIXELS)
    np.testing.assert_array_equal(bgr, PIXELS[:, :, ::-1])
    np.testing.assert_array_equal(gray, luma(PIXELS))


REFUSED = {
    "other_width": lambda: bmp(PIXELS[:, :4]) + bytes(12),  # a 4-wide image, padded to SIZE
    "pixels_past_the_end": lambda: bmp(PIXELS, offset=58),
    "32_bit_bmp": lambda: bmp(PIXELS, bpp=32),
    "compressed_bmp": lambda: bmp(PIXELS, compression=1),
    "ppm_other_height": lambda: ppm(PIXELS, padded_header("P6 5 2 255\n")),
    "ppm_16_bit": lambda: ppm(PIXELS, padded_header("P6 5 3 65535\n")),
    "ppm_stray_byte": lambda: ppm(PIXELS, padded_header("P6 5 3x 255\n")),
    "ascii_ppm": lambda: ppm(PIXELS, padded_header("P6 5 3 255\n")).replace(b"P6", b"P3", 1),
    "jpeg_header_only": lambda: b"\xff\xd8\xff\xe0" + bytes(SIZE - 4),
}


@pytest.mark.parametrize("name", REFUSED)
def test_refuses_other_images_without_writing(predict, name):
    status, *outputs = predict(REFUSED[name]())
    assert status == Status.OUTPUT_SIZE
    assert all(np.all(o == SENTINEL) for o in outputs)


def test_a_channel_count_other_than_the_formats_is_refused_naming_the_node(tmp_path):
    node = helper.make_node("ImageDecoder", ["data"], ["gray"], name="decode", pixel_format="Grayscale")
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("data", TensorProto.UINT8, [SIZE])],
        [helper.make_tensor_value_info("gray", TensorProto.UINT8, [HEIGHT, WIDTH, 3])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), tmp_path / "model.onnx")
    with pytest.raises(ZantError, match=r"node 'decode' \(onnx.ImageDecoder\): output shape \[3, 5, 3\] has 3 channels, Grayscale 1"):
        compile_model(tmp_path / "model.onnx", tmp_path / "out", CompileOptions(name="m", build=False))


# -- JPEG -------------------------------------------------------------------------------------

JPEGS = np.load(Path(__file__).parent / "data" / "jpeg" / "jpegs.npz")
JPEG_HEIGHT, JPEG_WIDTH = JPEGS["420_rgb"].shape[:2]
JPEG_SIZE = 1280  # the largest file (quality 100) is 1,241 bytes; the others are zero-padded
DECODED_JPEGS = ("420", "422_restarts", "444_optimized", "420_quality100", "gray")


def jpeg(name: str) -> bytes:
    return JPEGS[name].tobytes().ljust(JPEG_SIZE, b"\0")


@pytest.fixture(scope="module")
def predict_jpeg(tmp_path_factory):
    return _compiled(tmp_path_factory.mktemp("jpeg"), JPEG_HEIGHT, JPEG_WIDTH, JPEG_SIZE)


@pytest.mark.parametrize("name", DECODED_JPEGS)
def test_decodes_jpegs_as_pillow(predict_jpeg, name):
    status, rgb, bgr, gray = predict_jpeg(jpeg(name))
    assert status == 0
    np.testing.assert_array_equal(rgb, JPEGS[f"{name}_rgb"])
    np.testing.assert_array_equal(bgr, JPEGS[f"{name}_rgb"][:, :, ::-1])
    np.testing.assert_array_equal(gray[..., 0], JPEGS[f"{name}_gray"])


def _patched(name: str, marker: bytes, offset: int, value: bytes) -> bytes:
    """JPEG `name` with the bytes at `offset` after the first `marker` replaced by `value`."""
    data = bytearray(jpeg(name))
    at = data.index(marker) + offset
    data[at : at + len(value)] = value
    return bytes(data)


REFUSED_JPEGS = {
    "progressive": lambda: jpeg("progressive"),
    "truncated_in_the_scan": lambda: jpeg("420")[:600].ljust(JPEG_SIZE, b"\0"),
    "no_end_marker": lambda: JPEGS["420"].tobytes()[:-2].ljust(JPEG_SIZE, b"\0"),
    "other_height": lambda: _patched("420", b"\xff\xc0", 5, b"\x00\x0e"),
    "sampling_factor_4": lambda: _patched("420", b"\xff\xc0", 11, b"\x41"),
    "12_bit_samples": lambda: _patched("420", b"\xff\xc0", 4, b"\x0c"),
    "huffman_table_of_4080_codes": lambda: _patched("420", b"\xff\xc4", 5, bytes([255] * 16)),
    "segment_past_the_end": lambda: _patched("420", b"\xff\xdb", 2, b"\xff\xff"),
    "undefined_quantization_table": lambda: _patched("420", b"\xff\xc0", 12, b"\x03"),
}


@pytest.mark.parametrize("name", REFUSED_JPEGS)
def test_refuses_jpegs_without_writing(predict_jpeg, name):
    status, *outputs = predict_jpeg(REFUSED_JPEGS[name]())
    assert status == Status.OUTPUT_SIZE
    assert all(np.all(o == SENTINEL) for o in outputs)


def test_corrupted_jpegs_give_what_the_reference_gives(predict_jpeg):
    """150 seeded corruptions (1 to 5 bytes replaced) of each of two JPEGs: the compiled decoder
    and image_reference.decode_jpeg agree on every status and every pixel; some still decode."""
    from zant.dialects.image_reference import decode_jpeg

    files = [(jpeg(name), len(JPEGS[name].tobytes())) for name in ("420", "422_restarts")]
    _corruptions_agree(predict_jpeg, decode_jpeg, files, (JPEG_HEIGHT, JPEG_WIDTH), seed=29, count=150, first=2, most=6)


def _corruptions_agree(predict, decode, files, size: tuple[int, int], seed: int, count: int, first: int, most: int) -> None:
    """`count` seeded corruptions of each (file, length) of `files`, 1 to `most` - 1 bytes in
    [first, length) replaced (`memory_safety._corrupted`): the compiled decoder `predict` and the
    reference `decode` agree on every status and every pixel, and over 20 decode and over 20 are
    refused."""
    from zant.tools.memory_safety import _corrupted

    rng = np.random.default_rng(seed)
    decoded = refused = 0
    for data, length in files:
        for corrupted in _corrupted(rng, data, count, first, length, most):
            status, rgb, _bgr, gray = predict(corrupted)
            want = decode(corrupted, *size, "rgb")
            if want is None:
                refused += 1
                assert status == Status.OUTPUT_SIZE
                assert np.all(rgb == SENTINEL) and np.all(gray == SENTINEL)
            else:
                decoded += 1
                assert status == 0
                np.testing.assert_array_equal(rgb, want)
                np.testing.assert_array_equal(gray, decode(corrupted, *size, "gray"))
    assert decoded > 20 and refused > 20, (decoded, refused)


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
@pytest.mark.parametrize("kind", ["jpeg", "png", "jpeg2k"])
def test_the_interpreter_decodes_the_suites_images(kind, target):
    """The node suite's 32 x 32 JPEG (4:2:0), PNG and JPEG 2000 through the lowered module on the
    uop interpreter (the image dialect's Python reference): onnx's expected RGB, and Grayscale (the
    suite's for the JPEG, PIL's luma of the RGB for the others)."""
    from onnx.backend.test.case.node import _image_decoder_data as suite

    from zant.driver import compile_to_module
    from zant.interpreter import graph_functions, run_defined

    case = getattr(suite, f"image_decoder_decode_{kind}_rgb")
    data, expected = np.asarray(case.data, np.uint8), np.asarray(case.output, np.uint8)
    planned = compile_to_module(_model(32, 32, data.size, ("RGB", "Grayscale")), target)
    assert f"image.decode_{'jp2' if kind == 'jpeg2k' else kind}" in str(planned.module)
    (function,) = graph_functions(planned.module)
    (rgb, gray), defined = run_defined(function, [data])
    assert all(mask.all() for mask in defined)
    np.testing.assert_array_equal(rgb, expected.ravel())
    want_gray = suite.image_decoder_decode_jpeg_grayscale.output if kind == "jpeg" else luma(expected)
    np.testing.assert_array_equal(gray, np.asarray(want_gray).ravel())


# -- PNG --------------------------------------------------------------------------------------
# PNG is lossless: the files are written here (filters, zlib, chunks by hand), and what they
# decode to is the pixels they were made from.

PNG_SIZE = 1600
PNG_HEIGHT, PNG_WIDTH = JPEG_HEIGHT, JPEG_WIDTH


def _filtered(samples: np.ndarray, bpp: int, kinds: list[int]) -> bytes:
    """The rows of `samples` ([H, W·bpp] uint8) each filtered by its kind (0 None .. 4 Paeth)."""
    out = []
    previous = np.zeros(samples.shape[1], np.int64)
    for row, kind in zip(samples.astype(np.int64), kinds):
        left = np.concatenate([np.zeros(bpp, np.int64), row[:-bpp]])
        upper_left = np.concatenate([np.zeros(bpp, np.int64), previous[:-bpp]])
        if kind == 4:
            p = left + previous - upper_left
            pa, pb, pc = abs(p - left), abs(p - previous), abs(p - upper_left)
            predicted = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, previous, upper_left))
        else:
            predicted = (np.zeros_like(row), left, previous, (left + previous) // 2)[kind]
        out.append(bytes([kind]) + ((row - predicted) & 0xFF).astype(np.uint8).tobytes())
        previous = row
    return b"".join(out)


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png(samples: np.ndarray, color: int, strategy: int = zlib.Z_DEFAULT_STRATEGY, level: int = 6, parts: int = 1,
        palette: bytes = b"", depth: int = 8, interlace: int = 0) -> bytes:
    """An 8-bit PNG of `samples` ([H, W, channels] uint8) of colour type `color`, every filter
    used in turn, its zlib stream (with `strategy`, `level`) cut into `parts` IDAT chunks."""
    height, width, bpp = samples.shape
    rows = _filtered(samples.reshape(height, width * bpp), bpp, [k % 5 for k in range(height)])
    compressor = zlib.compressobj(level, zlib.DEFLATED, 15, 9, strategy)
    stream = compressor.compress(rows) + compressor.flush()
    cuts = [stream[k * len(stream) // parts: (k + 1) * len(stream) // parts] for k in range(parts)]
    header = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, interlace)
    chunks = [_chunk(b"IHDR", header), _chunk(b"tEXt", b"Comment\0zant")]
    chunks += [_chunk(b"PLTE", palette)] if palette else []
    chunks += [_chunk(b"IDAT", c) for c in cuts] + [_chunk(b"IEND", b"")]
    return (b"\x89PNG\r\n\x1a\n" + b"".join(chunks)).ljust(PNG_SIZE, b"\0")


PNG_RNG = np.random.default_rng(4)
PNG_RGBA = PNG_RNG.integers(0, 256, (PNG_HEIGHT, PNG_WIDTH, 4), dtype=np.uint8)
PNG_PALETTE = PNG_RNG.integers(0, 256, (40, 3), dtype=np.uint8)
PNG_INDICES = PNG_RNG.integers(0, 40, (PNG_HEIGHT, PNG_WIDTH, 1), dtype=np.uint8)
GRAY = np.repeat(PNG_RGBA[..., :1], 3, axis=-1)
PNGS = {  # name: (file, its RGB pixels)
    "rgb": (lambda: png(PNG_RGBA[..., :3], 2), PNG_RGBA[..., :3]),
    "rgb_fixed_codes_3_chunks": (lambda: png(PNG_RGBA[..., :3], 2, zlib.Z_FIXED, parts=3), PNG_RGBA[..., :3]),
    "rgb_stored": (lambda: png(PNG_RGBA[..., :3], 2, level=0), PNG_RGBA[..., :3]),
    "rgb_run_lengths": (lambda: png(PNG_RGBA[..., :3] // 64 * 64, 2, zlib.Z_RLE), PNG_RGBA[..., :3] // 64 * 64),
    "rgba": (lambda: png(PNG_RGBA, 6), PNG_RGBA[..., :3]),
    "gray": (lambda: png(PNG_RGBA[..., :1], 0), GRAY),
    "gray_alpha": (lambda: png(PNG_RGBA[..., :2], 4), GRAY),
    "palette": (lambda: png(PNG_INDICES, 3, palette=PNG_PALETTE.tobytes()), PNG_PALETTE[PNG_INDICES[..., 0]]),
}


@pytest.fixture(scope="module")
def predict_png(tmp_path_factory):
    return _compiled(tmp_path_factory.mktemp("png"), PNG_HEIGHT, PNG_WIDTH, PNG_SIZE)


@pytest.mark.parametrize("name", PNGS)
def test_decodes_pngs(predict_png, name):
    make, rgb_pixels = PNGS[name]
    status, rgb, bgr, gray = predict_png(make())
    assert status == 0
    np.testing.assert_array_equal(rgb, rgb_pixels)
    np.testing.assert_array_equal(bgr, rgb_pixels[:, :, ::-1])
    # Grayscale: a gray image's own samples, else PIL's luma of the RGB
    np.testing.assert_array_equal(gray, PNG_RGBA[..., :1] if name.startswith("gray") else luma(rgb_pixels))


def _corrupt_stream(file: bytes) -> bytes:
    """`file` with one bit of its first IDAT's zlib data flipped and the chunk's CRC made right."""
    at = file.index(b"IDAT")
    length = struct.unpack(">I", file[at - 4: at])[0]
    body = bytearray(file[at + 4: at + 4 + length])
    body[len(body) // 2] ^= 0x10
    return file[: at - 4] + _chunk(b"IDAT", bytes(body)) + file[at + 8 + length:]


REFUSED_PNGS = {
    "bad_crc": lambda: png(PNG_RGBA[..., :3], 2).replace(b"IHDR", b"IHDr"),
    "other_width": lambda: png(PNG_RGBA[:, :-1, :3], 2),
    "16_bit": lambda: png(PNG_RGBA[..., :3], 2, depth=16),
    "interlaced": lambda: png(PNG_RGBA[..., :3], 2, interlace=1),
    "truncated": lambda: png(PNG_RGBA[..., :3], 2)[:400].ljust(PNG_SIZE, b"\0"),
    "palette_index_past_the_palette": lambda: png(PNG_INDICES, 3, palette=PNG_PALETTE[:20].tobytes()),
    "corrupt_zlib_data": lambda: _corrupt_stream(png(PNG_RGBA[..., :3], 2)),
    "one_row_short": lambda: png(PNG_RGBA[:-1, :, :3], 2).replace(
        struct.pack(">II", PNG_WIDTH, PNG_HEIGHT - 1), struct.pack(">II", PNG_WIDTH, PNG_HEIGHT)),
}


@pytest.mark.parametrize("name", REFUSED_PNGS)
def test_refuses_pngs_without_writing(predict_png, name):
    status, *outputs = predict_png(REFUSED_PNGS[name]())
    assert status == Status.OUTPUT_SIZE
    assert all(np.all(o == SENTINEL) for o in outputs)


def test_pngs_with_corrupt_streams_give_what_the_reference_gives(predict_png):
    """200 seeded corruptions of the zlib data (CRCs made right, so inflate's own checks decide):
    the compiled decoder and image_reference.decode_png (Python's zlib) agree on every status and
    pixel."""
    from zant.dialects.image_reference import decode_png

    rng = np.random.default_rng(30)
    original = png(PNG_RGBA[..., :3], 2)
    at = original.index(b"IDAT")
    length = struct.unpack(">I", original[at - 4: at])[0]
    refused = 0
    for _ in range(200):
        body = bytearray(original[at + 4: at + 4 + length])
        for k in rng.integers(0, length, int(rng.integers(1, 4))):
            body[k] = int(rng.integers(0, 256))
        data = original[: at - 4] + _chunk(b"IDAT", bytes(body)) + original[at + 8 + length:]
        status, rgb, _bgr, _gray = predict_png(data)
        want = decode_png(data, PNG_HEIGHT, PNG_WIDTH, "rgb")
        if want is None:
            refused += 1
            assert status == Status.OUTPUT_SIZE and np.all(rgb == SENTINEL)
        else:
            assert status == 0
            np.testing.assert_array_equal(rgb, want)
    assert refused > 100, refused


# -- TIFF -------------------------------------------------------------------------------------
# Uncompressed TIFFs written here (either byte order, strips of a few rows): they decode to the
# pixels they were made from.

TIFF_SIZE = 1400


def tiff(samples: np.ndarray, photometric: int, rows_per_strip: int = 0, big: bool = False, **tags) -> bytes:
    """An uncompressed TIFF of `samples` ([H, W, channels] uint8), its strips after an IFD of
    SHORT/LONG entries; `tags` override entries by number (`t259=5`) or add them."""
    height, width, channels = samples.shape
    per_strip = rows_per_strip or height
    strips = -(-height // per_strip)
    e = ">" if big else "<"
    entries = {256: (4, [width]), 257: (4, [height]), 258: (3, [8] * channels), 259: (3, [1]),
               262: (3, [photometric]), 273: (4, [0] * strips), 277: (3, [channels]),
               278: (4, [per_strip]), 279: (4, [0] * strips), 284: (3, [1])}
    for name, value in tags.items():
        entries[int(name[1:])] = (3, value if isinstance(value, list) else [value])
    ifd_size = 2 + 12 * len(entries) + 4
    extra = 8 + ifd_size  # arrays too long to sit in an entry go here, then the strips
    blobs = b""
    row = width * channels
    first_strip = extra + sum(len(v) * (2 if t == 3 else 4) for t, v in entries.values() if len(v) * (2 if t == 3 else 4) > 4)
    entries[273] = (4, [first_strip + s * per_strip * row for s in range(strips)])
    entries[279] = (4, [min(per_strip, height - s * per_strip) * row for s in range(strips)])
    ifd = struct.pack(e + "H", len(entries))
    for tag in sorted(entries):
        kind, values = entries[tag]
        packed = b"".join(struct.pack(e + ("H" if kind == 3 else "I"), v) for v in values)
        if len(packed) <= 4:
            ifd += struct.pack(e + "HHI", tag, kind, len(values)) + packed.ljust(4, b"\0")
        else:
            ifd += struct.pack(e + "HHII", tag, kind, len(values), extra + len(blobs))
            blobs += packed
    header = (b"MM\0*" if big else b"II*\0") + struct.pack(e + "I", 8)
    data = header + ifd + b"\0\0\0\0" + blobs + samples.tobytes()
    return data.ljust(TIFF_SIZE, b"\0")


TIFFS = {  # name: (file, its RGB pixels)
    "rgb": (lambda: tiff(PNG_RGBA[..., :3], 2), PNG_RGBA[..., :3]),
    "rgb_big_endian_strips_of_4": (lambda: tiff(PNG_RGBA[..., :3], 2, 4, big=True), PNG_RGBA[..., :3]),
    "rgba_strips_of_5": (lambda: tiff(PNG_RGBA, 2, 5, t338=2), PNG_RGBA[..., :3]),
    "gray": (lambda: tiff(PNG_RGBA[..., :1], 1), GRAY),
    "gray_alpha": (lambda: tiff(PNG_RGBA[..., :2], 1, 3, t338=2), GRAY),
}


@pytest.fixture(scope="module")
def predict_tiff(tmp_path_factory):
    return _compiled(tmp_path_factory.mktemp("tiff"), PNG_HEIGHT, PNG_WIDTH, TIFF_SIZE)


@pytest.mark.parametrize("name", TIFFS)
def test_decodes_tiffs(predict_tiff, name):
    make, rgb_pixels = TIFFS[name]
    status, rgb, bgr, gray = predict_tiff(make())
    assert status == 0
    np.testing.assert_array_equal(rgb, rgb_pixels)
    np.testing.assert_array_equal(bgr, rgb_pixels[:, :, ::-1])
    np.testing.assert_array_equal(gray, PNG_RGBA[..., :1] if name.startswith("gray") else luma(rgb_pixels))


def _strip_at(file: bytes, offset: int) -> bytes:
    """A one-strip little-endian `file` with its strip said to start at `offset`."""
    entry = struct.pack("<HHI", 273, 4, 1)
    at = file.index(entry) + len(entry)
    return file[:at] + struct.pack("<I", offset) + file[at + 4:]


REFUSED_TIFFS = {
    "lzw": lambda: tiff(PNG_RGBA[..., :3], 2, t259=5),
    "16_bit": lambda: tiff(PNG_RGBA[..., :3], 2, t258=[16, 16, 16]),
    "planar": lambda: tiff(PNG_RGBA[..., :3], 2, t284=2),
    "palette": lambda: tiff(PNG_RGBA[..., :1], 3),
    "predictor": lambda: tiff(PNG_RGBA[..., :3], 2, t317=2),
    "other_height": lambda: tiff(PNG_RGBA[:-1, :, :3], 2).ljust(TIFF_SIZE, b"\0"),
    "strip_past_the_end": lambda: _strip_at(tiff(PNG_RGBA[..., :3], 2), TIFF_SIZE - 800),
    "ifd_past_the_end": lambda: b"II*\0\xf0\xff\0\0".ljust(TIFF_SIZE, b"\0"),
}


@pytest.mark.parametrize("name", REFUSED_TIFFS)
def test_refuses_tiffs_without_writing(predict_tiff, name):
    status, *outputs = predict_tiff(REFUSED_TIFFS[name]())
    assert status == Status.OUTPUT_SIZE
    assert all(np.all(o == SENTINEL) for o in outputs)


def test_corrupted_tiffs_give_what_the_reference_gives(predict_tiff):
    """300 seeded corruptions of a stripped TIFF's header and IFD: the compiled decoder and
    image_reference.decode_tiff agree on every status and pixel; some still decode."""
    from zant.dialects.image_reference import decode_tiff

    rng = np.random.default_rng(31)
    original = tiff(PNG_RGBA[..., :3], 2, 4)
    decoded = refused = 0
    for _ in range(300):
        data = bytearray(original)
        for at in rng.integers(0, 8 + 2 + 12 * 10 + 4 + 40, int(rng.integers(1, 4))):
            data[at] = int(rng.integers(0, 256))
        status, rgb, _bgr, _gray = predict_tiff(bytes(data))
        want = decode_tiff(bytes(data), PNG_HEIGHT, PNG_WIDTH, "rgb")
        if want is None:
            refused += 1
            assert status == Status.OUTPUT_SIZE and np.all(rgb == SENTINEL)
        else:
            decoded += 1
            assert status == 0
            np.testing.assert_array_equal(rgb, want)
    assert decoded > 5 and refused > 100, (decoded, refused)


# -- JPEG 2000 --------------------------------------------------------------------------------
# tests/data/jp2/jp2s.npz: 13 x 21 files encoded with OpenJPEG (tests/data/jp2/make_jp2s.py, the
# library PIL decodes with) and the samples OpenJPEG decodes them to: one component, the five
# progression orders, precincts, small code blocks, tiles with offsets, SOP/EPH, code-block styles,
# the colour files with the reversible colour transform (RCT) but one; the irreversible 9/7 wavelet
# with ICT, lossless-rate and at ratio 8 (code blocks cut short), and a 5/3 file at ratio 4.

JP2S = np.load(Path(__file__).parent / "data" / "jp2" / "jp2s.npz")
JP2_HEIGHT, JP2_WIDTH = JP2S["rgb_pixels"].shape[:2]
JP2_SIZE = 2048  # the largest file (tiles with offsets) is 1,976 bytes; the others are zero-padded
JP2_REFUSED_ENCODINGS = ("tile_parts", "two_layers", "bypass")
DECODED_JP2S = tuple(n for n in JP2S.files if not n.endswith("_pixels") and n not in JP2_REFUSED_ENCODINGS)


def jp2(name: str) -> bytes:
    return JP2S[name].tobytes().ljust(JP2_SIZE, b"\0")


def _jp2_patched(name: str, marker: bytes, offset: int, value: bytes) -> bytes:
    """JP2 `name` with the bytes at `offset` after its codestream's first `marker` replaced."""
    data = bytearray(JP2S[name].tobytes())
    at = data.index(b"\xff\x4f\xff\x51") + data[data.index(b"\xff\x4f\xff\x51"):].index(marker) + offset
    data[at: at + len(value)] = value
    return bytes(data).ljust(JP2_SIZE, b"\0")


def _jp2c_box_of_length(length: int) -> bytes:
    """The "rgb" JP2 with its codestream box said to be `length` bytes long."""
    data = jp2("rgb")
    at = data.index(b"jp2c") - 4
    return data[:at] + struct.pack(">I", length) + data[at + 4:]


@pytest.fixture(scope="module")
def predict_jp2(tmp_path_factory):
    return _compiled(tmp_path_factory.mktemp("jp2"), JP2_HEIGHT, JP2_WIDTH, JP2_SIZE)


@pytest.mark.parametrize("name", DECODED_JP2S)
def test_decodes_jp2s_as_openjpeg(predict_jp2, name):
    status, rgb, bgr, gray = predict_jp2(jp2(name))
    assert status == 0
    samples = JP2S[f"{name}_pixels"]
    want = samples if samples.shape[2] == 3 else np.repeat(samples, 3, axis=-1)
    np.testing.assert_array_equal(rgb, want)
    np.testing.assert_array_equal(bgr, want[:, :, ::-1])
    np.testing.assert_array_equal(gray, samples if samples.shape[2] == 1 else luma(want))


REFUSED_JP2S = {
    **{name: (lambda name=name: jp2(name)) for name in JP2_REFUSED_ENCODINGS},  # tile-parts, 2 layers, bypass
    "no_end_marker": lambda: JP2S["rgb"].tobytes()[:-2].ljust(JP2_SIZE, b"\0"),
    "other_width": lambda: _jp2_patched("rgb", b"\xff\x51", 6, b"\x00\x00\x00\x16"),
    "16_bit_samples": lambda: _jp2_patched("rgb", b"\xff\x51", 42, b"\x0f"),
    "subsampled_component": lambda: _jp2_patched("rgb", b"\xff\x51", 43, b"\x02"),
    "tile_part_past_the_end": lambda: _jp2_patched("rgb", b"\xff\x90", 6, b"\x00\x00\xff\xff"),
    "segment_past_the_end": lambda: _jp2_patched("rgb", b"\xff\x52", 2, b"\xff\xf0"),
    "poc_marker": lambda: _jp2_patched("rgb", b"\xff\x64", 0, b"\xff\x5f"),
    "codestream_box_past_the_end": lambda: _jp2c_box_of_length(0x10000),
    "all_0xff": lambda: b"\xff\x4f\xff\x51" + b"\xff" * (JP2_SIZE - 4),
}


@pytest.mark.parametrize("name", REFUSED_JP2S)
def test_refuses_jp2s_without_writing(predict_jp2, name):
    status, *outputs = predict_jp2(REFUSED_JP2S[name]())
    assert status == Status.OUTPUT_SIZE
    assert all(np.all(o == SENTINEL) for o in outputs)


def test_every_cut_of_a_jp2_is_refused_without_a_trap(predict_jp2):
    """Every prefix of two files (zero-padded to the compiled size; ReleaseSafe, so an
    out-of-bounds access or an overflow traps and kills the process) is refused, the outputs
    untouched: the end-of-codestream marker is required."""
    for name in ("rgb", "rpcl_precincts"):
        file = JP2S[name].tobytes()
        for length in range(len(file)):
            status, rgb, _bgr, gray = predict_jp2(file[:length].ljust(JP2_SIZE, b"\0"))
            assert status == Status.OUTPUT_SIZE, length
            assert np.all(rgb == SENTINEL) and np.all(gray == SENTINEL)


def test_corrupted_jp2s_give_what_the_reference_gives(predict_jp2):
    """70 seeded corruptions (1 to 4 bytes replaced) of each of three files (two 5/3, one 9/7 at
    ratio 8): the compiled decoder
    (ReleaseSafe) and image_reference.decode_jp2 agree on every status and every pixel; some still
    decode (a corrupted code block decodes to what its bits say, as OpenJPEG's would)."""
    from zant.dialects.image_reference import decode_jp2

    files = [(jp2(name), len(JP2S[name].tobytes())) for name in ("rgb", "cprl_precincts", "irreversible_ratio_8")]
    _corruptions_agree(predict_jp2, decode_jp2, files, (JP2_HEIGHT, JP2_WIDTH), seed=2000, count=70, first=0, most=5)


def test_decodes_the_suites_jp2_in_every_format(tmp_path):
    """The node suite's 32 x 32 JP2 (OpenJPEG 2.5: 5 levels, 64 x 64 blocks, RCT) compiled as it
    is written: RGB equal to onnx's data, BGR its reverse, Grayscale PIL's luma of it."""
    from onnx.backend.test.case.node import _image_decoder_data as suite

    case = suite.image_decoder_decode_jpeg2k_rgb
    data, expected = np.asarray(case.data, np.uint8).tobytes(), np.asarray(case.output, np.uint8)
    status, rgb, bgr, gray = _compiled(tmp_path, 32, 32, len(data))(data)
    assert status == 0
    np.testing.assert_array_equal(rgb, expected)
    np.testing.assert_array_equal(bgr, expected[:, :, ::-1])
    np.testing.assert_array_equal(gray, luma(expected))
