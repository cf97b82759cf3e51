"""`zant`: compile an ONNX model to Zig, build it, and run it against the ONNX reference.

    zant compile MODEL.onnx -o OUTDIR --name NAME [--target T] [-O MODE] [--no-build] [--quiet]
                 [--freeze NAME=file.npy ...] [--firmware [--board B] [--input NAME=file.npy ...]]
    zant run MODEL.onnx [--target T] [--board B] [--safe | -O MODE] [--input NAME=file.npy ...]
    zant plan MODEL.onnx [--target T] [--board B] [--input-shape ...] [--freeze ...] [--svg FILE]
    zant profile MODEL.onnx [--target T] [--board B] [-O MODE] [--svg FILE]   instructions per node
    zant report MODEL.onnx [--target T] [--board B] [-o report.html]   one HTML page per model
    zant lit-config [FOLDER]     a lit.cfg for FileCheck tests of your own passes
    zant --version

An --input array must have its input's shape and element type (--cast-inputs converts other
types); inputs are checked before anything is built.

A board B is a built-in board's name or a board file (`zant.backend.boards`); without --target,
the board's core is the target. `zant run` tells each stage on stderr as it starts; `zant compile`
does when stderr is a terminal, unless --quiet (`zant.progress`). `zant compile`
and `zant run` compile and run through the Python API (`zant.api`), so the two cannot diverge.

Errors in the user's input print one line `zant: error: ...` and exit with status 1; `--debug`
shows the Python traceback instead.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import time
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from zant.api import compile_with_options
from zant.backend.boards import BOARDS, Board, board_for, find_board
from zant.backend.build import ZigCompileError
from zant.backend.c_abi import ARENA_MODES, FLOAT_ABIS, RUNTIME_MODES
from zant.dialects.abi import CONSTANT_MODES
from zant.driver import (
    OPTIMIZE_MODES,
    TARGETS,
    CompileOptions,
    CompileResult,
)
from zant.errors import ZantError, run_cli
from zant.ir.strings import DEFAULT_STRING_CAPACITY
from zant.progress import stage_reporter


def _add_flush_denormals(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--flush-denormals", action="store_true",
        help="host targets: NAME_predict flushes subnormal floats to zero for the call (MXCSR FTZ/DAZ, "
        "AArch64 FPCR.FZ; the caller's setting restored on return), against the up to 100x slowdown of "
        "subnormal arithmetic; values below 1.2e-38 become 0 (default: off, IEEE subnormals; "
        "docs/measurements.md)",
    )


def _add_ram_budget(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ram-budget", type=int, metavar="BYTES",
        help="the most bytes the scratch arena may take: the compile fails, naming the smallest scratch "
        "arena it reaches and the bytes over, when no plan fits (default: no budget; with --firmware the "
        "board's RAM less the stack, outputs and other arenas applies in any case; docs/ram-budget.md)",
    )


IMAGE_FORMATS = ("jpeg", "png", "tiff", "jp2", "webp")
"""The compressed formats ImageDecoder can decode (the keys of `onnx_to_uop.image.DECODERS`,
which a test holds this to: the CLI does not import the lowering to build its help)."""


def _image_formats(text: str) -> tuple[str, ...]:
    formats = tuple(f.strip() for f in text.split(",") if f.strip())
    unknown = [f for f in formats if f not in IMAGE_FORMATS]
    if unknown or not formats:
        raise argparse.ArgumentTypeError(
            f"names a comma-separated list of {', '.join(IMAGE_FORMATS)}; got '{text}'"
        )
    return tuple(dict.fromkeys(formats))


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    """The options of `zant plan` and `zant report` that change the compiled module as they
    change `zant compile`'s: the model and its shared options, the stages the default
    pipeline gains (`--requant-rounding`, `--flush-denormals`) and the RAM budget the plan meets."""
    _add_common(parser)
    _add_requant_rounding(parser)
    _add_flush_denormals(parser)
    _add_ram_budget(parser)


def _add_requant_rounding(parser: argparse.ArgumentParser) -> None:
    from zant.dialects.onnx_attributes import ROUNDING_CHOICES

    parser.add_argument(
        "--requant-rounding", choices=ROUNDING_CHOICES, default="exact",
        help="whose arithmetic the integer requantization of a quantized model reproduces bit for bit: "
        "exact (the real value rounded half to even, as ONNX's QuantizeLinear defines it; the default), "
        "onnxruntime (its CPU kernels' float32 scale multiply), tflite (TFLite's reference kernels' "
        "doubling high multiply and rounding shift), tflite-single (the same built with "
        "TFLITE_SINGLE_ROUNDING) or litert (as LiteRT's BUILTIN_REF kernels: fully connected layers "
        "rounded once, the rest as tflite); docs/int8.md",
    )


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="the .onnx model")
    parser.add_argument(
        "--input-shape",
        action="append",
        metavar="NAME=D0xD1x...",
        help="fix the shape of an input with symbolic dimensions (repeatable; default: none, "
        "a symbolic dimension is an error)",
    )
    parser.add_argument(
        "--string-capacity",
        type=int,
        default=DEFAULT_STRING_CAPACITY,
        metavar="BYTES",
        help="the bytes of UTF-8 each element of a string graph input holds (a longer string is "
        f"refused at the call, never cut; default: {DEFAULT_STRING_CAPACITY}; docs/strings.md)",
    )
    parser.add_argument(
        "--sequence-capacity",
        type=int,
        default=None,
        metavar="N",
        help="the most iterations a Loop that builds a sequence runs when its trip count or "
        "condition is only known at run time (more is an error status at the call; default: "
        "none, such a Loop is a compile error; docs/sequences.md)",
    )
    parser.add_argument(
        "--image-formats", type=_image_formats, default=None, metavar="FORMAT,...",
        help="the compressed formats an ImageDecoder node decodes, of "
        f"{', '.join(IMAGE_FORMATS)}: the others' decoders stay out of the code and flash, and an image "
        "in them is refused at run time with a status (BMP and PPM are always read; default: all; "
        "docs/image-decoder.md)",
    )
    parser.add_argument(
        "--freeze",
        action="append",
        metavar="NAME=FILE.npy",
        help="make graph input NAME a constant with this value before compiling; the array must "
        "have the input's shape and element type (repeatable; default: none)",
    )
    parser.add_argument(
        "--pipeline",
        default=None,
        help="pass pipeline to run (zant-opt -p syntax; default: the target's)",
    )
    parser.add_argument(
        "--load-passes",
        action="append",
        default=[],
        metavar="FILE.py|MODULE",
        help="register the ModulePass classes of a Python file or module, for --pipeline (repeatable; default: none)",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")


def add_cast_inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cast-inputs", action="store_true",
        help="convert an --input array of another element type to the input's (default: refuse it, "
        "e.g. a float64 or uint8 image for a float32 input)",
    )


def add_quiet(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-q", "--quiet", action="store_true",
        help="print no stage lines on stderr (default: each stage as it starts, when stderr is a terminal)",
    )


def _add_inputs(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("--input", action="append", metavar="NAME=FILE.npy", help=help_text)
    add_cast_inputs(parser)
    parser.add_argument(
        "--board",
        metavar="NAME|FILE.toml",
        help=f"board of the firmware image: {', '.join(BOARDS)}, or a board file "
        "(default: the target's; without --target, the board's core is the target)",
    )


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="zant", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"zant {package_version()}")
    commands = parser.add_subparsers(dest="command", required=True)

    compile_cmd = commands.add_parser("compile", help="compile a model to Zig and build it")
    _add_common(compile_cmd)
    compile_cmd.add_argument("-o", "--output-dir", required=True, help="folder for the outputs (required)")
    compile_cmd.add_argument(
        "--name", default="model", help="symbol prefix and file name (a C identifier; default: model)"
    )
    compile_cmd.add_argument("--target", choices=TARGETS, help="default: host, or the core of --board")
    compile_cmd.add_argument(
        "-O", "--optimize", default="ReleaseFast", choices=OPTIMIZE_MODES, help="build mode (default: ReleaseFast)"
    )
    compile_cmd.add_argument("--no-build", action="store_true", help="write the sources only")
    add_quiet(compile_cmd)
    compile_cmd.add_argument(
        "--constants", choices=CONSTANT_MODES,
        help="the weights: embedded in the image (NAME.weights.bin read by @embedFile; the default), "
        "external (the firmware places NAME.weights.bin and passes its address to NAME_init) or "
        "staged (copied from flash into RAM by NAME_init)",
    )
    compile_cmd.add_argument(
        "--arena", choices=ARENA_MODES, default="library",
        help="the scratch arena: the library's own .bss array (library, the default) or memory the caller "
        "hands it with NAME_set_arena(arena, bytes), NAME_ARENA_SIZE bytes aligned to NAME_ARENA_ALIGN, "
        "shareable by models that never run at once (caller)",
    )
    compile_cmd.add_argument(
        "--float-abi", choices=FLOAT_ABIS,
        help="an Arm library's float ABI, as gcc's -mfloat-abi: hard (floats in FPU registers), softfp (FPU "
        "code, floats in core registers), soft (no FPU code) (default: hard on a core with an FPU, else soft)",
    )
    compile_cmd.add_argument(
        "--runtime", choices=RUNTIME_MODES, default="external",
        help="an MCU library's runtime symbols (memcpy, memset, expf ...): the firmware's C library, libm and "
        "libgcc, listed in NAME.h (external, the default), or Zig's compiler_rt inside the archive, weak, "
        "for -nostdlib firmware linked with --gc-sections (bundled)",
    )
    compile_cmd.add_argument(
        "--firmware", action="store_true", help="also link OUTDIR/NAME.elf, a QEMU image running the model"
    )
    _add_ram_budget(compile_cmd)
    _add_inputs(
        compile_cmd, "an input embedded in the firmware (repeatable; default: random values, seeded)"
    )
    _add_requant_rounding(compile_cmd)
    _add_flush_denormals(compile_cmd)

    run_cmd = commands.add_parser(
        "run", help="compile for the host (or an MCU under QEMU), run, compare with the reference"
    )
    _add_common(run_cmd)
    run_cmd.add_argument(
        "--target", choices=TARGETS, help="an MCU target runs under QEMU (default: host, or the core of --board)"
    )
    _add_inputs(run_cmd, "an input tensor (repeatable; default: random values, seeded)")
    run_cmd.add_argument("-O", "--optimize", choices=OPTIMIZE_MODES, help="build mode (default: ReleaseFast)")
    run_cmd.add_argument(
        "--safe", action="store_true", help="-O ReleaseSafe: trap on out-of-bounds accesses and overflow"
    )
    run_cmd.add_argument(
        "--constants", choices=CONSTANT_MODES,
        help="where the weights live, as zant compile's option (the run calls NAME_init first; default: embedded)",
    )
    _add_requant_rounding(run_cmd)
    _add_flush_denormals(run_cmd)

    from zant.tools.conformance import add_conformance_command

    from zant.plan_report import add_plan_command

    from zant.tools.lit_config import add_lit_config_command
    from zant.tools.profile import add_profile_command
    from zant.tools.report import add_report_command

    add_plan_command(commands, _add_model_options)
    _add_ram_budget(add_profile_command(commands))
    add_report_command(commands, _add_model_options)
    add_conformance_command(commands)
    add_lit_config_command(commands)
    return parser


def package_version() -> str:
    """The installed package's version (pyproject.toml's, through importlib.metadata)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("zant")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def _options(args: argparse.Namespace, **overrides) -> CompileOptions:
    module_options = {
        key: getattr(args, key) for key in ("requant_rounding", "flush_denormals", "ram_budget") if hasattr(args, key)
    }
    options = CompileOptions(
        input_shapes=_input_shapes(args), freeze=_read_arrays(args.freeze, "--freeze"),
        cast_inputs=getattr(args, "cast_inputs", False),
        string_capacity=getattr(args, "string_capacity", DEFAULT_STRING_CAPACITY),
        sequence_capacity=getattr(args, "sequence_capacity", None),
        image_formats=getattr(args, "image_formats", None) or (),
        **{**module_options, **overrides}
    )
    if args.pipeline:
        options.pipeline = args.pipeline
    options.plugins = tuple(args.load_passes)
    return options


