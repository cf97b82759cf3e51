"""MLPerf-Tiny-shaped ONNX models for the benchmarks and end-to-end tests (batch 1, opset 13).

Every builder is deterministic: weights come from a seeded generator, scaled (He-style,
sqrt(2 / fan_in)) so activations stay O(1) through the depth of the network, and every
BatchNormalization has non-trivial scale, bias, mean and variance (it is not folded away here:
the compiler sees the same operators as the exported MLPerf models).

    python bench/models.py OUTDIR      # writes OUTDIR/<name>.onnx for every model

`quantize` makes the int8 variants (`QUANTIZED`: kws_int8, resnet8_int8 …): BatchNorm folded
into the layer before it, then onnxruntime's `quantize_static` (QDQ or QOperator format,
int8 activations and weights, per-channel weights, seeded calibration data). onnxruntime is a
bench/test extra: only this function imports it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from zant.errors import ZantError
from zant.pipelines import MCU_PIPELINE

OPSET = 13


class GraphBuilder:
    """Collects nodes and initializers; each layer helper returns its output's name."""

    def __init__(self, name: str, seed: int):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.counter = 0

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}_{self.counter}"

    def const(self, prefix: str, array: np.ndarray, dtype=np.float32) -> str:
        name = self.fresh(prefix)
        self.initializers.append(numpy_helper.from_array(np.asarray(array, dtype=dtype), name))
        return name

    def node(self, op: str, inputs: list[str], prefix: str | None = None, **attrs) -> str:
        out = self.fresh(prefix or op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    # --- layers ---------------------------------------------------------------------------

    def conv(self, x: str, cin: int, cout: int, kernel, stride=1, pads=None, group=1, bias=True) -> str:
        kh, kw = (kernel, kernel) if isinstance(kernel, int) else kernel
        fan_in = (cin // group) * kh * kw
        w = self.rng.standard_normal((cout, cin // group, kh, kw)) * np.sqrt(2.0 / fan_in)
        inputs = [x, self.const("w", w)]
        if bias:
            inputs.append(self.const("b", self.rng.standard_normal(cout) * 0.05))
        if pads is None:  # SAME-like for odd kernels
            pads = [kh // 2, kw // 2, kh // 2, kw // 2]
        return self.node(
            "Conv", inputs, "conv", kernel_shape=[kh, kw], strides=[stride, stride], pads=list(pads), group=group
        )

    def bn(self, x: str, channels: int) -> str:
        rng = self.rng
        scale = rng.uniform(0.5, 1.5, channels)
        bias = rng.standard_normal(channels) * 0.1
        mean = rng.standard_normal(channels) * 0.1
        var = rng.uniform(0.5, 1.5, channels)
        return self.node(
            "BatchNormalization",
            [x, self.const("bn_scale", scale), self.const("bn_bias", bias),
             self.const("bn_mean", mean), self.const("bn_var", var)],
            "bn",
            epsilon=1e-3,
        )

    def relu(self, x: str) -> str:
        return self.node("Relu", [x], "relu")

    def relu6(self, x: str) -> str:
        return self.node("Clip", [x, self.const("zero", np.array(0.0)), self.const("six", np.array(6.0))], "relu6")

    def gemm(self, x: str, fan_in: int, fan_out: int, gain: float = 2.0) -> str:
        w = self.rng.standard_normal((fan_out, fan_in)) * np.sqrt(gain / fan_in)
        b = self.rng.standard_normal(fan_out) * 0.05
        return self.node("Gemm", [x, self.const("fc_w", w), self.const("fc_b", b)], "fc", transB=1)

    def build(self, inputs: list[tuple[str, list[int]]], outputs: list[tuple[str, str, list[int]]],
              opset: int = OPSET) -> onnx.ModelProto:
        # Rename the final tensors to readable output names.
        renames = {internal: public for internal, public, _ in outputs}
        for node in self.nodes:
            node.output[:] = [renames.get(o, o) for o in node.output]
            node.input[:] = [renames.get(i, i) for i in node.input]
        graph = helper.make_graph(
            self.nodes,
            self.name,
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for _, n, s in outputs],
            self.initializers,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="zant-bench")
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model


def kws_dscnn() -> onnx.ModelProto:
    """MLPerf-Tiny keyword spotting DS-CNN: 1×1×49×10 MFCCs → 12 classes."""
    g = GraphBuilder("kws_dscnn", seed=10)
    # Conv 64 10×4 stride 2, SAME padding: out 25×5; pads (4,1,5,1) as TF's SAME would give.
    x = g.conv("input", 1, 64, (10, 4), stride=2, pads=[4, 1, 5, 1])
    x = g.relu(g.bn(x, 64))
    for _ in range(4):
        x = g.relu(g.bn(g.conv(x, 64, 64, 3, group=64), 64))  # depthwise
        x = g.relu(g.bn(g.conv(x, 64, 64, 1), 64))  # pointwise
    x = g.node("AveragePool", [x], "avgpool", kernel_shape=[25, 5])
    x = g.node("Flatten", [x], "flatten", axis=1)
    x = g.gemm(x, 64, 12, gain=1.0)
    x = g.node("Softmax", [x], "softmax", axis=1)
    return g.build([("input", [1, 1, 49, 10])], [(x, "probs", [1, 12])])


def resnet8() -> onnx.ModelProto:
    """MLPerf-Tiny image classification ResNet-8 (CIFAR-10): 1×3×32×32 → 10 classes."""
    g = GraphBuilder("resnet8", seed=11)
    x = g.relu(g.bn(g.conv("input", 3, 16, 3), 16))
    cin = 16
    for cout, stride in ((16, 1), (32, 2), (64, 2)):
        y = g.relu(g.bn(g.conv(x, cin, cout, 3, stride=stride), cout))
        y = g.bn(g.conv(y, cout, cout, 3), cout)
        shortcut = x if (cin == cout and stride == 1) else g.conv(x, cin, cout, 1, stride=stride, pads=[0, 0, 0, 0])
        x = g.relu(g.node("Add", [y, shortcut], "add"))
        cin = cout
    x = g.node("AveragePool", [x], "avgpool", kernel_shape=[8, 8])
    x = g.node("Flatten", [x], "flatten", axis=1)
    x = g.gemm(x, 64, 10, gain=1.0)
    x = g.node("Softmax", [x], "softmax", axis=1)
    return g.build([("input", [1, 3, 32, 32])], [(x, "probs", [1, 10])])


def fc_autoencoder() -> onnx.ModelProto:
    """MLPerf-Tiny anomaly detection autoencoder: 640-128×4-8-128×4-640, BatchNorm after each
    hidden Gemm (rank-2 BatchNormalization on [1, C])."""
    g = GraphBuilder("fc_autoencoder", seed=12)
    widths = [640, 128, 128, 128, 128, 8, 128, 128, 128, 128]
    x = "input"
    for fan_in, fan_out in zip(widths, widths[1:]):
        x = g.relu(g.bn(g.gemm(x, fan_in, fan_out), fan_out))
    x = g.gemm(x, 128, 640, gain=1.0)
    return g.build([("input", [1, 640])], [(x, "reconstruction", [1, 640])])


def mobilenet_v1_025() -> onnx.ModelProto:
    """MLPerf-Tiny visual wake words MobileNetV1 0.25: 1×3×96×96 → 2 classes (ReLU6 as Clip)."""
    g = GraphBuilder("mobilenet_v1_025", seed=13)
    x = g.relu6(g.bn(g.conv("input", 3, 8, 3, stride=2, pads=[0, 0, 1, 1]), 8))  # 48×48
    # (output channels, depthwise stride) of the 13 depthwise-separable blocks.
    blocks = [(16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2),
              (128, 1), (128, 1), (128, 1), (128, 1), (128, 1), (256, 2), (256, 1)]
    cin = 8
    for cout, stride in blocks:
        pads = [1, 1, 1, 1] if stride == 1 else [0, 0, 1, 1]  # TF SAME for stride 2 on even sizes
        x = g.relu6(g.bn(g.conv(x, cin, cin, 3, stride=stride, pads=pads, group=cin, bias=False), cin))
        x = g.relu6(g.bn(g.conv(x, cin, cout, 1, bias=False), cout))
        cin = cout
    x = g.node("GlobalAveragePool", [x], "gap")  # 3×3 → 1×1
    x = g.node("Flatten", [x], "flatten", axis=1)
    x = g.gemm(x, 256, 2, gain=1.0)
    x = g.node("Softmax", [x], "softmax", axis=1)
    return g.build([("input", [1, 3, 96, 96])], [(x, "probs", [1, 2])])


def mlp() -> onnx.ModelProto:
    """A small MLP: 1×64 → 128 → 64 → 10, Relu between, Softmax at the end."""
    g = GraphBuilder("mlp", seed=14)
    x = g.relu(g.gemm("input", 64, 128))
    x = g.relu(g.gemm(x, 128, 64))
    x = g.node("Softmax", [g.gemm(x, 64, 10, gain=1.0)], "softmax", axis=1)
    return g.build([("input", [1, 64])], [(x, "probs", [1, 10])])


def branches() -> onnx.ModelProto:
    """An inception-like block with parallel branches of different widths, the arena planner's
    test case: stem conv → {1×1; 1×1→3×3; 3×3 maxpool→1×1; 1×1→5×5} → Concat → 1×1 conv → pool."""
    g = GraphBuilder("branches", seed=15)
    stem = g.relu(g.bn(g.conv("input", 3, 16, 3), 16))  # 16×24×24
    b1 = g.relu(g.conv(stem, 16, 8, 1, pads=[0, 0, 0, 0]))
    b2 = g.relu(g.conv(g.relu(g.conv(stem, 16, 12, 1, pads=[0, 0, 0, 0])), 12, 16, 3))
    b3 = g.node("MaxPool", [stem], "maxpool", kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
    b3 = g.relu(g.conv(b3, 16, 8, 1, pads=[0, 0, 0, 0]))
    b4 = g.relu(g.conv(g.relu(g.conv(stem, 16, 4, 1, pads=[0, 0, 0, 0])), 4, 8, 5))
    x = g.node("Concat", [b1, b2, b3, b4], "concat", axis=1)  # 40 channels
    x = g.relu(g.bn(g.conv(x, 40, 32, 1, pads=[0, 0, 0, 0]), 32))
    x = g.node("MaxPool", [x], "maxpool", kernel_shape=[2, 2], strides=[2, 2])  # 12×12
    x = g.node("GlobalAveragePool", [x], "gap")
    x = g.node("Flatten", [x], "flatten", axis=1)
    x = g.node("Softmax", [g.gemm(x, 32, 10, gain=1.0)], "softmax", axis=1)
    return g.build([("input", [1, 3, 24, 24])], [(x, "probs", [1, 10])])


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "kws": kws_dscnn,
    "resnet8": resnet8,
    "autoencoder": fc_autoencoder,
    "mobilenet": mobilenet_v1_025,
    "mlp": mlp,
    "branches": branches,
}


def mobilenet_v1_10(size: int = 96) -> onnx.ModelProto:
    """MobileNetV1 1.0 (ImageNet head, 4.2 M parameters, 17 MB of weights), 1×3×size×size →
    1000 classes, ReLU6 as Clip: the compile-time benchmark's 4 M-parameter model."""
    g = GraphBuilder("mobilenet_v1_10", seed=16)
    x = g.relu6(g.bn(g.conv("input", 3, 32, 3, stride=2), 32))
    blocks = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
              (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)]
    cin = 32
    for cout, stride in blocks:
        x = g.relu6(g.bn(g.conv(x, cin, cin, 3, stride=stride, group=cin, bias=False), cin))
        x = g.relu6(g.bn(g.conv(x, cin, cout, 1, bias=False), cout))
        cin = cout
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "gap")], "flatten", axis=1)
    x = g.node("Softmax", [g.gemm(x, 1024, 1000, gain=1.0)], "softmax", axis=1)
    return g.build([("input", [1, 3, size, size])], [(x, "probs", [1, 1000])])


