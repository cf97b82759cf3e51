"""Indices read from the data (issue 32): no input value makes the generated code read or write
outside its buffers, in any build mode.

Each model takes its indices as a graph input and is compiled for the host (ReleaseFast, the
default, and ReleaseSafe, where an access out of bounds would trap and kill the process) and
called through ctypes: valid indices (negative ones too) give the reference's outputs; each of
n, 1000, -n - 1 and 2**40 (int64) makes `m_predict` return `STATUS_BAD_INDEX` (6) with every
output buffer as the caller left it. Constant indices out of range are a compile error naming
the node. One case runs as Cortex-M4 firmware under QEMU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from e2e import SENTINEL, StatusModel
from zant.dialects.abi import Status
from zant.driver import CompileOptions, compile_model
from zant.errors import ZantError

MODES = ("ReleaseFast", "ReleaseSafe")


def _model(nodes, inputs, outputs, initializers=(), opset: int = 18, ml: bool = False) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("ai.onnx.ml", 3)] if ml else [])
    return helper.make_model(graph, opset_imports=opsets)


def _info(name: str, elem: int, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


F, I64, I32 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32


class Compiled(StatusModel):
    """`m_predict` of a host build in `optimize`; returns (status, outputs)."""

    def __init__(self, model: onnx.ModelProto, folder: Path, optimize: str):
        super().__init__(model, folder, optimize, out=optimize)


@dataclass
class Case:
    """A model whose input `bad_input` holds indices into a dimension of `extent`."""

    model: onnx.ModelProto
    feeds: dict[str, np.ndarray]  # valid, negative indices among them where allowed
    bad_input: str
    extent: int
    nonnegative: bool = False  # -1 is invalid too (MaxUnpool's, RoiAlign's batch indices)

    def bad_values(self) -> list[int]:
        dtype = self.feeds[self.bad_input].dtype
        values = [self.extent, 1000, -self.extent - 1] + ([2**40] if dtype == np.int64 else [2**31 - 1])
        return values + ([-1] if self.nonnegative else [])


def _gather() -> Case:
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    model = _model(
        [helper.make_node("Gather", ["x", "i"], ["y"], axis=0, name="gather")],
        [_info("x", F, [4, 3]), _info("i", I64, [2])], [_info("y", F, [2, 3])],
    )
    return Case(model, {"x": x, "i": np.array([1, -4], np.int64)}, "i", 4)


def _gather_axis1_int32() -> Case:
    x = np.arange(24, dtype=np.float32).reshape(2, 6, 2)
    model = _model(
        [helper.make_node("Gather", ["x", "i"], ["y"], axis=1, name="gather")],
        [_info("x", F, [2, 6, 2]), _info("i", I32, [2, 2])], [_info("y", F, [2, 2, 2, 2])],
    )
    return Case(model, {"x": x, "i": np.array([[5, -1], [-6, 0]], np.int32)}, "i", 6)


def _gather_elements() -> Case:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    model = _model(
        [helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1, name="gather_elements")],
        [_info("x", F, [3, 4]), _info("i", I64, [3, 2])], [_info("y", F, [3, 2])],
    )
    return Case(model, {"x": x, "i": np.array([[0, -1], [3, -4], [2, 1]], np.int64)}, "i", 4)


def _gather_nd() -> Case:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    model = _model(
        [helper.make_node("GatherND", ["x", "i"], ["y"], name="gather_nd")],
        [_info("x", F, [3, 4]), _info("i", I64, [2, 2])], [_info("y", F, [2])],
    )
    # The second column indexes the dimension of 4 (the first, of 3, is checked as well).
    return Case(model, {"x": x, "i": np.array([[2, -4], [-3, 3]], np.int64)}, "i", 4)


def _scatter_elements() -> Case:
    model = _model(
        [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=0, name="scatter_elements")],
        [_info("x", F, [5, 2]), _info("i", I64, [2, 2]), _info("u", F, [2, 2])], [_info("y", F, [5, 2])],
    )
    feeds = {"x": np.zeros((5, 2), np.float32), "i": np.array([[4, -5], [-1, 2]], np.int64),
             "u": np.array([[1, 2], [3, 4]], np.float32)}
    return Case(model, feeds, "i", 5)


def _scatter_nd() -> Case:
    model = _model(
        [helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="scatter_nd")],
        [_info("x", F, [4, 3]), _info("i", I64, [2, 1]), _info("u", F, [2, 3])], [_info("y", F, [4, 3])],
    )
    feeds = {"x": np.ones((4, 3), np.float32), "i": np.array([[-1], [1]], np.int64),
             "u": np.arange(6, dtype=np.float32).reshape(2, 3)}
    return Case(model, feeds, "i", 4)


def _max_unpool() -> Case:
    model = _model(
        [helper.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2], name="unpool")],
        [_info("x", F, [1, 1, 2, 2]), _info("i", I64, [1, 1, 2, 2])], [_info("y", F, [1, 1, 4, 4])],
    )
    feeds = {"x": np.array([[[[1, 2], [3, 4]]]], np.float32), "i": np.array([[[[5, 2], [8, 15]]]], np.int64)}
    return Case(model, feeds, "i", 16, nonnegative=True)


def _array_feature_extractor() -> Case:
    model = _model(
        [helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml", name="features")],
        [_info("x", F, [2, 5]), _info("i", I64, [3])], [_info("y", F, [2, 3])], ml=True,
    )
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    # onnxruntime refuses negative indices here (ONNX's reference takes them from the end, as Zant
    # does): the reference is compared on non-negative ones.
    return Case(model, {"x": x, "i": np.array([4, 0, 2], np.int64)}, "i", 5)


def _embedding_after_cast() -> Case:
    """Token ids an earlier node computes (int32 ids cast to int64), an embedding table's Gather:
    the check runs after the Cast, before the Gather writes."""
    table = numpy_helper.from_array(np.arange(15, dtype=np.float32).reshape(5, 3), "table")
    model = _model(
        [helper.make_node("Cast", ["ids"], ["ids64"], to=I64, name="cast"),
         helper.make_node("Gather", ["table", "ids64"], ["y"], axis=0, name="embedding")],
        [_info("ids", I32, [1, 3])], [_info("y", F, [1, 3, 3])], [table],
    )
    return Case(model, {"ids": np.array([[4, 0, -1]], np.int32)}, "ids", 5)


def _another_output_first() -> Case:
    """A graph output computed before the Gather: indices that are a graph input are checked at
    the entry, so it is not written either."""
    model = _model(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("Gather", ["x", "i"], ["y"], axis=0, name="gather")],
        [_info("x", F, [4, 3]), _info("i", I64, [2])], [_info("r", F, [4, 3]), _info("y", F, [2, 3])],
    )
    x = np.arange(-6, 6, dtype=np.float32).reshape(4, 3)
    return Case(model, {"x": x, "i": np.array([3, -2], np.int64)}, "i", 4)


CASES = {
    "another_output_first": _another_output_first,
    "gather": _gather,
    "gather_axis1_int32": _gather_axis1_int32,
    "gather_elements": _gather_elements,
    "gather_nd": _gather_nd,
    "scatter_elements": _scatter_elements,
    "scatter_nd": _scatter_nd,
    "max_unpool": _max_unpool,
    "array_feature_extractor": _array_feature_extractor,
    "embedding_after_cast": _embedding_after_cast,
}


def _reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    try:
        import onnxruntime as ort
    except ImportError:
        return ReferenceEvaluator(model).run(None, feeds)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_indices_from_the_data(tmp_path, name, mode):
    case = CASES[name]()
    compiled = Compiled(case.model, tmp_path, mode)
    order = [i.name for i in case.model.graph.input]
    status, got = compiled(*(case.feeds[n] for n in order))
    assert status == 0
    for g, w in zip(got, _reference(case.model, case.feeds), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    for value in case.bad_values():
        feeds = dict(case.feeds)
        bad = feeds[case.bad_input].copy()
        bad.reshape(-1)[-1] = value
        feeds[case.bad_input] = bad
        status, got = compiled(*(feeds[n] for n in order))
        assert status == Status.BAD_INDEX, f"index {value}"
        for output in got:
            assert (output == SENTINEL).all(), f"index {value}: an output was written"


def test_roi_align_batch_index(tmp_path):
    """RoiAlign's batch_indices pick an image: one past the batch (or negative) is status 6,
    where it was clamped to the last image before."""
    model = _model(
        [helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], output_height=2, output_width=2,
                          sampling_ratio=2, name="roi")],
        [_info("x", F, [2, 1, 4, 4]), _info("rois", F, [1, 4]), _info("b", I64, [1])], [_info("y", F, [1, 1, 2, 2])],
        opset=16,
    )
    x = np.arange(32, dtype=np.float32).reshape(2, 1, 4, 4)
    rois = np.array([[0.0, 0.0, 3.0, 3.0]], np.float32)
    compiled = Compiled(model, tmp_path, "ReleaseFast")
    status, (got,) = compiled(x, rois, np.array([1], np.int64))
    assert status == 0
    np.testing.assert_allclose(got, ReferenceEvaluator(model).run(None, {"x": x, "rois": rois, "b": np.array([1])})[0], rtol=1e-5)
    for value in (2, -1, 2**40):
        status, (got,) = compiled(x, rois, np.array([value], np.int64))
        assert status == Status.BAD_INDEX and (got == SENTINEL).all()


@pytest.mark.parametrize("indices", [[0, 7], 100, -8, 2**40])
def test_constant_index_out_of_range_is_a_compile_error(tmp_path, indices):
    """Constant indices are checked when compiling: the error names the node, the index and the
    valid range (the issue's Gather of a constant x)."""
    array = np.array(indices, np.int64)
    x = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "x")
    model = _model(
        [helper.make_node("Gather", ["x", "i"], ["y"], axis=0, name="lookup")],
        [], [_info("y", F, [*array.shape, 3])], [x, numpy_helper.from_array(array, "i")],
    )
    onnx.save(model, tmp_path / "m.onnx")
    bad = array.reshape(-1)[-1]
    message = rf"node 'lookup' \(onnx.Gather\): constant index {bad}.* out of range: the valid ones are \[-4, 4\)"
    with pytest.raises(ZantError, match=message):
        compile_model(tmp_path / "m.onnx", tmp_path / "out", CompileOptions(name="m", build=False))