def format_summary(result: CompileResult, target: str, optimize: str) -> str:
    arenas = {a["role"]: a["size"] for a in result.plan.get("arenas", [])}
    blobs = [f for f in result.plan.get("files", []) if f.endswith(".weights.bin")]
    lines = [
        f"wrote {result.zig_path}, {', '.join([*blobs, result.header_path.name, result.plan_path.name])}",
        f"scratch arena   {arenas.get('scratch', 0):>10,} bytes (lower bound {result.plan.get('lower_bound_bytes', 0):,})",
        f"  of it float   {result.plan.get('float_scratch_bytes', 0):>10,} bytes",
        f"constant arena  {arenas.get('constant', 0):>10,} bytes ({result.plan.get('constants', 'embedded')})",
        f"arenas in RAM   {result.plan.get('ram_arena_bytes', 0):>10,} bytes",
    ]
    if result.library_path is not None:
        lines.append(f"built {result.library_path} ({target}, {optimize})")
    if result.sizes is not None:
        lines.append(
            "sections        "
            + "  ".join(f"{k} {result.sizes.get(k, 0):,}" for k in (".text", ".rodata", ".data", ".bss"))
        )
    if result.runtime_symbols is not None:  # an MCU library: what the firmware's link provides
        symbols = result.runtime_symbols
        lines.append(f"runtime symbols {', '.join(symbols) + f' (in {result.header_path.name})' if symbols else 'none'}")
    lines.append("time            " + "  ".join(f"{k} {v:.2f}s" for k, v in result.timings.items()))
    return "\n".join(lines)


