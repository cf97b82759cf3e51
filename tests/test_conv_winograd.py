"""End-to-end numerics of the Winograd form of 3x3 Convs (`conv_winograd`, F(2x2, 3x3)) against
the ONNX reference evaluator: odd and even outputs (the last tile row and column half used),
pads of 0, 1 and asymmetric ones, channels that are not a multiple of the lanes, a batch of 2,
several bands of tile rows, and Convs in a residual block (channels-last activations, Relu and
the Add fused into the output transform); as scalar code and vectorized on AVX2 and AVX-512.
The float error of F(2x2, 3x3) is within the host conv tests' tolerance (1e-4)."""

from __future__ import annotations

import numpy as np
import pytest
from e2e import check_compiled, check_model
from onnx import helper
from test_conv_lanes import SCALAR, VECTOR, VECTOR_AVX512, ConvModel

from zant.passes.onnx_to_uop.conv_tiling import VectorConv
from zant.passes.onnx_to_uop.conv_winograd import (
    BAND_BYTES,
    band_pieces,
    band_rows,
    takes_winograd,
    winograd_share,
    winograd_weights,
)


def odd_sizes_model():
    m = ConvModel([2, 40, 9, 11], seed=1)
    m.conv(40, [3, 3], pads=[1, 1, 1, 1])  # 9x11 output: odd rows and columns
    m.conv(48, [3, 3])  # no pads: 7x9
    m.conv(32, [3, 3], pads=[0, 1, 2, 0], bias=False)  # asymmetric: 9x10
    m.conv(32, [3, 3], pads=[1, 1, 1, 1], auto_pad="NOTSET", dilations=[1, 1], strides=[1, 1])
    return m.model()


@pytest.mark.parametrize("pipeline", [SCALAR, VECTOR, VECTOR_AVX512], ids=["scalar", "avx2", "avx512"])
def test_winograd_odd_sizes(pipeline):
    check_model(odd_sizes_model(), rtol=1e-4, atol=1e-4, pipeline=pipeline)


def test_winograd_few_channels():
    """16 input channels (ResNet-8's, SqueezeNet's first expands) take the form too
    (`winograd_share`): one input vector per tile and ξ, 16 and 24 output channels (an 8-lane
    rest), odd outputs; the host's pipeline and AVX2's."""
    m = ConvModel([1, 16, 9, 11], seed=4)
    m.conv(16, [3, 3], pads=[1, 1, 1, 1])
    m.conv(24, [3, 3])
    result, _ = check_compiled(m.model(), rtol=1e-4, atol=1e-4)
    scratch = {t["name"] for t in result.plan["tensors"] if t["role"] == "scratch"}
    assert {"y0_winograd_v", "y1_winograd_v"} <= scratch, scratch
    check_model(m.model(), rtol=1e-4, atol=1e-4, pipeline=VECTOR)


def test_winograd_several_bands():
    """64 channels in and out over 10 tile columns: 3 tile rows per band (`BAND_BYTES`, V and M
    together). A 41x20 output takes 6 whole bands, then a band of 3 whose last tile row stores
    one output row; a 39x20 output (the columns padded) 6 whole bands and a band of the 2
    remaining tile rows (`band_pieces(40, 3)`: the same for an even output). V and M hold each
    tile's 16x64 values 1,040 apart (`tile_buffer`: a 4 KB stride would share the L1 sets)."""
    assert band_rows(21, 10, 64, 64) == 3
    assert band_pieces(41, 3) == [(0, 18, 3, 2), (18, 21, 3, 1)]
    assert band_pieces(40, 3) == [(0, 18, 3, 2), (18, 20, 2, 2)]
    assert band_pieces(7, 4) == [(0, 4, 4, 1)]  # ResNet-18's 7x7: one band, one pass over U
    assert band_rows(12, 12, 32, 32) == 4  # at most 5 rows: 3 bands of 4, not 2 of 5 and one of 2
    m = ConvModel([1, 64, 41, 20], seed=2)
    m.conv(64, [3, 3], pads=[1, 1, 1, 1])
    m.conv(64, [3, 3], pads=[0, 1, 0, 1])
    result, _ = check_compiled(m.model(), rtol=1e-4, atol=1e-4, pipeline=VECTOR_AVX512)
    sizes = {t["name"]: t["size"] for t in result.plan["tensors"]}
    assert sizes["y0_winograd_v"] == sizes["y0_winograd_m"] == 3 * 10 * 1040 * 4, sizes


