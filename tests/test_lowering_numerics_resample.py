"""End-to-end numerics of the resampling lowerings (Resize, Upsample, GridSample, RoiAlign, Col2Im)
against the ONNX reference evaluator. Each test compiles one model that holds several nodes
of one op, one per attribute combination, to keep the number of Zig builds small."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from e2e import check_model, compile_and_run
from zant.driver import CompileOptions, compile_model
from zant.errors import ZantError


def multi_node_model(op_type, x_shape, cases, opset=21, elem_type=TensorProto.FLOAT, extra_inputs=()):
    """One input `x` (plus `extra_inputs`: (name, shape) pairs), one node per case.

    `cases` holds (constant inputs as name → array or None, attributes, output shape); the
    constants become initializers, None an absent optional input.
    """
    nodes, outputs, initializers = [], [], []
    for index, (constants, attributes, out_shape) in enumerate(cases):
        names = ["x", *(name for name, _ in extra_inputs)]
        for key, array in constants.items():
            if array is None:
                names.append("")
                continue
            name = f"{key}{index}"
            initializers.append(numpy_helper.from_array(np.asarray(array), name))
            names.append(name)
        while names and names[-1] == "":
            names.pop()
        nodes.append(helper.make_node(op_type, names, [f"y{index}"], **attributes))
        outputs.append(helper.make_tensor_value_info(f"y{index}", elem_type, out_shape))
    graph_inputs = [helper.make_tensor_value_info("x", elem_type, x_shape)] + [
        helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in extra_inputs
    ]
    graph = helper.make_graph(nodes, op_type.lower(), graph_inputs, outputs, initializer=initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def scales(*values):
    return {"roi": None, "scales": np.array(values, np.float32)}


def sizes(*values, roi=None):
    return {"roi": None if roi is None else np.array(roi, np.float32), "scales": None, "sizes": np.array(values, np.int64)}


def test_resize_nearest_modes():
    """Every nearest_mode with several coordinate transformations, up and down, N-D and axes."""
    x_shape = [2, 3, 5]
    cases = [
        (scales(1, 2.0, 1.6), {"mode": "nearest"}, [2, 6, 8]),
        (scales(1, 0.7, 0.6), {"mode": "nearest", "nearest_mode": "round_prefer_ceil"}, [2, 2, 3]),
        # asymmetric ×2 puts every other position on a tie, where the two round modes differ
        (scales(1, 2, 2), {"mode": "nearest", "coordinate_transformation_mode": "asymmetric"}, [2, 6, 10]),
        (scales(1, 2, 2), {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                           "nearest_mode": "round_prefer_ceil"}, [2, 6, 10]),
        (sizes(4, 7), {"mode": "nearest", "nearest_mode": "floor", "axes": [1, 2],
                       "coordinate_transformation_mode": "align_corners"}, [2, 4, 7]),
        (sizes(9), {"mode": "nearest", "nearest_mode": "ceil", "axes": [2],
                    "coordinate_transformation_mode": "asymmetric"}, [2, 3, 9]),
        (sizes(3, 2, 8), {"mode": "nearest", "coordinate_transformation_mode": "pytorch_half_pixel"}, [3, 2, 8]),
        (sizes(6, 6), {"mode": "nearest", "axes": [2, 1], "keep_aspect_ratio_policy": "not_larger"}, [2, 4, 6]),
        (sizes(6, 6), {"mode": "nearest", "axes": [1, 2], "keep_aspect_ratio_policy": "not_smaller"}, [2, 6, 10]),
    ]
    check_model(multi_node_model("Resize", x_shape, cases))


def test_resize_linear_and_cubic():
    """Interpolating modes over every coordinate transformation, exclude_outside and antialias."""
    x_shape = [1, 2, 5, 6]
    cases = [
        (scales(1, 1, 1.5, 0.5), {"mode": "linear"}, [1, 2, 7, 3]),
        # 6 x 0.5 = 3 exactly: where in_size·scale is not whole, onnx.reference's align_corners
        # differs from the definition (test_resize_every_mode_... checks it against onnxruntime)
        (scales(1, 1, 2, 0.5), {"mode": "linear", "coordinate_transformation_mode": "align_corners"}, [1, 2, 10, 3]),
        (sizes(1, 2, 3, 9), {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, [1, 2, 3, 9]),
        (scales(1, 1, 0.7, 1.3), {"mode": "linear", "coordinate_transformation_mode": "half_pixel_symmetric"}, [1, 2, 3, 7]),
        (scales(1, 1, 1.6, 2), {"mode": "cubic"}, [1, 2, 8, 12]),
        (scales(1, 1, 0.8, 0.5), {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1}, [1, 2, 4, 3]),
        (scales(1, 1, 1.4, 1.5), {"mode": "cubic", "coordinate_transformation_mode": "asymmetric"}, [1, 2, 6, 9]),
        (sizes(3, 4), {"mode": "linear", "antialias": 1, "axes": [2, 3]}, [1, 2, 3, 4]),
        (scales(1, 1, 0.6, 0.4), {"mode": "cubic", "antialias": 1}, [1, 2, 3, 2]),
    ]
    check_model(multi_node_model("Resize", x_shape, cases))


def test_resize_tf_crop_and_resize():
    """roi crops, positions outside the input take extrapolation_value (linear, cubic, nearest)."""
    x_shape = [1, 1, 5, 4]
    crop = {"coordinate_transformation_mode": "tf_crop_and_resize"}
    cases = [
        (sizes(1, 1, 3, 3, roi=[0, 0, 0.4, 0.6, 1, 1, 0.8, 0.8]), {"mode": "linear", **crop}, [1, 1, 3, 3]),
        (sizes(4, 5, roi=[-0.3, 0.2, 1.2, 0.9]), {"mode": "linear", "axes": [2, 3], "extrapolation_value": 10.0, **crop}, [1, 1, 4, 5]),
        (sizes(5, 3, roi=[0.1, -0.5, 0.9, 1.5]), {"mode": "cubic", "axes": [3, 2], "extrapolation_value": -2.0, **crop}, [1, 1, 3, 5]),
        (sizes(1, 1, 6, 1, roi=[0, 0, -0.2, 0.5, 1, 1, 1.1, 0.5]), {"mode": "nearest", "extrapolation_value": 3.0, **crop}, [1, 1, 6, 1]),
    ]
    check_model(multi_node_model("Resize", x_shape, cases))


def test_resize_integer_and_half():
    """uint8 interpolation rounds and saturates; f16 nearest is a plain gather."""
    cases = [
        (scales(1, 1.5, 1.75), {"mode": "linear"}, [1, 6, 7]),
        (scales(1, 1.5, 1.75), {"mode": "cubic"}, [1, 6, 7]),
        (scales(1, 0.5, 2), {"mode": "nearest"}, [1, 2, 8]),
    ]
    model = multi_node_model("Resize", [1, 4, 4], cases, elem_type=TensorProto.UINT8)
    rng = np.random.default_rng(1)
    check_model(model, {"x": rng.integers(0, 256, [1, 4, 4]).astype(np.uint8)})
    half = multi_node_model("Resize", [1, 4, 4], cases[2:], elem_type=TensorProto.FLOAT16)
    check_model(half, {"x": rng.standard_normal([1, 4, 4]).astype(np.float16)})


def test_upsample_nearest():
    """An opset-9 Upsample reaches the pass as the Resize the frontend converts it to."""
    cases = [({"scales": np.array([1, 1, 2, 3], np.float32)}, {"mode": "nearest"}, [1, 2, 4, 6])]
    check_model(multi_node_model("Upsample", [1, 2, 2, 2], cases, opset=9))


UNSUPPORTED = {
    "roialign-adaptive-sampling": (
        helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], output_height=2, output_width=2),
        [("x", TensorProto.FLOAT, [1, 1, 4, 4]), ("rois", TensorProto.FLOAT, [1, 4]), ("b", TensorProto.INT64, [1])],
        [1, 1, 2, 2],
        "RoiAlign.*sampling_ratio 0",
    ),
}


@pytest.mark.parametrize("case", UNSUPPORTED)
def test_unsupported_is_an_error_naming_the_node(case, tmp_path):
    node, inputs, out_shape, message = UNSUPPORTED[case]
    graph = helper.make_graph(
        [node],
        case,
        [helper.make_tensor_value_info(*i) for i in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
    )
    path = tmp_path / "model.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)]).SerializeToString())
    with pytest.raises(ZantError, match=message):
        compile_model(path, tmp_path / "out", CompileOptions(name="m"))


GRID_MODES = ["nearest", "linear", "cubic"]
GRID_PADDINGS = ["zeros", "border", "reflection"]


def grid_cases(modes, out_shape, aligns=(0, 1)):
    return [
        ({}, {"mode": mode, "padding_mode": padding, "align_corners": align}, out_shape)
        for mode in modes
        for padding in GRID_PADDINGS
        for align in aligns
    ]


def grid_inputs(x_shape, grid_shape):
    """Grid coordinates up to ±3.5: reflection padding folds some of them more than once."""
    rng = np.random.default_rng(2)
    return {
        "x": rng.standard_normal(x_shape).astype(np.float32),
        "grid": rng.uniform(-3.5, 3.5, grid_shape).astype(np.float32),
    }


def test_gridsample_2d():
    """Every mode × padding mode × align_corners."""
    model = multi_node_model(
        "GridSample", [2, 3, 4, 5], grid_cases(GRID_MODES, [2, 3, 3, 6]), opset=22, extra_inputs=[("grid", [2, 3, 6, 2])]
    )
    check_model(model, grid_inputs([2, 3, 4, 5], [2, 3, 6, 2]))


def test_gridsample_3d():
    """Volumetric sampling: the grid's last axis lists (x, y, z), innermost input axis first."""
    cases = grid_cases(["nearest"], [1, 2, 2, 3, 2], [0]) + grid_cases(["linear"], [1, 2, 2, 3, 2], [1])
    model = multi_node_model(
        "GridSample", [1, 2, 3, 4, 2], cases, opset=22,
        extra_inputs=[("grid", [1, 2, 3, 2, 3])],
    )
    check_model(model, grid_inputs([1, 2, 3, 4, 2], [1, 2, 3, 2, 3]))


