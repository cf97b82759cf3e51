"""Cost of the models on emulated MCUs: flash, RAM, executed instructions and cycles, per QEMU board.

    python bench/mcu.py [MODEL ...] [--models digits,kws] [--boards mps2-an386,virt]
                        [-O ReleaseFast | --modes Debug,ReleaseSafe,ReleaseFast,ReleaseSmall]
                        [--mcu-pipeline P] [--compare-mcu-pipeline P] [--host-pipeline P]
                        [--load-passes FILE.py] [--dry-run]
                        [--json] [--output-md docs/mcu.md [--section TITLE]]

A MODEL is a bench model by name (the digits demo and the MLPerf-Tiny-shaped models of
bench/models.py, float, and their int8 QDQ versions `*_int8`) or the path of an `.onnx` file.
Each is compiled as `zant compile --target T --firmware` compiles it: the target's own pipeline
(`zant.pipelines.pipeline_for`, `fold-qdq` first) unless `--mcu-pipeline` gives another, and,
unless `-O`/`--modes` says otherwise, the default mode of `zant compile` (ReleaseFast).
`--compare-mcu-pipeline` adds a second pipeline (rows `A` and `B` side by side; instruction counts
are exact, so one run of each is the whole story). Each firmware image per board and mode (seeded
inputs) runs under QEMU and its outputs are compared with onnxruntime's on the same inputs (the
reference), and with the host build of `--host-pipeline` (default: the MCU pipeline, so that
comparison isolates the target's code). `--dry-run` prints the models and pipelines without
building. Everything is measured:

- flash:  .text + .rodata + .data of the linked image (model, runtime, embedded inputs)
- RAM:    .data + .bss + the stack the model's own calls used (`NAME_init`, `NAME_predict`),
          measured by painting the free stack just before them; the test harness's printing
          buffers are not counted (the whole image's high-water mark is `image_stack_bytes`)
- stack:  that stack alone
- instr:  instructions one `NAME_predict` call executes, counted exactly by a QEMU TCG plugin
          (the image run with two calls minus the run with one)
- instr/MAC: those instructions per multiply-accumulate of the model (`models.count_macs`)
- cycles: the cycles of that call, from the core's timing model and the board's flash
          (`zant.backend.timing`, via `firmware.measure_cost`: the same two runs give both)
- cycles/MAC: those cycles per multiply-accumulate
- ms:     those cycles at the board's clock (`Board.clock_hz`)
- CMSIS-NN: for KWS int8, our instructions over those of Arm's CMSIS-NN s8 kernels running the
          same layer stack (-Os, measured with the same counting plugin; the figures of the
          MCU-kernels issue): below 1 is fewer than CMSIS-NN. That baseline was counted in
          instructions, so this ratio stays on instructions, not cycles
- err vs ORT: max |image - onnxruntime| over the outputs (the ONNX file as given, onnxruntime's CPU
          provider, the image's inputs)
- err vs host: max |image - host build| over the outputs (the same pipeline built for the host:
          what the target's code changes, 0 where the pipeline's arithmetic is exact integers)
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
from models import MODELS, QUANTIZED, count_macs, resolve_model  # noqa: E402

from zant.backend.build import BOARDS, OPTIMIZE_MODES  # noqa: E402
from zant.backend.firmware import measure_cost, qemu_missing, run_firmware  # noqa: E402
from zant.driver import CompileOptions, compile_model, mode_pipeline, parse_pipeline  # noqa: E402
from zant.pipelines import MCU_PIPELINE, pipeline_for  # noqa: E402
from zant.errors import ZantError, run_cli  # noqa: E402
from zant.progress import Progress  # noqa: E402
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


def options(model: str, target: str = "host", pipeline: str | None = None, **kwargs) -> CompileOptions:
    """What `zant compile --target T` runs for the image (that target's own pipeline, unless
    `pipeline`); the host reference takes the microcontrollers' pipeline too, so the comparison
    isolates the target's code (the DSP cores' `arm-dsp-dot` is exact, so every MCU pipeline
    computes the same)."""
    if pipeline is None:  # a build for size runs as zant compile's (`mode_pipeline`)
        pipeline = MCU_PIPELINE if target == "host" else mode_pipeline(pipeline_for(target), target, kwargs.get("optimize", "ReleaseFast"))
    return CompileOptions(name=model, target=target, pipeline=pipeline, **kwargs)


def does_not_fit(error: ZantError) -> bool:
    text = str(error)
    # The driver's check before linking, or the linker's for what the plan does not know (code).
    return "do not fit" in text or "will not fit in region" in text or "stack on" in text or "overflowed by" in text


def max_error(got: list[np.ndarray], want: list[np.ndarray]) -> float:
    """max |got - want| over every element of the outputs (each flattened), 0 for none."""
    return max(
        (float(np.max(np.abs(g.astype(np.float64).reshape(-1) - w.astype(np.float64).reshape(-1))))
         for g, w in zip(got, want, strict=True) if g.size),
        default=0.0,
    )


def onnxruntime_outputs(path: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The model's outputs by onnxruntime (CPU provider) on `feeds`: the reference."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: feeds[i.name] for i in session.get_inputs()})


def measure(
    model: str, path: Path, board_name: str, optimize: str, host, folder: Path,
    pipeline: str | None = None, plugins: tuple[str, ...] = (), variant: str | None = None,
) -> dict:
    """One model on one board: build the image (with `pipeline`, default the core's), run it,
    compare, measure its instructions and cycles; `variant` labels the row when pipelines are compared."""
    board = BOARDS[board_name]
    row = {"model": model, **({"variant": variant} if variant else {}), "board": board_name,
           "core": board.target, "mode": optimize}
    try:
        result = compile_model(
            path, folder / model / board_name / (variant or ""),
            options(model, target=board.target, pipeline=pipeline, optimize=optimize, firmware=True,
                    board=board_name, plugins=plugins),
        )
    except ZantError as error:
        if does_not_fit(error):
            return {**row, "error": "does not fit"}
        raise
    assert result.firmware_path is not None and result.firmware_sizes is not None and result.feeds is not None
    run = run_firmware(result.firmware_path, board, result.outputs)
    feeds = [result.feeds[s.name] for s in result.inputs]
    error_vs_host = max_error(run.outputs, host(*feeds))
    error_vs_onnxruntime = max_error(run.outputs, onnxruntime_outputs(path, dict(zip((s.name for s in result.inputs), feeds))))
    sizes = result.firmware_sizes
    cost = measure_cost(board, result.firmware_path)
    return {
        **row,
        "flash_bytes": sizes["flash"],
        "ram_bytes": sizes["static_ram"] + run.model_stack_bytes,
        "stack_bytes": run.model_stack_bytes,
        "image_stack_bytes": run.stack_bytes,
        "sections": {k: sizes[k] for k in (".text", ".rodata", ".data", ".bss")},
        "instructions": cost.instructions,
        "cycles": cost.cycles,
        "ms": cost.milliseconds,
        "macs": count_macs(onnx.load(path)),
        "max_error_vs_onnxruntime": error_vs_onnxruntime,
        "max_error_vs_host": error_vs_host,
        "scratch_bytes": next(a["size"] for a in result.plan["arenas"] if a["role"] == "scratch"),
        "lower_bound_bytes": result.plan["lower_bound_bytes"],
    }


HEADERS = [
    "model", "board", "core", "mode", "flash B", "RAM B", "stack B", "instructions", "instr/MAC", "cycles",
    "cycles/MAC", "ms", "CMSIS-NN", "err vs ORT", "err vs host", "scratch B", "TVM/USMP B",
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


def headers_of(rows: list[dict]) -> list[str]:
    """HEADERS, with a `variant` column after the model's when pipelines are compared."""
    return ["model", "variant", *HEADERS[1:]] if any("variant" in r for r in rows) else HEADERS


def table_rows(rows: list[dict]) -> list[list[str]]:
    compared = any("variant" in r for r in rows)
    return [([r["model"], r.get("variant", ""), *cells[1:]] if compared else cells) for r, cells in zip(rows, _cells(rows))]


def _cells(rows: list[dict]) -> list[list[str]]:
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
            f"{row['cycles']:,}", f"{row['cycles'] / row['macs']:.2f}", "" if row["ms"] is None else f"{row['ms']:.2f}",
            "" if cmsis is None else f"{row['instructions'] / cmsis:.2f}×",
            f"{row['max_error_vs_onnxruntime']:.1e}", f"{row['max_error_vs_host']:.1e}",
            f"{row['scratch_bytes']:,}", "" if tvm is None else f"{tvm:,}",
        ])
    return cells


