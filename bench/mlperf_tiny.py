"""The four MLPerf Tiny reference models, int8 and float, on the benchmark's board, beside the
published v1.1 results.

    python bench/mlperf_tiny.py [--models-dir DIR] [--models kws_int8,ad_fp32] [--seed N]
                                [--json] [--output-md docs/mlperf-tiny.md]
    python bench/mlperf_tiny.py --convert-from DIR_OF_TFLITE --tf2onnx-python PY --models-dir OUT

The models are the ONNX conversions of the `.tflite` files mlcommons/tiny ships
(`benchmark/training/*/trained_models/`): `kws_`, `vww_`, `ic_`, `ad_` + `int8` / `fp32` `.onnx`
in `--models-dir` (default `../shared/mlperf_tiny/onnx` beside the repository). Each is compiled
as `zant compile --target cortex-m4 --firmware --board nucleo-l4r5zi --input-shape …` compiles it
(the Cortex-M4 pipeline, ReleaseFast, batch fixed to 1) with seeded inputs embedded
(`np.random.default_rng(seed)`: uniform int8 for the int8 models; for the float ones the same
draw dequantized with the int8 model's input scale and zero point, so the data has the range the
model was calibrated on; standard normal when there is no int8 model beside it), run under QEMU
and measured:

- instructions, cycles: one `NAME_predict` call (`zant.backend.firmware.measure_cost`: exact
  instructions, cycles from the Cortex-M4 timing model and the board's flash, `zant.backend.timing`)
- ms:     those cycles at the board's 120 MHz
- flash:  .text + .rodata + .data of the whole image; RAM: .data + .bss + the stack the model's
          own calls used (as bench/mcu.py measures them); scratch: the planned activation arena
- err:    max |image - onnxruntime| on the same input: in LSB for the int8 models (exact integers),
          absolute for the float ones

beside the published MLPerf Tiny v1.1 closed-division latencies on the NUCLEO-L4R5ZI (Plumerai,
X-CUBE-AI 8.0, microTVM + CMSIS-NN; cycles = ms x 120,000).

`--convert-from` converts the `.tflite` files first with `PY -m tf2onnx.convert`: tf2onnx needs
TensorFlow 2.15, whose ml_dtypes wants onnx 1.16 (Zant pins a newer one), so PY is the python of
a separate virtual environment (`pip install tensorflow-cpu==2.15.1 tf2onnx==1.17.0 onnx==1.16.2
numpy==1.26.4`). This is not a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from zant.backend.build import BOARDS
from zant.backend.firmware import measure_cost, qemu_missing, run_firmware
from zant.driver import CompileOptions, compile_model
from zant.errors import ZantError, run_cli
from zant.progress import Progress

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MODELS_DIR = ROOT.parent / "shared" / "mlperf_tiny" / "onnx"
BOARD = "nucleo-l4r5zi"
TARGET = "cortex-m4"
WHERE = (
    "get the .tflite reference models from mlcommons/tiny (benchmark/training/*/trained_models/) "
    "and convert them with --convert-from DIR --tf2onnx-python PY (a separate environment with "
    "tensorflow-cpu 2.15.1, tf2onnx 1.17.0, onnx 1.16.2), or point --models-dir at the .onnx files"
)


@dataclass(frozen=True)
class Benchmark:
    """One MLPerf Tiny task: its files' prefix, network, input shape (batch fixed to 1), MACs of
    one inference, and the published v1.1 latencies on the NUCLEO-L4R5ZI (ms)."""

    key: str
    network: str
    shape: tuple[int, ...]
    macs: int
    plumerai_ms: float
    xcube_ms: float
    microtvm_ms: float


BENCHMARKS = (
    Benchmark("kws", "DS-CNN", (1, 49, 10, 1), 2_656_768, 47.78, 72.7, 99.8),
    Benchmark("vww", "MobileNetV1-0.25", (1, 96, 96, 3), 7_489_664, 98.76, 221.0, 301.0),
    Benchmark("ic", "ResNet-8", (1, 32, 32, 3), 12_501_632, 167.76, 222.0, 390.0),
    Benchmark("ad", "FC autoencoder", (1, 640), 264_192, 4.05, 7.6, 8.6),
)
"""Published: mlcommons tiny_results_v1.1, closed division (`closed/plumerai/README.md`,
`closed/Krai/results/README.md`); MACs from the models (README of the shared folder)."""

KINDS = ("int8", "fp32")
MODELS = tuple(f"{b.key}_{kind}" for b in BENCHMARKS for kind in KINDS)
PUBLISHED_CLOCK_HZ = 120_000_000
DEFAULT_SEED = 0


def benchmark_of(model: str) -> Benchmark:
    return next(b for b in BENCHMARKS if model.startswith(b.key + "_"))


def published_cycles(ms: float) -> int:
    return round(ms * PUBLISHED_CLOCK_HZ / 1000)


def model_files(folder: Path, models: list[str]) -> dict[str, Path]:
    """The `.onnx` file of each model, or a one-line error saying where to get them."""
    if not folder.is_dir():
        raise ZantError(f"no MLPerf Tiny models: '{folder}' is not a folder; {WHERE}")
    missing = [m for m in models if not (folder / f"{m}.onnx").is_file()]
    if missing:
        raise ZantError(f"no {', '.join(f'{m}.onnx' for m in missing)} in '{folder}'; {WHERE}")
    return {m: folder / f"{m}.onnx" for m in models}


def convert(tflite_dir: Path, out_dir: Path, python: str, models: list[str]) -> None:
    """Each model's `.tflite` in `tflite_dir` converted to `out_dir/NAME.onnx` by tf2onnx run
    from `python` (the interpreter of an environment that has it)."""
    probe = subprocess.run([python, "-c", "import tf2onnx"], capture_output=True, text=True)
    if probe.returncode:
        raise ZantError(f"'{python}' cannot import tf2onnx; {WHERE}")
    out_dir.mkdir(parents=True, exist_ok=True)
    for model in models:
        source = tflite_dir / f"{model}.tflite"
        if not source.is_file():
            raise ZantError(f"no '{source}'; {WHERE}")
        command = [python, "-m", "tf2onnx.convert", "--tflite", str(source), "--output", str(out_dir / f"{model}.onnx"), "--opset", "17"]
        print(shlex.join(command), file=sys.stderr, flush=True)
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise ZantError(f"tf2onnx could not convert '{source}': {last}")


MOVEMENT = ("Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Identity")


def input_scale(int8_path: Path, name: str) -> tuple[float, int] | None:
    """Scale and zero point of the DequantizeLinear that reads the int8 model's input `name`
    (after the layout changes tf2onnx puts first: Reshape, Transpose)."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(int8_path).graph
    constants = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for _ in range(len(graph.node)):
        readers = [n for n in graph.node if n.input and n.input[0] == name]
        if len(readers) != 1:
            return None
        (node,) = readers
        if node.op_type == "DequantizeLinear" and node.input[1] in constants:
            zero = constants[node.input[2]] if len(node.input) > 2 and node.input[2] in constants else np.zeros(())
            return float(constants[node.input[1]].reshape(-1)[0]), int(zero.reshape(-1)[0])
        if node.op_type not in MOVEMENT:
            return None
        name = node.output[0]
    return None


