"""Outputs whose size depends on the data (Unique), compiled at their bound when the model leaves
the size symbolic, and the ABI that tells the caller their extent.

Each model is compiled once for the host in ReleaseSafe (an out-of-bounds access traps) and
called through ctypes on several draws: values from a small set (so slices repeat, in an order
the draw decides) and all-distinct ones (the bound itself is the extent). The raw buffers must
hold the reference's outputs first, zeros after, and the extents array the reference's count;
`zant.runtime` must hand back exactly the reference's outputs. A size the model declares is
compiled as declared and checked: data with another count return Status.OUTPUT_SIZE with the
outputs untouched.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from tests.test_cli import run_zant
from tests.test_runtime_parameters import SENTINEL, Compiled
from zant.dialects.abi import Status
from zant.driver import CompileOptions, compile_model
from zant.errors import ZantError
from zant.runtime import CompiledModel
from zant.signature import TensorSignature

UNIQUE_OUTPUTS = ["Y", "indices", "inverse_indices", "counts"]
rng = np.random.default_rng(0)


def unique_model(shape, elem, axis=None, sorted_=1, outputs=UNIQUE_OUTPUTS, declared=None) -> onnx.ModelProto:
    """A Unique node whose outputs are left symbolic where their size depends on the data (or
    `declared`: name → shape)."""
    attributes = {"sorted": sorted_} | ({} if axis is None else {"axis": axis})
    node = helper.make_node("Unique", ["X"], outputs, name="uniq", **attributes)
    declared = declared or {}
    rank_of_y = len(shape) if axis is not None else 1
    values = []
    for name in (o for o in outputs if o):
        if name in declared:
            dims = declared[name]
        elif name == "Y":
            dims = [None] * rank_of_y
        else:
            dims = [None]
        values.append(helper.make_tensor_value_info(name, elem if name == "Y" else TensorProto.INT64, dims))
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", elem, shape)], values)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def draws(shape, dtype, count=4):
    """Arrays with repeated values (few distinct), then one with all values distinct."""
    for _ in range(count):
        yield rng.integers(-1, 2, shape).astype(dtype)
    yield rng.permutation(int(np.prod(shape))).reshape(shape).astype(dtype)


VARIANTS = {
    "sorted_flat": ([8], TensorProto.FLOAT, np.float32, None, 1),
    "in_order_flat": ([8], TensorProto.FLOAT, np.float32, None, 0),
    "sorted_2d_flattened": ([2, 3], TensorProto.INT32, np.int32, None, 1),
    "sorted_axis_0": ([5, 2], TensorProto.FLOAT, np.float32, 0, 1),
    # In order of first occurrence only along axis 0: onnx's reference takes the slices of any
    # other axis (or of a flattened tensor of rank > 1) along axis 0 (onnx 1.x, op_unique.py).
    "in_order_axis_0": ([5, 2], TensorProto.FLOAT, np.float32, 0, 0),
    "sorted_axis_last": ([2, 5], TensorProto.FLOAT, np.float32, -1, 1),
    "sorted_axis_1_of_3d": ([2, 4, 2], TensorProto.INT64, np.int64, 1, 1),
    "length_1": ([1], TensorProto.INT64, np.int64, None, 1),
    "bool": ([6], TensorProto.BOOL, np.bool_, None, 1),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_unique_at_its_bound(tmp_path, variant):
    shape, elem, dtype, axis, sorted_ = VARIANTS[variant]
    model = unique_model(shape, elem, axis, sorted_)
    compiled = Compiled(model, tmp_path)  # the raw buffers, extents array included
    extents = compiled.outputs[-1]
    assert extents.extents and extents.dtype == "int32" and extents.shape == [3]
    bounded = [s for s in compiled.outputs if s.bounded_dim is not None]
    assert [s.name for s in bounded] == ["Y", "indices", "counts"]
    (library,) = (tmp_path / "out").glob("*m.so")
    runtime = CompiledModel(library, "m", [TensorSignature("X", shape, np.dtype(dtype).name)], compiled.outputs)
    for x in draws(shape, dtype):
        want = ReferenceEvaluator(model).run(None, {"X": x})
        status, raw = compiled(x)
        assert status == 0
        distinct = len(want[3])
        assert raw[-1].tolist() == [distinct] * 3
        for signature, buffer, expected in zip(compiled.outputs, raw, want):
            dim = signature.bounded_dim
            if dim is None:
                np.testing.assert_array_equal(buffer, expected)
                continue
            valid = np.take(buffer, np.arange(distinct), axis=dim)
            padding = np.take(buffer, np.arange(distinct, buffer.shape[dim]), axis=dim)
            np.testing.assert_array_equal(valid, expected)
            assert np.all(padding == 0), signature.name
        for got, expected in zip(runtime(x), want, strict=True):
            assert got.shape == expected.shape and got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)


def test_unique_without_counts_output(tmp_path):
    """The extent is read off `counts`, which the frontend names when the model leaves it out."""
    model = unique_model([6], TensorProto.FLOAT, outputs=["Y", "", "inverse_indices"])
    compiled = Compiled(model, tmp_path)
    assert [s.name for s in compiled.outputs] == ["Y", "inverse_indices", "extents"]
    x = np.array([3, 1, 3, 2, 1, 3], np.float32)
    status, (y, inverse, extents) = compiled(x)
    assert status == 0 and extents.tolist() == [3]
    assert y.tolist() == [1, 2, 3, 0, 0, 0] and inverse.tolist() == [2, 0, 2, 1, 0, 2]


def test_declared_size_is_checked(tmp_path):
    declared = {"Y": [3], "indices": [3], "inverse_indices": [6], "counts": [3]}
    model = unique_model([6], TensorProto.FLOAT, sorted_=0, declared=declared)
    compiled = Compiled(model, tmp_path)
    assert not any(s.extents or s.bounded_dim is not None for s in compiled.outputs)
    compiled.check(np.array([5, 4, 5, 6, 4, 4], np.float32))
    for x in ([1, 1, 1, 1, 1, 2], [1, 2, 3, 4, 1, 1]):  # 2 and 4 distinct values
        status, outputs = compiled(np.array(x, np.float32))
        assert status == Status.OUTPUT_SIZE
        assert all(np.all(o == SENTINEL) for o in outputs)


def test_abi_of_bounded_outputs(tmp_path):
    onnx.save(unique_model([3, 4], TensorProto.FLOAT, axis=-1), tmp_path / "u.onnx")
    compile_model(tmp_path / "u.onnx", tmp_path / "u", CompileOptions(name="u", build=False))
    header = (tmp_path / "u" / "u.h").read_text()
    assert "int64_t *output_counts, int32_t *output_extents);" in header
    assert "#define u_BOUNDED_OUTPUTS 3u" in header
    assert "extents[0]: output 0 ('Y'), dimension 1" in header
    assert "extents[2]: output 3 ('counts'), dimension 0" in header
    plan = json.loads((tmp_path / "u" / "u.plan.json").read_text())
    assert plan["bounded_outputs"][0] == {"output": 0, "name": "Y", "dim": 1, "extent_index": 0}
    assert plan["outputs"][0] == {"name": "Y", "shape": [3, 4], "dtype": "float32", "bounded_dim": 1}
    assert plan["outputs"][2] == {"name": "inverse_indices", "shape": [4], "dtype": "int64"}
    assert plan["outputs"][-1] == {"name": "extents", "shape": [3], "dtype": "int32", "extents": True}


def test_models_without_bounded_outputs_keep_their_abi(tmp_path):
    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    )
    onnx.save(helper.make_model(graph), tmp_path / "r.onnx")
    compile_model(tmp_path / "r.onnx", tmp_path / "r", CompileOptions(name="r", build=False))
    header = (tmp_path / "r" / "r.h").read_text()
    assert "int32_t r_predict(const float *input_x, float *output_y);" in header
    assert "extents" not in header and "BOUNDED" not in header
    plan = json.loads((tmp_path / "r" / "r.plan.json").read_text())
    assert "bounded_outputs" not in plan
    assert plan["outputs"] == [{"name": "y", "shape": [4], "dtype": "float32"}]


def test_zant_run_shows_the_valid_part(tmp_path):
    onnx.save(unique_model([6], TensorProto.FLOAT), tmp_path / "u.onnx")
    np.save(tmp_path / "x.npy", np.array([2, 1, 1, 3, 4, 3], np.float32))
    result = run_zant("run", tmp_path / "u.onnx", "--input", f"X={tmp_path / 'x.npy'}")
    assert result.returncode == 0, result.stderr
    assert "output 'Y' [4] float32 (compiled at its bound [6])" in result.stdout
    assert "output 'inverse_indices' [6] int64\n" in result.stdout
    assert "extents" not in result.stdout
    assert result.stdout.count("max abs error 0\n") == 4


def test_firmware_prints_the_valid_part():
    """The image prints a bounded output's valid rows only (per index before the bounded
    dimension, the extent its entry gives, clamped to the capacity); the reader reshapes them."""
    from zant.backend.firmware import ImageModel, _model_source, parse_output

    outputs = [
        TensorSignature("Y", [2, 3], "int32", bounded_dim=1),
        TensorSignature("n", [3], "int64", bounded_dim=0),
        TensorSignature("extents", [2], "int32", extents=True),
    ]
    source = _model_source(ImageModel("m", (), outputs))
    assert "std.mem.readInt(i32, m_output2[0..][0..4], .little), 0, 3)" in source
    assert "for (0..2) |o| writeHex(m_output0[o * 12 ..][0 .. m_extent0 * 4]);" in source
    assert "std.mem.readInt(i32, m_output2[4..][0..4], .little), 0, 3)" in source
    assert "for (0..1) |o| writeHex(m_output1[o * 24 ..][0 .. m_extent1 * 8]);" in source
    y = np.array([[1, 2], [3, 4]], np.int32)
    stdout = (
        f"OUTPUT m 0 {y.tobytes().hex()}\nOUTPUT m 1 {np.array([7, 8], np.int64).tobytes().hex()}\n"
        f"OUTPUT m 2 {np.array([2, 2], np.int32).tobytes().hex()}\nSTACK 64\n"
    )
    got = parse_output(stdout, [ImageModel("m", (), outputs)]).outputs["m"]
    assert len(got) == 2
    np.testing.assert_array_equal(got[0], y)
    np.testing.assert_array_equal(got[1], [7, 8])


def test_bounded_output_read_by_a_node_is_refused(tmp_path):
    model = unique_model([6], TensorProto.FLOAT, outputs=["Y"])
    graph = model.graph
    graph.node.append(helper.make_node("Relu", ["Y"], ["Z"], name="after"))
    graph.output.append(helper.make_tensor_value_info("Z", TensorProto.FLOAT, [None]))
    onnx.save(model, tmp_path / "u.onnx")
    with pytest.raises(ZantError) as error:
        compile_model(tmp_path / "u.onnx", tmp_path / "u", CompileOptions(name="u", build=False))
    message = str(error.value)
    assert "node 'uniq' (Unique): output 'Y' has a data-dependent size" in message
    assert "is read by node 'after' (Relu)" in message and "declare its shape" in message
    assert "\n" not in message


def in_order_of_occurrence(x, axis):
    """The spec's sorted=0 outputs: np.unique's, reordered by first occurrence (slices along
    `axis`, or of the flattened tensor)."""
    y, indices, inverse, counts = np.unique(x, True, True, True, axis=axis)
    order = np.argsort(indices)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    y = np.take(x.reshape(-1) if axis is None else x, indices[order], axis=0 if axis is None else axis)
    return [y, indices[order], rank[inverse.reshape(-1)], counts[order]]


@pytest.mark.parametrize(("shape", "axis"), [([2, 5], -1), ([2, 3], None)])
def test_unique_in_order_along_other_axes(tmp_path, shape, axis):
    model = unique_model(shape, TensorProto.FLOAT, axis, sorted_=0)
    compiled = Compiled(model, tmp_path)
    (library,) = (tmp_path / "out").glob("*m.so")
    runtime = CompiledModel(library, "m", [TensorSignature("X", shape, "float32")], compiled.outputs)
    for x in draws(shape, np.float32):
        for got, want in zip(runtime(x), in_order_of_occurrence(x, axis), strict=True):
            np.testing.assert_array_equal(got, want)


def test_data_dependent_size_without_a_bound_is_refused(tmp_path):
    """NonZero has no entry in `BOUNDS`: its symbolic output is an error naming the node and
    saying what makes it static (no input value or --input-shape does: only a declared shape)."""
    node = helper.make_node("NonZero", ["x"], ["y"], name="nz")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2, None])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), tmp_path / "nz.onnx")
    result = run_zant("compile", tmp_path / "nz.onnx", "-o", tmp_path / "out", "--no-build")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "'y' (output of node 'nz' (NonZero))" in result.stderr
    assert "declare its shape in the model" in result.stderr


def test_unique_orders_nan_last_as_one_value(tmp_path):
    """NaN sorts after every number and equals NaN (NumPy's unique); -0.0 equals 0.0."""
    model = unique_model([7], TensorProto.FLOAT)
    compiled = Compiled(model, tmp_path)
    x = np.array([np.nan, 1, np.nan, -0.0, 0.0, 2, 1], np.float32)
    status, (y, indices, inverse, counts, extents) = compiled(x)
    want = ReferenceEvaluator(model).run(None, {"X": x})
    assert status == 0 and extents.tolist() == [4] * 3
    np.testing.assert_array_equal(y[:4], want[0])  # NaN equals NaN here
    for got, expected in zip((indices[:4], inverse, counts[:4]), want[1:], strict=True):
        np.testing.assert_array_equal(got, expected)
