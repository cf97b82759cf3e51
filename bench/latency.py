"""Latency of the generated code beside onnxruntime on one thread, and the MCU cost of each model.

    python bench/latency.py [--models kws,resnet8,autoencoder,mobilenet] [--seconds 2]
                            [--pipeline P] [--load-passes FILE.py] [--json]

For each MLPerf-Tiny-shaped model of bench/models.py:

- ours: compiled with `zant.driver` for the host in ReleaseFast, `NAME_predict` called through
  ctypes on buffers prepared once (the call is all that is timed);
- ort: onnxruntime, one intra-op and one inter-op thread, sequential execution, all graph
  optimizations, `run()` on the same inputs;
- both run interleaved (ours, ort, ours, ort …) after a warm-up, so machine noise hits both
  alike, for about `--seconds` per model; the medians are printed with ours/ort (< 1: we are
  faster), and the outputs of both are compared once (max abs difference);
- the Cortex-M4 ReleaseSmall build (its own default pipeline, or `--pipeline`): `.text` and the scratch arena, and the
  host compile time (import + passes + emit + Zig build).

`--pipeline`/`--load-passes` compile with another pass pipeline (e.g. a researcher's fusion pass):
run the script once per pipeline to compare latency and scratch bytes side by side.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from models import MODELS  # noqa: E402

from zant.driver import CompileOptions, compile_model  # noqa: E402
from zant.pipelines import pipeline_for  # noqa: E402

BENCH_MODELS = ("kws", "resnet8", "autoencoder", "mobilenet")
WARMUP = 5


def bound_predict(result) -> tuple[callable, list[np.ndarray], list[np.ndarray]]:
    """`NAME_predict` with its argument pointers fixed: calling it runs one inference."""
    library = ctypes.CDLL(str(result.library_path))
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


def interleaved_medians(ours, theirs, seconds: float) -> tuple[float, float, int]:
    """Median seconds per call of both, alternating calls, for about `seconds` in all."""
    for _ in range(WARMUP):
        ours()
        theirs()
    ours_times: list[float] = []
    theirs_times: list[float] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(ours_times) < 20:
        start = time.perf_counter()
        ours()
        middle = time.perf_counter()
        theirs()
        end = time.perf_counter()
        ours_times.append(middle - start)
        theirs_times.append(end - middle)
    return statistics.median(ours_times), statistics.median(theirs_times), len(ours_times)


def measure(name: str, pipeline: str | None, plugins: list[str], seconds: float, folder: Path) -> dict:
    model = MODELS[name]()
    path = folder / f"{name}.onnx"
    onnx.save(model, path)

    def compile_for(target: str, optimize: str):
        options = CompileOptions(
            name=name, target=target, optimize=optimize, pipeline=pipeline, plugins=tuple(plugins)
        )
        return compile_model(path, folder / f"{name}-{target}", options)

    start = time.perf_counter()
    host = compile_for("host", "ReleaseFast")
    compile_seconds = time.perf_counter() - start
    mcu = compile_for("cortex-m4", "ReleaseSmall")

    predict, inputs, outputs = bound_predict(host)
    session = ort_session(path)
    feeds = {s.name: a for s, a in zip(host.inputs, inputs)}
    reference = session.run(None, feeds)
    status = predict()
    if status != 0:
        raise RuntimeError(f"{name}_predict returned {status}")
    max_error = max(float(np.max(np.abs(o - r))) for o, r in zip(outputs, reference))

    ours, theirs, rounds = interleaved_medians(predict, lambda: session.run(None, feeds), seconds)
    return {
        "model": name,
        "ours_ms": ours * 1e3,
        "ort_ms": theirs * 1e3,
        "ratio": ours / theirs,
        "rounds": rounds,
        "max_abs_error": max_error,
        "m4_text_bytes": mcu.sizes.get(".text", 0) if mcu.sizes else None,
        "scratch_bytes": sum(a["size"] for a in host.plan["arenas"] if a["role"] == "scratch"),
        "compile_seconds": compile_seconds,
    }


def format_table(rows: list[dict]) -> str:
    headers = ["model", "ours ms", "ort ms", "ours/ort", "rounds", "max |Δ|", "M4 .text B", "scratch B", "compile s"]
    cells = [
        [
            r["model"],
            f"{r['ours_ms']:.3f}",
            f"{r['ort_ms']:.3f}",
            f"{r['ratio']:.2f}",
            str(r["rounds"]),
            f"{r['max_abs_error']:.1e}",
            f"{r['m4_text_bytes']:,}",
            f"{r['scratch_bytes']:,}",
            f"{r['compile_seconds']:.1f}",
        ]
        for r in rows
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]

    def line(values: list[str]) -> str:
        return "  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(values, widths)))

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(c) for c in cells)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(BENCH_MODELS), help="comma-separated (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per model (default 2)")
    parser.add_argument("--pipeline", default=None,
                        help="pass pipeline for both builds (default: the driver's for each target)")
    parser.add_argument("--load-passes", action="append", default=[], metavar="FILE.py|MODULE",
                        help="passes from outside Zant that --pipeline names (repeatable)")
    parser.add_argument("--json", action="store_true", help="print JSON rows instead of the table")
    args = parser.parse_args(argv)
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)} (choose from {', '.join(MODELS)})")
    with tempfile.TemporaryDirectory(prefix="zant-latency-") as folder:
        rows = [measure(n, args.pipeline, args.load_passes, args.seconds, Path(folder)) for n in names]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        if args.pipeline:
            print(f"pipeline: {args.pipeline}")
        else:
            print(f"pipeline: host {pipeline_for('host')}; Cortex-M4 {pipeline_for('cortex-m4')}")
        print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
