"""Quantized layers the DSP-kernel tests build, and the checks they share: a graph of
QLinearConv layers each over its own input (`qlinear_conv_model`), int8 or uint8 inputs
reaching the extremes (`int8_feeds`), a depthwise -> ReLU -> pointwise chain
(`depthwise_pointwise_model`), and their outputs against the ONNX reference evaluator
bit for bit, built for the host or as Cortex-M4 firmware under QEMU; a firmware image against
the host build of the same model (`firmware_equals_host`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from zant.driver import CompileOptions, CompileResult, compile_model
from zant.pipelines import MCU_PIPELINE
from zant.runtime import load_compiled

FIRMWARE_TARGET = "cortex-m4"


@dataclass(frozen=True)
class QConv:
    """One QLinearConv over its own graph input `name` (output `name_y`, int8), weights and
    int32 bias seeded; channel k's weight scale is `w_scales[k]` where given, else
    `w_scale`·(k + 1), or `w_scale` for all (`per_channel` false); weight zero points 0. `strides`, `pads` and `group` are left out of
    the node where not given (ONNX's defaults)."""

    name: str
    in_channels: int
    out_channels: int
    height: int = 1
    width: int = 1
    kernel: tuple[int, int] = (1, 1)
    strides: tuple[int, int] | None = None
    pads: tuple[int, int, int, int] | None = None
    group: int | None = None
    x_type: int = TensorProto.INT8
    x_scale: float = 0.05
    x_zero: int = 0
    w_scale: float = 0.004
    per_channel: bool = True
    w_scales: tuple[float, ...] | None = None
    y_scale: float = 0.3
    y_zero: int = 0

    @property
    def output_shape(self) -> list[int]:
        (sh, sw), (top, left, bottom, right) = self.strides or (1, 1), self.pads or (0, 0, 0, 0)
        out_h = (self.height + top + bottom - self.kernel[0]) // sh + 1
        out_w = (self.width + left + right - self.kernel[1]) // sw + 1
        return [1, self.out_channels, out_h, out_w]


def qlinear_conv_model(name: str, layers: Iterable[QConv], seed: int, first_weights: Sequence[int] = (-128, 127, -128)) -> onnx.ModelProto:
    """The layers side by side in one opset-17 graph. Each layer's first output channel starts
    with `first_weights` (the extremes of an SXTB16 half, or of a word's bytes)."""
    rng = np.random.default_rng(seed)
    inputs, outputs, nodes, inits = [], [], [], []
    for layer in layers:
        n, m = layer.name, layer.out_channels
        weights = rng.integers(-128, 128, (m, layer.in_channels // (layer.group or 1), *layer.kernel)).astype(np.int8)
        head = min(len(first_weights), weights[0].size)
        weights[0].flat[:head] = first_weights[:head]
        x_np = np.uint8 if layer.x_type == TensorProto.UINT8 else np.int8
        if layer.w_scales is not None:
            w_scales = layer.w_scales
        else:
            w_scales = layer.w_scale * (1 + np.arange(m)) if layer.per_channel else layer.w_scale
        inits += [
            numpy_helper.from_array(np.array(layer.x_scale, np.float32), f"{n}_xs"),
            numpy_helper.from_array(np.array(layer.x_zero, x_np), f"{n}_xz"),
            numpy_helper.from_array(weights, f"{n}_w"),
            numpy_helper.from_array(np.asarray(w_scales).astype(np.float32), f"{n}_ws"),
            numpy_helper.from_array(np.zeros(m, np.int8), f"{n}_wz"),
            numpy_helper.from_array(np.array(layer.y_scale, np.float32), f"{n}_ys"),
            numpy_helper.from_array(np.array(layer.y_zero, np.int8), f"{n}_yz"),
            numpy_helper.from_array(rng.integers(-3000, 3000, m).astype(np.int32), f"{n}_b"),
        ]
        attributes = {"group": layer.group, "strides": layer.strides, "pads": layer.pads}
        nodes.append(helper.make_node(
            "QLinearConv", [n] + [f"{n}_{s}" for s in ("xs", "xz", "w", "ws", "wz", "ys", "yz", "b")], [f"{n}_y"],
            kernel_shape=list(layer.kernel), **{k: (v if k == "group" else list(v)) for k, v in attributes.items() if v is not None},
        ))
        inputs.append(helper.make_tensor_value_info(n, layer.x_type, [1, layer.in_channels, layer.height, layer.width]))
        outputs.append(helper.make_tensor_value_info(f"{n}_y", TensorProto.INT8, layer.output_shape))
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def depthwise_pointwise_model(
    channels: int, out_channels: int, h: int, w: int, seed: int, pointwise_scales: Sequence[float] | np.ndarray,
    relu: bool = True,
) -> onnx.ModelProto:
    """A depthwise 3x3 QLinearConv (so assign-layouts stores its output channels-last), an int8
    ReLU (a Clip at the zero point -128; with `relu` false the zero point is 3, so the Clip
    keeps values) and a pointwise QLinearConv reading it: per-channel weight scales
    (`pointwise_scales` the pointwise Conv's), a bias, input (1, channels, h, w)."""
    rng = np.random.default_rng(seed)
    inits = [
        numpy_helper.from_array(np.array(0.05, np.float32), "xs"),
        numpy_helper.from_array(np.array(-7, np.int8), "xz"),
        numpy_helper.from_array(rng.integers(-128, 128, (channels, 1, 3, 3)).astype(np.int8), "dw"),
        numpy_helper.from_array((0.01 * (1 + np.arange(channels))).astype(np.float32), "dws"),
        numpy_helper.from_array(np.zeros(channels, np.int8), "dwz"),
        numpy_helper.from_array(np.array(0.4, np.float32), "ds"),
        numpy_helper.from_array(np.array(-128 if relu else 3, np.int8), "dz"),
        numpy_helper.from_array(rng.integers(-128, 128, (out_channels, channels, 1, 1)).astype(np.int8), "pw"),
        numpy_helper.from_array(np.asarray(pointwise_scales).astype(np.float32), "pws"),
        numpy_helper.from_array(np.zeros(out_channels, np.int8), "pwz"),
        numpy_helper.from_array(np.array(0.3, np.float32), "ys"),
        numpy_helper.from_array(np.array(5, np.int8), "yz"),
        numpy_helper.from_array(rng.integers(-2000, 2000, out_channels).astype(np.int32), "bias"),
    ]
    nodes = [
        helper.make_node("QLinearConv", ["x", "xs", "xz", "dw", "dws", "dwz", "ds", "dz"], ["d"],
                         group=channels, pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Clip", ["d", "dz"], ["r"]),
        helper.make_node("QLinearConv", ["r", "ds", "dz", "pw", "pws", "pwz", "ys", "yz", "bias"], ["y"], kernel_shape=[1, 1]),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.INT8, [1, channels, h, w])],
        [helper.make_tensor_value_info("y", TensorProto.INT8, [1, out_channels, h, w])], inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def int8_feeds(model: onnx.ModelProto, seed: int) -> dict[str, np.ndarray]:
    """Seeded int8 or uint8 values for each graph input, its first four the type's extremes."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in model.graph.input:
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        low = 0 if value.type.tensor_type.elem_type == TensorProto.UINT8 else -128
        x = rng.integers(low, low + 256, shape).astype(np.uint8 if low == 0 else np.int8)
        x.flat[:4] = [low, low + 255, low, low + 255][: x.size]
        feeds[value.name] = x
    return feeds


def expect_reference(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], got: Mapping[str, np.ndarray], min_distinct: int = 0) -> None:
    """Each output in `got` (by name) equals the ONNX reference evaluator's bit for bit; the
    reference's outputs hold more than `min_distinct` values each (the test's data does not
    saturate them)."""
    want = ReferenceEvaluator(model).run(None, dict(feeds))
    for output, expected in zip(model.graph.output, want, strict=True):
        y = np.asarray(got[output.name]).reshape(expected.shape)
        assert len(np.unique(expected)) > min_distinct, output.name
        assert np.array_equal(y, expected), (output.name, np.argwhere(y != expected)[:5])


def expect_reference_on_host(
    model: onnx.ModelProto, folder: Path, seeds: Iterable[int], pipeline: str = MCU_PIPELINE,
    optimize: str = "ReleaseSafe", min_distinct: int = 0,
) -> str:
    """`model` compiled by `pipeline` (the Cortex-M4's) for the host equals the reference on
    `int8_feeds` of each seed; the generated Zig."""
    onnx.save(model, folder / "model.onnx")
    result = compile_model(folder / "model.onnx", folder / "host", CompileOptions(name="net", optimize=optimize, pipeline=pipeline))
    run = load_compiled(result)
    names = [o.name for o in model.graph.output]
    for seed in seeds:
        feeds = int8_feeds(model, seed)
        got = run(*(feeds[v.name] for v in model.graph.input))
        expect_reference(model, feeds, dict(zip(names, got, strict=True)), min_distinct)
    return result.zig_path.read_text()


def require_firmware_qemu() -> None:
    """Skip the test where QEMU cannot run the Cortex-M4 board's images."""
    from zant.backend.build import BOARDS, DEFAULT_BOARDS
    from zant.backend.firmware import qemu_missing

    missing = qemu_missing(BOARDS[DEFAULT_BOARDS[FIRMWARE_TARGET]])
    if missing:
        pytest.skip(missing)


def expect_reference_as_firmware(model: onnx.ModelProto, folder: Path, seed: int, min_distinct: int = 0, **options):
    """`model` as Cortex-M4 firmware (`zant compile --firmware`'s build, or with `zant.compile`'s
    `options`) with `int8_feeds` of `seed` embedded, run under QEMU, equals the reference; the
    compiled `zant.Model`."""
    import zant

    require_firmware_qemu()
    feeds = int8_feeds(model, seed)
    compiled = zant.compile(model, target=FIRMWARE_TARGET, firmware=True, inputs=feeds, output_dir=folder / "firmware", **options)
    expect_reference(model, feeds, compiled.run_firmware().outputs, min_distinct)
    return compiled


def firmware_equals_host(model: Path, folder: Path, x: np.ndarray, optimize: str = "ReleaseFast", pipeline: str | None = None) -> CompileResult:
    """`model` (one input) as Cortex-M4 firmware built in `optimize` mode (by `pipeline`, else
    the target's) with `x` embedded, run under QEMU, gives the outputs of the host's ReleaseSafe
    build bit for bit; the firmware's compile result (its Zig and image, for the caller's
    checks)."""
    from zant.backend.firmware import run_firmware

    require_firmware_qemu()
    host = compile_model(model, folder / "host", CompileOptions(name="net", optimize="ReleaseSafe"))
    options = CompileOptions(name="net", target=FIRMWARE_TARGET, firmware=True, optimize=optimize, inputs={host.inputs[0].name: x})
    if pipeline is not None:
        options = replace(options, pipeline=pipeline)
    firmware = compile_model(model, folder / f"firmware_{optimize}", options)
    run = run_firmware(firmware.firmware_path, firmware.board, firmware.outputs)
    expected = load_compiled(host)(firmware.feeds[host.inputs[0].name])
    for got, want in zip(run.outputs, expected, strict=True):
        np.testing.assert_array_equal(got, want)
    return firmware
