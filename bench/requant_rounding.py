"""The MLPerf Tiny int8 models in each requantization rounding mode, against TFLite's reference
kernels and onnxruntime: the largest difference in LSB (and how many codes differ) on the
output and on the logits (the Softmax's int8 input, made a second graph output).

    python bench/requant_rounding.py --tflite-python PY [--models kws,vww,ic,ad] [--seeds 0,1,2,3,4]

Each `NAME_int8.onnx` of `--models-dir` (default `../shared/mlperf_tiny/onnx`) is compiled for
the host in every mode of `--requant-rounding` and run on `np.random.default_rng(seed)`'s uniform
int8 inputs (as `bench/mlperf_tiny.py` draws them). TFLite's side runs the `.tflite` files of
`--tflite-dir` (default `../shared/mlperf_tiny/tflite`) with `OpResolverType.BUILTIN_REF` (the
reference kernels) in PY, the python of an environment with LiteRT (`pip install
ai-edge-litert`; tensorflow's `tf.lite.Interpreter` has the same resolver): TensorFlow's
dependencies clash with Zant's pinned onnx, so it runs apart. docs/int8.md gives the figures.
This is not a timed test.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from zant.errors import ZantError, run_cli

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "mlperf_tiny"
MODES = ("exact", "onnxruntime", "tflite", "tflite-single", "litert")
SHAPES = {"kws": [1, 49, 10, 1], "vww": [1, 96, 96, 3], "ic": [1, 32, 32, 3], "ad": [1, 640]}

TFLITE_SCRIPT = r"""
import sys, numpy as np
try:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
except ImportError:
    from tensorflow.lite.python.interpreter import Interpreter, OpResolverType
path, out, seeds = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3].split(",")]
it = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                 experimental_preserve_all_tensors=True)
it.allocate_tensors()
(i,), (o,) = it.get_input_details(), it.get_output_details()
softmax = [op for op in it._get_ops_details() if op["op_name"] == "SOFTMAX"]
found = {}
for seed in seeds:
    x = np.random.default_rng(seed).integers(-128, 128, size=tuple(i["shape"]), dtype=np.int8)
    it.set_tensor(i["index"], x)
    it.invoke()
    found[f"output_{seed}"] = it.get_tensor(o["index"]).copy()
    if softmax:
        found[f"logits_{seed}"] = it.get_tensor(softmax[0]["inputs"][0]).copy()
np.savez(out, **found)
"""


def tflite_outputs(python: str, path: Path, seeds: list[int]) -> dict[str, np.ndarray]:
    """TFLite's reference kernels on the seeded inputs (run by `python`)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "out.npz"
        done = subprocess.run(
            [python, "-c", TFLITE_SCRIPT, str(path), str(out), ",".join(map(str, seeds))], capture_output=True, text=True
        )
        if done.returncode:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise ZantError(f"'{python}' could not run TFLite's reference kernels on '{path}': {last}")
        return dict(np.load(out))


def with_logits(path: Path, folder: Path) -> tuple[Path, bool]:
    """The model with the Softmax's int8 input as a second output (if it has a Softmax)."""
    import onnx

    model = onnx.load(path)
    producer = {o: n for n in model.graph.node for o in n.output}
    softmax = [n for n in model.graph.node if n.op_type == "Softmax"]
    if not softmax or producer[softmax[0].input[0]].op_type != "DequantizeLinear":
        return path, False
    logits = onnx.ValueInfoProto()
    logits.CopyFrom(model.graph.output[0])
    logits.name = producer[softmax[0].input[0]].input[0]
    logits.type.tensor_type.elem_type = onnx.TensorProto.INT8
    model.graph.output.append(logits)
    written = folder / path.name
    onnx.save(model, written)
    return written, True


def compare(name: str, models_dir: Path, tflite_dir: Path, python: str, seeds: list[int]) -> list[dict]:
    import onnx
    import onnxruntime

    import zant

    with tempfile.TemporaryDirectory() as folder:
        path, has_logits = with_logits(models_dir / f"{name}_int8.onnx", Path(folder))
        input_name = onnx.load(path, load_external_data=False).graph.input[0].name
        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        tflite = tflite_outputs(python, tflite_dir / f"{name}_int8.tflite", seeds)
        inputs = {s: np.random.default_rng(s).integers(-128, 128, size=SHAPES[name], dtype=np.int8) for s in seeds}
        ours = {}
        for mode in MODES:
            model = zant.compile(path, requant_rounding=mode, input_shapes={input_name: SHAPES[name]})
            ours[mode] = {s: [v.astype(np.int64) for v in model.predict({input_name: inputs[s]}).values()] for s in seeds}
        ours["onnxruntime session"] = {
            s: [v.astype(np.int64) for v in session.run(None, {input_name: inputs[s]})] for s in seeds
        }
    rows = []
    for index, which in enumerate(["output", "logits"][: 2 if has_logits else 1]):
        row = {"model": name, "tensor": which}
        for mode, runs in ours.items():
            want = [tflite[f"{which}_{s}"].reshape(-1) for s in seeds]
            got = [runs[s][index].reshape(-1) for s in seeds]
            row[mode] = (max(int(np.abs(g - w).max()) for g, w in zip(got, want)), sum(int((g != w).sum()) for g, w in zip(got, want)))
        row["codes"] = sum(tflite[f"{which}_{s}"].size for s in seeds)
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tflite-python", required=True, help="the python of an environment with ai-edge-litert")
    parser.add_argument("--models", default="kws,vww,ic,ad", help="comma-separated (default: kws,vww,ic,ad)")
    parser.add_argument("--seeds", default="0,1,2,3,4", help="the inputs' seeds (default: 0,1,2,3,4)")
    parser.add_argument("--models-dir", type=Path, default=SHARED / "onnx", help="the NAME_int8.onnx files")
    parser.add_argument("--tflite-dir", type=Path, default=SHARED / "tflite", help="the NAME_int8.tflite files")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]

    def run() -> int:
        rows = [r for name in args.models.split(",") for r in compare(name, args.models_dir, args.tflite_dir, args.tflite_python, seeds)]
        if args.json:
            print(json.dumps(rows, indent=1))
            return 0
        columns = [*MODES, "onnxruntime session"]
        print("largest |difference| from TFLite's reference kernels in LSB (codes differing) over seeds " + args.seeds)
        print(f"{'model':<12}{'codes':>7}  " + "  ".join(f"{c:>16}" for c in columns))
        for r in rows:
            cells = "  ".join(f"{f'{r[c][0]} ({r[c][1]})':>16}" for c in columns)
            print(f"{r['model'] + ' ' + r['tensor']:<12}{r['codes']:>7}  {cells}")
        return 0

    return run_cli("requant_rounding", run, False)


if __name__ == "__main__":
    sys.exit(main())