def test_constant_scatter_nd_index_out_of_range_is_a_compile_error(tmp_path):
    model = _model(
        [helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="write")],
        [_info("x", F, [4, 3]), _info("u", F, [1, 3])], [_info("y", F, [4, 3])],
        [numpy_helper.from_array(np.array([[-5]], np.int64), "i")],
    )
    onnx.save(model, tmp_path / "m.onnx")
    with pytest.raises(ZantError, match=re.escape("node 'write' (onnx.ScatterND): constant index -5 at [0, 0]")):
        compile_model(tmp_path / "m.onnx", tmp_path / "out", CompileOptions(name="m", build=False))


def test_constant_valid_indices_need_no_check(tmp_path):
    """Valid constant indices (negative ones too) are only wrapped: no run-time check."""
    x = numpy_helper.from_array(np.array([-1, 0], np.int64), "i")
    model = _model(
        [helper.make_node("Gather", ["x", "i"], ["y"], axis=0, name="g")],
        [_info("x", F, [4])], [_info("y", F, [2])], [x],
    )
    onnx.save(model, tmp_path / "m.onnx")
    result = compile_model(tmp_path / "m.onnx", tmp_path / "out", CompileOptions(name="m"))
    assert "return 6" not in (tmp_path / "out" / "m.zig").read_text()
    status, (y,) = Compiled(model, tmp_path, "ReleaseFast")(np.arange(4, dtype=np.float32))
    assert result.library_path is not None and status == 0 and y.tolist() == [3.0, 0.0]


