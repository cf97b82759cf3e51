"""Cost of the models on emulated MCUs: flash, RAM and executed instructions, per QEMU board.

    python bench/mcu.py [--models digits,kws] [--boards mps2-an386,virt]
                        [-O ReleaseFast | --modes Debug,ReleaseSafe,ReleaseFast,ReleaseSmall]
                        [--json] [--output-md docs/mcu.md [--section TITLE]]

Every model (the digits demo and the MLPerf-Tiny-shaped models of bench/models.py, float, and
their int8 QDQ versions `*_int8`) is compiled as `zant compile --target T --firmware` compiles it:
the target's own pipeline (`zant.pipelines.pipeline_for`, `fold-qdq` first) and, unless `-O`/`--modes` says
otherwise, the default mode of `zant compile` (ReleaseFast). Each firmware image per board and
mode (seeded inputs) runs under QEMU and is compared with the host build of the same pipeline on
the same inputs. Everything is measured:

- flash:  .text + .rodata + .data of the linked image (model, runtime, embedded inputs)
- RAM:    .data + .bss + the stack high-water mark the image measured (stack painting)
- stack:  that high-water mark alone
- instr:  instructions one `NAME_predict` call executes, counted exactly by a QEMU TCG plugin
          (the image run with two calls minus the run with one)
- instr/MAC: those instructions per multiply-accumulate of the model (`models.count_macs`)
- CMSIS-NN: for KWS int8, our instructions over those of Arm's CMSIS-NN s8 kernels running the
          same layer stack (-Os, measured with the same counting plugin; the figures of the
          MCU-kernels issue): below 1 is fewer than CMSIS-NN
- err:    max |image - host build| over the outputs
- scratch: the planned scratch arena (activations), beside TVM/USMP's published workspace for
          the int8 MLPerf Tiny models

With `--section TITLE`, `--output-md` replaces (or appends) the section `## TITLE` of the
existing file instead of rewriting it, so the int8 rows can be measured on their own.

A model that does not fit a board's memory is reported as such. This is not a timed test.
"""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import onnx  # noqa: E402
from models import MODELS, QUANTIZED, count_macs, model_file  # noqa: E402

from zant.backend.build import BOARDS, OPTIMIZE_MODES  # noqa: E402
from zant.backend.firmware import count_instructions, qemu_missing, run_firmware  # noqa: E402
from zant.driver import CompileOptions, compile_model  # noqa: E402
from zant.pipelines import MCU_PIPELINE, pipeline_for  # noqa: E402
from zant.errors import ZantError  # noqa: E402
from zant.runtime import load_compiled  # noqa: E402

DEFAULT_MODELS = ("digits", "kws", "resnet8", "autoencoder", "mobilenet")
TVM_USMP_WORKSPACE = {"kws_int8": 17_232, "mobilenet_int8": 64_800, "resnet8_int8": 66_112, "autoencoder_int8": 1_160}
"""Published TVM (USMP) workspace bytes of the int8 MLPerf Tiny models (KWS, VWW, ResNet-8, AD)."""

CMSIS_NN_INSTRUCTIONS = {("kws_int8", "mps2-an386"): 8_564_118, ("kws_int8", "mps3-an547"): 1_702_128}
"""Instructions of one KWS inference with CMSIS-NN's s8 kernels (the same layer stack, -Os; M55
with its Helium kernels), counted under QEMU with the same plugin: the yardstick of the MCU
kernels."""


DEFAULT_MODE = CompileOptions().optimize
"""What `zant compile` builds unless told otherwise: the mode the main table measures."""


def options(model: str, target: str = "host", **kwargs) -> CompileOptions:
    """What `zant compile --target T` runs for the image (that target's own pipeline); the host
    reference takes the microcontrollers' pipeline too, so the comparison isolates the target's
    code (the DSP cores' `arm-dsp-dot` is exact, so every MCU pipeline computes the same)."""
    pipeline = MCU_PIPELINE if target == "host" else pipeline_for(target)
    return CompileOptions(name=model, target=target, pipeline=pipeline, **kwargs)


def does_not_fit(error: ZantError) -> bool:
    text = str(error)
    # The driver's check before linking, or the linker's for what the plan does not know (code).
    return "do not fit" in text or "will not fit in region" in text or "stack on" in text or "overflowed by" in text


