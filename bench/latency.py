"""Latency of the generated code beside onnxruntime on one thread, and the MCU cost of each model.

    python bench/latency.py [MODEL ...] [--models kws,resnet8] [--held-apart] [--seconds 2] [--clock thread]
                            [--copies N] [--host-pipeline P] [--mcu-pipeline P] [--mcu-target cortex-m4]
                            [--compare-host-pipeline P] [--compare-mcu-pipeline P]
                            [--load-passes FILE.py] [--json] [--dry-run]

A MODEL is a model of bench/models.py by name (default: kws, resnet8, autoencoder, mobilenet) or
the path of an `.onnx` file (static shapes); `--held-apart` measures the held-apart set instead
(bench/models.py `HELD_APART`: torchvision's ResNet-18, SqueezeNet 1.1 and MobileNetV2 at 224x224
as the legacy and dynamo exporters write them, ResNet-8 as tf2onnx does; shapes the host's tiling
was not tuned on). For each model and each pipeline variant:

- ours: compiled with `zant.driver` for the host in ReleaseFast with the host pipeline,
  `NAME_predict` called through ctypes on buffers prepared once (the call is all that is timed);
- ort: onnxruntime, one intra-op and one inter-op thread, sequential execution, all graph
  optimizations, `run()` on the same inputs;
- every build and ort run interleaved (ours, [ours with the compared pipelines,] ort, …) after a
  warm-up, so machine noise hits all alike, for about `--seconds` per model, each call timed by
  the wall clock or, with `--clock thread`, by the thread's CPU time; each is reported as
  min / median / max ms per call, with ours/ort of the medians (< 1: we are faster), and the
  outputs are compared with ort's once (max abs difference);
- with `--copies N`, each build is loaded from N copies of its library and ort runs N sessions,
  all interleaved, each build's times pooled over its copies: a loaded library's scratch and
  constants land on physical pages of their own, and where they land moves one copy's time by
  up to 3% (two byte-identical copies of mobilenet_v2_legacy in one process: 6.67 and 6.48 ms,
  the same in a second run), as much as many changes being measured; the row gives each copy's
  median (`copy_ms`);
- the MCU build (`--mcu-target`, ReleaseSmall) with the MCU pipeline: its `.text` and its scratch
  arena; the host build's scratch arena beside it (the host pipeline pads Conv inputs: more
  scratch); the host compile time (import + passes + emit + Zig build).

The host and the MCU have separate pipelines (default: `zant.pipelines.pipeline_for` of each
target; a host-style pipeline would triple a Cortex-M4's `.text`). `--compare-host-pipeline` /
`--compare-mcu-pipeline` add a second variant measured side by side with the first (the one not
given is the first variant's): e.g. a researcher's fusion pass (`--load-passes`) against the
default. `--pipeline P` sets both pipelines of the first variant, `--compare-pipeline P` both of
the second. `--dry-run` prints the models and the pipelines of each build without compiling.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from models import ARCHITECTURES, HELD_APART, MODELS, resolve_model  # noqa: E402

from zant.driver import TARGETS, CompileOptions, compile_model, parse_pipeline  # noqa: E402
from zant.errors import run_cli  # noqa: E402
from zant.pipelines import pipeline_for  # noqa: E402

BENCH_MODELS = ("kws", "resnet8", "autoencoder", "mobilenet")
WARMUP = 5


def bound_predict(result, library_path: Path | None = None) -> tuple[callable, list[np.ndarray], list[np.ndarray]]:
    """`NAME_predict` with its argument pointers fixed: calling it runs one inference; from
    `library_path` (a copy of the build's library, loaded as a library of its own) if given."""
    library = ctypes.CDLL(str(library_path or result.library_path))
    predict = getattr(library, f"{result.zig_path.stem}_predict")
    predict.restype = ctypes.c_int32
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s.shape).astype(s.dtype) for s in result.inputs]
    outputs = [np.empty(s.shape, dtype=s.dtype) for s in result.outputs]
    pointers = [ctypes.c_void_p(a.ctypes.data) for a in (*inputs, *outputs)]
    return (lambda: predict(*pointers)), inputs, outputs


