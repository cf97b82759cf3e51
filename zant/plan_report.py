"""`zant plan MODEL.onnx [--target T] [--board B] [--svg plan.svg]`: the arena plan of a model, as
text and as a chart: the plan of the very module `zant compile --target T` ships (same compile
path, same pipeline; with `--board`, the pipeline of `zant compile --firmware --board B`, which
splits the scratch arena over the board's memories if it lists several). It takes the compile's
options that change the module: `--input-shape`, `--freeze`, `--pipeline`, `--load-passes`,
`--constants`.

The chart is time × offset: one rectangle per scratch tensor (x from its first to its last use in
the schedule, y from its offset to offset + size), labelled with its name and size; a dashed line
marks the lower bound and a solid line the arena size. With several scratch regions (one per
memory) they are stacked, fastest at the bottom, each band labelled with its memory. Plain SVG
text, no plotting library.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zant.driver import CompileOptions


PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69",
           "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f")


def add_plan_command(
    subparsers, add_compile_options: Callable[[argparse.ArgumentParser], None]
) -> argparse.ArgumentParser:
    """`zant plan`; `add_compile_options` adds the model and the options it shares with `zant
    compile` (`--input-shape`, `--freeze`, `--pipeline`, `--load-passes`, `--debug`)."""
    from zant.dialects.abi import CONSTANT_MODES
    from zant.driver import TARGETS

    parser = subparsers.add_parser(
        "plan", help="plan the arenas of a model as `zant compile` does and report (or draw) them"
    )
    add_compile_options(parser)
    parser.add_argument(
        "--target", choices=TARGETS, help="plan with this target's pipeline (default: host, or the core of --board)"
    )
    parser.add_argument(
        "--strategy", choices=("naive", "greedy", "best"),
        help="plan-arenas strategy (default: best; not with --pipeline, which states its own)",
    )
    parser.add_argument(
        "--alignment", type=int,
        help="plan-arenas alignment in bytes (default: the target's, 64 on the host, 16 on the MCUs; not with --pipeline)",
    )
    parser.add_argument(
        "--constants", choices=CONSTANT_MODES,
        help="where the weights live, as zant compile's option (default: embedded)",
    )
    parser.add_argument(
        "--board", help="plan for this board's memories (a built-in board or a board file; its core is the default target)"
    )
    parser.add_argument("--svg", help="write the time × offset chart of the scratch arena here (default: none)")
    parser.add_argument("--json", action="store_true", help="print the plan JSON instead of a table")
    parser.set_defaults(func=cmd_plan)
    return parser


def plan_model(
    path: str, strategy: str | None = None, alignment: int | None = None, target: str = "host", board=None,
    options: CompileOptions | None = None,
) -> dict:
    """The plan `zant compile --target target` writes for the model (NAME `model`), with a
    `summary` for the table and the chart. `strategy` and `alignment` replace `plan-arenas`'
    defaults in the target's pipeline; without them the pipeline is exactly the compile's.
    `board` (a `Board`, a built-in board's name or a board file): that of a firmware image, whose
    memories the scratch arena is split over. `options`: the compile's other options that change
    the module (`input_shapes`, `freeze`, `pipeline`, `plugins`, `constants`, `requant_rounding`,
    `flush_denormals`)."""
    from zant.backend.boards import board_for
    from zant.backend.plan import plan_summary
    from dataclasses import replace

    from zant.driver import CompileOptions, fitted_module, planned_json
    from zant.errors import ZantError

    options = replace(options or CompileOptions(), target=target)
    if board is not None:
        board = board_for(target, board)
    if options.pipeline is not None and (strategy is not None or alignment is not None):
        raise ZantError("--strategy and --alignment are plan-arenas options: with --pipeline, give them there")
    planned = fitted_module(path, options, board, strategy=strategy, alignment=alignment)
    plan = planned_json(planned, "model", target, board, ram_budget=options.ram_budget)
    plan["summary"] = plan_summary(planned.module)
    return plan


def cmd_plan(args: argparse.Namespace, options: CompileOptions | None = None) -> int:
    """`zant plan`; `options`: the compile options the command line gave (`--freeze` …)."""
    target = args.target
    if args.board is not None and target is None:
        from zant.backend.boards import find_board

        target = find_board(args.board).target
    if options is not None:
        options.constants = args.constants
    plan = plan_model(args.model, args.strategy, args.alignment, target or "host", args.board, options)
    if args.json:
        print(json.dumps(plan, indent=2))
    else:
        print(format_plan(plan))
    if args.svg:
        with open(args.svg, "w", encoding="utf-8") as out:
            out.write(render_svg(plan))
        print(f"wrote {args.svg}")
    return 0


def format_plan(plan: dict) -> str:
    s = plan["summary"]
    lines = [
        f"strategy {s['strategy']}: scratch {s['scratch_bytes']:,} B, lower bound {s['lower_bound_bytes']:,} B "
        f"(aligned {s['aligned_lower_bound_bytes']:,} B), naive {s['naive_bytes']:,} B, "
        f"constants {s['constant_bytes']:,} B, persistent {s['persistent_bytes']:,} B",
        f"plan {plan['plan_hash']}  layout {plan['layout_hash']}  tensor layout {plan['tensor_layout_hash']}",
        f"{'region':<24} {'id':>10} {'role':<10} {'memory':<10} {'size':>10} {'align':>5}",
    ]
    for r in plan["regions"]:
        lines.append(
            f"{r['name'][:24]:<24} {r['id']:>#10x} {r['role']:<10} {r['memory'][:10]:<10} {r['size']:>10,} {r['alignment']:>5}"
        )
    lines.append(f"{'tensor':<24} {'memory':<10} {'offset':>8} {'size':>8} {'first':>6} {'last':>6}")
    lives = {l["name"]: l for l in plan["lifetimes"]}
    for t in plan["tensors"]:
        if t["role"] == "scratch":
            l = lives[t["name"]]
            lines.append(
                f"{t['name'][:24]:<24} {t['memory'][:10]:<10} {t['offset']:>8} {t['size']:>8} {l['first_use']:>6} {l['last_use']:>6}"
            )
    return "\n".join(lines)


def _color(name: str) -> str:
    return PALETTE[hashlib.sha256(name.encode()).digest()[0] % len(PALETTE)]


def render_svg(plan: dict, width: int = 960, height: int = 560) -> str:
    """The time × offset chart of the scratch arena (offset 0 at the bottom)."""
    s = plan["summary"]
    arena = max(s["scratch_bytes"], 1)
    bound = s["lower_bound_bytes"]
    lives = {l["name"]: l for l in plan["lifetimes"]}
    scratch = [t for t in plan["tensors"] if t["role"] == "scratch"]
    # Several scratch regions (one per memory): stacked in plan order, fastest first, at the bottom.
    bands = [r for r in plan["regions"] if r["role"] == "scratch"]
    base, cursor = {}, 0
    for r in bands:
        base[r["memory"]] = cursor
        cursor += r["size"]
    steps = max([l["last_use"] for l in plan["lifetimes"]] + [0]) + 1
    left, right, top, bottom = 80, 30, 50, 50
    plot_w, plot_h = width - left - right, height - top - bottom
    top_value = max(arena, bound) * 1.08

    def x(step: float) -> float:
        return left + plot_w * step / steps

    def y(offset: float) -> float:
        return top + plot_h * (1 - offset / top_value)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="22" font-size="15" font-weight="bold">scratch arena: '
        f'{s["scratch_bytes"]:,} B ({s["strategy"]}), lower bound {bound:,} B, naive {s["naive_bytes"]:,} B</text>',
        f'<line x1="{left}" y1="{y(0)}" x2="{left + plot_w}" y2="{y(0)}" stroke="black"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{y(0)}" stroke="black"/>',
        f'<text x="{left + plot_w / 2}" y="{height - 12}" text-anchor="middle">schedule step</text>',
        f'<text x="16" y="{top + plot_h / 2}" transform="rotate(-90 16 {top + plot_h / 2})" '
        f'text-anchor="middle">offset (bytes)</text>',
    ]
    tick_every = max(1, steps // 20)
    for step in range(0, steps + 1, tick_every):
        out.append(f'<text x="{x(step):.1f}" y="{y(0) + 14:.1f}" text-anchor="middle">{step}</text>')
    for k in range(6):
        value = round(top_value * k / 5)
        out.append(f'<line x1="{left - 4}" y1="{y(value):.1f}" x2="{left}" y2="{y(value):.1f}" stroke="black"/>')
        out.append(f'<text x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{value:,}</text>')
    for t in scratch:
        l = lives[t["name"]]
        x0, x1 = x(l["first_use"]), x(l["last_use"] + 1)
        at = base.get(t["memory"], 0) + t["offset"]
        y0, y1 = y(at + t["size"]), y(at)
        label = html.escape(f'{t["name"]} {t["size"]:,} B')
        out.append(
            f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{max(y1 - y0, 1):.1f}" '
            f'fill="{_color(t["name"])}" fill-opacity="0.75" stroke="#333"><title>{label} at '
            f'{t["offset"]:,}, steps {l["first_use"]}..{l["last_use"]}</title></rect>'
        )
        if y1 - y0 >= 12 and x1 - x0 >= 6 * len(label) * 0.6:
            out.append(f'<text x="{x0 + 3:.1f}" y="{(y0 + y1) / 2 + 4:.1f}">{label}</text>')
    if len(bands) > 1:
        for r in bands:
            top_of = base[r["memory"]] + r["size"]
            out.append(f'<line x1="{left}" y1="{y(top_of):.1f}" x2="{left + plot_w}" y2="{y(top_of):.1f}" stroke="#36c" stroke-dasharray="2 3"/>')
            out.append(f'<text x="{left + 4}" y="{y(top_of) + 12:.1f}" fill="#36c">{html.escape(r["memory"])} {r["size"]:,} B</text>')
    lines = ((arena, "", "arena", left + plot_w - 4, "end"),
             (bound, ' stroke-dasharray="6 4"', "lower bound", left + 4, "start"))
    for value, style, text, tx, anchor in lines:
        out.append(f'<line x1="{left}" y1="{y(value):.1f}" x2="{left + plot_w}" y2="{y(value):.1f}" stroke="#c00"{style}/>')
        out.append(f'<text x="{tx}" y="{y(value) - 4:.1f}" text-anchor="{anchor}" fill="#c00">{text} {value:,} B</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