def test_the_status_is_in_the_header(tmp_path):
    case = _gather()
    onnx.save(case.model, tmp_path / "m.onnx")
    compile_model(tmp_path / "m.onnx", tmp_path / "out", CompileOptions(name="m", build=False))
    header = (tmp_path / "out" / "m.h").read_text()
    assert f"#define m_STATUS_BAD_INDEX {Status.BAD_INDEX} " in header


def test_interpreter_before_and_after_the_pass(tmp_path):
    """The uop interpreter runs the lowered Gather before `check-data-indices` (an invalid
    `uop.bound_index` stops it with status 6, as at a trap) and after it (the check fails with
    status 6); valid indices give the same outputs both ways."""
    from zant.driver import compile_to_module
    from zant.interpreter import run_module
    from zant.interpreter.run import InterpreterTrap

    case = _gather()
    onnx.save(case.model, tmp_path / "m.onnx")
    x = case.feeds["x"]
    for pipeline, trap in (("onnx-to-uop", r"index 4 is outside \[-4, 4\).*status 6"),
                           ("onnx-to-uop,check-data-indices", "abi.check failed: the function returns status 6")):
        module = compile_to_module(tmp_path / "m.onnx", pipeline=pipeline).module
        (y,) = run_module(module, [x, np.array([1, -4], np.int64)])
        np.testing.assert_array_equal(y, x[[1, -4]].reshape(-1))
        with pytest.raises(InterpreterTrap, match=trap):
            run_module(module, [x, np.array([1, 4], np.int64)])


