"""Zant's main job, end to end, on a real model: the digits CNN trained by `train.py`.

Compiles `digits_cnn.onnx` to Zig, builds it for the host and as a Cortex-M4 firmware image
(`zant compile`'s defaults: ReleaseFast, the MCU pipeline), classifies every held-out image with
the compiled model and with the ONNX reference evaluator, and prints both accuracies and whether
the predictions agree. Where QEMU is installed, the image then classifies one held-out image on
the emulated Cortex-M4 (mps2-an386), beside the reference, with the instructions that inference
executed and its cycles (the Cortex-M4's timing model, `zant.backend.timing`); the image's flash
and RAM are printed either way.

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
    print(f"compiling {MODEL.name} as a cortex-m4 firmware image (ReleaseFast) …")
    on_m4 = 0  # the held-out image the firmware classifies
    m4 = compile_model(
        MODEL, out / "cortex-m4",
        CompileOptions(name="digits", target="cortex-m4", firmware=True, inputs={"image": images[on_m4][None]}),
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
    image = m4.firmware_sizes or {}
    print(
        f"cortex-m4 image            flash {image.get('flash', 0):,} B   static RAM {image.get('static_ram', 0):,} B   "
        f"(scratch arena {arenas.get('scratch', 0):,} B, weights {arenas.get('constant', 0):,} B)"
    )
    m4_agrees = run_on_m4(m4, reference[on_m4], labels[on_m4])
    print(f"generated code             {host.zig_path}, {host.header_path.name}, {host.plan_path.name}")
    print(f"firmware image             {m4.firmware_path}")
    return 0 if agree == len(images) and m4_agrees else 1


def run_on_m4(m4, reference: np.ndarray, label: int) -> bool:
    """Classify the embedded image on the emulated Cortex-M4; print it beside the reference.
    Returns whether the prediction agrees (True when QEMU is missing: nothing to compare)."""
    from zant.backend.firmware import measure_cost, qemu_missing, run_firmware

    missing = qemu_missing(m4.board)
    if missing:
        print(f"on the emulated cortex-m4  not run: {missing}")
        return True
    run = run_firmware(m4.firmware_path, m4.board, m4.outputs)
    got = run.outputs[0][0]
    cost = measure_cost(m4.board, m4.firmware_path)
    print(f"on the emulated cortex-m4  digit {got.argmax()} (label {label}), reference {reference.argmax()}, "
          f"max |Δ probability| {np.abs(got - reference).max():.2e}")
    print(f"                           one inference: {cost.describe()}, "
          f"stack {run.model_stack_bytes:,} B (the whole image's: {run.stack_bytes:,} B)")
    return int(got.argmax()) == int(reference.argmax())


if __name__ == "__main__":
    sys.exit(main())