def col2im(image, block):
    return {"image_shape": np.array(image, np.int64), "block_shape": np.array(block, np.int64)}


def test_col2im():
    """Blocks summed back into images: overlaps, strides, pads, dilations, 1-D to 3-D."""
    cases = [
        (col2im([4, 5], [2, 2]), {}, [1, 1, 4, 5]),
        (col2im([5, 5], [2, 2]), {"strides": [2, 1], "pads": [1, 0, 1, 0]}, [1, 1, 5, 5]),
        (col2im([4, 6], [2, 2]), {"dilations": [1, 2]}, [1, 1, 4, 6]),
        (col2im([3, 4], [1, 1]), {}, [1, 4, 3, 4]),
        (col2im([18], [4]), {"dilations": [2]}, [1, 1, 18]),
        (col2im([3, 3, 3], [1, 2, 2]), {}, [1, 1, 3, 3, 3]),
    ]
    check_model(multi_node_model("Col2Im", [1, 4, 12], cases, opset=18))


def test_roialign():
    """avg and max, both coordinate modes; rois partly off the map, tiny and in both images."""
    rois = np.array([[0.5, 0.2, 3.1, 4.6], [-2.0, -1.5, 6.5, 7.0], [2.0, 2.0, 2.3, 2.1], [1.0, 0.0, 4.9, 3.0]], np.float32)
    batch = np.array([0, 1, 1, 0], np.int64)
    cases = [
        ({}, {"mode": mode, "coordinate_transformation_mode": ctm, "output_height": 3, "output_width": 2,
              "sampling_ratio": ratio, "spatial_scale": scale}, [4, 2, 3, 2])
        for mode, ctm, ratio, scale in [
            ("avg", "half_pixel", 2, 1.0),
            ("avg", "output_half_pixel", 1, 0.5),
            ("max", "half_pixel", 3, 1.0),
            ("max", "output_half_pixel", 2, 1.0),
        ]
    ]
    node_inputs = [("rois", [4, 4])]
    model = multi_node_model("RoiAlign", [2, 2, 5, 6], cases, opset=22, extra_inputs=node_inputs)
    batch_input = helper.make_tensor_value_info("batch", TensorProto.INT64, [4])
    model.graph.input.append(batch_input)
    for node in model.graph.node:
        node.input.append("batch")
    rng = np.random.default_rng(3)
    check_model(model, {"x": rng.standard_normal([2, 2, 5, 6]).astype(np.float32), "rois": rois, "batch": batch})


