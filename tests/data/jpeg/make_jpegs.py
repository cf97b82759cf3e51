"""Write jpegs.npz: small JPEGs Pillow encodes and the pixels Pillow (libjpeg-turbo, its default
islow IDCT and fancy upsampling) decodes them to, for tests/test_image_decoder.py.

    python tests/data/jpeg/make_jpegs.py      # needs Pillow, which Zant itself does not use

One 13 x 21 image (odd sizes: partial MCUs, an odd last chroma column and row) saved in the
ways the decoder must handle (4:2:0, 4:2:2, 4:4:4, grayscale, restart markers, optimized
Huffman tables, quality 100) and as a progressive JPEG, which it must refuse. For each name the
archive holds `NAME` (the file's bytes), `NAME_rgb` ([13, 21, 3]: Image.open().convert("RGB")) and
`NAME_gray` ([13, 21]: .convert("L"), what onnx's reference returns for Grayscale).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

HEIGHT, WIDTH = 13, 21
SAVED = {
    "420": {"subsampling": 2},
    "422_restarts": {"subsampling": 1, "restart_marker_blocks": 1},
    "444_optimized": {"subsampling": 0, "optimize": True},
    "420_quality100": {"subsampling": 2, "quality": 100},
    "gray": {"mode": "L"},
    "progressive": {"subsampling": 2, "progressive": True},
}


def main() -> None:
    rng = np.random.default_rng(29)
    ramp = np.linspace(0, 160, WIDTH)[None, :, None] + np.linspace(0, 60, HEIGHT)[:, None, None]
    pixels = np.clip(rng.integers(0, 96, (HEIGHT, WIDTH, 3)) + ramp, 0, 255).astype(np.uint8)
    arrays = {}
    for name, options in SAVED.items():
        options = dict(options)
        mode = options.pop("mode", "RGB")
        image = Image.fromarray(pixels if mode == "RGB" else pixels[..., 1], mode)
        encoded = io.BytesIO()
        image.save(encoded, format="jpeg", **options)
        data = encoded.getvalue()
        arrays[name] = np.frombuffer(data, np.uint8)
        arrays[f"{name}_rgb"] = np.array(Image.open(io.BytesIO(data)).convert("RGB"))
        arrays[f"{name}_gray"] = np.array(Image.open(io.BytesIO(data)).convert("L"))
    np.savez_compressed(Path(__file__).with_name("jpegs.npz"), **arrays)


if __name__ == "__main__":
    main()
