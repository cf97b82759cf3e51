"""The system's libwebp (libwebp.so.7, a Debian package of the machine, not a dependency of Zant)
through ctypes, for tests that compare the WebP decoder with it and for tests/data/webp/make_webps.py.

`encode(rgb, quality, **settings)` writes a WebP with WebPEncode, `settings` being WebPConfig fields
over the default preset (filter_type=0 the simple loop filter, partitions=2 four token
partitions, lossless=1 a VP8L file ...); an RGBA image with alpha below 255 gives an extended
('VP8X') file. `decode(data)` is WebPDecodeRGB: libwebp's default fancy upsampling, which PIL shows.
`available()` says whether the library loads.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

import numpy as np

ABI = 0x0200  # major version 2 of the encoder ABI: libwebp checks the major byte only


class _Config(ctypes.Structure):
    _fields_ = [
        ("lossless", ctypes.c_int), ("quality", ctypes.c_float), ("method", ctypes.c_int), ("image_hint", ctypes.c_int),
        ("target_size", ctypes.c_int), ("target_PSNR", ctypes.c_float),
        *((name, ctypes.c_int) for name in (
            "segments", "sns_strength", "filter_strength", "filter_sharpness", "filter_type", "autofilter",
            "alpha_compression", "alpha_filtering", "alpha_quality", "pass", "show_compressed", "preprocessing",
            "partitions", "partition_limit", "emulate_jpeg_size", "thread_level", "low_memory", "near_lossless",
            "exact", "use_delta_palette", "use_sharp_yuv", "qmin", "qmax")),
        ("_room", ctypes.c_int * 16),  # fields a later libwebp may add
    ]


class _Picture(ctypes.Structure):
    _fields_ = [
        ("use_argb", ctypes.c_int), ("colorspace", ctypes.c_int), ("width", ctypes.c_int), ("height", ctypes.c_int),
        ("y", ctypes.c_void_p), ("u", ctypes.c_void_p), ("v", ctypes.c_void_p), ("y_stride", ctypes.c_int),
        ("uv_stride", ctypes.c_int), ("a", ctypes.c_void_p), ("a_stride", ctypes.c_int), ("pad1", ctypes.c_uint32 * 2),
        ("argb", ctypes.c_void_p), ("argb_stride", ctypes.c_int), ("pad2", ctypes.c_uint32 * 3),
        ("writer", ctypes.c_void_p), ("custom_ptr", ctypes.c_void_p), ("extra_info_type", ctypes.c_int),
        ("extra_info", ctypes.c_void_p), ("stats", ctypes.c_void_p), ("error_code", ctypes.c_int),
        ("progress_hook", ctypes.c_void_p), ("user_data", ctypes.c_void_p), ("pad3", ctypes.c_uint32 * 3),
        ("pad4", ctypes.c_void_p), ("pad5", ctypes.c_void_p), ("pad6", ctypes.c_uint32 * 8),
        ("memory_", ctypes.c_void_p), ("memory_argb_", ctypes.c_void_p), ("pad7", ctypes.c_void_p * 2),
        ("_room", ctypes.c_uint8 * 256),
    ]


class _MemoryWriter(ctypes.Structure):
    _fields_ = [("mem", ctypes.c_void_p), ("size", ctypes.c_size_t), ("max_size", ctypes.c_size_t), ("pad", ctypes.c_uint32 * 8)]


@cache
def _lib() -> ctypes.CDLL | None:
    for name in (ctypes.util.find_library("webp"), "libwebp.so.7"):
        if name:
            try:
                return ctypes.CDLL(name)
            except OSError:
                pass
    return None


def available() -> bool:
    return _lib() is not None


def encode(pixels: np.ndarray, quality: float = 75, **settings) -> bytes:
    """`pixels` ([H, W, 3] RGB or [H, W, 4] RGBA, uint8) as a WebP."""
    lib = _lib()
    assert lib is not None, "libwebp is not installed"
    height, width, channels = pixels.shape
    config = _Config()
    assert lib.WebPConfigInitInternal(ctypes.byref(config), 0, ctypes.c_float(quality), ABI)
    for name, value in settings.items():
        setattr(config, name, value)
    assert lib.WebPValidateConfig(ctypes.byref(config)), settings
    picture = _Picture()
    assert lib.WebPPictureInitInternal(ctypes.byref(picture), ABI)
    picture.width, picture.height = width, height
    picture.use_argb = int(bool(config.lossless))
    rows = np.ascontiguousarray(pixels, np.uint8)
    load = lib.WebPPictureImportRGBA if channels == 4 else lib.WebPPictureImportRGB
    assert load(ctypes.byref(picture), rows.ctypes.data_as(ctypes.c_void_p), channels * width)
    writer = _MemoryWriter()
    lib.WebPMemoryWriterInit(ctypes.byref(writer))
    picture.writer = ctypes.cast(lib.WebPMemoryWrite, ctypes.c_void_p).value
    picture.custom_ptr = ctypes.addressof(writer)
    ok = lib.WebPEncode(ctypes.byref(config), ctypes.byref(picture))
    data = ctypes.string_at(writer.mem, writer.size)
    lib.WebPMemoryWriterClear(ctypes.byref(writer))
    lib.WebPPictureFree(ctypes.byref(picture))
    assert ok, f"WebPEncode failed: error {picture.error_code}"
    return data


def decode(data: bytes) -> np.ndarray | None:
    """libwebp's RGB pixels of `data` ([H, W, 3]), or None when it refuses them."""
    lib = _lib()
    assert lib is not None, "libwebp is not installed"
    width, height = ctypes.c_int(), ctypes.c_int()
    lib.WebPDecodeRGB.restype = ctypes.c_void_p
    pointer = lib.WebPDecodeRGB(data, ctypes.c_size_t(len(data)), ctypes.byref(width), ctypes.byref(height))
    if not pointer:
        return None
    rgb = np.frombuffer(ctypes.string_at(pointer, width.value * height.value * 3), np.uint8)
    lib.WebPFree(ctypes.c_void_p(pointer))
    return rgb.reshape(height.value, width.value, 3).copy()
