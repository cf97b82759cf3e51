"""onnxruntime's com.microsoft quantized operators → their QDQ definition, before import.

`quantize_static` in QOperator format writes QLinearAdd, QLinearMul, QLinearSigmoid,
QLinearLeakyRelu, QLinearSoftmax, QLinearConcat, QLinearAveragePool, QLinearGlobalAveragePool
and QGemm in the com.microsoft domain. `onnx.defs` has no schemas for them, so shape inference
cannot type their outputs. Each is defined by onnxruntime as "dequantize the inputs, run the
float op, quantize the output"; this module writes exactly that with standard ops
(DequantizeLinear → op → QuantizeLinear), so the graph imports like a QDQ model, and `fold-qdq`
turns each group back into integer ops (a LookupTable, QLinearAdd, a window sum, Concat of
requantized inputs, a QLinearConv …).

Only the zero points are optional in those ops; an absent output zero point is 0 of the input's
8-bit type (as onnxruntime reads it), written as an initializer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import ModelProto, NodeProto, helper, numpy_helper

from zant.errors import ZantError

CONTRIB_DOMAIN = "com.microsoft"


@dataclass(frozen=True)
class Definition:
    """A contrib op as DQ → `op` → Q: the (value, scale, zero point) input positions to
    dequantize, the output's (scale, zero point) input positions (the output stays float when
    that scale is absent: QGemm), and the node's attributes the float op does not take."""

    op: str
    quantized: tuple[tuple[int, int, int], ...]
    output: tuple[int, int]
    dropped: frozenset[str] = frozenset()


_UNARY = ((0, 1, 2),)
DEFINITIONS = {
    "QLinearAdd": Definition("Add", ((0, 1, 2), (3, 4, 5)), (6, 7)),
    "QLinearMul": Definition("Mul", ((0, 1, 2), (3, 4, 5)), (6, 7)),
    "QLinearSigmoid": Definition("Sigmoid", _UNARY, (3, 4)),
    "QLinearLeakyRelu": Definition("LeakyRelu", _UNARY, (3, 4)),
    "QLinearSoftmax": Definition("Softmax", _UNARY, (3, 4), frozenset({"opset"})),
    "QLinearAveragePool": Definition("AveragePool", _UNARY, (3, 4), frozenset({"channels_last"})),
    "QLinearGlobalAveragePool": Definition("GlobalAveragePool", _UNARY, (3, 4), frozenset({"channels_last"})),
    # QLinearConcat(Y_scale, Y_zero_point, X1, X1_scale, X1_zero_point, …): see _Expansion.quantized_inputs.
    "QLinearConcat": Definition("Concat", (), (0, 1)),
    # QGemm(A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp): C is an int32 bias of scale
    # a_scale · b_scale; without y_scale the output is float.
    "QGemm": Definition("Gemm", ((0, 1, 2), (3, 4, 5)), (7, 8)),
}
"""The contrib ops expanded, by op type."""


def expand_contrib_quantized(model: ModelProto) -> ModelProto:
    """`model` with each com.microsoft op of DEFINITIONS replaced by its QDQ definition (the
    model itself when it has none)."""
    if not any(n.domain == CONTRIB_DOMAIN and n.op_type in DEFINITIONS for n in model.graph.node):
        return model
    expanded = ModelProto()
    expanded.CopyFrom(model)
    graph = expanded.graph
    initializers = {t.name: t for t in graph.initializer}
    nodes: list[NodeProto] = []
    for node in graph.node:
        if node.domain == CONTRIB_DOMAIN and node.op_type in DEFINITIONS:
            nodes.extend(_Expansion(node, initializers, graph).nodes())
        else:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    if not any(n.domain == CONTRIB_DOMAIN for n in graph.node):
        kept = [o for o in expanded.opset_import if o.domain != CONTRIB_DOMAIN]
        del expanded.opset_import[:]
        expanded.opset_import.extend(kept)
    return expanded


