"""Shapes that the declared outputs pin down through a run-time parameter input
(`zant/frontend/parameter_guesses.py`): CenterCropPad's function body, written out as the ONNX
`_expanded` node tests are, compiled with `shape` a run-time input (host, ReleaseSafe)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tests.test_runtime_parameters import Compiled, _model, _tensor
from zant.driver import CompileOptions, compile_model
from zant.errors import ZantError


def _center_crop_pad(x_shape: list[int], y_shape: list[int | str]):
    """CenterCropPad(x, shape) over every axis, as its function body: pad to max(x, shape)
    centred, then slice `shape` out of the middle. A `y_shape` with names: the output's size is not declared."""
    k2 = helper.make_tensor("k2", TensorProto.INT64, [1], [2])
    nodes = [
        helper.make_node("Shape", ["x"], ["x_shape"]),
        helper.make_node("Max", ["x_shape", "shape"], ["padded_sh"]),
        helper.make_node("Sub", ["padded_sh", "x_shape"], ["pad_amount"]),
        helper.make_node("Div", ["pad_amount", "k2"], ["pad_left"]),
        helper.make_node("Sub", ["pad_amount", "pad_left"], ["pad_right"]),
        helper.make_node("Concat", ["pad_left", "pad_right"], ["pads"], axis=0),
        helper.make_node("Pad", ["x", "pads"], ["padded"]),
        helper.make_node("Shape", ["padded"], ["padded_shape"]),
        helper.make_node("Sub", ["padded_shape", "shape"], ["diff"]),
        helper.make_node("Div", ["diff", "k2"], ["starts"]),
        helper.make_node("Add", ["starts", "shape"], ["ends"]),
        helper.make_node("Slice", ["padded", "starts", "ends"], ["y"]),
    ]
    model = _model(
        nodes,
        [_tensor("x", TensorProto.FLOAT, x_shape), _tensor("shape", TensorProto.INT64, [len(x_shape)])],
        [_tensor("y", TensorProto.FLOAT, y_shape)],
    )
    model.graph.initializer.append(k2)
    return model


def test_center_crop_pad_body_with_run_time_shape(tmp_path):
    # [6, 3] -> [4, 5]: the first axis cropped, the second padded; `shape` must be [4, 5].
    compiled = Compiled(_center_crop_pad([6, 3], [4, 5]), tmp_path)
    x = np.arange(18, dtype=np.float32).reshape(6, 3)
    compiled.check(x, np.array([4, 5], np.int64))
    for shape in ([5, 5], [4, 4], [4, 6], [6, 3], [0, 5]):
        compiled.refuses(x, np.array(shape, np.int64))


def test_undeclared_output_keeps_the_freeze_hint(tmp_path):
    model = _center_crop_pad([6, 3], ["h", "w"])
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    with pytest.raises(ZantError, match=r"cannot infer a static shape for 'padded'.*--freeze shape="):
        compile_model(path, tmp_path / "out", CompileOptions(name="m", build=False))


AFFINE_GRID_SIZES = {
    # consistent sizes (C is free: the body does not use it), contradicting ones
    "test_affine_grid_2d_expanded": ([[2, 3, 5, 6], [2, 1, 5, 6], [2, 7, 5, 6]], [[1, 3, 5, 6], [2, 3, 6, 5], [2, 3, 5, 7], [2, 3, 0, 6]]),
    # D = 1 would take the other branch of an If on D == 1: refused by its Guard too.
    "test_affine_grid_3d_align_corners_expanded": ([[2, 3, 4, 5, 6], [2, 1, 4, 5, 6]], [[2, 3, 1, 5, 6], [2, 3, 4, 5, 7]]),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # collecting ONNX's cases computes some infinities
@pytest.mark.parametrize("name", sorted(AFFINE_GRID_SIZES))
def test_affine_grid_expanded_with_run_time_size(tmp_path, name):
    """ONNX's expanded AffineGrid cases, `size` (N, C, [D,] H, W) a run-time input: the declared
    grid pins N, D, H and W."""
    from onnx.backend.test.case.node import collect_testcases

    (case,) = [c for c in collect_testcases() if c.name == name]
    compiled = Compiled(case.model, tmp_path)
    theta_shape = [int(d.dim_value) for d in case.model.graph.input[0].type.tensor_type.shape.dim]
    theta = np.random.default_rng(0).standard_normal(theta_shape).astype(np.float32)
    consistent, contradicting = AFFINE_GRID_SIZES[name]
    for size in consistent:
        compiled.check(theta, np.array(size, np.int64))
    for size in contradicting:
        compiled.refuses(theta, np.array(size, np.int64))


def test_if_on_a_parameter_takes_the_branch_the_declared_outputs_pin(tmp_path):
    """If(n == 1) whose branches differ in rank ([] or [1]) cannot become a Where; the declared
    y [4] = Range(0, n) + branch pins n = 4, so the else branch is compiled behind a Guard."""
    def branch(name: str, value: np.ndarray):
        tensor = helper.make_tensor(f"{name}_value", TensorProto.FLOAT, value.shape, value.ravel().tolist())
        node = helper.make_node("Constant", [], [f"{name}_out"], value=tensor)
        return helper.make_graph([node], name, [], [helper.make_tensor_value_info(f"{name}_out", TensorProto.FLOAT, None)])

    nodes = [
        helper.make_node("Equal", ["n", "one"], ["is_one"]),
        helper.make_node(
            "If", ["is_one"], ["offset"],
            then_branch=branch("then", np.array(10.0, np.float32)),
            else_branch=branch("else", np.array([0.5], np.float32)),
        ),
        helper.make_node("Range", ["zero", "n", "one"], ["steps"]),
        helper.make_node("Cast", ["steps"], ["steps_f"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["steps_f", "offset"], ["y"]),
    ]
    model = _model(nodes, [_tensor("n", TensorProto.INT64, [])], [_tensor("y", TensorProto.FLOAT, [4])])
    model.graph.initializer.extend(
        [helper.make_tensor("one", TensorProto.INT64, [], [1]), helper.make_tensor("zero", TensorProto.INT64, [], [0])]
    )
    compiled = Compiled(model, tmp_path)
    compiled.check(np.array(4, np.int64))
    for n in (1, 3, 5):
        compiled.refuses(np.array(n, np.int64))
