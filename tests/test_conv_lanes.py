"""End-to-end numerics of the vector forms of Conv (`onnx-to-uop` for a target with vector lanes,
`conv_tiling.VectorConv`), as scalar code and vectorized, in ReleaseSafe against the ONNX reference
evaluator; and the tile choice.

One model holds many Convs of one input (each its own output), so one build covers strides,
dilations, asymmetric pads, groups, 1-D and 3-D windows, 8- and 16-lane blocks, no bias, every
form (channel lanes, pixel lanes, depthwise rows and lanes, scalar) and fused residual epilogues.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from e2e import check_model
from onnx import TensorProto, helper, numpy_helper

from zant.passes.onnx_to_uop.conv_tiling import best_tile, tile_pieces
from zant.pipelines import PRINT_PIPELINE

# An AVX2 host's target: 16 lanes, tiles of 6 (`zant.targets.host_parameters`), read by both
# the lowering and `vectorize` from the module's #zant.target.
AVX2 = "set-target{target=host cpu=x86-64-avx2}"
SCALAR = f"{AVX2},fold-constants,dce,onnx-to-uop,fuse-loops,plan-arenas,verify-arena-plan,{PRINT_PIPELINE}"
VECTOR = f"{AVX2},fold-constants,dce,onnx-to-uop,fuse-loops,vectorize,plan-arenas,verify-arena-plan,{PRINT_PIPELINE}"


class ConvModel:
    """Convs of one input `x`, each with its own seeded weights and its own graph output."""

    def __init__(self, x_shape: list[int], seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.x_shape = x_shape
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.outputs: list[str] = []

    def const(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def conv(self, out_channels: int, kernel: list[int], bias: bool = True, output: bool = True, **attrs) -> str:
        k = len(self.nodes)
        group = attrs.get("group", 1)
        w = self.rng.standard_normal((out_channels, self.x_shape[1] // group, *kernel))
        inputs = ["x", self.const(f"w{k}", w)]
        if bias:
            inputs.append(self.const(f"b{k}", self.rng.standard_normal(out_channels)))
        name = f"y{k}"
        self.nodes.append(helper.make_node("Conv", inputs, [name], **attrs))
        if output:
            self.outputs.append(name)
        return name

    def node(self, op: str, inputs: list[str]) -> str:
        name = f"{op.lower()}{len(self.nodes)}"
        self.nodes.append(helper.make_node(op, inputs, [name]))
        return name

    def model(self) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes,
            "convs",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, self.x_shape)],
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in self.outputs],
            self.initializers,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        return onnx.shape_inference.infer_shapes(model, strict_mode=True)


def conv2d_model() -> onnx.ModelProto:
    m = ConvModel([2, 6, 9, 11])
    m.conv(16, [3, 3], pads=[1, 1, 1, 1])  # one 16-lane block, border regions
    m.conv(32, [3, 3], pads=[1, 0, 2, 1], strides=[2, 2])  # two blocks, asymmetric pads
    m.conv(16, [3, 3], pads=[2, 2, 2, 2], dilations=[2, 2], bias=False)
    m.conv(24, [1, 1], strides=[2, 2])  # 8-lane blocks, a strided 1×1 Conv
    m.conv(16, [1, 1])  # 6 products per output at unit stride: the scalar form
    m.conv(16, [2, 3], group=2, strides=[1, 2])  # groups of 8 output channels
    m.conv(6, [3, 3], group=6, pads=[1, 1, 1, 1])  # depthwise: the scalar form
    m.conv(12, [3, 3])  # 12 channels do not split into 8: the scalar form
    # A residual epilogue that fuse-loops folds into the lane form's stores.
    first = m.conv(16, [3, 3], pads=[1, 1, 1, 1], output=False)
    second = m.conv(16, [1, 1], output=False)
    m.outputs.append(m.node("Relu", [m.node("Add", [first, second])]))
    return m.model()


def wide_model() -> onnx.ModelProto:
    """Rows of 20 outputs: the pixel-lane form (16 lanes and a tail), channel tiles of 6 and
    the rest (16 = 6 + 6 + 4, 13 = 6 + 6 + 1)."""
    m = ConvModel([1, 5, 7, 20], seed=3)
    m.conv(16, [3, 3], pads=[1, 1, 1, 1])
    m.conv(13, [3, 3], pads=[0, 1, 2, 1], dilations=[2, 1])
    m.conv(5, [3, 3], group=5, pads=[1, 1, 1, 1], strides=[2, 2])  # depthwise rows, strided
    first = m.conv(16, [3, 3], pads=[1, 1, 1, 1], output=False)
    m.outputs.append(m.node("Relu", [m.node("Add", [first, m.conv(16, [1, 1], output=False)])]))
    return m.model()


def depthwise_model() -> list[onnx.ModelProto]:
    """Depthwise Convs that take the depthwise-lane form (strided, or rows shorter than 16):
    two 16-lane blocks, 8-lane blocks (24 channels), dilation, no bias, a 1-D window; and a
    grouped Conv of 2 input channels per group, which keeps depthwise rows."""
    m = ConvModel([1, 48, 7, 9], seed=4)
    m.conv(48, [3, 3], group=48, pads=[1, 1, 1, 1], strides=[2, 2])
    m.conv(48, [5, 5], group=48, pads=[2, 2, 2, 2])
    m.conv(48, [3, 3], group=48, pads=[2, 1, 2, 1], dilations=[2, 1], bias=False)
    m.conv(48, [1, 3], group=48, strides=[1, 2])
    m.conv(24, [3, 3], group=24, pads=[1, 1, 1, 1])  # 2 input channels per group
    narrow = ConvModel([1, 24, 5, 6], seed=5)
    narrow.conv(24, [3, 3], group=24, pads=[1, 1, 1, 1], strides=[2, 2])
    return [m.model(), narrow.model()]


def conv_1d_3d_models() -> list[onnx.ModelProto]:
    one = ConvModel([1, 5, 23], seed=1)
    one.conv(16, [5], pads=[2, 1], strides=[2])
    one.conv(8, [3], dilations=[3])
    three = ConvModel([1, 3, 4, 5, 6], seed=2)
    three.conv(16, [3, 3, 3], pads=[1, 1, 1, 1, 1, 1])
    return [one.model(), three.model()]


@pytest.mark.parametrize("pipeline", [SCALAR, VECTOR], ids=["scalar", "vectorized"])
def test_conv_lanes_2d(pipeline):
    check_model(conv2d_model(), rtol=1e-4, atol=1e-4, pipeline=pipeline)


@pytest.mark.parametrize("pipeline", [SCALAR, VECTOR], ids=["scalar", "vectorized"])
def test_conv_pixel_lanes(pipeline):
    check_model(wide_model(), rtol=1e-4, atol=1e-4, pipeline=pipeline)


@pytest.mark.parametrize("index", [0, 1], ids=["16-lane", "8-lane"])
@pytest.mark.parametrize("pipeline", [SCALAR, VECTOR], ids=["scalar", "vectorized"])
def test_depthwise_lanes(pipeline, index):
    check_model(depthwise_model()[index], rtol=1e-4, atol=1e-4, pipeline=pipeline)


def test_tiles_cover_the_outputs_once():
    for shape, most in (([32, 32], 6), ([8, 8], 6), ([25, 5], 6), ([3, 3], 6), ([7], 4), ([2, 3, 5], 6)):
        tile = best_tile(shape, most)
        assert math.prod(tile) <= most
        covered = np.zeros(shape, int)
        for piece in tile_pieces(shape, tile):
            for (start, end), t in zip(piece.bounds, piece.tile):
                assert (end - start) % t == 0
            covered[tuple(slice(start, end) for start, end in piece.bounds)] += 1
        assert (covered == 1).all()
    # Tiles of at most 6: rows of 5 or 6 take whole rows; 32 x 32 takes 6 outputs as 2 x 3 or
    # 3 x 2, whose rest is a 2-wide strip (1 x 6 would leave 1 x 2 tiles of two FMA chains).
    assert best_tile([25, 5], 6) == (1, 5)
    assert best_tile([6, 6], 6) == (1, 6)
    assert best_tile([32, 32], 6) in ((2, 3), (3, 2))
    assert best_tile([7], 4) == (4,) and best_tile([2, 3, 5], 6) == (1, 1, 5)


@pytest.mark.parametrize("index", [0, 1], ids=["1d", "3d"])
def test_conv_lanes_1d_3d(index):
    check_model(conv_1d_3d_models()[index], rtol=1e-4, atol=1e-4, pipeline=VECTOR)


def test_padding_copy_fuses_into_the_producer():
    """Conv → Relu → padded Conv: fuse-loops moves the copy into the padded buffer's interior
    into the first Conv's stores (with the Relu), so neither the Conv's nor the Relu's output
    has a buffer of its own."""
    from e2e import check_compiled

    m = ConvModel([1, 4, 6, 20], seed=4)
    first = m.conv(16, [3, 3], pads=[1, 1, 1, 1], output=False)
    relu = m.node("Relu", [first])
    w = m.const("w_second", m.rng.standard_normal((8, 16, 3, 3)))
    m.nodes.append(helper.make_node("Conv", [relu, w], ["second"], pads=[1, 1, 1, 1]))
    m.outputs.append("second")
    result, _ = check_compiled(m.model(), rtol=1e-4, atol=1e-4, pipeline=VECTOR)
    scratch = {t["name"] for t in result.plan["tensors"] if t["role"] == "scratch"}
    assert first not in scratch and relu not in scratch and "second_padded" in scratch, scratch


def test_weights_beyond_the_caches_take_fewer_wider_tiles():
    """A Conv whose weights outgrow the caches reads all of them once per tile: 8 lanes by 12
    pixels cover ResNet-18's 3x3 outputs in one tile where 16 lanes by 6 take two; smaller
    weights, or boxes the narrow tile does not cover in fewer tiles, keep 16 lanes."""
    from zant.passes.onnx_to_uop.conv_tiling import STREAMED_WEIGHTS, VectorConv

    vector = VectorConv(lanes=16, tile=6)
    big = 512 * 512 * 9 * 4
    assert big > STREAMED_WEIGHTS
    assert vector.channel_lanes(512, (3, 3), big) == (8, 12)
    assert vector.channel_lanes(512, (3, 3), STREAMED_WEIGHTS) == (16, 6)
    assert vector.channel_lanes(512, (2, 3), big) == (16, 6)  # one 16-lane tile already
    assert vector.channel_lanes(24, (3, 3), 0) == (8, 12)  # channels not in 16s


AVX512 = "set-target{target=host cpu=x86-64-avx512}"
VECTOR_AVX512 = f"{AVX512},fold-constants,dce,onnx-to-uop,fuse-loops,vectorize,plan-arenas,verify-arena-plan,{PRINT_PIPELINE}"


def test_register_tiles_hold_several_blocks_where_registers_allow():
    """The channel-lane register tile from its cost model (`VectorConv.lane_tile`): on AVX2
    (16 ymm: 8 16-lane vectors) one block of lanes, as before; on AVX-512 (32 zmm) ResNet-18's
    64-channel 3x3 layer at 56x56 takes 2 blocks by 14 pixels (`MAX_BLOCKS`): 28 FMAs for 2
    vector and 14 broadcast loads per step, where one block by 14 pixels loads 15 for 14."""
    from zant.passes.onnx_to_uop.conv_tiling import VectorConv, lane_tile_cost

    avx2, avx512 = VectorConv(16, 6, registers=8), VectorConv(16, 14, registers=32)
    assert avx2.lane_tile(4, (56, 56), 6) == (1, best_tile((56, 56), 6))
    assert VectorConv(16, 6).lane_tile(4, (56, 56), 6) == (1, best_tile((56, 56), 6))  # registers unknown
    blocks, tile = avx512.lane_tile(4, (56, 56), 14)
    assert (blocks, tile) == (2, (1, 14))
    assert blocks * math.prod(tile) + blocks + 2 <= 32  # accumulators, weights, a broadcast
    assert lane_tile_cost(4, (56, 56), 2, (1, 14)) < lane_tile_cost(4, (56, 56), 1, best_tile((56, 56), 14))
    assert avx512.lane_tile(1, (55, 55), 14)[0] == 1  # one block of channels: nothing to share


@pytest.mark.parametrize("lanes", [16, 8])
def test_several_blocks_per_tile_numerics(lanes):
    """Channel-lane Convs whose tiles hold several blocks of output channels (AVX-512's
    registers), with remainders of blocks and pixels, strided, channels-last and not, fused
    epilogue: equal to the reference, vectorized."""
    m = ConvModel([1, 16, 9, 11], seed=6)
    m.conv(3 * lanes, [3, 3], pads=[1, 1, 1, 1], strides=[2, 2])  # 3 blocks, strided
    m.conv(5 * lanes, [3, 3], pads=[1, 0, 1, 2])  # channels-last (16 channels >= 9 taps)
    m.conv(4 * lanes, [1, 1], strides=[2, 2], bias=False)
    first = m.conv(2 * lanes, [3, 3], pads=[1, 1, 1, 1], strides=[2, 1], output=False)
    m.outputs.append(m.node("Relu", [first]))
    pipeline = VECTOR_AVX512 if lanes == 16 else VECTOR_AVX512.replace("onnx-to-uop", "onnx-to-uop{conv-lanes=8 conv-tile=14}")
    check_model(m.model(), rtol=1e-4, atol=1e-4, pipeline=pipeline)


def test_channels_not_in_whole_blocks_split_into_wide_blocks_and_an_8_lane_rest():
    """Output channels that do not split into L-lane blocks (SqueezeNet's 1000 classes, 24 or
    40 channels) take whole L-lane blocks and one 8-lane rest (`VectorConv.channel_spans`),
    which the cost model finds cheaper than 8 lanes throughout on AVX2 and AVX-512 alike;
    multiples of L, fewer than L, or not multiples of 8 stay one part."""
    from zant.passes.onnx_to_uop.conv_tiling import VectorConv

    for vector in (VectorConv(16, 14, registers=32), VectorConv(16, 6, registers=8), VectorConv(16, 6)):
        assert vector.channel_spans(1000, (13, 13)) == [(0, 992), (992, 8)]
        assert vector.channel_spans(40, (7, 7)) == [(0, 32), (32, 8)]
        assert vector.channel_spans(24, (3, 3)) == [(0, 16), (16, 8)]
        assert vector.channel_spans(48, (5, 5)) == [(0, 48)]
        assert vector.channel_spans(8, (5, 5)) == [(0, 8)]
        assert vector.channel_spans(20, (5, 5)) == [(0, 20)]
    assert VectorConv(8, 14).channel_spans(24, (5, 5)) == [(0, 24)]  # 8 lanes: whole blocks already


@pytest.mark.parametrize("pipeline", [VECTOR, VECTOR_AVX512], ids=["avx2", "avx512"])
def test_wide_blocks_and_an_8_lane_rest_numerics(pipeline):
    """Channel-lane Convs split into 16-lane blocks and an 8-lane rest: each part writes its own
    channels of Y with its own bias, strided, channels-last, without bias, and with a Relu
    epilogue fused into both parts' stores: equal to the reference, vectorized."""
    m = ConvModel([1, 16, 9, 11], seed=7)
    m.conv(40, [1, 1], strides=[2, 2])  # 32 + 8
    m.conv(24, [3, 3], pads=[1, 1, 1, 1])  # 16 + 8, channels-last (16 channels >= 9 taps)
    m.conv(56, [3, 3], pads=[0, 1, 1, 0], strides=[2, 1], bias=False)  # 48 + 8
    first = m.conv(24, [3, 3], pads=[1, 1, 1, 1], strides=[2, 2], output=False)
    m.outputs.append(m.node("Relu", [first]))
    check_model(m.model(), rtol=1e-4, atol=1e-4, pipeline=pipeline)