def format_table(rows: list[dict]) -> str:
    cells, headers = table_rows(rows), headers_of(rows)
    text_columns = TEXT_COLUMNS + len(headers) - len(HEADERS)
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]

    def render(line: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < text_columns else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))).rstrip()

    return "\n".join([render(headers), render(["-" * w for w in widths]), *map(render, cells)])


def markdown_table(rows: list[dict]) -> list[str]:
    headers = headers_of(rows)
    text_columns = TEXT_COLUMNS + len(headers) - len(HEADERS)
    return [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join(["---"] * text_columns + ["---:"] * (len(headers) - text_columns)) + "|",
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
        "on seeded inputs. `err vs ORT` is max |image - onnxruntime| over its outputs on the same inputs",
        "(the reference); `err vs host` max |image - host build of the same pipeline| (what the",
        "target's code changes: 0 where the pipeline's arithmetic is exact integers).",
        "Flash is `.text + .rodata + .data` of the whole image (model, startup, semihosting output and",
        "the embedded inputs); RAM is `.data + .bss` plus the stack the model's calls used, measured by",
        "painting the free stack just before them (not the harness's printing buffers); instructions",
        "are those one `NAME_predict` call executes, counted exactly by a QEMU TCG plugin. QEMU does not",
        "model time: `cycles` are an estimate from the same runs, each core's timing table applied to",
        "the instructions it ran and the board's flash wait states (`zant/backend/timing.py`, every",
        "figure with its source; the M33, M7, M55 and riscv32 rows are stated approximations), and `ms`",
        "those cycles at the board's clock (the MPS2/MPS3 FPGA images' 20-32 MHz, the micro:bit's 16 MHz,",
        "the NUCLEO-L4R5ZI's 120 MHz with 5 flash wait states behind its ART cache; `virt` states none).",
        "`CMSIS-NN` is our instructions over those of Arm's CMSIS-NN s8 kernels on the same KWS layers:",
        "that baseline was counted in instructions, so the ratio stays on instructions.",
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
    "reshape becomes an integer op requantized with a Q31 multiplier and a shift, and the final "
    "Softmax an integer QLinearSoftmax (an exp table): the graph is integer from the input's "
    "QuantizeLinear to the output's DequantizeLinear. `scratch B` is the planned scratch arena; `TVM/USMP B` the workspace TVM "
    "publishes for the same MLPerf Tiny model (KWS, ResNet-8, AD = autoencoder, VWW = mobilenet)."
)


