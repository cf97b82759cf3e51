"""Zig build time of the generated code, per model × build mode × target × pipeline.

    python bench/build_time.py [--models digits,kws,...] [--modes Debug,ReleaseSafe,...]
                               [--targets host,cortex-m4] [--pipelines default|host|mcu,...]
                               [--timeout 300] [--json]

Every model of bench/models.py (`MODELS`, the int8 `QUANTIZED` ones) and the digits demo is
compiled once per target and pipeline without a build (`--no-build`); then each `.zig` is built
as `zant compile` builds it (`zant.backend.build.build_zig`: a shared library for the host, a
static one for the microcontrollers), in a fresh local Zig cache. Zig's global cache (compiler_rt
and the other runtime libraries) is shared, and warmed up once per target and mode before
anything is measured, so no model pays for it.

Printed per build: the CPU time of the Zig build (user + system, the figure to compare: the
machine may be shared), its wall time, and the size of the generated `.zig`. `--pipelines`
picks the pipelines: `default` (each target's own, `zant.pipelines.pipeline_for`), `host`
(`DEFAULT_PIPELINE`), `mcu` (`MCU_PIPELINE`). A build over `--timeout` seconds is stopped and
shown as `>T`. This is a benchmark, not a test: it prints figures and always exits 0 unless a
build fails.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))

from models import MODELS, QUANTIZED, model_file  # noqa: E402

from zant.backend.build import OPTIMIZE_MODES  # noqa: E402
from zant.driver import CompileOptions, compile_model  # noqa: E402
from zant.pipelines import DEFAULT_PIPELINE, MCU_PIPELINE, pipeline_for  # noqa: E402
from zant.progress import Progress  # noqa: E402

os.environ["ZANT_BUILD_CACHE"] = "0"  # every build runs Zig (zant.backend.build caches them)
ALL_MODELS = ("digits", *MODELS, *QUANTIZED)
PIPELINES = {"host": DEFAULT_PIPELINE, "mcu": MCU_PIPELINE}
TRIVIAL_SOURCE = 'export fn zant_warm_up(x: [*]f32) callconv(.c) i32 { x[0] += 1.0; return 0; }\n'
"""Built once per target and mode before any measurement: it fills Zig's global cache."""


@dataclass
class Row:
    model: str
    target: str
    pipeline: str
    mode: str
    zig_bytes: int
    zig_lines: int
    cpu_seconds: float | None  # None: stopped at the timeout
    wall_seconds: float


def pipeline_of(which: str, target: str) -> str:
    return pipeline_for(target) if which == "default" else PIPELINES[which]


def timed_build(zig_path: Path, out_dir: Path, target: str, mode: str, timeout: float) -> tuple[float | None, float]:
    """(CPU seconds, wall seconds) of `build_zig` in a child process, the CPU time of Zig
    included (its rusage reaches us through the child that waits for it); (None, wall) when
    stopped at `timeout`."""
    kind = "shared" if target == "host" else "static"
    suffix = ".so" if kind == "shared" else ".a"
    script = (
        "import sys; from zant.backend.build import build_zig; "
        "build_zig(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])"
    )
    library = out_dir / f"lib{zig_path.stem}{suffix}"
    command = [sys.executable, "-c", script, str(zig_path), str(library), target, mode, kind]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # A session of its own, so a timeout stops Zig too, not only the Python that waits for it.
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        return None, time.perf_counter() - start
    wall = time.perf_counter() - start
    if child.returncode != 0:
        raise SystemExit(f"build of {zig_path} ({target}, {mode}) failed:\n{stderr.strip()}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def format_table(rows: list[Row], timeout: float) -> str:
    lines = [
        f"{'model':16s} {'target':10s} {'pipeline':8s} {'mode':12s} "
        f"{'.zig KB':>8s} {'lines':>7s} {'CPU s':>7s} {'wall s':>7s}"
    ]
    for r in rows:
        cpu = f">{timeout:.0f}" if r.cpu_seconds is None else f"{r.cpu_seconds:.1f}"
        lines.append(
            f"{r.model:16s} {r.target:10s} {r.pipeline:8s} {r.mode:12s} {r.zig_bytes / 1024:8.0f} "
            f"{r.zig_lines:7d} {cpu:>7s} {r.wall_seconds:7.1f}"
        )
    return "\n".join(lines)


def selection(value: str, allowed, what: str, parser: argparse.ArgumentParser) -> list[str]:
    chosen = [v for v in value.split(",") if v]
    unknown = [v for v in chosen if v not in allowed]
    if unknown:
        parser.error(f"unknown {what}: {', '.join(unknown)} (choose from {', '.join(allowed)})")
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(ALL_MODELS), help="comma-separated models (default: all)")
    parser.add_argument("--modes", default=",".join(OPTIMIZE_MODES), help="comma-separated build modes (default: all)")
    parser.add_argument("--targets", default="host,cortex-m4", help="comma-separated targets (default: host,cortex-m4)")
    parser.add_argument("--pipelines", default="default", help="default, host, mcu (comma-separated; default: default)")
    parser.add_argument("--timeout", type=float, default=300.0, help="stop a build after this many seconds (300)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    from zant.backend.build import TARGETS

    models = selection(args.models, ALL_MODELS, "model", parser)
    modes = selection(args.modes, OPTIMIZE_MODES, "mode", parser)
    targets = selection(args.targets, tuple(TARGETS), "target", parser)
    pipelines = selection(args.pipelines, ("default", *PIPELINES), "pipeline", parser)

    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="zant-bench-build-") as name:
        folder = Path(name)
        warm = folder / "warm_up.zig"
        warm.write_text(TRIVIAL_SOURCE)
        for target in targets:
            for mode in modes:
                timed_build(warm, folder / "warm" / target / mode, target, mode, args.timeout)
        # Every source first, then the builds: the compiler is done before any build is timed.
        sources = []
        for model in models:
            path = model_file(model, folder)
            for target in targets:
                for which in dict.fromkeys(pipeline_of(p, target) for p in pipelines):
                    label = "host" if which == DEFAULT_PIPELINE else "mcu" if which == MCU_PIPELINE else "given"
                    out = folder / model / target / label
                    options = CompileOptions(name=model, target=target, build=False, pipeline=which)
                    sources.append((model, target, label, compile_model(path, out, options).zig_path))
        tracker = Progress(len(sources) * len(modes), "builds")  # the time left, on a terminal
        for model, target, label, zig_path in sources:
            text = zig_path.read_text(encoding="utf-8")
            for mode in modes:
                cpu, wall = timed_build(zig_path, zig_path.parent / mode, target, mode, args.timeout)
                rows.append(Row(model, target, label, mode, len(text.encode()), text.count("\n"), cpu, wall))
                if not args.json:
                    tracker.write(format_table(rows[-1:], args.timeout).splitlines()[-1])
                tracker.advance()
        tracker.close()
    print(json.dumps([asdict(r) for r in rows], indent=2) if args.json else format_table(rows, args.timeout))
    return 0


if __name__ == "__main__":
    sys.exit(main())
