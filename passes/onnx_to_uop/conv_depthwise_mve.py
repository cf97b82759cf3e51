"""The Helium form of an int8 depthwise Conv at stride 1 (`onnx-to-uop{conv-mve=true}`: cores
with MVE, the Cortex-M55): four output pixels of one channel in a `vector<4xi32>`, each tap's
weight a scalar.

The generic loop nest (`convolve`) splits a channel's outputs into border regions, whose loads
are checked, and an interior, where `mve-dot` gathers 8 of a 3x3 window's taps for a `VMLAVA`:
on KWS's 25x5 planes 56 of 125 outputs are border, at about 29 instructions each, and the
interior took about 12 (150 k instructions a layer, the M55's largest share of KWS int8).

Here every output takes one form. Per channel, X's plane is copied into a small buffer P
bordered with X's zero point (the pads made real: the border written once per layer, the plane
per channel, a line at a time in vectors of 16 or 8 bytes, 8 strided ones where the line runs
down X's columns: `mve-gather` makes those Helium gathers), its vector axis innermost: the
output's rows when it has at least as many columns as rows (P as X, padded), else its columns
(P transposed: KWS's 5 columns of 25 outputs take 7 vectors each, where its rows of 5 would
take 2 each, 50 in all). Four outputs of a line
along that axis then read, per tap, 4 contiguous bytes of P at a constant offset:

    acc = broadcast(bias[c])
    acc += cast<vector<4xi32>>(vload P[line + j, pos + i .. + 3]) · broadcast(w[c, tap])

(`VLDRB.S32` with an immediate offset and `VMLA.S32` by a scalar, which LLVM makes of the
widening load and the product by a broadcast), and the four sums leave the vector by
`arm_mve.vmov_lane` into the op's scalar requantization and store each; `mve-requantize` makes
the four one vector requantization and a scatter (offsets 0, W, 2W, 3W down a column, or the
narrowing store along a row), taking the `vmov_lane`s of one vector as the vector. A line's last
vector starts 4 before its end, overlapping the one before when 4 does not divide the line: its
outputs are computed twice and the same values stored twice.

Exact: the products and sums are the reference's in int32 arithmetic, which wraps as the
reference's sums do, and a padded tap reads X's zero point, as in `convolve`'s padded windows
(the folded bias carries its term). P is at most a quarter of X (`MAX_PLANE_SHARE`): the form
adds a channel's plane to the plan, not a copy of X.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import IntegerType, VectorType
from xdsl.ir import SSAValue

from zant.dialects import arm_mve, uop
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout
from zant.passes.onnx_to_uop.windows import Window

I8, I16, I32 = IntegerType(8), IntegerType(16), IntegerType(32)

LANES = 4
"""Outputs per vector: the int32 lanes of a 128-bit register."""

QUAD = VectorType(I32, [LANES])
BYTES = VectorType(I8, [LANES])

COPY_LANES = {1: (16, 8), 0: (8,)}
"""The widths a line of X is copied into P in (bytes per vector, widest first), for a line
along X's rows (contiguous: 1) or down its columns (strided: 0, 8 bytes a `VLDRB.S16` gather and
a `VSTRB.16`, `mve-gather`); a line shorter than the narrowest is copied a byte at a time."""

MAX_PLANE_SHARE = 4
"""P holds at most 1/MAX_PLANE_SHARE of X's bytes (the RAM the form adds to the plan)."""


def plane_shape(windows: Sequence[Window]) -> tuple[int, int]:
    """P's (rows, columns) before any transposition: X's plane with its pads."""
    return tuple(w.in_size + w.pad_begin + w.pad_end for w in windows)  # type: ignore[return-value]


def along_rows(windows: Sequence[Window]) -> bool:
    """Whether the vectors run along the output's rows (its columns as lanes), else down its
    columns: the longer way, rows on a tie."""
    return windows[1].out_size >= windows[0].out_size


def applies(x: Layout, windows: Sequence[Window]) -> bool:
    """Whether a depthwise Conv over X (known to have constant int8 weights, a zero weight zero
    point and the input's zero point folded) takes the form: X int8 with 2 spatial dimensions,
    contiguous rows, stride 1 both ways, at least 4 outputs along the vector's axis and a plane
    within `MAX_PLANE_SHARE` of X."""
    if x.rank != 4 or len(windows) != 2 or x.element_type != I8 or x.strides[-1] != 1:
        return False
    if any(w.stride != 1 for w in windows):
        return False
    rows, columns = plane_shape(windows)
    if rows * columns * MAX_PLANE_SHARE > x.size:
        return False
    return windows[1 if along_rows(windows) else 0].out_size >= LANES


def _starts(count: int, lanes: int) -> tuple[int, int | None]:
    """The vectors of `lanes` over `count` elements: (the end of the whole ones, 0 up to it in
    steps of `lanes`; the last one's start when `lanes` does not divide `count`, else None)."""
    whole = count - count % lanes
    return whole, (count - lanes if count % lanes else None)


