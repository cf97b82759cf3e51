"""ImageDecoder compiled for the declared shape: uncompressed images (24-bit BMP, binary PPM) and
baseline JPEG.

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
"""

from __future__ import annotations

import ctypes
import struct
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

    rng = np.random.default_rng(29)
    decoded = refused = 0
    for name in ("420", "422_restarts"):
        original = JPEGS[name].tobytes()
        for _ in range(150):
            data = bytearray(jpeg(name))
            for at in rng.integers(2, len(original), int(rng.integers(1, 6))):
                data[at] = int(rng.integers(0, 256))
            status, rgb, bgr, gray = predict_jpeg(bytes(data))
            want = decode_jpeg(bytes(data), JPEG_HEIGHT, JPEG_WIDTH, "rgb")
            if want is None:
                refused += 1
                assert status == Status.OUTPUT_SIZE
                assert np.all(rgb == SENTINEL) and np.all(gray == SENTINEL)
            else:
                decoded += 1
                assert status == 0
                np.testing.assert_array_equal(rgb, want)
                np.testing.assert_array_equal(gray, decode_jpeg(bytes(data), JPEG_HEIGHT, JPEG_WIDTH, "gray"))
    assert decoded > 20 and refused > 20, (decoded, refused)


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_the_interpreter_decodes_the_suites_jpeg(target):
    """The node suite's 32 x 32 4:2:0 JPEG through the lowered module on the uop interpreter
    (image.decode_jpeg's Python reference): onnx's expected RGB and Grayscale outputs."""
    from onnx.backend.test.case.node import _image_decoder_data as suite

    from zant.driver import compile_to_module
    from zant.interpreter import graph_functions, run_defined

    data = np.asarray(suite.image_decoder_decode_jpeg_rgb.data, np.uint8)
    planned = compile_to_module(_model(32, 32, data.size, ("RGB", "Grayscale")), target)
    assert "image.decode_jpeg" in str(planned.module)
    (function,) = graph_functions(planned.module)
    (rgb, gray), defined = run_defined(function, [data])
    assert all(mask.all() for mask in defined)
    np.testing.assert_array_equal(rgb, np.asarray(suite.image_decoder_decode_jpeg_rgb.output).ravel())
    np.testing.assert_array_equal(gray, np.asarray(suite.image_decoder_decode_jpeg_grayscale.output).ravel())