class _Expansion:
    """The DQ → op → Q nodes of one contrib node."""

    def __init__(self, node: NodeProto, initializers: dict, graph):
        self.node, self.initializers, self.graph = node, initializers, graph
        self.definition = DEFINITIONS[node.op_type]
        self.label = f"node '{node.name}' ({CONTRIB_DOMAIN}.{node.op_type})" if node.name else f"node {node.op_type}"
        self.prefix = node.name or node.output[0]
        self.made: list[NodeProto] = []

    def input(self, index: int) -> str:
        inputs = self.node.input
        return inputs[index] if index < len(inputs) else ""

    def initializer(self, name: str) -> np.ndarray | None:
        tensor = self.initializers.get(name)
        return None if tensor is None else numpy_helper.to_array(tensor)

    def add_initializer(self, array: np.ndarray, suffix: str) -> str:
        name = f"{self.prefix}/{suffix}"
        tensor = numpy_helper.from_array(array, name)
        self.graph.initializer.append(tensor)
        self.initializers[name] = tensor
        return name

    def dequantize(self, value: int, scale: int, zero_point: int, axis: int | None = None) -> str:
        out = f"{self.prefix}/dequantized_{value}"
        inputs = [self.input(value), self.input(scale), self.input(zero_point)]
        attributes = {} if axis is None else {"axis": axis}
        self.made.append(helper.make_node("DequantizeLinear", _trimmed(inputs), [out], name=out, **attributes))
        return out

    def quantized_inputs(self) -> list[tuple[int, int, int]]:
        if self.node.op_type != "QLinearConcat":
            return list(self.definition.quantized)
        count = len(self.node.input) - 2
        if count <= 0 or count % 3:
            raise ZantError(f"{self.label}: expected Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) triples")
        return [(i, i + 1, i + 2) for i in range(2, len(self.node.input), 3)]

    def output_zero_point(self, index: int, like: int) -> str:
        """The output's zero point input, or 0 of the type of input `like`'s zero point."""
        if self.input(index):
            return self.input(index)
        model = self.initializer(self.input(like))
        if model is None:
            raise ZantError(f"{self.label}: an absent output zero point needs an initializer for input {like}'s")
        return self.add_initializer(np.zeros((), model.dtype), "zero_point")

    def gemm_inputs(self, dequantized: list[str]) -> list[str]:
        """QGemm's float A, B and C: C (int32) dequantized with scale a_scale · b_scale."""
        a, b = dequantized
        if not self.input(6):
            return [a, b]
        scales = [self.initializer(self.input(i)) for i in (1, 4)]
        if any(s is None for s in scales):
            raise ZantError(f"{self.label}: the bias needs constant a_scale and b_scale")
        product = (scales[0] * scales[1]).astype(np.float32)  # per channel of N, or one
        scale = self.add_initializer(product, "bias_scale")
        zero_point = self.add_initializer(np.zeros(product.shape, np.int32), "bias_zero_point")
        out = f"{self.prefix}/dequantized_6"
        axis = {"axis": 0} if product.ndim else {}
        self.made.append(helper.make_node("DequantizeLinear", [self.input(6), scale, zero_point], [out], name=out, **axis))
        return [a, b, out]

    def nodes(self) -> list[NodeProto]:
        node, definition = self.node, self.definition
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute if a.name not in definition.dropped}
        if any(a.name == "channels_last" and a.i for a in node.attribute):
            raise ZantError(f"{self.label}: channels_last = 1 is not supported")
        if node.op_type == "QLinearSoftmax":
            opset = next((a.i for a in node.attribute if a.name == "opset"), 13)
            if opset < 13 and attributes.get("axis", -1) != -1:  # along the last axis, they agree
                raise ZantError(f"{self.label}: the opset {opset} Softmax semantics (axis not -1) are not supported")
        dequantized = []
        for value, scale, zero_point in self.quantized_inputs():
            axis = None
            if node.op_type == "QGemm" and value == 3:  # per-channel B varies along N
                axis = 0 if attributes.get("transB", 0) else 1
            dequantized.append(self.dequantize(value, scale, zero_point, axis))
        if node.op_type == "QGemm":
            dequantized = self.gemm_inputs(dequantized)
        output = node.output[0]
        y_scale_index, y_zero_point_index = definition.output
        quantize = bool(self.input(y_scale_index))
        result = f"{self.prefix}/float" if quantize else output
        self.made.append(helper.make_node(definition.op, dequantized, [result], name=node.name, **attributes))
        if quantize:
            like = self.quantized_inputs()[0][2]
            zero_point = self.output_zero_point(y_zero_point_index, like)
            self.made.append(
                helper.make_node("QuantizeLinear", [result, self.input(y_scale_index), zero_point], [output], name=f"{self.prefix}/quantize")
            )
        return self.made


def _trimmed(inputs: list[str]) -> list[str]:
    while inputs and not inputs[-1]:
        inputs.pop()
    return inputs


__all__ = ["DEFINITIONS", "expand_contrib_quantized"]