def format_section(rows: list[dict], modes: list[str], title: str, command: str) -> str:
    lines = [f"## {title}", "", f"Generated by `{command}` from a real run; do not edit.", build_line(modes), ""]
    if any(row["model"] in QUANTIZED for row in rows):
        lines += [INT8_NOTE, ""]
    return "\n".join([*lines, *markdown_table(rows)]) + "\n"


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="*", help="bench model names or .onnx paths")
    parser.add_argument("--models", help=f"comma-separated, as MODEL (default: {','.join(DEFAULT_MODELS)})")
    parser.add_argument("--boards", default=",".join(BOARDS), help="comma-separated QEMU boards")
    parser.add_argument("-O", "--optimize", default=DEFAULT_MODE, choices=OPTIMIZE_MODES,
                        help=f"the build mode (default {DEFAULT_MODE}, as zant compile)")
    parser.add_argument("--modes", help="comma-separated build modes, each measured (instead of -O)")
    parser.add_argument("--mcu-pipeline", help="the images' pipeline (default: each core's, pipeline_for)")
    parser.add_argument("--compare-mcu-pipeline", help="a second images' pipeline, measured beside the first")
    parser.add_argument("--host-pipeline", help="the host reference build's pipeline (default: the MCU pipeline)")
    parser.add_argument("--load-passes", action="append", default=[], metavar="FILE.py|MODULE",
                        help="passes from outside Zant that a pipeline names (repeatable)")
    parser.add_argument("--dry-run", action="store_true", help="print the models and pipelines, build nothing")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--output-md", help="also write the table as Markdown (docs/mcu.md)")
    parser.add_argument("--section", help="with --output-md: replace only the section of this title")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    models = list(args.model) + [m for m in (args.models or "").split(",") if m]
    models = models or list(DEFAULT_MODELS)
    boards = [b for b in args.boards.split(",") if b]
    modes = [m for m in (args.modes or args.optimize).split(",") if m]
    named = [m for m in models if not (m.endswith(".onnx") or "/" in m)]
    unknown = [m for m in named if m != "digits" and m not in MODELS | QUANTIZED] + [b for b in boards if b not in BOARDS]
    unknown += [m for m in modes if m not in OPTIMIZE_MODES]
    if unknown:
        parser.error(f"unknown model, board or mode: {', '.join(unknown)}")
    variants: list[tuple[str | None, str | None]] = [(None, args.mcu_pipeline)]
    if args.compare_mcu_pipeline:
        variants = [("A", args.mcu_pipeline), ("B", args.compare_mcu_pipeline)]
    plugins = tuple(args.load_passes)

    def run() -> int:
        targets = sorted({BOARDS[b].target for b in boards})
        for _, pipeline in variants:  # a mistyped pipeline stops here, before any build
            for target in targets:
                parse_pipeline(pipeline or pipeline_for(target), plugins)
        if args.host_pipeline:
            parse_pipeline(args.host_pipeline, plugins)
        missing_files = [m for m in models if m not in named and not Path(m).is_file()]
        if missing_files:
            raise ZantError(f"no model file '{missing_files[0]}'")
        if args.dry_run:
            print(f"models: {', '.join(models)}")
            print(f"host reference pipeline: {args.host_pipeline or MCU_PIPELINE}")
            for label, pipeline in variants:
                for board in boards:
                    target = BOARDS[board].target
                    print(f"{f'variant {label}: ' if label else ''}{board} ({target}) pipeline {pipeline or pipeline_for(target)}")
            return 0
        for board in boards:
            missing = qemu_missing(BOARDS[board])
            if missing:
                raise ZantError(missing)
        rows = []
        # a status line with the time left on a terminal; a row per measurement as it comes
        tracker = Progress(len(models) * len(boards) * len(modes) * len(variants), "measurements")
        with tempfile.TemporaryDirectory(prefix="zant-bench-mcu-") as name:
            folder = Path(name)
            for spec in models:
                model, path = resolve_model(spec, folder)
                reference = options(model, pipeline=args.host_pipeline, plugins=plugins)
                host = load_compiled(compile_model(path, folder / model / "host", reference))
                for board in boards:
                    for mode in modes:
                        for label, pipeline in variants:
                            rows.append(measure(model, path, board, mode, host, folder / mode, pipeline, plugins, label))
                            if not args.json:
                                tracker.write(format_table(rows[-1:]).splitlines()[-1])
                            tracker.advance()
        tracker.close()
        print(json.dumps(rows, indent=2) if args.json else format_table(rows))
        if args.output_md and args.section:
            path = Path(args.output_md)
            command = "python bench/mcu.py " + shlex.join(argv if argv is not None else sys.argv[1:])
            section = format_section(rows, modes, args.section, command)
            path.write_text(replace_section(path.read_text(encoding="utf-8"), args.section, section), encoding="utf-8")
        elif args.output_md:
            Path(args.output_md).write_text(format_markdown(rows, modes), encoding="utf-8")
        return 0

    return run_cli("mcu.py", run, debug=False)


if __name__ == "__main__":
    sys.exit(main())
