"""Dropout in training mode with a `seed`: the mask of ONNX's reference, whose draws
(`numpy.random.RandomState(seed).uniform(0, 1, shape)`) the compiler makes at compile time.

The models are compiled once for the host (ReleaseSafe) and called through ctypes with several
ratios and training modes; each call's outputs must equal the reference evaluator's exactly
(NaN equal to NaN: a ratio of 1 scales the zeros by inf).
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from test_runtime_parameters import Compiled
from zant.driver import CompileOptions, compile_model
from zant.errors import ZantError
from zant.passes.onnx_to_uop.movement import dropout_draws, round_down_to_f32

F, B = TensorProto.FLOAT, TensorProto.BOOL
SHAPE = [3, 4, 5]  # the node tests' x


def _model(nodes, inputs, outputs, initializers=()) -> onnx.ModelProto:
    info = lambda n, t, s: helper.make_tensor_value_info(n, t, s)  # noqa: E731
    graph = helper.make_graph(
        nodes, "g", [info(*i) for i in inputs], [info(*o) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in initializers],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


def _run(compiled: Compiled, *arrays: np.ndarray) -> list[np.ndarray]:
    """Status 0 and exactly the reference's outputs (in the declared output types)."""
    status, outputs = compiled(*arrays)
    assert status == 0
    names = [i.name for i in compiled.model.graph.input]
    reference = ReferenceEvaluator(compiled.model).run(None, dict(zip(names, arrays)))
    for got, want in zip(outputs, reference, strict=True):
        np.testing.assert_array_equal(got, np.asarray(want).astype(got.dtype))
    return outputs


def _edge(draws: np.ndarray) -> int:
    """The flat index of the first draw that is no float32 (between two of them)."""
    flat = draws.reshape(-1)
    inexact = np.flatnonzero(round_down_to_f32(flat).astype(np.float64) != flat)
    assert inexact.size
    return int(inexact[0])


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**32 - 1])
def test_float32_draws_decide_every_float32_ratio(seed):
    """u >= r for a float64 draw u and every float32 r is v >= r for v, u rounded down to
    float32: at v (kept), at the float32 above it (dropped unless u is v), and at random r."""
    u = dropout_draws(seed, [4000])
    v = round_down_to_f32(u)
    assert v.dtype == np.float32
    wide = v.astype(np.float64)
    assert np.all(wide <= u) and np.all(np.nextafter(v, np.float32(np.inf)).astype(np.float64) > u)
    assert np.mean(wide != u) > 0.9  # nearly every draw has bits float32 drops
    above, below = np.nextafter(v, np.float32(np.inf)), np.nextafter(v, np.float32(-np.inf))
    rng = np.random.default_rng(seed)
    specials = np.resize(np.float32([0.0, -0.0, 1.0, np.inf, -np.inf, np.nan]), u.size)
    for r in (v, above, below, rng.random(u.size, np.float32), specials):
        np.testing.assert_array_equal(u >= r.astype(np.float64), v >= r)
    # Rounding to nearest instead would keep a draw at the float32 just above it.
    nearest = u.astype(np.float32)
    assert np.any((nearest >= nearest) != (u >= nearest.astype(np.float64)))


def test_draws_are_numpys_legacy_stream():
    np.testing.assert_array_equal(dropout_draws(0, SHAPE), np.random.RandomState(0).uniform(0, 1, SHAPE))
    with pytest.raises(ValueError, match="seed -1"):
        dropout_draws(-1, SHAPE)


def test_runtime_ratio_and_training_mode(tmp_path):
    """The node tests' form with ratio and training_mode run-time inputs (a float32 ratio:
    float32 draws; a float64 one: float64 draws), several ratios, training on and off, and the
    ratios either side of a draw."""
    nodes = [
        helper.make_node("Dropout", ["x", "r", "t"], ["y", "z"], seed=0),
        helper.make_node("Dropout", ["x", "r64", "t"], ["y64", "z64"], seed=7),
    ]
    model = _model(
        nodes,
        [("x", F, SHAPE), ("r", F, []), ("t", B, []), ("r64", TensorProto.DOUBLE, [])],
        [("y", F, SHAPE), ("z", B, SHAPE), ("y64", F, SHAPE), ("z64", B, SHAPE)],
    )
    compiled = Compiled(model, tmp_path)
    x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)

    def run(ratio, training=True, ratio64=None):
        ratio64 = np.float64(ratio) if ratio64 is None else ratio64
        return _run(compiled, x, np.array(ratio, np.float32), np.array(training), np.array(ratio64, np.float64))

    with np.errstate(divide="ignore", invalid="ignore"):  # the reference at ratio 1
        for ratio in (0.5, 0.75, 0.1, 0.0, 1.0, np.nan):
            y, z, y64, z64 = run(ratio)
            if ratio == 0:
                np.testing.assert_array_equal(y, x)
                assert z.all()
            elif 0 < ratio < 1:
                assert 0 < z.sum() < z.size and not np.array_equal(z, z64)
    for ratio in (0.5, 0.75):
        y, z, y64, z64 = run(ratio, training=False)
        np.testing.assert_array_equal(y, x)
        np.testing.assert_array_equal(y64, x)
        assert z.all() and z64.all()

    draws, draws64 = dropout_draws(0, SHAPE), dropout_draws(7, SHAPE)
    i, j = _edge(draws), _edge(draws64)
    low = round_down_to_f32(draws).reshape(-1)[i]
    high = np.nextafter(low, np.float32(np.inf))
    u64 = draws64.reshape(-1)[j]
    assert run(low, ratio64=u64)[1].reshape(-1)[i] and run(low, ratio64=u64)[3].reshape(-1)[j]
    dropped = run(high, ratio64=np.nextafter(u64, np.inf))
    assert not dropped[1].reshape(-1)[i] and not dropped[3].reshape(-1)[j]


