"""Zant's main job, end to end, on a real model: the digits CNN trained by `train.py`.

Compiles `digits_cnn.onnx` to Zig, builds it for the host and for a Cortex-M4, classifies every
held-out image with the compiled model and with the ONNX reference evaluator, and prints both
accuracies, whether the predictions agree, and the Cortex-M4 build's section sizes.

    python examples/digits/demo.py [--out OUTDIR]

Exits non-zero if any prediction differs from the reference.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from zant.driver import CompileOptions, compile_model
from zant.runtime import load_compiled

HERE = Path(__file__).resolve().parent
MODEL = HERE / "digits_cnn.onnx"
HELD_OUT = HERE / "digits_heldout.npz"


def reference_probabilities(images: np.ndarray) -> np.ndarray:
    from onnx.reference import ReferenceEvaluator

    evaluator = ReferenceEvaluator(str(MODEL))
    return np.stack([evaluator.run(None, {"image": image[None]})[0][0] for image in images])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="out/digits", help="output folder (default: out/digits)")
    args = parser.parse_args()
    out = Path(args.out)

    data = np.load(HELD_OUT)
    images, labels = data["images"], data["labels"]

    print(f"compiling {MODEL.name} for the host (ReleaseFast) …")
    host = compile_model(MODEL, out / "host", CompileOptions(name="digits", optimize="ReleaseFast"))
    print(f"compiling {MODEL.name} for cortex-m4 (ReleaseSmall) …")
    m4 = compile_model(
        MODEL, out / "cortex-m4", CompileOptions(name="digits", target="cortex-m4", optimize="ReleaseSmall")
    )

    model = load_compiled(host)
    start = time.perf_counter()
    ours = np.stack([model(image[None])[0][0] for image in images])
    per_image_us = (time.perf_counter() - start) / len(images) * 1e6
    print(f"running the ONNX reference evaluator on {len(images)} images …")
    reference = reference_probabilities(images)

    ours_pred = ours.argmax(axis=1)
    ref_pred = reference.argmax(axis=1)
    agree = int((ours_pred == ref_pred).sum())
    print()
    print(f"held-out images            {len(images)}")
    print(f"accuracy, Zant (compiled)  {(ours_pred == labels).mean():.2%}   ({per_image_us:.1f} µs per image on this host)")
    print(f"accuracy, ONNX reference   {(ref_pred == labels).mean():.2%}")
    print(f"identical predictions      {agree}/{len(images)}")
    print(f"max |Δ probability|        {np.abs(ours - reference).max():.2e}")
    arenas = {a["role"]: a["size"] for a in m4.plan["arenas"]}
    sizes = m4.sizes or {}
    print(
        f"cortex-m4 ReleaseSmall     .text {sizes.get('.text', 0):,} B   .rodata {sizes.get('.rodata', 0):,} B   "
        f".data {sizes.get('.data', 0):,} B   .bss {sizes.get('.bss', 0):,} B   "
        f"(scratch arena {arenas.get('scratch', 0):,} B, weights {arenas.get('constant', 0):,} B)"
    )
    print(f"generated code             {host.zig_path}, {host.header_path.name}, {host.plan_path.name}")
    return 0 if agree == len(images) else 1


if __name__ == "__main__":
    sys.exit(main())
