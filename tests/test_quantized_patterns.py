"""Quantized patterns stay in integers (issue 15): small QDQ graphs, each branch one pattern,
folded by `fold-qdq` into integer ops only and compared with onnxruntime (graph optimizations
off, so it computes the graph as written) within 1 LSB of each output.

* element-wise float ops between a DQ and a Q (Sigmoid, Tanh, HardSwish, Exp …) become a
  `LookupTable` of 256 entries computed at compile time; the input covers all 256 codes, so
  every table entry is checked;
* data movement (Transpose, Slice, Pad, Resize nearest, Concat, MaxPool, Squeeze …) runs on the
  8-bit tensor, requantized where the DQ and Q parameters differ;
* Softmax (QLinearSoftmax), AveragePools with uncounted padding (QLinearAveragePool), Split;
* models as onnxruntime's `quantize_static` (QDQ and QOperator with com.microsoft ops, int8 and
  uint8, per-channel and per-tensor, reduce_range), tf2onnx (TFLite: NHWC Transposes, OHWI
  weights, MatMul + Add) and PyTorch (float biases, fused activations, decomposed SiLU /
  HardSwish / GELU) write them; one as Cortex-M4 firmware under QEMU.

One host build per model.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import BlockArgument

ort = pytest.importorskip("onnxruntime")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from models import QUANTIZED, GraphBuilder, calibration_inputs, quantize  # noqa: E402
from test_int8 import PIPELINE, conv_loops, folded, onnxruntime_session  # noqa: E402

from zant.driver import CompileOptions, compile_model  # noqa: E402
from zant.passes.fold_qdq import unfolded_ops  # noqa: E402
from zant.dialects.onnx import REQUANTIZE  # noqa: E402
from zant.runtime import load_compiled  # noqa: E402

OPSET = 19
TYPES = {"i8": (TensorProto.INT8, np.int8), "u8": (TensorProto.UINT8, np.uint8)}


class QdqGraph:
    """A QDQ graph under construction: quantized inputs, branches DQ → op → Q → DQ to outputs."""

    def __init__(self):
        self.nodes, self.initializers, self.inputs, self.outputs, self.scales = [], [], [], [], {}
        self.count = 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, array: np.ndarray, prefix: str = "c") -> str:
        name = self.name(prefix)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op: str, inputs: list[str], **attrs) -> str:
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def params(self, scale: float, zero_point: int, kind: str) -> tuple[str, str]:
        return self.const(np.array(scale, np.float32), "s"), self.const(np.array(zero_point, TYPES[kind][1]), "z")

    def quantized_input(self, name: str, shape: list[int], scale: float, zero_point: int, kind: str):
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        params = self.params(scale, zero_point, kind)
        return self.node("QuantizeLinear", [name, *params]), params

    def dq(self, q: str, params) -> str:
        return self.node("DequantizeLinear", [q, *params])

    def q(self, value: str, params) -> str:
        return self.node("QuantizeLinear", [value, *params])

    def output(self, q: str, params, shape: list[int]) -> None:
        name = f"out_{len(self.outputs)}"
        self.nodes.append(helper.make_node("DequantizeLinear", [q, *params], [name]))
        self.outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        self.scales[name] = float(numpy_helper.to_array(next(i for i in self.initializers if i.name == params[0])))

    def build(self, name: str) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, self.inputs, self.outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        onnx.checker.check_model(model, full_check=True)
        return model


# (op, attributes, constant operands, {kind: (output scale, output zero point)})
UNARY = [
    ("Sigmoid", {}, [], {"i8": (1 / 256, -128), "u8": (1 / 256, 0)}),
    ("Tanh", {}, [], {"i8": (1 / 128, 0), "u8": (1 / 128, 128)}),
    ("HardSwish", {}, [], {"i8": (0.03, -100), "u8": (0.03, 28)}),
    ("HardSigmoid", {"alpha": 0.25}, [], {"i8": (1 / 255, -128), "u8": (1 / 255, 0)}),
    ("LeakyRelu", {"alpha": 0.1}, [], {"i8": (0.03, -20), "u8": (0.03, 30)}),
    ("Exp", {}, [], {"i8": (2.3, -128), "u8": (2.3, 0)}),
    ("Elu", {}, [], {"i8": (0.04, -100), "u8": (0.04, 30)}),
    ("Softplus", {}, [], {"i8": (0.03, -128), "u8": (0.03, 0)}),
    ("Erf", {}, [], {"i8": (1 / 127, 0), "u8": (1 / 127, 128)}),
    ("Div", {}, [np.array(3.0, np.float32)], {"i8": (0.02, 0), "u8": (0.02, 128)}),
]
INPUT_PARAMS = {"i8": (0.05, 3), "u8": (0.05, 131)}


def every_code(kind: str) -> np.ndarray:
    """Float inputs that quantize to each of the 256 codes once."""
    scale, zero_point = INPUT_PARAMS[kind]
    info = np.iinfo(TYPES[kind][1])
    return ((np.arange(info.min, info.max + 1) - zero_point) * scale).astype(np.float32).reshape(1, 256)


@cache
def lookup_model() -> onnx.ModelProto:
    g = QdqGraph()
    for kind in TYPES:
        q, params = g.quantized_input(f"x_{kind}", [1, 256], *INPUT_PARAMS[kind], kind)
        for op, attrs, operands, outputs in UNARY:
            y_params = g.params(*outputs[kind], kind)
            y = g.q(g.node(op, [g.dq(q, params), *(g.const(c) for c in operands)], **attrs), y_params)
            g.output(y, y_params, [1, 256])
    return g.build("lookup_tables")


@cache
def movement_model() -> onnx.ModelProto:
    """Branches of one int8 and one uint8 input 1×2×4×4; 'other' parameters make the Q differ
    from the DQ (a requantize)."""
    g = QdqGraph()
    for kind, zero_point in (("i8", 3), ("u8", 131)):
        q, same = g.quantized_input(f"x_{kind}", [1, 2, 4, 4], 0.05, zero_point, kind)
        other = g.params(0.07, zero_point - 10, kind)
        dq = g.dq(q, same)
        i64 = lambda *v: g.const(np.array(v, np.int64))  # noqa: E731
        branches = [
            ("Transpose", [dq], {"perm": [0, 2, 3, 1]}, [1, 4, 4, 2]),
            ("Slice", [dq, i64(1), i64(4), i64(2)], {}, [1, 2, 3, 4]),
            ("Pad", [dq, i64(0, 0, 1, 1, 0, 0, 1, 1), g.const(np.array(0.37, np.float32))], {}, [1, 2, 6, 6]),
            ("Pad", [dq, i64(0, 0, 1, 0, 0, 0, 0, 1)], {"mode": "reflect"}, [1, 2, 5, 5]),
            ("Resize", [dq, "", g.const(np.array([1, 1, 2, 2], np.float32))], {"mode": "nearest"}, [1, 2, 8, 8]),
            ("MaxPool", [dq], {"kernel_shape": [2, 2], "strides": [2, 2]}, [1, 2, 2, 2]),
            ("Unsqueeze", [dq, i64(0)], {}, [1, 1, 2, 4, 4]),
            ("Reshape", [dq, i64(1, 32)], {}, [1, 32]),
            ("ReduceMax", [dq, i64(3)], {"keepdims": 0}, [1, 2, 4]),
            ("SpaceToDepth", [dq], {"blocksize": 2}, [1, 8, 2, 2]),
        ]
        for op, operands, attrs, shape in branches:
            for y_params in (same, other):
                g.output(g.q(g.node(op, operands, **attrs), y_params), y_params, shape)
        # Concat of inputs with different parameters: each requantized to the output's.
        second = g.q(dq, other)
        concat = g.node("Concat", [dq, g.dq(second, other)], axis=1)
        g.output(g.q(concat, same), same, [1, 4, 4, 4])
        g.output(g.q(g.node("Concat", [dq, g.dq(second, other)], axis=2), other), other, [1, 2, 8, 4])
    return g.build("movement")


RESIZE_SHAPES = {"x2": ("scales", [1, 1, 2, 2], [1, 2, 8, 8]), "to7x6": ("sizes", [1, 2, 7, 6], [1, 2, 7, 6])}
RESIZE_COORDINATES = ("align_corners", "half_pixel", "asymmetric")


def resize_model(mode: str) -> onnx.ModelProto:
    """DQ → Resize(`mode`) → Q of an int8 and a uint8 input 1×2×4×4: ×2 and to 7×6 (scales
    1.75 and 1.5), each coordinate transformation, with the DQ's parameters and with others (a
    smaller scale, so cubic overshoot saturates)."""
    g = QdqGraph()
    for kind, zero_point in (("i8", 3), ("u8", 131)):
        q, same = g.quantized_input(f"x_{kind}", [1, 2, 4, 4], 0.05, zero_point, kind)
        other = g.params(0.03, zero_point - 10, kind)
        dq = g.dq(q, same)
        for given, values, shape in RESIZE_SHAPES.values():
            array = np.array(values, np.float32 if given == "scales" else np.int64)
            operands = [dq, "", g.const(array)] if given == "scales" else [dq, "", "", g.const(array)]
            for coordinates in RESIZE_COORDINATES:
                for y_params in (same, other):
                    resized = g.node("Resize", operands, mode=mode, coordinate_transformation_mode=coordinates)
                    g.output(g.q(resized, y_params), y_params, shape)
    return g.build(f"resize_{mode}")


def silu_cnn() -> onnx.ModelProto:
    """Conv → SiLU (x · sigmoid(x)) → MaxPool ‖ Conv → Tanh, Concat, Resize ×2 nearest,
    Conv → Sigmoid, Transpose to NHWC; input 1×3×16×16."""
    g = GraphBuilder("silu_cnn", seed=5)
    a = g.conv("input", 3, 8, 3, stride=2)
    a = g.node("Mul", [a, g.node("Sigmoid", [a], "sig")], "silu")
    a = g.node("MaxPool", [a], "pool", kernel_shape=[2, 2], strides=[2, 2])
    b = g.node("Tanh", [g.conv("input", 3, 8, 3, stride=4)], "tanh")
    x = g.node("Concat", [a, b], "cat", axis=1)
    x = g.node("Resize", [x, "", g.const("scales", np.array([1, 1, 2, 2], np.float32))], "up", mode="nearest")
    x = g.node("Sigmoid", [g.conv(x, 16, 4, 1)], "gate")
    x = g.node("Transpose", [x], "nhwc", perm=[0, 2, 3, 1])
    return g.build([("input", [1, 3, 16, 16])], [(x, "y", [1, 8, 8, 4])])


def assert_only_the_edges_are_float(module) -> None:
    """No op has a float result but the output DequantizeLinears (read only by the return);
    QuantizeLinear (an integer result) reads the graph inputs only."""
    assert not unfolded_ops(module), [op.name for op in unfolded_ops(module)]
    for op in module.walk():
        if not op.name.startswith("onnx.") or op.name == "onnx.Constant":
            continue
        if any(not isinstance(r.type.get_element_type(), IntegerType) for r in op.results):
            assert op.name == "onnx.DequantizeLinear", op.name
            assert {u.operation.name for u in op.results[0].uses} == {"func.return"}
        if op.name == "onnx.QuantizeLinear":
            assert isinstance(op.operands[0], BlockArgument)


def lsb_differences(
    model: onnx.ModelProto, name: str, folder: Path, feeds: list[dict], optimized: tuple[bool, ...] = (False,)
) -> list[float]:
    """Per output, the largest |ours - onnxruntime| in that output's LSBs, onnxruntime run with
    its graph optimizations off and/or on as `optimized` lists."""
    onnx.save(model, folder / f"{name}.onnx")
    result = compile_model(
        folder / f"{name}.onnx", folder / "out", CompileOptions(name=name, optimize="ReleaseSafe", pipeline=PIPELINE)
    )
    compiled = load_compiled(result)
    sessions = [onnxruntime_session(model, optimized=o) for o in optimized]
    producers = {o: n for n in model.graph.node for o in n.output}
    values = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    lsbs = [float(values[producers[o.name].input[1]]) for o in model.graph.output]
    worst = [0.0] * len(lsbs)
    for feed in feeds:
        ours = compiled(*(feed[s.name] for s in result.inputs))
        for session in sessions:
            for i, (got, want) in enumerate(zip(ours, session.run(None, feed), strict=True)):
                worst[i] = max(worst[i], float(np.max(np.abs(got - want))) / lsbs[i])
    return worst


def test_lookup_tables_fold_to_integer_ops(tmp_path):
    module = folded(lookup_model(), tmp_path)
    assert_only_the_edges_are_float(module)
    assert [op.name for op in module.walk()].count("onnx.LookupTable") == 2 * len(UNARY)


def test_lookup_tables_within_one_lsb_of_onnxruntime(tmp_path):
    feed = {f"x_{kind}": every_code(kind) for kind in TYPES}
    worst = lsb_differences(lookup_model(), "lookup_tables", tmp_path, [feed])
    assert max(worst) <= 1.0 + 1e-3, dict(zip([f"{op}_{k}" for k in TYPES for op, *_ in UNARY], worst))


def test_movement_folds_to_integer_ops(tmp_path):
    module = folded(movement_model(), tmp_path)
    assert_only_the_edges_are_float(module)
    names = [op.name for op in module.walk()]
    assert names.count("onnx.QuantizeLinear") == 2  # the inputs'
    # A requantize per "other" branch, Q_other(DQ_same(x)), and one input of each Concat, the
    # ReduceMax's maxima among them: each a window sum of one element, ties to even as DQ → Q
    # rounds them (QLinearLeakyRelu would round them half up).
    assert names.count("onnx.QLinearLeakyRelu") == 0
    assert names.count("onnx.QLinearConv") == 2 * (9 + 3 + 1)


def test_movement_within_one_lsb_of_onnxruntime(tmp_path):
    rng = np.random.default_rng(3)
    feeds = [{f"x_{k}": rng.uniform(-7, 7, (1, 2, 4, 4)).astype(np.float32) for k in TYPES} for _ in range(3)]
    assert max(lsb_differences(movement_model(), "movement", tmp_path, feeds)) <= 1.0 + 1e-3


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_interpolating_resize_folds_to_an_integer_resize(tmp_path, mode):
    module = folded(resize_model(mode), tmp_path)
    assert_only_the_edges_are_float(module)
    resizes = [op for op in module.walk() if op.name == "onnx.Resize"]
    assert len(resizes) == 2 * len(RESIZE_SHAPES) * len(RESIZE_COORDINATES) * 2
    assert all(REQUANTIZE in op.attributes for op in resizes)
    # No requantize op: the Resize requantizes its own sum once.
    assert not [op for op in module.walk() if op.name == "onnx.QLinearLeakyRelu"]
    # Each Resize is one loop nest with an int32 sum and no float.
    onnx.save(resize_model(mode), tmp_path / "resize.onnx")
    result = compile_model(tmp_path / "resize.onnx", tmp_path / "out", CompileOptions(name="resize", build=False, pipeline=PIPELINE))
    loops = conv_loops(result.zig_path.read_text())
    assert len(loops) == len(resizes)
    assert not [loop for loop in loops if "f32" in loop or "f64" in loop]


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_interpolating_resize_within_one_lsb_of_onnxruntime(tmp_path, mode):
    rng = np.random.default_rng(4)
    feeds = [{f"x_{k}": rng.uniform(-7, 7, (1, 2, 4, 4)).astype(np.float32) for k in TYPES} for _ in range(4)]
    # onnxruntime's own unoptimized and optimized runs (the latter may fuse DQ → Resize → Q).
    worst = lsb_differences(resize_model(mode), f"resize_{mode}", tmp_path, feeds, optimized=(False, True))
    assert max(worst) <= 1.0 + 1e-3, worst


@pytest.mark.parametrize("activations,per_channel", [("int8", True), ("uint8", True), ("int8", False)])
def test_quantize_static_silu_cnn(tmp_path, activations, per_channel):
    """onnxruntime's own QDQ quantization of SiLU, Tanh, Concat, Resize, Transpose: only the
    graph edges stay float, and the output is within 1 LSB."""
    model = quantize(silu_cnn(), "qdq", per_channel=per_channel, activations=activations)
    module = folded(model, tmp_path)
    assert_only_the_edges_are_float(module)
    if activations == "int8":
        feeds = calibration_inputs(model, count=3, seed=42)
        assert max(lsb_differences(model, "silu_cnn", tmp_path, feeds)) <= 1.0 + 1e-3


def contrib_cnn() -> onnx.ModelProto:
    """A CNN whose QOperator form holds every com.microsoft op `quantize_static` writes for
    CNNs: LeakyRelu, Sigmoid, Mul (SiLU), Add, Concat, AveragePool, GlobalAveragePool and Gemm
    (QGemm); input 1×3×16×16, 10 outputs."""
    g = GraphBuilder("contrib_cnn", seed=11)
    a = g.node("LeakyRelu", [g.conv("input", 3, 8, 3, stride=2)], "leaky", alpha=0.1)
    a = g.node("Mul", [a, g.node("Sigmoid", [a], "sig")], "silu")
    b = g.conv("input", 3, 8, 3, stride=2)
    x = g.node("Concat", [g.node("Add", [a, b], "add"), b], "cat", axis=1)
    x = g.node("AveragePool", [x], "pool", kernel_shape=[2, 2], strides=[2, 2])
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "gap")], "flat")
    return g.build([("input", [1, 3, 16, 16])], [(g.gemm(x, 16, 10), "y", [1, 10])])


CONTRIB_OPS = {
    "QLinearLeakyRelu", "QLinearSigmoid", "QLinearMul", "QLinearAdd", "QLinearConcat", "QLinearAveragePool",
    "QLinearGlobalAveragePool", "QGemm",
}


@pytest.mark.parametrize("activations", ["int8", "uint8"])
def test_qoperator_contrib_ops_fold(tmp_path, activations):
    """onnxruntime's com.microsoft ops import as themselves, and fold-qoperator makes the
    integer ops fold-qdq makes of their QDQ definitions."""
    model = quantize(contrib_cnn(), "qoperator", per_channel=True, activations=activations)
    assert CONTRIB_OPS <= {n.op_type for n in model.graph.node if n.domain == "com.microsoft"}
    module = folded(model, tmp_path)
    assert_only_the_edges_are_float(module)
    names = [op.name for op in module.walk()]
    assert names.count("onnx.LookupTable") == 2 and names.count("onnx.QLinearAdd") == 1  # LeakyRelu, Sigmoid
    assert names.count("onnx.QLinearMul") == 1 and names.count("onnx.Concat") == 1
    if activations == "int8":  # uint8: onnxruntime's u8s8 QLinearConv is off by more (test_quantized_models)
        feeds = calibration_inputs(model, count=3, seed=42)
        assert max(lsb_differences(model, "contrib_cnn", tmp_path, feeds)) <= 1.0 + 1e-3


def _contrib_node_model(op_type: str, **attributes) -> onnx.ModelProto:
    inits = [numpy_helper.from_array(np.array(0.1, np.float32), "s"), numpy_helper.from_array(np.array(0, np.int8), "z")]
    node = helper.make_node(op_type, ["x", "s", "z", "s", "z"], ["y"], name="gap", domain="com.microsoft", **attributes)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 2, 1, 1])], inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)])


def test_contrib_ops_that_do_not_import_are_named(tmp_path):
    """Unsupported com.microsoft ops and attributes are refused at import, naming the node; a
    supported one imports as itself and `fold-qoperator` makes its integer form (a window sum)."""
    from zant.driver import run_pipeline
    from zant.errors import ZantError
    from zant.frontend.onnx_importer import import_model

    onnx.save(_contrib_node_model("QLinearGlobalAveragePool", channels_last=1), tmp_path / "nhwc.onnx")
    with pytest.raises(ZantError, match=r"^node 'gap' \(com.microsoft.QLinearGlobalAveragePool\): channels_last = 1 is not supported$"):
        import_model(str(tmp_path / "nhwc.onnx"))
    onnx.save(_contrib_node_model("QLinearReduceMean"), tmp_path / "other.onnx")
    with pytest.raises(ZantError, match=r"node 'gap' \(QLinearReduceMean\): unsupported operator domain 'com.microsoft'"):
        import_model(str(tmp_path / "other.onnx"))
    onnx.save(_contrib_node_model("QLinearGlobalAveragePool"), tmp_path / "nchw.onnx")
    module = import_model(str(tmp_path / "nchw.onnx"))

    def ops():
        return [op.name for op in module.walk() if op.name.startswith("onnx.") and op.name != "onnx.Constant"]

    assert ops() == ["onnx.QLinearGlobalAveragePool"]
    run_pipeline(module, "fold-qoperator")
    assert ops() == ["onnx.QLinearConv"]


@cache
def softmax_model() -> onnx.ModelProto:
    """Softmax between a DQ and a Q: int8 and uint8, along the last axis and a middle one,
    onnxruntime's usual output parameters (1/256) and coarser ones."""
    g = QdqGraph()
    for kind, zero_point, outputs in (("i8", 3, [(1 / 256, -128), (0.01, -100)]), ("u8", 131, [(1 / 256, 0), (0.01, 20)])):
        q, params = g.quantized_input(f"x_{kind}", [2, 3, 10], 0.08, zero_point, kind)
        for axis in (-1, 1):
            for y in outputs:
                y_params = g.params(*y, kind)
                g.output(g.q(g.node("Softmax", [g.dq(q, params)], axis=axis), y_params), y_params, [2, 3, 10])
    return g.build("softmax")