def measure(model: str, path: Path, board_name: str, optimize: str, host, folder: Path) -> dict:
    """One model on one board: build the image, run it, compare, count its instructions."""
    board = BOARDS[board_name]
    row = {"model": model, "board": board_name, "core": board.target, "mode": optimize}
    try:
        result = compile_model(
            path, folder / model / board_name,
            options(model, target=board.target, optimize=optimize, firmware=True, board=board_name),
        )
    except ZantError as error:
        if does_not_fit(error):
            return {**row, "error": "does not fit"}
        raise
    assert result.firmware_path is not None and result.firmware_sizes is not None and result.feeds is not None
    run = run_firmware(result.firmware_path, board, result.outputs)
    expected = host(*(result.feeds[s.name] for s in result.inputs))
    error = max(
        (float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) for got, want in zip(run.outputs, expected) if got.size),
        default=0.0,
    )
    sizes = result.firmware_sizes
    return {
        **row,
        "flash_bytes": sizes["flash"],
        "ram_bytes": sizes["static_ram"] + run.stack_bytes,
        "stack_bytes": run.stack_bytes,
        "sections": {k: sizes[k] for k in (".text", ".rodata", ".data", ".bss")},
        "instructions": count_instructions(board, result.firmware_path),
        "macs": count_macs(onnx.load(path)),
        "max_error_vs_host": error,
        "scratch_bytes": next(a["size"] for a in result.plan["arenas"] if a["role"] == "scratch"),
        "lower_bound_bytes": result.plan["lower_bound_bytes"],
    }


HEADERS = [
    "model", "board", "core", "mode", "flash B", "RAM B", "stack B", "instructions", "instr/MAC", "CMSIS-NN",
    "max err", "scratch B", "TVM/USMP B",
]


TEXT_COLUMNS = 4  # model, board, core, mode: left-aligned


def parse_markdown_rows(text: str) -> list[dict[str, str]]:
    """The rows of every table `markdown_table` wrote into `text`, as header → cell (to check
    a committed document against a new run)."""
    rows, header = [], None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = cells
        elif not set(line) <= set("|-: "):
            rows.append(dict(zip(header, cells)))
    return rows


def table_rows(rows: list[dict]) -> list[list[str]]:
    cells = []
    for row in rows:
        if "error" in row:
            cells.append([row["model"], row["board"], row["core"], row["mode"], row["error"], *[""] * (len(HEADERS) - 5)])
            continue
        tvm = TVM_USMP_WORKSPACE.get(row["model"])
        cmsis = CMSIS_NN_INSTRUCTIONS.get((row["model"], row["board"]))
        cells.append([
            row["model"], row["board"], row["core"], row["mode"], f"{row['flash_bytes']:,}", f"{row['ram_bytes']:,}",
            f"{row['stack_bytes']:,}", f"{row['instructions']:,}", f"{row['instructions'] / row['macs']:.2f}",
            "" if cmsis is None else f"{row['instructions'] / cmsis:.2f}×",
            f"{row['max_error_vs_host']:.1e}", f"{row['scratch_bytes']:,}", "" if tvm is None else f"{tvm:,}",
        ])
    return cells


def format_table(rows: list[dict]) -> str:
    cells = table_rows(rows)
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(HEADERS)]

    def render(line: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < TEXT_COLUMNS else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))).rstrip()

    return "\n".join([render(HEADERS), render(["-" * w for w in widths]), *map(render, cells)])


def markdown_table(rows: list[dict]) -> list[str]:
    return [
        "| " + " | ".join(HEADERS) + " |",
        "|" + "|".join(["---"] * TEXT_COLUMNS + ["---:"] * (len(HEADERS) - TEXT_COLUMNS)) + "|",
        *("| " + " | ".join(cells) + " |" for cells in table_rows(rows)),
    ]