def ort_session(path: Path):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


@dataclass(frozen=True)
class Variant:
    """One pair of pipelines measured: the host build's and the MCU build's."""

    label: str
    host_pipeline: str
    mcu_pipeline: str


@dataclass(frozen=True)
class Spread:
    """Seconds per call: the fastest, the median and the slowest of the timed calls."""

    min: float
    median: float
    max: float

    @classmethod
    def of(cls, times: list[float]) -> Spread:
        return cls(min(times), statistics.median(times), max(times))

    def ms(self) -> dict[str, float]:
        return {"min": self.min * 1e3, "median": self.median * 1e3, "max": self.max * 1e3}


CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "thread": time.thread_time}
"""What a call's time is read from: the wall clock, or the calling thread's CPU time (ours runs
in it, and so does onnxruntime with one intra-op thread and sequential execution), which on a
machine shared with other jobs leaves out the time the process waits for a core."""


def interleaved_times(
    calls: list[Callable[[], object]], seconds: float, min_rounds: int = 20, clock: str = "wall"
) -> list[list[float]]:
    """Seconds of each call of `calls`, called in turn (one round: each once) for about `seconds`
    in all and at least `min_rounds` rounds, after a warm-up; each call timed by `clock`
    (`CLOCKS`)."""
    read = CLOCKS[clock]
    for _ in range(WARMUP):
        for call in calls:
            call()
    times: list[list[float]] = [[] for _ in calls]
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(times[0]) < min_rounds:
        for call, spent in zip(calls, times):
            start = read()
            call()
            spent.append(read() - start)
    return times


def library_copies(result, copies: int, folder: Path) -> list[Path]:
    """The build's library and `copies - 1` byte-identical copies of it in `folder` (ctypes
    loads each path as a library of its own: its own scratch and constant pages)."""
    paths = [Path(result.library_path)]
    if copies > 1:
        folder.mkdir(parents=True, exist_ok=True)
    for index in range(1, copies):
        paths.append(folder / f"{paths[0].stem}-copy{index}{paths[0].suffix}")
        shutil.copyfile(paths[0], paths[-1])
    return paths


