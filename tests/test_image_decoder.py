"""ImageDecoder of uncompressed images (24-bit BMP, binary PPM) compiled for the declared shape.

One model (two ImageDecoder nodes, RGB and BGR, on one run-time input of 102 bytes) is compiled
once (host, ReleaseSafe: an out-of-bounds read traps and kills the process) and called through
ctypes with images encoded here: BMPs bottom-up and top-down with padded rows, PPMs with
comments and odd whitespace, all padded to the same size. Bytes that are not such an image of
the compiled shape make `m_predict` return Status.OUTPUT_SIZE and leave the outputs as they were.
"""

from __future__ import annotations

import ctypes
import struct

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
    nodes = [
        helper.make_node("ImageDecoder", ["data"], ["rgb"], pixel_format="RGB"),
        helper.make_node("ImageDecoder", ["data"], ["bgr"], pixel_format="BGR"),
    ]
    graph = helper.make_graph(
        nodes, "decode",
        [helper.make_tensor_value_info("data", TensorProto.UINT8, [SIZE])],
        [helper.make_tensor_value_info(n, TensorProto.UINT8, [HEIGHT, WIDTH, 3]) for n in ("rgb", "bgr")],
    )
    folder = tmp_path_factory.mktemp("image")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), folder / "model.onnx")
    result = compile_model(folder / "model.onnx", folder / "out", CompileOptions(name="m", optimize="ReleaseSafe"))
    function = ctypes.CDLL(str(result.library_path)).m_predict
    function.restype = ctypes.c_int32

    def run(encoded: bytes) -> tuple[int, np.ndarray, np.ndarray]:
        assert len(encoded) == SIZE, len(encoded)
        data = np.frombuffer(encoded, np.uint8).copy()
        rgb, bgr = (np.full((HEIGHT, WIDTH, 3), SENTINEL, np.uint8) for _ in range(2))
        status = function(*(ctypes.c_void_p(a.ctypes.data) for a in (data, rgb, bgr)))
        return status, rgb, bgr

    return run


DECODED = {
    "bmp_bottom_up": lambda: bmp(PIXELS),
    "bmp_top_down": lambda: bmp(PIXELS, top_down=True),
    "ppm_comment_and_whitespace": lambda: ppm(PIXELS, padded_header("P6\n5\t 3\r\n# maxval next\n255\n")),
    # The pixels start right after the header; bytes after them are not read.
    "ppm_trailing_bytes": lambda: ppm(PIXELS, padded_header("P6 5 3 255\n", SIZE - 4)) + b"tail",
}


@pytest.mark.parametrize("name", DECODED)
def test_decodes_rgb_and_bgr(predict, name):
    status, rgb, bgr = predict(DECODED[name]())
    assert status == 0
    np.testing.assert_array_equal(rgb, PIXELS)
    np.testing.assert_array_equal(bgr, PIXELS[:, :, ::-1])


REFUSED = {
    "other_width": lambda: bmp(PIXELS[:, :4]) + bytes(12),  # a 4-wide image, padded to SIZE
    "pixels_past_the_end": lambda: bmp(PIXELS, offset=58),
    "32_bit_bmp": lambda: bmp(PIXELS, bpp=32),
    "compressed_bmp": lambda: bmp(PIXELS, compression=1),
    "ppm_other_height": lambda: ppm(PIXELS, padded_header("P6 5 2 255\n")),
    "ppm_16_bit": lambda: ppm(PIXELS, padded_header("P6 5 3 65535\n")),
    "ppm_stray_byte": lambda: ppm(PIXELS, padded_header("P6 5 3x 255\n")),
    "ascii_ppm": lambda: ppm(PIXELS, padded_header("P6 5 3 255\n")).replace(b"P6", b"P3", 1),
    "jpeg": lambda: b"\xff\xd8\xff\xe0" + bytes(SIZE - 4),
}


@pytest.mark.parametrize("name", REFUSED)
def test_refuses_other_images_without_writing(predict, name):
    status, rgb, bgr = predict(REFUSED[name]())
    assert status == Status.OUTPUT_SIZE
    assert np.all(rgb == SENTINEL) and np.all(bgr == SENTINEL)


def test_grayscale_is_refused_naming_the_node(tmp_path):
    node = helper.make_node("ImageDecoder", ["data"], ["gray"], name="decode", pixel_format="Grayscale")
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("data", TensorProto.UINT8, [SIZE])],
        [helper.make_tensor_value_info("gray", TensorProto.UINT8, [HEIGHT, WIDTH, 1])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), tmp_path / "model.onnx")
    with pytest.raises(ZantError, match=r"node 'decode' \(onnx.ImageDecoder\): pixel_format 'Grayscale' \(RGB and BGR are supported\)"):
        compile_model(tmp_path / "model.onnx", tmp_path / "out", CompileOptions(name="m", build=False))