def mobilenet_v2(size: int = 96) -> onnx.ModelProto:
    """MobileNetV2 1.0 (3.5 M parameters) as PyTorch exports it: inverted residuals, ReLU6 as
    Clip(0, 6) with its bounds as initializer inputs (35 Clips), 1×3×size×size → 1000 classes."""
    g = GraphBuilder("mobilenet_v2", seed=17)
    x = g.relu6(g.bn(g.conv("input", 3, 32, 3, stride=2, bias=False), 32))
    cin = 32
    # (expansion, output channels, repeats, first stride) per stage.
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            stride, hidden = (s if i == 0 else 1), cin * t
            y = x if t == 1 else g.relu6(g.bn(g.conv(x, cin, hidden, 1, bias=False), hidden))
            y = g.relu6(g.bn(g.conv(y, hidden, hidden, 3, stride=stride, group=hidden, bias=False), hidden))
            y = g.bn(g.conv(y, hidden, c, 1, bias=False), c)
            x = g.node("Add", [x, y], "add") if stride == 1 and cin == c else y
            cin = c
    x = g.relu6(g.bn(g.conv(x, cin, 1280, 1, bias=False), 1280))
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "gap")], "flatten", axis=1)
    x = g.node("Softmax", [g.gemm(x, 1280, 1000, gain=1.0)], "softmax", axis=1)
    return g.build([("input", [1, 3, size, size])], [(x, "probs", [1, 1000])])


