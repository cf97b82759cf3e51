"""Writes tests/data/qoperator_uint8.onnx: a tiny float CNN (Conv 3x3 → Relu → Conv 1x1, a
residual Add, GlobalAveragePool, Flatten, Gemm) quantized by onnxruntime's `quantize_static` in
the QOperator format with uint8 activations and weights, calibrated on 8 seeded normal inputs.
It holds QLinearConv and com.microsoft's QLinearAdd, QLinearGlobalAveragePool and QGemm, which
onnx's reference evaluator lacks. Committed so the tests need no quantizer (onnxruntime 1.32):

    python tests/data/make_qoperator_uint8.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUTPUT = Path(__file__).resolve().parent / "qoperator_uint8.onnx"


def float_model() -> onnx.ModelProto:
    r = np.random.default_rng(0)

    def normal(shape, scale):
        return (r.standard_normal(shape) * scale).astype(np.float32)

    weights = {
        "w1": normal((4, 3, 3, 3), 0.3), "b1": normal(4, 0.1), "w2": normal((4, 4, 1, 1), 0.3),
        "b2": normal(4, 0.1), "wg": normal((4, 5), 0.3), "bg": normal(5, 0.1),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"]),
        helper.make_node("Add", ["c2", "r1"], ["s"]),
        helper.make_node("GlobalAveragePool", ["s"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "wg", "bg"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
        [numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def main() -> None:
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Calibration(CalibrationDataReader):
        def __init__(self):
            r = np.random.default_rng(1)
            self.feeds = iter([{"x": r.standard_normal((1, 3, 8, 8)).astype(np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.feeds, None)

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "float.onnx"
        onnx.save(float_model(), path)
        quantize_static(
            path, OUTPUT, Calibration(), quant_format=QuantFormat.QOperator,
            activation_type=QuantType.QUInt8, weight_type=QuantType.QUInt8,
        )
    print(OUTPUT, [(n.op_type, n.domain) for n in onnx.load(OUTPUT).graph.node])


if __name__ == "__main__":
    main()