def _board_and_target(args: argparse.Namespace) -> tuple[Board | None, str]:
    """The --board (a name or a file) and the target: --target, else the board's core, else host."""
    board = None if args.board is None else find_board(args.board)
    return board, args.target or (board.target if board else "host")


def cmd_compile(args: argparse.Namespace) -> int:
    if (args.input or args.board) and not args.firmware:
        raise ZantError("--input and --board describe a firmware image: add --firmware")
    board, target = _board_and_target(args)
    options = _options(
        args, name=args.name, target=target, optimize=args.optimize, build=not args.no_build,
        constants=args.constants, arena=args.arena, float_abi=args.float_abi, runtime=args.runtime,
        firmware=args.firmware, board=board, inputs=_read_inputs(args),
        progress=stage_reporter(quiet=args.quiet),
    )
    result = compile_with_options(args.model, options, args.output_dir).result
    print(format_summary(result, target, args.optimize))
    if result.firmware_path is not None:
        print(format_firmware(result))
    return 0


def format_firmware(result: CompileResult, kept: bool = True) -> str:
    """The image's line of the summary; `kept` False when it was built in a folder since deleted."""
    sizes = result.firmware_sizes or {}
    assert result.board is not None
    where = f"{result.firmware_path} " if kept else ""
    return (
        f"firmware        {where}({result.board.name}): flash {sizes['flash']:,} bytes, "
        f"static RAM {sizes['static_ram']:,} bytes (+ stack)"
    )


