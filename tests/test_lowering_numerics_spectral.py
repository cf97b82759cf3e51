"""End-to-end numerics of DFT, STFT and MelWeightMatrix against the ONNX reference evaluator."""

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


def test_stft_default_onesided_with_constant_frame_length():
    """`onesided` omitted (default 1) and a constant frame_length: ONNX's shape inference reads
    the omission as two-sided ([2, 3, 8, 2]) and would contradict the declared onesided shape."""
    node = helper.make_node("STFT", ["s", "step", "", "len"], ["y"])
    initializers = [("step", np.array(4, np.int64)), ("len", np.array(8, np.int64))]
    model = _model([node], [("s", [2, 16, 1])], [("y", [2, 3, 5, 2])], initializers)
    check_model(model, rtol=1e-4, atol=1e-5)


MEL_PARAMETERS = [(8, 16, 8192, 0.0, 4096.0), (3, 8, 8000, 0.0, 4000.0), (10, 64, 16000, 20.0, 7600.0), (4, 10, 100, 5.0, 20.0)]


def test_mel_weight_matrix_table_matches_the_reference():
    from onnx.reference import ReferenceEvaluator

    from zant.passes.onnx_to_uop.spectral import mel_weight_matrix

    node = helper.make_node("MelWeightMatrix", ["n", "d", "r", "lo", "hi"], ["w"])
    for n, d, r, lo, hi in MEL_PARAMETERS:
        feeds = {"n": np.int64(n), "d": np.int64(d), "r": np.int64(r), "lo": np.float32(lo), "hi": np.float32(hi)}
        (want,) = ReferenceEvaluator(node).run(None, feeds)
        np.testing.assert_allclose(mel_weight_matrix(n, d, r, lo, hi), want, rtol=1e-6, err_msg=str((n, d, r, lo, hi)))


def test_mel_weight_matrix_of_constants_compiles_to_a_table():
    n, d, r, lo, hi = MEL_PARAMETERS[2]
    integer = lambda name, v: numpy_helper.from_array(np.int64(v), name)  # noqa: E731
    graph = helper.make_graph(
        [helper.make_node("MelWeightMatrix", ["n", "d", "r", "lo", "hi"], ["w"]), helper.make_node("Relu", ["x"], ["y"])],
        "mel",
        [helper.make_tensor_value_info("x", F, [2])],
        [helper.make_tensor_value_info("w", F, [d // 2 + 1, n]), helper.make_tensor_value_info("y", F, [2])],
        [integer("n", n), integer("d", d), integer("r", r),
         numpy_helper.from_array(np.float32(lo), "lo"), numpy_helper.from_array(np.float32(hi), "hi")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    check_model(model, {"x": np.array([-1.0, 2.0], np.float32)})


# -- the f32 inverse in NumPy's order ----------------------------------------------------------

# Lengths through every hard-coded pass (2, 3, 4, 5, 7, 8, 11 and their products), and 13 and
# 26, whose prime 13 takes pocketfft's generic pass: those keep the f64 sums.
POCKETFFT_LENGTHS = [1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 16, 20, 22, 24, 30, 32, 40, 49, 64, 77, 96]


def test_the_pocketfft_model_is_numpys_single_precision_inverse():
    """fft.transform, the order the lowering emits, equals numpy.fft.ifft of complex64 data bit
    for bit (the scale float32(1/N) included)."""
    from zant.passes.onnx_to_uop import fft

    rng = np.random.default_rng(1)
    for n in POCKETFFT_LENGTHS:
        x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
        want = np.fft.ifft(x)
        assert want.dtype == np.complex64
        got = fft.transform(x, forward=False, scale=np.float32(1) / np.float32(n))
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32), err_msg=f"length {n}")
    assert fft.factors(13) is None and fft.factors(26) is None and fft.factors(10) == [2, 5]
    assert fft.factors(16) == [2, 8] and fft.factors(12) == [4, 3]


def test_numpys_forward_complex64_fft_runs_in_double():
    """Why only the inverse takes the f32 order: NumPy's forward transform of complex64 data
    is its complex128 transform rounded (the f64 sums' result), the inverse is not."""
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((8, 10)) + 1j * rng.standard_normal((8, 10))).astype(np.complex64)
    np.testing.assert_array_equal(np.fft.fft(x), np.fft.fft(x.astype(np.complex128)).astype(np.complex64))
    assert (np.fft.ifft(x) != np.fft.ifft(x.astype(np.complex128)).astype(np.complex64)).any()


def test_inverse_dft_equals_numpy_bit_for_bit():
    """The compiled f32 inverse along axis 1 (complex and real input, a zero-padded and a cut
    dft_length) is numpy.fft.ifft's complex64 result exactly; length 13 keeps the f64 sums
    (within an ulp of the exact DFT)."""
    from e2e import compile_and_run

    dft = lambda ins, out, **a: helper.make_node("DFT", ins, [out], inverse=1, **a)  # noqa: E731
    nodes = [
        dft(["x10", "", "ax"], "y10"), dft(["x16", "", "ax"], "y16"), dft(["x22", "", "ax"], "y22"),
        dft(["r12", "", "ax"], "y12"), dft(["x10", "n24", "ax"], "y24"), dft(["x16", "n6", "ax"], "y6"),
        dft(["x13", "", "ax"], "y13"),
    ]
    inputs = [("x10", [3, 10, 2]), ("x16", [2, 16, 2]), ("x22", [1, 22, 2]), ("r12", [2, 12, 1]), ("x13", [2, 13, 2])]
    outputs = [
        ("y10", [3, 10, 2]), ("y16", [2, 16, 2]), ("y22", [1, 22, 2]), ("y12", [2, 12, 2]),
        ("y24", [3, 24, 2]), ("y6", [2, 6, 2]), ("y13", [2, 13, 2]),
    ]
    initializers = [("ax", np.array(1, np.int64)), ("n24", np.array(24, np.int64)), ("n6", np.array(6, np.int64))]
    model = _model(nodes, inputs, outputs, initializers)
    rng = np.random.default_rng(3)
    feeds = {name: (rng.standard_normal(shape) * 10).astype(np.float32) for name, shape in inputs}
    got = dict(zip([name for name, _ in outputs], compile_and_run(model, feeds)))

    def ifft(name: str, n: int | None = None) -> np.ndarray:
        x = feeds[name]
        signal = x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0]
        y = np.fft.ifft(signal.astype(np.complex64), n=n, axis=1)
        return np.stack([y.real, y.imag], axis=-1)

    for out, name, n in [("y10", "x10", None), ("y16", "x16", None), ("y22", "x22", None), ("y12", "r12", None),
                         ("y24", "x10", 24), ("y6", "x16", 6)]:
        np.testing.assert_array_equal(got[out].view(np.uint32), ifft(name, n).view(np.uint32), err_msg=out)
    x13 = feeds["x13"][..., 0] + 1j * feeds["x13"][..., 1]
    exact = np.fft.ifft(x13, axis=1)
    np.testing.assert_allclose(got["y13"], np.stack([exact.real, exact.imag], axis=-1), rtol=0, atol=2e-6)
