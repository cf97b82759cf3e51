"""The column-lane form of MatMul/Gemm with a constant B (onnx_to_uop/linalg.py) on the host
pipeline: whole groups of blocks, a smaller last group, the scalar tail columns, transA/transB,
alpha/beta/C and batched A, all against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from e2e import compile_and_run
from onnx import TensorProto, helper, numpy_helper


def gemm_model(m: int, k: int, n: int, trans_a: int, trans_b: int, alpha: float, beta: float, seed: int):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((n, k) if trans_b else (k, n)).astype(np.float32)
    c = rng.standard_normal(n).astype(np.float32)
    a_shape = [k, m] if trans_a else [m, k]
    node = helper.make_node("Gemm", ["a", "w", "c"], ["y"], transA=trans_a, transB=trans_b, alpha=alpha, beta=beta)
    graph = helper.make_graph(
        [node], "gemm", [helper.make_tensor_value_info("a", TensorProto.FLOAT, a_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(c, "c")],
    )
    a = rng.standard_normal(a_shape).astype(np.float32)
    a2 = a.T if trans_a else a
    want = alpha * (a2.astype(np.float64) @ (w.T if trans_b else w)) + beta * c
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), a, want


@pytest.mark.parametrize(
    "m, k, n, trans_a, trans_b, alpha, beta",
    [
        (1, 138, 512, 0, 1, 1.0, 1.0),  # an LSTM-gate-sized GEMV: groups of 6 blocks + 2
        (3, 20, 40, 0, 1, 0.5, 2.0),  # 2 blocks and 8 tail columns
        (2, 7, 112, 1, 0, 1.0, 0.0),  # 7 blocks: one group of 6 and one of 1; transA; no C
        (1, 12, 12, 0, 1, 1.0, 1.0),  # narrower than the lanes: plain nest only
        (16, 64, 256, 0, 0, 1.0, 1.0),  # BERT-tiny's FFN: tiles of several rows
        (7, 5, 80, 0, 1, 1.0, 1.0),  # rows and blocks that leave smaller tiles
    ],
)
def test_gemm_matches_numpy(m, k, n, trans_a, trans_b, alpha, beta):
    model, a, want = gemm_model(m, k, n, trans_a, trans_b, alpha, beta, seed=m * 1000 + n)
    (got,) = compile_and_run(model, {"a": a})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "rows, blocks, tile, want",
    [
        (1, 32, 6, (1, 6)),  # one row: the widest tile
        (16, 4, 6, (6, 1)),  # BERT-tiny's 64-wide MatMuls: as few FMA steps as 16 x 4 allows (as
        (16, 16, 6, (6, 1)),  # 2 x 2 and 4 x 1), with the fewest loads; measured as fast as 2 x 3,
        (49, 32, 6, (5, 1)),  # ahead of 1 x 6 (0.11 ms) and 3 x 2 (0.13 ms: spills)
        (3, 1, 6, (3, 1)),
        (3, 2, 6, (3, 1)),  # 3 x 2 would cost least but needs 17 registers of 16: it spilled
        (48, 6, 6, (6, 1)),  # as cheap as 2 x 3 in the model, 7% faster
    ],
)
def test_register_tile(rows, blocks, tile, want):
    from zant.passes.onnx_to_uop.linalg import register_tile, tile_registers

    assert register_tile(rows, blocks, tile) == want
    assert tile_registers(*want) <= 2 * tile + 4


def test_batched_matmul_matches_numpy():
    rng = np.random.default_rng(7)
    w = rng.standard_normal((24, 56)).astype(np.float32)  # 3 blocks + 8 tail columns
    node = helper.make_node("MatMul", ["a", "w"], ["y"])
    graph = helper.make_graph(
        [node], "matmul", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 5, 24])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, 56])], [numpy_helper.from_array(w, "w")],
    )
    a = rng.standard_normal((2, 5, 24)).astype(np.float32)
    (got,) = compile_and_run(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), {"a": a})
    np.testing.assert_allclose(got, a.astype(np.float64) @ w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "a_shape, k_shape",
    [
        ((1, 2, 16, 32), (1, 2, 16, 32)),  # BERT-tiny's scores: Q·Kᵀ per head
        ((2, 7, 5), (2, 20, 5)),  # one block of 16 columns and 4 plain tail columns
        ((3, 4, 6), (1, 17, 6)),  # Kᵀ broadcast over the batch
    ],
)
def test_matmul_by_transposed_runtime_b_matches_numpy(a_shape, k_shape):
    """A·Kᵀ with K an input: Kᵀ is a transposed view, repacked at run time for the column-lane form."""
    rng = np.random.default_rng(len(a_shape) * 100 + a_shape[-2])
    rank = len(k_shape)
    perm = [*range(rank - 2), rank - 1, rank - 2]
    out_shape = [*np.broadcast_shapes(a_shape[:-2], k_shape[:-2]), a_shape[-2], k_shape[-2]]
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=perm), helper.make_node("MatMul", ["a", "kt"], ["y"])]
    graph = helper.make_graph(
        nodes, "scores",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, list(a_shape)),
         helper.make_tensor_value_info("k", TensorProto.FLOAT, list(k_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
    )
    a = rng.standard_normal(a_shape).astype(np.float32)
    k = rng.standard_normal(k_shape).astype(np.float32)
    (got,) = compile_and_run(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), {"a": a, "k": k})
    want = a.astype(np.float64) @ np.swapaxes(k, -1, -2)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def recurrent_model(op: str, gates: int, hidden: int, direction: str, extra: dict, seed: int, batch: int = 2,
                    layout: int = 0):
    """One `op` layer with constant W, R, B over 5 steps, `batch` entries, 3 features; outputs Y
    and Y_h (layout 1: batch-major)."""
    rng = np.random.default_rng(seed)
    dirs = 2 if direction == "bidirectional" else 1
    scale = 1 / np.sqrt(hidden)
    arrays = {
        "w": rng.uniform(-scale, scale, (dirs, gates * hidden, 3)),
        "r": rng.uniform(-scale, scale, (dirs, gates * hidden, hidden)),
        "b": rng.uniform(-scale, scale, (dirs, 2 * gates * hidden)),
    }
    if layout:
        extra = {**extra, "layout": 1}
    node = helper.make_node(op, ["x", "w", "r", "b", "lens"], ["y", "y_h"], hidden_size=hidden,
                            direction=direction, **extra)
    x_shape, y_shape, h_shape = [5, batch, 3], [5, dirs, batch, hidden], [dirs, batch, hidden]
    if layout:
        x_shape, y_shape, h_shape = [batch, 5, 3], [batch, 5, dirs, hidden], [batch, dirs, hidden]
    graph = helper.make_graph(
        [node], op.lower(), [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape),
         helper.make_tensor_value_info("y_h", TensorProto.FLOAT, h_shape)],
        [numpy_helper.from_array(a.astype(np.float32), n) for n, a in arrays.items()]
        + [numpy_helper.from_array(np.array([5, 3, 4][:batch], np.int32), "lens")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), x_shape


@pytest.mark.parametrize(
    "op, gates, direction, extra, batch, layout",
    [
        ("LSTM", 4, "bidirectional", {}, 2, 0),
        ("GRU", 3, "forward", {"linear_before_reset": 1}, 2, 0),
        ("GRU", 3, "reverse", {}, 2, 0),  # the reset gate's own loop keeps the plain form
        ("RNN", 1, "forward", {"activations": ["Tanh"]}, 2, 0),
        # The input parts' MatMul over rows of (step, batch entry): one row per step read
        # backwards (reverse, batch 1), and steps that are not rows of X (batch-major X).
        ("LSTM", 4, "reverse", {}, 1, 0),
        ("LSTM", 4, "bidirectional", {}, 3, 1),
    ],
)
def test_recurrent_lane_form_matches_onnxruntime(op, gates, direction, extra, batch, layout):
    ort = pytest.importorskip("onnxruntime")
    model, x_shape = recurrent_model(op, gates, 32, direction, extra, seed=gates, batch=batch, layout=layout)
    x = np.random.default_rng(1).standard_normal(x_shape).astype(np.float32)
    got = compile_and_run(model, {"x": x})
    if layout:  # onnxruntime runs only layout 0: the same layer, time-major
        reference, _ = recurrent_model(op, gates, 32, direction, extra, seed=gates, batch=batch)
        y, y_h = ort.InferenceSession(reference.SerializeToString()).run(None, {"x": x.transpose(1, 0, 2)})
        want = [y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2)]
    else:
        want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "op, gates, direction, extra, batch, layout",
    [
        ("LSTM", 4, "bidirectional", {}, 2, 0),
        ("GRU", 3, "reverse", {}, 1, 0),
        ("GRU", 3, "forward", {"linear_before_reset": 1}, 3, 1),
    ],
)
def test_recurrent_input_parts_in_chunks_match_onnxruntime(monkeypatch, op, gates, direction, extra, batch, layout):
    """5 steps in chunks of 2 (two whole chunks in a loop, then one step): each chunk's input
    parts are computed into the same XW just before its steps."""
    from zant.passes.onnx_to_uop import recurrent

    monkeypatch.setattr(recurrent, "XW_CHUNK", 2)
    test_recurrent_lane_form_matches_onnxruntime(op, gates, direction, extra, batch, layout)