def test_streamed_weights_take_l_lanes_and_reduction_chunks():
    """Weights beyond the caches (ResNet-18's 512-channel 3x3 Convs, 9.4 MB): on AVX-512 two
    16-lane blocks by 2x7 pixels (two weight streams, full-width multiply-adds) where
    `channel_lanes` alone took 8 lanes; on AVX2, whose 16-lane vector is 2 ymm, two 8-lane
    blocks by 2x3 (12 ymm of accumulators). The reduction then runs in chunks of `CHUNK_BYTES`
    of weights, fetched once for all the tiles; one tile, or weights in the caches, take no
    chunks; weights in the caches keep `channel_lanes` and `lane_tile`."""
    from zant.passes.onnx_to_uop.conv_tiling import CHUNK_BYTES, STREAMED_WEIGHTS, VectorConv

    big = 512 * 512 * 9 * 4
    avx512, avx2 = VectorConv(16, 14, registers=32), VectorConv(16, 6, registers=8, lane_registers=2)
    assert avx512.channel_lanes(512, (7, 7), big) == (8, 28)
    assert avx512.lane_plan(512, (7, 7), big) == (16, 2, (2, 7))
    assert avx2.lane_plan(512, (7, 7), big) == (8, 2, (2, 3))
    assert avx512.lane_plan(256, (14, 14), 256 * 256 * 9 * 4) == (16, *avx512.lane_tile(16, (14, 14), 14))
    assert avx512.reduction_chunk(512, 32, (7, 7), (2, 7), big) == CHUNK_BYTES // 128
    assert avx512.reduction_chunk(512, 16, (3, 3), (3, 3), big) == 0  # one tile
    assert avx512.reduction_chunk(512, 16, (7, 7), (4, 7), STREAMED_WEIGHTS) == 0
    assert avx512.reduction_chunk(48, 32, (7, 7), (2, 7), big) == 24  # 32 fit: the largest divisor of 48


