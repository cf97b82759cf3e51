"""The Helium form of an int8 pointwise Conv over NCHW activations (`onnx-to-uop{conv-mve=true}`:
cores with MVE, the Cortex-M55): a row of X copied channels-last into a small buffer, then each
output's reduction over contiguous channels.

The generic nest (`convolve`, blocks of 4 output channels) reads an output pixel's input
channels H·W apart: `mve-dot` gathers them 16 at a time (two `VLDRB.U16` with offset vectors
and a `VMOVNT`, 3 instructions), once per pixel and block of 4 output channels, and LLVM keeps
the gathers' base pointers of a 64-channel reduction on the stack (KWS int8's 64 -> 64 layers
on 25x5: about 66 instructions per pixel and block, 160 k a layer).

Here, per row of the output, X's row is copied into R[x, c] (W·C bytes; the copy's 8-byte
strided loads are `mve-gather`'s gathers), once for all output channels; then per block of 4
output channels and pixel the four sums run over R's and W's contiguous channels, a
`uop.range` over c of `mulacc`s that `mve-dot` makes one 16-byte `VLDRB` of R and, per channel,
a 16-byte load of W and a `VMLAVA.S8` per step, and the four requantizations `mve-requantize`
makes one vector epilogue and a scatter (offsets H·W apart: 4 channels of one pixel).

Exact: the same products and int32 sums in another order (wrapping adds commute), the same
epilogue per output. R is at most a quarter of X (`MAX_ROW_SHARE`): the form adds a row of X to
the plan, not a copy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import IntegerType, VectorType
from xdsl.ir import SSAValue

from zant.dialects import uop
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout
from zant.passes.onnx_to_uop.windows import Window

I8, I32 = IntegerType(8), IntegerType(32)

CHANNEL_BLOCK = 4
"""Output channels per block: the lanes of one vector requantization."""

COPY_LANES = 8
"""Bytes per strided copy (`mve-gather`: a `VLDRB.S16` gather and a `VSTRB.16`)."""

MIN_CHANNELS = 16
"""The fewest input channels the form takes: one `VMLAVA.S8` of 16 lanes."""

MAX_ROW_SHARE = 4
"""R holds at most 1/MAX_ROW_SHARE of X's bytes (the RAM the form adds to the plan)."""


def applies(x: Layout, windows: Sequence[Window]) -> bool:
    """Whether an ungrouped 1x1 Conv over X (known to have constant int8 weights, a zero weight
    zero point and the input's zero point folded) takes the form: X int8 NCHW with 2 spatial
    dimensions and contiguous rows, stride 1, no pads, at least `MIN_CHANNELS` input channels
    (a multiple of `COPY_LANES`), more than one pixel (one pixel's channels are contiguous
    already) and a row within `MAX_ROW_SHARE` of X."""
    if x.rank != 4 or len(windows) != 2 or x.element_type != I8 or x.strides[-1] != 1:
        return False
    if any(w.kernel != 1 or w.stride != 1 or w.pad_begin or w.pad_end for w in windows):
        return False
    channels, rows, columns = x.shape[1:]
    if channels < MIN_CHANNELS or channels % COPY_LANES or rows * columns < 2:
        return False
    return columns * channels * MAX_ROW_SHARE <= x.size


def pointwise_mve(
    kb: KernelBuilder,
    x: Layout,
    y: Layout,
    weights: Layout,
    start: Callable[[SSAValue], SSAValue | None],
    requantize: Callable[[SSAValue, SSAValue, list[SSAValue]], SSAValue],
    name: str,
) -> None:
    """Y[n, m, oy, ox] = requantize(Σ_c X[n, c, oy, ox]·W[m, c], m, (oy, ox)) in the form of the
    module docstring; `weights` W (M, C, 1, 1) int8, `start(m)` the sum's start (the int32
    bias) or None for 0."""
    batch, channels, rows, columns = x.shape
    out_channels = y.shape[1]
    row = kb.alloc(f"{name}_row", [columns, channels], I8)
    source, target = kb.view(x), kb.view(row)
    w = weights.reshape([out_channels, channels])
    assert w is not None

    def block(n: SSAValue, oy: SSAValue, ox: SSAValue, ms: list[SSAValue]) -> None:
        """The outputs of channels `ms` at pixel (oy, ox)."""
        accs = []
        for m in ms:
            acc = kb.define_acc(0, I32)
            bias = start(m)
            if bias is not None:
                kb.acc_set(acc, bias)
            accs.append(acc)
        with kb.loop(channels) as c:
            value = kb.load(row, [ox, c])
            for m, acc in zip(ms, accs):
                kb.mulacc(acc, value, kb.load(w, [m, c]))
        for m, acc in zip(ms, accs):
            kb.store(requantize(kb.acc_get(acc), m, [oy, ox]), y, [n, m, oy, ox])

    whole = out_channels - out_channels % CHANNEL_BLOCK
    with kb.loop_nest([batch, rows]) as (n, oy):
        with kb.loop(columns) as ox:
            with kb.loop(channels, 0, COPY_LANES) as c:
                at = kb.insert(uop.GepOp(source, [n, c, oy, ox])).result
                lanes = kb.insert(uop.VLoadOp(at, VectorType(I8, [COPY_LANES]), x.strides[1])).result
                kb.insert(uop.VStoreOp(lanes, kb.insert(uop.GepOp(target, [ox, c])).result))
        with kb.loop(whole, 0, CHANNEL_BLOCK) as first:
            with kb.loop(columns) as ox:
                block(n, oy, ox, [first, *(kb.alu("add", first, kb.index(k)) for k in range(1, CHANNEL_BLOCK))])
        if whole < out_channels:
            with kb.loop(columns) as ox:
                block(n, oy, ox, [kb.index(m) for m in range(whole, out_channels)])


__all__ = ["CHANNEL_BLOCK", "MAX_ROW_SHARE", "MIN_CHANNELS", "applies", "pointwise_mve"]
