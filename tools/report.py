"""`zant report MODEL.onnx --target T [--board B] [-o report.html]`: one self-contained HTML page
per model, to read in a browser or share.

    zant report kws_int8.onnx --target cortex-m4 --board nucleo-l4r5zi \\
        --input-shape input_1=1x49x10x1 -o kws.html

What it shows, and where each figure comes from:

- **per node**: one row per ONNX node or fused group of nodes (the kernels that compute exactly
  those nodes), in program order, with its op types; its cycles and instructions of one inference
  on an MCU target (`zant profile`'s counts of the firmware image under QEMU, cycles from the core's
  timing model; the host has no timing model, so none there); the scratch bytes of the buffers it
  creates and the scratch live while it runs (from the planned module: the buffers each kernel
  touches, with the sizes of the arena plan); the bytes of the weights it reads; and the code
  bytes of its kernels (their function symbols in the profiled image, where each kernel is a
  function of its own);
- **the arena plan** as a time × address chart (`zant plan --svg`'s, `zant.plan_report`);
- **flash**: the weights, the code per kernel and the rest of the image;
- **budget and board fit**: what the image takes of the board's RAM (static RAM and the measured
  stack high-water mark) and flash, beside the plan's arenas and their lower bound.

The page holds its CSS, SVG and the small script that sorts the node table (click a column's
head) inline: it loads nothing from the network. The compile goes through the Python API
(`zant.compile`), with the options of `zant compile`; the per-node analysis imports and lowers
the model once more (`zant.driver.fitted_module`, the path `zant compile` and `zant plan` take,
so the page's plan is the image's, under a board's RAM or `--ram-budget` too).
"""

from __future__ import annotations

import argparse
import html
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from zant.backend.boards import Board
    from zant.tools.profile import Profile


@dataclass
class NodeRow:
    """One ONNX node or fused group of nodes (`label`: their names joined, as `zant profile`'s)."""

    label: str
    op_types: str
    kernels: int = 0  # top-level loop nests (and other ops) computing it
    created: dict[int, tuple[str, int]] = field(default_factory=dict)  # scratch it creates: (name, bytes)
    live_bytes: int = 0  # the most scratch bytes live at once while it runs
    weights: dict[int | None, tuple[str, int]] = field(default_factory=dict)  # constants read, by offset

    @property
    def created_bytes(self) -> int:
        return sum(size for _, size in self.created.values())

    @property
    def weight_bytes(self) -> int:
        return sum(size for _, size in self.weights.values())
    instructions: int | None = None  # None: not measured (host)
    cycles: int | None = None
    code_bytes: int | None = None  # its kernels' functions in the profiled image


@dataclass
class Report:
    model: str
    target: str
    board: Board | None
    optimize: str
    plan: dict  # the plan JSON with `summary` (`zant plan`'s)
    nodes: list[NodeRow]
    library_sizes: dict[str, int]  # sections of libNAME.so / libNAME.a
    image_sizes: dict[str, int] | None = None  # the firmware image's sections, flash and static RAM
    stack_bytes: int | None = None  # the image's measured stack high-water mark
    profile: Profile | None = None
    version: str = ""
    unmeasured: str | None = None  # why an MCU target's image was not run (no QEMU for its board)

    @property
    def weight_bytes(self) -> int:
        return sum(a["size"] for a in self.plan["arenas"] if a["role"] == "constant")


# -- what each node touches ------------------------------------------------------------------------


@dataclass(frozen=True)
class Buffer:
    """A buffer of the planned module. Names need not be unique (nine `requant_multiplier`
    constants in KWS), so a buffer is told apart by `ident`, its definition's position."""

    name: str
    role: str  # scratch, constant, input, output, persistent
    size: int  # bytes
    offset: int | None  # in its arena (constants: deduplicated ones share an offset)
    ident: int