def _input_shapes(args: argparse.Namespace) -> dict[str, list[int]]:
    # zant-opt's module is imported only when the option is given: it loads xDSL's opt driver,
    # which `zant compile` does not otherwise need (25 ms of its start).
    if not args.input_shape:
        return {}
    from zant.tools.zant_opt import parse_input_shapes

    return parse_input_shapes(args.input_shape)


def _read_inputs(args: argparse.Namespace) -> dict[str, np.ndarray]:
    return _read_arrays(args.input, "--input")


def _read_arrays(specs: Sequence[str] | None, option: str) -> dict[str, np.ndarray]:
    """`NAME=FILE.npy` options as name → array."""
    given: dict[str, np.ndarray] = {}
    for spec in specs or ():
        name, sep, path = spec.partition("=")
        if not sep or not name:
            raise ZantError(f"invalid {option} '{spec}': expected NAME=FILE.npy")
        try:
            given[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as error:
            what = "input" if option == "--input" else "the value of"
            raise ZantError(f"cannot read {what} '{name}' from {path}: {error}") from error
    return given


def _report_made_up(result: CompileResult, given: dict[str, np.ndarray], feeds: dict[str, np.ndarray]) -> None:
    for signature in result.inputs:
        if signature.name not in given:
            kind = {"f": "random normal", "b": "random bool"}.get(np.dtype(signature.dtype).kind, "random integers")
            print(f"input '{signature.name}': {kind} {list(feeds[signature.name].shape)}")


def _progress(line: str) -> None:
    print(f"zant: {line}", file=sys.stderr, flush=True)


def _run_mode(args: argparse.Namespace) -> str:
    if args.safe and args.optimize not in (None, "ReleaseSafe"):
        raise ZantError(f"--safe means -O ReleaseSafe, not -O {args.optimize}: give one of them")
    return "ReleaseSafe" if args.safe else args.optimize or "ReleaseFast"


def cmd_run(args: argparse.Namespace) -> int:
    from zant.runtime import caller_outputs, complete_feeds, reference_for

    started = time.perf_counter()
    given = _read_inputs(args)
    optimize = _run_mode(args)
    board, target = _board_and_target(args)
    on_mcu = target != "host"
    if board is not None and not on_mcu:
        raise ZantError("--board needs an MCU --target")
    if on_mcu:
        board = board_for(target, board)
        if board.machine is None:
            raise ZantError(
                f"board '{board.label}' names no QEMU machine to run on: add one to its file "
                "(qemu = \"mps2-an386\"), or build its image with `zant compile --firmware`"
            )
    where = f"{target} on {board.label} under QEMU" if board else target
    checked = optimize in ("ReleaseSafe", "Debug")
    checks = "bounds and overflow checked" if checked else "--safe adds bounds and overflow checks"
    _progress(f"building {optimize} for {where} ({checks})")
    with tempfile.TemporaryDirectory(prefix="zant-run-") as out_dir:
        options = _options(
            args, name="model", optimize=optimize, target=target, constants=args.constants,
            firmware=on_mcu, board=board, inputs=given, progress=_progress,
        )
        try:
            compiled = compile_with_options(args.model, options, out_dir)
            result = compiled.result
        except ZigCompileError as error:  # a Zant bug: the report points at sources that outlive the run
            kept = Path(tempfile.mkdtemp(prefix="zant-run-failed-"))
            for path in Path(out_dir).iterdir():
                if path.is_file():
                    shutil.copy(path, kept)
            raise error.kept_in(kept) from error
        # before running: a model nothing can check fails now
        reference_model = reference_for(args.model, options.input_shapes)
        if on_mcu:
            assert result.feeds is not None and result.board is not None and result.firmware_path
            feeds = result.feeds
            _report_made_up(result, given, feeds)
            _progress(f"run on {result.board.machine} under QEMU")
            run = compiled.run_firmware()  # the image as built, the inputs embedded
            ours, names, label = list(run.outputs.values()), list(run.outputs), result.board.name
            _progress("time one inference (instructions, and cycles from the core's timing model)")
            cost = compiled.cost()
        else:
            feeds, _ = complete_feeds(result.inputs, given)
            _report_made_up(result, given, feeds)
            _progress("run on the host")
            predicted = compiled.predict(feeds)
            ours, names, label = list(predicted.values()), list(predicted), "zant"
    try:
        reference = reference_model.run({**feeds, **(options.freeze or {})})  # frozen: inputs there
    except ZantError:
        raise
    except Exception as error:  # noqa: BLE001 - the reference's own refusal, not a Zant failure
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ZantError(f"the reference ({reference_model.name}) cannot run this model: {reason}") from None
    _progress(f"reference ({reference_model.name})")
    _progress(f"done in {time.perf_counter() - started:.1f} s")
    np.set_printoptions(precision=6, suppress=True, linewidth=100, threshold=40)
    width = max(len(label), len("reference"))
    # A sequence output is its tensors (a run-time-length one: those it holds), an empty optional none.
    flat_reference = []
    for value in reference:
        flat_reference += list(value) if isinstance(value, list) else [] if value is None else [value]
    if len(flat_reference) != len(ours):
        print(f"{len(ours)} output tensors, the reference's {len(flat_reference)}")
    by_name = {s.name: s for s in caller_outputs(result.outputs)}
    for name, got, want in zip(names, ours, flat_reference):
        signature = by_name[name]
        want = np.asarray(want)
        if got.shape != want.shape:
            error_line = f"shape differs: the reference's is {list(want.shape)}"
        elif got.dtype == object:  # strings (docs/strings.md): equal or not
            differ = int(sum(g != (w.decode("utf-8") if isinstance(w, bytes) else w) for g, w in zip(got.ravel(), want.ravel())))
            error_line = f"{differ} of {got.size} strings differ"
        else:
            error = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) if got.size else 0.0
            error_line = f"max abs error {error:.3g}"
        # A bounded output is shown at its actual extent, beside the capacity it was compiled with.
        bound = f" (compiled at its bound {signature.shape})" if signature.bounded_dim is not None else ""
        print(f"output '{signature.name}' {list(got.shape)} {signature.dtype}{bound}")
        print(f"  {label:<{width}} {got.reshape(-1)[:20]}")
        print(f"  {'reference':<{width}} {want.reshape(-1)[:20]}")
        print(f"  {error_line}")
    if on_mcu:
        print(format_firmware(result, kept=False))
        print(f"stack           {run.stack_bytes:,} bytes (high-water mark)")
        print(f"one inference   {cost.describe()} (cycles: zant.backend.timing's model of {target})")
    return 0


