"""The pass pipelines Zant ships: one per target, built from the target's parameters.

`pipeline_for(target)` is what `zant compile`, `zant run`, `zant plan`, the conformance runner,
the random graphs and the benchmarks run unless given another pipeline. A pipeline is a tuple of
stages (each a `zant-opt -p` pass spelling) joined by commas:

    graph folds → lowering → loop passes → vector passes (vector targets) → arena planning

The vector width appears once, in `TargetParameters.vector_lanes`: the lowering shapes each Conv
for that many lanes (`onnx-to-uop{conv-lanes=L}`) and the vector passes use the same width.
`onnx-to-uop` records L on the module (`uop.conv_lanes`), and the vector passes refuse another
width, so a hand-written pipeline that disagrees fails instead of silently mis-tiling.

The host's parameters come from its CPU (`zant.backend.cpus.host_cpu()`: Zig's native CPU, once
per process; a conservative description, with a warning, if it cannot be detected) through
`host_parameters(cpu)` (`pipeline_for("host", cpu=CPUS[name])`: another CPU's pipeline), and its
pipeline spells them (`onnx-to-uop{conv-lanes=16 conv-tile=6 conv-channel-block=8}` on AVX2), so
`bench/latency.py --dry-run` shows the choice. A register tile of P outputs of L lanes must fit
the CPU's vector registers with room for the operand loaded per reduction step (one vector), the
value broadcast against it and one spare: P × r + r + 2 ≤ registers, r the registers of one
L-lane f32 vector; where the output channels do not split into 16s a Conv takes 8 lanes and 2P
outputs (`VectorConv.channel_lanes`), which must fit too. L is 16 unless that leaves a tile of
fewer than `MIN_TILE` outputs (then 8):

| CPU (`cpus.CPUS`) | vector bytes × registers | L  | vector = | P (accumulators) | FMA |
|-------------------|--------------------------|----|----------|------------------|-----|
| `x86-64-avx2`     | 32 × 16 (ymm)            | 16 | 2 ymm    | 6 (12 ymm)       | yes |
| `x86-64-avx`      | 32 × 16                  | 16 | 2 ymm    | 6                | no  |
| `x86-64-avx512`   | 64 × 32 (zmm)            | 16 | 1 zmm    | 14 (8 lanes: 28) | yes |
| `aarch64-neon`    | 16 × 32 (q)              | 16 | 4 q      | 6 (24 q)         | yes |
| `x86-64-sse`      | 16 × 16 (xmm)            | 8  | 2 xmm    | 6 (12 xmm)       | no  |

P is also the accumulator budget of the MatMul/Gemm column-lane form's register tile (R rows × C
blocks of L columns, R·C ≤ P), which reads the same option. On this project's AMD EPYC (AVX2)
tiles of 4 and 8 were both slower than 6 on kws, resnet8, mobilenet, effnet_se and resnet18 (8
spills: its accumulators are all 16 ymm; README, "The host CPU").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from zant.backend.cpus import CpuDescription, host_cpu
from zant.backend.targets import RECORDS

GRAPH_STAGES: tuple[str, ...] = (
    "fold-qdq",  # first: fold-constants would turn the int8 weights' DequantizeLinear into floats
    "fold-constants",
    "fold-pads",  # after fold-constants: a Pad's amounts and value are constants by then
    "fold-batchnorm",
    "dce",
)
"""ONNX-level folds, before lowering."""

CHECK_STAGES: tuple[str, ...] = ("check-data-indices",)
"""Right after the lowering, before any pass moves loops: each index read from the data
(`uop.bound_index`) checked ahead of its kernel and clamped in it."""

LOOP_STAGES: tuple[str, ...] = ("fuse-loops",)
"""uop loop passes every target runs."""

PLAN_STAGES: tuple[str, ...] = ("dce", "plan-arenas", "verify-arena-plan")
"""Arena planning and its independent check, after `dce` (a buffer nothing reads or writes, and
its views, go: it gets no slot, and the printer prints every buffer it is given); passes that
prepare the planned module for the printer go after these."""

PRINT_STAGES: tuple[str, ...] = (
    "fold-constant-loads",
    "mark-inbounds",
    "contract-mulacc",
    "expand-float-minmax",
    "linearize-geps",
)
"""After planning, the choices the Zig printer only spells: which loads are literals, which
addresses need no run-time check, which multiply-adds are fused, which float max/min are a
compare and a select, and each address as one index into its flat buffer."""

PRINT_PIPELINE = ",".join(PRINT_STAGES)
"""`PRINT_STAGES` as a pipeline, to end a hand-written one with: the Zig printer refuses a gep
through a view (`linearize-geps`) and prints the others' choices."""