def seeded_input(model: str, path: Path, seed: int) -> tuple[str, np.ndarray, str]:
    """The model's input name, a seeded batch-1 input, and how it was drawn."""
    import onnx

    name = onnx.load(path, load_external_data=False).graph.input[0].name
    shape = benchmark_of(model).shape
    draw = np.random.default_rng(seed).integers(-128, 128, size=shape, dtype=np.int8)
    if model.endswith("_int8"):
        return name, draw, "uniform int8"
    int8 = path.with_name(path.name.replace("_fp32", "_int8"))
    if int8.is_file():
        int8_name = onnx.load(int8, load_external_data=False).graph.input[0].name
        quantization = input_scale(int8, int8_name)
        if quantization is not None:
            scale, zero = quantization
            return name, ((draw.astype(np.float32) - zero) * np.float32(scale)).astype(np.float32), "int8 draw dequantized"
    return name, np.random.default_rng(seed).standard_normal(shape).astype(np.float32), "standard normal"


def measure(model: str, path: Path, folder: Path, seed: int) -> dict:
    """One model on the board: compile, run, compare with onnxruntime, measure its cost."""
    import onnxruntime

    board = BOARDS[BOARD]
    name, x, drawn = seeded_input(model, path, seed)
    result = compile_model(path, folder / model, CompileOptions(
        name=model, target=TARGET, firmware=True, board=BOARD,
        input_shapes={name: list(x.shape)}, inputs={name: x},
    ))
    assert result.firmware_path is not None and result.firmware_sizes is not None
    run = run_firmware(result.firmware_path, board, result.outputs)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    expected = session.run(None, {name: x})
    error = max(
        (float(np.max(np.abs(got.astype(np.float64).reshape(-1) - want.astype(np.float64).reshape(-1))))
         for got, want in zip(run.outputs, expected)),
        default=0.0,
    )
    cost = measure_cost(board, result.firmware_path)
    sizes = result.firmware_sizes
    return {
        "model": model, "board": BOARD, "seed": seed, "input": drawn,
        "instructions": cost.instructions, "cycles": cost.cycles, "ms": cost.milliseconds,
        "macs": benchmark_of(model).macs,
        "flash_bytes": sizes["flash"], "ram_bytes": sizes["static_ram"] + run.model_stack_bytes,
        "stack_bytes": run.model_stack_bytes,
        "scratch_bytes": next(a["size"] for a in result.plan["arenas"] if a["role"] == "scratch"),
        "max_error": error, "integer_output": bool(np.issubdtype(run.outputs[0].dtype, np.integer)),
    }