def build_line(modes: list[str]) -> str:
    qemu = subprocess.run(["qemu-system-arm", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    built = ", ".join(f"`{m}`" for m in modes)
    return f"Build: {built} with the pinned Zig and the MCU pipeline; emulator: {qemu}; host: {platform.machine()}."


def format_markdown(rows: list[dict], modes: list[str]) -> str:
    lines = [
        "# Models on emulated MCUs",
        "",
        "Generated by `python bench/mcu.py --output-md docs/mcu.md` from a real run; do not edit.",
        build_line(modes),
        "",
        "Each model runs as a firmware image (`zant compile --firmware`) on the board's emulated core,",
        "on seeded inputs, and its outputs are compared with the host build's (`max err`).",
        "Flash is `.text + .rodata + .data` of the whole image (model, startup, semihosting output and",
        "the embedded inputs); RAM is `.data + .bss + the stack high-water mark` measured by stack",
        "painting; instructions are those one `NAME_predict` call executes, counted exactly by a QEMU",
        "TCG plugin (they are instructions, not cycles: QEMU does not model timing).",
        "`scratch B` is the planned scratch (activation) arena; `TVM/USMP B` the workspace TVM's",
        "unified static memory planner publishes for the int8 MLPerf Tiny model of that name.",
        "",
        *markdown_table(rows),
    ]
    return "\n".join(lines) + "\n"


def replace_section(text: str, title: str, body: str) -> str:
    """`text` with its `## title` section (up to the next `## ` heading) replaced by `body`,
    or `body` appended when there is none."""
    heading = f"## {title}\n"
    start = text.find(heading)
    if start < 0:
        return text.rstrip("\n") + "\n\n" + body
    end = text.find("\n## ", start + len(heading))
    if end < 0:
        return text[:start] + body
    return text[:start] + body.rstrip("\n") + "\n\n" + text[end + 1 :]


INT8_NOTE = (
    "The `*_int8` models are the float models with BatchNorm folded, quantized by onnxruntime's "
    "`quantize_static` (QDQ format, int8 activations, per-channel int8 weights, seeded calibration "
    "data; `bench/models.py`) and compiled with `fold-qdq` first: every Conv, Gemm, Add, pool and "
    "reshape becomes an integer op requantized with a Q31 multiplier and a shift; only the final "
    "Softmax stays float. `scratch B` is the planned scratch arena; `TVM/USMP B` the workspace TVM "
    "publishes for the same MLPerf Tiny model (KWS, ResNet-8, AD = autoencoder, VWW = mobilenet)."
)


def format_section(rows: list[dict], modes: list[str], title: str, command: str) -> str:
    lines = [f"## {title}", "", f"Generated by `{command}` from a real run; do not edit.", build_line(modes), ""]
    if any(row["model"] in QUANTIZED for row in rows):
        lines += [INT8_NOTE, ""]
    return "\n".join([*lines, *markdown_table(rows)]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS), help="comma-separated models")
    parser.add_argument("--boards", default=",".join(BOARDS), help="comma-separated QEMU boards")
    parser.add_argument("-O", "--optimize", default=DEFAULT_MODE, choices=OPTIMIZE_MODES,
                        help=f"the build mode (default {DEFAULT_MODE}, as zant compile)")
    parser.add_argument("--modes", help="comma-separated build modes, each measured (instead of -O)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--output-md", help="also write the table as Markdown (docs/mcu.md)")
    parser.add_argument("--section", help="with --output-md: replace only the section of this title")
    args = parser.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    boards = [b for b in args.boards.split(",") if b]
    modes = [m for m in (args.modes or args.optimize).split(",") if m]
    unknown = [m for m in models if m != "digits" and m not in MODELS | QUANTIZED] + [b for b in boards if b not in BOARDS]
    unknown += [m for m in modes if m not in OPTIMIZE_MODES]
    if unknown:
        parser.error(f"unknown model, board or mode: {', '.join(unknown)}")
    for board in boards:
        missing = qemu_missing(BOARDS[board])
        if missing:
            parser.error(missing)

    rows = []
    with tempfile.TemporaryDirectory(prefix="zant-bench-mcu-") as name:
        folder = Path(name)
        for model in models:
            path = model_file(model, folder)
            host = load_compiled(compile_model(path, folder / model / "host", options(model)))
            for board in boards:
                for mode in modes:
                    rows.append(measure(model, path, board, mode, host, folder / mode))
                    if not args.json:
                        print(format_table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    print(json.dumps(rows, indent=2) if args.json else format_table(rows))
    if args.output_md and args.section:
        path = Path(args.output_md)
        command = "python bench/mcu.py " + shlex.join(argv if argv is not None else sys.argv[1:])
        section = format_section(rows, modes, args.section, command)
        path.write_text(replace_section(path.read_text(encoding="utf-8"), args.section, section), encoding="utf-8")
    elif args.output_md:
        Path(args.output_md).write_text(format_markdown(rows, modes), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
