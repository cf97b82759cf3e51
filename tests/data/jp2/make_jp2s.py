"""Writes jp2s.npz: JPEG 2000 test images encoded with OpenJPEG (the library PIL decodes with) and
the pixels OpenJPEG decodes them to. Run once where libopenjp2 is installed
(`python tests/data/jp2/make_jp2s.py`); the tests read the .npz only.

Each entry NAME holds the encoded bytes (uint8) and NAME_pixels the decoded samples
([H, W, components], uint8). The images (a 13 x 21 picture with edges, gradients and noise, as
tests/data/jpeg's) exercise what the node suite's one file does not: one component, the five
progression orders, precincts, several code blocks, tiles, image and tile offsets, SOP/EPH
markers, the reset and segmentation-symbol code-block styles, a bare J2K codestream, no colour
transform (the others use the reversible one, RCT, as PIL asks for), the irreversible 9/7 wavelet
with ICT (lossless-rate and at a compression ratio of 8, whose code blocks end early), a 5/3 file
at ratio 4; and tile-parts, two quality layers and arithmetic bypass, which the decoder refuses.
"""

from __future__ import annotations

import ctypes
import tempfile
from pathlib import Path

import numpy as np

HEIGHT, WIDTH = 13, 21
LIB = ctypes.CDLL("libopenjp2.so.7")


class Poc(ctypes.Structure):
    _fields_ = [("u", ctypes.c_uint32 * 8), ("prg", ctypes.c_int * 2), ("progorder", ctypes.c_char * 5),
                ("rest", ctypes.c_uint32 * 25)]


class CParameters(ctypes.Structure):
    _fields_ = [
        ("tile_size_on", ctypes.c_int), ("cp_tx0", ctypes.c_int), ("cp_ty0", ctypes.c_int), ("cp_tdx", ctypes.c_int),
        ("cp_tdy", ctypes.c_int), ("cp_disto_alloc", ctypes.c_int), ("cp_fixed_alloc", ctypes.c_int),
        ("cp_fixed_quality", ctypes.c_int), ("cp_matrice", ctypes.c_void_p), ("cp_comment", ctypes.c_char_p),
        ("csty", ctypes.c_int), ("prog_order", ctypes.c_int), ("POC", Poc * 32), ("numpocs", ctypes.c_uint32),
        ("tcp_numlayers", ctypes.c_int), ("tcp_rates", ctypes.c_float * 100), ("tcp_distoratio", ctypes.c_float * 100),
        ("numresolution", ctypes.c_int), ("cblockw_init", ctypes.c_int), ("cblockh_init", ctypes.c_int), ("mode", ctypes.c_int),
        ("irreversible", ctypes.c_int), ("roi_compno", ctypes.c_int), ("roi_shift", ctypes.c_int), ("res_spec", ctypes.c_int),
        ("prcw_init", ctypes.c_int * 33), ("prch_init", ctypes.c_int * 33), ("infile", ctypes.c_char * 4096),
        ("outfile", ctypes.c_char * 4096), ("index_on", ctypes.c_int), ("index", ctypes.c_char * 4096),
        ("image_offset_x0", ctypes.c_int), ("image_offset_y0", ctypes.c_int), ("subsampling", ctypes.c_int * 2),
        ("formats", ctypes.c_int * 2), ("jpwl", ctypes.c_int * (2 + 5 * 16 + 4 + 2 * 16)), ("cp_cinema", ctypes.c_int),
        ("max_comp_size", ctypes.c_int), ("cp_rsiz", ctypes.c_int), ("tp_on", ctypes.c_char), ("tp_flag", ctypes.c_char),
        ("tcp_mct", ctypes.c_char), ("rest", ctypes.c_byte * 65536),
    ]


class CmptParm(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint32) for n in ("dx", "dy", "w", "h", "x0", "y0", "prec", "bpp", "sgnd")]


class Comp(ctypes.Structure):
    _fields_ = [*[(n, ctypes.c_uint32) for n in ("dx", "dy", "w", "h", "x0", "y0", "prec", "bpp", "sgnd", "resno_decoded", "factor")],
                ("data", ctypes.POINTER(ctypes.c_int32)), ("alpha", ctypes.c_uint16)]


