"""The Winograd form of a float 3x3 Conv at unit stride (`takes_winograd` chooses it,
`conv._lower_winograd` builds it from the pieces here): F(2x2, 3x3),
each 2x2 block of outputs from a 4x4 block of inputs in 16 products per channel pair where the
direct form takes 36.

    Y tile = Aᵀ [ Σ_c (G g_{m,c} Gᵀ) ⊙ (Bᵀ d_c B) ] A

with d_c the 4x4 input tile of channel c (its corner at twice the tile's index, X padded),
g_{m,c} the 3x3 weights and ⊙ the element-wise product. Per band of tile rows (`band_rows`):

1. the input transform V[t, ξ, c] = (Bᵀ d_c B)[ξ] of every tile t of the band, vectorized over
   the channels (a channels-last padded copy of X: each of the 16 loads is a vector);
2. the 16 products as one grouped 1x1 Conv over the band's tiles: group ξ maps the C channels
   V[·, ξ, ·] to the M channels Mξ[t, ξ, m] with the weights U[ξ] = (G g Gᵀ)[ξ], computed at
   compile time and packed for the channel-lane form (`LaneConv`: register tiles of lanes of
   output channels by tiles, each V value broadcast);
3. the output transform Y = Aᵀ Mξ A plus the bias, vectorized over the output channels, stored
   into Y (the last tile row and column of an odd output store only their first row or column).

The band's V and Mξ are scratch buffers of the bufferization, reused by every band; bands keep
them small enough to stay in the caches between the steps (`BAND_BYTES`), and their tiles lie
apart by a stride that spreads them over the L1 sets (`tile_buffer`).

F(2x2, 3x3)'s transforms add and subtract at most four terms and halve (F(4x4, 3x3)'s
constants reach 8 and lose more): ResNet-18's 3x3 layers with weights of He's scale differ
from onnxruntime by at most 2.6e-6 to 5.5e-6, where the direct form differs by 6.2e-6 to 1.3e-5.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
from xdsl.ir import Attribute, SSAValue

from zant.passes.onnx_to_uop.conv_tiling import VectorConv
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout
from zant.passes.onnx_to_uop.windows import Window

B_T = ((1, 0, -1, 0), (0, 1, 1, 0), (0, -1, 1, 0), (0, 1, 0, -1))
"""Bᵀ: the input tile's transform, applied to its rows and then its columns."""

G = ((1.0, 0.0, 0.0), (0.5, 0.5, 0.5), (0.5, -0.5, 0.5), (0.0, 0.0, 1.0))
"""G: the weights' transform (at compile time)."""

A_T = ((1, 1, 1, 0), (0, 1, -1, -1))
"""Aᵀ: the output transform."""

TILE = 2
"""Outputs per tile and dimension (F(2x2, 3x3)); a tile reads TILE + 2 inputs per dimension."""

BAND_BYTES = 256 << 10
"""Most bytes of one band's transformed inputs V and products Mξ (16 values per tile and input
channel, 16 per tile and output channel): a band is as many tile rows as fit, so that both
stay in a core's L2 between the three steps (ResNet-18's 64-channel layer at 56x56: 28 tiles
per row, 229 KB per row). Counting V alone (SqueezeNet's 16 -> 64 expands at 55x55: Mξ 4x
V) took bands of 7 tile rows where this takes 1; both builds interleaved, each from 2 copies:
squeezenet1_1 5.443 -> 5.376 ms, resnet18_224 21.43 -> 21.30 (load 4-6). Before
`tile_buffer` spread the tiles of Mξ over the L1 sets, the same change was slower in the
models (squeezenet1_1 0.95 -> 0.96x onnxruntime) though faster on one-layer models (16 -> 64
channels at 55x55: 0.56 -> 0.47 ms); 512 KB instead measured no better (5.398 ms, 21.54)."""

PLANE_SETS = 4096
"""Bytes between addresses that share an L1 set (64 sets of 64-byte lines on x86 cores): 16
channel lanes stored into an NCHW Y whose plane is a multiple of it fall into one set
(`takes_winograd`)."""

OUTPUT_TRANSFORM_COST = 85
"""The cost of one tile's products Mξ per output channel beyond the products themselves (their
stores, the output transform's 16 loads and 24 additions, the bias and the stores into Y), in
multiply-adds of one channel pair (`winograd_share`); fitted with `INPUT_TRANSFORM_COST` to 48
one-layer models (3x3 Conv, pads 1, Relu, a global average pool to keep Y channels-last: 8, 16
and 32 input channels x 16 to 128 output channels x 8x8 to 56x56 outputs; Winograd's time over
the direct form's, measured 0.53 to 1.02, estimated 0.53 to 0.85, residuals within ±0.1 but
for 8 input channels at 56x56 with 64 or 128 outputs, 0.95 and 1.02 measured)."""

