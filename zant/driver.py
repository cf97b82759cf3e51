"""The compilation driver behind `zant compile`, `zant run` and `zant plan`: one path from .onnx
to a build.

Stages (each timed): import (with `freeze`: graph inputs made constants first) → the pass
pipeline (`zant.pipelines.pipeline_for(target)` unless given) — together `compile_to_module`,
the one compile path every tool goes through → Zig, header and plan JSON → `python -m ziglang`
build → with `firmware`, an image `NAME.elf` for a QEMU board with the inputs embedded
(`zant.backend.firmware`). Between the passes and the Zig, the plan is checked against what the
target can address and, for an image, against the board's memory (`zant.backend.limits`). Files
are written into a private staging folder and moved into the output folder only when every stage
has succeeded, so a failed compile never leaves a half-written `.zig` that looks valid.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, ModuleOp, StringAttr, TensorType
from xdsl.passes import ModulePass

from zant.backend.boards import Board, board_for
from zant.backend.build import HOT_OPTIMIZE, OPTIMIZE_MODES, ZigCompileError, ZigModule, library_file, model_modules
from zant.backend.build import TARGETS as ZIG_TARGETS
import zant.pipelines as pipelines
from zant.errors import ZantError
from zant.ir.strings import DEFAULT_STRING_CAPACITY
from zant.pipelines import MCU_PIPELINE, REACH_STAGE, pipeline_for, without_in_place_blocks  # noqa: F401 (re-exported)
from zant.signature import TensorSignature, check_inputs, complete_feeds
from zant.targets import RECORDS
from zant.dialects.onnx_attributes import INPUT_NAMES, OUTPUT_NAMES

if TYPE_CHECKING:
    import onnx

    from zant.backend.plan import PlanInfo

default_pipeline = pipeline_for
"""Kept for callers not yet moved to `zant.pipelines.pipeline_for` (the conformance runner, the
random graphs)."""

TARGETS = tuple(ZIG_TARGETS)


def __getattr__(name: str) -> str:
    # DEFAULT_PIPELINE, re-exported on first use: zant.pipelines computes it then (the host's
    # pipeline asks Zig for the host CPU).
    if name == "DEFAULT_PIPELINE":
        return pipelines.DEFAULT_PIPELINE
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class CompileOptions:
    name: str = "model"
    target: str = "host"
    optimize: str = "ReleaseFast"
    build: bool = True
    input_shapes: dict[str, list[int]] | None = None
    freeze: dict[str, np.ndarray] | None = None  # graph inputs made constants before import
    pipeline: str | None = None  # None: `pipeline_for(target)`
    plugins: tuple[str, ...] = ()  # --load-passes: files or modules with passes the pipeline names
    firmware: bool = False  # also link NAME.elf for `board` (default: the target's board)
    board: str | os.PathLike | Board | None = None  # a built-in board's name or a board file
    inputs: dict[str, np.ndarray] | None = None  # embedded in the image; missing ones are seeded
    cast_inputs: bool = False  # convert `inputs` of another element type (default: refused)
    progress: Callable[[str], None] | None = None  # told each stage as it starts ("import m.onnx")
    constants: str | None = None  # embedded | staged | external: where the constant arena lives
    # (plan-arenas' `constants` option); None: as the pipeline plans it (embedded by default)
    arena: str = "library"  # the scratch arena: the library's .bss array, or the caller's
    # (`caller`: NAME_set_arena(arena, bytes); zant.backend.c_abi.ARENA_MODES)
    float_abi: str | None = None  # an Arm library's float ABI: hard, softfp, soft (None: the
    # core's default, hard with an FPU; zant.backend.c_abi)
    runtime: str = "external"  # an MCU library's runtime symbols (memcpy, expf ...): the
    # firmware's (external) or Zig's compiler_rt in the archive (bundled); c_abi.RUNTIME_MODES
    ram_budget: int | None = None  # bytes the scratch arena may take (`--ram-budget`); with a
    # firmware board its RAM less the other RAM parts applies too (docs/ram-budget.md)
    requant_rounding: str = "exact"  # whose arithmetic the integer requantization reproduces:
    # exact (ONNX's real value, ties to even), onnxruntime, tflite, tflite-single (`requant-rounding`)
    flush_denormals: bool = False  # the host's NAME_predict flushes subnormal floats to zero
    # (`--flush-denormals`: the `flush-denormals` stage last in the pipeline; host targets only)
    string_capacity: int = DEFAULT_STRING_CAPACITY  # bytes of each element of a string graph
    # input (`--string-capacity`; a longer string is refused at the call; zant.ir.strings)
    sequence_capacity: int | None = None  # the most iterations of a Loop that builds a sequence
    # over a run-time trip count (`--sequence-capacity`; docs/sequences.md)
    image_formats: tuple[str, ...] = ()  # the compressed formats ImageDecoder decodes
    # (`--image-formats`, onnx-to-uop's `image-formats`; empty: all; docs/image-decoder.md)


@dataclass
class CompileResult:
    zig_path: Path
    header_path: Path
    plan_path: Path
    library_path: Path | None
    plan: dict
    inputs: list[TensorSignature]
    outputs: list[TensorSignature]
    sizes: dict[str, int] | None = None
    timings: dict[str, float] = field(default_factory=dict)
    firmware_path: Path | None = None
    board: Board | None = None
    firmware_sizes: dict[str, int] | None = None
    feeds: dict[str, np.ndarray] | None = None  # the inputs embedded in the image
    runtime_symbols: list[str] | None = None  # what an MCU library needs from the firmware's runtime
    kernels: dict[str, list[str]] = field(default_factory=dict)
    """Each kernel function of NAME.zig → the ONNX nodes it computes (`zant profile`)."""


def make_context() -> Context:
    """A context with the dialects a Zant pipeline uses (func, builtin, onnx, uop, xDSL's own)."""
    from xdsl.universe import Universe

    from zant.dialects import get_all_dialects

    ctx = Context()
    for name, factory in Universe.get_multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


def run_pipeline(
    module: ModuleOp, pipeline: str, ctx: Context | None = None, plugins: Sequence[str] = (),
    *, check_result: bool = True,
) -> Callable[[], None]:
    """Apply a `zant-opt`-style pass pipeline to `module`, verifying after each pass; `plugins`
    are `--load-passes` files or modules whose passes the pipeline may name. A failure names
    its pass (`zant.diagnostics`): an unknown option lists the pass's options, a module that
    stops verifying says `after pass 'X':` and shows the failing op in its context.

    Returns the check of the result (run once; later calls return at once); with
    `check_result=False` it is not run here, and the caller runs it before trusting the module
    (`zant compile` runs it while Zig builds)."""
    from zant.diagnostics import apply_passes, check_verifies

    passes, ctx = parse_pipeline(pipeline, plugins), ctx or make_context()
    # Verifying after every pass took most of the passes' time (ResNet-8 for the Cortex-M4:
    # 1.4 s of CPU against 0.9 s for the passes). The input and the result are verified; only
    # when something fails is the pipeline rerun on a copy of the input, verified after each
    # pass, so the report still names the pass that broke the module.
    check_verifies(module, None)
    snapshot = module.clone()

    def rerun_verified() -> None:
        apply_passes(passes, ctx, snapshot)  # raises the precise report

    verified = False

    def check() -> None:
        nonlocal verified
        if verified:
            return
        try:
            check_verifies(module, passes[-1].name if passes else None)
        except Exception:
            rerun_verified()
            raise
        verified = True

    try:
        apply_passes(passes, ctx, module, verify=False)
    except Exception:
        rerun_verified()
        raise
    if check_result:
        check()
    return check


def parse_pipeline(pipeline: str, plugins: Sequence[str] = ()) -> tuple[ModulePass, ...]:
    """The passes of `pipeline` (xDSL's, Zant's, installed ones and those of `plugins`); a bad
    pipeline is a `ZantError` naming the pass (so a tool can check one before a long run)."""
    from xdsl.transforms import get_all_passes as xdsl_passes

    from zant.diagnostics import parse_passes
    from zant.plugins import all_passes, load_pass_plugins

    available = {**xdsl_passes(), **all_passes()}
    available |= load_pass_plugins(plugins, available)
    return parse_passes(available, pipeline)


def graph_signature(module: ModuleOp) -> tuple[list[TensorSignature], list[TensorSignature]]:
    """The inputs and outputs of the imported `@main`, before lowering removes its arguments."""
    from zant.dialects.onnx import OUTPUT_BOUNDS_ATTR, OUTPUT_SEQUENCES_ATTR
    from zant.ir.types import numpy_dtype

    main = next(op for op in module.walk() if isinstance(op, func.FuncOp))

    def names(key: str, count: int, default: str) -> list[str]:
        attr = main.attributes.get(key)
        if isinstance(attr, ArrayAttr) and len(attr) == count:
            return [a.data for a in attr if isinstance(a, StringAttr)]
        return [f"{default}{i}" for i in range(count)]

    def signature(types, labels) -> list[TensorSignature]:
        result = []
        for t, label in zip(types, labels):
            assert isinstance(t, TensorType)
            result.append(
                TensorSignature(label, list(t.get_shape()), numpy_dtype(t.get_element_type()).name)
            )
        return result

    inputs = main.function_type.inputs.data
    outputs = main.function_type.outputs.data
    output_signatures = signature(outputs, names(OUTPUT_NAMES, len(outputs), "output"))
    bounds = main.attributes.get(OUTPUT_BOUNDS_ATTR)
    if isinstance(bounds, DenseArrayBase):  # the last output is the extents array
        for output, dim in zip(output_signatures, bounds.get_values()):
            output.bounded_dim = None if dim < 0 else int(dim)
        output_signatures[-1].extents = True
    sequences = main.attributes.get(OUTPUT_SEQUENCES_ATTR)
    if isinstance(sequences, DenseArrayBase):  # slots of run-time-length sequences (resolve-sequences)
        for output, group in zip(output_signatures, sequences.get_values()):
            output.sequence = None if group < 0 else int(group)
        output_signatures[-1].extents = True
    return signature(inputs, names(INPUT_NAMES, len(inputs), "input")), output_signatures


def resolve_graph_sequences(module: ModuleOp) -> None:
    """A graph with sequence or optional outputs has as many C ABI outputs as they hold tensors,
    which `resolve-sequences` decides, and an output computed from a sequence (ConcatFromSequence)
    may be declared with an open dimension that only its elements fix: it runs here, before the
    signature is read (the pipeline's own run then finds nothing left)."""
    from zant.dialects.onnx_types import OptionalType, SequenceType

    main = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    outputs = main.function_type.outputs.data
    if any(isinstance(t, SequenceType | OptionalType) for t in outputs) or (
        any(isinstance(t, TensorType) and not t.has_static_shape() for t in outputs)
        and any(isinstance(v.type, SequenceType | OptionalType) for o in main.body.walk() for v in o.results)
    ):
        from zant.passes.resolve_sequences import ResolveSequencesPass

        ResolveSequencesPass().apply(make_context(), module)


@contextmanager
def _stage(
    timings: dict[str, float], stage: str, progress: Callable[[str], None] | None = None, detail: str = ""
) -> Iterator[None]:
    if progress is not None:
        progress(f"{stage} {detail}".strip())
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = time.perf_counter() - start


@dataclass
class PlannedModule:
    """A model imported and run through its pipeline: the lowered, planned module every output
    (Zig, header, plan JSON) is emitted from, and the graph's signature from before lowering."""

    module: ModuleOp
    inputs: list[TensorSignature]
    outputs: list[TensorSignature]
    pipeline: str
    check: Callable[[], None] = lambda: None
    """Verifies the module (a `VerifyFailure` naming the pass that broke it); already run unless
    `compile_to_module` was told `check_result=False`."""


def compile_to_module(
    model: str | os.PathLike | bytes | onnx.ModelProto,
    target: str = "host",
    *,
    pipeline: str | None = None,
    input_shapes: dict[str, list[int]] | None = None,
    freeze: Mapping[str, np.ndarray] | None = None,
    plugins: Sequence[str] = (),
    model_dir: str | os.PathLike | None = None,
    timings: dict[str, float] | None = None,
    progress: Callable[[str], None] | None = None,
    check_result: bool = True,
    given_inputs: Mapping[str, np.ndarray] | None = None,
    cast_inputs: bool = False,
    string_capacity: int = DEFAULT_STRING_CAPACITY,
    sequence_capacity: int | None = None,
) -> PlannedModule:
    """The one compile path: import → (`freeze`) → `pipeline` (default `pipeline_for(target)`)
    → a planned module. `zant compile`/`zant run` (`compile_model`), `zant plan` and the
    conformance runner all go through it, so they report and ship the same module.

    `model` is an .onnx path, its bytes or a ModelProto (`model_dir`: where its external data
    lives, default the path's folder or the working directory); `freeze` maps graph inputs to
    the values they are frozen to (`zant.frontend.freeze`); `timings` receives the seconds of
    the "import" and "passes" stages, `progress` is told each as it starts; with
    `check_result=False` the result is verified only when the caller runs `PlannedModule.check`.
    `given_inputs` (values a caller will run the model on) are checked against the imported graph's
    inputs before the passes run, so a wrong name, shape or element type stops the compile at
    once (`zant.signature.check_inputs`; `cast_inputs` converts other element types).
    `string_capacity`: the bytes each element of a string graph input holds (`zant.ir.strings`);
    `sequence_capacity`: the most iterations of a Loop that builds a sequence over a run-time
    trip count (docs/sequences.md). Emit with `planned_json` and `zig_and_header` (or `emit_artifacts`)."""
    import onnx

    from zant.frontend.freeze import freeze_inputs
    from zant.frontend.onnx_importer import import_model_bytes

    if target not in TARGETS:
        raise ZantError(f"unknown target '{target}' (choose from {', '.join(TARGETS)})")
    timings = {} if timings is None else timings
    label = "model" if isinstance(model, (bytes, onnx.ModelProto)) else str(model)
    with _stage(timings, "import", progress, label):
        if isinstance(model, (str, os.PathLike)):
            path = Path(model)
            try:
                data = path.read_bytes()
            except OSError as error:
                raise ZantError(f"cannot read model '{model}': {error.strerror}") from None
            model_dir = os.path.dirname(os.path.abspath(path)) if model_dir is None else model_dir
        else:
            data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else model
        if freeze:
            data = freeze_inputs(parse_model(data), freeze).SerializeToString()
        module = import_model_bytes(data, str(model_dir or os.getcwd()), input_shapes, string_capacity, sequence_capacity)
        resolve_graph_sequences(module)
        inputs, outputs = graph_signature(module)
        if given_inputs:
            check_inputs(inputs, given_inputs, cast=cast_inputs, frozen=list(freeze or ()))
    pipeline_text = pipeline or pipeline_for(target)
    which = "given pipeline" if pipeline else f"default pipeline of {target}"
    with _stage(timings, "passes", progress, f"({which})"):
        check = run_pipeline(module, pipeline_text, plugins=plugins, check_result=check_result)
    return PlannedModule(module, inputs, outputs, pipeline_text, check)


def compile_pipeline(
    target: str, board: Board | None = None, constants: str | None = None,
    strategy: str | None = None, alignment: int | None = None, rounding: str = "exact",
    image_formats: Sequence[str] = (),
) -> str | None:
    """The pipeline `zant compile` runs when none is given, or None where that is the target's
    default (`pipeline_for(target)`): `plan-arenas` places the constants (`constants` staged or
    external) with `strategy` and `alignment` if given, the scratch arena is split over a
    firmware `board`'s memories, a `rounding` mode other than `exact` is
    `requant-rounding`'s, and `image_formats` (none: all) are the compressed formats
    ImageDecoder decodes. `zant plan` plans with the same pipeline."""
    from zant.dialects.onnx_attributes import ROUNDING_CHOICES

    if rounding not in ROUNDING_CHOICES:
        raise ZantError(f"unknown requantization rounding '{rounding}' (one of {', '.join(ROUNDING_CHOICES)})")
    memories = board.place_memories if board is not None else ()
    staged_or_external = constants if constants != "embedded" else None
    weight_cache = weight_cache_bytes(board) if staged_or_external is None else 0  # staged: weights in RAM
    chosen = (memories, staged_or_external, strategy is not None, alignment is not None, rounding != "exact",
              weight_cache, image_formats)
    if any(chosen):
        return pipeline_for(
            target, strategy=strategy, alignment=alignment, memories=memories, constants=staged_or_external,
            rounding=rounding, weight_cache=weight_cache, image_formats=image_formats,
        )
    return None


def weight_cache_bytes(board: Board | None) -> int:
    """The bytes of the data cache in front of a `board`'s flash when reading that flash waits
    (STM32's ART: lines of four 64-bit words), else 0: what `onnx-to-uop{weight-cache-bytes=N}`
    keeps weight rows within."""
    timing = board.flash_timing if board is not None else None
    return 32 * timing.dcache_lines if timing is not None and timing.wait_states else 0


STAGE_OPTIONS = {
    "--requant-rounding": "add requant-rounding{mode=...} to it",
    "--flush-denormals": "add flush-denormals to it",
    "--image-formats": "give its onnx-to-uop the option {image-formats=...}",
}
"""Options that choose a stage (or a stage's option) of the default pipeline, and what a given
--pipeline does for them instead."""


def options_pipeline(
    options: CompileOptions, board: Board | None, strategy: str | None = None, alignment: int | None = None
) -> str | None:
    """The pipeline `options` compile with: `--pipeline` as given, else `compile_pipeline`'s
    (None: the target's default; `strategy` and `alignment`: `plan-arenas`', as `zant plan`
    gives them) with the stages `STAGE_OPTIONS` choose (`requant-rounding` after fold-qdq,
    `flush-denormals` last), and a microcontroller's build in another mode than ReleaseFast as `mode_pipeline` says. Those options beside a `--pipeline` are a `ZantError` naming the
    stage to add to it."""
    chosen = {
        "--requant-rounding": options.requant_rounding != "exact",
        "--flush-denormals": options.flush_denormals,
        "--image-formats": bool(options.image_formats),
    }
    if options.pipeline:
        for flag in (f for f, on in chosen.items() if on):
            raise ZantError(
                f"{flag} chooses a stage of the default pipeline: with --pipeline, {STAGE_OPTIONS[flag]}"
            )
        return options.pipeline
    pipeline = compile_pipeline(
        options.target, board, options.constants, strategy, alignment, rounding=options.requant_rounding,
        image_formats=options.image_formats,
    )
    if options.flush_denormals:
        pipeline = f"{pipeline or pipeline_for(options.target)},flush-denormals"
    if options.optimize != FAST_OPTIMIZE and RECORDS[options.target].is_mcu:
        pipeline = mode_pipeline(pipeline or pipeline_for(options.target), options.target, options.optimize, options.arena)
    return pipeline


FAST_OPTIMIZE = "ReleaseFast"
"""The mode a microcontroller's row asm is built for in full (14 registers: no frame pointer)."""


def mode_pipeline(pipeline: str, target: str, optimize: str, arena: str = "library") -> str:
    """`pipeline` as a build of `target` in `optimize` mode runs it: a microcontroller's build in
    another mode than `FAST_OPTIMIZE` with `assign-layouts{in-place-blocks=false}`
    (`pipelines.without_in_place_blocks`: the widened form written over its input is fast only
    there, and costs flash), a build for size with `size_stages` last; any other as given."""
    if optimize == FAST_OPTIMIZE or not RECORDS[target].is_mcu:
        return pipeline
    return ",".join((without_in_place_blocks(pipeline), *size_stages(target, optimize, arena)))


def size_stages(target: str, optimize: str, arena: str = "library") -> tuple[str, ...]:
    """The stages a build of `target` in `optimize` mode ends with: `share-kernels` in a
    microcontroller's build for size (`build.HOT_OPTIMIZE`: one function for the kernels alike up
    to their buffers and constants, passes/share_kernels.py) with the library's scratch arena
    (a caller's is declared in each function), then `REACH_STAGE` again, so the shared kernels'
    asm ops, vector accesses and `inbounds` geps are checked as they are printed; none otherwise."""
    if optimize in HOT_OPTIMIZE and RECORDS[target].is_mcu and arena == "library":
        return ("share-kernels", REACH_STAGE)
    return ()


def parse_model(data: bytes) -> onnx.ModelProto:
    """A serialized ONNX model, parsed (the importer checks it further)."""
    import onnx
    from google.protobuf.message import DecodeError

    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as error:
        raise ZantError(f"malformed ONNX model (not a valid protobuf): {error}") from None
    return model


def planned_json(
    planned: PlannedModule, name: str, target: str, board: Board | None = None, info: PlanInfo | None = None,
    ram_budget: int | None = None,
) -> dict:
    """The plan JSON `zant compile` writes (NAME.plan.json): `checked_plan` (where the constants
    live among it, as the plan placed them), the graph's inputs and outputs and the files written."""
    from zant.backend.zig_printer import blob_file_name

    plan = checked_plan(planned.module, name, target, board, info, ram_budget)
    plan["inputs"] = [t.as_json() for t in planned.inputs]
    plan["outputs"] = [t.as_json() for t in planned.outputs]
    constant_bytes = sum(a["size"] for a in plan["arenas"] if a["role"] == "constant")
    blob = constant_bytes > 0 or plan["constants"] == "external"
    plan["files"] = sorted([f"{name}.zig", f"{name}.h", f"{name}.plan.json", *([blob_file_name(name)] if blob else [])])
    return plan


def compile_model(model_path: str | os.PathLike, out_dir: str | os.PathLike, options: CompileOptions) -> CompileResult:
    """Compile an .onnx file into `out_dir` (NAME.zig, NAME.h, NAME.plan.json, and the build)."""
    from zant.backend.names import validate_prefix

    name = validate_prefix(options.name)
    if options.target not in TARGETS:
        raise ZantError(f"unknown target '{options.target}' (choose from {', '.join(TARGETS)})")
    if options.optimize not in OPTIMIZE_MODES:
        raise ZantError(f"unknown optimize mode '{options.optimize}' (choose from {', '.join(OPTIMIZE_MODES)})")
    from zant.dialects.abi import CONSTANT_MODES

    if options.constants is not None and options.constants not in CONSTANT_MODES:
        raise ZantError(f"unknown constants mode '{options.constants}' (choose from {', '.join(CONSTANT_MODES)})")
    from zant.backend.c_abi import ARENA_MODES, RUNTIME_MODES, check_float_abi, runtime_symbols

    if options.arena not in ARENA_MODES:
        raise ZantError(f"unknown arena mode '{options.arena}' (choose from {', '.join(ARENA_MODES)})")
    if options.runtime not in RUNTIME_MODES:
        raise ZantError(f"unknown runtime '{options.runtime}' (choose from {', '.join(RUNTIME_MODES)})")
    if options.float_abi is not None:
        check_float_abi(options.target, options.float_abi)
    budget = options.ram_budget
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 0):
        raise ZantError(f"the RAM budget is a number of bytes (0 or more), got {budget!r}")
    board = None
    if options.firmware:
        if not options.build:
            raise ZantError("a firmware image needs a build (drop --no-build)")
        board = board_for(options.target, options.board)
    elif options.board is not None:
        raise ZantError("--board names the board of a firmware image (add --firmware)")

    timings: dict[str, float] = {}
    # With a build, the passes' result is verified while Zig builds it (ResNet-8 for the
    # Cortex-M4: the check is 0.33 s of CPU, Zig's LLVM 1.5 s on the other core); emitting an
    # unverified module is safe: when emitting fails, the check runs first and reports a module
    # that does not verify as such, naming the pass that broke it.
    planned = fitted_module(model_path, options, board, timings, check_result=not options.build)
    inputs, outputs, module = planned.inputs, planned.outputs, planned.module
    with _stage(timings, "emit", options.progress, f"{name}.zig, {name}.h, {name}.plan.json"):
        from zant.backend.plan import describe_plan

        try:
            info = describe_plan(module)  # read once for the plan JSON, the header and the Zig
            plan = planned_json(planned, name, options.target, board, info, options.ram_budget)
            if options.constants is not None and plan["constants"] != options.constants:
                raise ZantError(
                    f"--constants {options.constants}, but the pipeline placed the constant arena "
                    f"{plan['constants']}: give its plan-arenas constants={options.constants}"
                )
            # A large module is also printed in parts for the build (`zig_files`), by its size
            # alone: the build decides how many run at once.
            header_options = {
                "target": options.target, "float_abi": options.float_abi, "optimize": options.optimize,
                "runtime": options.runtime,
            }
            from zant.backend.plan import emit_header
            from zant.backend.zig_printer import hot_file_name, print_files

            # A build for size prints the kernels mark-hot-kernels marked as a module of their
            # own, which it builds for speed (`build.HOT_OPTIMIZE`); users get NAME.zig whole.
            hot = options.build and options.optimize in HOT_OPTIMIZE
            printed = print_files(module, name, info, options.build, options.arena, hot)
            sources = printed.files
            header = emit_header(module, name, info, arena=options.arena, **header_options)
        except Exception:
            planned.check()
            raise

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ZantError(f"output folder {out} is a file")
    try:
        out.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".zant-", dir=out))
    except OSError as error:  # read-only: name the user's folder, not the staging folder inside it
        raise ZantError(f"cannot write into the output folder {out}: {error.strerror}") from None
    try:
        parts = [file for file in sources if file.startswith(f"{name}.unit") and file.endswith(".zig")]
        files = {
            **sources,
            f"{name}.h": header,
            f"{name}.plan.json": json.dumps(plan, indent=2) + "\n",
        }
        for file_name, content in files.items():
            if isinstance(content, bytes):
                (staging / file_name).write_bytes(content)
            else:
                (staging / file_name).write_text(content, encoding="utf-8")
        library = None
        sizes = None
        firmware = feeds = symbols = None
        try:
            if options.build:
                kind = "shared library" if options.target == "host" else "static library"
                with _stage(timings, "build", options.progress, f"{options.optimize} {kind} for {options.target}"):
                    library = build_artifact(
                        staging / f"{name}.zig", name, options.target, options.optimize, meanwhile=planned.check,
                        parts=[staging / part for part in parts], float_abi=options.float_abi,
                        bundle_runtime=options.runtime == "bundled",
                        modules=model_modules(staging, name, options.optimize),
                    )
                    sizes = section_sizes(library)
                if options.target != "host":  # the header lists what the library needs
                    from zant.backend.plan import emit_header

                    symbols = runtime_symbols(library)
                    (staging / f"{name}.h").write_text(
                        emit_header(module, name, info, runtime_symbols=symbols, arena=options.arena, **header_options),
                        encoding="utf-8",
                    )
                for part in parts:  # users get NAME.zig, which builds the same library
                    (staging / part).unlink()
                from zant.backend.packaging import write_package  # CMake and Zig package files

                write_package(staging, name, options.target, options.optimize, plan["plan_hash"], options.float_abi)
            if board is not None:
                with _stage(timings, "firmware", options.progress, f"image {name}.elf for {board.label}"):
                    feeds, _ = complete_feeds(inputs, options.inputs or {})
                    firmware = build_image(
                        staging, name, inputs, outputs, feeds, board, options.optimize, plan["constants"],
                        caller_arena(plan, options.arena),
                    )
            if (staging / hot_file_name(name)).is_file():  # users get NAME.zig whole, as --no-build
                (staging / hot_file_name(name)).unlink()
                (staging / f"{name}.zig").write_text(
                    print_files(module, name, info, False, options.arena).files[f"{name}.zig"], encoding="utf-8"
                )
        except ZigCompileError as error:  # a Zant bug: keep the sources for the report
            for path in staging.iterdir():
                if path.is_file():
                    os.replace(path, out / path.name)
            raise error.kept_in(out) from error
        for path in staging.iterdir():
            if path.is_file():
                os.replace(path, out / path.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)

    return CompileResult(
        zig_path=out / f"{name}.zig",
        header_path=out / f"{name}.h",
        plan_path=out / f"{name}.plan.json",
        library_path=None if library is None else out / library.name,
        plan=plan,
        inputs=inputs,
        outputs=outputs,
        sizes=sizes,
        timings=timings,
        firmware_path=None if firmware is None else out / firmware.name,
        board=board,
        firmware_sizes=None if firmware is None else image_sizes(out / firmware.name),
        feeds=feeds,
        runtime_symbols=symbols,
        kernels=printed.kernels,
    )