def test_softmax_folds_to_integer_ops(tmp_path):
    module = folded(softmax_model(), tmp_path)
    assert_only_the_edges_are_float(module)
    assert [op.name for op in module.walk()].count("onnx.QLinearSoftmax") == 8


def test_softmax_within_one_lsb_of_onnxruntime(tmp_path):
    rng = np.random.default_rng(5)
    feeds = [{f"x_{k}": rng.normal(0, s, (2, 3, 10)).astype(np.float32) for k in TYPES} for s in (1, 3, 8)]
    assert max(lsb_differences(softmax_model(), "softmax", tmp_path, feeds)) <= 1.0 + 1e-3


def test_softmax_int32_division_equals_the_int64_one(tmp_path, monkeypatch):
    """Rows whose sums fit int32 divide in int32 (`softmax_fits_int32`: floor(t / S) with
    t = (e · R + S · 2^15) >> 16): the same outputs, bit for bit, as the int64 division of
    e · R + S · 2^15 by S · 2^16, over logits from flat to far apart (every table entry), and
    no 64-bit division in the generated code (a library call on 32-bit cores)."""
    from zant.passes.onnx_to_uop import quant

    assert quant.softmax_fits_int32(10, 2**24) and not quant.softmax_fits_int32(2048, 2**16)
    assert not quant.softmax_fits_int32(10, 2**27)  # an output scale finer than 2^-11
    model = softmax_model()
    onnx.save(model, tmp_path / "softmax.onnx")
    rng = np.random.default_rng(11)
    feeds = [{f"x_{k}": rng.normal(0, s, (2, 3, 10)).astype(np.float32) for k in TYPES} for s in (0.05, 1, 3, 8, 30)]

    def build(folder: str):
        result = compile_model(
            tmp_path / "softmax.onnx", tmp_path / folder, CompileOptions(name="softmax", optimize="ReleaseSafe", pipeline=PIPELINE)
        )
        return result, load_compiled(result)

    narrow, narrow_run = build("int32")
    monkeypatch.setattr(quant, "softmax_fits_int32", lambda n, reciprocal: False)
    wide, wide_run = build("int64")
    assert "@divTrunc(" in wide.zig_path.read_text() and not any(
        "@divTrunc(" in line and "i64" in line for line in narrow.zig_path.read_text().splitlines()
    )
    for feed in feeds:
        inputs = [feed[s.name] for s in narrow.inputs]
        for got, want in zip(narrow_run(*inputs), wide_run(*inputs), strict=True):
            assert np.array_equal(got, want), np.argwhere(got != want)