# -- every coordinate transformation x mode x nearest_mode against onnxruntime ----------------

COORDINATE_MODES = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize"]
MODE_VARIANTS = [
    {"mode": "nearest", "nearest_mode": nearest}
    for nearest in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
] + [{"mode": "linear"}, {"mode": "cubic"}, {"mode": "cubic", "exclude_outside": 1}]
RESIZE_SCALES = [
    ((1, 1, 0.5, 0.75), [1, 1, 1, 4]),  # an extent of 1; 6 x 0.75 = 4.5 (align_corners: 5/3 apart, not 5/3.5)
    ((1, 1, 1.5, 1.25), [1, 1, 4, 7]),  # 4.5 and 7.5 rounded down
    ((1, 1, 0.4, 1.75), [1, 1, 1, 10]),
    ((1, 1, 2.0, 0.5), [1, 1, 6, 3]),
]
"""x is [1, 1, 3, 6]. Non-whole scales that are exact in binary: a source position on a nearest
tie is exactly on it in f32 (onnxruntime) and f64 (Zant, onnx.reference) alike. With 0.8f, 2 / 0.8f
is 2.4999999 in f64 and 2.5 in f32, and asymmetric round_prefer_ceil picks 2 where onnxruntime
picks 3."""


def check_against_onnxruntime(model, feeds, pipeline=None, atol=1e-5):
    """Compiled (with `pipeline`) against onnxruntime, output by output: where onnx.reference
    reads `length_resized` as in_size·scale (align_corners, pytorch_half_pixel and
    tf_crop_and_resize with a non-whole in_size·scale), onnxruntime follows the definition."""
    ort = pytest.importorskip("onnxruntime")
    options = ort.SessionOptions()
    options.log_severity_level = 3  # tf_half_pixel_for_nn's deprecation warning
    want = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"]).run(None, feeds)
    got = compile_and_run(model, feeds, pipeline=pipeline)
    names = [o.name for o in model.graph.output]
    for name, g, w in zip(names, got, want, strict=True):
        assert g.shape == w.shape, f"{name}: shape {g.shape} != {w.shape}"
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=atol, err_msg=name)