LARGE: dict[str, Callable[[], onnx.ModelProto]] = {
    "mobilenet_v1_10": mobilenet_v1_10,
    "mobilenet_v2": mobilenet_v2,
}
"""Models too large for the tests: the compile-time benchmark's (`bench/compile.py`)."""


# --- real-network-shaped models (issue 18) ----------------------------------------------------
# Shaped as PyTorch exports them in eval mode (BatchNorm folded into the conv's bias, SiLU as
# Sigmoid·Mul, GELU through Erf, LayerNorm decomposed at opset 13, LSTM/GRU as the ONNX ops),
# with weights scaled as trained networks have them (He-style): activations stay O(1), far from
# the denormal range.


def _conv_folded(g: GraphBuilder, x: str, cin: int, cout: int, kernel: int, stride: int = 1, group: int = 1,
                 gain: float = 2.0, pads: list[int] | None = None) -> str:
    """A Conv with its BatchNorm folded in: He-scaled weights and a small bias (pads: half the
    kernel on each side unless given)."""
    fan_in = (cin // group) * kernel * kernel
    w = g.rng.standard_normal((cout, cin // group, kernel, kernel)) * np.sqrt(gain / fan_in)
    b = g.rng.standard_normal(cout) * 0.05
    return g.node("Conv", [x, g.const("w", w), g.const("b", b)], "conv", kernel_shape=[kernel, kernel],
                  strides=[stride, stride], pads=pads if pads is not None else [kernel // 2] * 4, group=group)


def _silu(g: GraphBuilder, x: str) -> str:
    return g.node("Mul", [x, g.node("Sigmoid", [x], "sigmoid")], "silu")


def effnet_se(size: int = 96) -> onnx.ModelProto:
    """An EfficientNet-B0-shaped MBConv stack: SiLU everywhere, squeeze-excitation in every
    block (GlobalAveragePool → 1×1 reduce → SiLU → 1×1 expand → Sigmoid → Mul), depthwise 3×3
    and 5×5, residuals; 1×3×size×size → 1000 classes."""
    g = GraphBuilder("effnet_se", seed=20)
    x = _silu(g, _conv_folded(g, "input", 3, 32, 3, stride=2))
    cin = 32
    # (expansion, output channels, kernel, first stride, repeats): B0's first five stages.
    for t, c, k, s, n in [(1, 16, 3, 1, 1), (6, 24, 3, 2, 2), (6, 40, 5, 2, 2), (6, 80, 3, 2, 3), (6, 112, 5, 1, 1)]:
        for i in range(n):
            stride, hidden = (s if i == 0 else 1), cin * t
            y = x if t == 1 else _silu(g, _conv_folded(g, x, cin, hidden, 1))
            y = _silu(g, _conv_folded(g, y, hidden, hidden, k, stride=stride, group=hidden))
            squeezed = max(1, cin // 4)
            se = g.node("GlobalAveragePool", [y], "se_pool")
            se = _silu(g, _conv_folded(g, se, hidden, squeezed, 1))
            se = g.node("Sigmoid", [_conv_folded(g, se, squeezed, hidden, 1, gain=1.0)], "se_gate")
            y = g.node("Mul", [y, se], "se_scale")
            y = _conv_folded(g, y, hidden, c, 1, gain=1.0)
            x = g.node("Add", [x, y], "add") if stride == 1 and cin == c else y
            cin = c
    x = _silu(g, _conv_folded(g, x, cin, 640, 1))
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "gap")], "flatten", axis=1)
    x = g.gemm(x, 640, 1000, gain=1.0)
    return g.build([("input", [1, 3, size, size])], [(x, "logits", [1, 1000])])


def resnet18(size: int = 96) -> onnx.ModelProto:
    """ResNet-18 (11.7 M parameters) at size×size: 7×7/2 stem, 3×3/2 max pool, four stages of
    two basic blocks (64, 128, 256, 512 channels; 1×1/2 projection shortcuts), BatchNorm
    folded; 1×3×size×size → 1000 classes."""
    g = GraphBuilder("resnet18", seed=21)
    x = g.relu(_conv_folded(g, "input", 3, 64, 7, stride=2))
    x = g.node("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for c, s in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        for i in range(2):
            stride = s if i == 0 else 1
            y = g.relu(_conv_folded(g, x, cin, c, 3, stride=stride))
            y = _conv_folded(g, y, c, c, 3, gain=1.0)  # trained residual branches start small
            shortcut = x if stride == 1 and cin == c else _conv_folded(g, x, cin, c, 1, stride=stride, gain=1.0)
            x = g.relu(g.node("Add", [shortcut, y], "add"))
            cin = c
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "gap")], "flatten", axis=1)
    x = g.gemm(x, 512, 1000, gain=1.0)
    return g.build([("input", [1, 3, size, size])], [(x, "logits", [1, 1000])])


def _layer_norm(g: GraphBuilder, x: str, width: int) -> str:
    """LayerNorm over the last axis as PyTorch exports it at opset 13."""
    mean = g.node("ReduceMean", [x], "ln_mean", axes=[-1])
    centred = g.node("Sub", [x, mean], "ln_centred")
    var = g.node("ReduceMean", [g.node("Pow", [centred, g.const("two", np.array(2.0))], "ln_sq")], "ln_var", axes=[-1])
    std = g.node("Sqrt", [g.node("Add", [var, g.const("eps", np.array(1e-12))], "ln_eps")], "ln_std")
    y = g.node("Div", [centred, std], "ln_norm")
    y = g.node("Mul", [y, g.const("ln_gamma", 1 + 0.1 * g.rng.standard_normal(width))], "ln_scale")
    return g.node("Add", [y, g.const("ln_beta", 0.1 * g.rng.standard_normal(width))], "ln_shift")


def _dense(g: GraphBuilder, x: str, fan_in: int, fan_out: int, gain: float = 1.0) -> str:
    """A Linear layer on a [.., fan_in] tensor as MatMul + Add (PyTorch's export of nn.Linear on 3-D)."""
    w = g.rng.standard_normal((fan_in, fan_out)) * np.sqrt(gain / fan_in)
    y = g.node("MatMul", [x, g.const("dense_w", w)], "matmul")
    return g.node("Add", [y, g.const("dense_b", 0.02 * g.rng.standard_normal(fan_out))], "dense")


def bert_tiny(seq: int = 16, hidden: int = 64, heads: int = 2, layers: int = 2) -> onnx.ModelProto:
    """A BERT-tiny encoder (2 layers, hidden 64, 2 heads, FFN 256, sequence 16) from its
    embeddings on: multi-head self-attention (MatMul, Softmax), GELU through Erf, decomposed
    LayerNorm; 1×seq×hidden → 1×seq×hidden."""
    g = GraphBuilder("bert_tiny", seed=22)
    head = hidden // heads
    split = g.const("split_shape", np.array([1, seq, heads, head]), np.int64)
    merge = g.const("merge_shape", np.array([1, seq, hidden]), np.int64)
    x = _layer_norm(g, "input", hidden)
    for _ in range(layers):
        def heads_of(t: str, perm: list[int]) -> str:
            return g.node("Transpose", [g.node("Reshape", [t, split], "split")], "heads", perm=perm)

        q = heads_of(_dense(g, x, hidden, hidden), [0, 2, 1, 3])
        k = heads_of(_dense(g, x, hidden, hidden), [0, 2, 3, 1])
        v = heads_of(_dense(g, x, hidden, hidden), [0, 2, 1, 3])
        scores = g.node("Div", [g.node("MatMul", [q, k], "scores"), g.const("scale", np.array(np.sqrt(head)))], "scaled")
        probs = g.node("Softmax", [scores], "softmax", axis=-1)
        context = g.node("Transpose", [g.node("MatMul", [probs, v], "context")], "merge", perm=[0, 2, 1, 3])
        attention = _dense(g, g.node("Reshape", [context, merge], "merged"), hidden, hidden)
        x = _layer_norm(g, g.node("Add", [x, attention], "residual"), hidden)
        h = _dense(g, x, hidden, 4 * hidden, gain=2.0)
        erf = g.node("Erf", [g.node("Div", [h, g.const("sqrt2", np.array(np.sqrt(2.0)))], "gelu_in")], "erf")
        half = g.node("Mul", [h, g.const("half", np.array(0.5))], "gelu_half")
        gelu = g.node("Mul", [half, g.node("Add", [erf, g.const("one", np.array(1.0))], "gelu_1")], "gelu")
        x = _layer_norm(g, g.node("Add", [x, _dense(g, gelu, 4 * hidden, hidden)], "residual"), hidden)
    return g.build([("input", [1, seq, hidden])], [(x, "hidden", [1, seq, hidden])])


def _recurrent_kws(name: str, op: str, gates: int, seed: int, hidden: int, frames: int = 49,
                   features: int = 10, classes: int = 12) -> onnx.ModelProto:
    """A keyword spotter over frames×features MFCCs: two stacked `op` layers (PyTorch's
    export: time-major, each layer's Y squeezed into the next), the last hidden state → Gemm."""
    g = GraphBuilder(name, seed=seed)
    x, width = "input", features
    extra = {"linear_before_reset": 1} if op == "GRU" else {}
    for layer in range(2):
        scale = 1 / np.sqrt(hidden)  # PyTorch's uniform(-1/√H, 1/√H), as trained RNNs keep it
        w = g.rng.uniform(-scale, scale, (1, gates * hidden, width))
        r = g.rng.uniform(-scale, scale, (1, gates * hidden, hidden))
        b = g.rng.uniform(-scale, scale, (1, 2 * gates * hidden))
        out = g.fresh(op.lower())
        g.nodes.append(helper.make_node(op, [x, g.const("w", w), g.const("r", r), g.const("b", b)],
                                        [out, f"{out}_h"], name=out, hidden_size=hidden, **extra))
        last = f"{out}_h"
        x = g.node("Squeeze", [out, g.const("axis", np.array([1]), np.int64)], "squeeze")  # [frames, 1, hidden]
        width = hidden
    flat = g.node("Reshape", [last, g.const("shape", np.array([1, hidden]), np.int64)], "flatten")
    logits = g.gemm(flat, hidden, classes, gain=1.0)
    return g.build([("input", [frames, 1, features])], [(logits, "logits", [1, classes])])


def lstm_kws() -> onnx.ModelProto:
    """LSTM keyword spotter: 49×10 MFCCs → 2 LSTM layers of 128 → 12 classes."""
    return _recurrent_kws("lstm_kws", "LSTM", 4, seed=23, hidden=128)


def gru_kws() -> onnx.ModelProto:
    """GRU keyword spotter: 49×10 MFCCs → 2 GRU layers of 128 (linear_before_reset, as PyTorch)
    → 12 classes."""
    return _recurrent_kws("gru_kws", "GRU", 3, seed=24, hidden=128)


ARCHITECTURES: dict[str, Callable[[], onnx.ModelProto]] = {
    "effnet_se": effnet_se,
    "bert_tiny": bert_tiny,
    "lstm_kws": lstm_kws,
    "gru_kws": gru_kws,
    "resnet18": resnet18,
}
"""Models shaped as real PyTorch exports (issue 18), measured by bench/latency.py beside the
MLPerf-Tiny four; resnet18's 11.7 M parameters keep it out of the per-model tests."""


# --- the held-apart set (issue 34) -------------------------------------------------------------
# Shapes the host's tiling was not tuned on, to check that its decisions generalise: torchvision's
# topologies at 224x224 as the two torch exporters write them (legacy TorchScript export: BatchNorm
# folded into the Conv, ReLU6 as Clip(0, 6), Flatten + Gemm; dynamo export at opset 18: Conv +
# BatchNormalization kept, ReduceMean for the adaptive average pool, Reshape + Gemm) and an
# MLPerf-Tiny ResNet-8 as tf2onnx writes it (TF SAME padding, MatMul + Add for the Dense layer).
# Random He-scaled weights from a fixed seed; `bench/latency.py --held-apart` measures them.


def resnet18_224() -> onnx.ModelProto:
    """torchvision's ResNet-18 at 224x224 as the legacy exporter writes it (the bench's `resnet18`
    at 224 instead of 96): 1x3x224x224 -> 1000 logits."""
    model = resnet18(224)
    model.graph.name = "resnet18_224"
    return model


def squeezenet1_1() -> onnx.ModelProto:
    """torchvision's SqueezeNet 1.1 as the legacy exporter writes it: Fire modules (1x1 squeeze
    -> ReLU -> 1x1 and 3x3 expands -> ReLU each -> Concat), max pools with ceil_mode, the 1x1
    classifier Conv -> ReLU -> GlobalAveragePool -> Flatten; 1x3x224x224 -> 1000."""
    g = GraphBuilder("squeezenet1_1", seed=30)
    x = g.relu(_conv_folded(g, "input", 3, 64, 3, stride=2, pads=[0, 0, 0, 0]))  # 111x111

    def pool(x: str) -> str:
        return g.node("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)

    def fire(x: str, cin: int, squeeze: int, expand: int) -> str:
        s = g.relu(_conv_folded(g, x, cin, squeeze, 1))
        e1 = g.relu(_conv_folded(g, s, squeeze, expand, 1))
        e3 = g.relu(_conv_folded(g, s, squeeze, expand, 3))
        return g.node("Concat", [e1, e3], "concat", axis=1)

    x = fire(fire(pool(x), 64, 16, 64), 128, 16, 64)
    x = fire(fire(pool(x), 128, 32, 128), 256, 32, 128)
    x = pool(x)
    for cin, squeeze, expand in ((256, 48, 192), (384, 48, 192), (384, 64, 256), (512, 64, 256)):
        x = fire(x, cin, squeeze, expand)
    x = g.relu(_conv_folded(g, x, 512, 1000, 1, gain=1.0))
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "gap")], "flatten", axis=1)
    return g.build([("input", [1, 3, 224, 224])], [(x, "logits", [1, 1000])])


