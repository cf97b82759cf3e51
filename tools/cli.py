"""`zant`: compile an ONNX model to Zig, build it, and run it against the ONNX reference.

    zant compile MODEL.onnx -o OUTDIR --name NAME [--target T] [-O MODE] [--no-build]
    zant run MODEL.onnx [--input NAME=file.npy ...]

Errors in the user's input print one line `zant: error: ...` and exit with status 1; `--debug`
shows the Python traceback instead.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence

import numpy as np
from zant.tools.zant_opt import parse_input_shapes

from zant.driver import (
    OPTIMIZE_MODES,
    TARGETS,
    CompileOptions,
    CompileResult,
    compile_model,
)
from zant.errors import ZantError, run_cli


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="the .onnx model")
    parser.add_argument(
        "--input-shape",
        action="append",
        metavar="NAME=D0xD1x...",
        help="fix the shape of an input with symbolic dimensions (repeatable)",
    )
    parser.add_argument(
        "--pipeline",
        default=None,
        help="pass pipeline to run instead of the default (zant-opt -p syntax)",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="zant", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    compile_cmd = commands.add_parser("compile", help="compile a model to Zig and build it")
    _add_common(compile_cmd)
    compile_cmd.add_argument("-o", "--output-dir", required=True, help="folder for the outputs")
    compile_cmd.add_argument("--name", default="model", help="symbol prefix and file name (a C identifier)")
    compile_cmd.add_argument("--target", default="host", choices=TARGETS)
    compile_cmd.add_argument("-O", "--optimize", default="ReleaseFast", choices=OPTIMIZE_MODES)
    compile_cmd.add_argument("--no-build", action="store_true", help="write the sources only")

    run_cmd = commands.add_parser("run", help="compile for the host, run, compare with the reference")
    _add_common(run_cmd)
    run_cmd.add_argument(
        "--input",
        action="append",
        metavar="NAME=FILE.npy",
        help="an input tensor (repeatable); inputs not given are random, seeded",
    )
    run_cmd.add_argument("-O", "--optimize", default="ReleaseSafe", choices=OPTIMIZE_MODES)

    from zant.tools.conformance import add_conformance_command

    from zant.plan_report import add_plan_command

    add_plan_command(commands)
    add_conformance_command(commands)
    return parser


def _options(args: argparse.Namespace, **overrides) -> CompileOptions:
    options = CompileOptions(input_shapes=parse_input_shapes(args.input_shape), **overrides)
    if args.pipeline:
        options.pipeline = args.pipeline
    return options


def format_summary(result: CompileResult, target: str, optimize: str) -> str:
    arenas = {a["role"]: a["size"] for a in result.plan.get("arenas", [])}
    lines = [
        f"wrote {result.zig_path}, {result.header_path.name}, {result.plan_path.name}",
        f"scratch arena   {arenas.get('scratch', 0):>10,} bytes (lower bound {result.plan.get('lower_bound_bytes', 0):,})",
        f"constant arena  {arenas.get('constant', 0):>10,} bytes",
    ]
    if result.library_path is not None:
        lines.append(f"built {result.library_path} ({target}, {optimize})")
    if result.sizes is not None:
        lines.append(
            "sections        "
            + "  ".join(f"{k} {result.sizes.get(k, 0):,}" for k in (".text", ".rodata", ".data", ".bss"))
        )
    lines.append("time            " + "  ".join(f"{k} {v:.2f}s" for k, v in result.timings.items()))
    return "\n".join(lines)


def cmd_compile(args: argparse.Namespace) -> int:
    options = _options(
        args, name=args.name, target=args.target, optimize=args.optimize, build=not args.no_build
    )
    result = compile_model(args.model, args.output_dir, options)
    print(format_summary(result, args.target, args.optimize))
    return 0


def _load_feeds(args: argparse.Namespace, result: CompileResult) -> dict[str, np.ndarray]:
    given: dict[str, np.ndarray] = {}
    for spec in args.input or ():
        name, sep, path = spec.partition("=")
        if not sep:
            raise ZantError(f"invalid --input '{spec}': expected NAME=FILE.npy")
        try:
            given[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as error:
            raise ZantError(f"cannot read input '{name}' from {path}: {error}") from error
    known = {s.name for s in result.inputs}
    unknown = sorted(set(given) - known)
    if unknown:
        raise ZantError(f"--input names unknown inputs: {', '.join(unknown)} (the model has {', '.join(sorted(known))})")
    rng = np.random.default_rng(0)
    feeds = {}
    for signature in result.inputs:
        if signature.name in given:
            feeds[signature.name] = given[signature.name].astype(signature.dtype)
        elif np.dtype(signature.dtype).kind == "f":
            feeds[signature.name] = rng.standard_normal(signature.shape).astype(signature.dtype)
            print(f"input '{signature.name}': random normal {signature.shape}")
        elif np.dtype(signature.dtype).kind == "b":
            feeds[signature.name] = rng.integers(0, 2, signature.shape).astype(bool)
            print(f"input '{signature.name}': random bool {signature.shape}")
        else:
            feeds[signature.name] = rng.integers(0, 10, signature.shape).astype(signature.dtype)
            print(f"input '{signature.name}': random integers {signature.shape}")
    return feeds


def cmd_run(args: argparse.Namespace) -> int:
    from zant.runtime import load_compiled, reference_outputs

    with tempfile.TemporaryDirectory(prefix="zant-run-") as out_dir:
        result = compile_model(args.model, out_dir, _options(args, name="model", optimize=args.optimize))
        feeds = _load_feeds(args, result)
        ours = load_compiled(result)(*(feeds[s.name] for s in result.inputs))
    reference = reference_outputs(args.model, feeds)
    np.set_printoptions(precision=6, suppress=True, linewidth=100, threshold=40)
    for signature, got, want in zip(result.outputs, ours, reference):
        error = float(np.max(np.abs(got.astype(np.float64) - np.asarray(want, np.float64)))) if got.size else 0.0
        print(f"output '{signature.name}' {signature.shape} {signature.dtype}")
        print(f"  zant      {got.reshape(-1)[:20]}")
        print(f"  reference {np.asarray(want).reshape(-1)[:20]}")
        print(f"  max abs error {error:.3g}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = make_parser().parse_args(argv)
    from zant.tools.conformance import cmd_conformance

    from zant.plan_report import cmd_plan

    handlers = {"compile": cmd_compile, "run": cmd_run, "plan": cmd_plan, "conformance": cmd_conformance}
    return run_cli("zant", lambda: handlers[args.command](args), getattr(args, "debug", False))


if __name__ == "__main__":
    sys.exit(main())
