"""The compilation targets: one record per core, every fact about it in one place.

A `Target` says what the core is (its instruction set as Zig names it: architecture, CPU model,
FPU, DSP extension, Helium and other extensions; its address width and MPU), how Zant compiles
for it (`Target.parameters`: the pass parameters, a microcontroller's from its record, the
host's from its CPU's vector unit, `CpuDescription`), how its cycles are counted (the key of its
table in `zant.backend.timing.CORES`) and which board its images link for by default.

Everything else is derived from the records: the Zig flags (`Target.zig_flags`), the pipelines
(`zant.pipelines`), the limits (`zant.backend.limits`), the default boards
(`zant.backend.boards.DEFAULT_BOARDS`). A module carries its target as one attribute,
`zant.target = #zant.target<"cortex-m4">` (`zant.dialects.zant.TargetAttr`, set by the
`set-target` pass that begins every pipeline), and the passes read their parameters from it
instead of options the pipeline would spell; this module sits at the bottom of the layers so
that they can.

The host's parameters come from its CPU: the vector width L and the register tile P are the
largest that fit its vector registers (`host_parameters`):

| CPU (`CPUS`)      | vector bytes × registers | L  | vector = | P (accumulators) | FMA |
|-------------------|--------------------------|----|----------|------------------|-----|
| `x86-64-avx2`     | 32 × 16 (ymm)            | 16 | 2 ymm    | 6 (12 ymm)       | yes |
| `x86-64-avx`      | 32 × 16                  | 16 | 2 ymm    | 6                | no  |
| `x86-64-avx512`   | 64 × 32 (zmm)            | 16 | 1 zmm    | 14 (8 lanes: 28) | yes |
| `aarch64-neon`    | 16 × 32 (q)              | 16 | 4 q      | 6 (24 q)         | yes |
| `x86-64-sse`      | 16 × 16 (xmm)            | 8  | 2 xmm    | 6 (12 xmm)       | no  |

A register tile of P outputs of L lanes must fit the CPU's vector registers with room for the
operand loaded per reduction step (one vector), the value broadcast against it and one spare:
P × r + r + 2 ≤ registers, r the registers of one L-lane f32 vector; where the output channels
do not split into 16s a Conv takes 8 lanes and 2P outputs (`VectorConv.channel_lanes`), which
must fit too. L is 16 unless that leaves a tile of fewer than `MIN_TILE` outputs (then 8). P is
also the accumulator budget of the MatMul/Gemm column-lane form's register tile (R rows × C
blocks of L columns, R·C ≤ P). On this project's AMD EPYC (AVX2) tiles of 4 and 8 were both
slower than 6 on kws, resnet8, mobilenet, effnet_se and resnet18 (8 spills: its accumulators
are all 16 ymm).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass


@dataclass(frozen=True)
class CpuDescription:
    """The facts of a host CPU that decide Zant's vector code (`zant.backend.cpus` detects the
    machine's)."""

    name: str
    """`CPUS` key of the same facts (`x86-64-avx2`): what `#zant.target<"host", cpu = …>` names."""
    arch: str
    """Zig's architecture name: `x86_64`, `aarch64`, …"""
    vector_bytes: int
    """Bytes of one vector register: 16 (SSE, NEON), 32 (AVX, AVX2), 64 (AVX-512)."""
    vector_registers: int
    """Vector registers the code may use: 16 (x86-64 up to AVX2), 32 (AVX-512, AArch64), 8
    (32-bit x86)."""
    fma: bool
    """A fused multiply-add instruction exists (`vfmadd`, `fmla`)."""
    source: str = ""
    """Where the description came from (`zig: znver3`, `/proc/cpuinfo`, `fallback: …`)."""

    def registers_per_vector(self, lanes: int, element_bytes: int = 4) -> int:
        """Registers one `lanes`-wide vector occupies (at least one)."""
        return max(1, -(-lanes * element_bytes // self.vector_bytes))

    def label(self) -> str:
        """`x86-64-avx2 (zig: znver3)`."""
        return f"{self.name} ({self.source})" if self.source else self.name


_X86 = (("sse", 16, False), ("avx", 32, False), ("avx2", 32, True), ("avx512", 64, True))

CPUS: dict[str, CpuDescription] = {
    c.name: c
    for c in (
        *(CpuDescription(f"x86-64-{n}", "x86_64", size, 32 if n == "avx512" else 16, fma) for n, size, fma in _X86),
        # 32-bit x86 reaches only the first 8 vector registers.
        *(CpuDescription(f"x86-{n}", "x86", size, 8, fma) for n, size, fma in _X86),
        CpuDescription("aarch64-neon", "aarch64", 16, 32, True),
        CpuDescription("generic", "", 16, 16, False),
    )
}
"""The host CPU descriptions by name: vector bytes, vector registers, FMA (`x86-64-sse`: 16, 16,
no; `x86-64-avx`: 32, 16, no; `x86-64-avx2`: 32, 16, yes; `x86-64-avx512`: 64, 32, yes; the
`x86-…` forms with 8 registers; `aarch64-neon`: 16, 32, yes; `generic`: 16, 16, no)."""


@dataclass(frozen=True)
class PassParameters:
    """What the passes of a target's pipeline read from its `#zant.target` (each pass's own option,
    when given, overrides it); the defaults are a module without a target's."""

    vector_lanes: int = 0
    """Lanes of the vector code (`@Vector` of this many elements): `onnx-to-uop`'s Conv, MatMul
    and recurrent forms and `split-index-sets`/`vectorize`'s width; 0: scalar loops only (the
    microcontrollers: the Cortex-M4 has no float SIMD and vector code grows `.text` 3–5×)."""
    conv_tile: int = 6
    """Outputs per register tile along the Conv dimension that is not the lanes (also the
    MatMul/Gemm column-lane form's blocks of L columns per tile)."""
    vector_registers: int = 0
    """Vector registers counted in `vector_lanes`-wide vectors (AVX2: 16 ymm are 8 16-lane
    vectors; AVX-512: 32): how many accumulators, weight vectors and a broadcast a channel-lane
    Conv's register tile may hold (`conv_tiling.VectorConv.lane_tile`); 0: unknown."""
    vector_lane_registers: int = 1
    """Hardware registers of one `vector_lanes`-wide f32 vector (AVX2: 2 ymm for 16 lanes;
    AVX-512: 1 zmm): an 8-lane vector then takes half as many, and its multiply-add issues as
    one of them (`conv_tiling.VectorConv.lane_plan`)."""
    conv_channel_block: int = 8
    """Output channels of a scalar Conv (float or integer) computed per pass over its window,
    one register accumulator each: 4 on a Cortex-M (13 general registers: 8 spill), 8 on the
    host (measured on AVX2's 16 vector registers, and as many on 32: more is unmeasured)."""
    float_registers: int = 0
    """Single-precision registers of the core's FPU, which also has a fused multiply-add; 0:
    none, floats are soft-float calls. Scalar float Convs take register tiles of channels ×
    pixels sized for them (`onnx-to-uop`), and scalar float multiply-accumulates are fused
    (`contract-mulacc`: one `vfma.f32`/`fmadd.s`, rounded once)."""
    fma: bool = False
    """The vector unit has a fused multiply-add (x86-64 FMA3, AArch64 NEON): on vector targets
    `expand-transcendentals` writes its polynomials' multiply-adds as `uop.fma`."""
    dsp: bool = False
    """The Arm DSP extension: int8 dot products become `SXTB16`/`SMLAD` (`arm-dsp-dot` and the
    passes after it)."""
    mve: bool = False
    """Helium: int8 dot products of 8 or more values become `VMLAVA` (`mve-dot`)."""

    @property
    def conv_word_taps(self) -> bool:
        """Integer Convs of rows of 3 taps get a 4th tap of weight 0, each row one word for
        `arm-dsp-dot` (DSP cores without Helium, whose `mve-dot` takes the rows as they are)."""
        return self.dsp and not self.mve


MIN_TILE = 4
"""Fewest outputs per register tile of 16-lane vectors before the host takes 8 lanes instead
(SSE: a 16-lane vector is 4 xmm registers, 2 outputs per tile; 8 lanes fit 6)."""


def vector_tile(cpu: CpuDescription, lanes: int) -> int:
    """The most outputs P of a register tile of `lanes`-wide f32 vectors on `cpu`: P vectors of
    accumulators, the vector loaded per reduction step, a broadcast and a spare all in registers
    (P × r + r + 2 ≤ registers); for 16 lanes also the 8-lane, 2P-output channel-lane tile
    (`VectorConv.channel_lanes`). 0 if not even one output fits."""
    def most(lanes: int, per_tile: int) -> int:
        r = cpu.registers_per_vector(lanes)
        return max(0, (cpu.vector_registers - r - 2) // (r * per_tile))

    return min(most(lanes, 1), most(8, 2)) if lanes == 16 else most(lanes, 1)


def host_parameters(cpu: CpuDescription) -> PassParameters:
    """The parameters of a host whose CPU is `cpu` (the table of the module's docstring)."""
    lanes = 16 if vector_tile(cpu, 16) >= MIN_TILE else 8
    return PassParameters(
        vector_lanes=lanes,
        conv_tile=max(1, vector_tile(cpu, lanes)),
        vector_registers=cpu.vector_registers // cpu.registers_per_vector(lanes),
        vector_lane_registers=cpu.registers_per_vector(lanes),
        conv_channel_block=min(8, cpu.vector_registers // 2),
        fma=cpu.fma,
    )


@dataclass(frozen=True)
class Target:
    """One core (or the machine running Zant, `host`)."""

    name: str
    address_bits: int
    """The pointer width: no object, arena or index may exceed `2^(bits-1) - 1` bytes."""
    arch: str = ""
    """Zig's architecture (`thumb`, `riscv32`); empty for the host, built for its native CPU."""
    cpu: str = ""
    """Zig's CPU model (`cortex_m4`)."""
    fpu: str | None = None
    """The FPU, as Zig's feature for it: `vfp4d16sp` (FPv4-SP), `fp_armv8d16sp` (FPv5-SP),
    `fp_armv8d16` (FPv5 with doubles), `f` (RV32F); None: none. Optional on every Cortex-M, so
    Zig's CPU models leave it out and the flags name it (without it every float operation is a
    soft-float call)."""
    float_registers: int = 0
    """Single-precision registers of the FPU (32 on each of these, with a fused multiply-add)."""
    dsp: bool = False
    """The Arm DSP extension (SXTB16, SMLAD): always in Armv7E-M (Cortex-M4, M7), optional in
    Armv8-M Mainline (Cortex-M33: the parts people build on, nRF5340, STM32L5/U5, LPC55S6x,
    have it) and with Helium (Cortex-M55)."""
    mve: bool = False
    """Helium, the M-profile Vector Extension (with its float part: `mve_fp`)."""
    extensions: tuple[str, ...] = ()
    """Other ISA extensions the core has that Zig's CPU model leaves out (RV32: `m`, `c`)."""
    mpu: str | None = None
    """The MPU's architecture (`pmsav7`: the regions a guarded image programs), or None."""
    conv_channel_block: int = 4
    """`PassParameters.conv_channel_block` of a microcontroller (the host's comes from its CPU)."""
    default_board: str | None = None
    """The board an image links for unless told another (`zant.backend.boards.BOARDS`)."""
    timing: str | None = None
    """The key of the core's timing table in `zant.backend.timing.CORES`, for cycles."""

    @property
    def is_mcu(self) -> bool:
        return self.name != "host"

    @property
    def zig_flags(self) -> tuple[str, ...]:
        """`-target` and `-mcpu` for Zig (none for the host): the CPU model with every optional
        extension the record names (Helium's `mve_fp`, the FPU, `dsp`, the others), the float
        ABI hard where there is an FPU."""
        if not self.is_mcu:
            return ()
        abi = {"thumb": "eabihf" if self.fpu else "eabi", "riscv32": "none"}[self.arch]
        features = (*(("mve_fp",) if self.mve else ()), *((self.fpu,) if self.fpu else ()),
                    *(("dsp",) if self.dsp else ()), *self.extensions)
        return ("-target", f"{self.arch}-freestanding-{abi}", "-mcpu", "+".join((self.cpu, *features)))

    def parameters(self, cpu: CpuDescription | None = None) -> PassParameters:
        """The pass parameters of this target: a microcontroller's from its record, the host's
        from `cpu` (required for the host)."""
        if not self.is_mcu:
            if cpu is None:
                raise ValueError("the host's parameters come from its CPU: give a CpuDescription")
            return host_parameters(cpu)
        return PassParameters(
            conv_channel_block=self.conv_channel_block, float_registers=self.float_registers,
            dsp=self.dsp, mve=self.mve,
        )


def _mcu(name: str, arch: str, cpu: str, board: str, **facts) -> Target:
    return Target(name, 32, arch, cpu, default_board=board, timing=name, **facts)


_FPU = {"float_registers": 32}

RECORDS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("host", struct.calcsize("P") * 8),
        _mcu("cortex-m0plus", "thumb", "cortex_m0plus", "microbit"),
        _mcu("cortex-m3", "thumb", "cortex_m3", "mps2-an385", mpu="pmsav7"),
        _mcu("cortex-m4", "thumb", "cortex_m4", "mps2-an386", fpu="vfp4d16sp", **_FPU, dsp=True, mpu="pmsav7"),
        _mcu("cortex-m7", "thumb", "cortex_m7", "mps2-an500", fpu="fp_armv8d16", **_FPU, dsp=True, mpu="pmsav7"),
        _mcu("cortex-m33", "thumb", "cortex_m33", "mps2-an505", fpu="fp_armv8d16sp", **_FPU, dsp=True,
             mpu="pmsav8"),
        _mcu("cortex-m55", "thumb", "cortex_m55", "mps3-an547", fpu="fp_armv8d16", **_FPU, dsp=True, mve=True,
             mpu="pmsav8"),
        _mcu("riscv32", "riscv32", "generic_rv32", "virt", fpu="f", **_FPU, extensions=("m", "c")),
    )
}
"""Target name → its record (`host` builds for the machine running Zant)."""
