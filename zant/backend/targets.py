"""The compilation targets: one record per core, every fact about it in one place.

A `Target` says what the core is (its Zig target triple and CPU flags, its address width, its
FPU, DSP extension, Helium and MPU), how Zant compiles for it (the scalar pass parameters its
pipeline spells; the host's vector parameters come from its CPU, `zant.backend.cpus`), how its
cycles are counted (`zant.backend.timing`'s table) and which board its images link for by
default. The pipeline (`zant.pipelines`), the build flags (`zant.backend.build`), the limits
(`zant.backend.limits`), the boards (`zant.backend.boards`) and the timing model read it here.

At the bottom of the backend: the board definitions, the builder and the limits all read it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from zant.backend.timing import CORES, CoreTiming


@dataclass(frozen=True)
class Target:
    """One core (or the machine running Zant, `host`)."""

    name: str
    zig_flags: tuple[str, ...]
    """`-target` and `-mcpu` for Zig. Zig's Cortex-M CPU models leave the optional FPU out, so
    the FPU each core is usually built with is named explicitly (without it, every float
    operation is a soft-float call); likewise the Cortex-M33's optional DSP extension (SXTB16,
    SMLAD), which the parts people build on (nRF5340, STM32L5/U5, LPC55S6x) have."""
    address_bits: int
    """The pointer width: no object, arena or index may exceed `2^(bits-1) - 1` bytes."""
    float_registers: int = 0
    """Single-precision registers of its FPU (with a fused multiply-add); 0: no FPU."""
    dsp: bool = False
    """The Arm DSP extension (SXTB16, SMLAD)."""
    mve: bool = False
    """Helium, the M-profile Vector Extension."""
    mpu: str | None = None
    """The MPU's architecture (`pmsav7`: the regions a guarded image programs), or None."""
    conv_channel_block: int = 4
    """Output channels of a scalar Conv per pass over its window, one register each: 4 for a
    Cortex-M's 13 general registers (8 spill). The host's parameters come from its CPU
    (`zant.pipelines.host_parameters`), not from here."""
    default_board: str | None = None
    """The board an image links for unless told another (`zant.backend.boards.BOARDS`)."""
    timing: CoreTiming | None = None
    """The core's timing table, for cycles (`zant.backend.timing`)."""

    @property
    def is_mcu(self) -> bool:
        return self.name != "host"


_THUMB, _THUMB_HF = ("-target", "thumb-freestanding-eabi"), ("-target", "thumb-freestanding-eabihf")


def _mcu(name: str, flags: tuple[str, ...], board: str, **facts) -> Target:
    return Target(name, flags, 32, default_board=board, timing=CORES[name], **facts)


RECORDS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("host", (), struct.calcsize("P") * 8),
        _mcu("cortex-m0plus", (*_THUMB, "-mcpu", "cortex_m0plus"), "microbit"),
        _mcu("cortex-m3", (*_THUMB, "-mcpu", "cortex_m3"), "mps2-an385", mpu="pmsav7"),
        _mcu("cortex-m4", (*_THUMB_HF, "-mcpu", "cortex_m4+vfp4d16sp"), "mps2-an386",
             float_registers=32, dsp=True, mpu="pmsav7"),
        _mcu("cortex-m7", (*_THUMB_HF, "-mcpu", "cortex_m7+fp_armv8d16"), "mps2-an500",
             float_registers=32, dsp=True, mpu="pmsav7"),
        _mcu("cortex-m33", (*_THUMB_HF, "-mcpu", "cortex_m33+fp_armv8d16sp+dsp"), "mps2-an505",
             float_registers=32, dsp=True, mpu="pmsav8"),
        _mcu("cortex-m55", (*_THUMB_HF, "-mcpu", "cortex_m55+mve_fp+fp_armv8d16"), "mps3-an547",
             float_registers=32, dsp=True, mve=True, mpu="pmsav8"),
        _mcu("riscv32", ("-target", "riscv32-freestanding-none", "-mcpu", "generic_rv32+m+f+c"), "virt",
             float_registers=32),
    )
}
"""Target name → its record (`host` builds for the machine running Zant)."""

TARGETS: dict[str, tuple[str, ...]] = {name: t.zig_flags for name, t in RECORDS.items()}
"""Target name → its Zig flags (`Target.zig_flags`)."""
