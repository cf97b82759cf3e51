"""`zant profile`: instructions and cycles per ONNX node of a model's firmware image, under QEMU.

    zant profile MODEL.onnx [--target cortex-m4] [--board B] [-O MODE] [--ram-budget BYTES] [--svg FILE]

The image is built as `zant compile --firmware` builds it, with one difference: its root declares
`zant_profile_kernels`, so every kernel (one Zig function per top-level loop nest, see
`zant.backend.zig_printer`) stays a function of its own instead of being inlined into
`MODEL_predict`. The instruction-counting TCG plugin (`insn_plugin.zig`) is given the address range
of every function of the image's symbol table (`zant.backend.elf.function_symbols`) and counts the
instructions executed in each. As `count_instructions` does, the image runs its model once and
then twice, and the difference is one inference: start-up cancels out, and the rows add up to
`count_instructions` of the same image exactly.

The same runs record the executed blocks (`blocks=1`), from which `zant.backend.timing` gives each
function's cycles with the core's timing model and the board's flash. A library function a kernel
calls is counted exactly in instructions (the plugin attributes them dynamically); its cycles are
shared out by those instructions at the library code's average cycles per instruction inside
kernels (a stated approximation), so the cycle rows add up to the total as well.

Each kernel's comment `// nodes: [...]` in the generated Zig (its ops' locations: the ONNX nodes
it computes, several after `fuse-loops`) maps it to nodes; a node's op type comes from the model.
Rows: one per node or fused group of nodes (the kernels computing exactly those nodes summed),
then what ran outside every kernel, per function (`MODEL_predict`'s own code, `memcpy` …); and a
second table per kernel. `--svg` writes the first table as a horizontal bar chart.
"""

from __future__ import annotations

import argparse
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from zant.errors import ZantError

PROFILE_DECLARATION = (
    "\n// zant profile: every kernel a function of its own (see kernel_call in the model's file).\n"
    "pub const zant_profile_kernels = true;\n"
)

NAME = "model"
"""The model's symbol prefix in the profiled image."""


@dataclass
class Row:
    label: str  # node names, or a function's name for code outside the kernels
    op_types: str
    instructions: int
    kernels: list[str] = field(default_factory=list)  # the kernel functions summed in this row
    cycles: int = 0
    code_bytes: int = 0  # the size of its functions in the profiled image (kernels kept apart)


@dataclass
class Profile:
    """Instructions of one inference, per node group (`nodes`, program order), outside the
    kernels per function (`outside`) and per kernel function (`kernels`)."""

    model: str
    target: str
    board: str
    optimize: str
    total: int
    inlined_total: int  # the image as `zant compile --firmware` builds it, where kernels may be inlined
    nodes: list[Row]
    outside: list[Row]
    kernels: list[Row]
    total_cycles: int = 0  # `zant.backend.timing`'s cycles of the same inference
    inlined_cycles: int = 0
    clock_hz: int | None = None  # the board's, for milliseconds

    def rows(self) -> list[Row]:
        return self.nodes + self.outside


# -- counting ---------------------------------------------------------------------------------------


def _ranges(symbols) -> tuple[list[tuple[int, int]], list[list[str]]]:
    """Sorted, disjoint address ranges of the functions and the names at each (aliases share one)."""
    ranges: list[tuple[int, int]] = []
    names: list[list[str]] = []
    for symbol in symbols:
        start, end = symbol.address, symbol.address + symbol.size
        if ranges and start < ranges[-1][1]:
            if start == ranges[-1][0]:  # an alias (memcpy and __aeabi_memcpy): one range, both names
                names[-1].append(symbol.name)
                ranges[-1] = (start, max(end, ranges[-1][1]))
                continue
            start = ranges[-1][1]  # overlapping (not seen in Zig images): the rest only
            if start >= end:
                continue
        ranges.append((start, end))
        names.append([symbol.name])
    return ranges, names


_COUNT_LINE = re.compile(r"^(RANGE|CALLED|INKERNELS) (\d+) (\d+)$", re.MULTILINE)
_OUTSIDE_LINE = re.compile(r"^OUTSIDE (\d+)$", re.MULTILINE)


@dataclass
class Counts:
    """What the plugin counted, by range index (index `len(ranges)`: code in no range)."""

    own: list[int]  # instructions executed in each range
    called: list[int]  # a kernel's: library instructions run while it was the current kernel
    in_kernels: list[int]  # a library range's: its instructions run while a kernel was current
    cycles: list[int]  # cycles of each range's own instructions (`zant.backend.timing`)

    def __sub__(self, other: Counts) -> Counts:
        def minus(mine: list[int], theirs: list[int]) -> list[int]:
            return [a - b for a, b in zip(mine, theirs, strict=True)]

        return Counts(
            minus(self.own, other.own), minus(self.called, other.called), minus(self.in_kernels, other.in_kernels),
            minus(self.cycles, other.cycles),
        )