def measure(
    name: str, path: Path, variants: list[Variant], plugins: list[str], seconds: float, folder: Path,
    mcu_target: str = "cortex-m4", clock: str = "wall", copies: int = 1,
) -> list[dict]:
    """One model, every variant: the host builds timed together with ort, the MCU builds sized;
    each build from `copies` loaded copies of its library, beside as many ort sessions, its
    times pooled over them."""
    if copies < 1:
        raise ValueError(f"copies is a number of loaded libraries (1 or more), got {copies}")

    def compile_for(variant: Variant, target: str, optimize: str):
        pipeline = variant.host_pipeline if target == "host" else variant.mcu_pipeline
        options = CompileOptions(name=name, target=target, optimize=optimize, pipeline=pipeline, plugins=tuple(plugins))
        return compile_model(path, folder / f"{name}-{variant.label}-{target}", options)

    builds = []
    for variant in variants:
        start = time.perf_counter()
        host = compile_for(variant, "host", "ReleaseFast")
        compile_seconds = time.perf_counter() - start
        builds.append((variant, host, compile_for(variant, mcu_target, "ReleaseSmall"), compile_seconds))

    sessions = [ort_session(path) for _ in range(copies)]
    calls, checks, buffers = [], [], []
    for variant, host, _, _ in builds:
        errors = []
        for library in library_copies(host, copies, folder / f"{name}-{variant.label}-copies"):
            predict, inputs, outputs = bound_predict(host, library)
            buffers.append((inputs, outputs))  # each bound call writes through its own arrays: keep them alive
            feeds = {s.name: a for s, a in zip(host.inputs, inputs)}
            status = predict()
            if status != 0:
                raise RuntimeError(f"{name}_predict ({variant.label}) returned {status}")
            reference = sessions[0].run(None, feeds)
            errors.append(max(float(np.max(np.abs(o - r))) for o, r in zip(outputs, reference)))
            calls.append(predict)
        checks.append(max(errors))
    # every build has the same seeded inputs
    calls += [lambda session=session: session.run(None, feeds) for session in sessions]
    times = interleaved_times(calls, seconds, clock=clock)
    ours_times = [times[i * copies : (i + 1) * copies] for i in range(len(builds))]
    ort = Spread.of([t for per_copy in times[len(builds) * copies :] for t in per_copy])

    rows = []
    for (variant, host, mcu, compile_seconds), per_copy, max_error in zip(builds, ours_times, checks):
        times = [t for copy_times in per_copy for t in copy_times]
        ours = Spread.of(times)
        rows.append({
            "model": name,
            "variant": variant.label,
            "host_pipeline": variant.host_pipeline,
            "mcu_pipeline": variant.mcu_pipeline,
            "ours_ms": ours.ms(),
            "ort_ms": ort.ms(),
            "ratio": ours.median / ort.median,
            "rounds": len(per_copy[0]),
            "copies": copies,
            "copy_ms": [statistics.median(t) * 1e3 for t in per_copy],
            "max_abs_error": max_error,
            "mcu_target": mcu_target,
            "mcu_text_bytes": mcu.sizes.get(".text", 0) if mcu.sizes else None,
            "mcu_scratch_bytes": scratch_bytes(mcu.plan),
            "host_scratch_bytes": scratch_bytes(host.plan),
            "compile_seconds": compile_seconds,
            "clock": clock,
        })
    return rows


def scratch_bytes(plan: dict) -> int:
    return sum(a["size"] for a in plan["arenas"] if a["role"] == "scratch")


def spread_cell(ms: dict[str, float]) -> str:
    return f"{ms['min']:.3f} / {ms['median']:.3f} / {ms['max']:.3f}"


def format_table(rows: list[dict]) -> str:
    target = rows[0]["mcu_target"] if rows else "MCU"
    headers = [
        "model", "variant", "ours ms min/med/max", "ort ms min/med/max", "ours/ort", "rounds", "max |Δ|",
        f"{target} .text B", f"{target} scratch B", "host scratch B", "compile s",
    ]
    cells = [
        [
            r["model"],
            r["variant"],
            spread_cell(r["ours_ms"]),
            spread_cell(r["ort_ms"]),
            f"{r['ratio']:.2f}",
            str(r["rounds"]),
            f"{r['max_abs_error']:.1e}",
            f"{r['mcu_text_bytes']:,}",
            f"{r['mcu_scratch_bytes']:,}",
            f"{r['host_scratch_bytes']:,}",
            f"{r['compile_seconds']:.1f}",
        ]
        for r in rows
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]

    def line(values: list[str]) -> str:
        return "  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(values, widths)))

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(c) for c in cells)])


def summary(rows: list[dict]) -> str:
    """The geometric mean and the worst of each variant's ratios."""
    lines = []
    for label in dict.fromkeys(r["variant"] for r in rows):
        ratios = [r["ratio"] for r in rows if r["variant"] == label]
        geomean = float(np.exp(np.mean(np.log(ratios))))
        lines.append(f"variant {label}: ours/ort geometric mean {geomean:.2f}, median {statistics.median(ratios):.2f}, "
                     f"worst {max(ratios):.2f} over {len(ratios)} models")
    return "\n".join(lines)


