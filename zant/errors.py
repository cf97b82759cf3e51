"""The one exception type users see.

Every user-facing failure (bad model file, unsupported operator, toolchain error) is raised as a
`ZantError`; the command-line tools print its message and exit non-zero without a traceback.
"""

import os
import sys
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass


class ZantError(Exception):
    """An error caused by the user's input or environment, reported as one clear message."""


class ModelWarning(UserWarning):
    """A model the compiler takes although its file is not quite right, saying what it did
    instead (stale intermediate shapes it re-inferred)."""


class InternalError(Exception):
    """A bug in Zant, reported with what was being done (`pass 'vectorize' raised KeyError: 3`);
    the cause is chained (`--debug` shows its traceback)."""


@dataclass(frozen=True)
class UnsupportedOp:
    """One node the compiler cannot take: its name ("" if unnamed), operator and domain ("" for
    the default domain)."""

    node: str
    op_type: str
    domain: str = ""

    @property
    def qualified(self) -> str:
        """`Conv` for the default domain, `ai.onnx.ml.TreeEnsemble` or `com.example.Op` else."""
        return self.op_type if self.domain in ("", "ai.onnx") else f"{self.domain}.{self.op_type}"


class UnsupportedOpsError(ZantError):
    """Nodes whose operators the compiler has no lowering for, each in `ops` (the message may
    name only the first few)."""

    def __init__(self, message: str, ops: Iterable[UnsupportedOp]):
        super().__init__(message)
        self.ops = tuple(ops)


def run_cli(
    tool: str,
    action: Callable[[], int | None],
    debug: bool,
    user_errors: tuple[type[BaseException], ...] = (ZantError, OSError),
    describe: Callable[[BaseException], str] = str,
) -> int:
    """Run a command-line tool's action and report its failure the way every Zant tool does:
    a user error prints one line `TOOL: error: …` (status 1), a bug one line
    `TOOL: internal error: …` (status 2); with `debug`, the traceback instead. A closed stdout
    (`| head`) ends it quietly with status 141, as a shell reports SIGPIPE. Zant's own
    warnings (`ModelWarning` …) print as one line `TOOL: warning: …`."""
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warnings(tool, warnings.showwarning)
            return action() or 0
    except BrokenPipeError:
        # The reader of stdout went away (`zant plan … | head`): as for any Unix filter, not
        # an error to report. stdout goes to /dev/null so the interpreter's final flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except user_errors as error:
        if debug:
            raise
        print(f"{tool}: error: {describe(error)}", file=sys.stderr)
        return 1
    except Exception as error:
        if debug:
            raise
        what = str(error) if isinstance(error, InternalError) else f"{type(error).__name__}: {error}"
        print(
            f"{tool}: internal error: {what} "
            "(rerun with --debug for the traceback)",
            file=sys.stderr,
        )
        return 2


def _one_line_warnings(tool: str, show: Callable) -> Callable:
    """A `warnings.showwarning` that prints a warning of Zant's own categories as one line and
    hands the others to `show`."""

    def show_warning(message, category, filename, lineno, file=None, line=None):
        if category.__module__.split(".")[0] == "zant":
            print(f"{tool}: warning: {message}", file=sys.stderr if file is None else file)
        else:
            show(message, category, filename, lineno, file, line)

    return show_warning