def emit_artifacts(module: ModuleOp, name: str) -> tuple[dict[str, str | bytes], str, dict]:
    """The source files (`NAME.zig` and its constant blob `NAME.weights.bin`, by file name), the
    C header and the plan of a lowered, planned module."""
    from zant.backend.plan import emit_plan_json

    return (*zig_and_header(module, name), emit_plan_json(module, name))


def fitted_module(
    model_path: str | os.PathLike, options: CompileOptions, board: Board | None,
    timings: dict[str, float] | None = None, *, strategy: str | None = None, alignment: int | None = None,
    check_result: bool = True,
) -> PlannedModule:
    """The planned module `zant compile` emits for `options` and `board` (a firmware image's, or
    None): the options' pipeline (`options_pipeline`; `strategy`, `alignment`: plan-arenas'),
    and under a RAM budget or a board the fastest plan that fits (`fit_ram`). `zant plan` and
    `zant report` plan through it too, so they show the plan the image ships."""
    timings = {} if timings is None else timings
    pipeline = options_pipeline(options, board, strategy, alignment)
    planned = compile_to_module(
        model_path, options.target, pipeline=pipeline, input_shapes=options.input_shapes,
        freeze=options.freeze, plugins=options.plugins, timings=timings, progress=options.progress,
        check_result=check_result, given_inputs=options.inputs, cast_inputs=options.cast_inputs,
        string_capacity=options.string_capacity, sequence_capacity=options.sequence_capacity,
    )
    if options.pipeline is None and (options.ram_budget is not None or board is not None):
        planned = fit_ram(
            planned, model_path, pipeline or pipeline_for(options.target), options, board, timings, check_result
        )
    return planned


