"""Random ops with a seed (passes/onnx_to_uop/random.py): compiled code equals ONNX's reference
(`onnx.reference`, NumPy's legacy RandomState reseeded per call) bit for bit."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import zant
from zant.errors import ZantError


def _model(nodes, inputs, outputs):
    graph = helper.make_graph(nodes, "random", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_binomial_takes_one_draw_per_element():
    """The lowering's model of RandomState(seed).binomial(1, p): draw i is random_sample()'s i-th
    whatever p_i (0 and 1 too), 1 where u > 1 - p (p <= 0.5) else where u <= 1 - (1 - p)."""
    rng = np.random.default_rng(1)
    for _ in range(300):
        seed = int(rng.integers(0, 2**32))
        p = rng.random(int(rng.integers(1, 60)))
        pick = rng.random(p.size)
        p[pick < 0.15], p[(pick >= 0.15) & (pick < 0.3)], p[(pick >= 0.3) & (pick < 0.35)] = 0.0, 1.0, 0.5
        u = np.random.RandomState(seed).random_sample(p.size)
        ours = np.where(p <= 0.5, u > 1.0 - p, u <= 1.0 - (1.0 - p))
        np.testing.assert_array_equal(np.random.RandomState(seed).binomial(1, p), ours)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """One model with every seeded random op: Bernoulli on float32 (float32 out) and float64
    (int32 out), RandomUniformLike, RandomNormal (float64), RandomUniform (float16)."""
    f32, f64 = TensorProto.FLOAT, TensorProto.DOUBLE
    nodes = [
        helper.make_node("Bernoulli", ["p"], ["b"], seed=3.0),
        helper.make_node("Bernoulli", ["q"], ["bi"], seed=7.0, dtype=TensorProto.INT32),
        helper.make_node("RandomUniformLike", ["p"], ["u"], seed=5.0, low=-2.0, high=3.0),
        helper.make_node("RandomNormal", [], ["n"], seed=11.0, mean=1.0, scale=0.5, shape=[3, 7], dtype=f64),
        helper.make_node("RandomUniform", [], ["h"], seed=2.0, shape=[5], dtype=TensorProto.FLOAT16),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("p", f32, [4, 25]), helper.make_tensor_value_info("q", f64, [64])],
        [helper.make_tensor_value_info("b", f32, [4, 25]), helper.make_tensor_value_info("bi", TensorProto.INT32, [64]),
         helper.make_tensor_value_info("u", f32, [4, 25]), helper.make_tensor_value_info("n", f64, [3, 7]),
         helper.make_tensor_value_info("h", TensorProto.FLOAT16, [5])],
    )
    path = tmp_path_factory.mktemp("random") / "random.onnx"
    onnx.save(model, path)
    return model, zant.compile(str(path))


def test_seeded_random_ops_equal_the_reference(compiled):
    model, net = compiled
    rng = np.random.default_rng(0)
    for _ in range(3):
        p = rng.random((4, 25)).astype(np.float32)
        q = rng.random(64)
        p.flat[:4], q[:4] = [0.0, 1.0, 0.5, 0.5], [0.0, 1.0, 0.5, 1e-300]
        want = ReferenceEvaluator(model).run(None, {"p": p, "q": q})
        got = net.predict(p=p, q=q)
        for value, expected in zip(model.graph.output, want):
            assert got[value.name].dtype == expected.dtype
            np.testing.assert_array_equal(got[value.name], expected, err_msg=value.name)
    assert set(np.unique(got["b"])) <= {0.0, 1.0} and 0 < got["b"].sum() < got["b"].size


def test_random_op_without_a_seed_is_a_compile_error(tmp_path):
    model = _model(
        [helper.make_node("Bernoulli", ["p"], ["b"], name="coin")],
        [helper.make_tensor_value_info("p", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [4])],
    )
    onnx.save(model, tmp_path / "m.onnx")
    with pytest.raises(ZantError, match="'coin'.*without a seed attribute draws fresh values"):
        zant.compile(str(tmp_path / "m.onnx"))