def cmd_profile(args: argparse.Namespace) -> int:
    from zant.tools.profile import format_profile, profile_model, profile_svg

    board = None if args.board is None else find_board(args.board)
    target = args.target or (board.target if board else "cortex-m4")
    options = {
        "inputs": _read_inputs(args), "input_shapes": _input_shapes(args), "cast_inputs": args.cast_inputs,
        "ram_budget": args.ram_budget,
    }
    profile = profile_model(args.model, target, board, args.optimize, options, args.output_dir, _progress)
    print(format_profile(profile))
    if args.svg:
        with open(args.svg, "w", encoding="utf-8") as svg:
            svg.write(profile_svg(profile))
        print(f"\nwrote {args.svg}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = make_parser().parse_args(argv)
    # A compile makes and drops hundreds of thousands of small IR objects: collecting the
    # youngest generation every 700 allocations was 3-5% of `zant compile`'s time. What the
    # rewrites drop is still collected, less often.
    gc.set_threshold(50_000, 20, 100)
    return run_cli("zant", lambda: _handler(args.command)(args), getattr(args, "debug", False))


def _handler(command: str):
    """The function of a subcommand; the other commands' modules are not imported (start-up time)."""
    if command == "conformance":
        from zant.tools.conformance import cmd_conformance

        return cmd_conformance
    if command == "plan":
        from zant.plan_report import cmd_plan

        return lambda args: cmd_plan(args, _options(args))
    if command == "report":
        from zant.tools.report import cmd_report

        return lambda args: cmd_report(args, _options(args))
    if command == "lit-config":
        from zant.tools.lit_config import cmd_lit_config

        return cmd_lit_config
    return {"compile": cmd_compile, "run": cmd_run, "profile": cmd_profile}[command]


if __name__ == "__main__":
    sys.exit(main())
