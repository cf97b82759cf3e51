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
from zant.backend.cpus import host_cpu
from zant.targets import RECORDS, CpuDescription, PassParameters

GRAPH_STAGES: tuple[str, ...] = (
    "fold-qoperator",  # com.microsoft QLinear ops into the integer ops fold-qdq makes, else their DQ → op → Q
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


def target_parameters(target: str, cpu: CpuDescription | None = None) -> PassParameters:
    """The pass parameters of `target` (`Target.parameters`): the host's from `cpu` (default:
    this machine's, `host_cpu()`)."""
    record = RECORDS[target]
    return record.parameters(cpu or host_cpu() if not record.is_mcu else None)


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
