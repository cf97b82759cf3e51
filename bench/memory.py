"""Arena memory of the benchmark models: naive sum, planned scratch, lower bound, constants.

    python bench/memory.py [--strategy naive|greedy|best] [--models kws,resnet8] [--json]
    python bench/memory.py --budgets 1,0.8,0.6,0.4 [--target cortex-m4] [--models ...] [--mlperf [DIR]]

Each model from bench/models.py is compiled with `zant.driver` without a build
(`CompileOptions(build=False)`), and its plan JSON is read:

- naive:   sum of the sizes of every scratch tensor (what one slot per intermediate would take)
- scratch: the planned scratch arena (`plan["arenas"]`, role "scratch")
- lower:   `plan["lower_bound_bytes"]`, max over the schedule of the bytes live at once
- ratio:   scratch / lower (1.00 is optimal for this schedule); naive/scratch is the saving
- const:   the constant arena (weights, flash)
- compile: import + passes + emit, seconds (informative only: this is not a timed test)

Without `--strategy` the driver's default pipeline runs (`onnx-to-uop,plan-arenas` …), so the
planner's own default is measured; `--strategy X` runs the same pipeline with
`plan-arenas{strategy=X}` in place of `plan-arenas`.

With `--budgets`, each model is compiled for `--target` (default cortex-m4) without a budget
and then with `zant compile --ram-budget` at each fraction of its unbudgeted scratch arena (a
number above 2 is a budget in bytes): the scratch arena the compiler reached under each budget
(the default plan where it fits, else `schedule-in-place`: convolutions written over their
inputs through line and plane buffers, and below those `schedule-patches`: the early stage run
tile by tile, docs/ram-budget.md), or `miss` with the smallest it reaches; `in-place nests`
counts the nests scheduled so, `patches` names the grid, the stage and the MACs it recomputes. `--mlperf [DIR]` adds MLPerf Tiny's int8
models from DIR (default ../shared/mlperf_tiny/onnx beside the repository) as `mlperf_kws_int8`
... (input shapes as in docs/mlperf-tiny.md). `--models mobilenet_v2_int8` (with --budgets only:
bench/models.py's BELOW_THE_LAYER_BOUND) is a MobileNetV2-1.0 int8 at 224x224.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from models import BELOW_THE_LAYER_BOUND, MODELS  # noqa: E402

from zant.driver import CompileOptions, compile_model  # noqa: E402
from zant.errors import ZantError  # noqa: E402
from zant.pipelines import pipeline_for  # noqa: E402

MLPERF_DIR = Path(__file__).resolve().parents[2] / "shared" / "mlperf_tiny" / "onnx"
MLPERF_SHAPES = {
    "kws_int8": {"input_1": [1, 49, 10, 1]},
    "vww_int8": {"input_1_int8": [1, 96, 96, 3]},
    "ic_int8": {"input_1_int8": [1, 32, 32, 3]},
    "ad_int8": {"input_1": [1, 640]},
}
"""MLPerf Tiny's int8 models and the input shapes their symbolic batch is fixed to."""


def arena_size(plan: dict, role: str) -> int:
    return sum(a["size"] for a in plan["arenas"] if a["role"] == role)


def measure(name: str, pipeline: str, folder: Path) -> dict:
    """Compile one model (no build) and summarize its plan."""
    model = MODELS[name]()
    path = folder / f"{name}.onnx"
    onnx.save(model, path)
    start = time.perf_counter()
    result = compile_model(path, folder / name, CompileOptions(name=name, build=False, pipeline=pipeline))
    elapsed = time.perf_counter() - start
    plan = result.plan
    scratch_tensors = [t for t in plan["tensors"] if t["role"] == "scratch"]
    naive = sum(t["size"] for t in scratch_tensors)
    scratch = arena_size(plan, "scratch")
    lower = plan["lower_bound_bytes"]
    return {
        "model": name,
        "nodes": len(model.graph.node),
        "scratch_tensors": len(scratch_tensors),
        "naive_bytes": naive,
        "scratch_bytes": scratch,
        "lower_bound_bytes": lower,
        "scratch_over_lower": scratch / lower if lower else None,
        "naive_over_scratch": naive / scratch if scratch else None,
        "constant_bytes": arena_size(plan, "constant"),
        "io_bytes": sum(t["size"] for t in plan["tensors"] if t["role"] in ("input", "output")),
        "compile_seconds": elapsed,
        "timings": result.timings,
        "plan_hash": plan.get("plan_hash"),
    }


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def format_table(rows: list[dict]) -> str:
    headers = ["model", "nodes", "bufs", "naive B", "scratch B", "lower B", "scratch/lower",
               "naive/scratch", "const B", "compile s", "passes s"]
    lines = []
    for row in rows:
        if "error" in row:
            lines.append([row["model"], "error: " + row["error"]])
            continue
        lines.append([
            row["model"],
            str(row["nodes"]),
            str(row["scratch_tensors"]),
            f"{row['naive_bytes']:,}",
            f"{row['scratch_bytes']:,}",
            f"{row['lower_bound_bytes']:,}",
            _ratio(row["scratch_over_lower"]),
            _ratio(row["naive_over_scratch"]),
            f"{row['constant_bytes']:,}",
            f"{row['compile_seconds']:.2f}",
            f"{row['timings'].get('passes', 0.0):.2f}",
        ])
    full = [r for r in lines if len(r) == len(headers)]
    widths = [max(len(h), *(len(r[i]) for r in full)) if full else len(h) for i, h in enumerate(headers)]
    widths[0] = max(widths[0], *(len(r[0]) for r in lines)) if lines else widths[0]

    def render(cells: list[str]) -> str:
        if len(cells) != len(headers):
            return "  ".join([cells[0].ljust(widths[0]), *cells[1:]])
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    out = [render(headers), render(["-" * w for w in widths])]
    out.extend(render(r) for r in lines)
    return "\n".join(out)


