"""Parameter inputs that stay run-time values (axes, k, starts/ends/steps, pads).

Each model takes its parameter as a graph input, as the ONNX node tests are written. Compiled
once (host, ReleaseSafe: an out-of-bounds access traps and kills the process), it is called
through ctypes with several values: a value consistent with the compiled shapes gives the ONNX
reference's result; one that contradicts them makes `m_predict` return Status.BAD_PARAMETER (4)
and leaves the output buffer as it was.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from e2e import SENTINEL, StatusModel
from zant.dialects.abi import Status
from zant.driver import CompileOptions, compile_model
from zant.errors import ZantError



def _model(nodes, inputs, outputs, opset: int = 21) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _tensor(name: str, elem: int, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


class Compiled(StatusModel):
    """`m_predict` of a ReleaseSafe host build; returns (status, outputs)."""

    def __init__(self, model: onnx.ModelProto, folder: Path):
        super().__init__(model, folder)

    def check(self, *arrays: np.ndarray, onnxruntime: tuple[np.ndarray, ...] | None = None) -> None:
        """A consistent value: status 0 and the reference's outputs (onnxruntime's on the
        arrays `onnxruntime`, where onnx.reference departs from the definition)."""
        status, outputs = self(*arrays)
        assert status == 0
        names = [i.name for i in self.model.graph.input]
        if onnxruntime is not None:
            ort = pytest.importorskip("onnxruntime")
            session = ort.InferenceSession(self.model.SerializeToString(), providers=["CPUExecutionProvider"])
            reference = session.run(None, dict(zip(names, onnxruntime)))
        else:
            reference = ReferenceEvaluator(self.model).run(None, dict(zip(names, arrays)))
        for got, want in zip(outputs, reference, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

    def refuses(self, *arrays: np.ndarray) -> None:
        """A contradicting value: Status.BAD_PARAMETER, and no output written."""
        status, outputs = self(*arrays)
        assert status == Status.BAD_PARAMETER
        for output in outputs:
            assert np.all(output == SENTINEL)


def _axes(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


rng = np.random.default_rng(0)


def test_reduce_axes_keepdims_0_picked_at_run_time(tmp_path):
    # [3, 2, 2] -> [3, 2] drops axis 1 or axis 2: the shapes cannot tell, the value does.
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)
    model = _model(
        [node],
        [_tensor("x", TensorProto.FLOAT, [3, 2, 2]), _tensor("axes", TensorProto.INT64, [1])],
        [_tensor("y", TensorProto.FLOAT, [3, 2])],
    )
    compiled = Compiled(model, tmp_path)
    x = rng.standard_normal((3, 2, 2)).astype(np.float32)
    for axes in (_axes(1), _axes(2), _axes(-1), _axes(-2)):
        compiled.check(x, axes)
    for axes in (_axes(0), _axes(3), _axes(-4), _axes(1 << 40)):
        compiled.refuses(x, axes)


def test_reduce_axes_keepdims_1(tmp_path):
    # [2, 3, 1, 4] -> [2, 1, 1, 4]: axis 1 reduced; axis 2 (size 1) may be named or not.
    node = helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=1)
    model = _model(
        [node],
        [_tensor("x", TensorProto.FLOAT, [2, 3, 1, 4]), _tensor("axes", TensorProto.INT64, [2])],
        [_tensor("y", TensorProto.FLOAT, [2, 1, 1, 4])],
    )
    compiled = Compiled(model, tmp_path)
    x = rng.standard_normal((2, 3, 1, 4)).astype(np.float32)
    for axes in (_axes(1, 2), _axes(2, 1), _axes(-3, -2)):
        compiled.check(x, axes)
    # repeated, another dimension, out of range
    for axes in (_axes(1, 1), _axes(1, -3), _axes(0, 1), _axes(1, 3), _axes(1, 4)):
        compiled.refuses(x, axes)


def test_reduce_axes_that_no_value_can_satisfy_is_a_compile_error(tmp_path):
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)
    model = _model(
        [node],
        [_tensor("x", TensorProto.FLOAT, [3, 2]), _tensor("axes", TensorProto.INT64, [2])],
        [_tensor("y", TensorProto.FLOAT, [3])],
    )
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    with pytest.raises(ZantError, match=r"no 2 axes reduce shape \[3, 2\] to \[3\] with keepdims=0; freeze"):
        compile_model(path, tmp_path / "out", CompileOptions(name="m", build=False))


def test_trilu_k(tmp_path):
    node = helper.make_node("Trilu", ["x", "k"], ["y"], upper=0)
    model = _model(
        [node],
        [_tensor("x", TensorProto.INT32, [3, 4]), _tensor("k", TensorProto.INT64, [])],
        [_tensor("y", TensorProto.INT32, [3, 4])],
    )
    compiled = Compiled(model, tmp_path)
    x = np.arange(12, dtype=np.int32).reshape(3, 4) + 1
    # Every k is valid.
    for k in (0, 1, -1, 3, -5):
        compiled.check(x, np.array(k, dtype=np.int64))
    # The extremes must not overflow i + k (the reference evaluator cannot take them).
    for k, expected in ((np.iinfo(np.int64).max, x), (np.iinfo(np.int64).min, np.zeros_like(x))):
        status, (y,) = compiled(x, np.array(k, dtype=np.int64))
        assert status == 0
        np.testing.assert_array_equal(y, expected)


def test_slice_starts_ends_axes_steps(tmp_path):
    node = helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])
    model = _model(
        [node],
        [
            _tensor("x", TensorProto.FLOAT, [5, 6]),
            *(_tensor(name, TensorProto.INT64, [2]) for name in ("starts", "ends", "axes", "steps")),
        ],
        [_tensor("y", TensorProto.FLOAT, [2, 3])],
    )
    compiled = Compiled(model, tmp_path)
    x = rng.standard_normal((5, 6)).astype(np.float32)
    big = np.iinfo(np.int64).max
    consistent = [
        (_axes(0, 0), _axes(2, 3), _axes(0, 1), _axes(1, 1)),  # rows 0-1, columns 0-2
        (_axes(3, 1), _axes(5, 6), _axes(0, 1), _axes(1, 2)),  # rows 3-4, columns 1, 3, 5
        (_axes(-1, 5), _axes(-3, -big), _axes(-2, -1), _axes(-1, -2)),  # backwards, clamped
        (_axes(0, 1), _axes(big, big), _axes(1, 0), _axes(2, 3)),  # columns 0,2,4 (len 3), rows 1,4
    ]
    for values in consistent:
        compiled.check(x, *values)
    contradicting = [
        (_axes(0, 0), _axes(3, 3), _axes(0, 1), _axes(1, 1)),  # 3 rows
        (_axes(0, 0), _axes(2, 3), _axes(0, 0), _axes(1, 1)),  # an axis twice
        (_axes(0, 0), _axes(2, 3), _axes(0, 2), _axes(1, 1)),  # axis out of range
        (_axes(0, 0), _axes(2, 3), _axes(0, 1), _axes(1, 0)),  # step 0
        (_axes(4, 0), _axes(6, 3), _axes(0, 1), _axes(1, 1)),  # start clamped: 1 row left
    ]
    for values in contradicting:
        compiled.refuses(x, *values)


@pytest.mark.parametrize("mode", ["constant", "reflect"])
def test_pad_pads(tmp_path, mode):
    node = helper.make_node("Pad", ["x", "pads"], ["y"], mode=mode)
    model = _model(
        [node],
        [_tensor("x", TensorProto.FLOAT, [3, 4]), _tensor("pads", TensorProto.INT64, [4])],
        [_tensor("y", TensorProto.FLOAT, [5, 5])],
    )
    compiled = Compiled(model, tmp_path)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    # rows grow by 2, columns by 1, split any way
    for pads in (_axes(1, 0, 1, 1), _axes(2, 1, 0, 0), _axes(0, 0, 2, 1), _axes(1, 1, 1, 0)):
        compiled.check(x, pads)
    for pads in (_axes(1, 1, 1, 1), _axes(0, 0, 0, 0), _axes(1 << 62, 0, -(1 << 62), 1)):
        compiled.refuses(x, pads)


@pytest.mark.parametrize(
    ("mode", "coordinates"), [("nearest", "half_pixel"), ("linear", "align_corners"), ("cubic", "pytorch_half_pixel")]
)
def test_resize_scales(tmp_path, mode, coordinates):
    # The scale moves the source coordinates: the tables are filled at run time.
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode, coordinate_transformation_mode=coordinates)
    model = _model(
        [node],
        [_tensor("x", TensorProto.FLOAT, [1, 1, 3, 4]), _tensor("scales", TensorProto.FLOAT, [4])],
        [_tensor("y", TensorProto.FLOAT, [1, 1, 5, 2])],
    )
    compiled = Compiled(model, tmp_path)
    x = rng.standard_normal((1, 1, 3, 4)).astype(np.float32)
    # ⌊3·s⌋ = 5 and ⌊4·s⌋ = 2: s in [5/3, 2) and [0.5, 0.75)
    for scales in ([1, 1, 1.7, 0.5], [1, 1, 1.9, 0.7], [1.2, 1, 1.8, 0.6]):
        array = np.array(scales, dtype=np.float32)
        # align_corners divides by the output extent - 1 (onnx.reference: by in·scale - 1), as
        # onnxruntime does; it resizes no batch axis, which with an extent of 1 reads position 0
        # whatever its scale
        compiled.check(x, array, onnxruntime=(x, np.array([1, 1, *scales[2:]], np.float32)) if coordinates == "align_corners" else None)
    for scales in ([1, 1, 2, 0.5], [1, 1, 1.8, 0.75], [1, 2, 1.8, 0.6], [1, 1, -1.8, 0.6], [1, 1, np.nan, 0.6]):
        compiled.refuses(x, np.array(scales, dtype=np.float32))


def test_resize_sizes(tmp_path):
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear")
    model = _model(
        [node],
        [_tensor("x", TensorProto.FLOAT, [1, 1, 3, 4]), _tensor("sizes", TensorProto.INT64, [4])],
        [_tensor("y", TensorProto.FLOAT, [1, 1, 5, 2])],
    )
    compiled = Compiled(model, tmp_path)
    x = rng.standard_normal((1, 1, 3, 4)).astype(np.float32)
    compiled.check(x, _axes(1, 1, 5, 2))
    for sizes in (_axes(1, 1, 2, 5), _axes(1, 1, 5, 3), _axes(2, 1, 5, 2)):
        compiled.refuses(x, sizes)


def test_range_length(tmp_path):
    node = helper.make_node("Range", ["start", "limit", "delta"], ["y"])
    model = _model(
        [node],
        [_tensor(name, TensorProto.FLOAT, []) for name in ("start", "limit", "delta")],
        [_tensor("y", TensorProto.FLOAT, [3])],
    )
    compiled = Compiled(model, tmp_path)
    scalars = lambda *v: [np.array(x, dtype=np.float32) for x in v]  # noqa: E731
    for values in ((0, 3, 1), (1, 5.5, 2), (10, 8.5, -0.5)):
        compiled.check(*scalars(*values))
    for values in ((0, 4, 1), (0, 3, 0), (0, -3, 1), (0, np.nan, 1)):
        compiled.refuses(*scalars(*values))


def test_dropout_training_mode(tmp_path):
    node = helper.make_node("Dropout", ["x", "ratio", "training_mode"], ["y"])
    model = _model(
        [node],
        [
            _tensor("x", TensorProto.FLOAT, [2, 3]),
            _tensor("ratio", TensorProto.FLOAT, []),
            _tensor("training_mode", TensorProto.BOOL, []),
        ],
        [_tensor("y", TensorProto.FLOAT, [2, 3])],
    )
    compiled = Compiled(model, tmp_path)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    # Inference, or training without dropping anything: the identity.
    for ratio, training in ((0.5, False), (0.0, True)):
        compiled.check(x, np.array(ratio, dtype=np.float32), np.array(training))
    # Training with a ratio draws random numbers, which generated code does not.
    compiled.refuses(x, np.array(0.5, dtype=np.float32), np.array(True))


@pytest.mark.parametrize("op", ["CumSum", "CumProd"])
def test_cumulative_axis(tmp_path, op):
    node = helper.make_node(op, ["x", "axis"], ["y"], reverse=1)
    model = _model(
        [node],
        [_tensor("x", TensorProto.FLOAT, [2, 3]), _tensor("axis", TensorProto.INT64, [])],
        [_tensor("y", TensorProto.FLOAT, [2, 3])],
        opset=onnx.defs.onnx_opset_version(),  # CumProd is new
    )
    compiled = Compiled(model, tmp_path)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    for axis in (0, 1, -1, -2):
        compiled.check(x, np.array(axis, dtype=np.int64))
    for axis in (2, -3):
        compiled.refuses(x, np.array(axis, dtype=np.int64))


def test_center_crop_pad_shape(tmp_path):
    # rows cropped 5 -> 2 (offset 1), columns padded 4 -> 7 (1 before, 2 after)
    node = helper.make_node("CenterCropPad", ["x", "shape"], ["y"])
    model = _model(
        [node],
        [_tensor("x", TensorProto.FLOAT, [5, 4]), _tensor("shape", TensorProto.INT64, [2])],
        [_tensor("y", TensorProto.FLOAT, [2, 7])],
    )
    compiled = Compiled(model, tmp_path)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    compiled.check(x, _axes(2, 7))
    for shape in (_axes(2, 6), _axes(7, 2), _axes(5, 4)):
        compiled.refuses(x, shape)


def test_shape_that_needs_a_value_names_the_inputs_to_freeze(tmp_path):
    # Nothing declares the Range's length: it depends on the values of its inputs.
    nodes = [helper.make_node("Range", ["start", "limit", "delta"], ["r"], name="range0"), helper.make_node("Add", ["r", "r"], ["y"])]
    model = _model(
        nodes,
        [_tensor(name, TensorProto.FLOAT, []) for name in ("start", "limit", "delta")],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])],
    )
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    message = (
        "cannot infer a static shape for 'r' (output of node 'range0' (Range)): it depends on the value of "
        "'delta', 'limit', 'start'; freeze it (--freeze delta=FILE.npy --freeze limit=FILE.npy "
        "--freeze start=FILE.npy) or declare the shape in the model"
    )
    with pytest.raises(ZantError, match=re.escape(message)):
        compile_model(path, tmp_path / "out", CompileOptions(name="m", build=False))


@pytest.mark.parametrize("op", ["HannWindow", "BlackmanWindow"])
def test_window_size(tmp_path, op):
    node = helper.make_node(op, ["size"], ["y"], periodic=0)
    model = _model([node], [_tensor("size", TensorProto.INT64, [])], [_tensor("y", TensorProto.FLOAT, [6])])
    compiled = Compiled(model, tmp_path)
    compiled.check(np.array(6, dtype=np.int64))
    for size in (5, 7, -6):
        compiled.refuses(np.array(size, dtype=np.int64))


def test_stft_frame_step_and_length(tmp_path):
    node = helper.make_node("STFT", ["signal", "frame_step", "", "frame_length"], ["y"])
    model = _model(
        [node],
        [
            _tensor("signal", TensorProto.FLOAT, [1, 32, 1]),
            _tensor("frame_step", TensorProto.INT64, []),
            _tensor("frame_length", TensorProto.INT64, []),
        ],
        [_tensor("y", TensorProto.FLOAT, [1, 7, 5, 2])],  # (32 - 8) / 4 + 1 frames, 8 / 2 + 1 bins
    )
    compiled = Compiled(model, tmp_path)
    signal = rng.standard_normal((1, 32, 1)).astype(np.float32)
    scalar = lambda v: np.array(v, dtype=np.int64)  # noqa: E731
    compiled.check(signal, scalar(4), scalar(8))
    # another frame count; a zero or negative step; 9 also has 5 one-sided bins, but the
    # compiled transform is 8 long
    for step, length in ((3, 8), (5, 8), (0, 8), (-4, 8), (4, 9)):
        compiled.refuses(signal, scalar(step), scalar(length))


def test_dft_axis(tmp_path):
    node = helper.make_node("DFT", ["x", "", "axis"], ["y"])
    model = _model(
        [node],
        [_tensor("x", TensorProto.FLOAT, [1, 4, 4, 1]), _tensor("axis", TensorProto.INT64, [])],
        [_tensor("y", TensorProto.FLOAT, [1, 4, 4, 2])],
    )
    compiled = Compiled(model, tmp_path)
    x = rng.standard_normal((1, 4, 4, 1)).astype(np.float32)
    # Axes 1 and 2 have one length: the value picks the transform at run time.
    for axis in (0, 1, 2, -3, -2):
        compiled.check(x, np.array(axis, dtype=np.int64))
    # the last dimension holds (real, imaginary); out of range
    for axis in (3, -1, 4, -5):
        compiled.refuses(x, np.array(axis, dtype=np.int64))


def test_col2im_image_and_block_shape(tmp_path):
    # 5 rows of 5 columns into a 5x5 image: blocks 1x5 and 5x1 both fit; the value picks.
    node = helper.make_node("Col2Im", ["x", "image_shape", "block_shape"], ["y"])
    model = _model(
        [node],
        [
            _tensor("x", TensorProto.FLOAT, [1, 5, 5]),
            _tensor("image_shape", TensorProto.INT64, [2]),
            _tensor("block_shape", TensorProto.INT64, [2]),
        ],
        [_tensor("y", TensorProto.FLOAT, [1, 1, 5, 5])],
    )
    compiled = Compiled(model, tmp_path)
    x = rng.standard_normal((1, 5, 5)).astype(np.float32)
    for block in (_axes(1, 5), _axes(5, 1)):
        compiled.check(x, _axes(5, 5), block)
    for image, block in ((_axes(5, 6), _axes(1, 5)), (_axes(5, 5), _axes(5, 5)), (_axes(5, 5), _axes(-1, -5))):
        compiled.refuses(x, image, block)


def test_reshape_shape(tmp_path):
    node = helper.make_node("Reshape", ["x", "shape"], ["y"])
    model = _model(
        [node],
        [_tensor("x", TensorProto.FLOAT, [2, 3, 4]), _tensor("shape", TensorProto.INT64, [2])],
        [_tensor("y", TensorProto.FLOAT, [2, 12])],
    )
    compiled = Compiled(model, tmp_path)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for shape in (_axes(2, 12), _axes(-1, 12), _axes(2, -1), _axes(0, 12), _axes(0, -1)):
        compiled.check(x, shape)
    for shape in (_axes(12, 2), _axes(-1, -1), _axes(4, 6), _axes(2, 0)):
        compiled.refuses(x, shape)


def test_unsqueeze_axes(tmp_path):
    node = helper.make_node("Unsqueeze", ["x", "axes"], ["y"])
    model = _model(
        [node],
        [_tensor("x", TensorProto.FLOAT, [3, 1]), _tensor("axes", TensorProto.INT64, [1])],
        [_tensor("y", TensorProto.FLOAT, [3, 1, 1])],
    )
    compiled = Compiled(model, tmp_path)
    x = rng.standard_normal((3, 1)).astype(np.float32)
    for axes in (_axes(1), _axes(2), _axes(-1)):
        compiled.check(x, axes)
    for axes in (_axes(0), _axes(3), _axes(-4)):
        compiled.refuses(x, axes)


PARAMETER_CASES = {
    # op, its inputs (data first), the result shapes, the parameter's valid and contradicting values
    "expand": (
        helper.make_node("Expand", ["x", "p"], ["y"]),
        [("x", [3, 1]), ("p", [3])],
        [[2, 3, 4]],
        [_axes(2, 3, 4), _axes(2, 1, 4)],
        [_axes(2, 3, 5), _axes(1, 3, 4), _axes(2, 3, 1)],
    ),
    "tile": (
        helper.make_node("Tile", ["x", "p"], ["y"]),
        [("x", [3, 1]), ("p", [2])],
        [[6, 2]],
        [_axes(2, 2)],
        [_axes(2, 1), _axes(1, 2), _axes(-2, 2)],
    ),
    "topk": (
        helper.make_node("TopK", ["x", "p"], ["y", "i"]),
        [("x", [6]), ("p", [1])],
        [[2], [2]],
        [_axes(2)],
        [_axes(3), _axes(1), _axes(-2)],
    ),
    "split": (
        helper.make_node("Split", ["x", "p"], ["y", "z"]),
        [("x", [5]), ("p", [2])],
        [[2], [3]],
        [_axes(2, 3)],
        [_axes(3, 2), _axes(1, 4)],
    ),
}


@pytest.mark.parametrize("case", sorted(PARAMETER_CASES))
def test_parameter_equals_the_compiled_shape(tmp_path, case):
    node, inputs, result_shapes, valid, contradicting = PARAMETER_CASES[case]
    (data, data_shape), (parameter, parameter_shape) = inputs
    index_type = {"i": TensorProto.INT64}
    model = _model(
        [node],
        [_tensor(data, TensorProto.FLOAT, data_shape), _tensor(parameter, TensorProto.INT64, parameter_shape)],
        [
            _tensor(name, index_type.get(name, TensorProto.FLOAT), shape)
            for name, shape in zip(node.output, result_shapes, strict=True)
        ],
    )
    compiled = Compiled(model, tmp_path)
    x = rng.standard_normal(data_shape).astype(np.float32)
    for value in valid:
        compiled.check(x, value)
    for value in contradicting:
        compiled.refuses(x, value)


@pytest.mark.parametrize("align_corners", [0, 1])
def test_affine_grid_size(tmp_path, align_corners):
    node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align_corners)
    model = _model(
        [node],
        [_tensor("theta", TensorProto.FLOAT, [2, 2, 3]), _tensor("size", TensorProto.INT64, [4])],
        [_tensor("grid", TensorProto.FLOAT, [2, 3, 5, 2])],
        opset=onnx.defs.onnx_opset_version(),
    )
    compiled = Compiled(model, tmp_path)
    theta = rng.standard_normal((2, 2, 3)).astype(np.float32)
    for size in (_axes(2, 1, 3, 5), _axes(2, 7, 3, 5)):  # the channel count is free
        compiled.check(theta, size)
    for size in (_axes(2, 1, 5, 3), _axes(1, 1, 3, 5), _axes(2, 1, 3, 4)):
        compiled.refuses(theta, size)


def test_range_length_from_a_broadcasting_consumer(tmp_path):
    # r's length is only declared through y = r * 2: the frontend gives r y's shape, and the
    # Range checks it when the code runs.
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    nodes = [helper.make_node("Range", ["start", "limit", "delta"], ["r"]), helper.make_node("Mul", ["r", "two"], ["y"])]
    graph = helper.make_graph(
        nodes,
        "g",
        [_tensor(name, TensorProto.FLOAT, []) for name in ("start", "limit", "delta")],
        [_tensor("y", TensorProto.FLOAT, [4])],
        [two],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    compiled = Compiled(model, tmp_path)
    scalars = lambda *v: [np.array(x, dtype=np.float32) for x in v]  # noqa: E731
    compiled.check(*scalars(0, 4, 1))
    compiled.check(*scalars(1, 2, 0.25))
    compiled.refuses(*scalars(0, 5, 1))


def test_loop_trip_count_names_the_input_to_freeze(tmp_path):
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Add", ["y_in", "y_in"], ["y_out"])],
        "body",
        [_tensor("i", TensorProto.INT64, []), _tensor("cond_in", TensorProto.BOOL, []), _tensor("y_in", TensorProto.FLOAT, [1])],
        [_tensor("cond_out", TensorProto.BOOL, []), _tensor("y_out", TensorProto.FLOAT, [1])],
    )
    node = helper.make_node("Loop", ["n", "", "y"], ["z"], body=body, name="loop0")
    model = _model(
        [node],
        [_tensor("n", TensorProto.INT64, []), _tensor("y", TensorProto.FLOAT, [1])],
        [_tensor("z", TensorProto.FLOAT, [1])],
    )
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    message = "node 'loop0' (Loop): the trip count is only known at run time; it must be a constant: freeze 'n' (--freeze n=FILE.npy)"
    with pytest.raises(ZantError, match=re.escape(message)):
        compile_model(path, tmp_path / "out", CompileOptions(name="m", build=False))


def test_checks_run_before_every_kernel(tmp_path):
    # The axes are a graph input: their check runs at the entry of m_predict, before the Relu's
    # kernel writes its output, so a contradicting value leaves both outputs untouched.
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=0)]
    model = _model(
        nodes,
        [_tensor("x", TensorProto.FLOAT, [2, 3]), _tensor("axes", TensorProto.INT64, [1])],
        [_tensor("r", TensorProto.FLOAT, [2, 3]), _tensor("s", TensorProto.FLOAT, [2])],
    )
    compiled = Compiled(model, tmp_path)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    compiled.check(x, _axes(1))
    compiled.refuses(x, _axes(0))
