"""The int8 fully connected layer (a Gemm's or MatMul's matrix times one vector) on cores whose
dot products are word SMLADs (the DSP extension without Helium: `onnx-to-uop{conv-word-taps=true}`).

fold-qdq turns a quantized Gemm (and tf2onnx's MatMul + Add) into a 1x1 `QLinearConv` over a
single pixel: Y[m] = Σ_k W[m, k]·X[k]; a QLinearMatMul or MatMulInteger by a constant B (as
onnxruntime's quantizer writes them) takes the same form for each row of A, with W = (B - b_zp)^T
centered at compile time where it fits int8 (`quant._fully_connected_matmul`). Every weight
is read once per inference, from flash on a microcontroller, so no weight can be widened once
for several products (as a pointwise conv's register tile does): the widening of each weight
word is paid in full. The word SMLAD form
(`arm-dsp-dot`) spends two `SXTB16` and two `SMLAD` per weight word. This form spends one
`SXTB16` and two `SMLAD`, by reading the raw weight word as two signed 16-bit halves.

A weight word stored as the bytes (s0, s1, s2, s3) = (w0 + 128, w1, w2 + 128, w3) (the even
bytes offset to unsigned at compile time, an XOR of their sign bit) reads as the halves
H = (256·w1 + w0 + 128, 256·w3 + w2 + 128), and `SXTB16 ror 8` of it gives T = (w1, w3). With
the activations of the same 4 positions pre-widened once per layer into two words

    A = (x0, x2)                         B = (x1 - 256·x0 - 128, x3 - 256·x2 - 128)

(each half within int16: x1 - 256·x0 - 128 lies in [-32768, 32767] for int8 x),

    SMLAD(H, A) + SMLAD(T, B) = w0·x0 + w1·x1 + w2·x2 + w3·x3 + 128·(x0 + x2) - 128·(w1 + w3)

so each row's sum is Σ_k W[m, k]·X[k] plus 128·Σ_odd W[m] (a constant, taken off the row's
bias at compile time) minus 128·Σ_even X (one value per vector, shared by all rows, summed
while the activations are widened). A uint8 X is widened as X - 128, and 128·Σ_k W[m, k] is
added to the bias.

The rows are taken `ROWS` (5) at a time, the last block the rows left (M not a multiple of 5:
fewer rows), each block packed at compile time as its rows' int32 biases (the corrected ones,
below) then its words interleaved a step at a time (W'[block] = bias'[m0 .. m0 + rows - 1],
then [k/4][row][4]), so one pointer reads the block's biases and then the 4·rows bytes of each
step in order; each block's whole reduction is one `arm_dsp.smlad_rows`, assembly that starts
each sum at its bias plus the shared correction and loops with the loads of a step adjacent
(the Cortex-M4 pipelines a load after a load: one cycle each after the first), each weight
word widened in its own register once its first SMLAD read it:

    for n:
      for j < K/4: xw[j] = (A, B) of X[n, 4j .. 4j + 3]  (positions past K: 0), s += x0 + x2
      for b < ceil(M / ROWS):  m0 = ROWS·b, rows = min(ROWS, M - m0)  (the last: a block of its own)
        acc[r] = W'[b].bias[r] - 128·s  (r < rows)                             (smlad_rows)
        for j < K/4: a, b' = xw[j]; w[r] = W'[b][j][r] (r < rows)
                     acc[r] = SMLAD(SXTB16(w[r] ror 8), b', SMLAD(w[r], a, acc[r]))
        Y[n, m0 + r] = epilogue(acc[r], m0 + r)

The biases in the block's stream, not a table of their own, leave the compiled loop over blocks
one pointer to keep (AD's 128 -> 640 layer: 4 bias loads, their adds and the spills around the
assembly's 13 registers took about 40 cycles a block).

Per step of 4 inputs by 5 rows: 2 activation words and 5 weight words (one group of 7 loads, 8
cycles), 5 `SXTB16` and 10 `SMLAD`: 23 cycles per 20 products (18.4 per 16; 4 rows took 19 per
16, 5 rows a second load group 19.2). The 14 registers (5 sums, 5 words, 2 activation words, 2
pointers; ReleaseFast and ReleaseSmall, without a frame pointer) leave the loop's end none: it
waits in an FPU register, s0, read back at each pass's end (1 cycle more per 8 steps; from the
stack 2: AD 508,021 -> 506,295 cycles). Left to LLVM
(single SMLAD and SXTB16 ops), the same instructions cost about 25 cycles per 16 products: its
schedule spread the loads among the arithmetic (two cycles each, three per LDRD) and spilled a
pointer; AD on the L4R5 612,459 cycles against 554,338 with the loop (at 4 rows). Positions K
to the next multiple of 4 are zero in both W' and X.

Exact: the sums wrap modulo 2^32 as the reference's int32 sums, and the final sum is the same
integer (the corrections cancel exactly), so the requantization sees the same values.

Where AD (ad_int8, 264 K MACs) stands on the L4R5's timing model, 506 K cycles (zant profile's
firmware image; 515 K with blocks of 4 rows): about 169 K are flash wait states (5 per 8-byte
word read once: 165 K of weights, 4 K of biases; the plugin charges each 64-bit word once however
it is read, LDR, LDRD or LDM, and the ART's prefetch is the instruction bus's only, so no access
pattern reads them for less), about 304 K the loops' steps (23 cycles per 20 products) and 8 K
their passes' ends (5 cycles per 8 steps), the rest per row (bias load, shared add, SMMLA, SSAT, store: about 5 cycles), per block
and the widening (3 K). A 128x128 layer: 32,338 -> 32,008 cycles (25 blocks of 5 rows and one
of 3, whose requantization is compiled code, against 32 of 4). The floor under the same model:
every weight word needs its load, one SXTB16 and two SMLAD (1 cycle per product, 264 K) beside
the 169 K of flash, 433 K; what is above it is the activation loads and each load group's first
cycle (2.4 per 16 products here, 40 K). Not built: rows in pairs sharing each weight word, the
bytes (w_r0[k] + 128, w_r1[k], w_r0[k'] + 128, w_r1[k']) read raw as halves 256·w_r1 + w_r0 +
128 against one activation word (x_k, x_k') into E, SXTB16 ror 8 of the same word into S1 (so
row 0 is E - 256·S1 - 128·Σx): per row as few activation loads as this form, but 2 sums and half
a weight register a row, 6 rows (3 words, 1 activation word) at 14 cycles per 12 products (18.7
per 16) with the loop's end in a register: no better than 5 rows here. So Plumerai's 486 K stays
out of reach with the weights in flash, short of weights in RAM (below; the six 128x128 layers'
96 KB alone are 61 K of wait states). Fewer flash bytes (0.625 cycles each) looked no better on
paper: AD's dense_1 .. dense_3 hold 95-98 % of their weights within ±7, but int4 planes (AND,
AND of the word shifted 4, a UXTB16 each: 9 cycles per 8 products against 8) would save their
15 K of wait states less 6 K of unpacking, and their 1,785 outliers at about 6 cycles each take
the rest. A layer's whole blocks with one multiplier run as one asm block with their epilogues
(`arm-dsp-requant`'s `arm_dsp.smlad_layer`: 528 K -> 520 K at 4 rows). Tried and not kept: the
requantization and stores inside each block's assembly (LLVM then unrolled the loop over blocks
fully: 582 K cycles from instruction fetches), the requantization alone inside it (the
multiplier and addend immediates reloaded per block: 529 K), this form for AD's 128 -> 8 layer
(63 cycles slower: 128 inputs to widen for 8 outputs; `FEW_INPUTS_WEIGHTS`). With the weights
staged in RAM (`zant compile --constants staged`, 273 KB of the L4R5's 640 KB), AD took 359 K
cycles (at d25bf7f).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import IntegerType, Signedness
from xdsl.ir import Attribute, SSAValue

from zant.dialects import arm_dsp, uop
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout

I16 = IntegerType(16)
I32 = IntegerType(32)
INT8 = IntegerType(8)
UINT8 = IntegerType(8, Signedness.UNSIGNED)

ROWS = arm_dsp.SMLAD_ROWS
"""Output rows per pass over the activations (5: 5 accumulators, 5 weight words, the 2
activation words and 2 pointers fill the Cortex-M4's 14 registers, the loop's end on the
stack); the last block of a layer takes the rows left, fewer."""

WORD = 4
"""Weights per word load."""

OFFSET = 128
"""The even weight bytes' offset to unsigned (and a uint8 activation's to signed)."""

MIN_WEIGHTS = 4096
"""Fewer weights than this keep the word SMLAD form: the form saves about 0.3 cycles per product
on the Cortex-M4 but pays about 4 cycles per input (widening X) and 30 per block of rows, so
smaller layers got slower (AD's 128 -> 8 and 8 -> 128 layers on the L4R5: 2,927 -> 3,366 and
4,421 -> 4,853 cycles; KWS's 64 -> 12: 2,503 -> 2,963)."""

FEW_INPUTS_WEIGHTS = 1024
"""Fewer weights than `MIN_WEIGHTS` but at least this many take the form where the inputs are
few beside the outputs (8·K ≤ M): X's widening, once per layer, then costs less than the word
form's work per output (AD's 8 -> 128 layer on the L4R5, a whole `arm_dsp.smlad_layer`: 4,421
-> 3,682 cycles; its 128 -> 8, left to the word form, took 2,918 -> 2,981 in this one)."""


def applies(x_type: Attribute, w_type: Attribute, weight_count: int, out_channels: int, pixels: int) -> bool:
    """Whether a layer of constant weights (a 1x1 Conv ungrouped with weight zero point 0, or a
    MatMul by a constant B centered at compile time; zero point of X folded, 32-bit sums:
    checked by the caller) of `out_channels` outputs over a single pixel takes this form: X int8
    or uint8, int8 weights, at least `MIN_WEIGHTS` of them (or `FEW_INPUTS_WEIGHTS` for few
    inputs beside the outputs)."""
    if pixels != 1 or x_type not in (INT8, UINT8) or w_type != INT8 or out_channels < 1:
        return False
    depth = weight_count // out_channels
    return weight_count >= MIN_WEIGHTS or (weight_count >= FEW_INPUTS_WEIGHTS and 8 * depth <= out_channels)


def interleaved_weights(weights: np.ndarray, bias: np.ndarray, rows: int) -> np.ndarray:
    """W [M, K] int8 and the int32 `bias` [M] (`corrected_bias`) as this form reads them, block
    by block (`block_starts`): the block's biases (`rows`, the last block's the rows left;
    little-endian int32), then its rows' words interleaved a word at a time, [k/4][row][4], K
    padded with zeros to a multiple of 4 and the even bytes of each word offset by 128 (their
    sign bit flipped)."""
    out_channels, depth = weights.shape
    steps = -(-depth // WORD)
    padded = np.zeros((out_channels, steps * WORD), np.int16)
    padded[:, :depth] = weights
    padded[:, 0::2] += OFFSET  # s0, s2 = w0 + 128, w2 + 128 in [0, 255]
    biases = np.asarray(bias, np.int32).astype("<i4").view(np.uint8).reshape(out_channels, WORD)
    blocks = [
        np.concatenate([biases[start:start + rows].reshape(-1),
                        padded[start:start + rows].reshape(-1, steps, WORD).transpose(1, 0, 2).reshape(-1).astype(np.uint8)])
        for start in block_starts(out_channels, rows)
    ]
    return np.concatenate(blocks).view(np.int8)


def block_starts(out_channels: int, rows: int) -> list[int]:
    """The first row of each block of `rows` (the last one holds the rows left, fewer)."""
    return list(range(0, out_channels, rows))


def corrected_bias(weights: np.ndarray, bias: np.ndarray | None, unsigned_x: bool) -> np.ndarray:
    """The int32 bias plus what the form's sums lack per row: 128·Σ of the odd-position weights
    (T's halves times B's -128), and for a uint8 X (widened as X - 128) 128·Σ of all weights;
    wrapped to int32 as the sums are."""
    total = np.zeros(weights.shape[0], np.int64) if bias is None else bias.astype(np.int64)
    wide = weights.astype(np.int64)
    total = total + OFFSET * wide[:, 1::2].sum(axis=1)
    if unsigned_x:
        total = total + OFFSET * wide.sum(axis=1)
    return total.astype(np.uint64).astype(np.uint32).view(np.int32)


def fully_connected(
    kb: KernelBuilder,
    x: Layout,
    y: Layout,
    weights: np.ndarray,
    bias: np.ndarray | None,
    finish: Callable[[SSAValue, SSAValue, SSAValue], SSAValue],
    name: str,
) -> None:
    """Y[n, m, 1…] = finish(Σ_k W[m, k]·X[n, k, 1…] + bias[m], n, m) in this form (module
    docstring); `weights` W as int8 [M, K], `bias` the folded int32 bias (or None), X and Y of
    one pixel (or of rank 2: a MatMul's rows)."""
    batch, depth = x.shape[:2]
    out_channels = y.shape[1]
    rows = min(ROWS, out_channels)
    steps = -(-depth // WORD)
    unsigned_x = x.element_type == UINT8
    blocks, tail = divmod(out_channels, rows)
    stride = (steps + 1) * rows * WORD  # a whole block's biases and words
    table = corrected_bias(weights, bias, unsigned_x)
    packed = kb.constant(f"{name}_weights", interleaved_weights(weights, table, rows), INT8)
    halves = kb.alloc(f"{name}_halves", [steps * WORD], I16)
    pixel = [kb.index(0)] * (x.rank - 2)
    source, halves_view = kb.view(packed), kb.view(halves)

    def activation(n: SSAValue, k: SSAValue | int) -> SSAValue:
        """X[n, k] as a signed int32 (a uint8 less 128), 0 past K."""
        if isinstance(k, int) and k >= depth:
            return kb.const(0, I32)
        value = kb.cast(kb.load(x, [n, k if isinstance(k, SSAValue) else kb.index(k), *pixel]), I32)
        return kb.alu("sub", value, kb.const(OFFSET, I32)) if unsigned_x else value

    def widen_word(n: SSAValue, j: SSAValue, even_sum: SSAValue) -> None:
        """xw[j] = A, B of an int8 X[n, 4j .. 4j + 3] from one word load of its 4 bytes (X's
        positions contiguous); 'even_sum' += x0 + x2. A = SXTB16(X) = (x0, x2); B's halves x1 -
        256·x0 - 128 = 256·(-x0 - 1) + (x1 + 128) are the bytes (x1 ^ 0x80, ~x0), (x3 ^ 0x80,
        ~x2): REV16(X) ^ 0xFF80FF80. 10 instructions per 4 inputs where `widen`'s byte loads
        took 16 (AD on the L4R5: 519,089 -> 516,767 cycles in zant profile's image)."""
        base = kb.alu("mul", j, kb.index(WORD))
        ptr = kb.insert(uop.GepOp(kb.view(x), [n, base, *pixel])).result
        word = kb.insert(arm_dsp.LoadWordOp(ptr)).result
        a = kb.insert(arm_dsp.Sxtb16Op(word)).result
        byte, eight = kb.const(0x00FF00FF, I32), kb.const(8, I32)
        rev16 = kb.alu("or", kb.alu("and", kb.alu("shr", word, eight), byte),
                       kb.alu("shl", kb.alu("and", word, byte), eight))
        b = kb.alu("xor", rev16, kb.const(-0x007F0080, I32))  # 0xFF80FF80
        sixteen = kb.const(16, I32)
        for i, value in enumerate([a, kb.alu("shr", a, sixteen), b, kb.alu("shr", b, sixteen)]):
            at = kb.alu("add", base, kb.index(i)) if i else base
            kb.store(kb.cast(value, I16), halves, [at])
        ones = kb.const(0x00010001, I32)
        kb.acc_set(even_sum, kb.insert(arm_dsp.SmladOp(a, ones, kb.acc_get(even_sum))).result)

    def widen(n: SSAValue, j: SSAValue | int, even_sum: SSAValue) -> None:
        """xw[j] = A, B of X[n, 4j .. 4j + 3]; 'even_sum' += x0 + x2."""
        if isinstance(j, int):
            xs = [activation(n, WORD * j + i) for i in range(WORD)]
            base = kb.index(WORD * j)
        else:
            base = kb.alu("mul", j, kb.index(WORD))
            xs = [activation(n, kb.alu("add", base, kb.index(i)) if i else base) for i in range(WORD)]
        shift, offset = kb.const(8, I32), kb.const(OFFSET, I32)
        a = [xs[0], xs[2]]
        b = [kb.alu("sub", kb.alu("sub", xs[2 * h + 1], kb.alu("shl", xs[2 * h], shift)), offset) for h in range(2)]
        for i, value in enumerate([*a, *b]):
            at = kb.alu("add", base, kb.index(i)) if i else base
            kb.store(kb.cast(value, I16), halves, [at])
        kb.acc_set(even_sum, kb.alu("add", kb.acc_get(even_sum), kb.alu("add", xs[0], xs[2])))

    with kb.loop(batch) as n:
        even_sum = kb.define_acc(0, I32)
        whole = depth // WORD
        if whole:
            with kb.loop(whole) as j:
                (widen_word if x.element_type == INT8 and x.strides[1] == 1 else widen)(n, j, even_sum)
        if whole < steps:
            widen(n, whole, even_sum)
        shared = kb.alu("mul", kb.acc_get(even_sum), kb.const(-OFFSET, I32))

        def block_rows(first: SSAValue, start: SSAValue, count: int) -> None:
            """Rows first .. first + count - 1 from the block at `start` in W'. Each row's sum
            starts at its corrected bias (the block's first words) plus the shared correction."""
            pa = kb.insert(uop.GepOp(halves_view, [kb.index(0)])).result
            pb = kb.insert(uop.GepOp(source, [start])).result
            sums = kb.insert(arm_dsp.SmladRowsOp(pa, pb, shared, steps, count)).results
            for r in range(count):
                m = kb.alu("add", first, kb.index(r)) if r else first
                kb.store(finish(sums[r], n, m), y, [n, m, *pixel])

        with kb.loop(blocks) as block:
            block_rows(kb.alu("mul", block, kb.index(rows)), kb.alu("mul", block, kb.index(stride)), rows)
        if tail:
            block_rows(kb.index(blocks * rows), kb.index(blocks * stride), tail)


__all__ = ["FEW_INPUTS_WEIGHTS", "MIN_WEIGHTS", "ROWS", "applies", "block_starts", "corrected_bias", "fully_connected", "interleaved_weights"]