_MOBILENET_V2_STAGES = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                        (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
"""(expansion, output channels, repeats, first stride) of MobileNetV2's inverted-residual stages."""


def mobilenet_v2_legacy() -> onnx.ModelProto:
    """torchvision's MobileNetV2 at 224x224 as the legacy exporter writes it: BatchNorm folded
    into every Conv, ReLU6 as Clip(0, 6) with its bounds as inputs, GlobalAveragePool, Flatten,
    Gemm; 1x3x224x224 -> 1000 logits."""
    g = GraphBuilder("mobilenet_v2_legacy", seed=31)

    def cbr(x: str, cin: int, cout: int, kernel: int, stride: int = 1, group: int = 1) -> str:
        return g.relu6(_conv_folded(g, x, cin, cout, kernel, stride=stride, group=group))

    x, cin = cbr("input", 3, 32, 3, stride=2), 32
    for t, c, n, s in _MOBILENET_V2_STAGES:
        for i in range(n):
            stride, hidden = (s if i == 0 else 1), cin * t
            y = x if t == 1 else cbr(x, cin, hidden, 1)
            y = cbr(y, hidden, hidden, 3, stride=stride, group=hidden)
            y = _conv_folded(g, y, hidden, c, 1, gain=1.0)
            x = g.node("Add", [x, y], "add") if stride == 1 and cin == c else y
            cin = c
    x = cbr(x, cin, 1280, 1)
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "gap")], "flatten", axis=1)
    x = g.gemm(x, 1280, 1000, gain=1.0)
    return g.build([("input", [1, 3, 224, 224])], [(x, "logits", [1, 1000])])