def test_lookup_tables_run_as_firmware_on_cortex_m4(tmp_path):
    """The quantize_static SiLU/Tanh CNN (its LUTs, Concat, Resize, Transpose on int8) as a
    Cortex-M4 firmware image under QEMU: within 1 LSB of onnxruntime on the embedded input."""
    from zant.backend.build import BOARDS, DEFAULT_BOARDS
    from zant.backend.firmware import qemu_missing, run_firmware

    missing = qemu_missing(BOARDS[DEFAULT_BOARDS["cortex-m4"]])
    if missing:
        pytest.skip(missing)
    model = quantize(silu_cnn(), "qdq", per_channel=True, activations="int8")
    onnx.save(model, tmp_path / "silu_cnn.onnx")
    firmware = compile_model(
        tmp_path / "silu_cnn.onnx", tmp_path / "m4",
        CompileOptions(name="net", target="cortex-m4", optimize="ReleaseSmall", firmware=True, pipeline=PIPELINE),
    )
    assert firmware.plan["float_scratch_bytes"] == 0
    run = run_firmware(firmware.firmware_path, firmware.board, firmware.outputs)
    (want,) = onnxruntime_session(model, optimized=False).run(None, dict(firmware.feeds))
    (got,) = run.outputs
    producers = {o: n for n in model.graph.node for o in n.output}
    lsb = float(numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == producers["y"].input[1])))
    assert np.max(np.abs(got - want)) <= lsb * 1.001


