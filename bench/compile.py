"""Time of `zant compile`, stage by stage, per model × target.

    python bench/compile.py [--models kws,resnet8,mobilenet_v1_10,...] [--targets host,cortex-m4]
                            [-O ReleaseFast] [--constants embedded] [--json]

Each model (bench/models.py's `MODELS`, and `LARGE`: a 4.2 M-parameter MobileNetV1 1.0 and a
MobileNetV2 with 35 ReLU6-as-Clip layers) is compiled as `zant compile` compiles it
(`zant.driver.compile_model`, the default build mode ReleaseFast, the target's own pipeline) into
a fresh folder, so the Zig build starts from an empty local cache (and `ZANT_BUILD_CACHE=0`: no
build is copied from an earlier one, `zant.backend.build`). Zig's global cache
(compiler_rt …) is warmed up once per target first, so no model pays for it.

Printed per compile: the CPU seconds (user + system) of each stage (import, passes, emit,
build: this process's own for the first three, Zig's for the build, read from the rusage of the
children, which only Zig is) and their total, the figures to compare when the machine is shared;
the wall seconds of the whole compile as `zant compile` reports them; and the sizes of the
generated `.zig` and of the constant blob beside it. A benchmark, not a test: it prints figures
and exits 0 unless a compile fails.

`--command` also runs the whole `zant compile` command in a child process per model × target
and prints its CPU seconds (`command`: the interpreter's start, the CLI's imports, the compile
and Zig's build, ~0.4 s more than `total`) and its wall seconds (`cmd wall`: what the user
waits, the figure issue 17's targets are stated in; a large model's build runs one Zig per core,
so it can be less than the CPU seconds, and it depends on the machine's other load).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from models import LARGE, MODELS, model_file  # noqa: E402

from zant.backend.build import OPTIMIZE_MODES, TARGETS, build_zig  # noqa: E402
from zant.driver import CompileOptions, compile_model  # noqa: E402

os.environ["ZANT_BUILD_CACHE"] = "0"  # every build runs Zig (zant.backend.build caches them)
ALL_MODELS = (*MODELS, *LARGE)
DEFAULT_MODELS = ("kws", "resnet8", "mobilenet", *LARGE)
STAGES = ("import", "passes", "emit", "build")
WARM_UP = 'export fn zant_warm_up(x: [*]f32) callconv(.c) i32 { x[0] += 1.0; return 0; }\n'


@dataclass
class Row:
    model: str
    target: str
    stages: dict[str, float]  # CPU seconds
    total: float  # CPU seconds
    wall: float
    zig_bytes: int
    blob_bytes: int
    command: float | None = None  # CPU seconds of the whole `zant compile` command (--command)
    command_wall: float | None = None  # its wall seconds: what a user waits (the build may use several cores)


def cpu_now() -> float:
    """CPU seconds of this process and of its finished children (the Zig builds)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(model: str, path: Path, target: str, optimize: str, constants: str, out: Path) -> Row:
    marks: list[tuple[str, float]] = []  # (stage, CPU seconds when it started)
    options = CompileOptions(
        name=model, target=target, optimize=optimize, constants=constants,
        progress=lambda text: marks.append((text.split()[0], cpu_now())),
    )
    result = compile_model(path, out, options)
    marks.append(("end", cpu_now()))
    stages = dict.fromkeys(STAGES, 0.0)
    for (stage, start), (_, end) in zip(marks, marks[1:]):
        stages[stage] = end - start
    blob = sum(p.stat().st_size for p in out.glob(f"{model}*.bin"))
    wall = sum(result.timings.get(s, 0.0) for s in STAGES)
    return Row(model, target, stages, sum(stages.values()), wall, result.zig_path.stat().st_size, blob)


def measure_command(path: Path, target: str, optimize: str, constants: str, out: Path) -> tuple[float, float]:
    """CPU and wall seconds of `zant compile` as a user runs it, in a child process (with its Zig)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "import sys; from zant.tools.cli import main; sys.exit(main())",
         "compile", str(path), "-o", str(out), "--target", target, "-O", optimize, "--constants", constants],
        check=True, capture_output=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def format_rows(rows: list[Row]) -> str:
    command = any(r.command is not None for r in rows)
    head = f"{'model':16s} {'target':10s} " + " ".join(f"{s:>7s}" for s in STAGES)
    head += f" {'total':>7s} {'wall':>7s} {'.zig KB':>8s} {'blob KB':>8s}" + (f" {'command':>8s} {'cmd wall':>8s}" if command else "")
    lines = ["CPU seconds per stage (user + system)", head]
    for r in rows:
        lines.append(
            f"{r.model:16s} {r.target:10s} " + " ".join(f"{r.stages[s]:7.2f}" for s in STAGES)
            + f" {r.total:7.2f} {r.wall:7.2f} {r.zig_bytes / 1024:8.0f} {r.blob_bytes / 1024:8.0f}"
            + (f" {r.command:8.2f} {r.command_wall:8.2f}" if r.command is not None else "")
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS), help=f"comma-separated, of {', '.join(ALL_MODELS)}")
    parser.add_argument("--targets", default="host,cortex-m4", help="comma-separated targets (host,cortex-m4)")
    parser.add_argument("-O", "--optimize", default="ReleaseFast", choices=OPTIMIZE_MODES)
    parser.add_argument("--constants", default="embedded", choices=("embedded", "external", "staged"))
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--command", action="store_true", help="also time the whole `zant compile` command")
    args = parser.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    targets = [t for t in args.targets.split(",") if t]
    for value, allowed in ((models, ALL_MODELS), (targets, tuple(TARGETS))):
        unknown = [v for v in value if v not in allowed]
        if unknown:
            parser.error(f"unknown: {', '.join(unknown)} (choose from {', '.join(allowed)})")

    rows = []
    with tempfile.TemporaryDirectory(prefix="zant-bench-compile-") as name:
        folder = Path(name)
        (folder / "warm_up.zig").write_text(WARM_UP)
        for target in targets:
            kind = "shared" if target == "host" else "static"
            build_zig(folder / "warm_up.zig", folder / "warm" / target / "libwarm", target, args.optimize, kind)
        for model in models:
            path = model_file(model, folder)
            for target in targets:
                rows.append(measure(model, path, target, args.optimize, args.constants, folder / model / target))
                if args.command:
                    rows[-1].command, rows[-1].command_wall = measure_command(
                        path, target, args.optimize, args.constants, folder / model / f"{target}-command"
                    )
                if not args.json:
                    print(format_rows(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    print(json.dumps([asdict(r) for r in rows], indent=2) if args.json else format_rows(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