def fit_ram(
    planned: PlannedModule, model_path: str | os.PathLike, pipeline: str, options: CompileOptions,
    board: Board | None, timings: dict[str, float], check_result: bool = True,
) -> PlannedModule:
    """The fastest plan that fits the RAM budget and `board`'s RAM: `planned` (the default
    pipeline's) if it fits; else the first that fits of the same pipeline with its channels-last
    kernels where the budget allows (`pipelines.with_in_place_layouts`), with the early stage
    patch by patch (`pipelines.with_patch_schedules`), with the slower schedules below the layer
    bound (`pipelines.with_ram_schedules`), then with both; else the smallest of them, so that a
    miss names the smallest scratch arena Zant reaches (docs/ram-budget.md). `check_result`: as
    `compile_to_module`'s, for each module compiled here."""
    from zant.backend.plan import describe_plan
    from zant.pipelines import with_in_place_layouts, with_layer_bound, with_patch_schedules, with_ram_schedules

    def scratch_if_missed(candidate: PlannedModule) -> int | None:
        info = describe_plan(candidate.module)
        try:
            checked_plan(candidate.module, options.name, options.target, board, info, options.ram_budget)
        except ZantError:
            return info.scratch_size
        return None

    def compiled(with_pipeline: str) -> PlannedModule:
        # Each kernel's own scratch within the budget (`with_layer_bound`), not the layer bound.
        if allowance:
            with_pipeline = with_layer_bound(with_pipeline, allowance)
        return compile_to_module(
            model_path, options.target, pipeline=with_pipeline, input_shapes=options.input_shapes,
            freeze=options.freeze, plugins=options.plugins, timings=timings, progress=options.progress,
            check_result=check_result, given_inputs=options.inputs, cast_inputs=options.cast_inputs,
            string_capacity=options.string_capacity, sequence_capacity=options.sequence_capacity,
        )

    smallest = scratch_if_missed(planned)
    if smallest is None:
        return planned
    best = planned
    allowance = scratch_allowance(planned.module, options, board)

    def fitting(with_pipeline: str) -> tuple[PlannedModule, bool]:
        """The module of `with_pipeline` and whether it fits; kept as `best` if the smallest.
        A miss is tried again without the kernels' own copies (`KERNEL_COPIES_OFF`): each
        fits the budget alone, but not always beside what a schedule keeps live with it (a
        patch's finished strips)."""
        nonlocal best, smallest
        candidate = compiled(with_pipeline)
        reached = scratch_if_missed(candidate)
        if reached is not None and allowance:
            bare = compiled(with_layer_bound(with_pipeline, KERNEL_COPIES_OFF))
            if (bare_reached := scratch_if_missed(bare)) is None or bare_reached < reached:
                candidate, reached = bare, bare_reached
        if reached is not None and reached < smallest:
            best, smallest = candidate, reached
        return candidate, reached is None

    # First the channels-last kernels `assign-layouts` chooses, kept where the allowance lets
    # them (NCHW only where a convolution must write over its input), then everywhere with the
    # early stage patch by patch; `with_ram_schedules` drops them all for the NCHW nests its
    # line and plane buffers rewrite (docs/ram-budget.md: VWW under 22,118 B).
    in_place = with_in_place_layouts(pipeline, allowance) if allowance else pipeline
    for kept in dict.fromkeys((in_place, with_patch_schedules(pipeline, allowance))):
        if kept != pipeline:
            candidate, fits = fitting(kept)
            if fits:
                return candidate
    scheduled = with_ram_schedules(pipeline)
    if scheduled == pipeline:
        return best
    again, fits = fitting(scheduled)
    if fits:
        return again
    # Still over: the early stage patch by patch too, first the plan with the fewest MACs the
    # cost model puts within the bytes the scratch arena may take, then the smallest.
    for budget in dict.fromkeys((scratch_allowance(again.module, options, board), None)):
        patched = with_patch_schedules(scheduled, budget)
        if patched == scheduled:
            break
        candidate, fits = fitting(patched)
        if fits:
            return candidate
    return best