def pytorch_style() -> onnx.ModelProto:
    """What PyTorch's exporter writes for a quantized Conv and Linear: DQ'd int8 weights
    (per channel) but a float bias, Q → DQ between layers; input 1×3×6×6."""
    rng = np.random.default_rng(0)
    g = QdqGraph()
    q, params = g.quantized_input("x", [1, 3, 6, 6], 0.05, 3, "i8")
    weight = g.const(rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8), "w")
    w_scales, w_zero = g.const(np.array([0.01, 0.02, 0.015, 0.03], np.float32)), g.const(np.zeros(4, np.int8))
    w = g.node("DequantizeLinear", [weight, w_scales, w_zero], axis=0)
    conv = g.node("Conv", [g.dq(q, params), w, g.const(rng.normal(0, 1, 4).astype(np.float32))], pads=[1, 1, 1, 1])
    c_params = g.params(0.2, -4, "i8")
    c = g.q(conv, c_params)
    flat = g.q(g.node("Flatten", [g.dq(c, c_params)]), c_params)
    fc_weight = g.const(rng.integers(-127, 128, (5, 144)).astype(np.int8), "fc")
    fc_w = g.node("DequantizeLinear", [fc_weight, g.const(np.array(0.004, np.float32)), g.const(np.array(0, np.int8))])
    fc = g.node("Gemm", [g.dq(flat, c_params), fc_w, g.const(rng.normal(0, 1, 5).astype(np.float32))], transB=1)
    y_params = g.params(0.5, 0, "i8")
    g.output(g.q(fc, y_params), y_params, [1, 5])
    return g.build("pytorch_style")


