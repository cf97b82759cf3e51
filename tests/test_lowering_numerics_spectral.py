"""End-to-end numerics of DFT and STFT against the ONNX reference evaluator (one model each)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from e2e import check_model

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, initializers):
    info = lambda n, s: helper.make_tensor_value_info(n, F, s)  # noqa: E731
    graph = helper.make_graph(
        nodes,
        "spectral",
        [info(n, s) for n, s in inputs],
        [info(n, s) for n, s in outputs],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in initializers],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def test_dft_variants():
    """Forward, one-sided (RFFT), inverse, zero-padded and cut dft_length, IRFFT with an even
    and an odd length, and a non-default axis."""
    dft = lambda ins, out, **a: helper.make_node("DFT", ins, [out], **a)  # noqa: E731
    nodes = [
        dft(["x", "", "ax1"], "full"),
        dft(["x", "", "ax1"], "rfft", onesided=1),
        dft(["xc", "", "ax1"], "inverse", inverse=1),
        dft(["xc", "n8", "ax1"], "padded"),
        dft(["xc", "n3", "ax1"], "cut"),
        dft(["half", "", "ax1"], "irfft_even", inverse=1, onesided=1),
        dft(["half", "n5", "ax1"], "irfft_odd", inverse=1, onesided=1),
        dft(["xc", "", "ax0"], "axis0"),
    ]
    inputs = [("x", [2, 6, 1]), ("xc", [2, 5, 2]), ("half", [2, 4, 2])]
    initializers = [
        ("ax1", np.array(1, np.int64)), ("ax0", np.array(0, np.int64)),
        ("n8", np.array(8, np.int64)), ("n3", np.array(3, np.int64)), ("n5", np.array(5, np.int64)),
    ]
    outputs = [
        ("full", [2, 6, 2]), ("rfft", [2, 4, 2]), ("inverse", [2, 5, 2]), ("padded", [2, 8, 2]),
        ("cut", [2, 3, 2]), ("irfft_even", [2, 6, 1]), ("irfft_odd", [2, 5, 1]), ("axis0", [2, 5, 2]),
    ]
    check_model(_model(nodes, inputs, outputs, initializers), rtol=1e-4, atol=1e-5)


def test_stft_with_window():
    """Three frames of 8 samples every 4, two-sided, Hann-like window; and without a window."""
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(8) / 8)).astype(np.float32)
    nodes = [
        helper.make_node("STFT", ["s", "step", "w"], ["y"], onesided=0),
        helper.make_node("STFT", ["s", "step", "", "len"], ["y2"], onesided=0),
    ]
    initializers = [("step", np.array(4, np.int64)), ("w", window), ("len", np.array(8, np.int64))]
    model = _model(nodes, [("s", [2, 16, 1])], [("y", [2, 3, 8, 2]), ("y2", [2, 3, 8, 2])], initializers)
    check_model(model, rtol=1e-4, atol=1e-5)