KERNEL_COPIES_OFF = 1
"""The `onnx-to-uop{layer-bound}` under which no kernel copies an operand beside it (the first
convs' columns, the widened pointwise form): `fit_ram`'s last resort for a plan they overflow."""


def scratch_allowance(module: ModuleOp, options: CompileOptions, board: Board | None) -> int | None:
    """The bytes the scratch arena may take under `options.ram_budget` and `board`'s RAM (less
    what else of the planned `module` the board's RAM holds); None if neither bounds it."""
    from zant.backend.firmware import MIN_STACK
    from zant.backend.limits import ram_parts
    from zant.backend.plan import emit_plan_json

    limits = [options.ram_budget] if options.ram_budget is not None else []
    if board is not None:
        others = ram_parts(emit_plan_json(module, options.name), MIN_STACK)
        limits.append(board.ram.size - sum(size for label, size in others if label != "scratch arena"))
    return max(1, min(limits)) if limits else None


def checked_plan(
    module: ModuleOp, name: str, target: str, board: Board | None = None, info: PlanInfo | None = None,
    ram_budget: int | None = None,
) -> dict:
    """The plan JSON of a planned module, once it is known to fit `target` (`ram_budget`, the
    bytes its scratch arena may take, and `board`'s memory for a firmware image): checked before
    any Zig is printed, so an impossible model stops here."""
    from zant.backend.firmware import MIN_STACK
    from zant.backend.limits import check_board_memory, check_ram_budget, check_target_limits
    from zant.backend.plan import emit_plan_json

    plan = emit_plan_json(module, name, info)
    check_target_limits(module, plan, target)
    check_ram_budget(plan, ram_budget)
    if board is not None:
        check_board_memory(plan, board, MIN_STACK)
    return plan