def variants_of(args: argparse.Namespace) -> list[Variant]:
    """The first variant (the targets' pipelines unless given) and, if asked for, the second."""
    host = args.host_pipeline or args.pipeline or pipeline_for("host")
    mcu = args.mcu_pipeline or args.pipeline or pipeline_for(args.mcu_target)
    variants = [Variant("A", host, mcu)]
    compare_host = args.compare_host_pipeline or args.compare_pipeline
    compare_mcu = args.compare_mcu_pipeline or args.compare_pipeline
    if compare_host or compare_mcu:
        variants.append(Variant("B", compare_host or host, compare_mcu or mcu))
    return variants


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="*", help="bench model names or .onnx paths")
    parser.add_argument("--models", default=None, help=f"comma-separated, as MODEL (default: {','.join(BENCH_MODELS)})")
    parser.add_argument("--held-apart", action="store_true",
                        help=f"the held-apart set instead of the default models ({','.join(HELD_APART)}), "
                             "shapes the host's tiling is not tuned on")
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per model (default 2)")
    parser.add_argument("--copies", type=int, default=1,
                        help="load each build from N copies of its library beside N ort sessions, "
                             "times pooled over them (default 1; see the module's docstring)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="time each call by the wall clock (default) or the thread's CPU time "
                             "(steadier on a machine shared with other jobs)")
    parser.add_argument("--host-pipeline", help="the host build's pipeline (default: pipeline_for('host'))")
    parser.add_argument("--mcu-pipeline", help="the MCU build's pipeline (default: pipeline_for(--mcu-target))")
    parser.add_argument("--pipeline", help="both pipelines of the first variant")
    parser.add_argument("--compare-host-pipeline", help="a second variant's host pipeline, measured side by side")
    parser.add_argument("--compare-mcu-pipeline", help="a second variant's MCU pipeline")
    parser.add_argument("--compare-pipeline", help="both pipelines of the second variant")
    parser.add_argument("--mcu-target", default="cortex-m4", choices=[t for t in TARGETS if t != "host"],
                        help="the MCU build's target (default cortex-m4)")
    parser.add_argument("--load-passes", action="append", default=[], metavar="FILE.py|MODULE",
                        help="passes from outside Zant that a pipeline names (repeatable)")
    parser.add_argument("--json", action="store_true", help="print JSON rows instead of the table")
    parser.add_argument("--dry-run", action="store_true", help="print what would be measured, measure nothing")
    return parser


def describe_plan(names: list[str], variants: list[Variant], mcu_target: str) -> str:
    lines = [f"models: {', '.join(names)}"]
    for v in variants:
        lines.append(f"variant {v.label}: host pipeline {v.host_pipeline}")
        lines.append(f"variant {v.label}: {mcu_target} pipeline {v.mcu_pipeline}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    specs = list(args.model) + [m for m in (args.models or "").split(",") if m]
    specs = specs or list(HELD_APART if args.held_apart else BENCH_MODELS)
    variants = variants_of(args)

    def run() -> int:
        for variant in variants:  # a mistyped pipeline stops here, not after the first builds
            parse_pipeline(variant.host_pipeline, args.load_passes)
            parse_pipeline(variant.mcu_pipeline, args.load_passes)
        with tempfile.TemporaryDirectory(prefix="zant-latency-") as folder:
            models = [resolve_model(spec, Path(folder)) for spec in specs]
            if args.dry_run:
                print(describe_plan([f"{n} ({p})" if n not in MODELS | ARCHITECTURES | HELD_APART else n for n, p in models], variants, args.mcu_target))
                return 0
            rows = []
            for name, path in models:
                rows += measure(
                    name, path, variants, args.load_passes, args.seconds, Path(folder), args.mcu_target, args.clock,
                    args.copies,
                )
        if args.json:
            print(json.dumps(rows, indent=2))
        else:
            print(describe_plan([r["model"] for r in rows if r["variant"] == "A"], variants, args.mcu_target))
            print(format_table(rows))
            print(summary(rows))
        return 0

    return run_cli("latency.py", run, debug=False)


if __name__ == "__main__":
    sys.exit(main())