HEADERS = [
    "model", "instructions", "cycles", "ms", "cycles/MAC", "flash B", "RAM B", "stack B", "scratch B",
    "max err", "Plumerai cycles", "ours / Plumerai",
]


def error_text(row: dict) -> str:
    return f"{row['max_error']:.0f} LSB" if row["integer_output"] else f"{row['max_error']:.1e}"


def cells(row: dict) -> list[str]:
    plumerai = published_cycles(benchmark_of(row["model"]).plumerai_ms)
    return [
        row["model"], f"{row['instructions']:,}", f"{row['cycles']:,}", f"{row['ms']:.2f}",
        f"{row['cycles'] / row['macs']:.2f}", f"{row['flash_bytes']:,}", f"{row['ram_bytes']:,}",
        f"{row['stack_bytes']:,}", f"{row['scratch_bytes']:,}", error_text(row), f"{plumerai:,}",
        f"{row['cycles'] / plumerai:.2f}",
    ]


def format_table(rows: list[dict]) -> str:
    lines = [HEADERS, *map(cells, rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADERS))]

    def render(line: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))).rstrip()

    return "\n".join([render(HEADERS), render(["-" * w for w in widths]), *map(render, lines[1:])])


def markdown_table(rows: list[dict]) -> list[str]:
    return [
        "| " + " | ".join(HEADERS) + " |",
        "|---|" + "|".join(["---:"] * (len(HEADERS) - 1)) + "|",
        *("| " + " | ".join(cells(row)) + " |" for row in rows),
    ]


def parse_markdown_rows(text: str) -> list[dict[str, str]]:
    """The rows of the tables in `text` whose header is HEADERS, as header -> cell."""
    rows, header = [], None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        found = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = found
        elif header == HEADERS and not set(line.strip()) <= set("|-: "):
            rows.append(dict(zip(header, found)))
    return rows


def published_table() -> list[str]:
    lines = ["| task | network | MACs | Plumerai | X-CUBE-AI 8.0 | microTVM + CMSIS-NN |", "|---|---|---:|---:|---:|---:|"]
    for b in BENCHMARKS:
        lines.append(
            f"| {b.key.upper()} | {b.network} | {b.macs:,} | "
            + " | ".join(f"{ms:g} ms ({published_cycles(ms) / 1e6:.2f} M)" for ms in (b.plumerai_ms, b.xcube_ms, b.microtvm_ms))
            + " |"
        )
    return lines


