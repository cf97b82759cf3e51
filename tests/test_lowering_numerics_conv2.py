"""End-to-end numerics of ConvTranspose, LpPool, MaxPool's Indices, MaxUnpool, LRN and training
BatchNormalization against the ONNX reference evaluator.

Each test batches several cases into one model (one node per case, with its own inputs and
outputs), so one Zig build covers them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
from e2e import check_model, compile_and_run, random_inputs
from onnx import TensorProto, helper

FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64


@dataclass
class Case:
    """One node: its inputs (name → shape, float), its outputs (shape, element type) in order,
    None for an absent optional output."""

    op: str
    inputs: dict[str, list[int]]
    outputs: list[tuple[list[int], int] | None]
    attributes: dict = field(default_factory=dict)


def batched_model(cases: dict[str, Case], opset: int = 22):
    """One graph holding every case; names are prefixed with the case's position."""
    nodes, graph_inputs, graph_outputs = [], [], []
    for i, case in enumerate(cases.values()):
        names = [f"c{i}_{name}" if name else "" for name in case.inputs]
        outs = [f"c{i}_y{k}" if o is not None else "" for k, o in enumerate(case.outputs)]
        nodes.append(helper.make_node(case.op, names, outs, **case.attributes))
        graph_inputs += [
            helper.make_tensor_value_info(n, FLOAT, s)
            for n, s in zip(names, case.inputs.values())
            if n
        ]
        graph_outputs += [
            helper.make_tensor_value_info(n, o[1], o[0]) for n, o in zip(outs, case.outputs) if o
        ]
    graph = helper.make_graph(nodes, "cases", graph_inputs, graph_outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def y(*shape: int) -> list[tuple[list[int], int]]:
    return [(list(shape), FLOAT)]


CONV_TRANSPOSE = {
    "plain-bias": Case("ConvTranspose", {"x": [1, 2, 3, 3], "w": [2, 3, 3, 3], "b": [3]}, y(1, 3, 5, 5)),
    "strides-pads-output-padding": Case(
        "ConvTranspose",
        {"x": [2, 2, 3, 4], "w": [2, 2, 3, 2]},
        y(2, 2, 7, 8),
        {"strides": [3, 2], "pads": [1, 0, 2, 1], "output_padding": [1, 1]},
    ),
    "dilations": Case("ConvTranspose", {"x": [1, 1, 3, 3], "w": [1, 2, 2, 2]}, y(1, 2, 5, 5), {"dilations": [2, 2]}),
    "output-shape": Case(
        "ConvTranspose",
        {"x": [1, 1, 3, 3], "w": [1, 2, 3, 3]},
        y(1, 2, 10, 8),
        {"strides": [3, 2], "output_shape": [10, 8]},
    ),
    "same-upper": Case(
        "ConvTranspose", {"x": [1, 1, 3, 3], "w": [1, 2, 3, 3]}, y(1, 2, 6, 6), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}
    ),
    "same-lower": Case(
        "ConvTranspose", {"x": [1, 1, 3, 4], "w": [1, 1, 2, 3]}, y(1, 1, 6, 8), {"strides": [2, 2], "auto_pad": "SAME_LOWER"}
    ),
    "depthwise": Case("ConvTranspose", {"x": [1, 3, 4], "w": [3, 1, 3]}, y(1, 3, 9), {"group": 3, "strides": [2]}),
    "3d": Case("ConvTranspose", {"x": [1, 2, 2, 3, 2], "w": [2, 1, 2, 2, 3]}, y(1, 1, 3, 4, 4)),
}


def test_conv_transpose():
    check_model(batched_model(CONV_TRANSPOSE))


