"""Progress on stderr (`zant.progress`): `zant compile`'s stage lines on a terminal only and never
with --quiet; the estimate of the time left the long runners print."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

import zant
from zant.progress import Estimate, Progress, format_duration, stage_reporter

ROOT = Path(__file__).resolve().parent.parent
DIGITS = ROOT / "examples" / "digits" / "digits_cnn.onnx"


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _stages(text: str) -> list[str]:
    return [line.split()[1] for line in text.splitlines() if line.startswith("zant: ")]


def test_stage_lines_in_order_on_a_terminal(tmp_path):
    stream = FakeTerminal()
    report = stage_reporter(stream=stream)
    assert report is not None
    zant.compile(DIGITS, target="cortex-m4", output_dir=tmp_path, progress=report)
    assert _stages(stream.getvalue()) == ["import", "passes", "emit", "build", "firmware"], stream.getvalue()
    assert f"zant: import {DIGITS}\n" in stream.getvalue()


def test_no_stage_lines_without_a_terminal_or_when_quiet():
    assert stage_reporter(stream=io.StringIO()) is None  # not a terminal
    assert stage_reporter(stream=FakeTerminal(), quiet=True) is None
    assert stage_reporter(stream=io.StringIO(), force=True) is not None
    assert stage_reporter(stream=FakeTerminal(), force=False) is None


def _zant_on_a_terminal(*args: str) -> str:
    """`zant ARGS` with stdout and stderr on a pseudo-terminal; what it printed."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: exec, never return into pytest
        try:
            os.execvp(sys.executable, [sys.executable, "-m", "zant.tools.cli", *args])
        finally:
            os._exit(127)
    out = b""
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        out += data
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, out.decode(errors="replace")
    return out.decode(errors="replace").replace("\r\n", "\n")


def test_zant_compile_tells_its_stages_on_a_terminal_only(tmp_path):
    shown = _zant_on_a_terminal("compile", str(DIGITS), "-o", str(tmp_path / "tty"))
    assert _stages(shown) == ["import", "passes", "emit", "build"], shown
    assert shown.index("zant: build ") < shown.index("wrote ")  # as the stages start, before the summary
    quiet = _zant_on_a_terminal("compile", str(DIGITS), "-o", str(tmp_path / "quiet"), "--quiet")
    assert _stages(quiet) == [] and "wrote " in quiet, quiet
    piped = subprocess.run(
        [sys.executable, "-m", "zant.tools.cli", "compile", str(DIGITS), "-o", str(tmp_path / "pipe")],
        capture_output=True, text=True,
    )
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr == "" and "wrote " in piped.stdout


def test_estimate_of_the_time_left():
    clock = Clock()
    left = Estimate(40, clock)
    assert left.describe(0) == "0/40, 0 s elapsed, time left unknown yet"
    clock.now += 30
    assert left.left(10) == pytest.approx(90)
    assert left.describe(10) == "10/40, 30 s elapsed, about 1 min 30 s left"
    clock.now += 90
    assert left.describe(40) == "40/40, 2 min elapsed"
    assert format_duration(3725) == "1 h 2 min" and format_duration(59.6) == "1 min"


def test_progress_redraws_a_status_line_on_a_terminal():
    clock, stream = Clock(), FakeTerminal()
    progress = Progress(4, "cases", stream=stream, clock=clock)
    clock.now += 10
    progress.advance()
    progress.write("case 1 passed")
    clock.now += 10
    progress.advance()
    progress.close()
    text = stream.getvalue()
    assert text.startswith("\r\x1b[Kcases 1/4, 10 s elapsed, about 30 s left")
    # the result line goes above the status line, which is drawn again under it
    assert "\r\x1b[Kcase 1 passed\n\r\x1b[Kcases 1/4" in text
    assert text.endswith("\r\x1b[Kcases 2/4, 20 s elapsed, about 20 s left\n")


def test_progress_off_a_terminal_writes_at_most_a_line_every_so_often():
    clock, stream = Clock(), io.StringIO()
    progress = Progress(100, "graphs", stream=stream, every=60, clock=clock)
    for _ in range(10):  # 10 s apart: a status line after 60 s, not before
        clock.now += 10
        progress.advance()
    progress.write("graph 9: mismatch")
    progress.close()
    assert stream.getvalue() == "graphs 6/100, 1 min elapsed, about 15 min 40 s left\ngraph 9: mismatch\n"
    silent = io.StringIO()
    quiet = Progress(3, stream=silent, every=None, clock=clock)
    clock.now += 1000
    quiet.advance(3)
    assert silent.getvalue() == ""