def zig_and_header(
    module: ModuleOp, name: str, info: PlanInfo | None = None, units: bool = False, *, arena: str = "library",
    **header: object,
) -> tuple[dict[str, str | bytes], str]:
    """The source files (`NAME.zig` and, if the model has constants, `NAME.weights.bin`) and the
    C header of a lowered, planned module, its constant arena where the plan placed it
    (embedded, staged or external: `plan-arenas{constants=...}`); `info`: its `describe_plan`,
    if known (it is read once). With `units`, a large module's build units too
    (`zig_printer.zig_files`: `NAME.unit0.zig` …, for the build only). `arena`: the scratch
    arena's owner (`c_abi.ARENA_MODES`); `header`: `emit_header`'s target, float_abi, optimize, runtime."""
    from zant.backend.plan import emit_header
    from zant.backend.zig_printer import zig_files

    return zig_files(module, name, info, units, arena), emit_header(module, name, info, arena=arena, **header)


def build_artifact(
    zig_path: Path, name: str, target: str, optimize: str, meanwhile: Callable[[], None] | None = None,
    parts: Sequence[Path] = (), float_abi: str | None = None, bundle_runtime: bool = False,
    modules: Sequence[ZigModule] = (),
) -> Path:
    """Build the generated file: a shared library for the host, a static library for an MCU
    (from `parts`, its build units, if given: `zig_files`; or from `modules`, its hot kernels
    apart: `build.model_modules`); `meanwhile` runs while Zig does (what it raises stops the build)."""
    from zant.backend.build import start_build

    out_path = zig_path.parent / library_file(name, target)
    kind = "shared" if target == "host" else "static"
    build = start_build(
        zig_path, out_path, target, optimize, kind, parts=parts, float_abi=float_abi, bundle_runtime=bundle_runtime,
        modules=modules,
    )
    if meanwhile is not None:
        try:
            meanwhile()
        except BaseException:
            build.cancel()
            raise
    return build.wait()


