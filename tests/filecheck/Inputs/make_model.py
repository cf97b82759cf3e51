"""Write small ONNX models for the frontend tests: `make_model.py KIND OUT.onnx`.

Each kind is a function below returning a `ModelProto`; the lit tests and pytest share them.
Models are deterministic (fixed seeds) so CHECK lines can name their constants.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = onnx.defs.onnx_opset_version()


def _model(nodes, inputs, outputs, initializers=(), opset=OPSET, name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def mlp():
    """Gemm → Relu → Gemm with weight initializers."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(np.arange(4, dtype=np.float32), "b1")
    w2 = numpy_helper.from_array(rng.standard_normal((2, 4)).astype(np.float32), "w2")
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="gemm0", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu0"),
        helper.make_node("Gemm", ["r", "w2"], ["y"], name="gemm1", transB=1),
    ]
    return _model(nodes, [_f32("x", [1, 3])], [_f32("y", [1, 2])], [w1, b1, w2], name="mlp")


def conv():
    """Conv without bias, a Constant node, Clip with an absent `min`, Concat, Split."""
    w = numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "conv.weight")
    nodes = [
        helper.make_node("Conv", ["x", "conv.weight"], ["c"], name="conv0", pads=[1, 1, 1, 1]),
        helper.make_node(
            "Constant", [], ["hi"], name="k", value=numpy_helper.from_array(np.float32(6.0))
        ),
        helper.make_node("Clip", ["c", "", "hi"], ["clipped"], name="clip0"),
        helper.make_node("Concat", ["clipped", "c"], ["cat"], name="cat0", axis=1),
        helper.make_node("Split", ["cat"], ["s0", "s1"], name="split0", axis=1, num_outputs=2),
    ]
    outputs = [_f32("s0", ["a", "b", "c", "d"]), _f32("s1", ["a", "b", "c", "d"])]
    return _model(nodes, [_f32("x", [1, 1, 4, 4])], outputs, [w], name="conv")


def old_opset():
    """An opset-7 model (Softmax semantics and Clip attributes changed since)."""
    nodes = [
        helper.make_node("Clip", ["x"], ["c"], name="clip", min=0.0, max=6.0),
        helper.make_node("Softmax", ["c"], ["y"], name="softmax", axis=1),
    ]
    return _model(nodes, [_f32("x", [2, 5])], [_f32("y", [2, 5])], opset=7, name="old")


def passthrough():
    """Graph outputs that are directly an input and an initializer."""
    k = numpy_helper.from_array(np.array([1, 2, 3], np.int64), "k")
    return _model([], [_f32("x", [2])], [_f32("x", [2]), helper.make_tensor_value_info(
        "k", TensorProto.INT64, [3])], [k], name="pass")


def hostile():
    """Names with quotes, newlines, backslashes and non-ASCII characters."""
    x, y = 'in "x"\n\\', "out ü €"
    nodes = [helper.make_node("Relu", [x], [y], name='node "0"\n\\é')]
    return _model(nodes, [_f32(x, [2])], [_f32(y, [2])], name='graph "g"\n')


def symbolic():
    """An input with a symbolic batch dimension."""
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    return _model(nodes, [_f32("x", ["N", 3])], [_f32("y", ["N", 3])])


def big():
    """About 1 MB of weights (a 512x512 float32 MatMul)."""
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((512, 512)).astype(np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    return _model(nodes, [_f32("x", [1, 512])], [_f32("y", [1, 512])], [w])


def custom_domain():
    nodes = [helper.make_node("FusedThing", ["x"], ["y"], name="fused", domain="com.example")]
    model = _model(nodes, [_f32("x", [2])], [_f32("y", [2])])
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    return model


def unknown_op():
    nodes = [helper.make_node("NoSuchOp", ["x"], ["y"], name="n0")]
    return _model(nodes, [_f32("x", [2])], [_f32("y", [2])])


def subgraph():
    """A Loop whose trip count is a graph input: it cannot be unrolled at compile time."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Add", ["v_in", "v_in"], ["v_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            _f32("v_in", [2]),
        ],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), _f32("v_out", [2])],
    )
    nodes = [helper.make_node("Loop", ["m", "", "x"], ["y"], name="n", body=body)]
    m = helper.make_tensor_value_info("m", TensorProto.INT64, [])
    return _model(nodes, [m, _f32("x", [2])], [_f32("y", [2])])


def loop_declared_extent():
    """A Loop whose trip count and condition are graph inputs and whose scan output declares 3
    iterations: unrolled 3 times behind Guards."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Add", ["v_in", "v_in"], ["v_out"]),
            helper.make_node("Identity", ["v_out"], ["scan"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            _f32("v_in", [2]),
        ],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), _f32("v_out", [2]), _f32("scan", [2])],
    )
    nodes = [helper.make_node("Loop", ["m", "go", "x"], ["y", "ys"], name="n", body=body)]
    m = helper.make_tensor_value_info("m", TensorProto.INT64, [])
    go = helper.make_tensor_value_info("go", TensorProto.BOOL, [])
    return _model(nodes, [m, go, _f32("x", [2])], [_f32("y", [2]), _f32("ys", [3, 2])])