def _counts(board, elf: Path, repeat: int, ranges: list[tuple[int, int]], kinds: dict[str, list[int]]) -> Counts:
    """The plugin's counts for an image run `repeat` times."""
    from zant.backend.firmware import timed_run
    from zant.backend.timing import CORES, cycles_by_range
    from zant.targets import RECORDS

    arguments = ["ranges=" + ":".join(f"{start:x}-{end:x}" for start, end in ranges)]
    arguments += [f"{kind}={':'.join(map(str, indexes))}" for kind, indexes in kinds.items() if indexes]
    _, blocks, stderr = timed_run(board, elf, repeat, arguments)
    outside = _OUTSIDE_LINE.search(stderr)
    if outside is None:
        raise ZantError(f"the instruction-counting plugin reported no ranges:\n{stderr.strip()[-2000:]}")
    cycles = cycles_by_range(blocks, CORES[RECORDS[board.target].timing], [s for s, _ in ranges], [e for _, e in ranges])
    counts = Counts(*([0] * (len(ranges) + 1) for _ in range(3)), cycles)
    counts.own[-1] = int(outside[1])
    table = {"RANGE": counts.own, "CALLED": counts.called, "INKERNELS": counts.in_kernels}
    for kind, index, count in _COUNT_LINE.findall(stderr):
        table[kind][int(index)] = int(count)
    return counts


def _kernel_of(symbol: str, kernels: dict[str, list[str]]) -> str | None:
    """The kernel function a symbol names: Zig qualifies a file's functions (`model.kernel_x`)."""
    short = symbol.rsplit(".", 1)[-1]
    return short if short in kernels and (symbol == short or symbol.startswith(NAME + ".")) else None


def _is_caller(symbol: str) -> bool:
    """Whether a function calls the kernels or runs around them: the model's exported entry points
    (`model_predict`) and the image's own code (`model.firmware.run`, the reset code)."""
    return symbol.startswith((f"{NAME}_", f"{NAME}.{NAME}_", f"{NAME}.firmware.")) or symbol == "_start"


def node_op_types(model_path: str) -> dict[str, str]:
    """ONNX node name (as the importer names it) → op type."""
    import onnx

    from zant.frontend.onnx_importer import node_location

    model = onnx.load(model_path, load_external_data=False)
    return {node_location(node, i).desc.data: node.op_type for i, node in enumerate(model.graph.node)}


