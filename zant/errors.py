"""The one exception type users see.

Every user-facing failure (bad model file, unsupported operator, toolchain error) is raised as a
`ZantError`; the command-line tools print its message and exit non-zero without a traceback.
"""

import sys
from collections.abc import Callable


class ZantError(Exception):
    """An error caused by the user's input or environment, reported as one clear message."""


def run_cli(
    tool: str,
    action: Callable[[], int | None],
    debug: bool,
    user_errors: tuple[type[BaseException], ...] = (ZantError, OSError),
    describe: Callable[[BaseException], str] = str,
) -> int:
    """Run a command-line tool's action and report its failure the way every Zant tool does:
    a user error prints one line `TOOL: error: …` (status 1), a bug one line
    `TOOL: internal error: …` (status 2); with `debug`, the traceback instead."""
    try:
        return action() or 0
    except user_errors as error:
        if debug:
            raise
        print(f"{tool}: error: {describe(error)}", file=sys.stderr)
        return 1
    except Exception as error:
        if debug:
            raise
        print(
            f"{tool}: internal error: {type(error).__name__}: {error} "
            "(rerun with --debug for the traceback)",
            file=sys.stderr,
        )
        return 2