def test_cortex_m4_firmware_returns_the_status(tmp_path):
    """The issue's Gather as Cortex-M4 firmware (ReleaseFast) under QEMU: valid indices give
    the host's outputs, [4, 0] makes NAME_predict return 6 (the harness prints it)."""
    from zant.backend.build import BOARDS, DEFAULT_BOARDS
    from zant.backend.firmware import EXIT_STATUS, qemu_missing, run_firmware, run_image

    board = BOARDS[DEFAULT_BOARDS["cortex-m4"]]
    missing = qemu_missing(board)
    if missing:
        pytest.skip(missing)
    x = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "x")
    model = _model(
        [helper.make_node("Gather", ["x", "i"], ["y"], axis=0, name="gather")],
        [_info("i", I64, [2])], [_info("y", F, [2, 3])], [x],
    )
    onnx.save(model, tmp_path / "m.onnx")
    for indices, status in (([1, -1], 0), ([4, 0], Status.BAD_INDEX), ([1000, 0], Status.BAD_INDEX)):
        result = compile_model(
            tmp_path / "m.onnx", tmp_path / f"fw{indices[0]}",
            CompileOptions(name="net", target="cortex-m4", optimize="ReleaseFast", firmware=True,
                           inputs={"i": np.array(indices, np.int64)}),
        )
        assert result.firmware_path is not None and result.board is not None
        if status == 0:
            (y,) = run_firmware(result.firmware_path, result.board, result.outputs).outputs
            np.testing.assert_array_equal(y, np.arange(12, dtype=np.float32).reshape(4, 3)[[1, -1]])
        else:
            done = run_image(result.board, result.firmware_path, statuses=tuple(EXIT_STATUS.values()))
            assert f"ERROR net returned {status}" in done.stdout


def test_tree_feature_id_out_of_range_is_a_compile_error(tmp_path):
    """A tree walk reads X's column nodes_featureids[node]: one past X's row is a compile error
    (it would read the next row, or past X)."""
    node = helper.make_node(
        "TreeEnsembleRegressor", ["x"], ["y"], domain="ai.onnx.ml", name="trees", n_targets=1,
        nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[5, 0, 0],
        nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"], nodes_values=[0.5, 0.0, 0.0],
        nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 0, 0],
        target_treeids=[0, 0], target_nodeids=[1, 2], target_ids=[0, 0], target_weights=[1.0, 2.0],
    )
    model = _model([node], [_info("x", F, [3, 2])], [_info("y", F, [3, 1])], ml=True)
    onnx.save(model, tmp_path / "m.onnx")
    with pytest.raises(ZantError, match=r"node 'trees' .*feature id 5 is out of range for X's 2 features"):
        compile_model(tmp_path / "m.onnx", tmp_path / "out", CompileOptions(name="m", build=False))
