"""The Python API as a notebook uses it, on the digits CNN: compile for a Cortex-M4, predict on
this machine, run the firmware image under QEMU, look at the plan and the profile.

    python examples/digits/notebook.py

Only `zant.compile` and the `zant.Model` it returns (README, "Python API").
"""

from pathlib import Path

import numpy as np

import zant

HERE = Path(__file__).resolve().parent
held_out = np.load(HERE / "digits_heldout.npz")
images, labels = held_out["images"], held_out["labels"]

# Compile: the library and the firmware image of the default Cortex-M4 board.
model = zant.compile(HERE / "digits_cnn.onnx", target="cortex-m4", name="digits")
print(model)
print("artifacts:", ", ".join(f"{kind} {path.name}" for kind, path in model.paths.items()))

# On this machine: a host build of the module the M4 runs.
batch = images[:20]
predicted = [int(model.predict(image=image[None])["probabilities"].argmax()) for image in batch]
print(f"host: {sum(p == l for p, l in zip(predicted, labels[:20]))}/20 of the first images right")

# As firmware under QEMU: the same image, its outputs, one inference's cost.
on_m4 = model.run_firmware(image=images[0][None])
host = model.predict(image=images[0][None])
print(f"firmware: digit {on_m4.outputs['probabilities'].argmax()} (label {labels[0]}), "
      f"max |firmware - host| {np.abs(on_m4.outputs['probabilities'] - host['probabilities']).max():.2e}, "
      f"stack {on_m4.stack_bytes:,} B")
cost = model.cost()
print(f"one inference: {cost.describe()}")

# The plan (NAME.plan.json as a dict) and the profile (cycles per ONNX node).
arenas = {arena["role"]: arena["size"] for arena in model.plan["arenas"]}
print(f"plan: scratch {arenas['scratch']:,} B, constants {arenas['constant']:,} B, "
      f"{len(model.plan['tensors'])} tensors placed")
print(model.profile())
