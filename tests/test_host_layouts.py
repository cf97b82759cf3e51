"""`assign-host-layouts` (issue 34): the host keeps the float activations between its channel-lane
Convs channels-last for the whole graph, through Relu, Clip, residual Adds and pools. The
layouts move no arithmetic (each output's sum runs in the same order), so the host build is the
build without the pass bit for bit, and both are the ONNX reference's within the float tolerance
the other end-to-end tests use."""

from __future__ import annotations

import numpy as np
import onnx
from e2e import check_compiled, compile_and_run, random_inputs
from onnx import TensorProto, helper, numpy_helper

from zant.driver import compile_to_module
from zant.passes.onnx_to_uop.kernel import CHANNELS_LAST
from zant.pipelines import pipeline_for


def _model() -> onnx.ModelProto:
    """A small ResNet and MobileNetV2 in one: a 7x7/2 stem, a 3x3/2 MaxPool, a residual block,
    a strided block with a 1x1/2 shortcut, an inverted residual (1x1 expand, Clip, depthwise
    3x3, Clip, 1x1 project, Add) at 4x4, GlobalAveragePool, Flatten, Gemm."""
    rng = np.random.default_rng(34)
    nodes, inits = [], []

    def const(name: str, array: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.asarray(array, np.float32), name))
        return name

    def conv(x: str, cin: int, cout: int, k: int, stride: int = 1, group: int = 1) -> str:
        out = f"conv{len(nodes)}"
        w = rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / (cin // group * k * k))
        inputs = [x, const(f"{out}_w", w), const(f"{out}_b", rng.standard_normal(cout) * 0.05)]
        nodes.append(helper.make_node("Conv", inputs, [out], kernel_shape=[k, k], strides=[stride, stride],
                                      pads=[k // 2] * 4, group=group))
        return out

    def node(op: str, inputs: list[str], **attrs) -> str:
        out = f"{op.lower()}{len(nodes)}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def relu6(x: str) -> str:
        return node("Clip", [x, const(f"lo{len(nodes)}", 0.0), const(f"hi{len(nodes)}", 6.0)])

    x = node("Relu", [conv("x", 3, 32, 7, 2)])  # 16x16
    x = node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])  # 8x8
    y = conv(node("Relu", [conv(x, 32, 32, 3)]), 32, 32, 3)
    x = node("Relu", [node("Add", [x, y])])
    y = conv(node("Relu", [conv(x, 32, 64, 3, 2)]), 64, 64, 3)  # 4x4
    x = node("Relu", [node("Add", [conv(x, 32, 64, 1, 2), y])])
    y = relu6(conv(relu6(conv(x, 64, 128, 1)), 128, 128, 3, group=128))
    x = node("Add", [x, conv(y, 128, 64, 1)])
    x = node("Flatten", [node("GlobalAveragePool", [x])], axis=1)
    logits = node("Gemm", [x, const("fc_w", rng.standard_normal((10, 64)) * 0.1), const("fc_b", np.zeros(10))],
                  transB=1)
    graph = helper.make_graph(
        nodes, "host_layouts", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info(logits, TensorProto.FLOAT, [1, 10])], inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_the_host_marks_the_whole_graph_between_its_edges():
    """Every Conv, Relu, Clip, Add and the MaxPool are channels-last; the pool, Flatten and Gemm
    at the end and the graph's edges are not."""
    host = pipeline_for("host").split(",")
    assert "assign-host-layouts" in host
    stages = host[: host.index("assign-host-layouts") + 1]
    module = compile_to_module(_model(), pipeline=",".join(stages), check_result=False)
    module = getattr(module, "module", module)
    marked = {op.name: [] for op in module.walk() if op.name.startswith("onnx.") and op.name != "onnx.Constant"}
    for op in module.walk():
        if op.name in marked:
            marked[op.name].append(CHANNELS_LAST in op.attributes)
    for name in ("onnx.Conv", "onnx.Relu", "onnx.Clip", "onnx.Add", "onnx.MaxPool"):
        assert all(marked[name]), (name, marked[name])
    for name in ("onnx.GlobalAveragePool", "onnx.Flatten", "onnx.Gemm"):
        assert not any(marked[name]), (name, marked[name])


def test_channels_last_is_the_nchw_build_bit_for_bit_and_the_reference():
    model = _model()
    feeds = random_inputs(model)
    host = pipeline_for("host")
    without = ",".join(s for s in host.split(",") if s != "assign-host-layouts")
    _, (ours,) = check_compiled(model, feeds)  # the default (host) pipeline
    (nchw,) = compile_and_run(model, feeds, pipeline=without)
    assert np.array_equal(ours, nchw), np.abs(ours - nchw).max()
    assert len(np.unique(ours)) == ours.size  # not degenerate


def _stem_model() -> onnx.ModelProto:
    """ResNet-8's first stage at 32x32: an image's stem Conv 3 -> 16, its Relu read by a residual
    block of two 16 -> 16 3x3 Convs and by the block's Add, Relu, GlobalAveragePool."""
    rng = np.random.default_rng(8)
    inits = []

    def conv(x: str, cin: int, out: str) -> onnx.NodeProto:
        w = rng.standard_normal((16, cin, 3, 3)) * np.sqrt(2.0 / (cin * 9))
        inits.append(numpy_helper.from_array(w.astype(np.float32), f"{out}_w"))
        inits.append(numpy_helper.from_array((rng.standard_normal(16) * 0.05).astype(np.float32), f"{out}_b"))
        return helper.make_node("Conv", [x, f"{out}_w", f"{out}_b"], [out], kernel_shape=[3, 3], pads=[1] * 4)

    nodes = [
        conv("x", 3, "s"), helper.make_node("Relu", ["s"], ["r0"]),
        conv("r0", 16, "c1"), helper.make_node("Relu", ["c1"], ["r1"]), conv("r1", 16, "c2"),
        helper.make_node("Add", ["c2", "r0"], ["a"]), helper.make_node("Relu", ["a"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
    ]
    graph = helper.make_graph(
        nodes, "stem_stage", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("g", TensorProto.FLOAT, [1, 16, 1, 1])], inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _host_with(**options: str) -> str:
    """The host pipeline with `{key=value}` options on the passes named by the keys."""
    stages = pipeline_for("host").split(",")
    for name, option in options.items():
        name = name.replace("_", "-")
        stages = [f"{s}{{{option}}}" if s == name else s for s in stages]
    return ",".join(stages)


def test_an_image_stem_takes_channel_lanes_into_a_channels_last_stage():
    """The stem (3 input channels, rows of 32: pixel lanes as it stands) and the stage behind it
    are channels-last, the stem in channel lanes: with the Winograd form off on both sides only
    the layouts and the stem's lanes change, and each output's sum runs in the same order, so
    the build is the one weighing the Convs as they stand (`forms-by-layout=false`, all NCHW)
    bit for bit. With the Winograd form (the default), the stage's 16-channel Convs take it and
    the outputs are the reference's."""
    model, host = _stem_model(), pipeline_for("host").split(",")
    stages = host[: host.index("assign-host-layouts") + 1]
    module = compile_to_module(model, pipeline=",".join(stages), check_result=False)
    module = getattr(module, "module", module)
    assert all(CHANNELS_LAST in op.attributes for op in module.walk() if op.name in ("onnx.Conv", "onnx.Relu", "onnx.Add"))
    feeds = random_inputs(model)
    (ours,) = compile_and_run(model, feeds, pipeline=_host_with(onnx_to_uop="conv-winograd=false"))
    (as_is,) = compile_and_run(
        model, feeds,
        pipeline=_host_with(assign_host_layouts="forms-by-layout=false", onnx_to_uop="conv-winograd=false"),
    )
    assert np.array_equal(ours, as_is), np.abs(ours - as_is).max()
    assert len(np.unique(ours)) == ours.size
    check_compiled(model, feeds)


def _fire_model() -> onnx.ModelProto:
    """SqueezeNet 1.1's first stage at a small size: the stem Conv 3 -> 32 (3x3/2) and Relu, a
    ceil-mode 3x3/2 MaxPool, then a Fire module (1x1 squeeze 32 -> 16 and Relu, 1x1 and 3x3
    expands 16 -> 32 each with their Relus, Concat), GlobalAveragePool."""
    rng = np.random.default_rng(11)
    inits, nodes = [], []

    def conv(x: str, cin: int, cout: int, k: int, out: str, **attrs) -> None:
        w = rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))
        inits.append(numpy_helper.from_array(w.astype(np.float32), f"{out}_w"))
        inits.append(numpy_helper.from_array((rng.standard_normal(cout) * 0.05).astype(np.float32), f"{out}_b"))
        nodes.append(helper.make_node("Conv", [x, f"{out}_w", f"{out}_b"], [out], kernel_shape=[k, k], **attrs))
        nodes.append(helper.make_node("Relu", [out], [f"{out}_r"]))

    conv("x", 3, 32, 3, "s", strides=[2, 2])  # 39x39
    nodes.append(helper.make_node("MaxPool", ["s_r"], ["p"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1))
    conv("p", 32, 16, 1, "q")  # 19x19
    conv("q_r", 16, 32, 1, "e1")
    conv("q_r", 16, 32, 3, "e3", pads=[1] * 4)
    nodes.append(helper.make_node("Concat", ["e1_r", "e3_r"], ["c"], axis=1))
    nodes.append(helper.make_node("GlobalAveragePool", ["c"], ["g"]))
    graph = helper.make_graph(
        nodes, "fire", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 79, 79])],
        [helper.make_tensor_value_info("g", TensorProto.FLOAT, [1, 64, 1, 1])], inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_a_fire_module_is_channels_last_through_its_1x1_convs_and_concat():
    """The 1x1 Convs (pixel lanes over rows of 19 as they stand) take channel lanes and tie their
    X and Y channels-last, the Concat its inputs: stem, pool, squeeze, expands and Concat are all
    marked. The 1x1 Convs' sums run in the same order in both forms, so the build is the one
    that weighs the Convs as they stand (`forms-by-layout=false`) bit for bit, and the
    reference's within the float tolerance."""
    _check_channels_last_stage(_fire_model(), ("onnx.Conv", "onnx.Relu", "onnx.MaxPool", "onnx.Concat"), 10)


def _check_channels_last_stage(model: onnx.ModelProto, names: tuple[str, ...], count: int) -> None:
    """`assign-host-layouts` marks all `count` ops named `names` channels-last, and the build
    equals the one weighing the Convs as they stand (`forms-by-layout=false`) bit for bit, its
    outputs the reference's within the float tolerance."""
    host = pipeline_for("host").split(",")
    stages = host[: host.index("assign-host-layouts") + 1]
    module = compile_to_module(model, pipeline=",".join(stages), check_result=False)
    module = getattr(module, "module", module)
    ops = [op for op in module.walk() if op.name in names]
    assert len(ops) == count and all(CHANNELS_LAST in op.attributes for op in ops)
    feeds = random_inputs(model)
    _, (ours,) = check_compiled(model, feeds)
    (as_is,) = compile_and_run(model, feeds, pipeline=_host_with(assign_host_layouts="forms-by-layout=false"))
    assert np.array_equal(ours, as_is), np.abs(ours - as_is).max()
    assert np.count_nonzero(ours) > ours.size // 2  # not degenerate


def _inverted_model() -> onnx.ModelProto:
    """MobileNetV2's first stages at a small size: the stem Conv 3 -> 32 (3x3/2) and Clip(0, 6), a
    3x3 depthwise Conv at unit stride over rows of 32 and Clip, a 1x1 projection 32 -> 16, a 1x1
    expansion 16 -> 96 and Clip, a 3x3/2 depthwise Conv and Clip, a 1x1 projection 96 -> 24,
    GlobalAveragePool."""
    rng = np.random.default_rng(2)
    inits, nodes = [], []
    inits += [numpy_helper.from_array(np.float32(0.0), "lo"), numpy_helper.from_array(np.float32(6.0), "hi")]

    def conv(x: str, cin: int, cout: int, k: int, out: str, relu6: bool = True, group: int = 1, stride: int = 1) -> str:
        w = rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / (cin // group * k * k))
        inits.append(numpy_helper.from_array(w.astype(np.float32), f"{out}_w"))
        inits.append(numpy_helper.from_array((rng.standard_normal(cout) * 0.05).astype(np.float32), f"{out}_b"))
        nodes.append(helper.make_node("Conv", [x, f"{out}_w", f"{out}_b"], [out], kernel_shape=[k, k],
                                      pads=[k // 2] * 4, strides=[stride] * 2, group=group))
        if not relu6:
            return out
        nodes.append(helper.make_node("Clip", [out, "lo", "hi"], [f"{out}_r"]))
        return f"{out}_r"

    x = conv("x", 3, 32, 3, "s", stride=2)  # 32x32
    x = conv(x, 32, 32, 3, "d1", group=32)
    x = conv(x, 32, 16, 1, "p1", relu6=False)
    x = conv(x, 16, 96, 1, "e2")
    x = conv(x, 96, 96, 3, "d2", group=96, stride=2)  # 16x16
    x = conv(x, 96, 24, 1, "p2", relu6=False)
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["g"]))
    graph = helper.make_graph(
        nodes, "inverted", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 64, 64])],
        [helper.make_tensor_value_info("g", TensorProto.FLOAT, [1, 24, 1, 1])], inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_a_depthwise_conv_in_rows_takes_lanes_in_a_channels_last_stage():
    """The unit-stride depthwise Conv (depthwise rows over rows of 32 as it stands, NCHW to NCHW)
    ties its X and Y and takes depthwise lanes channels-last (`conv.depthwise_row_lanes`), so the
    stem stores its channel vectors whole and the whole stage is channels-last: every Conv and
    Clip is marked. Both depthwise forms sum each output's taps in the same order, so the build
    is the one weighing the Convs as they stand (`forms-by-layout=false`: the depthwise rows,
    the stage NCHW) bit for bit, and the reference's within the float tolerance."""
    _check_channels_last_stage(_inverted_model(), ("onnx.Conv", "onnx.Clip"), 10)