def complex_input():
    """A complex64 input: strings compile (docs/strings.md), complex numbers do not."""
    nodes = [helper.make_node("Identity", ["s"], ["y"])]
    s = helper.make_tensor_value_info("s", TensorProto.COMPLEX64, [2])
    return _model(nodes, [s], [helper.make_tensor_value_info("y", TensorProto.COMPLEX64, [2])])


def bad_checker():
    """Gemm with one input: the checker rejects it."""
    nodes = [helper.make_node("Gemm", ["x"], ["y"], name="g0")]
    return _model(nodes, [_f32("x", [2, 2])], [_f32("y", [2, 2])])


def dynamic_shape():
    """Reshape to a shape computed from a graph input: no static output shape."""
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape0")]
    shape = helper.make_tensor_value_info("shape", TensorProto.INT64, [2])
    return _model(nodes, [_f32("x", [6]), shape], [_f32("y", ["a", "b"])])


def external(escape: str):
    """A weight stored as external data at location `escape` (relative to the model)."""
    w = numpy_helper.from_array(np.ones((4,), np.float32), "w")
    w.data_location = TensorProto.EXTERNAL
    entry = w.external_data.add()
    entry.key, entry.value = "location", escape
    w.ClearField("raw_data")
    nodes = [helper.make_node("Add", ["x", "w"], ["y"])]
    return _model(nodes, [_f32("x", [4])], [_f32("y", [4])], [w])


def misinferred_extents():
    """Issue 32: a MaxPool whose ceil mode adds only a window that is dropped, and a SAME_UPPER
    ConvTranspose with output_padding, each followed by a Relu; onnx's inference gets both
    extents wrong until the frontend rewrites them."""
    w = numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "w")
    nodes = [
        helper.make_node("MaxPool", ["x"], ["p"], name="pool", kernel_shape=[1, 1], strides=[2, 2], ceil_mode=1),
        helper.make_node("Relu", ["p"], ["y"], name="relu_pool"),
        helper.make_node("ConvTranspose", ["t", "w"], ["c"], name="transpose", auto_pad="SAME_UPPER", strides=[1, 3], output_padding=[0, 1]),
        helper.make_node("Relu", ["c"], ["z"], name="relu_transpose"),
    ]
    return _model(nodes, [_f32("x", [1, 1, 4, 4]), _f32("t", [1, 1, 4, 3])], [_f32("y", [1, 1, 2, 2]), _f32("z", [1, 1, 4, 9])], [w])