def profile_model(
    model_path: str,
    target: str = "cortex-m4",
    board=None,
    optimize: str = "ReleaseFast",
    options: dict | None = None,
    out_dir: str | Path | None = None,
    progress=None,
) -> Profile:
    """Build the profiled image of `model_path` for `target` (on `board`, default the target's),
    run it under QEMU and count one inference's instructions per node and kernel. `options` are
    more `CompileOptions` fields (inputs, input_shapes, pipeline …); `out_dir` keeps the build."""
    from zant.backend.boards import board_for
    from zant.backend.elf import function_symbols
    from zant.backend.firmware import build_firmware, measure_cost, qemu_missing
    from zant.driver import TARGETS, CompileOptions, compile_model

    if target not in TARGETS:
        raise ZantError(f"unknown target '{target}' (choose from {', '.join(TARGETS)})")
    if target == "host":
        raise ZantError("zant profile runs a firmware image under QEMU: give an MCU --target (e.g. cortex-m4)")
    board = board_for(target, board)
    missing = qemu_missing(board)
    if missing:
        raise ZantError(missing)
    folder = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="zant-profile-"))
    try:
        compile_options = CompileOptions(
            name=NAME, target=target, optimize=optimize, firmware=True, board=board, progress=progress,
            **(options or {}),
        )
        result = compile_model(model_path, folder, compile_options)
        assert result.firmware_path is not None
        inlined = result.firmware_path.replace(folder / f"{NAME}.inlined.elf")
        root = folder / f"{NAME}.firmware.zig"
        root.write_text(root.read_text(encoding="utf-8") + PROFILE_DECLARATION, encoding="utf-8")
        if progress:
            progress(f"image {NAME}.elf again with every kernel a function of its own")
        elf = build_firmware(root, NAME, board, optimize)
        kernels = result.kernels
        ranges, names = _ranges(function_symbols(elf))
        kernel_of = [next((k for k in (_kernel_of(n, kernels) for n in aliases) if k), None) for aliases in names]
        kinds = {
            "kernels": [i for i, k in enumerate(kernel_of) if k is not None],
            "callers": [i for i, aliases in enumerate(names) if kernel_of[i] is None and any(map(_is_caller, aliases))],
        }
        if progress:
            progress(f"run on {board.machine} under QEMU, once and twice, counting per function")
        # one inference: the image run twice minus run once (start-up and the first run cancel)
        counts = _counts(board, elf, 2, ranges, kinds) - _counts(board, elf, 1, ranges, kinds)
        inlined_cost = measure_cost(board, inlined)
    finally:
        if out_dir is None:
            shutil.rmtree(folder, ignore_errors=True)

    op_types = node_op_types(model_path)
    by_kernel: dict[str, int] = {}
    kernel_cycles: dict[str, int] = {}
    kernel_code: dict[str, int] = {}
    outside: list[Row] = []
    labels = [min(aliases, key=lambda n: ("." in n, len(n))) for aliases in names]  # memcpy, model_predict
    # library code run inside kernels: its cycles per instruction there, to share out by calls
    inside = [(counts.cycles[i] * counts.in_kernels[i] / counts.own[i], counts.in_kernels[i])
              for i in range(len(counts.own)) if counts.own[i] and counts.in_kernels[i]]
    library_cpi = sum(c for c, _ in inside) / max(1, sum(n for _, n in inside))
    for index, label in enumerate(labels + ["(no function symbol)"]):
        kernel = kernel_of[index] if index < len(names) else None
        if kernel is not None:  # its own code and the library code it called
            by_kernel[kernel] = by_kernel.get(kernel, 0) + counts.own[index] + counts.called[index]
            kernel_cycles[kernel] = (
                kernel_cycles.get(kernel, 0) + counts.cycles[index] + round(counts.called[index] * library_cpi)
            )
            kernel_code[kernel] = kernel_code.get(kernel, 0) + ranges[index][1] - ranges[index][0]
        elif counts.own[index] - counts.in_kernels[index]:  # what ran outside the kernels
            share = (counts.own[index] - counts.in_kernels[index]) / counts.own[index] if counts.own[index] else 0
            code = ranges[index][1] - ranges[index][0] if index < len(ranges) else 0
            outside.append(Row(label, "", counts.own[index] - counts.in_kernels[index],
                               cycles=round(counts.cycles[index] * share), code_bytes=code))
    outside.sort(key=lambda r: -r.cycles)

    def types(nodes: list[str]) -> str:
        return ", ".join(dict.fromkeys(op_types.get(n, "?") for n in nodes)) if nodes else ""

    kernel_rows, groups = [], {}
    for function, nodes in kernels.items():  # in the file's order: the program's
        row = Row(", ".join(nodes) or "(no ONNX node)", types(nodes), by_kernel.get(function, 0), [function],
                  kernel_cycles.get(function, 0), kernel_code.get(function, 0))
        kernel_rows.append(row)
        group = groups.setdefault(row.label, Row(row.label, row.op_types, 0))
        group.instructions += row.instructions
        group.cycles += row.cycles
        group.code_bytes += row.code_bytes
        group.kernels.append(function)
    total = sum(counts.own)
    if sum(by_kernel.values()) + sum(r.instructions for r in outside) != total:
        raise ZantError("zant profile: the per-function counts do not add up to the total (a plugin bug)")
    return Profile(
        model=Path(model_path).name, target=target, board=board.name, optimize=optimize, total=total,
        inlined_total=inlined_cost.instructions, total_cycles=sum(counts.cycles),
        inlined_cycles=inlined_cost.cycles, clock_hz=board.clock_hz,
        nodes=list(groups.values()), outside=outside, kernels=kernel_rows,
    )


# -- reporting --------------------------------------------------------------------------------------


def _percent(part: int, total: int) -> str:
    return f"{100 * part / total:5.1f}" if total else "    -"


def headline(profile: Profile) -> str:
    """The table's first line: model, target, board, mode, instructions, cycles, and milliseconds
    at the board's clock."""
    text = (
        f"{profile.model} on {profile.target} ({profile.board}, {profile.optimize}): "
        f"{profile.total:,} instructions, {profile.total_cycles:,} cycles per inference"
    )
    if profile.clock_hz:
        text += f" ({profile.total_cycles * 1000 / profile.clock_hz:.2f} ms at {profile.clock_hz / 1e6:g} MHz)"
    return text