def mobilenet_v2_dynamo() -> onnx.ModelProto:
    """torchvision's MobileNetV2 at 224x224 as the dynamo exporter writes it (opset 18): Conv
    without bias followed by BatchNormalization, ReLU6 as Clip with scalar bound inputs, the
    adaptive average pool as ReduceMean over the spatial axes (axes an input), the flatten as
    Reshape to [1, -1], Gemm; 1x3x224x224 -> 1000 logits."""
    g = GraphBuilder("mobilenet_v2_dynamo", seed=32)

    def cb(x: str, cin: int, cout: int, kernel: int, stride: int = 1, group: int = 1) -> str:
        return g.bn(g.conv(x, cin, cout, kernel, stride=stride, group=group, bias=False), cout)

    def cbr(*args, **kwargs) -> str:
        return g.relu6(cb(*args, **kwargs))

    x, cin = cbr("input", 3, 32, 3, stride=2), 32
    for t, c, n, s in _MOBILENET_V2_STAGES:
        for i in range(n):
            stride, hidden = (s if i == 0 else 1), cin * t
            y = x if t == 1 else cbr(x, cin, hidden, 1)
            y = cbr(y, hidden, hidden, 3, stride=stride, group=hidden)
            y = cb(y, hidden, c, 1)
            x = g.node("Add", [x, y], "add") if stride == 1 and cin == c else y
            cin = c
    x = cbr(x, cin, 1280, 1)
    x = g.node("ReduceMean", [x, g.const("axes", np.array([-1, -2]), np.int64)], "mean", keepdims=1)
    x = g.node("Reshape", [x, g.const("shape", np.array([1, -1]), np.int64)], "view")
    x = g.gemm(x, 1280, 1000, gain=1.0)
    return g.build([("input", [1, 3, 224, 224])], [(x, "logits", [1, 1000])], opset=18)


