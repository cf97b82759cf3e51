"""Quantized models as PyTorch's dynamo exporter and Brevitas write them (issue 30 item 4).

torch and brevitas are not installed here: the graphs are built with `onnx.helper` the way their
exporters write them.

* PT2E / `torch.onnx.export(..., dynamo=True)`: QuantizeLinear decomposed into
  `Div(x, s)` or `Mul(x, 1/s)` → `Round` → `Add(zp)` → `Clip(qmin, qmax)` → `Cast(int8)`, and
  DequantizeLinear into `Cast(float)` → `Sub(zp)` → `Mul(s)`: `recognize-quantize` turns them
  back into QuantizeLinear / DequantizeLinear (bit-identical: checked in onnx's
  ReferenceEvaluator on random inputs and ties), then fold-qdq folds the layer.
* Brevitas QCDQ: `QuantizeLinear → Clip(-8, 7) → DequantizeLinear` (int4 in an int8 container),
  on activations and float weights alike.

Each model compiles with the default pipeline, 0 float scratch bytes, and equals onnx's
ReferenceEvaluator on the original graph byte for byte except at exact ties of the Conv's output,
where the float32 reference rounds its own rounding error and Zant's integer requantization
(default `exact` mode) rounds the real value to even: 1 LSB there, nowhere else (host; the QCDQ
Conv also as Cortex-M4 firmware under QEMU). The chains alone are byte for byte.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from zant.driver import CompileOptions, compile_model
from zant.runtime import load_compiled

OPSET = 19
INT8 = {TensorProto.INT8: np.int8, TensorProto.UINT8: np.uint8}


class Graph:
    def __init__(self):
        self.nodes, self.initializers, self.count = [], [], 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, array) -> str:
        name = self.name("c")
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op: str, inputs: list[str], **attrs) -> str:
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def decomposed_quantize(self, x: str, scale: float, zp: int, to: int, form: str = "div", bounds=None) -> str:
        """What dynamo writes for quantize_per_tensor (`form`: div, mul = x · (1/s), minmax =
        Max/Min bounds)."""
        info = np.iinfo(INT8[to])
        lo, hi = bounds or (info.min, info.max)
        f = lambda v: self.const(np.array(v, np.float32))  # noqa: E731
        scaled = self.node("Mul", [x, f(1 / scale)]) if form == "mul" else self.node("Div", [x, f(scale)])
        shifted = self.node("Add", [self.node("Round", [scaled]), f(zp)])
        if form == "minmax":
            clipped = self.node("Min", [self.node("Max", [shifted, f(lo)]), f(hi)])
        else:
            clipped = self.node("Clip", [shifted, f(lo), f(hi)])
        return self.node("Cast", [clipped], to=to)

    def decomposed_dequantize(self, q: str, scale, zp) -> str:
        f = lambda v: self.const(np.asarray(v, np.float32))  # noqa: E731
        return self.node("Mul", [self.node("Sub", [self.node("Cast", [q], to=TensorProto.FLOAT), f(zp)]), f(scale)])

    def qcdq(self, x: str, scale: float, bounds=(-8, 7)) -> str:
        """Brevitas: Q → Clip(lo, hi) on the int8 → DQ."""
        s, z = self.const(np.array(scale, np.float32)), self.const(np.array(0, np.int8))
        q = self.node("QuantizeLinear", [x, s, z])
        lo, hi = (self.const(np.array(v, np.int8)) for v in bounds)
        return self.node("DequantizeLinear", [self.node("Clip", [q, lo, hi]), s, z])

    def build(self, name: str, inputs, outputs) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        onnx.checker.check_model(model, full_check=True)
        return model


def rename_output(g: Graph, value: str, name: str) -> None:
    g.nodes.append(helper.make_node("Identity", [value], [name]))


# (form, scale, zero point, ONNX type, Clip bounds or None for the type's range)
CHAINS = [
    ("div", 0.05, 3, TensorProto.INT8, None),
    ("div", 0.0371, 131, TensorProto.UINT8, None),
    ("mul", 0.25, -5, TensorProto.INT8, None),  # 1/s = 4: exact
    ("minmax", 0.1, 0, TensorProto.INT8, (-8, 7)),  # int4 range
    ("div", 0.5, 0, TensorProto.UINT8, (0, 15)),  # uint4
]


def chain_model(form, scale, zp, to, bounds) -> onnx.ModelProto:
    """x → decomposed Q → (q output) → decomposed DQ → (y output)."""
    g = Graph()
    q = g.decomposed_quantize("x", scale, zp, to, form, bounds)
    rename_output(g, q, "q")
    rename_output(g, g.decomposed_dequantize("q", scale, zp), "y")
    return g.build("chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 512])],
                   [helper.make_tensor_value_info("q", to, [1, 512]), helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 512])])


def reference_q_model(scale, zp, to, bounds) -> onnx.ModelProto:
    """The same computation as QuantizeLinear (→ integer Clip) → DequantizeLinear."""
    dtype = INT8[to]
    g = Graph()
    s, z = g.const(np.array(scale, np.float32)), g.const(np.array(zp, dtype))
    q = g.node("QuantizeLinear", ["x", s, z])
    if bounds is not None:
        q = g.node("Clip", [q, g.const(np.array(bounds[0], dtype)), g.const(np.array(bounds[1], dtype))])
    rename_output(g, q, "q")
    rename_output(g, g.node("DequantizeLinear", ["q", s, z]), "y")
    return g.build("chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 512])],
                   [helper.make_tensor_value_info("q", to, [1, 512]), helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 512])])


def chain_inputs(scale: float, seed: int = 0) -> np.ndarray:
    """Random values over and beyond the range, and exact ties (k + 0.5) · s."""
    rng = np.random.default_rng(seed)
    wide = rng.normal(0, 100 * scale, 256)
    ties = (rng.integers(-200, 200, 256) + 0.5) * scale
    return np.concatenate([wide, ties]).astype(np.float32).reshape(1, 512)


@pytest.mark.parametrize("chain", CHAINS, ids=lambda c: f"{c[0]}-{c[2]}-{c[3]}-{c[4]}")
def test_decomposed_chain_is_quantize_linear(chain, tmp_path):
    """The identity recognize-quantize relies on (ReferenceEvaluator, and onnxruntime when
    installed: decomposed == QuantizeLinear (+ Clip), ties included), and Zant's compiled chain
    equals them byte for byte."""
    form, scale, zp, to, bounds = chain
    x = chain_inputs(scale)
    ties = np.abs(x / np.float32(scale) - np.round(x / np.float32(scale))) == 0.5
    assert ties.sum() > 100  # the ties are ties in float32 too
    want = ReferenceEvaluator(chain_model(*chain)).run(None, {"x": x})
    same = ReferenceEvaluator(reference_q_model(scale, zp, to, bounds)).run(None, {"x": x})
    for a, b in zip(want, same, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    try:
        import onnxruntime as ort
    except ImportError:  # the test extra has it; the ReferenceEvaluator check above stands alone
        ort = None
    if ort is not None:  # onnxruntime's QuantizeLinear kernel agrees (graph optimizations off)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        for model in (chain_model(*chain), reference_q_model(scale, zp, to, bounds)):
            for a, b in zip(ort.InferenceSession(model.SerializeToString(), options).run(None, {"x": x}), want, strict=True):
                assert np.array_equal(a, b)
    onnx.save(chain_model(*chain), tmp_path / "chain.onnx")
    result = compile_model(tmp_path / "chain.onnx", tmp_path / "out", CompileOptions(name="chain", optimize="ReleaseSafe"))
    got = load_compiled(result)(x)
    for a, b in zip(got, want, strict=True):
        assert np.array_equal(a.astype(b.dtype), b), np.flatnonzero(a.astype(b.dtype) != b)[:5]


def test_recognized_ops(tmp_path):
    """recognize-quantize leaves no Round/Cast in the chains it takes, and Mul by a reciprocal
    that is not a power of two stays float (x · (1/s) is not x / s in float32)."""
    from zant.driver import run_pipeline
    from zant.frontend.onnx_importer import import_model

    for chain, recognized in ((CHAINS[0], True), (CHAINS[3], True), (("mul", 0.05, 3, TensorProto.INT8, None), False)):
        onnx.save(chain_model(*chain), tmp_path / "m.onnx")
        module = import_model(str(tmp_path / "m.onnx"))
        run_pipeline(module, "recognize-quantize")
        names = [op.name for op in module.walk()]
        assert ("onnx.Round" not in names) == recognized, names
        assert names.count("onnx.DequantizeLinear") == 1
        assert names.count("onnx.QuantizeLinear") == int(recognized)


def pt2e_conv() -> onnx.ModelProto:
    """A dynamo-exported PT2E Conv → Relu: decomposed Q/DQ of the input, int8 weight initializer
    with a decomposed per-channel DQ (scales [4, 1, 1, 1]), float bias, decomposed Q/DQ of the output."""
    rng = np.random.default_rng(0)
    g = Graph()
    x = g.decomposed_dequantize(g.decomposed_quantize("x", 0.05, 2, TensorProto.INT8), 0.05, 2)
    w_scales = np.array([0.02, 0.01, 0.015, 0.005], np.float32).reshape(4, 1, 1, 1)  # per channel
    w = g.decomposed_dequantize(g.const(rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)), w_scales, 0)
    conv = g.node("Conv", [x, w, g.const(rng.normal(0, 0.5, 4).astype(np.float32))], pads=[1, 1, 1, 1])
    relu = g.node("Relu", [conv])
    y = g.decomposed_dequantize(g.decomposed_quantize(relu, 0.1, -128, TensorProto.INT8), 0.1, -128)
    rename_output(g, y, "y")
    return g.build("pt2e_conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])])


def qcdq_conv() -> onnx.ModelProto:
    """A Brevitas QCDQ Conv (4-bit weights and activations in int8 containers): float weights
    through Q → Clip(-8, 7) → DQ, activations likewise."""
    rng = np.random.default_rng(1)
    g = Graph()
    x = g.qcdq("x", 0.25)
    w = g.qcdq(g.const(rng.normal(0, 0.1, (4, 3, 3, 3)).astype(np.float32)), 0.03)
    conv = g.node("Conv", [x, w], pads=[1, 1, 1, 1])
    rename_output(g, g.qcdq(conv, 0.5), "y")
    return g.build("qcdq_conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])])


def feeds(seed: int, scale: float) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(0, 8 * scale, (1, 3, 8, 8)).astype(np.float32) for _ in range(3)] + [
        ((rng.integers(-10, 10, (1, 3, 8, 8)) + 0.5) * scale).astype(np.float32)  # ties
    ]


def exact_steps(model: onnx.ModelProto, x: np.ndarray, y_scale: float) -> np.ndarray:
    """The Conv's output in output steps before rounding, in float64 from the quantized operands
    (what ONNX's QDQ graph means; the float32 reference rounds it once more)."""
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    operands = [v.astype(np.float64) for v in ReferenceEvaluator(model).run(list(conv.input), {"x": x})]
    names = [f"in{i}" for i in range(len(operands))]
    node = helper.make_node("Conv", names, ["out"], pads=[1, 1, 1, 1])
    graph = helper.make_graph([node], "exact", [helper.make_tensor_value_info(n, TensorProto.DOUBLE, None) for n in names],
                              [helper.make_tensor_value_info("out", TensorProto.DOUBLE, None)])
    model64 = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    (out,) = ReferenceEvaluator(model64).run(None, dict(zip(names, operands)))
    return out / y_scale


def assert_reference_bytes_but_ties(got, want, steps, lsb: float, tolerance: float) -> int:
    """`got` is the reference's `want`, except where the exact value is within `tolerance` steps
    of a tie (k + 1/2): there the float32 reference rounds its own rounding error, and `got` may
    be the other neighbour (1 LSB). Returns how many elements differ."""
    differ = got != want
    assert np.max(np.abs(got - want)) <= lsb * 1.0001
    near_tie = np.abs(np.abs(steps - np.floor(steps)) - 0.5) < tolerance
    assert not np.any(differ & ~near_tie), (steps[differ & ~near_tie][:5], got[differ & ~near_tie][:5], want[differ & ~near_tie][:5])
    return int(differ.sum())


# (model, input scale, output scale, tie tolerance in output steps: the float bias's int32
# rounding, half a step of x_scale · w_scale, moves the exact value by up to 0.005 steps)
EXPORTED = [(pt2e_conv, 0.05, 0.1, 6e-3), (qcdq_conv, 0.25, 0.5, 1e-6)]


@pytest.mark.parametrize("build, scale, y_scale, tolerance", EXPORTED, ids=["pt2e", "qcdq"])
def test_exported_conv_stays_integer_and_exact(build, scale, y_scale, tolerance, tmp_path):
    """Default pipeline on the host: 0 float scratch bytes, the reference evaluator's bytes except
    at exact ties (measured: pt2e 1, qcdq 3 of 1,024 elements over the four inputs, each 1 LSB at a tie)."""
    model = build()
    onnx.save(model, tmp_path / "m.onnx")
    result = compile_model(tmp_path / "m.onnx", tmp_path / "out", CompileOptions(name="m", optimize="ReleaseSafe"))
    assert result.plan["float_scratch_bytes"] == 0
    compiled = load_compiled(result)
    reference = ReferenceEvaluator(model)
    differ = 0
    for x in feeds(3, scale):
        (want,) = reference.run(None, {"x": x})
        (got,) = compiled(x)
        differ += assert_reference_bytes_but_ties(got, want, exact_steps(model, x, y_scale), y_scale, tolerance)
    assert differ <= 8


def test_qcdq_conv_as_cortex_m4_firmware(tmp_path):
    """The QCDQ Conv as Cortex-M4 firmware under QEMU: integer, the reference evaluator's bytes."""
    from zant.backend.build import BOARDS, DEFAULT_BOARDS
    from zant.backend.firmware import qemu_missing, run_firmware

    missing = qemu_missing(BOARDS[DEFAULT_BOARDS["cortex-m4"]])
    if missing:
        pytest.skip(missing)
    model = qcdq_conv()
    onnx.save(model, tmp_path / "m.onnx")
    x = feeds(5, 0.25)[0]
    firmware = compile_model(
        tmp_path / "m.onnx", tmp_path / "m4",
        CompileOptions(name="net", target="cortex-m4", optimize="ReleaseSmall", firmware=True, inputs={"x": x}),
    )
    assert firmware.plan["float_scratch_bytes"] == 0
    run = run_firmware(firmware.firmware_path, firmware.board, firmware.outputs)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    assert_reference_bytes_but_ties(run.outputs[0], want, exact_steps(model, x, 0.5), 0.5, 1e-6)
