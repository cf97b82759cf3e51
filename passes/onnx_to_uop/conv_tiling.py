"""How Convs are laid out for targets with vector registers: the choice of form (`VectorConv`)
and the tiling of an output box (`tile_pieces`) with its cost model (`best_tile`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

STREAMED_WEIGHTS = 4 << 20
"""Weights larger than this (bytes) are taken to come from memory on each pass over them (more
than a core's L2 and its share of the last level; ResNet-18's 2.4 MB 256-channel layers ran
slower in 8-lane tiles, its 4.7 and 9.4 MB 512-channel ones faster)."""

MIN_REDUCTION = 32
"""Fewer products per output than this, at unit stride, keep a Conv out of the channel-lane form."""


@dataclass(frozen=True)
class VectorConv:
    """How Convs are laid out for a target with vector registers (`onnx-to-uop{conv-lanes=L
    conv-tile=P}`): each form is scalar uop code shaped so that `vectorize` turns one loop into
    L-lane vectors with P independent vector accumulators (a register tile of P × L outputs).
    X is always copied into a zero-bordered buffer first, so no load needs a padding check.

    * **pixel lanes** (unit stride, no groups, output rows of at least L, unless the window
      streams, below): output rows are the vector loop (the inputs of a tap are consecutive, the
      stores too), P output channels per tile, each weight broadcast;
    * **channel lanes** (other Convs whose groups have 8 or more output channels, constant
      weights): the loop over a block of L output channels is the vector loop, around a tile of
      up to P output pixels (`LaneConv`): weights repacked as W'[m / L, c, k…, m % L] are
      consecutive across it, each input is broadcast, whatever the stride (stores scatter into
      an NCHW output). A window of several taps over at least as many input channels
      *streams*: its channels innermost in the reduction, over a channels-last padded copy of X
      and weights packed W'[m / L, k…, c, m % L], so each tile reads X and W' front to back
      (ResNet-18's 512-channel 3x3 layers ran 3x faster so; at least L output channels per
      group take this form even where pixel lanes would fit, unless the rows are whole
      vectors);
    * **depthwise rows** (one input channel per output channel): each output row one loop,
      vectorized along the row;
    * **depthwise lanes** (one input channel per output channel, channels in 8s, constant
      weights, and strided or with rows shorter than L, which rows would gather or leave
      scalar): the channel-lane form with each lane reading its own channel from a
      channels-last padded copy of X (one vector load per tap and pixel) and the weights packed
      W'[m / L, 1, k…, m % L];
    * otherwise the scalar form.
    """

    lanes: int
    tile: int
    registers: int = 0
    """Vector registers of the target counted in L-lane vectors (0: unknown); with enough of
    them a channel-lane tile holds several blocks of L output channels (`lane_tile`)."""
    lane_registers: int = 1
    """Hardware registers of one L-lane vector (AVX2: 2 ymm; AVX-512: 1 zmm); an 8-lane vector
    takes max(1, lane_registers * 8 / L) of them and its multiply-add issues as one of them."""
    streamed_weights: int = STREAMED_WEIGHTS
    """Weight bytes beyond which a Conv's weights are taken to stream from memory on each pass
    (`onnx-to-uop{conv-streamed-weights=N}`; default `STREAMED_WEIGHTS`)."""
    winograd: bool = True
    """Whether 3x3 Convs may take the Winograd form (`conv_winograd.takes_winograd`;
    `onnx-to-uop{conv-winograd=false}`: never)."""

    def form(
        self, group: int, out_per_group: int, reduction: int, strides: Sequence[int], row: int, taps: int = 1
    ) -> str:
        unit_stride = all(s == 1 for s in strides)
        # A window of several taps over at least as many channels, whose output channels fill
        # whole vectors, streams its channels-last input and packed weights once per tile:
        # faster than pixel lanes unless the rows split into whole vectors (ResNet-18's 24-wide
        # rows stream, 1.25x -> 0.96x onnxruntime; ResNet-8's 32- and 16-wide ones do not,
        # 0.86x as pixel lanes, 0.98x streamed).
        streams = (
            taps > 1 and reduction >= taps * taps and out_per_group % self.lanes == 0 and row % self.lanes != 0
        )
        if group == 1 and unit_stride and row >= self.lanes and not streams:
            return "pixel lanes"
        if out_per_group == 1 and group > 1:
            if reduction == taps and group % 8 == 0 and (not unit_stride or row < self.lanes):
                return "depthwise lanes"
            return "depthwise rows"
        if out_per_group % 8 == 0 and (reduction >= MIN_REDUCTION or not unit_stride):
            return "channel lanes"
        return "scalar"

    def channel_lanes(
        self, out_per_group: int, out_spatial: Sequence[int] = (), weight_bytes: int = 0
    ) -> tuple[int, int]:
        """(lanes, pixels) of the channel-lane form: L lanes, or 8 with as many more pixels when
        the channels do not split into Ls, or when the weights outgrow the caches
        (`STREAMED_WEIGHTS`) and the larger tile covers the output box in fewer tiles: each
        tile reads all of the weights once (ResNet-18's last 3x3 layers, 9.4 MB over 3x3
        outputs: two tiles of 16 lanes, one of 8)."""
        narrow = (8, self.tile * self.lanes // 8)
        if out_per_group % self.lanes:
            return narrow
        if weight_bytes > self.streamed_weights and self.lanes > 8:
            def tiles(pixels: int) -> int:
                return sum(p.blocks for p in tile_pieces(out_spatial, best_tile(out_spatial, pixels)))

            if tiles(narrow[1]) < tiles(self.tile):
                return narrow
        return self.lanes, self.tile


    def channel_spans(
        self, out_channels: int, out_spatial: Sequence[int], weight_bytes: int = 0, most_blocks: int = 0
    ) -> list[tuple[int, int]]:
        """(first, count) of the parts of an ungrouped channel-lane Conv's output channels that
        each take their own lane width (`channel_lanes`): all of them, or, when they do not
        split into L-lane blocks, the whole blocks of L first and the rest (a multiple of 8) in
        8-lane blocks, whichever `lane_tile_cost` estimates cheaper over the whole output (each
        part's tile its own `lane_tile`; an 8-lane multiply-add issues as one L-lane one does).
        SqueezeNet's 1000-class 1x1 Conv: 62 blocks of 16 and one of 8, where 8 lanes throughout
        did 125 half-width blocks."""
        whole = out_channels - out_channels % self.lanes
        if whole in (0, out_channels) or out_channels % 8:
            return [(0, out_channels)]

        def cost(spans: list[tuple[int, int]]) -> float:
            total = 0.0
            for _, count in spans:
                lanes, width, tile = self.lane_plan(count, out_spatial, weight_bytes * count // out_channels, most_blocks)
                total += lane_tile_cost(count // lanes, out_spatial, width, tile)[0]
            return total

        return min([[(0, out_channels)], [(0, whole), (whole, out_channels - whole)]], key=cost)

    def lane_plan(
        self, out_channels: int, out_spatial: Sequence[int], weight_bytes: int = 0, most_blocks: int = 0
    ) -> tuple[int, int, tuple[int, ...]]:
        """(lanes, blocks of lanes per tile, pixel tile) of an ungrouped channel-lane Conv (or
        part of one: `channel_spans`): `channel_lanes` then `lane_tile`; but when the weights
        outgrow the caches (`STREAMED_WEIGHTS`) and the registers are known, the tile of L or 8
        lanes, 1 to `MAX_BLOCKS` blocks and as many pixels as the registers hold (8-lane vectors
        counted in hardware registers: `lane_registers`) with the least of the larger of its
        multiply-adds (`lane_tile_cost`, in hardware instructions) and its weight traffic, then
        the multiply-adds. The traffic: the tiles read the weights from memory once (in
        reduction chunks, `reduction_chunk`, when there are several tiles), one stream per
        block of the tile, each at `WEIGHT_STREAM_BYTES` per cycle: more blocks per tile, more
        weight bytes in flight. ResNet-18's 512-channel 3x3 Convs at 7x7 on AVX-512: two
        16-lane blocks by 2x7 pixels (measured with chunks: 2.00 ms, one block by 4x7 2.53 ms),
        where `channel_lanes` took 8 lanes (half-width multiply-adds) for fewer passes."""
        lanes, pixels = self.channel_lanes(out_channels, out_spatial, weight_bytes)
        if not self.registers or weight_bytes <= self.streamed_weights:
            return (lanes, *self.lane_tile(out_channels // lanes, out_spatial, pixels, most_blocks))
        hardware = self.registers * self.lane_registers
        candidates = []
        for lanes in sorted({self.lanes, 8}, reverse=True):
            if out_channels % lanes:
                continue
            per_vector = max(1, self.lane_registers * lanes // self.lanes)
            budget = hardware // per_vector
            for b in range(1, min(out_channels // lanes, MAX_BLOCKS) + 1):
                most = (budget - b - 2) // b  # accumulators beside b weights and a broadcast
                if most >= 1:
                    candidates.append((lanes, b, best_tile(out_spatial, most)))

        def cost(candidate: tuple[int, int, tuple[int, ...]]) -> tuple[float, float]:
            lanes, width, tile = candidate
            per_vector = max(1, self.lane_registers * lanes // self.lanes)
            multiply_adds = lane_tile_cost(out_channels // lanes, out_spatial, width, tile)[0] * per_vector
            # per reduction step: one f32 weight per output channel, over `width` streams
            traffic = out_channels * 4 / (WEIGHT_STREAM_BYTES * width)
            return max(multiply_adds, traffic), multiply_adds

        if not candidates:
            return (lanes, *self.lane_tile(out_channels // lanes, out_spatial, pixels, most_blocks))
        return min(candidates, key=cost)

    def reduction_chunk(
        self, channels: int, tile_lanes: int, out_spatial: Sequence[int], tile: Sequence[int], weight_bytes: int
    ) -> int:
        """Input channels per reduction chunk of a channel-lane Conv whose channels run innermost
        (`LaneConv.chunk`), 0 for none. When the weights outgrow the caches (`STREAMED_WEIGHTS`)
        and the output box takes several tiles, each tile's pass over a block's weights would
        fetch them from memory again or from L2 behind the first; in chunks of the largest divisor
        of the channels whose weights (`tile_lanes` f32 per channel) fit `CHUNK_BYTES`, each
        chunk is fetched once and read from L1 by every tile, at the cost of a load and a store
        of each accumulator per chunk and tile. ResNet-18's 512-channel 3x3 Convs at 7x7."""
        passes = sum(piece.blocks for piece in tile_pieces(out_spatial, tile))
        if weight_bytes <= self.streamed_weights or passes < 2:
            return 0
        most = max(1, CHUNK_BYTES // (tile_lanes * 4))
        chunk = max(d for d in range(1, min(most, channels) + 1) if channels % d == 0)
        return chunk if chunk < channels else 0

    def pixel_tile(self, out_channels: int) -> int:
        """Output channels per register tile of the pixel-lane form (one accumulator vector of L
        pixels each, the row vector loaded once per reduction step and each weight broadcast):
        the cheapest by `pixel_tile_cost` among the tiles whose accumulators, the row vector and
        a broadcast fit the registers (`tile` when they are unknown), at most
        `MAX_PIXEL_TILE`; among equals the larger. A tile of `tile` channels and a rest left the
        rest's few accumulators waiting on the FMA latency: MobileNetV2's 16 -> 96 1x1 Conv at
        112x112 took 6 tiles of 14 and one of 12, now 6 of 16; its 32 -> 16 ones one of 14 and
        one of 2, now one of 16."""
        most = self.tile
        if self.registers:
            hardware, per_vector = self.registers * self.lane_registers, self.lane_registers
            most = (hardware - per_vector - 2) // per_vector
        most = max(1, min(most, MAX_PIXEL_TILE, out_channels))
        return min(
            range(1, most + 1), key=lambda t: (pixel_tile_cost(out_channels, t, self.lane_registers), -t)
        )

    def pointwise_cycles(self, channels: int, out_channels: int, out_spatial: Sequence[int], lanes: bool) -> float:
        """Estimated cycles of an ungrouped 1x1 Conv's multiply-adds and loads over its whole
        output in the channel-lane form (`lanes`: `channel_spans`, each part's `lane_plan` by
        `lane_tile_cost`) or the pixel-lane form (`pixel_tile` channels per tile by
        `pixel_tile_cost`, per vector of L pixels of the flattened output), `channels` reduction
        steps each: what `assign-host-layouts` weighs when a layout decides the form."""
        if not lanes:
            vectors = -(-math.prod(out_spatial) // self.lanes)
            return channels * vectors * pixel_tile_cost(
                out_channels, self.pixel_tile(out_channels), self.lane_registers
            )
        total = 0.0
        for _, count in self.channel_spans(out_channels, out_spatial):
            part_lanes, width, tile = self.lane_plan(count, out_spatial)
            per_vector = max(1, self.lane_registers * part_lanes // self.lanes)
            total += lane_tile_cost(count // part_lanes, out_spatial, width, tile)[0] * per_vector
        return channels * total

    def row_block(self, row: int) -> int:
        """Output rows per step of the depthwise-row form (`convolve`'s `row_block`) for output
        rows of `row` pixels: each whole L-lane vector of a row is one chain of multiply-adds
        over the taps, independent of the others, and the row's rest is a loop of its own; the
        least number of rows, at most `MAX_ROW_BLOCK`, whose whole vectors give `FMA_LATENCY`
        chains per row step. MobileNetV2's 3x3 depthwise layers (one-layer models behind a 1x1
        Conv, ms by rows per step 1 / 2 / 4): 192 channels at 28x28 (1 whole vector a row)
        0.086 / 0.073 / 0.068, 144 at 56x56 (3) 0.292 / 0.276 / 0.280, 32 at 112x112 (7)
        0.215 / 0.229 / -."""
        whole = row // self.lanes
        if whole == 0:
            return 1
        return min(MAX_ROW_BLOCK, -(-FMA_LATENCY // whole))

    def lane_tile(
        self, blocks: int, out_spatial: Sequence[int], pixels: int, most_blocks: int = 0
    ) -> tuple[int, tuple[int, ...]]:
        """(blocks of L output channels, pixel tile) of an ungrouped channel-lane Conv's register
        tile: `blocks` blocks of lanes, at most `pixels` outputs per tile when it holds one block
        (`channel_lanes`). The cheapest by `lane_tile_cost` among the tiles of at most
        `MAX_BLOCKS` blocks whose accumulators, weight vectors and a broadcast fit `registers`
        (one block when they are unknown; AVX2's 8 16-lane vectors: one block by 6 pixels;
        AVX-512's 32: two blocks by 14 pixels, 16 loads for 28 multiply-adds where one block
        loads 15 for 14); at most `most_blocks` blocks where given (`MAX_WHOLE_BLOCKS` into a channels-last Y)."""
        candidates = [(1, best_tile(out_spatial, pixels))]
        for b in range(2, min(blocks, most_blocks or MAX_BLOCKS) + 1):
            most = (self.registers - b - 2) // b
            if most >= 1:
                candidates.append((b, best_tile(out_spatial, most)))
        return min(candidates, key=lambda c: lane_tile_cost(blocks, out_spatial, *c))


MAX_BLOCKS = 2
"""Most blocks of L output channels per channel-lane register tile. Measured on an AVX-512 host
(ours/onnxruntime per layer, tiles of at most 1, 2 and any number of blocks as the cost model
chose them): SqueezeNet's 16->64 3x3 at 55x55 0.83 / 0.75 / 0.87, its 512->1000 1x1 at 13x13
1.33 / 1.17 / 1.22, ResNet-18's 64-channel 3x3 at 56x56 1.31 / 1.16 / 1.15 and 256-channel at
14x14 1.28 / 1.00 / 1.17, MobileNetV2's 320->1280 1x1 at 7x7 0.84 / 0.68 / 0.69, its 96->576
at 14x14 0.52 / 0.53 / 0.67: more blocks mean tiles of 4-6 pixels, whose stores into the NCHW
output and per-tile overhead the model does not count."""

MAX_WHOLE_BLOCKS = 6
"""Most blocks of L output channels per register tile of a channel-lane Conv whose vectors store
whole into a channels-last Y (`ConvLowering`; `MAX_BLOCKS` counted the stores of scatters into an
NCHW output). mobilenet_v2_legacy with every stage channels-last (each build from two copies,
interleaved with onnxruntime, thread CPU time), at most 2 -> 6 blocks in the tiles of every
channel-lane Conv at 14x14 and larger / at every size: 6.341 -> 6.266 / 6.265 ms, 6.312 -> 6.243
ms at every size in another run (the 16 -> 96 expansion at 112x112 one pass over X instead of
three); 3 blocks: 6.298."""

MAX_PIXEL_TILE = 16
"""Most output channels per pixel-lane register tile (`VectorConv.pixel_tile`). One-layer 1x1
Convs + Clip on an AVX-512 host (Zen 4), ms by channels per tile 12 / 16 / 18 / 20 / 24: 24 -> 144
at 56x56 0.211 / 0.206 / 0.222 / 0.232 / 0.239, 16 -> 96 at 112x112 0.426 / 0.394 / 0.462 /
0.458 / 0.492, 32 -> 192 at 28x28 0.088 / 0.087 / 0.093 / 0.093 / 0.092: the model counts
fewer loads per multiply-add for the larger tiles, but they run slower."""

MAX_ROW_BLOCK = 4
"""Most output rows per step of the depthwise-row form (`VectorConv.row_block`)."""

CHUNK_BYTES = 4 << 10
"""Weights per reduction chunk (`VectorConv.reduction_chunk`): half of the smallest common L1
data cache (32 KB), leaving the rest to the input rows and the partial sums."""

WEIGHT_STREAM_BYTES = 2
"""Bytes per cycle one stream of weights that do not stay in the caches (`STREAMED_WEIGHTS`)
delivers from memory, for `lane_plan`: an estimate from ResNet-18's 512-channel 3x3 layer at 7x7
on an AVX-512 host (1.73 ms with its weights confined to L1, 2.53 ms streamed by one block per
tile, 2.00 ms by two: one stream kept about 2 bytes per cycle in flight)."""

FMA_PORTS = 2
"""Vector multiply-adds a host core issues per cycle (x86-64 since Haswell, AVX-512 server cores,
recent AArch64): an estimate for the register-tile cost model."""

LOAD_PORTS = 2
"""Vector or broadcast loads a host core issues per cycle (the same estimate)."""

FMA_LATENCY = 4
"""Cycles of one multiply-add: a tile of fewer than FMA_LATENCY x FMA_PORTS accumulators waits
on its chains."""


def lane_tile_cost(blocks: int, out_spatial: Sequence[int], width: int, tile: Sequence[int]) -> tuple[float, float]:
    """Estimated cycles per reduction step of a channel-lane Conv over its whole output, tile by
    tile (the whole tiles and the smaller ones of the remainders, over the blocks of output
    channels and the output box), for tiles of `width` blocks of lanes by `tile` pixels: a step
    of b blocks by k pixels does b*k vector multiply-adds and b vector + k broadcast loads, and
    takes the longest of the FMAs over `FMA_PORTS`, the loads over `LOAD_PORTS` and
    `FMA_LATENCY`; then the loads per multiply-add (fewer: less pressure on the caches)."""
    cycles = loads = fmas = 0.0
    for block_piece in tile_pieces([blocks], [width]):
        b = block_piece.tile[0]
        for piece in tile_pieces(out_spatial, tile):
            k = math.prod(piece.tile)
            count = block_piece.blocks * piece.blocks
            cycles += count * max(b * k / FMA_PORTS, (b + k) / LOAD_PORTS, FMA_LATENCY)
            loads += count * (b + k)
            fmas += count * b * k
    return cycles, loads / fmas


def pixel_tile_cost(out_channels: int, channels: int, lane_registers: int = 1) -> float:
    """Estimated cycles per reduction step of a pixel-lane Conv's tiles over its `out_channels`
    in tiles of `channels` (whole tiles, then one of the rest): a tile of k channels does k
    multiply-adds of L lanes (each `lane_registers` hardware instructions) and loads the row
    vector and k broadcasts, and takes the longest of the multiply-adds over `FMA_PORTS`, the
    loads over `LOAD_PORTS` and `FMA_LATENCY`."""
    cycles = 0.0
    for piece in tile_pieces([out_channels], [channels]):
        k = piece.tile[0]
        cycles += piece.blocks * max(
            k * lane_registers / FMA_PORTS, (lane_registers + k) / LOAD_PORTS, FMA_LATENCY
        )
    return cycles


@dataclass(frozen=True)
class TilePiece:
    """A box of outputs, [start, end) per spatial dimension, computed in tiles of `tile`
    outputs per dimension (every extent a multiple of its tile)."""

    bounds: tuple[tuple[int, int], ...]
    tile: tuple[int, ...]

    @property
    def blocks(self) -> int:
        return math.prod((end - start) // t for (start, end), t in zip(self.bounds, self.tile))


def tile_pieces(out_spatial: Sequence[int], tile: Sequence[int]) -> list[TilePiece]:
    """The output box split into pieces whose extents are multiples of their tiles: along
    each dimension the largest multiple of `tile` first, then the rest as one smaller tile."""
    pieces = [TilePiece((), ())]
    for size, t in zip(out_spatial, tile):
        whole = size - size % t
        spans = [(0, whole, t), (whole, size, size - whole)]
        pieces = [
            TilePiece((*p.bounds, (start, end)), (*p.tile, step))
            for p in pieces
            for start, end, step in spans
            if start < end
        ]
    return pieces


def best_tile(out_spatial: Sequence[int], most: int) -> tuple[int, ...]:
    """The tile of at most `most` outputs, over the last two spatial dimensions, that covers
    the output box at the lowest cost: a tile of k outputs takes about max(k, `most` - 1)
    steps per reduction step (k vector FMAs chains; fewer leave the FMA latency exposed)."""
    rank = len(out_spatial)
    rows = out_spatial[-2] if rank >= 2 else 1
    candidates = [
        (1,) * (rank - 2) + (r, q) if rank >= 2 else (q,)
        for r in range(1, min(most, rows) + 1)
        for q in range(1, min(most // r, out_spatial[-1]) + 1)
    ]

    def cost(tile: tuple[int, ...]) -> tuple[int, int]:
        total = sum(p.blocks * max(math.prod(p.tile), most - 1) for p in tile_pieces(out_spatial, tile))
        return total, -math.prod(tile)

    return min(candidates, key=cost)



STEP_OVERHEAD = 3
"""Instructions of one reduction step besides its loads and multiply-adds: the loop's counter
and branch and the pointer increments (an estimate; LLVM unrolls some of it away)."""


def register_tile(out_per_group: int, width: int, registers: int) -> tuple[int, int]:
    """(channels, pixels) of the register tile of a scalar float Conv on a core with `registers`
    float registers (32 on the FPU Cortex-Ms and RV32F): channels × pixels accumulators, and per
    reduction step `channels` weight and `pixels` input loads each used that many times, all in
    registers. `channels` divides the group's output channels; the pixels are neighbours in the
    last spatial dimension of a `width`-wide interior, whose remainder takes tiles of one pixel.

    The cost is the instructions of the reduction, tile by tile: loads + multiply-adds +
    `STEP_OVERHEAD` per step; among equals the smaller tile. 64 channels over a 5-wide row
    (KWS's pointwise Convs): 4 × 5, 1.6 instructions per MAC (4 × 1: 2.75)."""
    candidates = [
        (c, p)
        for c in range(1, out_per_group + 1)
        if out_per_group % c == 0
        for p in range(1, max(width, 1) + 1)
        if c * p + c + p <= registers
    ]

    def step(c: int, p: int) -> int:
        return c + p + c * p + STEP_OVERHEAD

    def cost(tile: tuple[int, int]) -> tuple[int, int]:
        c, p = tile
        whole, rest = divmod(max(width, 1), p)
        return out_per_group // c * (whole * step(c, p) + rest * step(c, 1)), c * p

    return min(candidates, key=cost) if candidates else (1, 1)


__all__ = ["CHUNK_BYTES", "FMA_LATENCY", "FMA_PORTS", "LOAD_PORTS", "MAX_BLOCKS", "MAX_PIXEL_TILE", "MAX_WHOLE_BLOCKS", "MAX_ROW_BLOCK", "MIN_REDUCTION", "STREAMED_WEIGHTS", "STEP_OVERHEAD", "WEIGHT_STREAM_BYTES", "TilePiece", "VectorConv", "best_tile", "lane_tile_cost", "pixel_tile_cost", "register_tile", "tile_pieces"]