def budget_row(name: str, path: Path, shapes: dict | None, target: str, budgets: list[float], folder: Path) -> dict:
    """Scratch of `path` for `target` without a budget and under each of `budgets`."""
    def compile_under(budget: int | None) -> dict:
        try:
            result = compile_model(path, folder / f"{name}-{budget}", CompileOptions(
                name="model", target=target, build=False, input_shapes=shapes, ram_budget=budget,
            ))
        except ZantError as error:
            reached = str(error).split(" B", 1)[0].rsplit(" ", 1)[-1]
            return {"budget": budget, "fits": False, "smallest_bytes": int(reached.replace(",", ""))}
        schedules = result.plan.get("schedules", [])
        return {
            "budget": budget, "fits": True, "scratch_bytes": arena_size(result.plan, "scratch"),
            "in_place_nests": sum(s["schedule"] == "in-place" for s in schedules),
            "patches": [s for s in schedules if s["schedule"] == "patches"],
            "lower_bound_bytes": result.plan["lower_bound_bytes"],
        }

    free = compile_under(None)
    bytes_ = [int(b) if b > 2 else int(b * free["scratch_bytes"]) for b in budgets]
    return {"model": name, "target": target, "default": free, "budgets": [compile_under(b) for b in bytes_]}


def format_budgets(rows: list[dict]) -> str:
    lines = []
    for row in rows:
        if "error" in row:
            lines.append(f"{row['model']}: error: {row['error']}")
            continue
        free = row["default"]
        lines.append(f"{row['model']} ({row['target']}): default scratch {free['scratch_bytes']:,} B")
        for entry in row["budgets"]:
            if entry["fits"]:
                patches = "".join(
                    f", patches {p['tiles'][0]}x{p['tiles'][1]} over {p['layers']} layers to {p['output'][:24]} "
                    f"(stage MACs {p['layer_macs']:,} -> {p['macs']:,}, +{p['macs'] - p['layer_macs']:,})"
                    for p in entry["patches"]
                )
                lines.append(
                    f"  budget {entry['budget']:>9,} B: scratch {entry['scratch_bytes']:>9,} B "
                    f"({entry['scratch_bytes'] / free['scratch_bytes']:.2f}x), in-place nests {entry['in_place_nests']}"
                    + patches
                )
            else:
                lines.append(f"  budget {entry['budget']:>9,} B: miss, smallest {entry['smallest_bytes']:,} B")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strategy", help="plan-arenas strategy (naive, greedy, best …); default: the pass's own")
    parser.add_argument("--models", help=f"comma-separated subset of {','.join(MODELS)}")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--budgets", help="comma-separated RAM budgets: fractions of the default scratch, or bytes")
    parser.add_argument("--target", default=None, help="with --budgets: the target (default cortex-m4)")
    parser.add_argument("--mlperf", nargs="?", const=str(MLPERF_DIR), default=None,
                        help="with --budgets: also MLPerf Tiny's int8 models from this folder")
    args = parser.parse_args(argv)
    if args.budgets:
        return main_budgets(args, parser)

    names = list(MODELS) if not args.models else [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)} (choose from {', '.join(MODELS)})")
    pipeline = pipeline_for("host", strategy=args.strategy)  # the host pipeline, as before

    rows = []
    with tempfile.TemporaryDirectory(prefix="zant-bench-memory-") as folder:
        for name in names:
            try:
                rows.append(measure(name, pipeline, Path(folder)))
            except Exception as error:  # a pipeline spec the planner does not know, a lowering gap …
                message = (str(error).strip().splitlines() or [""])[0]
                rows.append({"model": name, "error": f"{type(error).__name__}: {message}"})

    if args.json:
        print(json.dumps({"pipeline": pipeline, "models": rows}, indent=2))
    else:
        print(f"pipeline: {pipeline}")
        print(format_table(rows))
    return 1 if any("error" in r for r in rows) else 0


def main_budgets(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    budgets = [float(b) for b in args.budgets.split(",") if b.strip()]
    target = args.target or "cortex-m4"
    names = [] if args.models is None and args.mlperf else list(MODELS)
    if args.models:
        names = [n.strip() for n in args.models.split(",") if n.strip()]
    entries: list[tuple[str, Path | None, dict | None]] = []
    builders = {**MODELS, **BELOW_THE_LAYER_BOUND}
    for n in names:
        if n in builders:
            entries.append((n, None, None))
        elif not args.mlperf:
            parser.error(f"unknown model {n} (choose from {', '.join(builders)})")
    if args.mlperf:
        folder = Path(args.mlperf)
        wanted = [n.removeprefix("mlperf_") for n in names if n.startswith("mlperf_")] or list(MLPERF_SHAPES)
        for key in wanted:
            if (folder / f"{key}.onnx").is_file():
                entries.append((f"mlperf_{key}", folder / f"{key}.onnx", MLPERF_SHAPES[key]))
    rows = []
    with tempfile.TemporaryDirectory(prefix="zant-bench-memory-") as name:
        folder = Path(name)
        for model_name, path, shapes in entries:
            if path is None:
                path = folder / f"{model_name}.onnx"
                onnx.save(builders[model_name](), path)
            try:
                rows.append(budget_row(model_name, path, shapes, target, budgets, folder))
            except Exception as error:
                message = (str(error).strip().splitlines() or [""])[0]
                rows.append({"model": model_name, "error": f"{type(error).__name__}: {message}"})
    print(json.dumps(rows, indent=2) if args.json else format_budgets(rows))
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