def depthwise_mve(
    kb: KernelBuilder,
    x: Layout,
    y: Layout,
    windows: Sequence[Window],
    weights: Layout,
    fill: int,
    start: Callable[[SSAValue], SSAValue | None],
    requantize: Callable[[SSAValue, SSAValue, list[SSAValue]], SSAValue],
    name: str,
) -> None:
    """Y[n, c] = requantize(Σ over the window of X[n, c]·W[c], c, (oy, ox)) in the form of the
    module docstring; `weights` W (C, 1, kh, kw) int8, `fill` X's zero point (what a padded
    tap reads), `start(c)` the sums' start (the int32 bias) or None for 0."""
    batch, channels = x.shape[:2]
    rows_window, columns_window = windows
    rows, columns = plane_shape(windows)
    lines_along_rows = along_rows(windows)
    # P[line, position]: positions along the vector's axis, innermost.
    plane = kb.alloc(f"{name}_plane", [rows, columns] if lines_along_rows else [columns, rows], I8)
    source, target = kb.view(x), kb.view(plane)

    def gep(view: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
        return kb.insert(uop.GepOp(view, list(indices))).result

    # The border: every byte of P once (the planes overwrite its inside, never its border).
    fill_value = kb.const(fill, I8)
    with kb.loop_nest(plane.shape) as indices:
        kb.store(fill_value, plane, indices)

    def copy_line(n: SSAValue, c: SSAValue, line: SSAValue) -> None:
        """X's line (a row of X, or a column: the one P's line `line` holds) into P."""
        across, along = (rows_window, columns_window) if lines_along_rows else (columns_window, rows_window)
        count, stride = (x.shape[3], 1) if lines_along_rows else (x.shape[2], x.strides[2])

        def at(i: SSAValue) -> tuple[list[SSAValue], list[SSAValue]]:
            """X's index of the line's element i and P's."""
            within = kb.alu("add", line, kb.index(across.pad_begin)), kb.alu("add", i, kb.index(along.pad_begin))
            return ([n, c, line, i] if lines_along_rows else [n, c, i, line]), list(within)

        lanes = next((lanes for lanes in COPY_LANES[stride == 1] if count >= lanes), None)
        if lanes is None:
            for i in range(count):
                (src, dst) = at(kb.index(i))
                kb.store(kb.load(x, src), plane, dst)
            return

        def block(i: SSAValue) -> None:
            src, dst = at(i)
            vector = kb.insert(uop.VLoadOp(gep(source, src), VectorType(I8, [lanes]), stride)).result
            kb.insert(uop.VStoreOp(vector, gep(target, dst)))

        whole, last = _starts(count, lanes)
        with kb.loop(whole, 0, lanes) as i:
            block(i)
        if last is not None:
            block(kb.index(last))

    with kb.loop_nest([batch, channels]) as (n, c):
        lines = rows_window.out_size if lines_along_rows else columns_window.out_size
        with kb.loop(x.shape[2] if lines_along_rows else x.shape[3]) as line:
            copy_line(n, c, line)
        taps = [
            (i, j, kb.cast(kb.load(weights, [c, kb.index(0), kb.index(i), kb.index(j)]), I32))
            for i in range(rows_window.kernel) for j in range(columns_window.kernel)
        ]
        bias = start(c)

        def vector(line: SSAValue, position: SSAValue) -> None:
            """The 4 outputs from `position` on along `line`, summed, requantized and stored."""
            acc = kb.insert(uop.BroadcastOp(bias, QUAD)).result if bias is not None else None
            for i, j, w in taps:
                dy, dx = i * rows_window.dilation, j * columns_window.dilation
                along, across = (dx, dy) if lines_along_rows else (dy, dx)
                ptr = gep(target, [kb.alu("add", line, kb.index(across)), kb.alu("add", position, kb.index(along))])
                values = kb.cast(kb.insert(uop.VLoadOp(ptr, BYTES)).result, QUAD)
                product = kb.alu("mul", values, kb.insert(uop.BroadcastOp(w, QUAD)).result)
                acc = product if acc is None else kb.alu("add", acc, product)
            assert acc is not None
            sums = [kb.insert(arm_mve.VmovLaneOp(acc, k)).result for k in range(LANES)]
            for k, total in enumerate(sums):
                at = kb.alu("add", position, kb.index(k))
                pixel = [line, at] if lines_along_rows else [at, line]
                kb.store(requantize(total, c, pixel), y, [n, c, *pixel])

        with kb.loop(lines) as line:
            count = columns_window.out_size if lines_along_rows else rows_window.out_size
            whole, last = _starts(count, LANES)
            with kb.loop(whole, 0, LANES) as position:
                vector(line, position)
            if last is not None:
                vector(line, kb.index(last))


__all__ = ["LANES", "MAX_PLANE_SHARE", "along_rows", "applies", "depthwise_mve", "plane_shape"]
