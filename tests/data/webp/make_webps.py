"""Write webps.npz: small WebPs libwebp encodes with chosen settings and the pixels libwebp decodes
them to (WebPDecodeRGB: its fancy upsampling, what PIL shows), for tests/test_image_decoder_webp.py.

    python tests/data/webp/make_webps.py      # needs the system's libwebp (tests/libwebp_ctypes.py)

One 21 x 37 image (2 x 3 macroblocks, odd sizes: partial macroblocks, an odd last chroma row and
column), a smooth gradient with noise, saved in the ways the decoder must handle: the normal and
the simple loop filter, no filter, sharpness, 1 and 4 segments, 4 and 8 token partitions, skipped
macroblocks, quality 0 and 100 (large coefficients), a noise image (4 x 4 prediction
everywhere) and an extended file with alpha ('VP8X', 'ALPH', then 'VP8 ': its colour decoded, the
alpha dropped); then a lossless file ('VP8L'), which it must refuse. For each name the archive
holds `NAME` (the file's bytes) and, for the lossy ones, `NAME_rgb` ([21, 37, 3]).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[2]))
import libwebp_ctypes  # noqa: E402

HEIGHT, WIDTH = 21, 37
SAVED = {
    "default": (75, {}),
    "simple_filter": (60, {"filter_type": 0, "filter_strength": 60}),
    "no_filter": (75, {"filter_strength": 0}),
    "sharpness_6": (40, {"filter_sharpness": 6, "filter_strength": 80}),
    "one_segment": (75, {"segments": 1, "sns_strength": 0}),
    "four_partitions": (75, {"partitions": 2}),
    "eight_partitions": (90, {"partitions": 3}),
    "quality_0": (0, {}),
    "quality_100": (100, {"method": 6}),
    "strong_noise_shaping": (50, {"sns_strength": 100, "filter_strength": 100}),
}


def image(noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH]
    base = np.stack([x * 255 / (WIDTH - 1), y * 255 / (HEIGHT - 1), (x + y) * 4 % 256], -1)
    return np.clip(base + rng.normal(0, noise, base.shape), 0, 255).astype(np.uint8)


def main() -> None:
    out: dict[str, np.ndarray] = {}
    smooth = image(12, 29)
    for name, (quality, settings) in SAVED.items():
        data = libwebp_ctypes.encode(smooth, quality, **settings)
        assert data[12:16] == b"VP8 ", name
        out[name] = np.frombuffer(data, np.uint8)
        out[f"{name}_rgb"] = libwebp_ctypes.decode(data)
    noise = np.random.default_rng(30).integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)
    data = libwebp_ctypes.encode(noise, 90)
    out["noise"], out["noise_rgb"] = np.frombuffer(data, np.uint8), libwebp_ctypes.decode(data)
    out["lossless"] = np.frombuffer(libwebp_ctypes.encode(smooth, 75, lossless=1), np.uint8)
    alpha = np.concatenate([smooth, np.full((HEIGHT, WIDTH, 1), 128, np.uint8)], -1)
    data = libwebp_ctypes.encode(alpha, 75)
    out["alpha"], out["alpha_rgb"] = np.frombuffer(data, np.uint8), libwebp_ctypes.decode(data)
    assert bytes(out["alpha"][12:16]) == b"VP8X" and bytes(out["lossless"][12:16]) == b"VP8L"
    np.savez_compressed(Path(__file__).parent / "webps.npz", **out)
    for name, array in out.items():
        if not name.endswith("_rgb"):
            print(name, array.size)


if __name__ == "__main__":
    main()