def test_frozen_ratio_and_training_mode(tmp_path):
    """Ratio and training_mode as constants (how `zant conformance` freezes the node tests): the
    mask itself is the constant; with a run-time training_mode beside a constant ratio too."""
    nodes = [
        helper.make_node("Dropout", ["x", "r75", "on"], ["y", "z"], seed=0),
        helper.make_node("Dropout", ["x", "r5", "t"], ["y5", "z5"], seed=0),
        helper.make_node("Dropout", ["x", "r5", "on"], ["y_only"], seed=3),
    ]
    initializers = [("r75", np.float32(0.75)), ("r5", np.float32(0.5)), ("on", np.array(True))]
    model = _model(
        nodes,
        [("x", F, SHAPE), ("t", B, [])],
        [("y", F, SHAPE), ("z", B, SHAPE), ("y5", F, SHAPE), ("z5", B, SHAPE), ("y_only", F, SHAPE)],
        initializers,
    )
    compiled = Compiled(model, tmp_path)
    x = np.random.default_rng(1).standard_normal(SHAPE).astype(np.float32)
    y, z, y5, z5, _ = _run(compiled, x, np.array(True))
    np.testing.assert_array_equal(z, dropout_draws(0, SHAPE) >= 0.75)
    np.testing.assert_array_equal(y, np.where(z, x * np.float32(4), 0))
    assert 0 < z5.sum() < z5.size
    y, z, y5, z5, _ = _run(compiled, x, np.array(False))
    np.testing.assert_array_equal(y5, x)
    assert z5.all()


def test_element_types_and_a_scalar(tmp_path):
    """float16 data with a float16 ratio (scale in float16) and with a float32 one (the product
    in float32, as NumPy promotes, then float16), float64 data, a scalar."""
    H, D = TensorProto.FLOAT16, TensorProto.DOUBLE
    nodes = [
        helper.make_node("Dropout", ["xh", "rh", "t"], ["yh", "zh"], seed=5),
        helper.make_node("Dropout", ["xh", "r", "t"], ["yhr", "zhr"], seed=5),
        helper.make_node("Dropout", ["xd", "r", "t"], ["yd", "zd"], seed=6),
        helper.make_node("Dropout", ["s", "r", "t"], ["ys", "zs"], seed=6),
    ]
    model = _model(
        nodes,
        [("xh", H, [4, 6]), ("rh", H, []), ("t", B, []), ("r", F, []), ("xd", D, [7]), ("s", F, [])],
        [("yh", H, [4, 6]), ("zh", B, [4, 6]), ("yhr", H, [4, 6]), ("zhr", B, [4, 6]), ("yd", D, [7]), ("zd", B, [7]),
         ("ys", F, []), ("zs", B, [])],
    )
    compiled = Compiled(model, tmp_path)
    rng = np.random.default_rng(3)
    xh, xd = rng.standard_normal((4, 6)).astype(np.float16), rng.standard_normal(7)
    for ratio in (0.3, 0.6, 0.0):
        for training in (True, False):
            outputs = _run(compiled, xh, np.array(ratio, np.float16), np.array(training), np.array(ratio, np.float32), xd,
                           np.array(2.5, np.float32))
            if training and ratio:
                assert not outputs[1].all() and not outputs[5].all()


@pytest.mark.parametrize("runtime_ratio", [False, True])
def test_training_without_a_seed_is_a_compile_error(tmp_path, runtime_ratio):
    """A constant true training_mode without a seed: one error naming the node and the reason."""
    ratio = [] if runtime_ratio else [("r", np.float32(0.5))]
    node = helper.make_node("Dropout", ["x", "r", "on"], ["y"], name="drop1")
    inputs = [("x", F, SHAPE)] + ([("r", F, [])] if runtime_ratio else [])
    model = _model([node], inputs, [("y", F, SHAPE)], [*ratio, ("on", np.array(True))])
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    with pytest.raises(ZantError, match=r"node 'drop1' \(onnx.Dropout\): Dropout in training mode without a seed") as error:
        compile_model(path, tmp_path / "out", CompileOptions(name="m"))
    assert "cannot reproduce" in str(error.value) and "\n" not in str(error.value)
