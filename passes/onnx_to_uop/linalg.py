"""Matrix products: MatMul (NumPy `matmul`), Gemm and Einsum; the determinant, Det.

The products are one loop nest over the output with an accumulator over the reduced indices.
Everything that only changes how operands are read (1-D promotion, broadcast batch dimensions,
transA/transB, Gemm's broadcast C, Einsum's diagonals) is a view: a permuted, stride-0 or
summed-stride Layout, no copy.

On targets with vector registers (`onnx-to-uop{conv-lanes=L conv-tile=P}`), an f32 MatMul or
Gemm whose B is a constant matrix takes the **column-lane form** (`lane_tiled_product`): B is
repacked as B'[N / L, K, L] (each block of L columns consecutive across the lanes, whatever
transB was), and a register tile of R rows of A by P blocks (R·P ≤ P_conv accumulators over K,
`register_tile` picks R and P by a cost model) is computed at once: each step over k broadcasts
R scalars of A and loads P vectors of B', so `vectorize{width=L}` makes R·P independent L-lane
FMA chains (the 1 × L form waits on one chain and loads a vector per FMA). The groups of blocks
are the outer loop and the rows inside it, so a group's B' is read by every row while it is in
the cache. The last N mod L columns of a constant B are one more block of L lanes, B's columns
padded with zeros (`padded_tail_product`), computed into a scratch row of L and copied out:
every column is then the same FMA chain over k, where the plain nest (which `vectorize` reduces
across lanes) summed the last columns in another order. A difference of an ulp is harmless
alone, but a Softmax after the product turns it into a different distribution when the logits
are large and equal (ONNX's `light` models: logits of 1.2e21 in every column, 1 in 125 to 1 in
1,000 on the last eight columns).

A MatMul whose B is known only at run time and has non-consecutive columns (attention's Q·Kᵀ,
Kᵀ a transposed view) takes the same form after a run-time repacking of B into scratch,
B'[*batch, N / L, K, L] (K·N elements copied per batch index): the plain nest would reduce each
output across the lanes and sum the lanes one output at a time.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from xdsl.dialects.builtin import Float32Type, IndexType, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue
from zant.dialects.onnx import DetOp, EinsumOp, GemmOp, MatMulOp, get_attr, input_value, inputs
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.conv_tiling import VectorConv, tile_pieces
from zant.passes.onnx_to_uop.elementwise import reject_bfloat16
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    accumulator_type,
    layout_of,
    tensor_element_type,
    tensor_shape,
)
from zant.passes.onnx_to_uop.parameters import constant_array

_I64 = IntegerType(64)


def _insert_unit_dim(layout: Layout, axis: int) -> Layout:
    """The same elements with a size-1 dimension inserted before `axis` (NumPy's 1-D promotion)."""
    return replace(
        layout,
        shape=layout.shape[:axis] + (1,) + layout.shape[axis:],
        strides=layout.strides[:axis] + (0,) + layout.strides[axis:],
    )


def _reduce_k(
    kb: KernelBuilder,
    a: Layout,
    b: Layout,
    batch: list[SSAValue],
    i: SSAValue,
    j: SSAValue,
) -> SSAValue:
    """Σ_k a[*batch, i, k] · b[*batch, k, j]."""
    acc = kb.define_acc(0, accumulator_type(a.element_type))
    with kb.loop(a.shape[-1]) as k:
        kb.mulacc(acc, kb.load(a, [*batch, i, k]), kb.load(b, [*batch, k, j]))
    return kb.cast(kb.acc_get(acc), a.element_type)


Epilogue = Callable[[KernelBuilder, SSAValue, list[SSAValue], SSAValue, SSAValue], SSAValue]
"""(kb, Σ, batch indices, i, j) → the output value (Gemm's alpha and C)."""


def _groups(count: int, size: int) -> list[tuple[int, int, int]]:
    """`count` items in tiles of `size`: (tile size, how many such tiles, first item) for the
    whole tiles, then one smaller tile of the rest (`tile_pieces` in one dimension)."""
    return [(p.tile[0], p.blocks, p.bounds[0][0]) for p in tile_pieces([count], [size])]


FMA_LATENCY = 4
"""Steps of one accumulator's FMA chain: a tile with fewer accumulators waits on them."""


def tile_registers(rows: int, blocks: int) -> int:
    """Registers a tile of `rows` × `blocks` keeps live, counting a vector of lanes as two (16 f32
    lanes on AVX2) and a broadcast scalar as one: its accumulators, and either the rows'
    broadcasts and one vector of B' at a time, or every block's vector of B' and one broadcast at
    a time, whichever is fewer."""
    return 2 * rows * blocks + min(rows + 2, 2 * blocks + 1)


def register_tile(rows: int, blocks: int, tile: int) -> tuple[int, int]:
    """The register tile (R rows, P column blocks), R·P ≤ `tile` accumulators, of a product of
    `rows` rows by `blocks` blocks of lanes. For each R, the most blocks that fit the registers
    `tile` was sized for (`tile_registers` ≤ 2·tile + 4, a 1 × tile tile's: 3 × 2 of 6 needs
    one register more and spilled, 0.127 ms on BERT-tiny against 0.095); of those, the one of
    least modelled cost: per step over k, a tile of r × p does r·p vector FMAs, loads p vectors
    of B' and broadcasts r scalars of A (two broadcasts cost one vector load) and waits at least
    FMA_LATENCY for its chains; the cost is the sum, over the whole tiles and the smaller ones of
    the remainders, of the largest of the three (ties: the fewer loads, then the fewer vectors
    of B' per step: 6 × 1 ran 7% faster than 2 × 3 on 48 rows)."""

    def cost(r: int, p: int) -> tuple[float, float, int]:
        steps = loads = 0.0
        for height, row_tiles, _ in _groups(rows, r):
            for width, block_tiles, _ in _groups(blocks, p):
                tiles = row_tiles * block_tiles
                steps += tiles * max(height * width, width + height / 2, FMA_LATENCY)
                loads += tiles * (width + height / 2)
        return steps, loads, p

    budget = 2 * tile + 4
    candidates = []  # for each row count, the most blocks that fit
    for r in range(1, min(rows, tile) + 1):
        fits = [p for p in range(1, min(blocks, tile // r) + 1) if tile_registers(r, p) <= budget]
        if fits:
            candidates.append((r, max(fits)))
    return min(candidates or [(1, 1)], key=lambda c: cost(*c))


def lane_tiled_product(
    kb: KernelBuilder, vector: VectorConv, a: Layout, b: np.ndarray | Layout, y: Layout,
    epilogue: Epilogue | None = None, outer: Sequence[SSAValue] = (),
) -> int:
    """y[*batch, i, j] = epilogue(Σ_k a[*batch, i, k] · b[k, j]) for the columns j < N - N mod L
    in the column-lane form (module docstring); returns how many columns it computed. `b` is a
    constant (K, N) array, repacked at compile time, or a (*batch, K, N) layout known at run
    time, repacked into scratch first (B'[*batch, N / L, K, L], a copy of K·N per batch index).
    `outer`: indices of a's and y's leading dimensions given by the caller's loops (the product
    of one of them; a constant B only)."""
    lanes, tile = vector.lanes, vector.tile
    fixed = list(outer)
    assert not fixed or isinstance(b, np.ndarray)
    *batch_shape, m, depth = a.shape[len(fixed) :]
    blocks = b.shape[-1] // lanes
    if isinstance(b, np.ndarray):
        packed = np.ascontiguousarray(b[:, : blocks * lanes].reshape(depth, blocks, lanes).transpose(1, 0, 2))
        weights = kb.constant("matmul_packed", packed, a.element_type)
        batch_of_b = 0
    else:
        weights = kb.alloc("matmul_packed", (*batch_shape, blocks, depth, lanes), a.element_type)
        with kb.loop_nest(batch_shape) as batch, kb.loop(blocks) as block, kb.loop(depth) as k:
            with kb.loop(lanes) as lane:
                j = kb.alu("add", kb.alu("mul", block, kb.index(lanes)), lane)
                kb.store(kb.load(b, [*batch, k, j]), weights, [*batch, block, k, lane])
        batch_of_b = len(batch_shape)
    tile_rows, tile_blocks = register_tile(m, blocks, tile)
    # Column groups outermost: a group's packed columns (depth x width x L) are read by every
    # row in turn while they are still in the cache.
    for width, count, first in _groups(blocks, tile_blocks):
        with kb.loop(count) as group, kb.loop_nest(batch_shape) as batch:
            first_block = kb.alu("add", kb.alu("mul", group, kb.index(width)), kb.index(first))
            for height, row_count, first_row in _groups(m, tile_rows):
                with kb.loop(row_count) as row_group, kb.loop(lanes) as lane:
                    first_i = kb.alu("add", kb.alu("mul", row_group, kb.index(height)), kb.index(first_row))
                    block_ids = [kb.alu("add", first_block, kb.index(p)) for p in range(width)]
                    row_ids = [kb.alu("add", first_i, kb.index(r)) for r in range(height)]
                    accs = [[kb.define_acc(0, a.element_type) for _ in range(width)] for _ in range(height)]
                    with kb.loop(depth) as k:
                        xs = [kb.load(a, [*fixed, *batch, i, k]) for i in row_ids]
                        for p, block in enumerate(block_ids):
                            w = kb.load(weights, [*batch[len(batch) - batch_of_b :], block, k, lane])
                            for r, x in enumerate(xs):
                                kb.mulacc(accs[r][p], x, w)
                    for r, i in enumerate(row_ids):
                        for p, block in enumerate(block_ids):
                            j = kb.alu("add", kb.alu("mul", block, kb.index(lanes)), lane)
                            value = kb.acc_get(accs[r][p])
                            if epilogue is not None:
                                value = epilogue(kb, value, batch, i, j)
                            kb.store(value, y, [*fixed, *batch, i, j])
    return blocks * lanes


def padded_tail_product(
    kb: KernelBuilder, vector: VectorConv, a: Layout, b: np.ndarray, y: Layout, first: int,
    epilogue: Epilogue | None = None,
) -> None:
    """y[*batch, i, j] for the columns j ≥ `first` (fewer than L) that `lane_tiled_product` left:
    B's columns from `first` on, padded with zeros to one block of L lanes, through the same
    column-lane form into a scratch [*batch, M, L], then copied to y through `epilogue`. Each
    column's sum is then the very chain of FMAs the other columns' are (module docstring)."""
    lanes = vector.lanes
    *batch_shape, m, n = y.shape
    tail = np.zeros((b.shape[0], lanes), b.dtype)
    tail[:, : n - first] = b[:, first:]
    rows = kb.alloc("matmul_tail", (*batch_shape, m, lanes), a.element_type)
    lane_tiled_product(kb, vector, a, tail, rows)
    with kb.loop_nest(batch_shape) as batch, kb.loop(m) as i, kb.loop(n, first) as j:
        value = kb.load(rows, [*batch, i, kb.alu("sub", j, kb.index(first))])
        if epilogue is not None:
            value = epilogue(kb, value, batch, i, j)
        kb.store(value, y, [*batch, i, j])


def _lane_tiled(vector: VectorConv | None, a: Layout, b_value: SSAValue, out_columns: int) -> np.ndarray | None:
    """B as a constant 2-D array when the column-lane form applies, else None."""
    if vector is None or not isinstance(a.element_type, Float32Type) or out_columns < vector.lanes:
        return None
    b = constant_array(b_value)
    if b is None or b.ndim != 2 or b.dtype != np.float32:
        return None
    return b


RUNTIME_PACK_ELEMENTS = 1 << 18
"""The most elements (1 MB of f32) a run-time repacking of B may take beyond the output's size."""


def _runtime_lane_tiled(vector: VectorConv | None, a: Layout, b: Layout) -> bool:
    """A B known only at run time takes the column-lane form, repacked per batch index, when
    its columns are not consecutive (attention's Q·Kᵀ: Kᵀ is a transposed view, so the plain
    nest reduces each output across lanes and sums them one output at a time), the product
    reuses each repacked element across several rows, and the copy is not much larger than the
    output (a B broadcast over many batch indices is copied once per index)."""
    if vector is None or not isinstance(a.element_type, Float32Type) or not isinstance(b.element_type, Float32Type):
        return False
    *batch_shape, m, _ = a.shape
    packed = math.prod(batch_shape) * b.shape[-2] * (b.shape[-1] // vector.lanes * vector.lanes)
    output = math.prod(batch_shape) * m * b.shape[-1]
    small = packed <= max(RUNTIME_PACK_ELEMENTS, output)
    return b.shape[-1] >= vector.lanes and b.strides[-1] != 1 and m >= 2 and small


class MatMulLowering(OnnxLowering):
    """`MatMul` with NumPy semantics.

    A 1-D A is read as a 1×K matrix and a 1-D B as K×1 (the unit dimension is dropped from the
    result); batch dimensions broadcast against each other through stride-0 views.
    """

    op_names = frozenset({MatMulOp.name})

    def __init__(self, vector: VectorConv | None = None):
        self.vector = vector

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        a, b = layout_of(input_value(op, 0)), layout_of(input_value(op, 1))
        out_shape = tensor_shape(op.results[0])
        if a.rank == 0 or b.rank == 0:
            raise ValueError("MatMul operands must have rank ≥ 1")
        y = kb.alloc(result_name(op), out_shape, tensor_element_type(op.results[0]))

        # The output as a (batch…, M, N) array: a 1-D operand's dropped dimension comes back.
        full_y = y
        if a.rank == 1:
            a = _insert_unit_dim(a, 0)
            full_y = _insert_unit_dim(full_y, full_y.rank - (0 if b.rank == 1 else 1))
        if b.rank == 1:
            b = _insert_unit_dim(b, 1)
            full_y = _insert_unit_dim(full_y, full_y.rank)
        if a.shape[-1] != b.shape[-2]:
            raise ValueError(f"inner dimensions differ: {a.shape} @ {b.shape}")
        *batch_shape, m, n = full_y.shape
        a = a.broadcast_to([*batch_shape, m, a.shape[-1]])
        b = b.broadcast_to([*batch_shape, b.shape[-2], n])

        first = 0
        packed = _lane_tiled(self.vector, a, input_value(op, 1), n)
        if packed is not None and packed.shape == (a.shape[-1], n):
            first = lane_tiled_product(kb, self.vector, a, packed, full_y)
            if first < n:
                padded_tail_product(kb, self.vector, a, packed, full_y, first)
                first = n
        elif packed is None and _runtime_lane_tiled(self.vector, a, b):
            first = lane_tiled_product(kb, self.vector, a, b, full_y)
        if first < n:
            with kb.loop_nest(batch_shape) as batch, kb.loop(m) as i, kb.loop(n, first) as j:
                kb.store(_reduce_k(kb, a, b, batch, i, j), full_y, [*batch, i, j])
        return [y]


class GemmLowering(OnnxLowering):
    """`Gemm`: Y = alpha · A' · B' + beta · C, where A' and B' are A and B, transposed (as views)
    when transA / transB is set, and C is broadcast to (M, N) as a view."""

    op_names = frozenset({GemmOp.name})

    def __init__(self, vector: VectorConv | None = None):
        self.vector = vector

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        a, b = layout_of(input_value(op, 0)), layout_of(input_value(op, 1))
        c_value = input_value(op, 2)
        out_shape = tensor_shape(op.results[0])
        element_type = tensor_element_type(op.results[0])
        if a.rank != 2 or b.rank != 2:
            raise ValueError(f"Gemm takes 2-D A and B, got {a.shape} and {b.shape}")
        if get_attr(op, "transA"):
            a = a.permute([1, 0])
        if get_attr(op, "transB"):
            b = b.permute([1, 0])
        if a.shape[1] != b.shape[0]:
            raise ValueError(f"inner dimensions differ: {a.shape} @ {b.shape}")
        c = layout_of(c_value).broadcast_to(out_shape) if c_value is not None else None
        alpha, beta = get_attr(op, "alpha"), get_attr(op, "beta")

        def epilogue(kb: KernelBuilder, value: SSAValue, batch: list[SSAValue], i: SSAValue, j: SSAValue) -> SSAValue:
            if alpha != 1:
                value = kb.alu("mul", value, kb.const(alpha, element_type))
            if c is not None and beta != 0:
                bias = kb.load(c, [i, j])
                if beta != 1:
                    bias = kb.alu("mul", bias, kb.const(beta, element_type))
                value = kb.alu("add", value, bias)
            return value

        y = kb.alloc(result_name(op), out_shape, element_type)
        first = 0
        packed = _lane_tiled(self.vector, a, input_value(op, 1), out_shape[1])
        if packed is not None and get_attr(op, "transB"):
            packed = packed.T
        if packed is not None and packed.shape == (a.shape[1], out_shape[1]):
            first = lane_tiled_product(kb, self.vector, a, packed, y, epilogue)
            if first < out_shape[1]:
                padded_tail_product(kb, self.vector, a, packed, y, first, epilogue)
                first = out_shape[1]
        if first < out_shape[1]:
            with kb.loop(out_shape[0]) as i, kb.loop(out_shape[1], first) as j:
                kb.store(epilogue(kb, _reduce_k(kb, a, b, [], i, j), [], i, j), y, [i, j])
        return [y]


ELLIPSIS = "..."


@dataclass(frozen=True)
class EinsumSpec:
    """A parsed Einsum equation: the labels of each operand's dimensions and of the output.

    A label is a letter, or `...k` for the k-th of the dimensions an ellipsis stands for
    (counted from the left of the widest ellipsis; narrower ones are right-aligned, as NumPy
    broadcasting does).
    """

    operands: tuple[tuple[str, ...], ...]
    output: tuple[str, ...]

    @staticmethod
    def parse(equation: str, ranks: list[int]) -> EinsumSpec:
        equation = equation.replace(" ", "")
        lhs, arrow, rhs = equation.partition("->")
        terms = lhs.split(",")
        if len(terms) != len(ranks):
            raise ValueError(f"equation {equation!r} has {len(terms)} operands, the node {len(ranks)}")
        for term in [*terms, rhs]:
            if not re.fullmatch(r"[A-Za-z]*(\.\.\.)?[A-Za-z]*", term):
                raise ValueError(f"cannot parse the Einsum term {term!r}")
        widths = [rank - len(term.replace(ELLIPSIS, "")) for term, rank in zip(terms, ranks)]
        for term, width in zip(terms, widths):
            if width < 0 or (width and ELLIPSIS not in term):
                raise ValueError(f"the term {term!r} does not match its operand's rank")
        ellipsis = tuple(f"{ELLIPSIS}{k}" for k in range(max(widths, default=0)))

        def labels(term: str, width: int) -> tuple[str, ...]:
            head, dots, tail = term.partition(ELLIPSIS)
            return (*head, *(ellipsis[len(ellipsis) - width :] if dots else ()), *tail)

        operands = tuple(labels(t, w) for t, w in zip(terms, widths))
        if arrow:
            output = labels(rhs, len(ellipsis))
        else:
            # Implicit output: the ellipsis dimensions, then the letters used once, sorted.
            letters = [label for term in operands for label in term if len(label) == 1]
            output = (*ellipsis, *sorted(label for label in set(letters) if letters.count(label) == 1))
        if len(set(output)) != len(output):
            raise ValueError(f"the output of {equation!r} repeats a label")
        return EinsumSpec(operands, output)


def _label_view(layout: Layout, labels: tuple[str, ...], sizes: dict[str, int]) -> Layout:
    """`layout` indexed by its distinct labels: a repeated label reads the diagonal (the strides
    of its dimensions add up) and a size-1 dimension of a wider label is broadcast (stride 0)."""
    distinct = tuple(dict.fromkeys(labels))
    strides = dict.fromkeys(distinct, 0)
    for label, dim, stride in zip(labels, layout.shape, layout.strides):
        if dim != sizes[label] and dim != 1:
            raise ValueError(f"label {label!r} has sizes {dim} and {sizes[label]}")
        strides[label] += stride if dim == sizes[label] else 0
    return Layout(layout.buffer, tuple(sizes[d] for d in distinct), tuple(strides.values()), layout.offset)


def _product(kb: KernelBuilder, values: list[SSAValue]) -> SSAValue:
    product = values[0]
    for value in values[1:]:
        product = kb.alu("mul", product, value)
    return product


class EinsumLowering(OnnxLowering):
    """`Einsum`: the equation is parsed at compile time; each output element is one accumulator
    over the labels that do not appear in the output, of the product of the operands."""

    op_names = frozenset({EinsumOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        layouts = [layout_of(v) for v in inputs(op)]
        spec = EinsumSpec.parse(get_attr(op, "equation"), [a.rank for a in layouts])
        sizes: dict[str, int] = {}
        for layout, labels in zip(layouts, spec.operands):
            for label, dim in zip(labels, layout.shape):
                sizes[label] = max(sizes.get(label, 1), dim)
        unknown = set(spec.output) - sizes.keys()
        if unknown:
            raise ValueError(f"output labels {sorted(unknown)} appear in no operand")
        reduced = [label for label in sizes if label not in spec.output]
        operands = [
            (_label_view(layout, labels, sizes), tuple(dict.fromkeys(labels)))
            for layout, labels in zip(layouts, spec.operands)
        ]
        out_shape = tuple(sizes[label] for label in spec.output)
        if out_shape != tensor_shape(op.results[0]):
            raise ValueError(f"the equation gives shape {out_shape}, the result type is {tensor_shape(op.results[0])}")
        if len(operands) == 1 and not reduced:
            # A transpose or a diagonal of one operand is a view, no code.
            view, labels = operands[0]
            return [view.permute([labels.index(label) for label in spec.output])]
        reject_bfloat16(op)
        element_type = tensor_element_type(op.results[0])
        acc_type = accumulator_type(element_type)
        out = kb.alloc(result_name(op), out_shape, element_type)

        def factors(index: dict[str, SSAValue], to: Attribute) -> list[SSAValue]:
            return [kb.cast(kb.load(view, [index[label] for label in labels]), to) for view, labels in operands]

        with kb.loop_nest(out_shape) as outer:
            if not reduced:
                # Nothing to sum (an outer or element-wise product): store the product.
                kb.store(_product(kb, factors(dict(zip(spec.output, outer)), element_type)), out, outer)
            else:
                acc = kb.define_acc(0, acc_type)
                with kb.loop_nest([sizes[label] for label in reduced]) as inner:
                    *head, last = factors(dict(zip([*spec.output, *reduced], [*outer, *inner])), acc_type)
                    if head:
                        kb.mulacc(acc, _product(kb, head), last)
                    else:
                        kb.acc_set(acc, kb.alu("add", kb.acc_get(acc), last))
                kb.store(kb.cast(kb.acc_get(acc), element_type), out, outer)
        return [out]


class DetLowering(OnnxLowering):
    """`Det` of each (…, n, n) matrix: Gaussian elimination with partial pivoting on a scratch
    copy of one matrix at a time; the determinant is the product of the pivots, negated once
    per row exchange. The column loop is unrolled (n is static) so that every loop over the
    rows and columns still to eliminate has a static start."""

    op_names = frozenset({DetOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x = layout_of(inputs(op)[0])
        if x.rank < 2 or x.shape[-1] != x.shape[-2]:
            raise ValueError(f"Det takes square matrices, got shape {x.shape}")
        reject_bfloat16(op)
        n = x.shape[-1]
        element_type = tensor_element_type(op.results[0])
        work_type = accumulator_type(element_type)
        out = kb.alloc(result_name(op), tensor_shape(op.results[0]), element_type)
        a = kb.alloc(f"{result_name(op)}_lu", (n, n), work_type)
        zero = lambda: kb.const(0, work_type)  # noqa: E731
        with kb.loop_nest(x.shape[:-2]) as batch:
            with kb.loop_nest((n, n)) as (i, j):
                kb.store(kb.cast(kb.load(x, [*batch, i, j]), work_type), a, [i, j])
            det = kb.define_acc(1, work_type)
            for k in range(n):
                col, row = kb.index(k), kb.index(k)
                pivot_row = self._pivot_row(kb, a, k)
                with kb.loop(n, start=k) as j:
                    upper, lower = kb.load(a, [row, j]), kb.load(a, [pivot_row, j])
                    kb.store(lower, a, [row, j])
                    kb.store(upper, a, [pivot_row, j])
                exchanged = kb.alu("cmpne", pivot_row, row)
                signed = kb.where(exchanged, kb.alu("neg", kb.acc_get(det)), kb.acc_get(det))
                pivot = kb.load(a, [row, col])
                kb.acc_set(det, kb.alu("mul", signed, pivot))
                # A zero pivot means a zero determinant; eliminate nothing rather than divide by 0.
                singular = kb.alu("cmpeq", pivot, zero())
                with kb.loop(n, start=k + 1) as i:
                    ratio = kb.alu("div", kb.load(a, [i, col]), pivot)
                    factor = kb.where(singular, zero(), ratio)
                    with kb.loop(n, start=k + 1) as j:
                        update = kb.alu("mul", factor, kb.load(a, [row, j]))
                        kb.store(kb.alu("sub", kb.load(a, [i, j]), update), a, [i, j])
            kb.store(kb.cast(kb.acc_get(det), element_type), out, batch)
        return [out]

    @staticmethod
    def _pivot_row(kb: KernelBuilder, a: Layout, k: int) -> SSAValue:
        """The row, from k down, with the largest |a[row, k]| (the first of equal ones)."""
        col = kb.index(k)
        best = kb.define_acc(0, a.element_type)
        kb.acc_set(best, kb.alu("abs", kb.load(a, [col, col])))
        best_row = kb.define_acc(k, _I64)
        with kb.loop(a.shape[0], start=k + 1) as i:
            candidate = kb.alu("abs", kb.load(a, [i, col]))
            better = kb.alu("cmplt", kb.acc_get(best), candidate)
            kb.acc_set(best, kb.where(better, candidate, kb.acc_get(best)))
            kb.acc_set(best_row, kb.where(better, kb.cast(i, _I64), kb.acc_get(best_row)))
        return kb.cast(kb.acc_get(best_row), IndexType())


PATTERNS = (MatMulLowering(), GemmLowering(), EinsumLowering(), DetLowering())