def format_profile(profile: Profile) -> str:
    total, cycles = profile.total, profile.total_cycles
    labels = [r.label for r in profile.nodes + profile.kernels] + ["  " + r.label for r in profile.outside]
    label_width = min(48, max([len("node"), *map(len, labels)]) + 2)
    type_width = max([len("op types"), *(len(r.op_types) for r in profile.rows())]) + 2

    def line(label: str, op_types: str, extra: str, count: int, spent: int) -> str:
        if len(label) > label_width - 2:
            label = label[: label_width - 3] + "…"
        return (f"{label:<{label_width}}{op_types:<{type_width}}{extra:>8}{count:>14,}{spent:>14,}  "
                f"{_percent(spent, cycles)}")

    lines = [
        headline(profile),
        "",
        f"{'node':<{label_width}}{'op types':<{type_width}}{'kernels':>8}{'instructions':>14}{'cycles':>14}  % cycles",
    ]
    lines += [line(r.label, r.op_types, str(len(r.kernels)), r.instructions, r.cycles) for r in profile.nodes]
    lines.append("outside the kernels:")
    lines += [line("  " + r.label, "", "", r.instructions, r.cycles) for r in profile.outside]
    lines.append(line("total", "", "", total, cycles))
    change = f"{100 * (total - profile.inlined_total) / profile.inlined_total:+.1f}%" if profile.inlined_total else "-"
    lines.append(
        f"(the image zant compile --firmware builds, where LLVM may inline the kernels: "
        f"{profile.inlined_total:,} instructions, {profile.inlined_cycles:,} cycles; this one {change} instructions)"
    )
    kernel_width = max([len("uop kernel"), *(len(r.kernels[0]) for r in profile.kernels)]) + 2
    lines += ["", f"{'uop kernel':<{kernel_width}}{'nodes':<{label_width}}{'instructions':>14}{'cycles':>14}  % cycles"]
    lines += [
        f"{r.kernels[0]:<{kernel_width}}{r.label:<{label_width}}{r.instructions:>14,}{r.cycles:>14,}  "
        + _percent(r.cycles, cycles)
        for r in profile.kernels
    ]
    return "\n".join(lines)


def profile_svg(profile: Profile) -> str:
    """The node table as a horizontal bar chart (hand-written SVG)."""
    # Imported here: xml.sax.saxutils loads urllib and http (18 ms), which every `zant`
    # command would pay, since the CLI imports this module to describe `zant profile`.
    from xml.sax.saxutils import escape

    rows = profile.nodes + [Row(f"outside: {r.label}", "", r.instructions, cycles=r.cycles) for r in profile.outside]
    label_width, bar_width, row_height, top = 300, 440, 18, 40
    largest = max((r.cycles for r in rows), default=0) or 1
    height = top + row_height * len(rows) + 20
    width = label_width + bar_width + 170
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<text x="10" y="20" font-weight="bold">{escape(headline(profile))}</text>',
    ]
    for i, row in enumerate(rows):
        y = top + i * row_height
        length = bar_width * row.cycles / largest
        label = row.label if len(row.label) <= 45 else row.label[:44] + "…"
        fill = "#4a7fb5" if not row.label.startswith("outside: ") else "#aaaaaa"
        parts += [
            f'<text x="{label_width - 6}" y="{y + 13}" text-anchor="end">{escape(label)}</text>',
            f'<rect x="{label_width}" y="{y + 2}" width="{length:.1f}" height="{row_height - 4}" fill="{fill}"/>',
            f'<text x="{label_width + length + 6:.1f}" y="{y + 13}">{row.cycles:,} cycles '
            f"({_percent(row.cycles, profile.total_cycles).strip()}%), {row.instructions:,} instructions</text>",
        ]
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


# -- the command ------------------------------------------------------------------------------------


def add_profile_command(subparsers) -> argparse.ArgumentParser:
    from zant.backend.build import OPTIMIZE_MODES
    from zant.driver import TARGETS

    parser = subparsers.add_parser(
        "profile", help="run the firmware image under QEMU: instructions and cycles per ONNX node"
    )
    parser.add_argument("model", help="the .onnx model")
    parser.add_argument(
        "--target", choices=[t for t in TARGETS if t != "host"], help="default: cortex-m4, or the core of --board"
    )
    parser.add_argument("--board", metavar="NAME|FILE.toml", help="board of the image (default: the target's)")
    parser.add_argument(
        "-O", "--optimize", default="ReleaseFast", choices=OPTIMIZE_MODES, help="build mode (default: ReleaseFast)"
    )
    parser.add_argument(
        "--input", action="append", metavar="NAME=FILE.npy",
        help="an input tensor (repeatable; default: random values, seeded)",
    )
    parser.add_argument(
        "--cast-inputs", action="store_true",
        help="convert an --input array of another element type to the input's (default: refuse it)",
    )
    parser.add_argument(
        "--input-shape", action="append", metavar="NAME=D0xD1x...",
        help="fix a symbolic input shape (repeatable; default: none)",
    )
    parser.add_argument("--svg", metavar="FILE", help="also write the per-node table as a bar chart (default: none)")
    parser.add_argument(
        "-o", "--output-dir", help="keep the build (sources, images) in this folder (default: a temporary one, deleted)"
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    return parser
