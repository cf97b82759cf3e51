"""Models of the oldest opsets, imported as they are written (`zant/frontend/legacy_opsets.py`):
converted to the current opset in hops with shape inference between them, their old forms
(PRelu's per-channel slope, BatchNormalization's `spatial`, `consumed_inputs`, `is_test`,
Reshape's `shape` attribute, Add's `broadcast`/`axis`, Upsample) meaning what they meant.

onnxruntime runs opset 7 and newer, ONNX's reference evaluator not all of opset 1; the opset-1
models are checked against the same graph written by hand at opset 13 (run by onnxruntime), or
against NumPy.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from e2e import compile_and_run
from onnx import TensorProto, helper, numpy_helper

from zant.errors import ZantError
from zant.frontend.onnx_importer import import_model

def _value(name: str, shape, element_type=TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, element_type, list(shape))


def legacy_model(nodes, inputs, outputs, opset: int, initializers=()) -> onnx.ModelProto:
    """A model of `opset` as its exporters wrote it: IR version 3 (initializers listed as graph
    inputs too) up to opset 7."""
    initializers = list(initializers)
    ir_version = 3 if opset <= 7 else 4
    if ir_version < 4:
        inputs = [*inputs, *(_value(t.name, t.dims, t.data_type) for t in initializers)]
    graph = helper.make_graph(nodes, "legacy", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version)
    onnx.checker.check_model(model)
    return model


def _weights(rng: np.random.Generator, name: str, *shape: int) -> onnx.TensorProto:
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)


def onnxruntime_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def assert_close(got: list[np.ndarray], want: list[np.ndarray], rtol=1e-4, atol=1e-5) -> None:
    assert len(got) == len(want)
    for index, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"output {index}: shape {g.shape} != {w.shape}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"output {index}")


# -- mnist-1: opset 1 ----------------------------------------------------------------------------


def mnist_1(opset: int, seed: int = 0) -> onnx.ModelProto:
    """The layers of the model zoo's mnist-1 (opset 1): Conv, Add(broadcast=1, axis=1) of the bias,
    Relu, MaxPool, twice, Reshape by its `shape` attribute, MatMul, Add. With `opset` 13 the same
    graph in today's forms (the reference)."""
    rng = np.random.default_rng(seed)
    shapes = {"W1": (8, 1, 5, 5), "B1": (8, 1, 1), "W2": (16, 8, 5, 5), "B2": (16, 1, 1), "W3": (16, 4, 4, 10), "B3": (1, 10)}
    weights = [_weights(rng, name, *shape) for name, shape in shapes.items()]
    old = opset < 5

    def reshape(source: str, target: str, shape: list[int]) -> list[onnx.NodeProto]:
        if old:
            return [helper.make_node("Reshape", [source], [target], shape=shape)]
        constant = numpy_helper.from_array(np.array(shape, np.int64))
        return [
            helper.make_node("Constant", [], [f"{target}_shape"], value=constant),
            helper.make_node("Reshape", [source, f"{target}_shape"], [target]),
        ]

    def bias(source: str, b: str, target: str) -> onnx.NodeProto:
        legacy = {"broadcast": 1, "axis": 1} if old else {}
        return helper.make_node("Add", [source, b], [target], **legacy)

    conv = {"kernel_shape": [5, 5], "strides": [1, 1], "pads": [2, 2, 2, 2], "group": 1, "dilations": [1, 1]}
    nodes = [
        *reshape("W3", "W3_matrix", [256, 10]),
        helper.make_node("Conv", ["x", "W1"], ["conv1"], **conv),
        bias("conv1", "B1", "biased1"),
        helper.make_node("Relu", ["biased1"], ["relu1"]),
        helper.make_node("MaxPool", ["relu1"], ["pool1"], kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0]),
        helper.make_node("Conv", ["pool1", "W2"], ["conv2"], **conv),
        bias("conv2", "B2", "biased2"),
        helper.make_node("Relu", ["biased2"], ["relu2"]),
        helper.make_node("MaxPool", ["relu2"], ["pool2"], kernel_shape=[3, 3], strides=[3, 3], pads=[0, 0, 0, 0]),
        *reshape("pool2", "flat", [1, 256]),
        helper.make_node("MatMul", ["flat", "W3_matrix"], ["logits"]),
        helper.make_node("Add", ["logits", "B3"], ["y"]),
    ]
    return legacy_model(nodes, [_value("x", [1, 1, 28, 28])], [_value("y", [1, 10])], opset, weights)