def test_reduction_chunks_numerics():
    """A Conv whose 4.7 MB of weights stream, 256 -> 512 channels 3x3 at 7x7 with bias and a
    fused Relu, in reduction chunks on AVX-512: equal to the reference."""
    m = ConvModel([1, 256, 7, 7], seed=8)
    first = m.conv(512, [3, 3], pads=[1, 1, 1, 1], output=False)
    m.outputs.append(m.node("Relu", [first]))
    m.conv(512, [3, 3], pads=[0, 1, 1, 0], bias=False)
    check_model(m.model(), rtol=1e-3, atol=1e-3, pipeline=VECTOR_AVX512)


def test_a_conv_read_channels_last_takes_channel_lanes_numerics():
    """1x1 Convs whose rows would take pixel lanes, read (through Relu, Clip or a
    BatchNormalization) by a Conv that copies its X channels-last (strided depthwise: depthwise
    lanes; a 3x3 over 16 channels: streamed channel lanes), take channel lanes
    (`_read_channels_last`); one read by two Convs keeps pixel lanes. Equal to the reference,
    vectorized on AVX2 and AVX-512."""
    m = ConvModel([1, 16, 5, 20], seed=9)
    rng = np.random.default_rng(10)
    a = m.node("Relu", [m.conv(32, [1, 1], output=False)])
    m.nodes.append(helper.make_node("Conv", [a, m.const("dw", rng.standard_normal((32, 1, 3, 3)))], ["dw_out"],
                                    group=32, pads=[1, 1, 1, 1], strides=[2, 2]))
    m.outputs.append("dw_out")
    bn = [m.const(f"bn{i}", v) for i, v in enumerate((rng.uniform(0.5, 2, 16), rng.standard_normal(16),
                                                       rng.standard_normal(16), rng.uniform(0.5, 2, 16)))]
    b = m.conv(16, [1, 1], output=False)
    m.nodes.append(helper.make_node("BatchNormalization", [b, *bn], ["bn_out"]))
    clipped = m.node("Clip", ["bn_out", m.const("lo", np.array(0.0)), m.const("hi", np.array(6.0))])
    m.nodes.append(helper.make_node("Conv", [clipped, m.const("k3x3", rng.standard_normal((16, 16, 3, 3)))], ["c3"],
                                    pads=[1, 1, 1, 1]))
    m.outputs.append("c3")
    shared = m.conv(16, [1, 1], output=False)
    for k in range(2):
        m.nodes.append(helper.make_node("Conv", [shared, m.const(f"s{k}", rng.standard_normal((16, 1, 3, 3)))],
                                        [f"shared{k}"], group=16, strides=[2, 2]))
        m.outputs.append(f"shared{k}")
    for pipeline in (VECTOR, VECTOR_AVX512):
        check_model(m.model(), rtol=1e-4, atol=1e-4, pipeline=pipeline)


