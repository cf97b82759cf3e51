"""Float kernels of the cores with an FPU (Cortex-M4F, M7, M33, M55, RV32F): register-tiled
Convs (`onnx-to-uop{conv-float-registers=32}`, `conv_tiling.register_tile`) with fused
multiply-adds (`contract-mulacc{scalar=true}`), and MaxPool as compare and select.

Numerics run the Cortex-M4's default pipeline on the host build (the firmware equals it under
QEMU: tests/test_firmware.py), against the ONNX reference evaluator.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from e2e import check_model, compile_and_run
from onnx import TensorProto, helper
from test_conv_lanes import ConvModel

from zant.passes.onnx_to_uop.conv_tiling import STEP_OVERHEAD, register_tile
from zant.pipelines import pipeline_for, target_parameters

M4 = pipeline_for("cortex-m4")


@pytest.mark.parametrize(
    ("out_per_group", "width", "tile"),
    [
        (64, 5, (4, 5)),  # KWS's pointwise Convs: 20 accumulators + 4 weights + 5 inputs
        (64, 4, (4, 4)),
        (16, 6, (8, 2)),  # 3 whole tiles of 2 beat 4 x 5 and a 1-pixel remainder
        (12, 1, (12, 1)),  # one output column: all the channels (12 + 12 + 1 registers)
        (1, 7, (1, 7)),
    ],
)
def test_register_tile_fits_the_registers_and_covers_the_row(out_per_group, width, tile):
    channels, pixels = register_tile(out_per_group, width, 32)
    assert (channels, pixels) == tile
    assert out_per_group % channels == 0 and pixels <= width
    assert channels * pixels + channels + pixels <= 32


def test_register_tile_is_the_cheapest_that_fits():
    """Against every tile that fits: none reduces a 64-channel, 5-wide row in fewer estimated
    instructions (loads + FMAs + overhead per step)."""
    def cost(c, p):
        whole, rest = divmod(5, p)
        return 64 // c * (whole * (c + p + c * p + STEP_OVERHEAD) + rest * (c + 1 + c + STEP_OVERHEAD))

    best = cost(*register_tile(64, 5, 32))
    fits = [(c, p) for c in (1, 2, 4, 8, 16, 32, 64) for p in range(1, 6) if c * p + c + p <= 32]
    assert best == min(cost(c, p) for c, p in fits)
    assert best < cost(4, 1)  # the channel block alone


def test_fpu_cores_tile_and_fuse_soft_float_cores_do_not():
    """The lowering reads the float registers from the module's #zant.target (`set-target`, the
    pipeline's first pass): 32 on the FPU cores, none on the soft-float ones."""
    from xdsl.dialects.builtin import ModuleOp

    from zant.dialects.zant import TARGET, TargetAttr
    from zant.passes.onnx_to_uop import OnnxToUopPass

    for core, registers in [*((c, 32) for c in ("cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55", "riscv32")),
                            ("cortex-m0plus", 0), ("cortex-m3", 0)]:
        assert target_parameters(core).float_registers == registers
        assert pipeline_for(core).startswith(f"set-target{{target={core}}},")
        module = ModuleOp([])
        module.attributes[TARGET] = TargetAttr(core)
        assert OnnxToUopPass().for_module(module).conv_float_registers == registers
        assert OnnxToUopPass(conv_float_registers=0).for_module(module).conv_float_registers == 0  # an override


def float_convs_model() -> onnx.ModelProto:
    """Ungrouped float Convs of every tile shape the M4's pipeline picks, and the forms it
    leaves alone (grouped, depthwise), in one build."""
    m = ConvModel([1, 3, 11, 7], seed=5)
    m.conv(16, [4, 3], pads=[1, 1, 2, 1], strides=[2, 2])  # padded copy (378 <= 384 outputs)
    m.conv(64, [1, 1])  # pointwise: 2 channels x 7 pixels
    m.conv(12, [3, 3], dilations=[2, 2], bias=False)  # unpadded: interior tiles only
    m.conv(12, [3, 3], pads=[1, 1, 1, 1])  # copy 117 <= 924: all tiled
    m.conv(6, [3, 1], group=3, pads=[1, 0, 1, 0])  # grouped: the channel block
    m.conv(3, [3, 3], group=3, pads=[1, 1, 1, 1])  # depthwise: pixel blocks
    first = m.conv(8, [3, 3], pads=[1, 1, 1, 1], output=False)
    m.outputs.append(m.node("Relu", [m.node("Add", [first, m.conv(8, [1, 1], output=False)])]))
    return m.model()


def test_float_convs_on_the_m4_pipeline_match_the_reference():
    check_model(float_convs_model(), rtol=1e-4, atol=1e-4, pipeline=M4)


def _pool_model(op: str, **attrs) -> onnx.ModelProto:
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "pool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


def test_max_pool_nan_as_the_reference_and_global_max_pool_propagates_it():
    """MaxPool's reference starts at a window's first tap inside the input and takes each tap
    that compares greater: a NaN there stays, a later one is skipped. GlobalMaxPool's (`x.max`)
    propagates NaN. The M4 pipeline does both, with no libm call."""
    x = np.random.default_rng(0).standard_normal((1, 2, 6, 6)).astype(np.float32)
    x[0, 0, 0, 0] = x[0, 1, 3, 4] = np.nan  # first tap of window (0, 0); inside window (2, 2)
    pool = _pool_model("MaxPool", kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])
    (y,) = check_model(pool, {"x": x}, pipeline=M4)
    assert np.isnan(y[0, 0, 0, 0]) and np.isnan(y).sum() == 1
    dilated = _pool_model("MaxPool", kernel_shape=[2, 2], pads=[2, 1, 0, 0], dilations=[2, 2])
    check_model(dilated, {"x": x}, pipeline=M4)
    (g,) = compile_and_run(_pool_model("GlobalMaxPool"), {"x": x}, pipeline=M4)
    assert np.isnan(g).all()