def resize_sweep_model(coordinate_modes, opset):
    cases, labels = [], []
    for ctm in coordinate_modes:
        for variant in MODE_VARIANTS:
            for values, out_shape in RESIZE_SCALES:
                constants = scales(*values)
                if ctm == "tf_crop_and_resize":
                    constants["roi"] = np.array([0, 0, 0.25, 0.125, 1, 1, 0.75, 1.0], np.float32)
                cases.append((constants, {"coordinate_transformation_mode": ctm, **variant}, out_shape))
                labels.append(f"{ctm}/{'/'.join(str(v) for v in variant.values())}/{values[2:]}")
    model = multi_node_model("Resize", [1, 1, 3, 6], cases, opset=opset)
    for output, label in zip(model.graph.output, labels):
        output.doc_string = label
    return model


PIPELINES = {"host": None, "cortex-m4": "cortex-m4"}


@pytest.mark.parametrize("target", PIPELINES)
def test_resize_every_mode_with_extents_of_one_and_fractional_scales(target):
    """Issue 32: pytorch_half_pixel with an output extent of 1 reads position 0 (was -0.5's
    neighbours: [2, 3, 4, 5] for onnxruntime's [0, 1, 2, 3]); align_corners divides by the
    output extent - 1 (was 6·0.8 - 1: [0, 1.316, 2.632, 3.947] for [0, 1.667, 3.333, 5]);
    tf_crop_and_resize likewise. Every mode, nearest_mode and coordinate transformation."""
    from zant.pipelines import pipeline_for

    pipeline = None if PIPELINES[target] is None else pipeline_for(PIPELINES[target])
    x = (np.arange(18, dtype=np.float32) ** 1.5).reshape(1, 1, 3, 6)
    check_against_onnxruntime(resize_sweep_model(COORDINATE_MODES, 19), {"x": x}, pipeline)