def node_buffers(module: ModuleOp) -> list[tuple[list[str], set[Buffer]]]:
    """For each top-level op of the planned module's entry function that touches a buffer (a loop
    nest, a broadcast …), in program order: the ONNX nodes it computes (its location) and the
    buffers it reads or writes, looking through views and geps."""
    from zant.backend.plan import main_function
    from zant.dialects import uop
    from zant.ir.locations import node_names

    ops = list(main_function(module).body.block.ops)
    buffers: dict[object, Buffer] = {}
    for ident, op in enumerate(ops):
        if isinstance(op, uop.DefineGlobalOp | uop.DefineLocalOp):
            role = "scratch" if isinstance(op, uop.DefineLocalOp) else str(getattr(op.role.data, "value", op.role.data))
            offset = op.offset.value.data if op.offset is not None else None
            buffers[op] = Buffer(op.tensor_name.data, role, op.result.type.byte_size, offset, ident)

    def root(value) -> Buffer | None:
        while True:
            owner = value.owner
            if owner in buffers:
                return buffers[owner]
            if isinstance(owner, uop.ViewOp | uop.GepOp):
                value = owner.operands[0]
                continue
            return None

    result = []
    for op in ops:
        if op in buffers or isinstance(op, uop.ViewOp):
            continue
        touched = {buffer for inner in op.walk() for value in inner.operands if (buffer := root(value))}
        if touched:
            result.append((node_names(op.location), touched))
    return result


def node_rows(touched: Sequence[tuple[list[str], set[Buffer]]], op_types: Mapping[str, str]) -> list[NodeRow]:
    """The rows of the node table from `node_buffers`: one per group of nodes, in the order their
    first op runs. A scratch buffer is live from the first to the last top-level op touching it
    (the plan's own liveness is over the schedule it planned, before the last passes)."""
    span: dict[Buffer, list[int]] = {}
    for step, (_, buffers) in enumerate(touched):
        for buffer in buffers:
            if buffer.role == "scratch":
                span.setdefault(buffer, [step, step])[1] = step
    live = [
        sum(b.size for b, (first, last) in span.items() if first <= step <= last) for step in range(len(touched))
    ]
    rows: dict[str, NodeRow] = {}
    for step, (nodes, buffers) in enumerate(touched):
        label = ", ".join(nodes) or "(no ONNX node)"
        types = ", ".join(dict.fromkeys(op_types.get(n, "?") for n in nodes))
        row = rows.setdefault(label, NodeRow(label, types))
        row.kernels += 1
        row.live_bytes = max(row.live_bytes, live[step])
        for buffer in sorted(buffers, key=lambda b: b.ident):
            if buffer.role == "constant":
                row.weights[buffer.offset] = (buffer.name, buffer.size)
            elif buffer.role == "scratch" and span[buffer][0] == step:
                row.created[buffer.ident] = (buffer.name, buffer.size)
    return list(rows.values())


def add_profile(rows: list[NodeRow], profile: Profile) -> None:
    """Each row's instructions, cycles and code bytes from `zant profile`'s node groups."""
    by_label = {r.label: r for r in profile.nodes}
    for row in rows:
        measured = by_label.get(row.label)
        row.instructions = measured.instructions if measured else 0
        row.cycles = measured.cycles if measured else 0
        row.code_bytes = measured.code_bytes if measured else 0


# -- building it ---------------------------------------------------------------------------------------