class Image(ctypes.Structure):
    _fields_ = [*[(n, ctypes.c_uint32) for n in ("x0", "y0", "x1", "y1", "numcomps")], ("color_space", ctypes.c_int),
                ("comps", ctypes.POINTER(Comp)), ("icc_profile_buf", ctypes.c_void_p), ("icc_profile_len", ctypes.c_uint32)]


LIB.opj_image_create.restype = ctypes.POINTER(Image)
LIB.opj_create_compress.restype = ctypes.c_void_p
LIB.opj_create_decompress.restype = ctypes.c_void_p
LIB.opj_stream_create_default_file_stream.restype = ctypes.c_void_p
for name in ("opj_setup_encoder", "opj_start_compress", "opj_encode", "opj_end_compress", "opj_setup_decoder",
             "opj_read_header", "opj_decode", "opj_end_decompress", "opj_stream_destroy", "opj_destroy_codec"):
    getattr(LIB, name).argtypes = None
J2K, JP2 = 0, 2


def picture(components: int) -> np.ndarray:
    rng = np.random.default_rng(2000)
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH]
    base = np.stack([x * 12, y * 19, (x + y) * 7], -1) % 256
    base[4:9, 6:15] = (250, 30, 90)
    noisy = np.clip(base + rng.integers(-40, 41, base.shape), 0, 255).astype(np.uint8)
    return noisy[..., :components] if components < 3 else noisy


def encode(pixels: np.ndarray, codec: int = JP2, offset=(0, 0), **settings) -> bytes:
    h, w, n = pixels.shape
    parms = (CmptParm * n)()
    for c in range(n):
        parms[c].dx = parms[c].dy = 1
        parms[c].w, parms[c].h, parms[c].x0, parms[c].y0 = w, h, offset[0], offset[1]
        parms[c].prec, parms[c].bpp, parms[c].sgnd = 8, 8, 0
    image = LIB.opj_image_create(n, parms, 1 if n >= 3 else 2)
    im = image.contents
    im.x0, im.y0, im.x1, im.y1 = offset[0], offset[1], offset[0] + w, offset[1] + h
    for c in range(n):
        ctypes.memmove(im.comps[c].data, pixels[..., c].astype(np.int32).tobytes(), 4 * w * h)
    p = CParameters()
    LIB.opj_set_default_encoder_parameters(ctypes.byref(p))
    p.tcp_numlayers, p.tcp_rates[0], p.cp_disto_alloc = 1, 0.0, 1
    p.numresolution = 4  # 3 levels: 2^3 <= 13 rows
    p.tcp_mct = b"\1" if n >= 3 else b"\0"  # the reversible colour transform, as PIL asks for RGB
    for key, value in settings.items():
        if key == "precincts":
            p.csty |= 1
            p.res_spec = len(value)
            for k, (pw, ph) in enumerate(value):
                p.prcw_init[k], p.prch_init[k] = pw, ph
        elif key == "tiles":
            p.tile_size_on, p.cp_tdx, p.cp_tdy = 1, value[0], value[1]
            if len(value) == 4:
                p.cp_tx0, p.cp_ty0 = value[2], value[3]
        elif key == "rates":
            p.tcp_numlayers = len(value)
            for k, r in enumerate(value):
                p.tcp_rates[k] = r
        else:
            setattr(p, key, value)
    c = LIB.opj_create_compress(codec)
    assert LIB.opj_setup_encoder(ctypes.c_void_p(c), ctypes.byref(p), image)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "x").encode()
        stream = LIB.opj_stream_create_default_file_stream(path, 0)
        assert LIB.opj_start_compress(ctypes.c_void_p(c), image, ctypes.c_void_p(stream))
        assert LIB.opj_encode(ctypes.c_void_p(c), ctypes.c_void_p(stream))
        assert LIB.opj_end_compress(ctypes.c_void_p(c), ctypes.c_void_p(stream))
        LIB.opj_stream_destroy(ctypes.c_void_p(stream))
        LIB.opj_destroy_codec(ctypes.c_void_p(c))
        LIB.opj_image_destroy(image)
        return Path(path.decode()).read_bytes()