def test_mnist_1_opset_1_matches_its_opset_13_twin():
    feeds = {"x": np.random.default_rng(1).standard_normal((1, 1, 28, 28)).astype(np.float32)}
    assert_close(compile_and_run(mnist_1(1), feeds), onnxruntime_outputs(mnist_1(13), feeds), rtol=1e-4, atol=1e-4)


# -- PRelu <= 6: the slope per channel ------------------------------------------------------------

PYTORCH_CONVERTED = Path(os.path.dirname(onnx.__file__)) / "backend" / "test" / "data" / "pytorch-converted"


@pytest.mark.parametrize("case", ["test_PReLU_1d_multiparam", "test_PReLU_2d_multiparam", "test_PReLU_3d_multiparam"])
def test_onnx_pytorch_converted_prelu_multiparam(case):
    """ONNX's own cases (opset 6): a slope of C values over an (N, C, ...) input."""
    folder = PYTORCH_CONVERTED / case
    model = onnx.load(folder / "model.onnx")
    data = folder / "test_data_set_0"
    x = numpy_helper.to_array(onnx.load_tensor(data / "input_0.pb"))
    want = numpy_helper.to_array(onnx.load_tensor(data / "output_0.pb"))
    (name,) = [v.name for v in model.graph.input if v.name not in {t.name for t in model.graph.initializer}]
    assert_close(compile_and_run(model, {name: x}), [want])


# -- opset 1 forms: consumed_inputs, is_test, broadcast/axis, Gemm's C, Softmax's 2-D view ------