def test_resize_issue_cases_exactly():
    """The issue's two reproducers, value by value."""
    cases = [
        (scales(1, 1, 0.5, 1), {"mode": mode, "coordinate_transformation_mode": "pytorch_half_pixel"}, [1, 1, 1, 4])
        for mode in ("linear", "cubic")
    ]
    (a, b) = compile_and_run(multi_node_model("Resize", [1, 1, 3, 4], cases), {"x": np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)})
    np.testing.assert_allclose(a.reshape(-1), [0, 1, 2, 3])
    np.testing.assert_allclose(b.reshape(-1), [0, 1, 2, 3])
    cases = [
        (scales(1, 1, 1, 0.8), {"mode": mode, "coordinate_transformation_mode": "align_corners"}, [1, 1, 1, 4])
        for mode in ("nearest", "linear", "cubic")
    ]
    got = compile_and_run(multi_node_model("Resize", [1, 1, 1, 6], cases), {"x": np.arange(6, dtype=np.float32).reshape(1, 1, 1, 6)})
    np.testing.assert_allclose(got[0].reshape(-1), [0, 2, 3, 5])
    np.testing.assert_allclose(got[1].reshape(-1), [0, 5 / 3, 10 / 3, 5], rtol=1e-6)
    assert got[2].reshape(-1)[[0, 3]].tolist() == [0, 5]


@pytest.mark.parametrize("target", PIPELINES)
def test_resize_tf_half_pixel_for_nn(target):
    """tf_half_pixel_for_nn (Resize-11 to -13, so opsets up to 17): x_original = (x + 0.5) / scale."""
    from zant.pipelines import pipeline_for

    pipeline = None if PIPELINES[target] is None else pipeline_for(PIPELINES[target])
    cases = []
    for variant in MODE_VARIANTS:
        for values, out_shape in RESIZE_SCALES:
            constants = {"roi": np.zeros(0, np.float32), "scales": np.array(values, np.float32)}
            cases.append((constants, {"coordinate_transformation_mode": "tf_half_pixel_for_nn", **variant}, out_shape))
    x = (np.arange(18, dtype=np.float32) ** 1.5).reshape(1, 1, 3, 6)
    check_against_onnxruntime(multi_node_model("Resize", [1, 1, 3, 6], cases, opset=17), {"x": x}, pipeline)


@pytest.mark.parametrize("value", [-1.5, 300.7, 2.5])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_integer_extrapolation_value_as_onnxruntime_casts_it(value, dtype):
    """tf_crop_and_resize on integer data: the float extrapolation value truncated toward zero,
    then modulo 2^bits, as onnxruntime's C++ cast gives it (it was a compile error for -1.5 in
    uint8: a random graph of issue 32's run); an empty output compiles too."""
    import onnx

    ort = pytest.importorskip("onnxruntime")
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    for scales, shape in (([1, 1.5], [1, 4]), ([0.75, 0.75], [4, 1])):
        roi = numpy_helper.from_array(np.array([0, -1, 1, 2], np.float32), "roi")
        graph = helper.make_graph(
            [helper.make_node("Resize", ["x", "roi", "s"], ["y"], coordinate_transformation_mode="tf_crop_and_resize",
                              extrapolation_value=value)],
            "g", [helper.make_tensor_value_info("x", elem, shape)], [helper.make_tensor_value_info("y", elem, None)],
            [roi, numpy_helper.from_array(np.array(scales, np.float32), "s")],
        )
        model = onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]))
        x = (np.arange(np.prod(shape)).reshape(shape) * 10 + 10).astype(dtype)
        want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        (got,) = compile_and_run(model, {"x": x})
        np.testing.assert_array_equal(got, want)
