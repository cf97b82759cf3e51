"""The pass pipelines Zant ships: one per target, derived from its record (`zant.targets`).

`pipeline_for(target)` is what `zant compile`, `zant run`, `zant plan`, the conformance runner,
the random graphs and the benchmarks run unless given another pipeline. A pipeline is a tuple of
stages (each a `zant-opt -p` pass spelling) joined by commas:

    set-target → graph folds → lowering → loop passes → vector passes (vector targets) →
    arena planning → print preparation → DSP / Helium passes (cores that have them) →
    outline-kernels (→ the DSP cores' kernel passes) → the unchecked addresses' check

The first stage, `set-target{target=T}` (the host's with its CPU: `set-target{target=host
cpu=x86-64-avx2}`), writes the module's `#zant.target`; the passes after it read their
parameters from it (`zant.targets.PassParameters`: the vector width, the Conv register tiles
and channel blocks, the FPU and FMA, DSP and Helium), so no pipeline spells one, and the
lowering and the vector passes cannot disagree on the width unless an option overrides one. Which
stages a pipeline has is the record's too: the vector passes for a target with vector lanes,
the `arm_dsp` passes for a core with the DSP extension, `mve-dot` and `mve-requantize` for one with Helium.

The host's parameters come from its CPU (`zant.backend.cpus.host_cpu()`: Zig's native CPU, once
per process; a conservative description, with a warning, if it cannot be detected; the table
of `zant.targets`), and its pipeline names that CPU (`pipeline_for("host", cpu=CPUS[name])`:
another CPU's pipeline), so `bench/latency.py --dry-run` shows the choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from zant.backend.cpus import host_cpu
from zant.targets import RECORDS, CpuDescription, PassParameters

GRAPH_STAGES: tuple[str, ...] = (
    "resolve-sequences",  # sequences and optionals into the tensors they hold (first: SequenceMap bodies need the later folds too)
    "inline-functions",  # ops without a lowering that ONNX defines by a function body into that body
    "expand-gradients",  # Gradient (ai.onnx.preview.training) into its derivative's ops, reverse mode
    "fold-qoperator",  # com.microsoft QLinear ops into the integer ops fold-qdq makes, else their DQ → op → Q
    "recognize-quantize",  # exporters' decomposed Q/DQ (PT2E dynamo) back into QuantizeLinear/DequantizeLinear, constant weights' Q computed
    "fold-qdq",  # first: fold-constants would turn the int8 weights' DequantizeLinear into floats
    "fold-constants",
    "fold-pads",  # after fold-constants: a Pad's amounts and value are constants by then
    "normalize-exports",  # the dynamo exporter's ReduceMean/Reshape heads as the legacy one's GlobalAveragePool/Flatten
    "fold-batchnorm",
    "signed-activations",  # uint8 activations as int8 codes shifted by -128 (the int8 kernels), where every op allows it
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

REACH_STAGE = "verify-arena-plan{reach-only=true}"
"""Last of every pipeline, once every pass that makes an address the printer leaves unchecked
has run: each `inbounds` gep (`mark-inbounds`' and those the DSP passes make), each vector
access's lanes and each asm op's declared reach (`arm_dsp`, `arm_mve`) inside the buffers their
pointers address, checked statically (`verify-arena-plan`)."""

OUTLINE_STAGE = "outline-kernels"
"""Each top-level loop nest a function (the printer's kernel unit): every pipeline's last pass but
its microcontroller's kernel passes and `REACH_STAGE`."""

PRINT_PIPELINE = ",".join((*PRINT_STAGES, OUTLINE_STAGE))
"""`PRINT_STAGES` and `OUTLINE_STAGE` as a pipeline, to end a hand-written one with: the Zig
printer refuses a gep through a view (`linearize-geps`) and prints the others' choices."""


def target_parameters(target: str, cpu: CpuDescription | None = None) -> PassParameters:
    """The pass parameters of `target` (`Target.parameters`): the host's from `cpu` (default:
    this machine's, `host_cpu()`)."""
    record = RECORDS[target]
    return record.parameters(cpu or host_cpu() if not record.is_mcu else None)


EXPAND_STAGES: tuple[str, ...] = ("expand-transcendentals",)
"""On vector targets, right after the lowering: f32 exp/tanh/erf as polynomial arithmetic (≤ 2
ulp), which `vectorize` runs 16 lanes at a time instead of one libm call per element (its
multiply-adds fused where the target's vector unit has an FMA)."""

VECTOR_STAGES: tuple[str, ...] = ("coalesce-loops", "split-index-sets", "vectorize")
"""On vector targets, after the loop passes: rows merged into long loops, loops split around
their decided bounds checks, then vectorized, at the target's width."""


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


def graph_stages(rounding: str | None = None) -> tuple[str, ...]:
    """`GRAPH_STAGES`, with `requant-rounding{mode=...}` right after `fold-qdq` for a rounding
    mode other than the default `exact` (`zant compile --requant-rounding`)."""
    if rounding in (None, "exact"):
        return GRAPH_STAGES
    at = GRAPH_STAGES.index("fold-qdq") + 1
    return (*GRAPH_STAGES[:at], f"requant-rounding{{mode={rounding}}}", *GRAPH_STAGES[at:])


def lowering_stage(weight_cache: int = 0, image_formats: Sequence[str] = ()) -> str:
    """`onnx-to-uop` with its options where given: `weight-cache-bytes` (a board's cache in front
    of its slow weight flash) and `image-formats` (the compressed formats ImageDecoder decodes,
    `zant compile --image-formats`; none given: all)."""
    given = (("weight-cache-bytes", str(weight_cache) if weight_cache else ""), ("image-formats", ",".join(image_formats)))
    options = " ".join(f"{k}={v}" for k, v in given if v)
    return f"onnx-to-uop{{{options}}}" if options else "onnx-to-uop"


def stages_for(
    target: str, strategy: str | None = None, alignment: int | None = None, memories: Sequence[str] = (),
    constants: str | None = None, cpu: CpuDescription | None = None, rounding: str | None = None,
    weight_cache: int = 0, image_formats: Sequence[str] = (),
) -> tuple[str, ...]:
    """The stages of `target`'s pipeline (`strategy`, `alignment`: `plan-arenas` options;
    `memories`: `place-memories`' option, for a board with several scratch memories; `cpu`: the
    host's CPU, default this machine's; `rounding`: the requantization rounding mode,
    `graph_stages`; `weight_cache`, `image_formats`: `lowering_stage`'s)."""
    record = RECORDS[target]
    host_cpu_name = "" if record.is_mcu else (cpu or host_cpu()).name
    p = target_parameters(target, cpu)
    set_target = f"set-target{{target={target}" + (f" cpu={host_cpu_name}" if host_cpu_name else "") + "}"
    vector = (*EXPAND_STAGES, *LOOP_STAGES, *VECTOR_STAGES) if p.vector_lanes else LOOP_STAGES
    dsp = (*(("seed-accumulators",) if p.dsp else ()), *(("mve-gather", "mve-dot", "mve-requantize") if p.mve else ()),
           *(("arm-dsp-dot", "interleave-dot-rows", "fuse-smlad-bytes", "arm-dsp-tile-loops", "unroll-dot-loops", "arm-dsp-requant") if p.dsp else ()))
    layouts = ("assign-layouts",) if p.conv_word_taps else ()  # the cores with channels-last int8 kernels
    if p.vector_lanes:  # the float channel-lane Conv forms: the whole graph's layouts (issue 34)
        layouts = (*layouts, "assign-host-layouts")
    lowering = lowering_stage(weight_cache, image_formats)
    hot = ("mark-hot-kernels",) if record.is_mcu else ()  # built for speed in a build for size
    if p.dsp and not p.mve:  # the kernels' epilogues, knowing which kernels a build for size shares
        hot = (*hot, "arm-dsp-requant-sums", "arm-dsp-tile-rows")  # (on the M55: 11 k fewer instructions, 4 k more cycles on KWS)
        hot = (*hot, "arm-dsp-depthwise-rows")  # the depthwise steps' loops with the epilogues just made
        hot = (*hot, "arm-dsp-block-rows")  # the first convs' blocks with the epilogues just made
    return (set_target, *graph_stages(rounding), *layouts, lowering, *CHECK_STAGES, *vector,
            *plan_stages(strategy, alignment, memories, constants), *PRINT_STAGES, *dsp, OUTLINE_STAGE, *hot, REACH_STAGE)


def pipeline_for(
    target: str, *, strategy: str | None = None, alignment: int | None = None, memories: Sequence[str] = (),
    constants: str | None = None, cpu: CpuDescription | None = None, rounding: str | None = None,
    weight_cache: int = 0, image_formats: Sequence[str] = (),
) -> str:
    """The pipeline a compile for `target` runs unless it names another (`zant-opt -p` syntax);
    `strategy`, `alignment` and `constants` (embedded, staged, external), when given, are
    `plan-arenas` options; `memories` (a firmware board's `place_memories`) adds `place-memories`
    after `plan-arenas`; `cpu` is the host's CPU description (default: this machine's);
    `rounding` a requantization rounding mode (`graph_stages`); `weight_cache` the bytes of a
    board's cache in front of its slow weight flash (`onnx-to-uop{weight-cache-bytes=N}`);
    `image_formats` the compressed formats ImageDecoder decodes (`onnx-to-uop{image-formats=…}`,
    none given: all)."""
    return ",".join(
        stages_for(target, strategy, alignment, memories, constants, cpu, rounding, weight_cache, image_formats)
    )


RAM_SCHEDULE_STAGES: tuple[str, ...] = ("schedule-in-place",)
"""The schedules below the layer bound (docs/ram-budget.md), slower than the default plan (a
copy of each convolution's input through a line or plane buffer): run just before the planning
stages only when a RAM budget needs them (`zant compile --ram-budget`, a firmware board)."""


def with_ram_schedules(pipeline: str, keep_layouts: bool = False) -> str:
    """`pipeline` with `RAM_SCHEDULE_STAGES` before its planning stages (the `dce` ahead of
    `plan-arenas`) and without `assign-layouts`: the line and plane buffers of
    `schedule-in-place` rewrite the NCHW convolution nests, not the channels-last forms that
    pass chooses, so a budgeted build trades those cycles for the bytes (`keep_layouts`: kept,
    for `with_in_place_layouts`). Unchanged if it has no `plan-arenas` or already has the
    schedules."""
    stages = pipeline.split(",")
    names = [stage.split("{")[0] for stage in stages]
    if "plan-arenas" not in names or any(s in names for s in RAM_SCHEDULE_STAGES):
        return pipeline
    stages = [stage for stage, name in zip(stages, names, strict=True) if keep_layouts or name != "assign-layouts"]
    names = [stage.split("{")[0] for stage in stages]
    at = names.index("plan-arenas")
    at -= at > 0 and names[at - 1] == "dce"
    return ",".join((*stages[:at], *RAM_SCHEDULE_STAGES, *stages[at:]))


def with_patch_schedules(pipeline: str, budget: int | None = None) -> str:
    """`pipeline` with `schedule-patches` (the early high-resolution stage run tile by tile,
    docs/ram-budget.md) before `onnx-to-uop`; `budget`: the bytes the stage may keep live (the
    cost model's fewest-MACs plan within it), None: the smallest. Unchanged without an
    `onnx-to-uop` or with a `schedule-patches` already."""
    stages = pipeline.split(",")
    names = [stage.split("{")[0] for stage in stages]
    if "onnx-to-uop" not in names or "schedule-patches" in names:
        return pipeline
    at = names.index("onnx-to-uop")
    patches = f"schedule-patches{{budget={budget}}}" if budget else "schedule-patches"
    return ",".join((*stages[:at], patches, *stages[at:]))


def with_stage_option(pipeline: str, stage: str, key: str, value: object) -> str:
    """`pipeline` with `key=value` among `stage`'s options (its others kept), unless `key` is
    given already. First among them: one of them may hold commas (image-formats=jpeg,png), which
    the split on commas cuts and the join puts back. Unchanged without `stage`."""
    stages = pipeline.split(",")
    for at, text in enumerate(stages):
        name, _, options = text.partition("{")
        if name == stage and f"{key}=" not in options:
            stages[at] = f"{stage}{{{key}={value} {options}" if options else f"{stage}{{{key}={value}}}"
    return ",".join(stages)


def without_in_place_blocks(pipeline: str) -> str:
    """`pipeline` with `assign-layouts{in-place-blocks=false}` (its other options kept): for a
    microcontroller's build in a mode whose row asm is not the fast one or whose flash counts
    (`zant.driver.mode_pipeline`). Unchanged without `assign-layouts` or with the option given."""
    return with_stage_option(pipeline, "assign-layouts", "in-place-blocks", "false")


def with_layer_bound(pipeline: str, bound: int) -> str:
    """`pipeline` with `onnx-to-uop{layer-bound=bound}` (its other options kept): under a RAM
    budget the kernels that allocate scratch beside their operands (the first convs' padded
    copies and columns, the widened pointwise form) take it only where it fits the budget, not
    the graph's layer bound the default plan already exceeds. Unchanged without `onnx-to-uop`
    or with a bound given."""
    return with_stage_option(pipeline, "onnx-to-uop", "layer-bound", bound)


def with_in_place_layouts(pipeline: str, budget: int) -> str:
    """`pipeline` under a RAM budget of `budget` bytes keeping its channels-last kernels where
    the budget allows: the early stage patch by patch first (`schedule-patches{budget=B}`, on
    the graph as ONNX lays it out, so its tiles take the layouts of their size), then
    `assign-layouts{budget=B}` (the convolutions whose input and output exceed the budget
    together keep NCHW), and `schedule-in-place` before the planning stages to write those over
    their inputs. Unchanged without `assign-layouts` or `plan-arenas`, or with schedules already."""
    stages = pipeline.split(",")
    names = [stage.split("{")[0] for stage in stages]
    if "assign-layouts" not in names or "plan-arenas" not in names or any(
        s in names for s in (*RAM_SCHEDULE_STAGES, "schedule-patches")
    ):
        return pipeline
    at = names.index("assign-layouts")
    stages[at:at + 1] = [f"schedule-patches{{budget={budget}}}", f"assign-layouts{{budget={budget}}}"]
    return with_ram_schedules(",".join(stages), keep_layouts=True)


MCU_PIPELINE = pipeline_for("cortex-m4")
"""Every microcontroller's pipeline: scalar loops."""


def __getattr__(name: str) -> str:
    # DEFAULT_PIPELINE, the host's pipeline (vector forms: register-tiled Convs whose outputs
    # are L-lane vectors, coalescing, index-set splitting, `vectorize`), is computed on first
    # use: it asks Zig for the host CPU, which a compile for a microcontroller never needs.
    if name == "DEFAULT_PIPELINE":
        return pipeline_for("host")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
