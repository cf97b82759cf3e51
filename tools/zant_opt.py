"""`zant-opt`: xDSL's optimizer driver with Zant's dialects, passes, `.onnx` frontend and Zig target.

It behaves like `mlir-opt`/`xdsl-opt` (same flags, same `-p` pipeline syntax, `--split-input-file`,
`--verify-diagnostics`), and adds:

* `.onnx` files as input (`--input-shape NAME=1x3x32x32` fixes symbolic dimensions),
* the `zig` target (`-t zig` or `-t 'zig{name=net}'`),
* `--load-passes FILE.py|MODULE`: passes written outside the tree join the pipeline (and
  installed packages' passes through the `zant.passes` entry point group), see zant/plugins.py;
* clean error reporting: a user error prints one message and exits 1; `--debug` shows tracebacks.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import IO

from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from zant.errors import ZantError, run_cli


def parse_input_shapes(specs: Sequence[str] | None) -> dict[str, list[int]]:
    """Parse repeated `NAME=1x3x32x32` options into a name → shape mapping."""
    shapes: dict[str, list[int]] = {}
    for spec in specs or ():
        name, sep, dims = spec.rpartition("=")
        try:
            shape = [int(d) for d in dims.split("x")] if dims else []
        except ValueError:
            shape = None
        if not sep or not name or shape is None or any(d <= 0 for d in shape):
            raise ZantError(
                f"invalid --input-shape '{spec}': expected NAME=D0xD1x... with positive sizes"
            )
        shapes[name] = shape
    return shapes


class ZantOptMain(xDSLOptMain):
    version_format = "zant-opt (xdsl {xdsl_version})"

    def register_all_dialects(self):
        super().register_all_dialects()
        from zant.dialects import get_all_dialects

        for name, factory in get_all_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self):
        super().register_all_passes()
        from zant.plugins import all_passes

        for name, factory in all_passes().items():
            self.register_pass(name, factory)

    def setup_pipeline(self):
        # Plugins are known only once the arguments are parsed, just before the pipeline is.
        from zant.plugins import load_pass_plugins

        for name, factory in load_pass_plugins(self.args.load_passes, self.available_passes).items():
            self.register_pass(name, factory)
        try:
            super().setup_pipeline()
        except ValueError as error:
            if not str(error).startswith("Unrecognized passes"):
                raise
            raise ZantError(f"{error} (passes written outside Zant need --load-passes FILE.py)") from error

    def register_all_targets(self):
        super().register_all_targets()

        def get_zig():
            from zant.backend.zig_target import ZigTarget

            return ZigTarget

        self.available_targets["zig"] = get_zig

    def register_all_frontends(self):
        super().register_all_frontends()

        def parse_onnx(io: IO[bytes]):
            from zant.frontend.onnx_importer import import_model_bytes

            module = import_model_bytes(
                io.read(),
                model_dir=self._input_dir(),
                input_shapes=parse_input_shapes(self.args.input_shape),
            )
            # Weights live in the builtin dialect's resource storage; printing them needs the
            # dialect loaded, which parsing text would otherwise have done.
            self.ctx.get_optional_dialect("builtin")
            return module

        self.available_frontends["onnx"] = parse_onnx

    def prepare_input(self):
        try:
            return super().prepare_input()
        except ValueError as error:  # an input whose extension has no frontend
            raise ZantError(f"{error} (use -f/--frontend to choose one of: {', '.join(self.available_frontends)})") from error

    def _input_dir(self) -> str:
        import os

        if self.args.input_file is None:
            return os.getcwd()
        return os.path.dirname(os.path.abspath(self.args.input_file))

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--input-shape",
            action="append",
            metavar="NAME=D0xD1x...",
            help="fix the shape of a graph input with symbolic dimensions (repeatable)",
        )
        arg_parser.add_argument(
            "--load-passes",
            action="append",
            default=[],
            metavar="FILE.py|MODULE",
            help="register the ModulePass classes defined in a Python file or module (repeatable)",
        )
        arg_parser.add_argument(
            "--debug",
            action="store_true",
            help="show Python tracebacks for errors instead of one-line messages",
        )


def format_error(error: Exception, context_lines: int = 2) -> str:
    """The error's message and, for a verifier error, the failing op as xDSL marked it.

    xDSL attaches the whole module, printed with the failing op underlined, as an exception
    note; only the lines around the marker are kept (a module may hold megabytes of weights).
    """
    message = str(error).rstrip()
    for note in getattr(error, "__notes__", ()):
        lines = note.splitlines()
        marked = [i for i, line in enumerate(lines) if line.strip().startswith("^")]
        if not marked:
            continue
        first = max(0, marked[0] - context_lines)
        last = min(len(lines), marked[-1] + 2)
        excerpt = [line[:200] for line in lines[first:last]]
        message += "\n" + "\n".join(excerpt)
    return message


def main(args: Sequence[str] | None = None) -> int:
    debug = "--debug" in (sys.argv[1:] if args is None else args)
    return run_cli(
        "zant-opt",
        lambda: ZantOptMain(args=args).run(),
        debug,
        (ZantError, DiagnosticException, ParseError, VerifyException, OSError),
        format_error,
    )


if __name__ == "__main__":
    sys.exit(main())