def machine_line() -> str:
    qemu = subprocess.run(["qemu-system-arm", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").is_file() else platform.processor()
    return f"Machine: {cpu} ({os.cpu_count()} cores, {platform.machine()}), {qemu}; `ReleaseFast` with the pinned Zig."


def size_text(size: int) -> str:
    return f"{size >> 20} MB" if size % (1 << 20) == 0 else f"{size >> 10} KB"


def format_markdown(rows: list[dict], command: str) -> str:
    from zant.backend.timing import CORES

    board, core = BOARDS[BOARD], CORES[TARGET]
    flash = board.flash_timing
    seeds = sorted({r["seed"] for r in rows})
    normal = sorted(r["model"] for r in rows if r["input"] == "standard normal")
    lines = [
        "# MLPerf Tiny reference models on the NUCLEO-L4R5ZI",
        "",
        f"Generated by `{command}` from a real run; do not edit.",
        machine_line(),
        "",
        "The four MLPerf Tiny reference models (mlcommons/tiny's `.tflite` files converted to ONNX by",
        f"tf2onnx), int8 and float, each compiled as `zant compile --target {TARGET} --firmware --board",
        f"{BOARD}` compiles it (batch 1) and run under QEMU (`{board.machine}`, the board's memory map:",
        f"{size_text(board.flash.size)} flash, {size_text(board.ram.size)} SRAM). Instructions are exact (a TCG plugin); cycles come",
        "from the timing model in `zant/backend/timing.py`: the Cortex-M4 TRM's cycles per instruction",
        f"class and its pipeline rules (a taken branch's refill of {core.refill.cycles} cycles, pipelined loads, LDM/STM",
        f"1 + N, VDIV overlap; SDIV/UDIV taken as {core.cycles('div')} cycles), plus the board's flash: {flash.wait_states} wait",
        f"states per 64-bit word behind an ART-like instruction cache ({flash.icache_lines} lines), data cache",
        f"({flash.dcache_lines} lines){' and prefetch' if flash.prefetch else ''}, as the plugin models them. It is an estimate: no bus",
        "contention, pairing only within a translated block, and the second of two calls is measured",
        "(warm caches, as a deployed model's calls run). `ms` is cycles at the board's",
        f"{board.clock_hz / 1e6:g} MHz.",
        "",
        f"Inputs are seeded (`np.random.default_rng({', '.join(map(str, seeds))})`): uniform int8 for the int8 models;",
        "for the float ones the same draw dequantized with the int8 model's input scale and zero point",
        f"(the range the model was calibrated on{'; standard normal for ' + ', '.join(normal) + ', without an int8 model beside it' if normal else ''}).",
        "`max err` is max |image - onnxruntime| on the same input:",
        "in LSB for the int8 models (their outputs are int8), absolute for the float ones. RAM is",
        "`.data + .bss` plus the stack the model's calls used; flash is the whole image (model, runtime,",
        "embedded input). `cycles/MAC` divides by the model's multiply-accumulates.",
        "",
        *markdown_table(rows),
        "",
        "Published, MLPerf Tiny v1.1 closed division, NUCLEO-L4R5ZI (Cortex-M4F, 120 MHz), latency",
        "per inference (mlcommons tiny_results_v1.1; cycles = ms x 120,000), wall-clock times on the",
        "board. `ours / Plumerai` divides our cycles by Plumerai's for the same task, float rows too:",
        "",
        *published_table(),
    ]
    return "\n".join(lines) + "\n"


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models-dir", type=Path, default=DEFAULT_MODELS_DIR,
                        help="the folder of NAME.onnx files (default: ../shared/mlperf_tiny/onnx beside the repository)")
    parser.add_argument("--models", default=",".join(MODELS), help=f"comma-separated (default: {','.join(MODELS)})")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"the inputs' seed (default {DEFAULT_SEED})")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--output-md", help="also write the document (docs/mlperf-tiny.md)")
    parser.add_argument("--convert-from", type=Path, metavar="DIR_OF_TFLITE",
                        help="first convert DIR/NAME.tflite into --models-dir with tf2onnx")
    parser.add_argument("--tf2onnx-python", default=sys.executable, metavar="PY",
                        help="with --convert-from: the python of an environment with tf2onnx (default: this one)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        parser.error(f"unknown model: {', '.join(unknown)} (choose from {', '.join(MODELS)})")

    def run() -> int:
        if args.convert_from is not None:
            convert(args.convert_from, args.models_dir, args.tf2onnx_python, models)
        files = model_files(args.models_dir, models)
        missing = qemu_missing(BOARDS[BOARD])
        if missing:
            raise ZantError(missing)
        rows = []
        tracker = Progress(len(models), "models")  # the time left, on a terminal
        with tempfile.TemporaryDirectory(prefix="zant-mlperf-tiny-") as name:
            for model in models:
                rows.append(measure(model, files[model], Path(name), args.seed))
                if not args.json:
                    tracker.write(format_table(rows[-1:]).splitlines()[-1])
                tracker.advance()
        tracker.close()
        print(json.dumps(rows, indent=2) if args.json else format_table(rows))
        if args.output_md:
            command = "python bench/mlperf_tiny.py " + shlex.join(argv if argv is not None else sys.argv[1:])
            Path(args.output_md).write_text(format_markdown(rows, command.strip()), encoding="utf-8")
        return 0

    return run_cli("mlperf_tiny.py", run, debug=False)


if __name__ == "__main__":
    sys.exit(main())