def qoperator():
    """onnxruntime's QOperator form with every com.microsoft op `fold-qoperator` lowers:
    QLinearSigmoid, QLinearLeakyRelu, QLinearAdd (its output zero point left out), QLinearConcat,
    QLinearAveragePool, QLinearGlobalAveragePool, QGemm (int8 and float outputs) and
    QLinearSoftmax (opset 12 semantics along the last axis); pools in power-of-two scales, so
    their float definition is exact."""
    rng = np.random.default_rng(7)

    def scale(name, value):
        return numpy_helper.from_array(np.array(value, np.float32), name)

    def zero(name, value):
        return numpy_helper.from_array(np.array(value, np.int8), name)

    params = [
        (0.05, 3), (1 / 256, -128), (0.04, -10), (0.0625, None), (0.0625, 1), (0.0625, 1), (0.0625, 2), (0.1, 0), (1 / 256, -128)
    ]
    initializers = []
    for k, (s, z) in enumerate(params):
        initializers.append(scale(f"s{k}", s))
        if z is not None:
            initializers.append(zero(f"z{k}", z))
    initializers += [
        numpy_helper.from_array(rng.integers(-127, 128, (3, 8)).astype(np.int8), "w"),
        numpy_helper.from_array(np.array([0.01, 0.02, 0.015], np.float32), "ws"),
        numpy_helper.from_array(np.zeros(3, np.int8), "wz"),
        numpy_helper.from_array(rng.integers(-300, 300, 3).astype(np.int32), "c"),
    ]

    def contrib(op_type, inputs, output, **attributes):
        return helper.make_node(op_type, inputs, [output], name=output, domain="com.microsoft", **attributes)

    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s0", "z0"], ["xq"], name="quantize"),
        contrib("QLinearSigmoid", ["xq", "s0", "z0", "s1", "z1"], "sig"),
        contrib("QLinearLeakyRelu", ["xq", "s0", "z0", "s2", "z2"], "leaky", alpha=0.1),
        contrib("QLinearAdd", ["sig", "s1", "z1", "leaky", "s2", "z2", "s3"], "add"),
        contrib("QLinearConcat", ["s4", "z4", "add", "s3", "", "leaky", "s2", "z2"], "cat", axis=1),
        contrib("QLinearAveragePool", ["cat", "s4", "z4", "s5", "z5"], "pool", kernel_shape=[2, 2], strides=[2, 2]),
        contrib("QLinearGlobalAveragePool", ["pool", "s5", "z5", "s6", "z6"], "gap", channels_last=0),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flat"),
        contrib("QGemm", ["flat", "s6", "z6", "w", "ws", "wz", "c", "s7", "z7"], "gemm", transB=1),
        contrib("QGemm", ["flat", "s6", "z6", "w", "ws", "wz", "c"], "logits", transB=1),
        contrib("QLinearSoftmax", ["gemm", "s7", "z7", "s8", "z8"], "softmax", axis=-1, opset=12),
        helper.make_node("DequantizeLinear", ["softmax", "s8", "z8"], ["y"], name="dequantize"),
    ]
    graph = helper.make_graph(
        nodes, "qoperator", [_f32("x", [1, 4, 4, 4])], [_f32("y", [1, 3]), _f32("logits", [1, 3])], initializers
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)])


def sequences():
    """A sequence made and taken apart inside the graph: SplitToSequence (constant sizes and
    keepdims=0), SequenceAt, SequenceErase, SequenceLength, SequenceMap (Relu), ConcatFromSequence
    (and with new_axis), Optional / OptionalHasElement / OptionalGetElement."""
    body = helper.make_graph(
        [helper.make_node("Relu", ["e"], ["r"])], "body",
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("r", TensorProto.FLOAT, None)],
    )
    nodes = [
        helper.make_node("SplitToSequence", ["x", "sizes"], ["s"], axis=1, name="split"),
        helper.make_node("SequenceAt", ["s", "last"], ["a"], name="at"),
        helper.make_node("SequenceMap", ["s"], ["m"], body=body, name="map"),
        helper.make_node("ConcatFromSequence", ["m"], ["c"], axis=1, name="concat"),
        helper.make_node("SequenceErase", ["s", "first"], ["t"], name="erase"),
        helper.make_node("SequenceLength", ["t"], ["n"], name="length"),
        helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0, name="rows"),
        helper.make_node("ConcatFromSequence", ["rows"], ["u"], axis=0, new_axis=1, name="stack"),
        helper.make_node("Optional", ["a"], ["o"], name="optional"),
        helper.make_node("OptionalHasElement", ["o"], ["h"], name="has"),
        helper.make_node("OptionalGetElement", ["o"], ["g"], name="get"),
    ]
    initializers = [
        numpy_helper.from_array(np.array([2, 4], np.int64), "sizes"),
        numpy_helper.from_array(np.array(-1, np.int64), "last"),
        numpy_helper.from_array(np.array(0, np.int64), "first"),
    ]
    outputs = [_f32("c", [2, 6]), _f32("g", [2, 4]), helper.make_tensor_value_info("n", TensorProto.INT64, []),
               _f32("u", [2, 6]), helper.make_tensor_value_info("h", TensorProto.BOOL, [])]
    return _model(nodes, [_f32("x", [2, 6])], outputs, initializers)


def main() -> None:
    kind, out = sys.argv[1], sys.argv[2]
    if kind.startswith("external="):
        model = external(kind.split("=", 1)[1])
        with open(out, "wb") as f:
            f.write(model.SerializeToString())
        return
    model = globals()[kind]()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "wb") as f:
        f.write(model.SerializeToString())


if __name__ == "__main__":
    main()
