"""`zant-opt`: xDSL's optimizer driver with Zant's dialects, passes, `.onnx` frontend and Zig target.

It takes xDSL's flags and `-p` pipeline syntax (`--split-input-file`, `--print-op-generic` …),
checks `--verify-diagnostics` as `mlir-opt` does (`// expected-error {{…}}` annotations, see
`DiagnosticCheck`), and adds:

* `.onnx` files as input (`--input-shape NAME=1x3x32x32` fixes symbolic dimensions),
* the `zig` target (`-t zig` or `-t 'zig{name=net}'`),
* `--load-passes FILE.py|MODULE`: passes written outside the tree join the pipeline (and
  installed packages' passes through the `zant.passes` entry point group), see zant/plugins.py;
* `--list-passes`: Zant's passes by group with a description and their options, then xDSL's;
* `--check-each-pass [--check-seed N]`: the interpreters of `zant.interpreter` (the ONNX
  reference op by op in the onnx dialect, the uop interpreter in uop) run the module after every
  pass on seeded inputs and name the first pass that changes an output;
* errors that name their culprit (`zant.diagnostics`): the pass after which the module stopped
  verifying and the failing op among its neighbours, the pass (and plugin file) that raised, the
  options of a pass given an unknown one; a user error prints one message and exits 1, `--debug`
  shows tracebacks.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from xdsl.ir import Operation
from xdsl.parser import Parser

from zant.diagnostics import VerifyFailure, describe_options, pass_summary
from zant.errors import ZantError, run_cli


def parse_input_shapes(specs: Sequence[str] | None) -> dict[str, list[int]]:
    """Parse repeated `NAME=1x3x32x32` options into a name → shape mapping. A size may be 0: a
    tensor of no elements (`NAME=0x3`), which compiles like any other (nothing read or written)."""
    shapes: dict[str, list[int]] = {}
    for spec in specs or ():
        name, sep, dims = spec.rpartition("=")
        try:
            shape = [int(d) for d in dims.split("x")] if dims else []
        except ValueError:
            shape = None
        if not sep or not name or shape is None or any(d < 0 for d in shape):
            raise ZantError(
                f"invalid --input-shape '{spec}': expected NAME=D0xD1x... with sizes of 0 or more"
            )
        shapes[name] = shape
    return shapes


EXPECTATION = re.compile(r"expected-(error|warning|note|remark)(?:@(above|below|unknown|[+-]\d+))?\s*\{\{(.*?)\}\}")
"""`expected-error {{text}}`, `expected-error@+1 {{…}}`, `@-2`, `@above`, `@below`, `@unknown`."""


@dataclass
class Expectation:
    kind: str  # error, warning, note or remark
    line: int | None  # the line (in the split) the diagnostic must be reported on; None: @unknown
    text: str  # a substring of the diagnostic's message
    at: int  # the annotation's own line (in the split)
    met: bool = False


class DiagnosticCheck:
    """The `expected-*` annotations of one split of the input, matched against what it produced.

    Zant reports one diagnostic per split, an error: the first parse error, or the first op that
    does not verify (on the input or after a pass), or a pass's failure. An expectation is met by
    an error on its line whose message contains its text; a diagnostic whose op has no source
    line (a pass's own error, an op a pass created) needs `@unknown`. Zant emits no warnings,
    notes or remarks, so `expected-warning`/`-note`/`-remark` annotations are never met."""

    def __init__(self, text: str, line_offset: int):
        self.line_offset = line_offset
        self.op_lines: dict[Operation, int] = {}
        self.expected: list[Expectation] = []
        self.unexpected: list[tuple[int | None, str]] = []
        lines = text.splitlines()
        annotated = {n for n, line in enumerate(lines, 1) if EXPECTATION.search(line)}

        def neighbour(start: int, step: int) -> int:
            n = start + step
            while n in annotated:
                n += step
            return n

        for number, line in enumerate(lines, 1):
            for match in EXPECTATION.finditer(line):
                kind, where, body = match.groups()
                if where in ("above", "below"):
                    target: int | None = neighbour(number, -1 if where == "above" else 1)
                else:
                    target = None if where == "unknown" else number + int(where or 0)
                self.expected.append(Expectation(kind, target, body, number))

    def produced(self, message: str, line: int | None, report: str | None = None) -> None:
        """An error on `line` of the split (None: no source line); `report`: its full text."""
        for expectation in self.expected:
            if not expectation.met and expectation.kind == "error" and expectation.line == line:
                if expectation.text in message:
                    expectation.met = True
                    return
        self.unexpected.append((line, report or message))

    def mismatches(self) -> list[str]:
        """`LINE: error: …` for every unexpected diagnostic and every unmet expectation."""
        found = [
            f"{'?' if line is None else line + self.line_offset}: error: unexpected error: {report}"
            for line, report in self.unexpected
        ]
        for e in self.expected:
            if not e.met:
                where = "with no source line" if e.line is None else f"on line {e.line + self.line_offset}"
                found.append(f'{e.at + self.line_offset}: error: expected {e.kind} "{e.text}" {where} was not produced')
        return found


class LineRecordingParser(Parser):
    """xDSL's parser, remembering the source line each op starts on (xDSL keeps no location
    unless the text spells a `loc(...)`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.op_lines: dict[Operation, int] = {}

    def parse_operation(self) -> Operation:
        line = self._current_token.span.get_location().line
        op = super().parse_operation()
        self.op_lines[op] = line
        return op

    def current_span(self):
        return self._current_token.span


ZANT_PASS_GROUPS: dict[str, tuple[str, ...]] = {
    "target": ("set-target",),
    "onnx dialect": ("fold-qoperator", "recognize-quantize", "fold-qdq", "fold-constants", "fold-batchnorm", "signed-activations"),
    "lowering": ("onnx-to-uop",),
    "uop loops": ("fuse-loops", "coalesce-loops", "split-index-sets", "vectorize", "licm"),
    "arena planning": ("plan-arenas", "verify-arena-plan"),
    "after planning": (
        "fold-constant-loads", "mark-inbounds", "contract-mulacc", "expand-float-minmax", "linearize-geps",
    ),
    "target instructions": ("arm-dsp-dot", "mve-gather", "mve-dot", "mve-requantize"),
}
"""How `--list-passes` groups Zant's passes (in pipeline order); a pass not named here is listed
under "other Zant passes"."""


def list_passes(available: Mapping[str, Callable[[], type[ModulePass]]]) -> str:
    """`--list-passes`: Zant's passes by group with their description and options, the passes of
    plugins and installed packages the same way, then xDSL's names."""
    from xdsl.transforms import get_all_passes as xdsl_passes

    from zant.passes import builtin_passes

    zant = [n for n in builtin_passes() if n in available]
    xdsl = {n for n in xdsl_passes() if n in available and n not in zant}
    plugins = [n for n in available if n not in zant and n not in xdsl]
    grouped = [n for names in ZANT_PASS_GROUPS.values() for n in names]
    groups = [(f"Zant: {title}", [n for n in names if n in zant]) for title, names in ZANT_PASS_GROUPS.items()]
    groups.append(("Zant: other passes", [n for n in zant if n not in grouped]))
    groups.append(("from --load-passes and installed packages", plugins))
    lines: list[str] = []
    for title, names in groups:
        if not names:
            continue
        lines.append(f"{title}:")
        for name in names:
            try:
                cls = available[name]()
            except ZantError as error:  # an installed package's broken entry point: listed, not fatal
                lines.append(f"  {name:<22} (cannot be loaded: {error})")
                continue
            lines.append(f"  {name:<22} {pass_summary(cls)}".rstrip())
            lines.append(f"  {'':<22} options: {describe_options(cls)}")
    lines.append("xDSL passes (see xDSL's documentation):")
    lines.extend(textwrap.wrap(", ".join(sorted(xdsl)), width=100, initial_indent="  ", subsequent_indent="  "))
    return "\n".join(lines) + "\n"


class ZantOptMain(xDSLOptMain):
    version_format = "zant-opt (xdsl {xdsl_version})"

    def __init__(self, description: str = __doc__.split("\n\n")[0].replace("`", ""), args: Sequence[str] | None = None):
        super().__init__(description, args)

    def register_all_dialects(self):
        super().register_all_dialects()
        from zant.dialects import get_all_dialects

        for name, factory in get_all_dialects().items():
            self.ctx.register_dialect(name, factory)
        # Passes make dense_resource constants (lookup tables, repacked weights); their blobs
        # print only when the builtin dialect is loaded, which text input may not have done.
        self.ctx.get_optional_dialect("builtin")

    def register_all_passes(self):
        super().register_all_passes()
        from zant.plugins import all_passes

        for name, factory in all_passes().items():
            self.register_pass(name, factory)

    def setup_pipeline(self):
        # Plugins are known only once the arguments are parsed, just before the pipeline is.
        from zant.diagnostics import parse_passes
        from zant.plugins import load_pass_plugins

        for name, factory in load_pass_plugins(self.args.load_passes, self.available_passes).items():
            self.register_pass(name, factory)
        self.pipeline = PassPipeline(parse_passes(self.available_passes, self.args.passes), self._between_passes)

    def _between_passes(self, previous: ModulePass | None, module: ModuleOp, next_pass: ModulePass | None) -> None:
        """xDSL's `--time-passes` and `--print-between-passes`; verification is `apply_passes`'."""
        now = time.perf_counter()
        if self.args.time_passes and previous is not None:
            print(f"Pass {previous.name} took {now - self._pass_started} seconds")
        if previous is not None and next_pass is not None and self.args.print_between_passes:
            print(f"IR after {previous.name}:")
            Printer(stream=sys.stdout).print_op(module)
            print("\n\n\n")
        self._pass_started = time.perf_counter()

    def apply_passes(self, prog: ModuleOp):
        """Run the pipeline so that a failure names its pass (`zant.diagnostics`): the input and
        the module after each pass are verified, unless --disable-verify."""
        from zant.diagnostics import check_verifies, run_pass

        verify = not self.args.disable_verify
        passes = self.pipeline.passes
        callback = self.pipeline.callback or (lambda *_: None)
        if verify:
            check_verifies(prog, None)
        checker = self._pass_checker(prog)
        callback(None, prog, passes[0] if passes else None)
        for index, p in enumerate(passes):
            run_pass(p, self.ctx, prog)
            if verify:
                check_verifies(prog, p.name)
            if checker is not None:
                checker.after(p.name)
            callback(p, prog, passes[index + 1] if index + 1 < len(passes) else None)
        if checker is not None:
            for note in checker.report.notes():
                print(f"zant-opt: note: --check-each-pass {note}", file=sys.stderr)
            if not checker.report.checked and passes:
                print("zant-opt: note: --check-each-pass checked no pass", file=sys.stderr)

    def _pass_checker(self, prog: ModuleOp):
        """`--check-each-pass`: a `zant.interpreter.PassChecker` of `prog`, or None."""
        if not self.args.check_each_pass:
            return None
        from zant.interpreter import PassChecker

        return PassChecker(prog, seed=self.args.check_seed)

    def run(self):
        if self.args.list_passes:
            print(list_passes(self.available_passes), end="")
            return 0
        if self.args.verify_diagnostics:
            return self._run_verifying_diagnostics()
        return super().run()

    def _run_verifying_diagnostics(self) -> int:
        """`--verify-diagnostics` as mlir-opt does it: every diagnostic must be announced by an
        `expected-error` annotation of its split, and every annotation met (see DiagnosticCheck)."""
        chunks, file_extension = self.prepare_input()
        output = self.prepare_output()
        file_name = self.args.input_file or "<stdin>"
        failures = 0
        try:
            for index, (chunk, offset) in enumerate(chunks):
                data = chunk.read()
                chunk.close()
                check = DiagnosticCheck(data.decode(errors="replace"), offset)
                try:
                    module = self._parse_located(data, file_extension, check)
                    self.apply_passes(module)
                    printed = self.output_resulting_program(module)
                except ParseError as error:
                    check.produced(error.msg, error.span.get_location().line)
                except VerifyFailure as error:
                    check.produced(error.message, check.op_lines.get(error.op), str(error))
                except (ZantError, DiagnosticException) as error:
                    check.produced(str(error).splitlines()[0], None, str(error))
                else:
                    if index > 0:
                        output.write("// -----\n")
                    output.write(printed)
                for message in check.mismatches():
                    print(f"{file_name}:{message}", file=sys.stderr)
                    failures += 1
        finally:
            if output is not sys.stdout:
                output.close()
        return 1 if failures else 0

    def _parse_located(self, data: bytes, file_extension: str, check: DiagnosticCheck) -> ModuleOp:
        """Parse one split, remembering the source line of every op (for `expected-error`)."""
        from io import BytesIO

        if file_extension != "mlir":  # an .onnx model: its errors have no source line
            module = self.parse_chunk(BytesIO(data), file_extension)
            assert module is not None
            return module
        parser = LineRecordingParser(self.ctx, data.decode(), self.get_input_name())
        try:
            module = parser.parse_module(not self.args.no_implicit_module)
        except DiagnosticException as error:  # an attribute's verifier, while parsing
            raise ParseError(parser.current_span(), str(error)) from error
        check.op_lines = parser.op_lines
        return module

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
        # xDSL lists every pass name in -p's help, and describes --verify-diagnostics its way.
        for action in arg_parser._actions:
            if "--passes" in action.option_strings:
                action.help = "pass pipeline, e.g. 'set-target{target=cortex-m4},onnx-to-uop,plan-arenas' (--list-passes)"
            elif "--verify-diagnostics" in action.option_strings:
                action.help = (
                    "check the diagnostics against the input's `// expected-error {{...}}` "
                    "annotations (as mlir-opt); exit 1 on a missing or unexpected one"
                )
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
            "--list-passes",
            action="store_true",
            help="list the passes: Zant's with a description and their options, then xDSL's",
        )
        arg_parser.add_argument(
            "--check-each-pass",
            action="store_true",
            help="interpret the module after every pass on seeded inputs (the onnx dialect by the ONNX "
            "reference evaluator, uop by the uop interpreter) and fail naming the first pass that "
            "changes an output: integers exactly, floats within 1e-4 relative + 1e-5 absolute (1e-3 + "
            "1e-4 when either module is in the onnx dialect); a module neither can run is noted unchecked",
        )
        arg_parser.add_argument(
            "--check-seed", type=int, default=0, metavar="N", help="seed of --check-each-pass's inputs (default 0)"
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