def _conv_transpose_numpy(x, w, bias, stride, group):
    """A direct scatter-form 1-D ConvTranspose (no pads), the definition itself."""
    n, c, length = x.shape
    cg, mg, k = c // group, w.shape[1], w.shape[2]
    out = np.zeros((n, mg * group, (length - 1) * stride + k), np.float64)
    for image, ci, i, kk, mm in np.ndindex(n, c, length, k, mg):
        out[image, ci // cg * mg + mm, i * stride + kk] += x[image, ci, i] * w[ci, mm, kk]
    return (out + bias[:, None]).astype(np.float32)


def test_conv_transpose_groups():
    """Groups with several channels each, and a bias: checked against the definition, since
    the reference evaluator handles neither (onnx 1.23's ConvTranspose slices W by output
    channel and adds B[0] to every group)."""
    model = batched_model({"g": Case("ConvTranspose", {"x": [2, 4, 3], "w": [4, 3, 2], "b": [6]}, y(2, 6, 6), {"group": 2, "strides": [2]})})
    feeds = random_inputs(model)
    (got,) = compile_and_run(model, feeds)
    np.testing.assert_allclose(got, _conv_transpose_numpy(feeds["c0_x"], feeds["c0_w"], feeds["c0_b"], 2, 2), rtol=1e-5, atol=1e-5)


LP_POOL = {
    "p2-strides": Case("LpPool", {"x": [1, 2, 5, 5]}, y(1, 2, 2, 2), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "p1-1d": Case("LpPool", {"x": [2, 3, 7]}, y(2, 3, 5), {"kernel_shape": [3], "p": 1}),
    "p3-dilations": Case("LpPool", {"x": [1, 1, 6, 6]}, y(1, 1, 4, 4), {"kernel_shape": [2, 2], "dilations": [2, 2], "p": 3}),
    "3d": Case("LpPool", {"x": [1, 1, 3, 4, 4]}, y(1, 1, 2, 3, 2), {"kernel_shape": [2, 2, 2], "strides": [1, 1, 2]}),
}


def test_lp_pool():
    check_model(batched_model(LP_POOL))


def test_lp_pool_padding_contributes_nothing():
    """The reference evaluator rescales an average (wrong at the border), so padded windows are
    checked against the definition: the p-norm of the taps inside the input."""
    model = batched_model({"pads": Case("LpPool", {"x": [1, 1, 4]}, y(1, 1, 3), {"kernel_shape": [3], "pads": [2, 1], "strides": [2]})})
    feeds = random_inputs(model)
    (got,) = compile_and_run(model, feeds)
    padded = np.pad(feeds["c0_x"][0, 0], (2, 1))
    want = [np.sqrt(np.sum(padded[o * 2 : o * 2 + 3] ** 2)) for o in range(3)]
    np.testing.assert_allclose(got[0, 0], want, rtol=1e-5)


def with_indices(*shape: int) -> list[tuple[list[int], int]]:
    return [(list(shape), FLOAT), (list(shape), INT64)]


MAX_POOL_INDICES = {
    "2d-pads-strides": Case(
        "MaxPool", {"x": [2, 2, 5, 5]}, with_indices(2, 2, 3, 3), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}
    ),
    "3d-storage-order": Case(
        "MaxPool", {"x": [1, 2, 3, 4, 5]}, with_indices(1, 2, 2, 2, 2), {"kernel_shape": [2, 2, 2], "strides": [1, 2, 2], "storage_order": 1}
    ),
    "1d-dilations-ceil": Case(
        "MaxPool", {"x": [2, 1, 7]}, with_indices(2, 1, 3), {"kernel_shape": [2], "dilations": [2], "strides": [2], "ceil_mode": 1}
    ),
}


def test_max_pool_indices():
    check_model(batched_model(MAX_POOL_INDICES))


def test_max_pool_indices_of_equal_values():
    """Ties (and a window whose values all equal the type's lowest) give the first position."""
    model = batched_model({"ties": Case("MaxPool", {"x": [1, 1, 4, 4]}, with_indices(1, 1, 2, 2), {"kernel_shape": [2, 2], "strides": [2, 2]})})
    x = np.zeros((1, 1, 4, 4), np.float32)
    x[0, 0, 2:, 2:] = -np.inf
    check_model(model, {"c0_x": x})


def test_max_unpool_inverts_max_pool():
    """MaxPool's values and indices unpooled into the input's shape, and into a larger
    output_shape (the unpooled block then sits at the origin, zero-padded)."""
    x_shape = [2, 2, 5, 5]
    attributes = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}
    nodes = [
        helper.make_node("MaxPool", ["x"], ["v", "i"], **attributes),
        helper.make_node("MaxUnpool", ["v", "i"], ["y"], **attributes),
        helper.make_node("MaxUnpool", ["v", "i", "shape"], ["y_big"], **attributes),
    ]
    graph = helper.make_graph(
        nodes,
        "unpool",
        [helper.make_tensor_value_info("x", FLOAT, x_shape)],
        [
            helper.make_tensor_value_info("y", FLOAT, x_shape),
            helper.make_tensor_value_info("y_big", FLOAT, [2, 2, 6, 7]),
        ],
        [helper.make_tensor("shape", INT64, [4], [2, 2, 6, 7])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    _, y_big = check_model(model)
    assert not y_big[:, :, 5:, :].any() and not y_big[:, :, :, 5:].any()


def test_lrn():
    """Odd and even window sizes. The reference evaluator (onnx 1.23) walks the window over
    range(N) instead of range(C), so N = C keeps it right."""
    check_model(
        batched_model(
            {
                "size-3": Case("LRN", {"x": [4, 4, 2, 3]}, y(4, 4, 2, 3), {"size": 3}),
                "size-2-attributes": Case(
                    "LRN", {"x": [5, 5, 3, 2]}, y(5, 5, 3, 2), {"size": 2, "alpha": 0.01, "beta": 0.5, "bias": 2.0}
                ),
            }
        )
    )


def test_lrn_3d_input():
    """A rank-3 input (the reference only takes rank 4): against the definition."""
    model = batched_model({"1d": Case("LRN", {"x": [1, 6, 4]}, y(1, 6, 4), {"size": 4, "alpha": 0.5})})
    feeds = random_inputs(model)
    (got,) = compile_and_run(model, feeds)
    x = feeds["c0_x"].astype(np.float64)
    squares = np.pad(x**2, ((0, 0), (1, 2), (0, 0)))
    window = sum(squares[:, j : j + 6] for j in range(4))
    np.testing.assert_allclose(got, x / (1.0 + 0.5 / 4 * window) ** 0.75, rtol=1e-5)


def test_batch_normalization_training():
    """Batch statistics, with both running mean/var outputs and with only the variance."""
    bn_inputs = {"x": [3, 2, 4, 5], "scale": [2], "bias": [2], "mean": [2], "var": [2]}
    model = batched_model(
        {
            "running-stats": Case(
                "BatchNormalization",
                bn_inputs,
                [([3, 2, 4, 5], FLOAT), ([2], FLOAT), ([2], FLOAT)],
                {"training_mode": 1, "momentum": 0.8, "epsilon": 1e-3},
            ),
            "y-only-1d": Case(
                "BatchNormalization",
                {"x": [4, 3], "scale": [3], "bias": [3], "mean": [3], "var": [3]},
                [([4, 3], FLOAT), None, ([3], FLOAT)],
                {"training_mode": 1},
            ),
        }
    )
    feeds = random_inputs(model)
    for name in ("c0_var", "c1_var"):
        feeds[name] = np.abs(feeds[name])
    check_model(model, feeds)


ERRORS = {
    "lp-pool-p0": (Case("LpPool", {"x": [1, 1, 4]}, y(1, 1, 3), {"kernel_shape": [2], "p": 0}), "LpPool.*p = 0"),
    "max-pool-storage-order": (
        Case("MaxPool", {"x": [1, 1, 4]}, with_indices(1, 1, 3), {"kernel_shape": [2], "storage_order": 2}),
        "MaxPool.*storage_order 2",
    ),
}


@pytest.mark.parametrize("case", ERRORS)
def test_unsupported_attributes_are_clear_errors(case):
    from zant.errors import ZantError

    node, message = ERRORS[case]
    model = batched_model({case: node})
    with pytest.raises(ZantError, match=message):
        compile_and_run(model, random_inputs(model))


def test_deform_conv():
    """Offsets ~ N(0, 1) move taps between pixels and past the border; mask, bias, groups and
    offset groups, strides, pads and dilations."""
    model = batched_model(
        {
            "plain": Case("DeformConv", {"x": [1, 1, 3, 3], "w": [1, 1, 2, 2], "offset": [1, 8, 2, 2]}, y(1, 1, 2, 2)),
            "mask-bias-pads": Case(
                "DeformConv",
                {"x": [2, 2, 4, 3], "w": [3, 2, 2, 2], "offset": [2, 8, 5, 4], "b": [3], "mask": [2, 4, 5, 4]},
                y(2, 3, 5, 4),
                {"pads": [1, 1, 1, 1]},
            ),
            "groups-offset-groups-strides-dilations": Case(
                "DeformConv",
                {"x": [1, 4, 5, 5], "w": [2, 2, 2, 2], "offset": [1, 16, 2, 2]},
                y(1, 2, 2, 2),
                {"group": 2, "offset_group": 2, "strides": [2, 2], "dilations": [2, 1]},
            ),
        }
    )
    check_model(model)


def test_deform_conv_1d():
    """One spatial dimension (the reference only takes 2-D): linear interpolation, zero outside."""
    model = batched_model({"1d": Case("DeformConv", {"x": [1, 1, 5], "w": [1, 1, 2], "offset": [1, 2, 4]}, y(1, 1, 4))})
    feeds = random_inputs(model)
    (got,) = compile_and_run(model, feeds)
    x, w, offset = feeds["c0_x"][0, 0], feeds["c0_w"][0, 0], feeds["c0_offset"][0]

    def sample(p):
        low = int(np.floor(p))
        at = lambda i: x[i] if 0 <= i < len(x) else 0.0
        return (1 - (p - low)) * at(low) + (p - low) * at(low + 1)

    want = [sum(w[k] * sample(o + k + offset[k, o]) for k in range(2)) for o in range(4)]
    np.testing.assert_allclose(got[0, 0], want, rtol=1e-5, atol=1e-6)


# -- ConvTranspose: auto_pad x output_padding, followed by another node, against onnxruntime ---


def _conv_transpose_sweep():
    """(x shape, W shape, attributes): every auto_pad with and without output_padding (less than
    the stride or the dilation, as the definition asks), strides and dilations."""
    cases = []
    for x_shape, w_shape, strides, dilations in [
        ([1, 1, 4, 3], [1, 1, 3, 3], [1, 3], [1, 1]),  # issue 32's
        ([1, 2, 3, 4], [2, 3, 2, 3], [2, 2], [1, 1]),
        ([1, 1, 3, 3], [1, 2, 2, 2], [3, 2], [2, 1]),
    ]:
        for auto_pad in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
            for output_padding in ([0, 0], [max(s, d) - 1 for s, d in zip(strides, dilations)], [0, 1]):
                if any(p >= max(s, d) for p, s, d in zip(output_padding, strides, dilations)):
                    continue
                attributes = {"strides": strides, "dilations": dilations, "auto_pad": auto_pad}
                if any(output_padding):
                    attributes["output_padding"] = output_padding
                if auto_pad == "NOTSET":
                    attributes["pads"] = [1, 0, 0, 1]
                cases.append((x_shape, w_shape, attributes))
    return cases


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_conv_transpose_auto_pad_with_output_padding(target):
    """onnx's shape inference adds output_padding to SAME's in·stride (x [1, 1, 4, 3], W 3x3,
    strides [1, 3], output_padding [0, 1]: 10 columns where onnxruntime and the definition give
    9), so with a node after it no declared shape compiled. Each ConvTranspose feeds a Relu.
    onnxruntime runs each ConvTranspose alone (its graph-level inference stumbles on the same
    shapes: "Shape mismatch attempting to re-use buffer")."""
    from zant.pipelines import pipeline_for

    ort = pytest.importorskip("onnxruntime")
    nodes, inputs, outputs, feeds, want = [], [], [], {}, []
    rng = np.random.default_rng(5)
    options = ort.SessionOptions()
    options.log_severity_level = 3  # the declared-shape warnings of the one-node probes
    for index, (x_shape, w_shape, attributes) in enumerate(_conv_transpose_sweep()):
        x, w, c, out = f"x{index}", f"w{index}", f"c{index}", f"y{index}"
        feeds[x] = rng.standard_normal(x_shape).astype(np.float32)
        feeds[w] = rng.standard_normal(w_shape).astype(np.float32)
        node = helper.make_node("ConvTranspose", [x, w], [c], **attributes)
        probe = helper.make_graph([node], "probe", [helper.make_tensor_value_info(x, FLOAT, x_shape), helper.make_tensor_value_info(w, FLOAT, w_shape)],
                                  [helper.make_tensor_value_info(c, FLOAT, None)])
        session = ort.InferenceSession(helper.make_model(probe, opset_imports=[helper.make_opsetid("", 19)]).SerializeToString(), options)
        want.append(np.maximum(session.run(None, {x: feeds[x], w: feeds[w]})[0], 0))
        nodes += [node, helper.make_node("Relu", [c], [out])]
        inputs += [helper.make_tensor_value_info(x, FLOAT, x_shape), helper.make_tensor_value_info(w, FLOAT, w_shape)]
        outputs.append(helper.make_tensor_value_info(out, FLOAT, list(want[-1].shape)))
        outputs[-1].doc_string = f"{x_shape} {w_shape} {attributes}"
    model = helper.make_model(helper.make_graph(nodes, "transposes", inputs, outputs), opset_imports=[helper.make_opsetid("", 19)])
    got = compile_and_run(model, feeds, pipeline=None if target == "host" else pipeline_for(target))
    for output, g, w in zip(outputs, got, want, strict=True):
        assert g.shape == w.shape, output.doc_string
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=output.doc_string)