@dataclass(frozen=True)
class TargetParameters:
    """What the pipeline of a target needs to know about it."""

    vector_lanes: int = 0
    """Lanes of the vector code (`@Vector` of this many elements); 0: scalar loops only (the
    microcontrollers: the Cortex-M4 has no float SIMD and vector code grows `.text` 3–5×)."""
    conv_tile: int = 6
    """Outputs per register tile along the Conv dimension that is not the lanes (also the
    MatMul/Gemm column-lane form's blocks of L columns per tile); the host's fit its CPU's vector
    registers (`host_parameters`)."""
    conv_channel_block: int = 4
    """Output channels of a scalar Conv (float or integer) computed per pass over its window,
    one register accumulator each: 4 for a Cortex-M's 13 general registers (8 spill), 8 on the
    host."""
    fma: bool = False
    """The vector unit has a fused multiply-add (x86-64 FMA3, AArch64 NEON): on vector targets
    `expand-transcendentals{fma=true}` writes its polynomials' multiply-adds as `uop.fma`
    (`@mulAdd`, one instruction; without an FMA unit it would be a libm call)."""
    dsp: bool = False
    """The core has the Arm DSP extension (Cortex-M4, M7, M33, M55): int8 dot products become
    `SXTB16`/`SMLAD` (`arm-dsp-dot`, last of the print stages), their accumulators seeded with
    the Conv's bias first (`seed-accumulators`: one add and one zero less per output), the rows
    of a weight tile stored interleaved word by word (`interleave-dot-rows`: one pointer for all),
    each weight word's widening and MACs kept together (`fuse-smlad-bytes`) and the dot loops
    unrolled (`unroll-dot-loops`)."""
    mve: bool = False
    """The core has Helium, the M-profile Vector Extension (Cortex-M55): int8 dot products of 8
    or more values become vector loads and `VMLAVA` (`mve-dot`, before `arm-dsp-dot`, which
    takes the shorter ones and the remainders)."""
    float_registers: int = 0
    """Single-precision registers of the core's FPU, which also has a fused multiply-add (32:
    the Cortex-M4F, M7, M33, M55 and RV32F); 0: none, floats are soft-float calls. Scalar float
    Convs take register tiles of channels × pixels sized for them, chosen per layer
    (`onnx-to-uop{conv-float-registers=R}`), and scalar float multiply-accumulates are fused
    (`contract-mulacc{scalar=true}`: one `vfma.f32`/`fmadd.s` instead of a multiply and an add,
    rounded once)."""


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


