"""Zero-size dimensions (issue 29 item 4): a tensor of no elements compiles, reads and writes
nothing, and its pointer may be NULL at the C boundary; `--input-shape` takes a size of 0."""

from __future__ import annotations

import ctypes

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import zant
from zant.errors import ZantError
from zant.tools.zant_opt import parse_input_shapes


def test_input_shape_takes_a_size_of_zero():
    assert parse_input_shapes(["x=0x3", "y="]) == {"x": [0, 3], "y": []}
    with pytest.raises(ZantError, match="sizes of 0 or more"):
        parse_input_shapes(["x=-1x3"])


@pytest.fixture(scope="module")
def empty_model(tmp_path_factory):
    """Empty tensors through ops that reduce, contract and join them: a symbolic batch fixed to 0
    (as --input-shape x=0x4 does), a Concat of an empty and a full tensor, a MatMul over K = 0
    (zeros), a ReduceSum over an empty axis (zeros) and a Conv over a batch of 0."""
    f32 = TensorProto.FLOAT
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Concat", ["e", "f"], ["c"], axis=0),
        helper.make_node("MatMul", ["k0", "k1"], ["m"]),
        helper.make_node("ReduceSum", ["k0", "axis"], ["r"], keepdims=0),
        helper.make_node("Conv", ["n", "w"], ["v"], pads=[1, 1, 1, 1]),
    ]
    graph = helper.make_graph(
        nodes,
        "empty",
        [helper.make_tensor_value_info("x", f32, ["N", 4]), helper.make_tensor_value_info("e", f32, [0, 3]),
         helper.make_tensor_value_info("f", f32, [2, 3]), helper.make_tensor_value_info("k0", f32, [2, 0]),
         helper.make_tensor_value_info("k1", f32, [0, 3]), helper.make_tensor_value_info("n", f32, [0, 2, 4, 4])],
        [helper.make_tensor_value_info("a", f32, ["N", 4]), helper.make_tensor_value_info("c", f32, [2, 3]),
         helper.make_tensor_value_info("m", f32, [2, 3]), helper.make_tensor_value_info("r", f32, [2]),
         helper.make_tensor_value_info("v", f32, [0, 3, 4, 4])],
        [numpy_helper.from_array(np.array([1], np.int64), "axis"),
         numpy_helper.from_array(np.ones((3, 2, 3, 3), np.float32), "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    path = tmp_path_factory.mktemp("empty") / "empty.onnx"
    onnx.save(model, path)
    return model, zant.compile(str(path), input_shapes={"x": [0, 4]})


def _inputs():
    rng = np.random.default_rng(0)
    shapes = {"x": (0, 4), "e": (0, 3), "f": (2, 3), "k0": (2, 0), "k1": (0, 3), "n": (0, 2, 4, 4)}
    return {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}


def test_empty_tensors_equal_the_reference(empty_model):
    model, net = empty_model
    inputs = _inputs()
    got = net.predict(**inputs)
    for value, expected in zip(model.graph.output, ReferenceEvaluator(model).run(None, inputs)):
        assert got[value.name].shape == expected.shape
        np.testing.assert_array_equal(got[value.name], expected, err_msg=value.name)


def test_empty_buffers_may_be_null(empty_model):
    """NAME_predict takes NULL for a tensor of no elements (nothing is read or written there)
    and still refuses NULL for one with elements."""
    model, net = empty_model
    library = ctypes.CDLL(str(net.paths["library"]))
    inputs = _inputs()
    names = ["x", "e", "f", "k0", "k1", "n"]
    outputs = {"a": np.zeros((0, 4), np.float32), "c": np.zeros((2, 3), np.float32), "m": np.full((2, 3), 9, np.float32),
               "r": np.full(2, 9, np.float32), "v": np.zeros((0, 3, 4, 4), np.float32)}

    def pointer(array):
        return None if array.size == 0 else array.ctypes.data_as(ctypes.c_void_p)

    predict = getattr(library, f"{net.name}_predict")
    predict.restype = ctypes.c_int32
    status = predict(*(pointer(inputs[n]) for n in names), *(pointer(a) for a in outputs.values()))
    assert status == 0
    np.testing.assert_array_equal(outputs["c"], inputs["f"])
    np.testing.assert_array_equal(outputs["m"], np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(outputs["r"], np.zeros(2, np.float32))
    status = predict(*(pointer(inputs[n]) for n in names[:2]), None, *(pointer(inputs[n]) for n in names[3:]),
                     *(pointer(a) for a in outputs.values()))
    assert status == 7  # NULL for f, which has elements: BAD_BUFFER


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_quantized_ops_over_a_batch_of_zero(tmp_path, target):
    """A QLinearConv and a QLinearAdd over a batch of 0 (per-tensor scales): no code, empty
    outputs (the lowerings read a scale per data element and failed with an IndexError)."""
    i8, f32 = TensorProto.INT8, TensorProto.FLOAT
    initializers = [numpy_helper.from_array(np.asarray(v), n) for n, v in (
        ("s", np.float32(0.05)), ("z", np.int8(0)), ("w", np.ones((4, 3, 3, 3), np.int8)),
        ("ws", np.float32(0.02)), ("wz", np.int8(0)))]
    nodes = [
        helper.make_node("QLinearConv", ["x", "s", "z", "w", "ws", "wz", "s", "z"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("DequantizeLinear", ["c", "s", "z"], ["f"]),  # with the next two, folded to one QLinearAdd
        helper.make_node("Add", ["f", "f"], ["g"]),
        helper.make_node("QuantizeLinear", ["g", "s", "z"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("x", i8, [0, 3, 6, 6])],
                              [helper.make_tensor_value_info("y", i8, [0, 4, 6, 6])], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    onnx.save(model, tmp_path / "q.onnx")
    net = zant.compile(str(tmp_path / "q.onnx"), target=target, firmware=False)
    assert next(a for a in net.plan["arenas"] if a["role"] == "scratch")["size"] == 0
    y = net.predict(x=np.zeros((0, 3, 6, 6), np.int8))["y"]
    assert y.shape == (0, 4, 6, 6) and y.dtype == np.int8