def test_float_bias_is_quantized_at_compile_time(tmp_path):
    module = folded(pytorch_style(), tmp_path)
    assert_only_the_edges_are_float(module)
    assert [op.name for op in module.walk()].count("onnx.QLinearConv") == 2
    rng = np.random.default_rng(2)
    feeds = [{"x": rng.normal(0, 2, (1, 3, 6, 6)).astype(np.float32)} for _ in range(3)]
    assert max(lsb_differences(pytorch_style(), "pytorch_style", tmp_path, feeds)) <= 1.0 + 1e-3


def quantize_reduced(model: onnx.ModelProto, fmt: str, folder: Path) -> onnx.ModelProto:
    """`quantize_static` with reduce_range (7-bit weights) and per-tensor weights."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.feeds = iter(calibration_inputs(model, seed=1))

        def get_next(self):
            return next(self.feeds, None)

    quantize_static(
        model, folder / "reduced.onnx", Reader(), quant_format={"qdq": QuantFormat.QDQ, "qoperator": QuantFormat.QOperator}[fmt],
        per_channel=False, reduce_range=True, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
    )
    return onnx.load(folder / "reduced.onnx")


@pytest.mark.parametrize("fmt,build", [("qdq", silu_cnn), ("qoperator", contrib_cnn)])
def test_reduce_range_per_tensor(tmp_path, fmt, build):
    model = quantize_reduced(build(), fmt, tmp_path)
    assert_only_the_edges_are_float(folded(model, tmp_path))
    feeds = calibration_inputs(model, count=3, seed=42)
    assert max(lsb_differences(model, f"reduced_{fmt}", tmp_path, feeds)) <= 1.0 + 1e-3


def tflite_style() -> onnx.ModelProto:
    """What tf2onnx writes for a TFLite int8 model: an NHWC input transposed to NCHW after its
    DQ, a Conv whose OHWI int8 weight is DQ'd per channel then transposed to OIHW, int32 biases
    DQ'd in x_scale · w_scale, FULLY_CONNECTED as MatMul + Add, Softmax with TFLite's output
    parameters (1/256, -128); input 1×6×6×3."""
    rng = np.random.default_rng(4)
    g = QdqGraph()
    q, params = g.quantized_input("x", [1, 6, 6, 3], 0.05, -3, "i8")
    nchw = g.node("Transpose", [g.dq(q, params)], perm=[0, 3, 1, 2])
    w_scales = np.array([0.01, 0.02, 0.015, 0.03], np.float32)
    w = g.node(
        "DequantizeLinear",
        [g.const(rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)), g.const(w_scales), g.const(np.zeros(4, np.int8))],
        axis=0,
    )
    w = g.node("Transpose", [w], perm=[0, 3, 1, 2])  # OHWI → OIHW
    bias = g.node("DequantizeLinear", [g.const(rng.integers(-500, 500, 4).astype(np.int32)), g.const(w_scales * 0.05), g.const(np.zeros(4, np.int32))], axis=0)
    c_params = g.params(0.15, -10, "i8")
    c = g.q(g.node("Relu", [g.node("Conv", [nchw, w, bias], pads=[1, 1, 1, 1])]), c_params)
    nhwc = g.q(g.node("Transpose", [g.dq(c, c_params)], perm=[0, 2, 3, 1]), c_params)
    flat = g.node("Reshape", [g.dq(nhwc, c_params), g.const(np.array([1, 144], np.int64))])
    fc_w = g.node("DequantizeLinear", [g.const(rng.integers(-127, 128, (144, 5)).astype(np.int8)), g.const(np.array(0.004, np.float32)), g.const(np.array(0, np.int8))])
    fc_b = g.node("DequantizeLinear", [g.const(rng.integers(-900, 900, 5).astype(np.int32)), g.const(np.array(0.15 * 0.004, np.float32)), g.const(np.array(0, np.int32))])
    logits_params = g.params(0.3, 5, "i8")
    logits = g.q(g.node("Add", [g.node("MatMul", [flat, fc_w]), fc_b]), logits_params)
    probabilities = g.params(1 / 256, -128, "i8")
    g.output(g.q(g.node("Softmax", [g.dq(logits, logits_params)]), probabilities), probabilities, [1, 5])
    return g.build("tflite_style")


def test_tflite_style_folds_and_stays_within_one_lsb(tmp_path):
    module = folded(tflite_style(), tmp_path)
    assert_only_the_edges_are_float(module)
    names = [op.name for op in module.walk()]
    assert names.count("onnx.QLinearConv") == 2 and names.count("onnx.QLinearSoftmax") == 1
    rng = np.random.default_rng(6)
    feeds = [{"x": rng.normal(0, 2, (1, 6, 6, 3)).astype(np.float32)} for _ in range(4)]
    assert max(lsb_differences(tflite_style(), "tflite_style", tmp_path, feeds)) <= 1.0 + 1e-3


@cache
def decomposed_model() -> onnx.ModelProto:
    """Activations exporters spell as several element-wise ops between one DQ and one Q: SiLU
    x · sigmoid(x), HardSwish x · clip(x + 3, 0, 6) / 6 (PyTorch before opset 14), GELU
    0.5 · x · (1 + erf(x / √2)); each becomes one 256-entry table."""
    g = QdqGraph()
    for kind in TYPES:
        q, params = g.quantized_input(f"x_{kind}", [1, 256], *INPUT_PARAMS[kind], kind)
        c = lambda v: g.const(np.array(v, np.float32))  # noqa: E731
        f = g.dq(q, params)
        silu = g.node("Mul", [f, g.node("Sigmoid", [f])])
        hardswish = g.node("Div", [g.node("Mul", [f, g.node("Clip", [g.node("Add", [f, c(3.0)]), c(0.0), c(6.0)])]), c(6.0)])
        erf = g.node("Erf", [g.node("Div", [f, c(np.sqrt(2.0))])])
        gelu = g.node("Mul", [g.node("Mul", [f, c(0.5)]), g.node("Add", [erf, c(1.0)])])
        for value, y in ((silu, (0.03, -20)), (hardswish, (0.03, -20)), (gelu, (0.03, -20))):
            y_params = g.params(y[0], y[1] + (128 if kind == "u8" else 0), kind)
            g.output(g.q(value, y_params), y_params, [1, 256])
    return g.build("decomposed")


def test_decomposed_activations_become_one_table(tmp_path):
    module = folded(decomposed_model(), tmp_path)
    assert_only_the_edges_are_float(module)
    assert [op.name for op in module.walk()].count("onnx.LookupTable") == 6
    feed = {f"x_{kind}": every_code(kind) for kind in TYPES}
    assert max(lsb_differences(decomposed_model(), "decomposed", tmp_path, [feed])) <= 1.0 + 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(QUANTIZED))
def test_bench_int8_models_are_integers_only(tmp_path, name):
    """digits, KWS, ResNet-8, the autoencoder and MobileNet in QDQ int8: no float op but the
    graph edges (their Softmax too); test_int8 checks their numerics."""
    assert_only_the_edges_are_float(folded(QUANTIZED[name](), tmp_path))


def test_split_runs_on_int8(tmp_path):
    """DQ → Split → Q per part (one part requantized): integers only, within 1 LSB."""
    g = QdqGraph()
    q, same = g.quantized_input("x", [1, 6, 4], 0.05, 3, "i8")
    other = g.params(0.09, -7, "i8")
    split = helper.make_node("Split", [g.dq(q, same), g.const(np.array([2, 4], np.int64))], ["a", "b"], axis=1, name="split")
    g.nodes.append(split)
    g.output(g.q("a", same), same, [1, 2, 4])
    g.output(g.q("b", other), other, [1, 4, 4])
    model = g.build("split")
    assert_only_the_edges_are_float(folded(model, tmp_path))
    rng = np.random.default_rng(8)
    feeds = [{"x": rng.uniform(-7, 7, (1, 6, 4)).astype(np.float32)} for _ in range(3)]
    assert max(lsb_differences(model, "split", tmp_path, feeds)) <= 1.0 + 1e-3


@cache
def padded_pool_model() -> onnx.ModelProto:
    """AveragePools whose divisor varies at the borders: uncounted padding (onnxruntime's and
    Keras' SAME pooling), ceil_mode; int8 and uint8, DQ and Q parameters equal and not."""
    g = QdqGraph()
    for kind, zero_point in (("i8", 3), ("u8", 131)):
        q, same = g.quantized_input(f"x_{kind}", [1, 2, 5, 5], 0.05, zero_point, kind)
        other = g.params(0.03, zero_point - 9, kind)
        for attrs, shape in (
            ({"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, [1, 2, 5, 5]),
            ({"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}, [1, 2, 3, 3]),
            ({"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}, [1, 2, 3, 3]),
        ):
            for y_params in (same, other):
                g.output(g.q(g.node("AveragePool", [g.dq(q, same)], **attrs), y_params), y_params, shape)
    return g.build("padded_pools")


def test_padded_average_pools_fold_and_stay_within_one_lsb(tmp_path):
    module = folded(padded_pool_model(), tmp_path)
    assert_only_the_edges_are_float(module)
    assert [op.name for op in module.walk()].count("onnx.QLinearAveragePool") == 12
    rng = np.random.default_rng(9)
    feeds = [{f"x_{k}": rng.uniform(-6, 6, (1, 2, 5, 5)).astype(np.float32) for k in TYPES} for _ in range(4)]
    assert max(lsb_differences(padded_pool_model(), "padded_pools", tmp_path, feeds)) <= 1.0 + 1e-3


@cache
def binary_model() -> onnx.ModelProto:
    """Sub, Max and Min of two differently quantized tensors, int8 and uint8."""
    g = QdqGraph()
    for kind, zero_point in (("i8", 3), ("u8", 131)):
        qa, pa = g.quantized_input(f"a_{kind}", [1, 2, 3], 0.05, zero_point, kind)
        qb, pb = g.quantized_input(f"b_{kind}", [1, 1, 3], 0.08, zero_point - 20, kind)
        y_params = g.params(0.07, zero_point + 5, kind)
        for op in ("Sub", "Max", "Min"):
            g.output(g.q(g.node(op, [g.dq(qa, pa), g.dq(qb, pb)]), y_params), y_params, [1, 2, 3])
    return g.build("binary")


def test_sub_max_min_of_two_quantized_tensors(tmp_path):
    module = folded(binary_model(), tmp_path)
    assert_only_the_edges_are_float(module)
    names = [op.name for op in module.walk()]
    assert names.count("onnx.QLinearAdd") == 2 and names.count("onnx.Max") == names.count("onnx.Min") == 2
    rng = np.random.default_rng(10)
    feeds = [{f"{v}_{k}": rng.uniform(-6, 6, (1, 2 if v == "a" else 1, 3)).astype(np.float32) for k in TYPES for v in "ab"} for _ in range(6)]
    assert max(lsb_differences(binary_model(), "binary", tmp_path, feeds)) <= 1.0 + 1e-3