def build_report(
    model: str | os.PathLike,
    target: str | None = None,
    board: str | os.PathLike | Board | None = None,
    *,
    optimize: str = "ReleaseFast",
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    freeze: Mapping | None = None,
    pipeline: str | None = None,
    plugins: Sequence[str] = (),
    progress: Callable[[str], None] | None = None,
    requant_rounding: str = "exact",
    flush_denormals: bool = False,
    ram_budget: int | None = None,
) -> Report:
    """Compile `model` for `target` (default: the core of `board`, else the host) as `zant.compile`
    does (`requant_rounding`, `flush_denormals`, `ram_budget`: its options of those names), analyse
    the planned module it ships, and on an MCU target run its image under QEMU (outputs and stack,
    then `zant profile`'s per-node counts)."""
    from zant.api import compile as compile_model
    from zant.backend.boards import board_for, find_board
    from zant.backend.plan import plan_summary
    from zant.driver import CompileOptions, fitted_module, planned_json
    from zant.tools.profile import node_op_types

    found = None if board is None else find_board(board)
    target = target or (found.target if found is not None else "host")
    shapes = {k: list(v) for k, v in input_shapes.items()} if input_shapes else None
    with tempfile.TemporaryDirectory(prefix="zant-report-") as folder:
        compiled = compile_model(
            model, target, found, optimize=optimize, output_dir=folder, input_shapes=shapes, freeze=freeze,
            pipeline=pipeline, plugins=plugins, progress=progress, requant_rounding=requant_rounding,
            flush_denormals=flush_denormals, ram_budget=ram_budget,
        )
        the_board = None if target == "host" else board_for(target, found)
        chosen = CompileOptions(
            target=target, input_shapes=shapes, freeze=freeze, pipeline=pipeline, plugins=tuple(plugins),
            ram_budget=ram_budget, requant_rounding=requant_rounding, flush_denormals=flush_denormals,
        )
        if progress:
            progress("analyse the planned module: the buffers and weights of each node")
        # The image's plan (under a board or budget, `fit_ram`'s choice), planned once more:
        # `zant.compile` keeps its files, not its module.
        planned = fitted_module(model, chosen, the_board)
        plan = planned_json(planned, "model", target, the_board, ram_budget=ram_budget)
        plan["summary"] = plan_summary(planned.module)
        rows = node_rows(node_buffers(planned.module), node_op_types(str(model)))
        del planned
        library_sizes = dict(compiled.result.sizes or {})
        image = stack = profile = unmeasured = None
        if the_board is not None:
            from zant.backend.firmware import qemu_missing

            unmeasured = qemu_missing(the_board)
        if the_board is not None and unmeasured is None:
            if progress:
                progress(f"run the image on {the_board.machine} under QEMU (stack high-water mark)")
            stack = compiled.run_firmware().stack_bytes
            image = dict(compiled.result.firmware_sizes or {})
            if progress:
                progress("profile: compile again, each kernel a function of its own, and count per node")
            profile = compiled.profile().data
            add_profile(rows, profile)
        elif compiled.result.firmware_sizes:
            image = dict(compiled.result.firmware_sizes)
    return Report(
        model=Path(model).name, target=target, board=the_board, optimize=optimize, plan=plan, nodes=rows,
        library_sizes=library_sizes, image_sizes=image, stack_bytes=stack, profile=profile,
        version=_version(), unmeasured=unmeasured,
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("zant")
    except PackageNotFoundError:
        return ""


# -- the page ------------------------------------------------------------------------------------------

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px 32px; color: #1d2430;
       background: #fff; max-width: 1320px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #dde;
     padding-bottom: 4px; }