def test_opset_1_forms_match_numpy():
    rng = np.random.default_rng(3)
    channels = 3
    scale, bias, mean = (rng.standard_normal(channels).astype(np.float32) for _ in range(3))
    var = rng.uniform(0.5, 2, channels).astype(np.float32)
    slope = np.array([0.1, -0.5, 2.0], np.float32)
    row = rng.standard_normal(4).astype(np.float32)
    weights = rng.standard_normal((channels * 4, 5)).astype(np.float32)
    gemm_c = rng.standard_normal(5).astype(np.float32)
    initializers = [
        numpy_helper.from_array(v, n)
        for n, v in dict(scale=scale, bias=bias, mean=mean, var=var, slope=slope, row=row, weights=weights, gemm_c=gemm_c).items()
    ]
    nodes = [
        helper.make_node(
            "BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["bn"],
            is_test=1, epsilon=1e-3, consumed_inputs=[0, 0, 0, 1, 1],
        ),
        helper.make_node("PRelu", ["bn", "slope"], ["prelu"], consumed_inputs=[0, 0]),
        helper.make_node("Dropout", ["prelu"], ["dropped"], is_test=1, ratio=0.25),
        helper.make_node("Mul", ["dropped", "row"], ["scaled"], broadcast=1, axis=2),
        helper.make_node("Flatten", ["scaled"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", "weights", "gemm_c"], ["gemm"], broadcast=1, alpha=0.5),
        helper.make_node("Softmax", ["gemm"], ["y"], axis=1),
    ]  # fmt: skip
    model = legacy_model(nodes, [_value("x", [2, channels, 4])], [_value("y", [2, 5])], 1, initializers)
    x = rng.standard_normal((2, channels, 4)).astype(np.float32)
    per_channel = lambda v: v[None, :, None]  # noqa: E731
    normalized = (x - per_channel(mean)) / np.sqrt(per_channel(var) + 1e-3) * per_channel(scale) + per_channel(bias)
    activated = np.where(normalized < 0, per_channel(slope) * normalized, normalized)
    logits = 0.5 * (activated * row).reshape(2, -1) @ weights + gemm_c
    expected = np.exp(logits - logits.max(1, keepdims=True))
    assert_close(compile_and_run(model, {"x": x}), [expected / expected.sum(1, keepdims=True)])


# -- BatchNormalization <= 8: spatial -------------------------------------------------------------


def test_batchnorm_spatial_attribute_of_opset_7():
    """spatial=0: statistics per element (C, D1) instead of per channel; spatial=1 beside it."""
    rng = np.random.default_rng(4)
    element = {n: rng.uniform(0.5, 1.5, (3, 4)).astype(np.float32) for n in ("s0", "b0", "m0", "v0")}
    channel = {n: rng.uniform(0.5, 1.5, 3).astype(np.float32) for n in ("s1", "b1", "m1", "v1")}
    initializers = [numpy_helper.from_array(v, n) for n, v in {**element, **channel}.items()]
    nodes = [
        helper.make_node("BatchNormalization", ["x", "s0", "b0", "m0", "v0"], ["y0"], spatial=0, epsilon=1e-2),
        helper.make_node("BatchNormalization", ["x", "s1", "b1", "m1", "v1"], ["y1"], spatial=1),
    ]
    outputs = [_value("y0", [2, 3, 4]), _value("y1", [2, 3, 4])]
    model = legacy_model(nodes, [_value("x", [2, 3, 4])], outputs, 7, initializers)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    e, c = element, {n: v[:, None] for n, v in channel.items()}
    want = [
        (x - e["m0"]) / np.sqrt(e["v0"] + 1e-2) * e["s0"] + e["b0"],
        (x - c["m1"]) / np.sqrt(c["v1"] + 1e-5) * c["s1"] + c["b1"],
    ]
    assert_close(compile_and_run(model, {"x": x}), want)


# -- Upsample (opsets 7 and 9) --------------------------------------------------------------------


@pytest.mark.parametrize("opset", [7, 9])
def test_upsample_matches_onnxruntime(opset):
    nodes, initializers = [], []
    for mode in ("nearest", "linear"):
        if opset < 9:
            nodes.append(helper.make_node("Upsample", ["x"], [mode], mode=mode, scales=[1.0, 1.0, 2.0, 3.0]))
        else:
            nodes.append(helper.make_node("Upsample", ["x", "scales"], [mode], mode=mode))
    if opset >= 9:
        initializers.append(numpy_helper.from_array(np.array([1, 1, 2, 3], np.float32), "scales"))
    outputs = [_value("nearest", [1, 2, 6, 9]), _value("linear", [1, 2, 6, 9])]
    model = legacy_model(nodes, [_value("x", [1, 2, 3, 3])], outputs, opset, initializers)
    feeds = {"x": np.random.default_rng(5).standard_normal((1, 2, 3, 3)).astype(np.float32)}
    assert_close(compile_and_run(model, feeds), onnxruntime_outputs(model, feeds))


# -- what stays refused is named ------------------------------------------------------------------


def _import(model: onnx.ModelProto, tmp_path: Path):
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    return import_model(str(path))


def test_training_mode_batchnorm_is_a_clear_error(tmp_path):
    initializers = [numpy_helper.from_array(np.ones(3, np.float32), n) for n in ("s", "b", "m", "v")]
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], is_test=0, name="bn1")
    model = legacy_model([node], [_value("x", [2, 3, 4])], [_value("y", [2, 3, 4])], 6, initializers)
    with pytest.raises(ZantError, match=r"node 'bn1' \(BatchNormalization\) of opset 6: is_test=0 \(training mode\)"):
        _import(model, tmp_path)


def test_old_form_without_adapter_names_node_op_and_opset(tmp_path):
    node = helper.make_node("Pad", ["x"], ["y"], paddings=[0, 1, 0, 1], name="pad1")
    model = legacy_model([node], [_value("x", [2, 3])], [_value("y", [2, 5])], 1)
    with pytest.raises(ZantError, match=r"node 'pad1' \(Pad\) of opset 1: the ONNX version converter cannot upgrade it"):
        _import(model, tmp_path)


