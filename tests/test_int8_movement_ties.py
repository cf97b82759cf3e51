"""Data-movement ops between a DQ and a Q of other parameters requantize ties to even.

DequantizeLinear → Transpose / Concat / MaxPool / Reshape / Slice / Relu / Clip → QuantizeLinear with the
output scale twice (or four times) the input's: every odd centered code lands exactly on a
half. ONNX's QuantizeLinear rounds those half to even, y = saturate(round_half_even((x - x_zp)
· x_scale / y_scale) + y_zp); `fold-qdq` runs the op on the 8-bit tensor and requantizes it by
the one-element window sum (`_exact_requantize`), which rounds so. The QLinearLeakyRelu it used
before rounded them half up: half of these outputs were 1 LSB off. Host and Cortex-M4
pipelines, against that NumPy formula and onnxruntime (exact here: power-of-two ratios).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from zant.driver import CompileOptions, compile_model
from zant.pipelines import pipeline_for
from zant.runtime import load_compiled

ort = pytest.importorskip("onnxruntime")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_int8 import folded, onnxruntime_session  # noqa: E402

SHAPE = (1, 4, 4, 4)
X_PARAMS = {"a": (2**-4, 3), "b": (2**-3, -5)}  # Concat's two inputs differ from each other too
Y_PARAMS = (2**-2, 1)
BRANCHES = ("transpose", "concat", "maxpool", "reshape", "slice", "relu", "relu6", "identity")


def requantized(x: np.ndarray, params: tuple[float, int]) -> np.ndarray:
    """ONNX's DQ → Q in exact arithmetic: NumPy's round half to even (the ratios are powers of two)."""
    (xs, xz), (ys, yz) = params, Y_PARAMS
    return np.clip(np.round((x.astype(np.float64) - xz) * (xs / ys)) + yz, -128, 127).astype(np.int8)


def expected(name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ya, yb = requantized(a, X_PARAMS["a"]), requantized(b, X_PARAMS["b"])
    if name == "transpose":
        return ya.transpose(0, 2, 3, 1)
    if name == "concat":
        return np.concatenate([ya, yb], axis=1)
    if name == "maxpool":  # requantization is monotone: the max of the requantized codes
        return ya.reshape(1, 4, 2, 2, 2, 2).max(axis=(3, 5))
    if name == "reshape":
        return ya.reshape(1, 16, 4)
    if name == "slice":
        return ya[:, 1:3]
    if name == "relu":  # Q_y is monotone and saturating: clip(Q_y(v), Q_y(0)) = Q_y(relu(v))
        return np.maximum(ya, requantized(np.array(X_PARAMS["a"][1]), X_PARAMS["a"]))
    if name == "relu6":  # Clip(0, 6): 6 / y_scale + y_zp = 25
        return np.clip(ya, requantized(np.array(X_PARAMS["a"][1]), X_PARAMS["a"]), 25).astype(np.int8)
    return ya  # identity: DQ → Q directly


def movement_model() -> onnx.ModelProto:
    inits = [numpy_helper.from_array(np.array(s, np.float32), f"{k}_s") for k, (s, _) in X_PARAMS.items()]
    inits += [numpy_helper.from_array(np.array(z, np.int8), f"{k}_z") for k, (_, z) in X_PARAMS.items()]
    inits += [numpy_helper.from_array(np.array(Y_PARAMS[0], np.float32), "y_s"),
              numpy_helper.from_array(np.array(Y_PARAMS[1], np.int8), "y_z"),
              numpy_helper.from_array(np.array([1, 16, 4], np.int64), "shape"),
              numpy_helper.from_array(np.array([1], np.int64), "starts"),
              numpy_helper.from_array(np.array([3], np.int64), "ends"),
              numpy_helper.from_array(np.array([1], np.int64), "axes"),
              numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
              numpy_helper.from_array(np.array(6.0, np.float32), "six")]
    nodes = [helper.make_node("DequantizeLinear", [k, f"{k}_s", f"{k}_z"], [f"{k}_f"]) for k in X_PARAMS]
    nodes += [
        helper.make_node("Transpose", ["a_f"], ["transpose_f"], perm=[0, 2, 3, 1]),
        helper.make_node("Concat", ["a_f", "b_f"], ["concat_f"], axis=1),
        helper.make_node("MaxPool", ["a_f"], ["maxpool_f"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["a_f", "shape"], ["reshape_f"]),
        helper.make_node("Slice", ["a_f", "starts", "ends", "axes"], ["slice_f"]),
        helper.make_node("Relu", ["a_f"], ["relu_f"]),
        helper.make_node("Clip", ["a_f", "zero", "six"], ["relu6_f"]),
    ]
    nodes += [helper.make_node("QuantizeLinear", [f"{n}_f", "y_s", "y_z"], [n]) for n in BRANCHES if n != "identity"]
    nodes.append(helper.make_node("QuantizeLinear", ["a_f", "y_s", "y_z"], ["identity"]))
    zeros = np.zeros(SHAPE, np.int8)
    outputs = [helper.make_tensor_value_info(n, TensorProto.INT8, list(expected(n, zeros, zeros).shape)) for n in BRANCHES]
    inputs = [helper.make_tensor_value_info(k, TensorProto.INT8, list(SHAPE)) for k in X_PARAMS]
    graph = helper.make_graph(nodes, "movement_ties", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model, full_check=True)
    return model


def feeds() -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(30)
    return [{k: rng.integers(-128, 128, SHAPE).astype(np.int8) for k in X_PARAMS} for _ in range(3)]


def test_movement_requantization_folds_without_leaky_relu(tmp_path):
    names = [op.name for op in folded(movement_model(), tmp_path).walk()]
    assert "onnx.DequantizeLinear" not in names and "onnx.QuantizeLinear" not in names
    assert "onnx.QLinearLeakyRelu" not in names  # it rounds ties half up
    # One one-element window sum per requantized tensor: 7 ops of a, Concat's b, DQ → Q.
    assert names.count("onnx.QLinearConv") == 9


@pytest.mark.parametrize(
    ("pipeline", "rounding"),
    [("host", "exact"), ("cortex-m4", "exact"), ("host", "onnxruntime"), ("host", "tflite")],
)
def test_movement_ties_round_to_even(tmp_path, pipeline, rounding):
    """0 codes off ONNX's round half to even and onnxruntime, on inputs where a quarter (a's
    ratio 1/4) to a half (b's 1/2) of the codes tie; in every `--requant-rounding` mode (the
    one-element window sum follows none: docs/int8.md)."""
    model = movement_model()
    onnx.save(model, tmp_path / "movement.onnx")
    if rounding == "exact":
        options = CompileOptions(name="movement", optimize="ReleaseSafe", pipeline=None if pipeline == "host" else pipeline_for(pipeline))
    else:
        options = CompileOptions(name="movement", optimize="ReleaseSafe", requant_rounding=rounding)
    result = compile_model(tmp_path / "movement.onnx", tmp_path / "out", options)
    assert result.plan["float_scratch_bytes"] == 0
    run = load_compiled(result)
    session = onnxruntime_session(model, optimized=False)
    ties = 0
    for feed in feeds():
        got = run(*(feed[s.name] for s in result.inputs))
        theirs = session.run(None, feed)
        for name, value, reference in zip(BRANCHES, got, theirs, strict=True):
            want = expected(name, feed["a"], feed["b"])
            np.testing.assert_array_equal(value, want, err_msg=f"{name} ({pipeline})")
            np.testing.assert_array_equal(value, reference, err_msg=f"{name} vs onnxruntime ({pipeline})")
        ties += int(np.sum((feed["a"].astype(np.int64) - X_PARAMS["a"][1]) % 4 == 2))  # (x - zp) / 4 at a half
        ties += int(np.sum((feed["b"].astype(np.int64) - X_PARAMS["b"][1]) % 2 == 1))  # (x - zp) / 2
    assert ties >= 100, ties  # of 384 input codes; rounding them up instead fails above


def test_interpreters_check_every_pass_on_movement(tmp_path):
    """`check_each_pass` through the Cortex-M4 pipeline: the onnx-level interpreter's
    one-element window sums after fold-qdq equal the float DQ → op → Q before it (exact here:
    power-of-two scales), and the uop interpreter the lowered kernels after every later pass."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import make_context
    from zant.frontend.onnx_importer import import_model
    from zant.interpreter import check_each_pass
    from zant.plugins import all_passes

    onnx.save(movement_model(), tmp_path / "movement.onnx")
    module = import_model(str(tmp_path / "movement.onnx"))
    passes = PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, pipeline_for("cortex-m4")).passes
    report = check_each_pass(module, passes, make_context(), seed=30)
    assert not report.unchecked, report.notes()
    assert {"fold-qdq", "onnx-to-uop"} <= set(report.checked)