INPUT_TRANSFORM_COST = 62
"""The cost of one tile's input transform per input channel (16 loads, 32 additions, the
stores of V), in multiply-adds of one channel pair (`winograd_share`)."""

WINOGRAD_SHARE = 0.9
"""Most estimated time of the Winograd form over the direct form's (`winograd_share`) for a Conv
to take it: the estimate's own error on the fitted layers (±0.1) and what it leaves out (the
transformed weights 16/9 the direct form's bytes, a copy of the form's code, the scratch of V
and Mξ) keep the layers estimated at no better than 0.9 direct."""

TILE_PADDING = 16
"""f32 values (one 64-byte cache line) left between one tile's 16·C values of V (or Mξ) and the
next tile's where 16·C values are a multiple of `PLANE_SETS` bytes (C a multiple of 64;
`tile_buffer`)."""

STREAMED_BAND_BYTES = 1 << 20
"""Most bytes of V when the transformed weights stream from memory and the whole output is
one band (`band_rows`): V then stays in a core's L2 while the weights stream past it."""

STREAMED_TILES = 16
"""Fewest tiles of a Conv in the Winograd form whose transformed weights stream from memory:
each weight is read once and used once per tile, and the Winograd weights are 16/9 the direct
form's bytes. ResNet-18's 512-channel layer (16.8 MB transformed) at 7x7, 16 tiles: 2.39 ->
2.26 ms; at 3x3, 4 tiles: 0.52 -> 0.97 ms."""


def winograd_share(channels: int, out_channels: int, out_spatial: Sequence[int]) -> float:
    """Estimated time of the Winograd form of a 3x3 Conv over the direct form's: per tile of up
    to 2x2 outputs, 16 products per channel pair and the transforms (`OUTPUT_TRANSFORM_COST` per
    output channel, `INPUT_TRANSFORM_COST` per input channel) where the direct form does 9
    multiply-adds per output and channel pair (a tile of an odd output's last row or column
    computes 4 outputs and stores 2 or 1). The transforms make it dear for few channels: 3 input
    channels (an image's) 1.34, 8 -> 16 0.85, 16 -> 16 0.70, 16 -> 64 0.62, 64 -> 64 0.50."""
    tiles = math.prod(tile_grid(out_spatial))
    winograd = tiles * (
        16 * channels * out_channels + OUTPUT_TRANSFORM_COST * out_channels + INPUT_TRANSFORM_COST * channels
    )
    return winograd / (9 * channels * out_channels * math.prod(out_spatial))


def takes_winograd(
    vector: VectorConv, channels: int, out_channels: int, out_spatial: Sequence[int], pixel_lanes: bool = False
) -> bool:
    """Whether an ungrouped f32 3x3 Conv at unit stride and dilation, with constant weights, in
    the channel-lane form takes the Winograd form instead: 16 products per tile of 2x2 outputs
    and channel pair where the direct form does 36, at the cost of the transforms and of
    weights 16/9 as large. It pays where `winograd_share` estimates it at most `WINOGRAD_SHARE`
    of the direct form's time (output channels in 8s, the lanes' blocks), except where the
    direct form takes `pixel_lanes` (rows of pixels stored whole) into an NCHW Y whose plane is
    a multiple of `PLANE_SETS` bytes: the output transform's channel vectors then fall into one
    L1 set, 1.0-2.1x the direct form's time (ResNet-8's 16-channel layers at 32x32 with their
    stage NCHW: resnet8_tf 0.83 -> 0.95x onnxruntime). A channels-last Y (`assign-host-layouts`
    weighs each Conv in the form it takes for the layout weighed) is stored a vector at a time:
    there ResNet-8's stage, its stem in channel lanes, takes the form (resnet8_tf 0.199 -> 0.165
    ms, 0.81 -> 0.67x). Transformed weights
    beyond the caches (`streamed_weights`) are read once, by a single band, whose V must then
    fit `STREAMED_BAND_BYTES`, and used by at least `STREAMED_TILES` tiles.

    Measured on a Zen 4 host (one layer with its Relu, direct -> Winograd, ms, python
    bench/latency.py --clock thread): ResNet-18's 64 channels at 56x56 2.36 -> 1.89, 128 at
    28x28 2.22 -> 1.57, 256 at 14x14 2.14 -> 1.48, 512 at 7x7 (16.8 MB of weights, one band)
    2.39 -> 2.26; with Y channels-last (a global pool after the Relu, Winograd forced, both
    forms interleaved in one process), 16 channels at 32x32 0.058 -> 0.039, SqueezeNet's 16 -> 64
    at 55x55 0.57 -> 0.44."""
    tiles = math.prod(tile_grid(out_spatial))
    streamed = 16 * channels * out_channels * 4 > vector.streamed_weights
    return (
        vector.winograd
        and len(out_spatial) == 2
        and out_channels % 8 == 0
        and winograd_share(channels, out_channels, out_spatial) <= WINOGRAD_SHARE
        and not (pixel_lanes and math.prod(out_spatial) * 4 % PLANE_SETS == 0)
        and not (streamed and (tiles < STREAMED_TILES or tiles * 16 * channels * 4 > STREAMED_BAND_BYTES))
    )


