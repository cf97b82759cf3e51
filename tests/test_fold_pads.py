"""`fold-pads` end to end: an exporter's explicit Pad before a Conv (float, and the int8 QDQ chain
`DQ → Pad → Q → DQ → Conv → Q`) or a counting AveragePool computes the same bytes without the
padded copy, whose buffer leaves the plan."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from e2e import check_compiled, compile_and_run_result, random_inputs
from onnx import TensorProto, helper, numpy_helper

from zant.pipelines import pipeline_for

RNG = np.random.default_rng(3)


def _float_model(consumer: str) -> onnx.ModelProto:
    value = helper.make_tensor_value_info
    pads = numpy_helper.from_array(np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64), "pads")
    weight = numpy_helper.from_array(RNG.standard_normal((8, 4, 3, 3)).astype(np.float32), "w")
    if consumer == "Conv":
        node = helper.make_node("Conv", ["xp", "w"], ["y"], pads=[1, 0, 0, 1], strides=[2, 1])
    else:
        node = helper.make_node("AveragePool", ["xp"], ["y"], kernel_shape=[3, 3], count_include_pad=1)
    graph = helper.make_graph(
        [helper.make_node("Pad", ["x", "pads"], ["xp"]), helper.make_node("Relu", ["x"], ["r"]), node],
        "pad", [value("x", TensorProto.FLOAT, [1, 4, 12, 10])],
        [value("y", TensorProto.FLOAT, None), value("r", TensorProto.FLOAT, None)], [pads, weight],
    )
    return onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))


def _qdq_model() -> onnx.ModelProto:
    """The chain exporters write for a padded int8 Conv, zero point -5."""
    value = helper.make_tensor_value_info
    const = numpy_helper.from_array
    initializers = [
        const(np.array(0.05, np.float32), "s"), const(np.array(-5, np.int8), "zp"),
        const(np.array(0.02, np.float32), "ws"), const(np.array(0, np.int8), "wzp"),
        const(RNG.integers(-60, 60, (8, 4, 3, 3)).astype(np.int8), "wq"),
        const(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads"), const(np.array(0.0, np.float32), "zero"),
    ]
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "s", "zp"], ["xf"]),
        helper.make_node("Pad", ["xf", "pads", "zero"], ["xpf"]),
        helper.make_node("QuantizeLinear", ["xpf", "s", "zp"], ["xp"]),
        helper.make_node("DequantizeLinear", ["xp", "s", "zp"], ["xpd"]),
        helper.make_node("DequantizeLinear", ["wq", "ws", "wzp"], ["w"]),
        helper.make_node("Conv", ["xpd", "w"], ["yf"]),
        helper.make_node("QuantizeLinear", ["yf", "s", "zp"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "qdq", [value("x", TensorProto.INT8, [1, 4, 10, 10])],
                              [value("y", TensorProto.INT8, [1, 8, 10, 10])], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def _without_fold_pads(pipeline: str) -> str:
    return ",".join(stage for stage in pipeline.split(",") if stage != "fold-pads")


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
@pytest.mark.parametrize("consumer", ["Conv", "AveragePool"])
def test_float_pad_folds_and_the_copy_leaves_the_plan(consumer, target):
    model = _float_model(consumer)
    pipeline = pipeline_for(target)
    folded, ours = check_compiled(model, pipeline=pipeline)
    unfolded, theirs = compile_and_run_result(model, random_inputs(model), pipeline=_without_fold_pads(pipeline))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    assert "xp" not in [t["name"] for t in folded.plan["tensors"]]
    # The host's vector Conv copies its input channels-last with its padding whatever it is
    # given (the Pad fuses into that copy): there the plan is the same size; everywhere else
    # the padded copy was the only scratch buffer.
    if consumer == "Conv" and target == "host":
        assert _scratch(folded) == _scratch(unfolded)
    else:
        # The padded copy (1 x 4 x 13 x 15 float32), rounded up to the target's alignment
        # (plan-arenas' default: 64 B on the host, 16 on the Cortex-M4).
        align = 64 if target == "host" else 16
        padded = -(-(1 * 4 * 13 * 15 * 4) // align) * align
        assert _scratch(folded) == 0 < _scratch(unfolded) == padded


def _scratch(result) -> int:
    return next(a["size"] for a in result.plan["arenas"] if a["role"] == "scratch")


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_int8_pad_of_the_zero_point_folds_bit_exact(target):
    """The same bytes as without the fold; onnxruntime within 1 LSB (it rounds its float32
    requantization, Zant the exact product: issue 30)."""
    ort = pytest.importorskip("onnxruntime")
    model = _qdq_model()
    x = RNG.integers(-128, 128, (1, 4, 10, 10)).astype(np.int8)
    pipeline = pipeline_for(target)
    result, ours = compile_and_run_result(model, {"x": x}, pipeline=pipeline)
    _, theirs = compile_and_run_result(model, {"x": x}, pipeline=_without_fold_pads(pipeline))
    np.testing.assert_array_equal(ours[0], theirs[0])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert np.abs(ours[0].astype(int) - session.run(None, {"x": x})[0]).max() <= 1
    assert "xp" not in [t["name"] for t in result.plan["tensors"]]
