"""Arena memory of the benchmark models: naive sum, planned scratch, lower bound, constants.

    python bench/memory.py [--strategy naive|greedy|best] [--models kws,resnet8] [--json]

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

from models import MODELS  # noqa: E402

from zant.driver import CompileOptions, compile_model  # noqa: E402
from zant.pipelines import pipeline_for  # noqa: E402


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strategy", help="plan-arenas strategy (naive, greedy, best …); default: the pass's own")
    parser.add_argument("--models", help=f"comma-separated subset of {','.join(MODELS)}")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)

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


if __name__ == "__main__":
    sys.exit(main())
