"""Progress on stderr: the stages of a compile as they start, and the time left of a long run.

    report = stage_reporter(quiet=args.quiet)       # None when quiet or stderr is no terminal
    zant.compile(path, progress=report)              # "zant: import m.onnx", "zant: passes …"

    left = Estimate(len(cases))                      # a runner over many cases
    ...
    print(f"batch 3/17: 98/100 passed; {left.describe(300)}", file=sys.stderr)
    # "batch 3/17: 98/100 passed; 300/1700, 1 min 2 s elapsed, about 4 min 49 s left"

Stage lines are for a person watching: `zant compile` prints them only when stderr is a
terminal (a log or a pipe gets the summary alone), and never with `--quiet`. A runner's lines
are its results (one per batch or per measurement, each seconds to minutes apart), so they are
printed as before, with the estimate appended; on a terminal, `Progress` also keeps a status
line up to date between them, and on a non-terminal it writes that status at most once every
`every` seconds (or never). Nothing here imports the rest of Zant: any layer may use it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


def is_terminal(stream: TextIO) -> bool:
    """Whether `stream` is an interactive terminal (a closed or odd stream is not)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def format_duration(seconds: float) -> str:
    """`42 s`, `3 min 5 s`, `1 h 2 min`: a duration as a person reads it."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s" if seconds else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def stage_reporter(
    quiet: bool = False, stream: TextIO | None = None, force: bool | None = None, prefix: str = "zant"
) -> Callable[[str], None] | None:
    """The `progress` callback of a compile (`zant.compile`, `CompileOptions.progress`): each
    stage printed as `PREFIX: LINE` on `stream` (default stderr) as it starts. None — nothing
    printed — with `quiet`, or when the stream is not a terminal (`force` True or False decides
    instead of asking it)."""
    out = sys.stderr if stream is None else stream
    shown = (is_terminal(out) if force is None else force) and not quiet
    if not shown:
        return None

    def report(line: str) -> None:
        print(f"{prefix}: {line}", file=out, flush=True)

    return report


class Estimate:
    """The time left of `total` units of work, from the rate so far (the clock starts at
    construction): `describe(done)` reads `12/40, 1 min 3 s elapsed, about 2 min 27 s left`."""

    def __init__(self, total: int, clock: Callable[[], float] = time.monotonic):
        self.total = total
        self.clock = clock
        self.started = clock()

    def elapsed(self) -> float:
        return self.clock() - self.started

    def left(self, done: int) -> float | None:
        """Seconds left at the rate so far; None before anything is done."""
        if done <= 0:
            return None
        return self.elapsed() * max(self.total - done, 0) / done

    def describe(self, done: int) -> str:
        text = f"{done}/{self.total}, {format_duration(self.elapsed())} elapsed"
        left = self.left(done)
        if done >= self.total:
            return text
        return text + (", time left unknown yet" if left is None else f", about {format_duration(left)} left")


class Progress:
    """A status line for a loop over `total` units of `what` (`cases`, `graphs` …) on `stream`
    (default stderr): `advance(n)` after each unit (or batch), `write(line)` for a result line,
    `close()` at the end. On a terminal the status line is redrawn in place (at most ten times a
    second) and result lines go above it; elsewhere the status is written as a line of its own
    at most once every `every` seconds (None: never) and result lines as they come. `force`
    True or False decides instead of asking the stream whether it is a terminal."""

    def __init__(
        self, total: int, what: str = "items", stream: TextIO | None = None, force: bool | None = None,
        every: float | None = 60.0, clock: Callable[[], float] = time.monotonic,
    ):
        self.stream = sys.stderr if stream is None else stream
        self.terminal = is_terminal(self.stream) if force is None else force
        self.what = what
        self.every = every
        self.clock = clock
        self.estimate = Estimate(total, clock)
        self.done = 0
        self.shown = False  # a status line is on the terminal's last line
        self.last = self.estimate.started  # when the status was last drawn or written

    def status(self) -> str:
        return f"{self.what} {self.estimate.describe(self.done)}"

    def advance(self, count: int = 1) -> None:
        self.done += count
        now = self.clock()
        if self.terminal:
            if now - self.last >= 0.1 or self.done >= self.estimate.total:
                self._draw()
        elif self.every is not None and now - self.last >= self.every:
            print(self.status(), file=self.stream, flush=True)
            self.last = now

    def write(self, line: str) -> None:
        if self.terminal and self.shown:
            self.stream.write("\r\x1b[K")
        print(line, file=self.stream, flush=True)
        if self.terminal and self.shown:
            self._draw()

    def close(self) -> None:
        if self.terminal and self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False

    def _draw(self) -> None:
        self.stream.write("\r\x1b[K" + self.status())
        self.stream.flush()
        self.shown = True
        self.last = self.clock()
