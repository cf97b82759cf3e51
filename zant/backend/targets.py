"""The compilation targets: each name's Zig target triple and CPU flags.

At the bottom of the backend: the board definitions (`boards.py`), the builder (`build.py`) and the
limits (`limits.py`) all read it.
"""

from __future__ import annotations

TARGETS: dict[str, tuple[str, ...]] = {
    "host": (),
    "cortex-m0plus": ("-target", "thumb-freestanding-eabi", "-mcpu", "cortex_m0plus"),
    "cortex-m3": ("-target", "thumb-freestanding-eabi", "-mcpu", "cortex_m3"),
    "cortex-m4": ("-target", "thumb-freestanding-eabihf", "-mcpu", "cortex_m4+vfp4d16sp"),
    "cortex-m7": ("-target", "thumb-freestanding-eabihf", "-mcpu", "cortex_m7+fp_armv8d16"),
    "cortex-m33": ("-target", "thumb-freestanding-eabihf", "-mcpu", "cortex_m33+fp_armv8d16sp+dsp"),
    "cortex-m55": ("-target", "thumb-freestanding-eabihf", "-mcpu", "cortex_m55+mve_fp+fp_armv8d16"),
    "riscv32": ("-target", "riscv32-freestanding-none", "-mcpu", "generic_rv32+m+f+c"),
}
"""Target name → Zig target flags (`host` builds for the machine running Zant). Zig's Cortex-M CPU
models leave the optional FPU out, so the FPU each core is usually built with is named explicitly
(without it, every float operation is a soft-float call). Likewise the Cortex-M33's optional DSP
extension (SXTB16, SMLAD), which Zig's model leaves out and the parts people build on (nRF5340,
STM32L5/U5, LPC55S6x) have: without it the `arm_dsp` ops fall back to plain Zig."""
