"""ImageDecoder of lossy WebP (image.decode_webp, dialects/image_webp.zig).

A 21 x 37 model of three ImageDecoder nodes (RGB, BGR, Grayscale) on one run-time input of 1,920
bytes, compiled once for the host in ReleaseSafe (an out-of-bounds access or an integer overflow
traps and kills the process), decodes the WebPs of tests/data/webp/webps.npz (libwebp-encoded
with the loop filters, partitions, segments and qualities the decoder must handle, and an
extended file with alpha) to exactly the pixels libwebp decodes them to, and an extended file
with metadata chunks; it refuses lossless and animated files and malformed ones. Cut
and corrupted files never trap: they are refused with the outputs untouched, or decode to what
the Python reference (zant.dialects.image_reference_webp) gives. The node suite's 32 x 32 WebP is
checked through the uop interpreter on the host and Cortex-M4 pipelines (its compiled form in
all four columns of `zant conformance --filter image_decoder`). Where the system's libwebp loads,
random images with random settings are also checked against it.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import libwebp_ctypes
from zant.dialects.abi import Status
from zant.dialects.image_reference_webp import decode_webp
from zant.driver import CompileOptions, compile_model

WEBPS = np.load(Path(__file__).parent / "data" / "webp" / "webps.npz")
HEIGHT, WIDTH = WEBPS["default_rgb"].shape[:2]
SIZE = 1920  # the largest file (lossless) is 1,862 bytes; the others are zero-padded
SENTINEL = 0xA5
DECODED = (
    "default", "simple_filter", "no_filter", "sharpness_6", "one_segment", "four_partitions", "eight_partitions",
    "quality_0", "quality_100", "strong_noise_shaping", "noise", "alpha",
)


def luma(rgb: np.ndarray) -> np.ndarray:
    """PIL's convert("L"), onnx's Grayscale: (19595 R + 38470 G + 7471 B + 2^15) >> 16."""
    r, g, b = (rgb[..., k].astype(np.int64) for k in range(3))
    return ((19595 * r + 38470 * g + 7471 * b + 32768) >> 16).astype(np.uint8)[..., None]


def webp(name: str) -> bytes:
    return WEBPS[name].tobytes().ljust(SIZE, b"\0")


def _model(height: int, width: int, size: int, formats=("RGB", "BGR", "Grayscale")) -> onnx.ModelProto:
    nodes = [helper.make_node("ImageDecoder", ["data"], [f.lower()], pixel_format=f) for f in formats]
    outputs = [
        helper.make_tensor_value_info(f.lower(), TensorProto.UINT8, [height, width, 1 if f == "Grayscale" else 3]) for f in formats
    ]
    graph = helper.make_graph(nodes, "decode", [helper.make_tensor_value_info("data", TensorProto.UINT8, [size])], outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


@pytest.fixture(scope="module")
def predict(tmp_path_factory):
    """`run(bytes) -> (status, rgb, bgr, gray)` of the three-node model built for the host."""
    folder = tmp_path_factory.mktemp("webp")
    onnx.save(_model(HEIGHT, WIDTH, SIZE), folder / "model.onnx")
    # Only the WebP decoder (`--image-formats webp`): the model builds in half the time.
    options = CompileOptions(name="m", optimize="ReleaseSafe", image_formats=("webp",))
    result = compile_model(folder / "model.onnx", folder / "out", options)
    assert "zant_webp_decode" in result.zig_path.read_text() and "zant_jpeg_decode" not in result.zig_path.read_text()
    function = ctypes.CDLL(str(result.library_path)).m_predict
    function.restype = ctypes.c_int32

    def run(encoded: bytes):
        data = np.frombuffer(encoded.ljust(SIZE, b"\0"), np.uint8).copy()
        rgb, bgr = (np.full((HEIGHT, WIDTH, 3), SENTINEL, np.uint8) for _ in range(2))
        gray = np.full((HEIGHT, WIDTH, 1), SENTINEL, np.uint8)
        status = function(*(ctypes.c_void_p(a.ctypes.data) for a in (data, rgb, bgr, gray)))
        return status, rgb, bgr, gray

    return run


@pytest.mark.parametrize("name", DECODED)
def test_decodes_webps_as_libwebp(predict, name):
    status, rgb, bgr, gray = predict(webp(name))
    assert status == 0
    np.testing.assert_array_equal(rgb, WEBPS[f"{name}_rgb"])
    np.testing.assert_array_equal(bgr, WEBPS[f"{name}_rgb"][:, :, ::-1])
    np.testing.assert_array_equal(gray, luma(WEBPS[f"{name}_rgb"]))


def _patched(name: str, offset: int, value: bytes) -> bytes:
    data = bytearray(WEBPS[name].tobytes())
    data[offset : offset + len(value)] = value
    return bytes(data)


def _first_partition_end(name: str) -> int:
    frame = WEBPS[name].tobytes()[20:]
    return 20 + 10 + (int.from_bytes(frame[:3], "little") >> 5)


REFUSED = {
    "lossless": lambda: webp("lossless"),
    "animated": lambda: _patched("alpha", 20, bytes([int(WEBPS["alpha"][20]) | 0x02])),
    "extended_canvas_of_another_width": lambda: _patched("alpha", 24, (WIDTH - 2).to_bytes(3, "little")),
    "extended_chunk_past_the_end": lambda: _patched("alpha", 34, (1 << 20).to_bytes(4, "little")),
    "other_width": lambda: _patched("default", 26, (WIDTH - 1).to_bytes(2, "little")),
    "other_height": lambda: _patched("default", 28, (HEIGHT + 16).to_bytes(2, "little")),
    "inter_frame": lambda: _patched("default", 20, bytes([int(WEBPS["default"][20]) | 1])),
    "invisible_frame": lambda: _patched("default", 20, bytes([int(WEBPS["default"][20]) & 0xEF])),
    "bad_start_code": lambda: _patched("default", 23, b"\x9d\x01\x2b"),
    "riff_size_past_the_end": lambda: _patched("default", 4, (SIZE).to_bytes(4, "little")),
    "chunk_size_past_the_riff": lambda: _patched("default", 16, (WEBPS["default"].size - 19).to_bytes(4, "little")),
    "first_partition_past_the_chunk": lambda: _patched("default", 20, b"\xf0\xff\xff"),
    "not_riff": lambda: _patched("default", 0, b"RIFX"),
    # A boolean-coded partition never starts with 255 (the value must start below the range).
    "token_partition_starting_0xff": lambda: _patched("one_segment", _first_partition_end("one_segment"), b"\xff"),
}


@pytest.mark.parametrize("name", REFUSED)
def test_refuses_webps_without_writing(predict, name):
    status, *outputs = predict(REFUSED[name]())
    assert status == Status.OUTPUT_SIZE
    assert all(np.all(o == SENTINEL) for o in outputs)


def _chunk(tag: bytes, body: bytes) -> bytes:
    return tag + len(body).to_bytes(4, "little") + body + b"\0" * (len(body) % 2)


def test_decodes_an_extended_webp_with_metadata_chunks(predict):
    """'VP8X' (ICC and EXIF flags), an ICCP chunk of odd size (its pad byte) and an EXIF chunk,
    then the 'VP8 ' chunk of the default file: its pixels, as libwebp gives them."""
    canvas = bytes([0x28, 0, 0, 0]) + (WIDTH - 1).to_bytes(3, "little") + (HEIGHT - 1).to_bytes(3, "little")
    body = b"WEBP" + _chunk(b"VP8X", canvas) + _chunk(b"ICCP", b"icc!x") + _chunk(b"EXIF", b"exif") + WEBPS["default"].tobytes()[12:]
    status, rgb, _, gray = predict(b"RIFF" + len(body).to_bytes(4, "little") + body)
    assert status == 0
    np.testing.assert_array_equal(rgb, WEBPS["default_rgb"])
    np.testing.assert_array_equal(gray, luma(WEBPS["default_rgb"]))


def _agrees_with_the_reference(predict, data: bytes) -> bool:
    """Compiled and reference agree (status, pixels); returns whether the bytes decoded."""
    status, rgb, bgr, gray = predict(data)
    want = decode_webp(data.ljust(SIZE, b"\0"), HEIGHT, WIDTH, "rgb")
    if want is None:
        assert status == Status.OUTPUT_SIZE
        assert all(np.all(o == SENTINEL) for o in (rgb, bgr, gray))
        return False
    assert status == 0
    np.testing.assert_array_equal(rgb, want)
    np.testing.assert_array_equal(gray, luma(want))
    return True


def _resized(data: bytes) -> bytes:
    """`data` (a cut file) with its RIFF and 'VP8 ' sizes rewritten to its length."""
    out = bytearray(data)
    if len(out) >= 8:
        out[4:8] = (len(out) - 8).to_bytes(4, "little")
    if len(out) >= 20:
        out[16:20] = (len(out) - 20).to_bytes(4, "little")
    return bytes(out)


def test_every_cut_of_a_webp_is_refused_or_agrees_with_the_reference(predict):
    """Every prefix of a 4-partition file, with its RIFF and chunk sizes rewritten to the cut (so
    the partitions run short) and zero-padded as it is (its sizes still claiming the whole file,
    so the zeros are read as its data): no trap, each refused with the outputs untouched or
    decoded to the reference's pixels. A cut file is refused unless only its last bytes are
    missing (the boolean decoder had read them as zeros already); a zero-padded one is refused
    while its frame header is cut, and otherwise decodes the zeros as the reference does."""
    original = WEBPS["four_partitions"].tobytes()
    cut, padded = [], []
    for length in range(len(original)):
        if _agrees_with_the_reference(predict, _resized(original[:length])):
            cut.append(length)
        if _agrees_with_the_reference(predict, original[:length]):
            padded.append(length)
    assert min(cut, default=len(original)) >= len(original) - 4, cut
    # The frame header ends at byte 30; its last byte (the height's high byte) is 0 for 21 rows,
    # which the padding supplies.
    assert min(padded, default=len(original)) == 29, padded


def test_corrupted_webps_give_what_the_reference_gives(predict):
    """450 seeded corruptions (1 to 3 bits flipped) of three files: the compiled decoder and the
    Python reference agree on every status and pixel; some still decode, some are refused."""
    rng = np.random.default_rng(29)
    outcomes = []
    for name in ("default", "eight_partitions", "alpha"):
        original = WEBPS[name].tobytes()
        for _ in range(150):
            data = bytearray(original)
            for at in rng.integers(0, len(original), int(rng.integers(1, 4))):
                data[at] ^= 1 << int(rng.integers(0, 8))
            outcomes.append(_agrees_with_the_reference(predict, bytes(data)))
    assert 20 < sum(outcomes) < len(outcomes) - 20, sum(outcomes)


@pytest.mark.skipif(not libwebp_ctypes.available(), reason="the system's libwebp (libwebp.so.7) is not installed")
def test_random_webps_decode_as_libwebp(predict):
    """40 random images (smooth, noisy, flat) with random qualities and settings, encoded and
    decoded by the system's libwebp: the compiled decoder gives its pixels byte for byte."""
    rng = np.random.default_rng(6386)
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH]
    for _ in range(40):
        kind = int(rng.integers(0, 3))
        if kind == 0:
            pixels = rng.integers(0, 256, (HEIGHT, WIDTH, 3))
        else:
            base = np.stack([x * rng.integers(1, 12), y * rng.integers(1, 12), (x * y) % 256], -1)
            pixels = base + (rng.normal(0, 30, base.shape) if kind == 1 else 0)
        settings = {
            "filter_type": int(rng.integers(0, 2)), "filter_strength": int(rng.integers(0, 101)),
            "filter_sharpness": int(rng.integers(0, 8)), "partitions": int(rng.integers(0, 4)),
            "segments": int(rng.integers(1, 5)), "sns_strength": int(rng.integers(0, 101)), "method": int(rng.integers(0, 7)),
        }
        data = libwebp_ctypes.encode(np.clip(pixels, 0, 255).astype(np.uint8), float(rng.integers(0, 101)), **settings)
        status, rgb, _, _ = predict(data)
        assert status == 0, settings
        np.testing.assert_array_equal(rgb, libwebp_ctypes.decode(data), err_msg=str(settings))


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_the_interpreter_decodes_the_suites_webp(target):
    """The node suite's 32 x 32 WebP through the lowered module on the uop interpreter (the image
    dialect's Python reference): onnx's expected RGB, and Grayscale as PIL's luma of it."""
    from onnx.backend.test.case.node import _image_decoder_data as suite

    from zant.driver import compile_to_module
    from zant.interpreter import graph_functions, run_defined

    case = suite.image_decoder_decode_webp_rgb
    data, expected = np.asarray(case.data, np.uint8), np.asarray(case.output, np.uint8)
    planned = compile_to_module(_model(32, 32, data.size, ("RGB", "Grayscale")), target)
    assert "image.decode_webp" in str(planned.module)
    (function,) = graph_functions(planned.module)
    (rgb, gray), defined = run_defined(function, [data])
    assert all(mask.all() for mask in defined)
    np.testing.assert_array_equal(rgb, expected.ravel())
    np.testing.assert_array_equal(gray, luma(expected).ravel())