def decode(data: bytes) -> np.ndarray:
    """OpenJPEG's samples of `data`, as PIL reads them ([H, W, components])."""
    codec = JP2 if data[:4] == b"\0\0\0\x0c" else J2K
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x"
        path.write_bytes(data)
        stream = LIB.opj_stream_create_default_file_stream(str(path).encode(), 1)
        c = LIB.opj_create_decompress(codec)
        params = ctypes.create_string_buffer(65536)
        LIB.opj_set_default_decoder_parameters(params)
        assert LIB.opj_setup_decoder(ctypes.c_void_p(c), params)
        image = ctypes.POINTER(Image)()
        assert LIB.opj_read_header(ctypes.c_void_p(stream), ctypes.c_void_p(c), ctypes.byref(image))
        assert LIB.opj_decode(ctypes.c_void_p(c), ctypes.c_void_p(stream), image)
        LIB.opj_end_decompress(ctypes.c_void_p(c), ctypes.c_void_p(stream))
        im = image.contents
        planes = [np.ctypeslib.as_array(im.comps[k].data, (im.comps[k].h, im.comps[k].w)).copy() for k in range(im.numcomps)]
        LIB.opj_stream_destroy(ctypes.c_void_p(stream))
        LIB.opj_destroy_codec(ctypes.c_void_p(c))
        LIB.opj_image_destroy(image)
    return np.stack(planes, -1).astype(np.uint8)


IMAGES = {
    "rgb": lambda: encode(picture(3)),
    "gray": lambda: encode(picture(1)),
    "j2k": lambda: encode(picture(3), J2K),
    "rlcp": lambda: encode(picture(3), prog_order=1),
    "rpcl_precincts": lambda: encode(picture(3), prog_order=2, precincts=[(4, 4), (4, 4), (8, 8)], numresolution=3),
    "pcrl_precincts": lambda: encode(picture(3), prog_order=3, precincts=[(4, 8), (4, 4), (8, 4)], numresolution=3),
    "cprl_precincts": lambda: encode(picture(3), prog_order=4, precincts=[(4, 4), (8, 8), (16, 16), (32, 32)], numresolution=4),
    "lrcp_precincts_sop_eph": lambda: encode(picture(3), precincts=[(8, 8), (8, 8)], numresolution=2, csty=6),
    "blocks_4x8": lambda: encode(picture(3), cblockw_init=4, cblockh_init=8, numresolution=2),
    "tiles": lambda: encode(picture(3), tiles=(8, 5), numresolution=3),
    "tiles_offset": lambda: encode(picture(3), offset=(5, 3), tiles=(7, 6, 2, 1), numresolution=3),
    "one_level_odd_offset": lambda: encode(picture(1), offset=(3, 7), numresolution=2),
    "reset_segsym": lambda: encode(picture(3), mode=2 | 32 | 16),
    "no_levels": lambda: encode(picture(3), numresolution=1),
    "no_mct": lambda: encode(picture(3), tcp_mct=b"\0"),
    "irreversible": lambda: encode(picture(3), irreversible=1),
    "irreversible_gray": lambda: encode(picture(1), irreversible=1),
    "irreversible_tiles_offset": lambda: encode(picture(3), irreversible=1, offset=(5, 3), tiles=(7, 6, 2, 1), numresolution=3),
    "irreversible_odd_offset": lambda: encode(picture(1), irreversible=1, offset=(3, 7), numresolution=2),
    "irreversible_no_levels": lambda: encode(picture(3), irreversible=1, numresolution=1),
    "irreversible_cprl_precincts": lambda: encode(picture(3), irreversible=1, prog_order=4, precincts=[(4, 4), (8, 8), (16, 16), (32, 32)]),
    "irreversible_ratio_8": lambda: encode(picture(3), irreversible=1, rates=[8.0]),
    "reversible_ratio_4": lambda: encode(picture(3), rates=[4.0]),
    "tile_parts": lambda: encode(picture(3), tp_on=b"\1", tp_flag=b"R"),
    "two_layers": lambda: encode(picture(3), rates=[20.0, 0.0]),
    "bypass": lambda: encode(picture(3), mode=1),
}
REFUSED = ("tile_parts", "two_layers", "bypass")
"""Encodings the decoder refuses: a tile in several tile-parts, two quality layers, arithmetic
bypass."""

if __name__ == "__main__":
    arrays = {}
    for name, make in IMAGES.items():
        data = make()
        arrays[name] = np.frombuffer(data, np.uint8)
        arrays[f"{name}_pixels"] = decode(data)
        print(name, len(data), arrays[f"{name}_pixels"].shape)
    np.savez_compressed(Path(__file__).parent / "jp2s.npz", **arrays)