def winograd_weights(weights: np.ndarray) -> np.ndarray:
    """U[ξ, m, c] = (G g_{m,c} Gᵀ)[ξ] for W[m, c, 3, 3], ξ = 4·row + column, in float64 and
    rounded once."""
    g = np.asarray(G)
    u = np.einsum("ai,mcij,bj->abmc", g, weights.astype(np.float64), g)
    return u.reshape(16, *weights.shape[:2])


def band_rows(tile_rows: int, tile_columns: int, channels: int, out_channels: int, streamed: bool = False) -> int:
    """Tile rows per band: as few bands as `BAND_BYTES` of V and Mξ allow (at least one row
    each), their rows evened out (12 tile rows of at most 5: 3 bands of 4, no band of the 2 left
    over, whose code would be a copy of the whole form's); all of them when the transformed
    weights stream from memory (each band reads all of them)."""
    if streamed:
        return tile_rows
    most = max(1, min(tile_rows, BAND_BYTES // (tile_columns * 16 * (channels + out_channels) * 4)))
    return -(-tile_rows // -(-tile_rows // most))


def _combine(kb: KernelBuilder, coefficients: Sequence[int], values: Sequence[SSAValue]) -> SSAValue:
    """Σ coefficient·value over coefficients of ±1 (the others are 0): adds and subtractions."""
    terms = sorted(((c, v) for c, v in zip(coefficients, values) if c), key=lambda t: -t[0])
    assert all(c in (1, -1) for c, _ in terms), "the data transforms have coefficients of ±1"
    (first_sign, total), *rest = terms  # a positive term first where there is one: no negation
    for sign, value in rest:
        total = kb.alu("add" if sign == first_sign else "sub", total, value)
    return total if first_sign == 1 else kb.alu("neg", total)


def _transform(kb: KernelBuilder, matrix: Sequence[Sequence[int]], tile: list[list[SSAValue]]) -> list[list[SSAValue]]:
    """matrix · tile · matrixᵀ (rows first, then columns): Bᵀ d B of an input tile, Aᵀ M A of a
    tile's products."""
    rows = [[_combine(kb, row, [tile[i][j] for i in range(len(tile))]) for j in range(len(tile[0]))] for row in matrix]
    return [[_combine(kb, column, rows[a]) for column in matrix] for a in range(len(matrix))]


def tile_grid(out_spatial: Sequence[int]) -> list[int]:
    """Tiles per spatial dimension: ⌈out / 2⌉."""
    return [-(-size // TILE) for size in out_spatial]


def tile_windows(windows: Sequence[Window], out_spatial: Sequence[int]) -> list[Window]:
    """`windows` with their pads extended to every tile's inputs (one row or column beyond the
    pads when the output's size is odd), for `conv.padded_input`."""
    return [
        replace(w, pad_end=TILE * t + 2 - w.in_size - w.pad_begin) for w, t in zip(windows, tile_grid(out_spatial))
    ]


def band_pieces(out_rows: int, rows: int) -> list[tuple[int, int, int, int]]:
    """(first tile row, end, tile rows per band, output rows of the band's last tile row) of
    each loop over bands: the whole bands of `rows`, then the rest as one band. An odd output's
    last tile row stores one output row; it ends the last band (the rest, or the last whole
    band as a loop of its own), so a band that reads all of the weights stays one pass."""
    tile_rows = -(-out_rows // TILE)
    whole, rest = divmod(tile_rows, rows)
    odd = out_rows % TILE
    if odd and not rest:  # the last whole band is the one with the odd row
        whole, rest = whole - 1, rows
    pieces = [(0, whole * rows, rows, TILE), (whole * rows, tile_rows, rest, 1 if odd else TILE)]
    return [p for p in pieces if p[0] < p[1]]


def tile_buffer(kb: KernelBuilder, name: str, tiles: int, channels: int, element_type: Attribute) -> Layout:
    """A band's V[t, ξ, c] (or Mξ[t, ξ, k]) for `tiles` tiles: each tile's 16·C values, the next
    tile's `TILE_PADDING` values further where 16·C values are a multiple of `PLANE_SETS`
    bytes. The products' register tile reads one broadcast from V and stores one vector into
    Mξ per tile of the band (14 tiles on AVX-512); a tile stride of a multiple of 4 KB puts all
    of them into one 8-way L1 set, which thrashed in every step of the reduction. ResNet-18's
    3x3 layers (64 to 512 channels) all have such strides: resnet18_224 24.31 -> 20.78 ms
    (0.728 -> 0.622x onnxruntime), outputs bit-identical."""
    width = 16 * channels
    stride = width + (TILE_PADDING if width * 4 % PLANE_SETS == 0 else 0)
    flat = kb.alloc(name, [tiles * stride], element_type)
    return Layout(flat.buffer, (tiles, 16, channels), (stride, channels, 1))


def band_views(v: Layout, m: Layout, rows: int, columns: int) -> tuple[Layout, Layout]:
    """The band's V[t, ξ, c] and M[t, ξ, k] as the X (1, 16·C, rows, columns) and Y (1, 16·M,
    rows, columns) of the grouped 1x1 Conv of step 2, channels-last."""

    def view(buffer: Layout) -> Layout:
        width = 16 * buffer.shape[2]
        stride = buffer.strides[0]
        return Layout(buffer.buffer, (1, width, rows, columns), (0, 1, columns * stride, stride))

    return view(v), view(m)


def input_transform(
    kb: KernelBuilder, xp: Layout, v: Layout, n: SSAValue, band: SSAValue, rows: int, columns: int
) -> None:
    """V[r·columns + q, ξ, c] = (Bᵀ d B)[ξ] of the tile at row band + r, column q."""
    channels = xp.shape[1]
    top = kb.alu("mul", band, kb.index(TILE))
    with kb.loop_nest([rows, columns, channels]) as (r, q, c):
        row = kb.alu("add", top, kb.alu("mul", r, kb.index(TILE)))
        column = kb.alu("mul", q, kb.index(TILE))
        d = [
            [
                kb.load(xp, [n, c, kb.alu("add", row, kb.index(i)), kb.alu("add", column, kb.index(j))])
                for j in range(TILE + 2)
            ]
            for i in range(TILE + 2)
        ]
        t = kb.alu("add", kb.alu("mul", r, kb.index(columns)), q)
        for a, values in enumerate(_transform(kb, B_T, d)):
            for b, value in enumerate(values):
                kb.store(value, v, [t, kb.index(4 * a + b), c])


def output_transform(
    kb: KernelBuilder, m: Layout, y: Layout, bias: Layout | None, n: SSAValue, band: SSAValue,
    rows: int, last_rows: int, out_width: int, store: Callable[..., None],
) -> None:
    """Y[n, k, 2·(band + r) + i, 2·q + j] = (Aᵀ Mξ A)[i, j] + B[k] for the band's tiles, box by
    box: the whole tiles, an odd output's last column (one output column per tile), and the
    band's last tile row when it stores `last_rows` = 1 output row; `store` is
    `conv.store_output` (a channels-last Y through its memory-order view)."""
    out_channels = y.shape[1]
    columns = -(-out_width // TILE)
    row_parts = [(0, rows, TILE)] if last_rows == TILE else [(0, rows - 1, TILE), (rows - 1, rows, last_rows)]
    column_parts = [(0, out_width // TILE, TILE), (out_width // TILE, columns, 1)]
    top = kb.alu("mul", band, kb.index(TILE))
    for (r0, r1, out_rows), (q0, q1, out_columns) in itertools.product(row_parts, column_parts):
        if r0 >= r1 or q0 >= q1:
            continue
        with kb.loop_nest([r1 - r0, q1 - q0, out_channels]) as (r, q, k):
            r = kb.alu("add", r, kb.index(r0)) if r0 else r
            q = kb.alu("add", q, kb.index(q0)) if q0 else q
            t = kb.alu("add", kb.alu("mul", r, kb.index(columns)), q)
            products = [[kb.load(m, [t, kb.index(4 * a + b), k]) for b in range(4)] for a in range(4)]
            tile = _transform(kb, A_T, products)
            row = kb.alu("add", top, kb.alu("mul", r, kb.index(TILE)))
            column = kb.alu("mul", q, kb.index(TILE))
            b = kb.load(bias, [k]) if bias is not None else None
            for i in range(out_rows):
                for j in range(out_columns):
                    value = tile[i][j] if b is None else kb.alu("add", tile[i][j], b)
                    pixel = [kb.alu("add", row, kb.index(i)), kb.alu("add", column, kb.index(j))]
                    store(kb, value, y, n, k, pixel)


__all__ = [
    "A_T", "BAND_BYTES", "B_T", "G", "INPUT_TRANSFORM_COST", "OUTPUT_TRANSFORM_COST", "PLANE_SETS", "STREAMED_BAND_BYTES",
    "STREAMED_TILES", "TILE", "TILE_PADDING", "WINOGRAD_SHARE", "band_pieces", "band_rows", "band_views", "input_transform",
    "output_transform", "takes_winograd", "tile_buffer", "tile_grid", "tile_windows", "winograd_share", "winograd_weights",
]