def host_parameters(cpu: CpuDescription) -> TargetParameters:
    """The parameters of a host whose CPU is `cpu` (the table of the module's docstring)."""
    lanes = 16 if vector_tile(cpu, 16) >= MIN_TILE else 8
    return TargetParameters(
        vector_lanes=lanes,
        conv_tile=max(1, vector_tile(cpu, lanes)),
        # Scalar Convs keep one accumulator per channel in a register: 8, measured on AVX2's 16,
        # and as many on 32 (more is unmeasured).
        conv_channel_block=min(8, cpu.vector_registers // 2),
        fma=cpu.fma,
    )


def target_parameters(target: str, cpu: CpuDescription | None = None) -> TargetParameters:
    """The parameters of `target`: a microcontroller's from its record (`zant.backend.targets`),
    the host's from `cpu` (default: this machine's, `host_cpu()`)."""
    if target == "host":
        return host_parameters(cpu or host_cpu())
    record = RECORDS[target]
    return TargetParameters(
        conv_channel_block=record.conv_channel_block, dsp=record.dsp, mve=record.mve,
        float_registers=record.float_registers,
    )


EXPAND_STAGES: tuple[str, ...] = ("expand-transcendentals",)
"""On vector targets, right after the lowering: f32 exp/tanh/erf as polynomial arithmetic (≤ 2
ulp), which `vectorize` runs 16 lanes at a time instead of one libm call per element."""


def vector_stages(lanes: int) -> tuple[str, ...]:
    """The vector passes for `lanes`-wide vectors, in order: rows merged into long loops, loops
    split around their decided bounds checks, then vectorized."""
    if not lanes:
        return ()
    return ("coalesce-loops", f"split-index-sets{{width={lanes}}}", f"vectorize{{width={lanes}}}")


def plan_stages(
    strategy: str | None = None, alignment: int | None = None, memories: Sequence[str] = (),
    constants: str | None = None,
) -> tuple[str, ...]:
    """`PLAN_STAGES`, with `plan-arenas` options where given (`zant plan --strategy`,
    `zant compile --constants`), and
    `place-memories` after `plan-arenas` for a board with several memories for the scratch arena
    (`memories`: `NAME:BYTES`, fastest first; `Board.place_memories`)."""
    given = (("strategy", strategy), ("alignment", alignment), ("constants", constants))
    options = " ".join(f"{k}={v}" for k, v in given if v is not None)
    stages = []
    for s in PLAN_STAGES:
        stages.append(f"{s}{{{options}}}" if s == "plan-arenas" and options else s)
        if s == "plan-arenas" and memories:
            quoted = ",".join(f'"{m}"' for m in memories)
            stages.append(f"place-memories{{memories={quoted}}}")
    return tuple(stages)


def stages_for(
    target: str, strategy: str | None = None, alignment: int | None = None, memories: Sequence[str] = (),
    constants: str | None = None, cpu: CpuDescription | None = None,
) -> tuple[str, ...]:
    """The stages of `target`'s pipeline (`strategy`, `alignment`: `plan-arenas` options;
    `memories`: `place-memories`' option, for a board with several scratch memories; `cpu`: the
    host's CPU, default this machine's)."""
    p = target_parameters(target, cpu)
    lower = (
        f"onnx-to-uop{{conv-lanes={p.vector_lanes} conv-tile={p.conv_tile} conv-channel-block={p.conv_channel_block}}}"
        if p.vector_lanes
        else f"onnx-to-uop{{conv-channel-block={p.conv_channel_block}"
        + (f" conv-float-registers={p.float_registers}" if p.float_registers else "")
        + (" conv-word-taps=true}" if p.dsp and not p.mve else "}")
    )
    fused = "contract-mulacc{scalar=true}" if p.float_registers else "contract-mulacc"
    print_stages = tuple(fused if s == "contract-mulacc" else s for s in PRINT_STAGES)
    dsp = (*(("seed-accumulators",) if p.dsp else ()), *(("mve-dot",) if p.mve else ()),
           *(("arm-dsp-dot", "interleave-dot-rows", "fuse-smlad-bytes", "unroll-dot-loops") if p.dsp else ()))
    expand = (("expand-transcendentals{fma=true}",) if p.fma else EXPAND_STAGES) if p.vector_lanes else ()
    return (*GRAPH_STAGES, lower, *CHECK_STAGES, *expand, *LOOP_STAGES, *vector_stages(p.vector_lanes),
            *plan_stages(strategy, alignment, memories, constants), *print_stages, *dsp)


def pipeline_for(
    target: str, *, strategy: str | None = None, alignment: int | None = None, memories: Sequence[str] = (),
    constants: str | None = None, cpu: CpuDescription | None = None,
) -> str:
    """The pipeline a compile for `target` runs unless it names another (`zant-opt -p` syntax);
    `strategy`, `alignment` and `constants` (embedded, staged, external), when given, are
    `plan-arenas` options; `memories` (a firmware board's `place_memories`) adds `place-memories`
    after `plan-arenas`; `cpu` is the host's CPU description (default: this machine's)."""
    return ",".join(stages_for(target, strategy, alignment, memories, constants, cpu))


MCU_PIPELINE = pipeline_for("cortex-m4")
"""Every microcontroller's pipeline: scalar loops."""


def __getattr__(name: str) -> str:
    # DEFAULT_PIPELINE, the host's pipeline (vector forms: register-tiled Convs whose outputs
    # are L-lane vectors, coalescing, index-set splitting, `vectorize`), is computed on first
    # use: it asks Zig for the host CPU, which a compile for a microcontroller never needs.
    if name == "DEFAULT_PIPELINE":
        return pipeline_for("host")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