def resnet8_tf() -> onnx.ModelProto:
    """MLPerf-Tiny's ResNet-8 (CIFAR-10, 32x32) as tf2onnx writes the trained Keras model:
    BatchNorm folded, stride-2 Convs with TF's SAME padding (0, 0, 1, 1), the Dense layer as
    Flatten -> MatMul + Add, Softmax; 1x3x32x32 -> 10."""
    g = GraphBuilder("resnet8_tf", seed=33)

    def conv(x: str, cin: int, cout: int, kernel: int, stride: int = 1, gain: float = 2.0) -> str:
        fan_in = cin * kernel * kernel
        w = g.rng.standard_normal((cout, cin, kernel, kernel)) * np.sqrt(gain / fan_in)
        pads = [kernel // 2] * 4 if stride == 1 else [0, 0, kernel // 2, kernel // 2]
        return g.node("Conv", [x, g.const("w", w), g.const("b", g.rng.standard_normal(cout) * 0.05)], "conv",
                      kernel_shape=[kernel, kernel], strides=[stride, stride], pads=pads)

    x, cin = g.relu(conv("input", 3, 16, 3)), 16
    for cout, stride in ((16, 1), (32, 2), (64, 2)):
        y = conv(g.relu(conv(x, cin, cout, 3, stride)), cout, cout, 3, gain=1.0)
        shortcut = x if stride == 1 and cin == cout else conv(x, cin, cout, 1, stride, gain=1.0)
        x, cin = g.relu(g.node("Add", [y, shortcut], "add")), cout
    x = g.node("Flatten", [g.node("AveragePool", [x], "avgpool", kernel_shape=[8, 8])], "flatten", axis=1)
    w = g.rng.standard_normal((64, 10)) * np.sqrt(1.0 / 64)
    x = g.node("Add", [g.node("MatMul", [x, g.const("dense_w", w)], "matmul"),
                       g.const("dense_b", g.rng.standard_normal(10) * 0.05)], "dense")
    x = g.node("Softmax", [x], "softmax", axis=1)
    return g.build([("input", [1, 3, 32, 32])], [(x, "probs", [1, 10])])


HELD_APART: dict[str, Callable[[], onnx.ModelProto]] = {
    "resnet18_224": resnet18_224,
    "squeezenet1_1": squeezenet1_1,
    "mobilenet_v2_legacy": mobilenet_v2_legacy,
    "mobilenet_v2_dynamo": mobilenet_v2_dynamo,
    "resnet8_tf": resnet8_tf,
}
"""The held-apart set: exported-CNN shapes the host's tiling is checked on, not tuned on
(`bench/latency.py --held-apart`)."""


DIGITS = Path(__file__).resolve().parents[1] / "examples" / "digits" / "digits_cnn.onnx"


def digits() -> onnx.ModelProto:
    """The bundled digits demo (examples/digits)."""
    return onnx.load(DIGITS)


def fold_batchnorm(model: onnx.ModelProto) -> onnx.ModelProto:
    """Fold each BatchNormalization into the Conv or Gemm (transB=1) that alone feeds it, as
    exporters do before quantizing: W·γ/σ per output channel, (b − μ)·γ/σ + β."""
    graph = model.graph
    values = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    uses: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1
    kept = []
    for node in graph.node:
        layer = producer.get(node.input[0]) if node.op_type == "BatchNormalization" else None
        transposed = layer is not None and any(a.name == "transB" and a.i for a in layer.attribute)
        if layer is None or uses[node.input[0]] != 1 or not (layer.op_type == "Conv" or transposed):
            kept.append(node)
            continue
        gamma, beta, mean, var = (values[n] for n in node.input[1:5])
        eps = next((a.f for a in node.attribute if a.name == "epsilon"), 1e-5)
        factor = gamma / np.sqrt(var + eps)
        w = values[layer.input[1]]
        b = values[layer.input[2]] if len(layer.input) > 2 else np.zeros(w.shape[0], np.float32)
        weight = w * factor.reshape(-1, *[1] * (w.ndim - 1))
        bias = (b - mean) * factor + beta
        names = [f"{layer.output[0]}_w", f"{layer.output[0]}_b"]
        values.update(zip(names, (weight.astype(np.float32), bias.astype(np.float32))))
        del layer.input[1:]
        layer.input.extend(names)
        layer.output[0] = node.output[0]
    used = {i for n in kept for i in n.input}
    initializers = [numpy_helper.from_array(v, k) for k, v in values.items() if k in used]
    folded = helper.make_graph(kept, graph.name, graph.input, graph.output, initializers)
    result = helper.make_model(folded, opset_imports=model.opset_import, producer_name=model.producer_name)
    result.ir_version = model.ir_version
    onnx.checker.check_model(result)
    return result


def calibration_inputs(model: onnx.ModelProto, count: int = 8, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """Seeded inputs for calibration (and tests): the digits model gets held-out images, the
    others standard-normal tensors of their input shapes."""
    rng = np.random.default_rng(seed)
    (graph_input,) = model.graph.input
    if graph_input.name == "image":
        images = np.load(DIGITS.parent / "digits_heldout.npz")["images"]
        return [{"image": images[i : i + 1]} for i in rng.choice(len(images), count, replace=False)]
    shape = [d.dim_value for d in graph_input.type.tensor_type.shape.dim]
    return [{graph_input.name: rng.standard_normal(shape).astype(np.float32)} for _ in range(count)]


QOPERATOR_STANDARD_OPS = ["Conv", "MatMul", "MaxPool", "Flatten", "Reshape"]
"""The ops whose QOperator form is in the default ONNX domain (QLinearConv, QLinearMatMul, int8
MaxPool/Flatten/Reshape); quantize_static turns Gemm, Add, Softmax and the average pools into
com.microsoft ops (QGemm, QLinearAdd, QLinearSoftmax, QLinear(Global)AveragePool)."""


def quantize(
    model: onnx.ModelProto, fmt: str = "qdq", per_channel: bool = True, op_types: list[str] | None = None,
    activations: str = "int8", symmetric: bool = False,
) -> onnx.ModelProto:
    """The int8 model onnxruntime's `quantize_static` makes of `model` (BatchNorm folded first):
    `fmt` "qdq" (QuantizeLinear/DequantizeLinear around float ops) or "qoperator" (QLinearConv,
    QLinearMatMul and com.microsoft ops such as QLinearAdd); only `op_types` if given (e.g.
    QOPERATOR_STANDARD_OPS); `activations` "int8", "uint8" or "int16" (16x8: int16 activations
    with int8 weights; onnxruntime raises the opset to 21 for them); `symmetric` activations
    have zero point 0 (its ActivationSymmetric: TFLite's 16x8 form); calibrated on
    `calibration_inputs`."""
    import logging
    import tempfile

    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self, feeds):
            self.feeds = iter(feeds)

        def get_next(self):
            return next(self.feeds, None)

    formats = {"qdq": QuantFormat.QDQ, "qoperator": QuantFormat.QOperator}
    folded = fold_batchnorm(model)
    logging.getLogger().setLevel(logging.ERROR)  # quantize_static's advice to pre-process
    with tempfile.TemporaryDirectory(prefix="zant-quantize-") as folder:
        path = Path(folder) / "model_int8.onnx"
        quantize_static(
            folded, path, Reader(calibration_inputs(folded, seed=1)), quant_format=formats[fmt],
            per_channel=per_channel, activation_type={"int8": QuantType.QInt8, "uint8": QuantType.QUInt8, "int16": QuantType.QInt16}[activations], weight_type=QuantType.QInt8,
            op_types_to_quantize=op_types, extra_options={"ActivationSymmetric": True} if symmetric else None,
        )
        return onnx.load(path)


INT8_PIPELINE = MCU_PIPELINE
"""The pipeline the int8 tests compile with: the microcontrollers' own, which users get (its
`fold-qdq` runs first, so fold-constants does not turn the int8 weights' DequantizeLinear into
float constants). It was a narrower one (no fold-batchnorm, dce, fuse-loops) before the default
pipelines began with `fold-qdq`."""

QUANTIZED: dict[str, Callable[[], onnx.ModelProto]] = {
    f"{name}_int8": (lambda build=build: quantize(build()))
    for name, build in {"digits": digits, "kws": kws_dscnn, "resnet8": resnet8,
                        "autoencoder": fc_autoencoder, "mobilenet": mobilenet_v1_025}.items()
}
"""The QDQ int8 models by name (per-channel weights, int8 activations)."""
QUANTIZED["kws_16x8"] = lambda: quantize(kws_dscnn(), activations="int16")
"""KWS with 16x8 quantization: int16 activations (onnxruntime's QInt16, zero points as its
calibration puts them), int8 per-channel weights; the int8 twin is kws_int8."""


def int4_weights(model: onnx.ModelProto) -> onnx.ModelProto:
    """The QDQ `model` (int8 weights, per channel or per tensor) with every constant int8
    weight that a DequantizeLinear feeds to a Conv or Gemm quantized again to int4 per output
    channel, symmetric: scale max|w| / 7 of the dequantized weights along the DQ's axis, codes
    round-half-even(w / scale) in [-8, 7], zero point 0; each layer's int32 bias requantized
    to its new scale x_scale · w_scale. Activations keep their calibration. Opset 21 and IR 10
    (int4 tensors, DequantizeLinear of int4). numpy and onnx.helper only."""
    graph = model.graph
    values = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    replaced: dict[str, onnx.TensorProto] = {}

    def axis_of(node: onnx.NodeProto) -> int:
        return next((a.i for a in node.attribute if a.name == "axis"), 1)

    for layer in (n for n in graph.node if n.op_type in ("Conv", "Gemm")):
        weight_dq = producer.get(layer.input[1])
        bias_dq = producer.get(layer.input[2]) if len(layer.input) > 2 else None
        x_dq = producer.get(layer.input[0])
        if weight_dq is None or weight_dq.op_type != "DequantizeLinear" or weight_dq.input[0] not in values:
            continue
        codes = values[weight_dq.input[0]]
        if codes.dtype != np.int8:
            continue
        rank, axis = codes.ndim, axis_of(weight_dq) % codes.ndim
        shape = [-1 if a == axis else 1 for a in range(rank)]
        scale, zero = (values[weight_dq.input[i]].astype(np.float64).reshape(shape if values[weight_dq.input[i]].size > 1 else [1] * rank) for i in (1, 2))
        weights = (codes - zero) * scale
        others = tuple(a for a in range(rank) if a != axis)
        new_scale = (np.max(np.abs(weights), axis=others, keepdims=True) / 7).astype(np.float32)
        new_scale[new_scale == 0] = 1
        new_codes = np.clip(np.rint(weights / new_scale), -8, 7).astype(np.int64)
        channels = new_scale.size
        w_name, s_name, z_name = (f"{weight_dq.input[0]}_int4", f"{weight_dq.input[1]}_int4", f"{weight_dq.input[2]}_int4")
        replaced[w_name] = helper.make_tensor(w_name, TensorProto.INT4, codes.shape, new_codes.reshape(-1).tolist())
        replaced[s_name] = numpy_helper.from_array(new_scale.reshape(channels), s_name)
        replaced[z_name] = helper.make_tensor(z_name, TensorProto.INT4, [channels], [0] * channels)
        weight_dq.input[:] = [w_name, s_name, z_name]
        del weight_dq.attribute[:]
        weight_dq.attribute.append(helper.make_attribute("axis", axis))
        # The bias: int32 codes in x_scale · w_scale, requantized to the new weight scales.
        if bias_dq is None or bias_dq.op_type != "DequantizeLinear" or x_dq is None or x_dq.op_type != "DequantizeLinear":
            continue
        bias = values[bias_dq.input[0]].astype(np.float64) * values[bias_dq.input[1]].astype(np.float64)
        bias_scale = (np.float32(values[x_dq.input[1]]) * new_scale.reshape(channels)).astype(np.float32)
        b_name, bs_name = f"{bias_dq.input[0]}_int4", f"{bias_dq.input[1]}_int4"
        replaced[b_name] = numpy_helper.from_array(np.rint(bias / bias_scale).astype(np.int32), b_name)
        replaced[bs_name] = numpy_helper.from_array(bias_scale, bs_name)
        bias_dq.input[0], bias_dq.input[1] = b_name, bs_name
    used = {i for n in graph.node for i in n.input}
    initializers = [t for t in graph.initializer if t.name in used] + [t for name, t in replaced.items() if name in used]
    result = helper.make_model(
        helper.make_graph(list(graph.node), graph.name, graph.input, graph.output, initializers),
        opset_imports=[helper.make_opsetid("", 21)], producer_name=model.producer_name,
    )
    result.ir_version = 10
    onnx.checker.check_model(result)
    return result


QUANTIZED["kws_int4"] = lambda: int4_weights(QUANTIZED["kws_int8"]())
"""KWS with int4 weights per output channel (`int4_weights` of kws_int8: the same int8
activations), packed two to a byte: half the int8 model's weight bytes."""


def count_macs(model: onnx.ModelProto) -> int:
    """Multiply-accumulates of one inference: every Conv and MatMul-like node's outputs times
    the length of its reduction (QDQ, QOperator and integer forms alike), from inferred shapes."""
    model = onnx.shape_inference.infer_shapes(model)
    graph = model.graph
    shapes = {
        v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
        for v in [*graph.input, *graph.value_info, *graph.output]
    }
    shapes |= {t.name: list(t.dims) for t in graph.initializer}
    weight_input = {"Conv": 1, "ConvInteger": 1, "QLinearConv": 3}
    matmul_input = {"MatMul": 0, "MatMulInteger": 0, "QLinearMatMul": 0, "Gemm": 0}
    total = 0
    for node in graph.node:
        out = shapes.get(node.output[0])
        if not out:
            continue
        if node.op_type in weight_input:
            w = shapes[node.input[weight_input[node.op_type]]]
            total += int(np.prod(out)) * int(np.prod(w[1:]))
        elif node.op_type in matmul_input:
            a = shapes[node.input[0]]
            trans_a = next((attr.i for attr in node.attribute if attr.name == "transA"), 0)
            total += int(np.prod(out)) * (a[-2] if trans_a else a[-1])
    return total


def model_file(name: str, folder: Path) -> Path:
    """The .onnx file of a bench model by name: the bundled digits model, or FOLDER/NAME.onnx
    written from `MODELS`, `QUANTIZED`, `LARGE` or `ARCHITECTURES`."""
    if name == "digits":
        return DIGITS
    path = Path(folder) / f"{name}.onnx"
    onnx.save((MODELS | QUANTIZED | LARGE | ARCHITECTURES | HELD_APART)[name](), path)
    return path


def resolve_model(spec: str, folder: Path) -> tuple[str, Path]:
    """A bench model's name, or an .onnx path: (a C identifier for it, its .onnx file; a named
    model is written into `folder`)."""
    if spec.endswith(".onnx") or "/" in spec:
        path = Path(spec)
        if not path.is_file():
            raise ZantError(f"no model file '{spec}'")
        name = re.sub(r"\W", "_", path.stem)
        return (name if name[:1].isalpha() else f"m_{name}"), path
    known = MODELS | QUANTIZED | LARGE | ARCHITECTURES | HELD_APART
    if spec != "digits" and spec not in known:
        raise ZantError(f"unknown model '{spec}' (choose from digits, {', '.join(known)}, or give an .onnx path)")
    return spec, model_file(spec, folder)


def save_all(folder: str | Path) -> dict[str, Path]:
    """Write every model as FOLDER/<name>.onnx; return the paths by name."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, build in MODELS.items():
        paths[name] = out / f"{name}.onnx"
        onnx.save(build(), paths[name])
    return paths


def mobilenet_v2_int8(size: int = 224) -> onnx.ModelProto:
    """MobileNetV2-1.0 int8 at size x size (issue 28's patch-based target), QDQ as a PyTorch ->
    TFLite -> tf2onnx export writes it: an int8 NCHW input; every 3x3 convolution's padding an
    explicit `DQ -> Pad -> Q -> DQ -> Conv` chain (TF's padding: 1 on each side at stride 1, the
    ends only at stride 2); per-channel int8 weights (DQ along axis 0), int32 biases at
    x_scale * w_scale; ReLU6 as the range of the Q after each expansion and depthwise
    convolution (scale 6/255, zero point -128), the projections linear (scale 0.1, zero point
    0), the residual Adds requantized; GlobalAveragePool, Gemm to 1,000 int8 logits. Weights
    are seeded random codes (numpy and onnx.helper only): a shape and a schedule to measure,
    not a classifier."""
    rng = np.random.default_rng(28)
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []
    count = [0]

    def fresh(prefix: str) -> str:
        count[0] += 1
        return f"{prefix}_{count[0]}"

    def const(prefix: str, array: np.ndarray) -> str:
        name = fresh(prefix)
        inits.append(numpy_helper.from_array(array, name))
        return name

    def node(op: str, inputs: list[str], prefix: str, **attrs) -> str:
        out = fresh(prefix)
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    relu6 = (const("relu6_scale", np.array(6 / 255, np.float32)), const("relu6_zp", np.array(-128, np.int8)))
    linear = (const("linear_scale", np.array(0.1, np.float32)), const("linear_zp", np.array(0, np.int8)))

    def dq(x: str, q: tuple[str, str]) -> str:
        return node("DequantizeLinear", [x, *q], "dq")

    def conv(x: str, q: tuple[str, str], cin: int, cout: int, kernel: int, stride: int, group: int,
             out: tuple[str, str]) -> str:
        """int8 x (quantized by q) -> int8 output (quantized by out)."""
        fan_in = cin // group * kernel * kernel
        w_scale = (np.sqrt(2.0 / fan_in) / 40 * rng.uniform(0.8, 1.2, cout)).astype(np.float32)
        w = np.clip(np.round(rng.standard_normal((cout, cin // group, kernel, kernel)) * 40), -127, 127)
        x_scale = float(numpy_helper.to_array(next(i for i in inits if i.name == q[0])))
        bias = np.round(rng.standard_normal(cout) * 0.05 / (x_scale * w_scale)).astype(np.int32)
        weight = node("DequantizeLinear", [const("w", w.astype(np.int8)), const("w_scale", w_scale),
                                           const("w_zp", np.zeros(cout, np.int8))], "w_dq", axis=0)
        b = node("DequantizeLinear", [const("b", bias), const("b_scale", (x_scale * w_scale).astype(np.float32)),
                                      const("b_zp", np.zeros(cout, np.int32))], "b_dq", axis=0)
        xf = dq(x, q)
        if kernel > 1:  # the explicit padding, requantized on its own
            pads = [0, 0, 1, 1, 0, 0, 1, 1] if stride == 1 else [0, 0, 0, 0, 0, 0, 1, 1]
            padded = node("Pad", [xf, const("pads", np.array(pads, np.int64)), const("pad_value", np.array(0.0, np.float32))],
                          "pad", mode="constant")
            xf = dq(node("QuantizeLinear", [padded, *q], "q"), q)
        y = node("Conv", [xf, weight, b], "conv", kernel_shape=[kernel, kernel], strides=[stride, stride], group=group)
        if out is relu6:
            y = node("Clip", [y, const("zero", np.array(0.0, np.float32)), const("six", np.array(6.0, np.float32))], "relu6")
        return node("QuantizeLinear", [y, *out], "q")

    x, q, cin = conv("input", relu6, 3, 32, 3, 2, 1, relu6), relu6, 32
    for t, c, n, s in _MOBILENET_V2_STAGES:
        for i in range(n):
            stride, hidden = (s if i == 0 else 1), cin * t
            y = x if t == 1 else conv(x, q, cin, hidden, 1, 1, 1, relu6)
            y = conv(y, relu6, hidden, hidden, 3, stride, hidden, relu6)
            y = conv(y, relu6, hidden, c, 1, 1, 1, linear)
            if stride == 1 and cin == c:
                y = node("QuantizeLinear", [node("Add", [dq(x, q), dq(y, linear)], "add"), *linear], "q")
            x, q, cin = y, linear, c
    x = conv(x, q, cin, 1280, 1, 1, 1, relu6)
    pooled = node("QuantizeLinear", [node("GlobalAveragePool", [dq(x, relu6)], "gap"), *relu6], "q")
    flat = node("Flatten", [dq(pooled, relu6)], "flatten", axis=1)
    w = np.clip(np.round(rng.standard_normal((1280, 1000)) * 40), -127, 127).astype(np.int8)
    weight = node("DequantizeLinear", [const("fc_w", w), const("fc_scale", np.array(1 / 1600, np.float32))], "w_dq")
    node("QuantizeLinear", [node("MatMul", [flat, weight], "fc"), *linear], "q")
    nodes[-1].output[0] = "logits"
    graph = helper.make_graph(
        nodes, "mobilenet_v2_int8", [helper.make_tensor_value_info("input", TensorProto.INT8, [1, 3, size, size])],
        [helper.make_tensor_value_info("logits", TensorProto.INT8, [1, 1000])], inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="zant-bench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


BELOW_THE_LAYER_BOUND: dict[str, Callable[[], onnx.ModelProto]] = {"mobilenet_v2_int8": mobilenet_v2_int8}
"""Models for `bench/memory.py --budgets` only (too large for the tests and the other benches)."""


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python bench/models.py OUTDIR")
    for name, path in save_all(sys.argv[1]).items():
        print(f"{name:12s} {path}")