def test_pixel_lane_tiles_by_cost():
    """The pixel-lane form's channels per tile from `pixel_tile_cost` (`VectorConv.pixel_tile`):
    on AVX-512 (32 zmm) MobileNetV2's 16 channels take one tile of 16 where the fixed tile of 14
    left a tile of 2 (two multiply-add chains waiting on their latency), 96 take 6 of 16 and 144
    9 of 16 (at most `MAX_PIXEL_TILE`); AVX2's 8 16-lane vectors and unknown registers keep the
    target's tile of 6, or even tiles where a rest would wait on its latency."""
    from zant.passes.onnx_to_uop.conv_tiling import MAX_PIXEL_TILE, VectorConv, pixel_tile_cost

    avx512 = VectorConv(16, 14, registers=32)
    avx2 = VectorConv(16, 6, registers=8, lane_registers=2)
    assert [avx512.pixel_tile(m) for m in (16, 96, 144, 8, 3)] == [16, 16, 16, 8, 3]
    assert max(avx512.pixel_tile(m) for m in range(1, 300)) == MAX_PIXEL_TILE
    assert pixel_tile_cost(16, 16) < pixel_tile_cost(16, 14)
    assert [avx2.pixel_tile(m) for m in (6, 12, 96)] == [6, 6, 6]
    assert avx2.pixel_tile(16) in (4, 6) and VectorConv(16, 6).pixel_tile(96) == 6


