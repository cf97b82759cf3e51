"""Ops whose output size depends on the data (NonZero, Compress, NonMaxSuppression), compiled for
the output shape the model declares.

Each model is compiled once (host, ReleaseSafe: an out-of-bounds access traps and kills the
process) and called through ctypes with several inputs. Data that select as many elements as the
declared shape holds give the ONNX reference's result; data that select another number make
`m_predict` return Status.OUTPUT_SIZE (5) and leave the output as it was. Which case a draw is
comes from the reference evaluator, not from the test.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from tests.test_runtime_parameters import SENTINEL, Compiled
from zant.dialects.abi import Status
from zant.driver import CompileOptions, compile_model
from zant.errors import ZantError


def _model(nodes, inputs, outputs, initializers=()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def _tensor(name: str, elem: int, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _run_draws(compiled: Compiled, draws) -> tuple[int, int]:
    """Each draw (a tuple of input arrays) checked against the reference when it selects the
    compiled number of elements, else refused; (checked, refused) counts."""
    model = compiled.model
    names = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    extent = tuple(compiled.outputs[0].shape)
    checked = refused = 0
    for arrays in draws:
        (want,) = ReferenceEvaluator(model).run(None, dict(zip(names, arrays)))
        if want.shape == extent:
            compiled.check(*arrays)
            checked += 1
        else:
            status, outputs = compiled(*arrays)
            assert status == Status.OUTPUT_SIZE, (want.shape, extent)
            assert all(np.all(o == SENTINEL) for o in outputs)
            refused += 1
    return checked, refused


def _declare_most_common(model: onnx.ModelProto, draws) -> onnx.ModelProto:
    """`model` with its output's first dimension declared as the size the reference gives most
    often over `draws` (so that some draws fit it and others do not)."""
    names = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    sizes = [ReferenceEvaluator(model).run(None, dict(zip(names, arrays)))[0].shape[0] for arrays in draws]
    model.graph.output[0].type.tensor_type.shape.dim[0].dim_value = max(set(sizes), key=sizes.count)
    return model


rng = np.random.default_rng(0)


def test_nonzero(tmp_path):
    node = helper.make_node("NonZero", ["x"], ["y"], name="nz")
    model = _model([node], [_tensor("x", TensorProto.FLOAT, [3, 4])], [_tensor("y", TensorProto.INT64, [2, 5])])
    compiled = Compiled(model, tmp_path)
    draws = []
    for count in (5, 5, 5, 0, 4, 6, 12):
        x = np.zeros(12, dtype=np.float32)
        x[rng.permutation(12)[:count]] = rng.standard_normal(count).astype(np.float32) + 3
        draws.append((x.reshape(3, 4),))
    assert _run_draws(compiled, draws) == (3, 4)


@pytest.mark.parametrize(
    ("axis", "shape", "length", "declared"),
    [(1, [2, 5], 4, [2, 2]), (-2, [2, 4, 3], 3, [2, 2, 3]), (None, [2, 3], 5, [2]), (0, [5, 37], 5, [2, 37])],
)
def test_compress(tmp_path, axis, shape, length, declared):
    # A condition shorter than the axis drops the slices after it; rows of 37 take the host's
    # vector loops and their remainder.
    attributes = {} if axis is None else {"axis": axis}
    node = helper.make_node("Compress", ["x", "c"], ["y"], name="compress", **attributes)
    model = _model(
        [node],
        [_tensor("x", TensorProto.FLOAT, shape), _tensor("c", TensorProto.BOOL, [length])],
        [_tensor("y", TensorProto.FLOAT, declared)],
    )
    compiled = Compiled(model, tmp_path)
    x = rng.standard_normal(shape).astype(np.float32)
    draws = [(x, rng.permutation(length) < count) for count in (2, 2, 1, length, 0)]
    assert _run_draws(compiled, draws) == (2, 3)


def _boxes(batches: int, count: int) -> np.ndarray:
    """Boxes [y1, x1, y2, x2] in a few clusters (so that IoU suppresses), corners in either order."""
    centers = rng.uniform(0, 4, (batches, 3, 2))[:, rng.integers(0, 3, count)]
    sizes = rng.uniform(0.5, 1.5, (batches, count, 2))
    first = centers + rng.normal(0, 0.2, centers.shape) - sizes / 2
    boxes = np.concatenate([first, first + sizes], axis=-1)
    flip = rng.random((batches, count)) < 0.3
    boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    return boxes.astype(np.float32)


def _scores(batches: int, classes: int, count: int) -> np.ndarray:
    """Scores rounded to one decimal: ties, whose order is by box index."""
    return np.round(rng.random((batches, classes, count)), 1).astype(np.float32)


@pytest.mark.parametrize(("batches", "classes", "count"), [(2, 2, 8), (1, 2, 37)])
def test_nonmaxsuppression_with_run_time_parameters(tmp_path, batches, classes, count):
    # 37 boxes: a sorting network over 64 with sentinels, and the host's vector loops
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou", "score"], ["selected"], name="nms")
    model = _model(
        [node],
        [
            _tensor("boxes", TensorProto.FLOAT, [batches, count, 4]),
            _tensor("scores", TensorProto.FLOAT, [batches, classes, count]),
            _tensor("max", TensorProto.INT64, [1]),
            _tensor("iou", TensorProto.FLOAT, [1]),
            _tensor("score", TensorProto.FLOAT, [1]),
        ],
        [_tensor("selected", TensorProto.INT64, [1, 3])],
    )
    draws = []
    for limit in (2, 3, 5, 100, 0):
        for iou in (0.0, 0.2, 0.5):
            for score in (0.0, 0.3):
                draws.append((
                    _boxes(batches, count), _scores(batches, classes, count),
                    np.array([limit], np.int64), np.array([iou], np.float32), np.array([score], np.float32),
                ))
    compiled = Compiled(_declare_most_common(model, draws), tmp_path)
    checked, refused = _run_draws(compiled, draws)
    assert checked >= 3 and refused >= 3, (checked, refused)


def test_nonmaxsuppression_center_point_boxes_and_constant_parameters(tmp_path):
    batches, classes, count = 1, 3, 10
    node = helper.make_node(
        "NonMaxSuppression", ["boxes", "scores", "max", "iou"], ["selected"], name="nms", center_point_box=1
    )
    constants = [
        helper.make_tensor("max", TensorProto.INT64, [1], [3]),
        helper.make_tensor("iou", TensorProto.FLOAT, [1], [0.1]),
    ]
    model = _model(
        [node],
        [_tensor("boxes", TensorProto.FLOAT, [batches, count, 4]), _tensor("scores", TensorProto.FLOAT, [batches, classes, count])],
        [_tensor("selected", TensorProto.INT64, [1, 3])],
        constants,
    )
    draws = []
    for _ in range(24):
        corners = _boxes(batches, count)
        low, high = np.minimum(corners[..., :2], corners[..., 2:]), np.maximum(corners[..., :2], corners[..., 2:])
        boxes = np.concatenate([(low + high)[..., ::-1] / 2, (high - low)[..., ::-1]], axis=-1)  # x, y, w, h
        draws.append((boxes.astype(np.float32), _scores(batches, classes, count)))
    compiled = Compiled(_declare_most_common(model, draws), tmp_path)
    checked, refused = _run_draws(compiled, draws)
    assert checked >= 2 and refused >= 2, (checked, refused)


def _compile_error(tmp_path, model: onnx.ModelProto) -> str:
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    with pytest.raises(ZantError) as error:
        compile_model(path, tmp_path / "out", CompileOptions(name="m", build=False))
    return str(error.value)


def test_an_undeclared_data_dependent_size_names_the_node(tmp_path):
    node = helper.make_node("NonZero", ["x"], ["y"], name="nz")
    model = _model([node], [_tensor("x", TensorProto.FLOAT, [3, 4])], [_tensor("y", TensorProto.INT64, [2, "n"])])
    assert _compile_error(tmp_path, model) == (
        "cannot infer a static shape for 'y' (output of node 'nz' (NonZero)); its size depends on "
        "the data: declare its shape in the model (the code is compiled for it and checks the data against it)"
    )


def test_a_condition_longer_than_the_axis_is_refused(tmp_path):
    node = helper.make_node("Compress", ["x", "c"], ["y"], name="compress", axis=0)
    model = _model(
        [node],
        [_tensor("x", TensorProto.FLOAT, [3, 2]), _tensor("c", TensorProto.BOOL, [4])],
        [_tensor("y", TensorProto.FLOAT, [2, 2])],
    )
    assert _compile_error(tmp_path, model).endswith(
        "node 'compress' (onnx.Compress): condition has 4 entries, the axis only 3"
    )