def test_a_conversion_that_changes_the_graph_signature_is_refused():
    """Should an adapter rewrite the declared inputs (as onnx's Scan 8 -> 9 adapter does with the
    batch dimension), the caller's buffers would no longer be the model's."""
    from zant.frontend.legacy_opsets import _check_signature_kept

    before = legacy_model([helper.make_node("Relu", ["x"], ["y"])], [_value("x", [1, 2])], [_value("y", [1, 2])], 8)
    after = onnx.ModelProto()
    after.CopyFrom(before)
    after.graph.input[0].CopyFrom(_value("x", [2]))
    with pytest.raises(ZantError, match=r"from opset 8 to 21 changes graph tensor 'x' from \[1, 2\] to \[2\]"):
        _check_signature_kept(before, after, 8, 21)


# -- Scan <= 8: a batch axis and sequence_lens ----------------------------------------------------


def _scan8_model(batch: int, steps: int, sequence_lens: np.ndarray | None = None) -> onnx.ModelProto:
    """s' = s + a * b, out = s' - a over `steps`, `b` scanned in reverse; `batch` entries."""
    body = helper.make_graph(
        [
            helper.make_node("Mul", ["a", "b"], ["ab"]),
            helper.make_node("Add", ["s", "ab"], ["s_next"]),
            helper.make_node("Sub", ["s_next", "a"], ["out"]),
        ],
        "body",
        [_value("s", [2]), _value("a", [2]), _value("b", [2])],
        [_value("s_next", [2]), _value("out", [2])],
    )
    lengths = "" if sequence_lens is None else "lens"
    node = helper.make_node(
        "Scan", [lengths, "s0", "xa", "xb"], ["s_final", "outs"],
        body=body, num_scan_inputs=2, directions=[0, 1], name="scan8",
    )
    inputs = [_value("s0", [batch, 2]), _value("xa", [batch, steps, 2]), _value("xb", [batch, steps, 2])]
    outputs = [_value("s_final", [batch, 2]), _value("outs", [batch, steps, 2])]
    initializers = [] if sequence_lens is None else [numpy_helper.from_array(sequence_lens, "lens")]
    return legacy_model([node], inputs, outputs, 8, initializers)


def _scan8_numpy(s0: np.ndarray, xa: np.ndarray, xb: np.ndarray) -> list[np.ndarray]:
    finals, outs = [], []
    for s, a_steps, b_steps in zip(s0, xa, xb):
        rows = []
        for a, b in zip(a_steps, b_steps[::-1]):
            s = s + a * b
            rows.append(s - a)
        finals.append(s)
        outs.append(np.stack(rows))
    return [np.stack(finals), np.stack(outs)]


@pytest.mark.parametrize("sequence_lens", [None, np.array([4, 4, 4], np.int64)])
def test_scan_8_runs_each_batch_entry(sequence_lens):
    """Three batch entries, a forward and a reverse scan input; the declared shapes are kept."""
    rng = np.random.default_rng(6)
    shapes = {"s0": (3, 2), "xa": (3, 4, 2), "xb": (3, 4, 2)}
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
    got = compile_and_run(_scan8_model(3, 4, sequence_lens), feeds)
    assert_close(got, _scan8_numpy(feeds["s0"], feeds["xa"], feeds["xb"]))


def test_onnx_scan_sum_of_opset_8_matches_its_data():
    from onnx.backend.test.case.node import collect_testcases

    (case,) = [c for c in collect_testcases() if c.name == "test_scan_sum"]
    assert case.model.opset_import[0].version == 8
    (inputs, outputs), *_ = case.data_sets
    feeds = {v.name: np.asarray(x) for v, x in zip(case.model.graph.input, inputs)}
    assert_close(compile_and_run(case.model, feeds), [np.asarray(y) for y in outputs])


def test_scan_8_shorter_sequences_are_refused_by_name(tmp_path):
    model = _scan8_model(2, 4, np.array([4, 3], np.int64))
    message = r"node 'scan8' \(Scan\) of opset 8: sequence_lens 'lens' must be a constant equal to the sequence length 4"
    with pytest.raises(ZantError, match=message):
        _import(model, tmp_path)