def test_depthwise_rows_take_row_blocks_by_whole_vectors():
    """Depthwise rows of one whole 16-lane vector (28 pixels) take 4 rows per step, of 3 (56)
    2, of 7 (112) 1: `FMA_LATENCY` independent sums per step (`VectorConv.row_block`)."""
    from zant.passes.onnx_to_uop.conv_tiling import VectorConv

    vector = VectorConv(16, 14, registers=32)
    assert [vector.row_block(w) for w in (28, 56, 112, 20, 12)] == [4, 2, 1, 4, 1]


@pytest.mark.parametrize("pipeline", [VECTOR, VECTOR_AVX512], ids=["avx2", "avx512"])
def test_row_blocks_and_pixel_tiles_numerics(pipeline):
    """Depthwise rows in blocks of rows with a rest of rows (30 rows of 20 outputs in 4s, 2
    left; 15 rows of 36 in 2s, 1 left), dilated and without bias, with a Clip epilogue; pixel-lane
    Convs of 16, 24 and 40 output channels (tiles of 16 and rests): equal to the reference."""
    m = ConvModel([1, 16, 30, 20], seed=9)
    first = m.conv(16, [3, 3], group=16, pads=[1, 1, 1, 1], output=False)
    m.outputs.append(m.node("Relu", [first]))
    m.conv(16, [3, 3], group=16, pads=[2, 2, 2, 2], dilations=[2, 2], bias=False)
    m.conv(16, [1, 1])
    m.conv(24, [1, 1])
    m.conv(40, [1, 1], bias=False)
    wide = ConvModel([1, 16, 15, 36], seed=10)
    wide.conv(16, [3, 3], group=16, pads=[1, 1, 1, 1])
    for model in (m.model(), wide.model()):
        check_model(model, rtol=1e-4, atol=1e-4, pipeline=pipeline)