def build_image(
    folder: Path,
    name: str,
    inputs: list[TensorSignature],
    outputs: list[TensorSignature],
    feeds: dict[str, np.ndarray],
    board: Board,
    optimize: str,
    constants: str = "embedded",
    arena: tuple[int, int] | None = None,
) -> Path:
    """Write and link the firmware image of the model built in `folder` (`arena`: the size and
    alignment of the caller's scratch arena, which the image then hands it: `caller_arena`)."""
    from zant.backend.firmware import build_firmware, write_firmware

    root = write_firmware(folder, name, inputs, outputs, [feeds[t.name] for t in inputs], board, constants, arena)
    return build_firmware(root, name, board, optimize)


def caller_arena(plan: dict, arena: str) -> tuple[int, int] | None:
    """The size and alignment of the scratch arena a model compiled with `arena` ("caller")
    takes from its caller (the plan's scratch arena in no other memory), or None ("library")."""
    if arena != "caller":
        return None
    scratch = next((a for a in plan["arenas"] if a["role"] == "scratch" and "memory" not in a), None)
    return (0, 16) if scratch is None else (scratch["size"], scratch["alignment"])


def image_sizes(path: Path) -> dict[str, int]:
    from zant.backend.firmware import image_sizes as read_sizes

    return read_sizes(path)


def section_sizes(path: Path) -> dict[str, int]:
    """The library's section sizes: the model's code and data (a bundled runtime's
    `compiler_rt.o`, which a firmware links only in part, left out)."""
    from zant.backend.archive import MAGIC, read_members
    from zant.backend.elf import SECTIONS, elf_section_sizes
    from zant.backend.elf import section_sizes as read_sizes

    data = path.read_bytes()
    if not data.startswith(MAGIC):
        return read_sizes(path)
    total = dict.fromkeys(SECTIONS, 0)
    for name, body in read_members(data):
        if body[:4] == b"\x7fELF" and name != "compiler_rt.o":
            for key, value in elf_section_sizes(body).items():
                total[key] += value
    return total
