"""Writes tests/data/interop/: small models quantized by the real tools, each with its tool's
reference outputs, so the default tests need none of those tools (issue 30, item 5).

Not imported by Zant. The tools are behind the `interop` extra (exact pins); tensorflow and
torch do not share an environment here, so the script runs once per environment, each run
writing only its own tools' models and merging its entries into MANIFEST.json:

    python -m venv /tmp/interop && /tmp/interop/bin/pip install -e '.[interop]'
    /tmp/interop/bin/python tests/data/interop/make_corpus.py ort pt2e brevitas qonnx
    python -m venv /tmp/interop-tf && /tmp/interop-tf/bin/pip install -e '.[interop-tf]'
    /tmp/interop-tf/bin/python tests/data/interop/make_corpus.py tflite

Each model NAME.onnx has NAME.npz beside it: `x` (the inputs, one per row of the first axis),
`y` (the outputs its tool's own runtime computes for them, same layout) and, for onnxruntime,
`y_unoptimized` (the session with graph optimizations off). The runtimes:

- onnxruntime's quantizer, PyTorch PT2E and Brevitas QCDQ: onnxruntime's CPU session (the tool
  the exporters target); `rounding` in the manifest says which Zant mode matches it;
- Brevitas' QONNX export (`Quant`, `BipolarQuant`, `Trunc`): qonnx's own executor;
- TFLite through tf2onnx: TFLite's interpreter with its reference kernels (`BUILTIN_REF`) on
  the .tflite the ONNX file was converted from, int8 in and out.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "MANIFEST.json"
SAMPLES = 4
IMAGE = (1, 3, 12, 12)


def _version(module: str) -> str:
    from importlib.metadata import version

    return version(module)


def _save(name: str, model_bytes: bytes, x: np.ndarray, y: np.ndarray, entry: dict, **extra) -> dict:
    (HERE / f"{name}.onnx").write_bytes(model_bytes)
    np.savez_compressed(HERE / f"{name}.npz", x=x, y=y, **extra)
    entry = {"model": f"{name}.onnx", "reference": f"{name}.npz", **entry}
    print(f"{name}: {len(model_bytes):,} bytes", file=sys.stderr)
    return {name: entry}


def _images(seed: int, shape=IMAGE, count: int = SAMPLES) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((count, *shape)).astype(np.float32)


def _ort_outputs(model_bytes: bytes, x: np.ndarray, optimized: bool = True) -> np.ndarray:
    import onnxruntime as ort

    options = ort.SessionOptions()
    if not optimized:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    return np.stack([session.run(None, {name: row})[0] for row in x])


# ------------------------------------------------------------------------------------------
# onnxruntime's quantize_static
# ------------------------------------------------------------------------------------------


def _float_cnn():
    """A float CNN: Conv 3x3 → Relu → depthwise Conv 3x3 stride 2 → Relu → Conv 1x1 → Add
    (residual) → GlobalAveragePool → Flatten → Gemm (10 classes)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    r = np.random.default_rng(0)
    w = {
        "w1": r.normal(0, 0.3, (8, 3, 3, 3)), "b1": r.normal(0, 0.1, 8),
        "w2": r.normal(0, 0.3, (8, 1, 3, 3)), "b2": r.normal(0, 0.1, 8),
        "w3": r.normal(0, 0.3, (8, 8, 1, 1)), "b3": r.normal(0, 0.1, 8),
        "wg": r.normal(0, 0.3, (10, 8)), "bg": r.normal(0, 0.1, 10),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2], group=8),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"]),
        helper.make_node("Add", ["c3", "r2"], ["s"]),
        helper.make_node("GlobalAveragePool", ["s"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "wg", "bg"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(IMAGE))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in w.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.checker.check_model(model, full_check=True)
    return model


def _float_mlp():
    """A float MLP (a keyword-spotting head): MatMul 64→32 + bias → Relu → MatMul 32→12 + bias."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    r = np.random.default_rng(2)
    w = {"w1": r.normal(0, 0.2, (64, 32)), "b1": r.normal(0, 0.1, 32),
         "w2": r.normal(0, 0.2, (32, 12)), "b2": r.normal(0, 0.1, 12)}
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["m1"]), helper.make_node("Add", ["m1", "b1"], ["a1"]),
        helper.make_node("Relu", ["a1"], ["r1"]),
        helper.make_node("MatMul", ["r1", "w2"], ["m2"]), helper.make_node("Add", ["m2", "b2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 12])],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in w.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.checker.check_model(model, full_check=True)
    return model


def make_ort() -> dict:
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Calibration(CalibrationDataReader):
        def __init__(self, shape):
            self.feeds = iter({"x": row} for row in _images(1, shape, 16))

        def get_next(self):
            return next(self.feeds, None)

    variants = [
        # name, float model, format, activations, weights, per channel, extra options
        ("ort_qdq_int8_per_channel", _float_cnn, QuantFormat.QDQ, QuantType.QInt8, QuantType.QInt8, True, {}),
        ("ort_qoperator_uint8", _float_cnn, QuantFormat.QOperator, QuantType.QUInt8, QuantType.QInt8, False, {}),
        ("ort_qdq_qint16_activations", _float_cnn, QuantFormat.QDQ, QuantType.QInt16, QuantType.QInt8, True, {}),
        ("ort_qdq_qint4_weights", _float_mlp, QuantFormat.QDQ, QuantType.QUInt8, QuantType.QInt4, True, {}),
    ]
    entries = {}
    for name, build, fmt, activations, weights, per_channel, extra in variants:
        model = build()
        shape = tuple(d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim)
        with tempfile.TemporaryDirectory() as tmp:
            src, dst = Path(tmp) / "float.onnx", Path(tmp) / "q.onnx"
            onnx.save(model, src)
            quantize_static(
                str(src), str(dst), Calibration(shape), quant_format=fmt, activation_type=activations,
                weight_type=weights, per_channel=per_channel, extra_options=extra,
            )
            data = dst.read_bytes()
        x = _images(7, shape)
        command = (f"quantize_static(quant_format={fmt}, activation_type={activations}, weight_type={weights}, "
                   f"per_channel={per_channel}), 16 seeded normal calibration inputs")
        entries |= _save(name, data, x, _ort_outputs(data, x), {
            "tool": "onnxruntime.quantization", "version": _version("onnxruntime"), "command": command,
            "float_model": build.__doc__.split(":")[0].strip(), "runtime": "onnxruntime CPU session",
            "rounding": "onnxruntime",
        }, y_unoptimized=_ort_outputs(data, x, optimized=False))
    return entries


# ------------------------------------------------------------------------------------------
# PyTorch PT2E (torchao's pt2e flow), exported with torch.onnx.export(dynamo=True)
# ------------------------------------------------------------------------------------------


def _torch_cnn():
    import torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1, stride=2)
            self.fc = torch.nn.Linear(8, 10)

        def forward(self, x):
            x = torch.relu(self.conv1(x))
            x = torch.relu(self.conv2(x))
            return self.fc(x.mean((2, 3)))

    torch.manual_seed(0)
    return Net().eval()


def make_pt2e() -> dict:
    import torch
    import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    net = _torch_cnn()
    example = (torch.from_numpy(_images(1)[0]),)
    exported = torch.export.export(net, example).module()
    quantizer = xiq.X86InductorQuantizer().set_global(xiq.get_default_x86_inductor_quantization_config())
    prepared = prepare_pt2e(exported, quantizer)
    for row in _images(1, IMAGE, 16):
        prepared(torch.from_numpy(row))
    converted = convert_pt2e(prepared)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pt2e.onnx"
        torch.onnx.export(converted, example, str(path), dynamo=True, input_names=["x"], output_names=["y"])
        import onnx

        model = onnx.load(str(path), load_external_data=True)
        data = model.SerializeToString()
    x = _images(7)
    command = ("torchao prepare_pt2e/convert_pt2e with X86InductorQuantizer's default config (uint8 "
               "activations, int8 per-channel weights), 16 calibration inputs; torch.onnx.export(dynamo=True)")
    return _save("pt2e_x86_inductor_cnn", data, x, _ort_outputs(data, x), {
        "tool": "torch + torchao", "version": f"torch {_version('torch')}, torchao {_version('torchao')}",
        "command": command, "float_model": "Conv 3x3 → ReLU → Conv 3x3 s2 → ReLU → mean(2, 3) → Linear",
        "runtime": "onnxruntime CPU session", "rounding": "onnxruntime",
    }, y_unoptimized=_ort_outputs(data, x, optimized=False))


# ------------------------------------------------------------------------------------------
# Brevitas: QCDQ (4-bit weights, 8-bit activations) and QONNX (Quant, BipolarQuant, Trunc)
# ------------------------------------------------------------------------------------------


def _brevitas_net(kind: str):
    import torch
    import brevitas.nn as qnn
    from brevitas.quant import Int8ActPerTensorFloat, Int8WeightPerTensorFloat, SignedBinaryWeightPerTensorConst

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = qnn.QuantIdentity(act_quant=Int8ActPerTensorFloat, return_quant_tensor=True)
            self.conv1 = qnn.QuantConv2d(3, 8, 3, padding=1, bias=False, weight_bit_width=4,
                                         weight_quant=Int8WeightPerTensorFloat, return_quant_tensor=True)
            self.relu1 = qnn.QuantReLU(bit_width=8, return_quant_tensor=True)
            if kind == "qonnx":  # binary weights and a truncating average pool: BipolarQuant, Trunc
                self.conv2 = qnn.QuantConv2d(8, 8, 3, padding=1, bias=False, weight_quant=SignedBinaryWeightPerTensorConst,
                                             return_quant_tensor=True)
                self.relu2 = qnn.QuantReLU(bit_width=4, return_quant_tensor=True)
                self.pool = qnn.TruncAvgPool2d(kernel_size=2, stride=2, bit_width=8, return_quant_tensor=True)
            else:
                self.conv2 = qnn.QuantConv2d(8, 8, 3, padding=1, stride=2, bias=False, weight_bit_width=4,
                                             weight_quant=Int8WeightPerTensorFloat, return_quant_tensor=True)
                self.relu2 = qnn.QuantReLU(bit_width=8, return_quant_tensor=True)
                self.pool = None
            self.out = qnn.QuantIdentity(act_quant=Int8ActPerTensorFloat, return_quant_tensor=False)

        def forward(self, x):
            x = self.relu1(self.conv1(self.inp(x)))
            x = self.relu2(self.conv2(x))
            if self.pool is not None:
                x = self.pool(x)
            return self.out(x)

    torch.manual_seed(3)
    net = Net()
    net.train()
    with torch.no_grad():  # calibrate the activation scales
        for row in _images(1, IMAGE, 16):
            net(torch.from_numpy(row))
    return net.eval()


def make_brevitas() -> dict:
    import torch
    from brevitas.export import export_onnx_qcdq

    net = _brevitas_net("qcdq")
    example = torch.from_numpy(_images(1)[0])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "qcdq.onnx"
        export_onnx_qcdq(net, example, export_path=str(path), input_names=["x"], output_names=["y"])
        data = path.read_bytes()
    x = _images(7)
    return _save("brevitas_qcdq_w4a8", data, x, _ort_outputs(data, x), {
        "tool": "brevitas", "version": f"brevitas {_version('brevitas')}, torch {_version('torch')}",
        "command": "export_onnx_qcdq(net, x) of QuantIdentity(int8) → QuantConv2d(4-bit weights) → QuantReLU(8) → "
                   "QuantConv2d(4-bit weights, stride 2) → QuantReLU(8) → QuantIdentity(int8)",
        "float_model": "two 3x3 convs, trained 0 steps, activation scales calibrated on 16 inputs",
        "runtime": "onnxruntime CPU session", "rounding": "onnxruntime",
    }, y_unoptimized=_ort_outputs(data, x, optimized=False))


def make_qonnx() -> dict:
    import torch
    from brevitas.export import export_qonnx
    from qonnx.core.modelwrapper import ModelWrapper
    from qonnx.core.onnx_exec import execute_onnx

    net = _brevitas_net("qonnx")
    example = torch.from_numpy(_images(1)[0])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "qonnx.onnx"
        export_qonnx(net, example, export_path=str(path), input_names=["x"], output_names=["y"])
        data = path.read_bytes()
        wrapper = ModelWrapper(str(path))
    x = _images(7)
    out_name = wrapper.graph.output[0].name
    y = np.stack([execute_onnx(wrapper, {wrapper.graph.input[0].name: row})[out_name] for row in x])
    return _save("brevitas_qonnx_w4_bipolar_trunc", data, x, y, {
        "tool": "brevitas (QONNX export)", "version": f"brevitas {_version('brevitas')}, qonnx {_version('qonnx')}",
        "command": "export_qonnx(net, x) of QuantIdentity(int8) → QuantConv2d(4-bit weights) → QuantReLU(8) → "
                   "QuantConv2d(binary weights) → QuantReLU(4) → TruncAvgPool2d(2, 8-bit) → QuantIdentity(int8)",
        "float_model": "two 3x3 convs, trained 0 steps, activation scales calibrated on 16 inputs",
        "runtime": "qonnx.core.onnx_exec.execute_onnx", "rounding": "exact",
    })


# ------------------------------------------------------------------------------------------
# TFLite int8 and 16x8 through tf2onnx
# ------------------------------------------------------------------------------------------


def make_tflite() -> dict:
    import tensorflow as tf
    import tf2onnx

    tf.keras.utils.set_random_seed(4)
    shape = (12, 12, 3)
    keras = tf.keras.Sequential([
        tf.keras.Input(shape, batch_size=1),
        tf.keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
        tf.keras.layers.DepthwiseConv2D(3, strides=2, padding="same", activation="relu"),
        tf.keras.layers.Conv2D(8, 1, activation="relu"),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(10),
    ])
    calibration = np.random.default_rng(1).standard_normal((16, 1, *shape)).astype(np.float32)
    entries = {}
    for name, int16 in (("tflite_int8", False), ("tflite_16x8", True)):
        converter = tf.lite.TFLiteConverter.from_keras_model(keras)
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = lambda: ([row] for row in calibration)
        if int16:
            converter.target_spec.supported_ops = [tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
            io_type = tf.int16
        else:
            converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            io_type = tf.int8
        converter.inference_input_type = io_type
        converter.inference_output_type = io_type
        flat = converter.convert()
        interpreter = tf.lite.Interpreter(
            model_content=flat, experimental_op_resolver_type=tf.lite.experimental.OpResolverType.BUILTIN_REF)
        interpreter.allocate_tensors()
        (inp,), (out,) = interpreter.get_input_details(), interpreter.get_output_details()
        info = np.iinfo(inp["dtype"])
        x = np.random.default_rng(7).integers(info.min, info.max + 1, (SAMPLES, *inp["shape"])).astype(inp["dtype"])
        ys = []
        for row in x:
            interpreter.set_tensor(inp["index"], row)
            interpreter.invoke()
            ys.append(interpreter.get_tensor(out["index"]).copy())
        with tempfile.TemporaryDirectory() as tmp:
            tfl = Path(tmp) / "m.tflite"
            tfl.write_bytes(flat)
            proto, _ = tf2onnx.convert.from_tflite(str(tfl), opset=17)
        fixup = {"fixup": fix_16x8(proto)} if int16 else {}
        entries |= _save(name, proto.SerializeToString(), x, np.stack(ys), {
            "tool": "tensorflow TFLiteConverter + tf2onnx",
            "version": f"tensorflow-cpu {_version('tensorflow-cpu')}, tf2onnx {_version('tf2onnx')}",
            "command": ("TFLiteConverter.from_keras_model, Optimize.DEFAULT, 16 representative inputs, "
                        + ("EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8, int16 in/out" if int16
                           else "TFLITE_BUILTINS_INT8, int8 in/out")
                        + "; tf2onnx.convert.from_tflite(opset=17)"),
            "float_model": "Keras Conv2D 3x3 relu → DepthwiseConv2D 3x3 s2 relu → Conv2D 1x1 relu → GlobalAveragePooling2D → Dense(10)",
            "runtime": "tf.lite.Interpreter with OpResolverType.BUILTIN_REF (reference kernels)",
            "rounding": "litert", **fixup,
        })
    return entries


def fix_16x8(proto) -> str:
    """tf2onnx 1.17's 16x8 output is not valid ONNX; the two changes that make it so, in place
    (what they were is returned for the manifest): its int16 QuantizeLinear/DequantizeLinear
    need opset 21 (tf2onnx writes at most 18), and its biases are DequantizeLinear of int64
    (TFLite's 16x8 bias type), which no opset allows: int32 when every value fits."""
    from onnx import TensorProto, numpy_helper

    next(o for o in proto.opset_import if o.domain in ("", "ai.onnx")).version = 21
    dequantized = {n.input[0] for n in proto.graph.node if n.op_type == "DequantizeLinear"}
    narrowed = []
    for index, tensor in enumerate(proto.graph.initializer):
        if tensor.name in dequantized and tensor.data_type == TensorProto.INT64:
            array = numpy_helper.to_array(tensor)
            assert np.all(np.abs(array) < 2**31), tensor.name
            proto.graph.initializer[index].CopyFrom(numpy_helper.from_array(array.astype(np.int32), tensor.name))
            narrowed.append(tensor.name)
    return ("opset_import raised from 17 to 21 (int16 QuantizeLinear/DequantizeLinear need it); "
            f"the int64 biases {narrowed} of DequantizeLinear (no opset allows int64 there) stored as int32, "
            "their values unchanged")


MAKERS = {"ort": make_ort, "pt2e": make_pt2e, "brevitas": make_brevitas, "qonnx": make_qonnx, "tflite": make_tflite}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tools", nargs="+", choices=sorted(MAKERS))
    args = parser.parse_args()
    manifest = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {}
    for tool in args.tools:
        manifest |= MAKERS[tool]()
        MANIFEST.write_text(json.dumps(dict(sorted(manifest.items())), indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