p.sub { color: #556; margin: 0 0 16px; } p.note { color: #556; font-size: 13px; max-width: 1000px; }
figure { margin: 0; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { border: 1px solid #d5dae3; border-radius: 6px; padding: 10px 14px; min-width: 170px; background: #f7f9fc; }
.card b { display: block; font-size: 20px; } .card span { color: #556; font-size: 12px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e4e7ee; text-align: right; white-space: nowrap; }
th { background: #eef1f6; position: sticky; top: 0; cursor: pointer; user-select: none; }
td.text, th.text { text-align: left; white-space: normal; max-width: 340px; overflow-wrap: anywhere; }
tr.outside td { color: #667; font-style: italic; }
tr.total td { font-weight: bold; border-top: 2px solid #aab; }
.bar { display: inline-block; height: 10px; background: #4a7fb5; vertical-align: middle; margin-right: 6px; }
.fit { width: 640px; height: 18px; background: #eef1f6; border: 1px solid #ccd; position: relative; }
.fit div { height: 100%; float: left; }
.ok { color: #17723a; font-weight: bold; } .over { color: #b3261e; font-weight: bold; }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: middle; }
"""

SCRIPT = """
(function () {
  var table = document.getElementById("node-table");
  var heads = table.tHead.rows[0].cells;
  for (var i = 0; i < heads.length; i++) {
    heads[i].addEventListener("click", (function (column) {
      return function () {
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.querySelectorAll("tr.node"));
        var down = table.getAttribute("data-sorted") !== String(column);
        rows.sort(function (a, b) {
          var x = a.cells[column].getAttribute("data-value"), y = b.cells[column].getAttribute("data-value");
          var nx = parseFloat(x), ny = parseFloat(y);
          var order = (isNaN(nx) || isNaN(ny)) ? String(x).localeCompare(String(y)) : nx - ny;
          return down ? -order : order;
        });
        rows.forEach(function (row) { body.insertBefore(row, body.querySelector("tr.outside, tr.total")); });
        table.setAttribute("data-sorted", down ? String(column) : "");
      };
    })(i));
  }
  document.body.setAttribute("data-ready", String(table.querySelectorAll("tr.node").length));
})();
"""

COLORS = ("#4a7fb5", "#e08a3c", "#5aa469", "#c05780", "#8e6cbf", "#b59a3c", "#3cb5ad", "#9a9a9a")


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _short(text: str, limit: int = 64) -> str:
    """A long node name (TensorFlow exports join a dozen scopes) cut in the middle, where scopes
    repeat; the whole name is in the cell's title."""
    if len(text) <= limit:
        return text
    tail = (limit - 1) * 2 // 3
    return text[: limit - 1 - tail] + "…" + text[-tail:]


def _bytes(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


def _cell(value: int | None, text: str | None = None) -> str:
    shown = _bytes(value) if text is None else text
    return f'<td data-value="{-1 if value is None else value}">{shown}</td>'


def _fit_bar(parts: Sequence[tuple[str, int]], capacity: int) -> str:
    """A horizontal bar of `capacity` bytes filled by `parts` (label, bytes), with its legend."""
    total = sum(size for _, size in parts)
    scale = max(capacity, total, 1)
    blocks, legend = [], []
    for (label, size), color in zip(parts, COLORS * 4):
        if size <= 0:
            continue
        blocks.append(f'<div style="width:{100 * size / scale:.3f}%;background:{color}" title="{_e(label)} {size:,} B"></div>')
        legend.append(f'<span><i style="background:{color}"></i>{_e(label)} {size:,} B</span>')
    return f'<div class="fit">{"".join(blocks)}</div><div class="legend">{"".join(legend)}</div>'


def _verdict(used: int, capacity: int) -> str:
    if used <= capacity:
        return f'<span class="ok">fits</span>: {used:,} of {capacity:,} B ({100 * used / capacity:.1f}%), {capacity - used:,} B free'
    return f'<span class="over">does not fit</span>: {used:,} of {capacity:,} B, {used - capacity:,} B over'


def _cards(report: Report) -> str:
    s = report.plan["summary"]
    cards = []
    if report.profile is not None:
        p = report.profile
        ms = f"{p.total_cycles * 1000 / p.clock_hz:.2f} ms at {p.clock_hz / 1e6:g} MHz" if p.clock_hz else "no clock stated"
        cards.append((f"{p.total_cycles:,}", f"cycles per inference ({ms})"))
        cards.append((f"{p.total:,}", "instructions per inference"))
    else:
        why = "not measured (no QEMU here)" if report.unmeasured else "the host has no timing model"
        cards.append(("–", f"cycles: {why}"))
    cards.append((f"{s['scratch_bytes']:,} B", f"scratch arena (lower bound {s['lower_bound_bytes']:,} B)"))
    cards.append((f"{report.weight_bytes:,} B", f"weights ({report.plan.get('constants', 'embedded')})"))
    if report.image_sizes:
        cards.append((f"{report.image_sizes['flash']:,} B", "image flash (.text + .rodata + .data)"))
        ram = report.image_sizes["static_ram"] + (report.stack_bytes or 0)
        cards.append((f"{ram:,} B", "image RAM (static + measured stack)"))
    else:
        cards.append((f"{report.library_sizes.get('.text', 0):,} B", "library code (.text)"))
    return '<div class="cards">' + "".join(f'<div class="card"><b>{_e(v)}</b><span>{_e(t)}</span></div>' for v, t in cards) + "</div>"


def _fit_section(report: Report) -> str:
    from zant.backend.firmware import MIN_STACK
    from zant.backend.limits import ram_parts

    plan, board = report.plan, report.board
    s = plan["summary"]
    out = ["<h2>Budget and board fit</h2>"]
    ratio = s["scratch_bytes"] / s["lower_bound_bytes"] if s["lower_bound_bytes"] else 1.0
    out.append(
        f'<p>Scratch arena {s["scratch_bytes"]:,} B against a lower bound of {s["lower_bound_bytes"]:,} B '
        f"(the most bytes live at once; {ratio:.3f}×), {s['naive_bytes']:,} B without reuse; persistent "
        f"{s['persistent_bytes']:,} B; weights {report.weight_bytes:,} B ({_e(plan.get('constants', 'embedded'))}).</p>"
    )
    if board is None:
        out.append('<p class="note">Host target: no board to fit. The library\'s sections: '
                   + ", ".join(f"{k} {v:,} B" for k, v in report.library_sizes.items() if v) + ".</p>")
        return "\n".join(out)
    stack = report.stack_bytes
    parts = [(label, size) for label, size in ram_parts(plan, 0) if label != "stack" and size]
    if report.image_sizes:
        static = report.image_sizes["static_ram"]
        rest = static - sum(size for _, size in parts)
        if rest > 0:
            parts.append(("other static data", rest))
    parts.append(("stack (measured)" if stack is not None else f"stack (minimum {MIN_STACK:,})", stack if stack is not None else MIN_STACK))
    out.append(f"<h3>RAM of {_e(board.label)}</h3>")
    out.append(f"<p>{_verdict(sum(size for _, size in parts), board.ram.size)}</p>")
    out.append(_fit_bar(parts, board.ram.size))
    flash_parts = _flash_parts(report)
    if board.weights is not None:  # weights in their own region: the code in flash
        code = [(label, size) for label, size in flash_parts if not label.startswith("weights")]
        weights = [(label, size) for label, size in flash_parts if label.startswith("weights")]
        out.append(f"<h3>Flash of {_e(board.label)}</h3><p>{_verdict(sum(s for _, s in code), board.flash.size)}</p>")
        out.append(_fit_bar(code, board.flash.size))
        out.append(f"<h3>Weights region of {_e(board.label)}</h3><p>{_verdict(sum(s for _, s in weights), board.weights.size)}</p>")
        out.append(_fit_bar(weights, board.weights.size))
    else:
        out.append(f"<h3>Flash of {_e(board.label)}</h3><p>{_verdict(sum(s for _, s in flash_parts), board.flash.size)}</p>")
        out.append(_fit_bar(flash_parts, board.flash.size))
    return "\n".join(out)


def _flash_parts(report: Report) -> list[tuple[str, int]]:
    """The image's flash (or the library's, without an image): weights, the kernels' code, the
    rest of the code, the rest of the read-only data."""
    sizes = report.image_sizes or report.library_sizes
    weights = report.weight_bytes
    text = sizes.get(".text", 0)
    data = sizes.get(".rodata", 0) + sizes.get(".data", 0)
    kernels = sum(r.code_bytes or 0 for r in report.nodes)
    parts = [("weights", weights)]
    if kernels and kernels <= text:
        parts += [("kernel code", kernels), ("other code (entry point, runtime, start-up)", text - kernels)]
    else:
        parts.append(("code", text))
    parts.append(("other read-only data", max(data - weights, 0)))
    return parts


def _node_table(report: Report) -> str:
    measured = report.profile is not None
    total_cycles = report.profile.total_cycles if measured else 0
    largest = max((r.cycles or 0 for r in report.nodes), default=0) or 1
    heads = [("#", ""), ("nodes", "text"), ("op types", "text"), ("kernels", ""), ("cycles", ""),
             ("% cycles", ""), ("instructions", ""), ("scratch created (B)", ""), ("scratch live (B)", ""),
             ("weights (B)", ""), ("code (B)", "")]
    out = ['<table id="node-table"><thead><tr>'
           + "".join(f'<th class="{c}">{_e(h)}</th>' for h, c in heads) + "</tr></thead><tbody>"]
    for index, row in enumerate(report.nodes):
        share = 100 * row.cycles / total_cycles if measured and total_cycles and row.cycles is not None else None
        bar = f'<span class="bar" style="width:{80 * (row.cycles or 0) / largest:.1f}px"></span>' if measured else ""
        created = ", ".join(f"{n} {b:,}" for n, b in row.created.values())
        weights = ", ".join(f"{n} {b:,}" for n, b in row.weights.values())
        out.append(
            '<tr class="node">'
            f'<td data-value="{index}">{index + 1}</td>'
            f'<td class="text" data-value="{_e(row.label)}" title="{_e(row.label)}">{_e(_short(row.label))}</td>'
            f'<td class="text" data-value="{_e(row.op_types)}">{_e(row.op_types)}</td>'
            + _cell(row.kernels)
            + _cell(row.cycles, bar + _bytes(row.cycles))
            + (f'<td data-value="{share:.4f}">{share:.1f}</td>' if share is not None else '<td data-value="-1">–</td>')
            + _cell(row.instructions)
            + f'<td data-value="{row.created_bytes}" title="{_e(created)}">{row.created_bytes:,}</td>'
            + _cell(row.live_bytes)
            + f'<td data-value="{row.weight_bytes}" title="{_e(weights)}">{row.weight_bytes:,}</td>'
            + _cell(row.code_bytes)
            + "</tr>"
        )
    if measured:
        for row in report.profile.outside:
            out.append(
                f'<tr class="outside"><td></td><td class="text">outside the kernels: {_e(_short(row.label))}</td><td></td><td></td>'
                f"<td>{row.cycles:,}</td><td>{100 * row.cycles / total_cycles if total_cycles else 0:.1f}</td>"
                f"<td>{row.instructions:,}</td><td></td><td></td><td></td><td>{row.code_bytes:,}</td></tr>"
            )
        p = report.profile
        out.append(
            f'<tr class="total"><td></td><td class="text">total</td><td></td><td>{sum(r.kernels for r in report.nodes)}</td>'
            f"<td>{p.total_cycles:,}</td><td>100.0</td><td>{p.total:,}</td>"
            f"<td>{sum(r.created_bytes for r in report.nodes):,}</td><td>{report.plan['summary']['scratch_bytes']:,}</td>"
            f"<td>{report.weight_bytes:,}</td><td>{sum(r.code_bytes or 0 for r in report.nodes):,}</td></tr>"
        )
    out.append("</tbody></table>")
    return "\n".join(out)


def _node_notes(report: Report) -> str:
    if report.profile is None and report.unmeasured is not None:
        return f'<p class="note">Cycles and instructions are not measured: {_e(report.unmeasured)}.</p>'
    if report.profile is None:
        return (
            '<p class="note">Cycles and instructions are not measured on the host (no timing model); '
            "<code>zant report --target cortex-m4</code> counts them under QEMU. Code per kernel: the host "
            "library lets LLVM inline its kernels, so only its total is known.</p>"
        )
    p = report.profile
    return (
        f'<p class="note">One inference of the firmware image on {_e(p.board)} under QEMU ({_e(p.optimize)}): '
        f"instructions counted exactly, cycles from the {_e(p.target)} timing model and the board's flash "
        f"(<code>zant profile</code>). That image keeps every kernel a function of its own; the image "
        f"<code>zant compile --firmware</code> builds, where LLVM may inline them, takes {p.inlined_total:,} "
        f"instructions and {p.inlined_cycles:,} cycles. Code bytes are the kernels' function sizes in the profiled "
        f"image. Scratch created: the buffers a row's ops touch first; live: the most scratch bytes live at "
        f"once while it runs; weights: the constant tensors it reads (hover a cell for the names).</p>"
    )


def _flash_section(report: Report) -> str:
    out = ["<h2>Flash</h2>"]
    parts = _flash_parts(report)
    total = sum(size for _, size in parts)
    where = "the firmware image" if report.image_sizes else "the library"
    out.append(f"<p>{total:,} B in {where}.</p>")
    out.append(_fit_bar(parts, total))
    rows = []
    for row in report.nodes:
        weights = row.weight_bytes
        if weights or row.code_bytes:
            rows.append(f'<tr><td class="text" title="{_e(row.label)}">{_e(_short(row.label))}</td><td>{weights:,}</td><td>{_bytes(row.code_bytes)}</td></tr>')
    out.append(
        '<table id="flash-table"><thead><tr><th class="text">nodes</th><th>weights (B)</th><th>code (B)</th></tr></thead>'
        "<tbody>" + "".join(rows) + "</tbody></table>"
    )
    if report.profile is not None:
        kernels = "".join(
            f'<tr><td class="text">{_e(k.kernels[0])}</td><td class="text" title="{_e(k.label)}">{_e(_short(k.label))}</td><td>{k.code_bytes:,}</td></tr>'
            for k in report.profile.kernels
        )
        out.append(
            '<h3>Code per kernel</h3><table id="kernel-table"><thead><tr><th class="text">kernel</th>'
            f'<th class="text">nodes</th><th>code (B)</th></tr></thead><tbody>{kernels}</tbody></table>'
        )
    return "\n".join(out)


def render_html(report: Report) -> str:
    """The report as one HTML page: inline CSS, SVG and script, nothing fetched."""
    from zant.plan_report import render_svg

    where = report.target if report.board is None else f"{report.target} on {report.board.label}"
    title = f"zant report: {report.model} ({where})"
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{_e(report.model)}</h1>",
        f'<p class="sub">{_e(where)} · {_e(report.optimize)} · plan {_e(report.plan["plan_hash"])} · '
        f"zant {_e(report.version or '?')}</p>",
        _cards(report),
        '<section id="nodes"><h2>Per node</h2>', _node_notes(report), _node_table(report), "</section>",
        '<section id="plan"><h2>Arena plan</h2>',
        '<p class="note">The scratch arena over the schedule: one rectangle per buffer, from its first to its '
        "last use, at its offset (<code>zant plan --svg</code>).</p>",
        f'<figure id="plan-chart">{render_svg(report.plan, height=460)}</figure>', "</section>",
        '<section id="fit">', _fit_section(report), "</section>",
        '<section id="flash">', _flash_section(report), "</section>",
        f"<script>{SCRIPT}</script>",
        "</body></html>",
    ]) + "\n"


# -- the command -----------------------------------------------------------------------------------


def add_report_command(subparsers, add_compile_options: Callable[[argparse.ArgumentParser], None]) -> argparse.ArgumentParser:
    """`zant report`; `add_compile_options` adds the model and the options shared with `zant
    compile` (`--input-shape`, `--freeze`, `--pipeline`, `--load-passes`, `--debug`)."""
    from zant.backend.build import OPTIMIZE_MODES
    from zant.driver import TARGETS

    parser = subparsers.add_parser(
        "report",
        help="one self-contained HTML page: cycles, RAM and flash per node, the arena plan, the board fit",
        description="Compile a model as `zant compile` does and write one self-contained HTML page "
        "(no network, inline CSS/SVG/script): the nodes with their cycles (an MCU target, under "
        "QEMU), scratch and weight bytes and code size, the arena plan as a time x address chart, "
        "the flash breakdown and the fit in the board's RAM and flash.",
    )
    add_compile_options(parser)
    parser.add_argument("--target", choices=TARGETS, help="default: host, or the core of --board")
    parser.add_argument(
        "--board", metavar="NAME|FILE.toml",
        help="the board whose RAM and flash the image must fit (default: the target's; none for the host)",
    )
    parser.add_argument(
        "-O", "--optimize", default="ReleaseFast", choices=OPTIMIZE_MODES, help="build mode (default: ReleaseFast)"
    )
    parser.add_argument(
        "-o", "--output", default=None, metavar="FILE.html", help="where to write the page (default: MODEL.report.html)"
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true",
        help="print no stage lines on stderr (default: each stage as it starts, when stderr is a terminal)",
    )
    return parser


def cmd_report(args: argparse.Namespace, options) -> int:
    """`zant report`; `options`: the compile options the command line gave (`--freeze` …)."""
    from zant.progress import stage_reporter

    report = build_report(
        args.model, args.target, args.board, optimize=args.optimize, input_shapes=options.input_shapes,
        freeze=options.freeze, pipeline=options.pipeline, plugins=options.plugins,
        progress=stage_reporter(quiet=args.quiet), requant_rounding=options.requant_rounding,
        flush_denormals=options.flush_denormals, ram_budget=options.ram_budget,
    )
    output = Path(args.output or Path(args.model).with_suffix("").name + ".report.html")
    output.write_text(render_html(report), encoding="utf-8")
    measured = f", {report.profile.total_cycles:,} cycles per inference" if report.profile else ""
    print(f"wrote {output}: {len(report.nodes)} node rows{measured}")
    return 0