def test_winograd_residual_block_fuses_its_epilogue():
    """A ResNet basic block with the host's whole pipeline: both 3x3 Convs in the Winograd form,
    the intermediate channels-last (`assign-host-layouts`), the Relu and the residual Add fused
    into the output transforms' stores (no buffer of their own)."""
    m = ConvModel([1, 32, 13, 13], seed=3)
    first = m.conv(32, [3, 3], pads=[1, 1, 1, 1], output=False)
    relu = m.node("Relu", [first])
    w = m.const("w_second", m.rng.standard_normal((32, 32, 3, 3)) * 0.1)
    m.nodes.append(helper.make_node("Conv", [relu, w], ["second"], pads=[1, 1, 1, 1]))
    add = m.node("Add", ["second", "x"])
    m.outputs.append(m.node("Relu", [add]))
    result, _ = check_compiled(m.model(), rtol=1e-4, atol=1e-4)
    scratch = {t["name"] for t in result.plan["tensors"] if t["role"] == "scratch"}
    assert {"y0_winograd_v", "second_winograd_v"} <= scratch, scratch
    assert not {first, relu, "second", add} & scratch, scratch


def test_winograd_weights_are_g_g_gt():
    """U[ξ] = (G g Gᵀ)[ξ]: for a 3x3 of ones, the outer product of G's row sums (1, 1.5, 0.5, 1)."""
    u = winograd_weights(np.ones((1, 1, 3, 3), np.float32))
    sums = np.array([1.0, 1.5, 0.5, 1.0])
    np.testing.assert_array_equal(u.reshape(4, 4), np.outer(sums, sums))


def test_the_cost_rule():
    """Winograd for ResNet-18's stride-1 3x3 layers (64 to 512 channels; the 512-channel
    weights, 16 MB transformed, are read once by one band of 4x4 tiles), ResNet-8's 16-channel
    ones and SqueezeNet's 16 -> 64 expands; not where the transforms outweigh the products saved
    (an image's 3 channels, 8 -> 8, a 3x3 output's 4 tiles of 9 outputs), nor where the direct
    form stores rows of pixels and Y's 4 KB planes would put the channel vectors in one L1 set
    (ResNet-8's 32x32), nor when streamed weights would need several bands or serve fewer than
    16 tiles."""
    vector = VectorConv(16, 14, registers=32)
    for channels, size in ((64, 56), (128, 28), (256, 14), (512, 7)):
        assert takes_winograd(vector, channels, channels, (size, size))
    assert takes_winograd(vector, 16, 16, (32, 32))
    assert not takes_winograd(vector, 16, 16, (32, 32), pixel_lanes=True)
    assert takes_winograd(vector, 16, 16, (28, 28), pixel_lanes=True)
    assert takes_winograd(vector, 16, 64, (55, 55))
    assert not takes_winograd(vector, 3, 16, (32, 32))
    assert not takes_winograd(vector, 8, 8, (32, 32))
    assert not takes_winograd(vector, 16, 16, (3, 3))
    assert winograd_share(64, 64, (56, 56)) < winograd_share(16, 16, (56, 56)) < winograd_share(8, 16, (56, 56))
    assert not takes_winograd(vector, 512, 512, (28, 28))  # 16 MB of weights, 6.4 MB of V
    assert not takes_winograd(vector, 512, 512, (3, 3))  # 16 MB of weights for 4 tiles
    assert takes_winograd(vector, 256, 256, (6, 6))  # 4 MB transformed: not streamed, 9 tiles
    assert not takes_winograd(VectorConv(16, 14, winograd=False), 64, 64, (56, 56))
    assert band_rows(28, 28, 64, 64) * 28 * 16 * 128 * 4 <= BAND_BYTES


def test_every_host_pass_keeps_the_winograd_outputs():
    """The uop interpreter runs a Winograd Conv (odd output, fused Relu) after each host pass
    from onnx-to-uop on (seeded inputs): fuse-loops, split-index-sets and vectorize keep what
    the transforms and the grouped products compute."""
    from e2e import check_passes_after_lowering

    m = ConvModel([1, 32, 7, 5], seed=5)
    first = m.conv(32, [3, 3], pads=[1, 1, 1, 1], output=False)
    m.outputs.append(m.node("Relu", [first]))
    module, report = check_passes_after_lowering(m.model(), "host")
    assert {"fuse-loops", "split-index-sets", "vectorize", "plan-arenas"} <= set(report.checked), report.unchecked
    assert "y0_winograd_v" in str(module)
