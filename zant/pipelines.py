"""The pass pipelines Zant ships: one per target, built from the target's parameters.

`pipeline_for(target)` is what `zant compile`, `zant run`, `zant plan`, the conformance runner,
the random graphs and the benchmarks run unless given another pipeline. A pipeline is a tuple of
stages (each a `zant-opt -p` pass spelling) joined by commas:

    graph folds → lowering → loop passes → vector passes (vector targets) → arena planning

The vector width appears once, in `TargetParameters.vector_lanes`: the lowering shapes each Conv
for that many lanes (`onnx-to-uop{conv-lanes=L}`) and the vector passes use the same width.
`onnx-to-uop` records L on the module (`uop.conv_lanes`), and the vector passes refuse another
width, so a hand-written pipeline that disagrees fails instead of silently mis-tiling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

GRAPH_STAGES: tuple[str, ...] = (
    "fold-qdq",  # first: fold-constants would turn the int8 weights' DequantizeLinear into floats
    "fold-constants",
    "fold-batchnorm",
    "dce",
)
"""ONNX-level folds, before lowering."""

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
    """Outputs per register tile along the Conv dimension that is not the lanes."""
    conv_channel_block: int = 4
    """Output channels of a scalar Conv (float or integer) computed per pass over its window,
    one register accumulator each: 4 for a Cortex-M's 13 general registers (8 spill), 8 on the
    host."""
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


TARGET_PARAMETERS: dict[str, TargetParameters] = {
    "host": TargetParameters(vector_lanes=16, conv_channel_block=8),
    **{core: TargetParameters(dsp=True, float_registers=32) for core in ("cortex-m4", "cortex-m7", "cortex-m33")},
    "cortex-m55": TargetParameters(dsp=True, mve=True, float_registers=32),
    "riscv32": TargetParameters(float_registers=32),
}
"""Targets with other parameters than the scalar default."""


def target_parameters(target: str) -> TargetParameters:
    return TARGET_PARAMETERS.get(target, TargetParameters())


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
    constants: str | None = None,
) -> tuple[str, ...]:
    """The stages of `target`'s pipeline (`strategy`, `alignment`: `plan-arenas` options;
    `memories`: `place-memories`' option, for a board with several scratch memories)."""
    p = target_parameters(target)
    lower = (
        f"onnx-to-uop{{conv-lanes={p.vector_lanes} conv-tile={p.conv_tile}}}"
        if p.vector_lanes
        else f"onnx-to-uop{{conv-channel-block={p.conv_channel_block}"
        + (f" conv-float-registers={p.float_registers}" if p.float_registers else "")
        + (" conv-word-taps=true}" if p.dsp and not p.mve else "}")
    )
    fused = "contract-mulacc{scalar=true}" if p.float_registers else "contract-mulacc"
    print_stages = tuple(fused if s == "contract-mulacc" else s for s in PRINT_STAGES)
    dsp = (*(("seed-accumulators",) if p.dsp else ()), *(("mve-dot",) if p.mve else ()),
           *(("arm-dsp-dot", "interleave-dot-rows", "fuse-smlad-bytes", "unroll-dot-loops") if p.dsp else ()))
    expand = EXPAND_STAGES if p.vector_lanes else ()
    return (*GRAPH_STAGES, lower, *expand, *LOOP_STAGES, *vector_stages(p.vector_lanes),
            *plan_stages(strategy, alignment, memories, constants), *print_stages, *dsp)


def pipeline_for(
    target: str, *, strategy: str | None = None, alignment: int | None = None, memories: Sequence[str] = (),
    constants: str | None = None,
) -> str:
    """The pipeline a compile for `target` runs unless it names another (`zant-opt -p` syntax);
    `strategy`, `alignment` and `constants` (embedded, staged, external), when given, are
    `plan-arenas` options; `memories` (a firmware board's `place_memories`) adds `place-memories`
    after `plan-arenas`."""
    return ",".join(stages_for(target, strategy, alignment, memories, constants))


DEFAULT_PIPELINE = pipeline_for("host")
"""The host's pipeline: vector forms (register-tiled Convs whose outputs are 16-lane vectors,
coalescing, index-set splitting, `vectorize`)."""

MCU_PIPELINE = pipeline_for("cortex-m4")
"""Every microcontroller's pipeline: scalar loops."""
