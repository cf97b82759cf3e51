"""16-bit QDQ layers as onnxruntime computes them: in float32 (`zant.float_sum`).

onnxruntime has no integer kernel for 16-bit QDQ: its CPU provider runs DequantizeLinear →
Conv / Gemm / Add / GlobalAveragePool → QuantizeLinear in float32, with MLAS's kernels, and a
sum of int16 × int8 products leaves float32's 24-bit mantissa, so its codes are those of its
kernels' summation order, not of any rounding of the exact sum. `requant-rounding` marks each
16-bit op `fold-qdq` made of such a chain, in the `onnxruntime` mode, with the MLAS form that
computes it there (`FLOAT_SUMS`); these lowerings reproduce it bit for bit: every value in
float32 registers (no float tensor in scratch), the dequantized weights and biases as float32
tables in the constant arena, the same IEEE operations on every core (an FPU's VMUL / VADD /
VFMA / VDIV, or Zig's soft float). QuantizeLinear is MLAS's: the float32 quotient x / y_scale
rounded to nearest even (`quantize_f32`), plus the zero point, saturated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
from xdsl.dialects.builtin import Float32Type, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue

from zant.dialects import uop
from zant.dialects.onnx import input_value
from zant.passes.onnx_to_uop.base import result_name
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout, layout_of, result_layout, tensor_element_type, tensor_shape
from zant.passes.onnx_to_uop.windows import load_window, sliding_windows, tap_positions

I32 = IntegerType(32)
F32 = Float32Type()

UNROLLED_TERMS = 64
"""The one-row forms' sums of up to this many terms are unrolled (constant taps, no index
arithmetic); longer ones loop over groups of terms."""


Quantize = Callable[[KernelBuilder, SSAValue, SSAValue | None, Attribute], SSAValue]
"""saturate(rint(ratio) + zero_point) of an f32 ratio (`quant.quantize_f32`, handed in by the
QLinear lowerings, which this module's lowerings serve)."""

Constants = Mapping[int, np.ndarray | None]
"""The op's constant inputs by ONNX input index (None: absent)."""


def _constant(constants: Constants, index: int) -> np.ndarray | None:
    """The constant at ONNX input `index`, None when absent."""
    return constants.get(index)


def _scalar(constants: Constants, index: int, default: float = 0) -> np.ndarray:
    array = _constant(constants, index)
    return np.asarray(default) if array is None else array.reshape(-1)[0]


def float_operands(constants: Constants) -> tuple[np.float32, int, np.ndarray, np.ndarray, np.float32, int]:
    """A 16-bit QLinearConv's constants as onnxruntime's float32 graph holds them: x's scale and
    zero point; W dequantized, float32(w - w_zp) · float32(w_scale[m]); the bias dequantized,
    float32(b) · float32(x_scale · w_scale[m]) (the bias scale onnxruntime's quantizer writes; 0
    without a bias); y's scale and zero point."""
    f32 = np.float32
    w = _constant(constants, 3).astype(np.int64)
    channels = w.shape[0]
    w_scale = np.broadcast_to(_constant(constants, 4).astype(f32).reshape(-1), (channels,))
    w_zp = _constant(constants, 5)
    w_zp = np.zeros(channels, np.int64) if w_zp is None else np.broadcast_to(w_zp.astype(np.int64).reshape(-1), (channels,))
    shape = (channels,) + (1,) * (w.ndim - 1)
    weights = ((w - w_zp.reshape(shape)).astype(f32) * w_scale.reshape(shape)).astype(f32)
    x_scale = f32(_scalar(constants, 1))
    bias = np.zeros(channels, f32)
    b = _constant(constants, 8)
    if b is not None:
        bias = (b.reshape(-1).astype(f32) * (x_scale * w_scale).astype(f32)).astype(f32)
    return x_scale, int(_scalar(constants, 2)), weights, bias, f32(_scalar(constants, 6)), int(_scalar(constants, 7))


def _dequantized(kb: KernelBuilder, value: SSAValue, zero_point: SSAValue, scale: SSAValue) -> SSAValue:
    """DequantizeLinear's float32(x - zp) · scale (one rounding: |x - zp| < 2^24 converts exactly)."""
    return kb.alu("mul", kb.cast(kb.alu("sub", kb.cast(value, I32), zero_point), F32), scale)


def _fma(kb: KernelBuilder, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
    return kb.insert(uop.FmaOp(a, b, c)).result


def _quantized(
    kb: KernelBuilder, quantize: Quantize, value: SSAValue, y_scale: SSAValue, y_zero: SSAValue, out_type: Attribute
) -> SSAValue:
    """MLAS's QuantizeLinear: rint(float32(value / y_scale)) + y_zp, saturated."""
    return quantize(kb, kb.alu("div", value, y_scale), y_zero, out_type)


def float_conv(op: Operation, kb: KernelBuilder, form: str, constants: Constants, quantize: Quantize) -> Layout:
    """A 16-bit QLinearConv marked `fma`, `m1` or `m1-transb`: per output, in float32 registers,
    the products x_f · w_f (x_f = float32(x - x_zp) · x_scale; w_f from `float_operands`, a
    float32 table) in im2col order k = (channel, kernel tap), summed as that MLAS kernel sums
    them; then + bias_f and QuantizeLinear. A padded tap reads x_zp: its product is 0 and adds
    nothing, as im2col's zeros do."""
    x = layout_of(input_value(op, 0))
    out_shape = tensor_shape(op.results[0])
    out_type = tensor_element_type(op.results[0])
    x_scale, x_zp, weights, bias, y_scale, y_zp = float_operands(constants)
    out_channels, group_channels, *kernel = weights.shape
    group = x.shape[1] // group_channels
    out_per_group = out_channels // group
    windows = sliding_windows(op, x.shape[2:], kernel, out_shape[2:])
    taps = list(np.ndindex(*kernel))
    depth = group_channels * len(taps)
    name = result_name(op)
    w_f = kb.constant(f"{name}_float_weights", weights, F32)
    b_f = kb.constant(f"{name}_float_bias", bias, F32)
    x_s, y_s, zero = kb.const(float(x_scale), F32), kb.const(float(y_scale), F32), kb.const(0.0, F32)
    x_zero, y_zero = kb.const(x_zp, I32), kb.const(y_zp, I32)
    y = result_layout(kb, op, name, out_shape, out_type)

    def first_channel(m: SSAValue) -> SSAValue:
        return kb.alu("mul", kb.alu("div", m, kb.index(out_per_group)), kb.index(group_channels))

    def x_tap(n: SSAValue, m: SSAValue, out_ivs: list[SSAValue], c: SSAValue, tap_ivs: list[SSAValue]) -> SSAValue:
        """x_f of channel c (of m's group) at the kernel tap `tap_ivs`."""
        positions = tap_positions(kb, windows, out_ivs, tap_ivs)
        value, _ = load_window(kb, x, [n, kb.alu("add", first_channel(m), c)], windows, positions, x_zp)
        return _dequantized(kb, value, x_zero, x_s)

    def product(n: SSAValue, m: SSAValue, out_ivs: list[SSAValue], k: int | SSAValue) -> SSAValue:
        """The rounded product x_f · w_f of the k-th term, k = (channel, tap) (a VMULPS); k a
        constant, or an index value unravelled at run time."""
        if isinstance(k, int):
            c, tap = divmod(k, len(taps))
            channel, tap_ivs = kb.index(c), [kb.index(t) for t in taps[tap]]
        else:
            channel, rest = kb.alu("div", k, kb.index(len(taps))), kb.alu("rem", k, kb.index(len(taps)))
            tap_ivs = []
            for extent in reversed(kernel):
                tap_ivs.insert(0, kb.alu("rem", rest, kb.index(extent)))
                rest = kb.alu("div", rest, kb.index(extent))
        return kb.alu("mul", x_tap(n, m, out_ivs, channel, tap_ivs), kb.load(w_f, [m, channel, *tap_ivs]))

    def group_sum(n: SSAValue, m: SSAValue, out_ivs: list[SSAValue], first: int | SSAValue, size: int) -> SSAValue:
        """`size` products from the `first`-th, summed left to right."""
        part = product(n, m, out_ivs, first)
        for j in range(1, size):
            k = first + j if isinstance(first, int) else kb.alu("add", first, kb.index(j))
            part = kb.alu("add", part, product(n, m, out_ivs, k))
        return part

    def one_row(n: SSAValue, m: SSAValue, out_ivs: list[SSAValue]) -> SSAValue:
        """MlasSgemmKernelM1Avx: each 4 products summed left to right (VMULPS, VADDPS), the group
        then added to the running sum; a last group of 2, then of 1. Unrolled for short sums
        (a depthwise Conv's taps), a loop over the groups of 4 beyond `UNROLLED_TERMS`."""
        total, k = None, 0
        sizes = [4] * (depth // 4) + [2] * (depth % 4 // 2) + [1] * (depth % 2)
        if depth > UNROLLED_TERMS:
            acc = kb.define_acc(0.0, F32)
            with kb.loop(depth // 4) as q:
                kb.acc_set(acc, kb.alu("add", group_sum(n, m, out_ivs, kb.alu("mul", q, kb.index(4)), 4), kb.acc_get(acc)))
            total, k, sizes = kb.acc_get(acc), depth // 4 * 4, sizes[depth // 4:]
        for size in sizes:
            part = group_sum(n, m, out_ivs, k, size)
            total = part if total is None else kb.alu("add", part, total)
            k += size
        return zero if total is None else total

    def lanes(n: SSAValue, m: SSAValue, out_ivs: list[SSAValue]) -> list[SSAValue]:
        """MlasSgemmKernelM1TransposeBAvx's 8 lanes: lane l sums the products k ≡ l (mod 8), in
        order (a loop over the rows of 8 beyond `UNROLLED_TERMS`)."""
        sums: list[SSAValue | None] = [None] * 8
        start = 0
        if depth > UNROLLED_TERMS:
            accs = [kb.define_acc(0.0, F32) for _ in range(8)]
            with kb.loop(depth // 8) as q:
                row = kb.alu("mul", q, kb.index(8))
                for lane, acc in enumerate(accs):
                    p = product(n, m, out_ivs, kb.alu("add", row, kb.index(lane)))
                    kb.acc_set(acc, kb.alu("add", kb.acc_get(acc), p))
            sums, start = [kb.acc_get(acc) for acc in accs], depth // 8 * 8
        for k in range(start, depth):
            p = product(n, m, out_ivs, k)
            sums[k % 8] = p if sums[k % 8] is None else kb.alu("add", sums[k % 8], p)
        return [zero if v is None else v for v in sums]

    def add(a: SSAValue, b: SSAValue) -> SSAValue:
        return kb.alu("add", a, b)

    def reduced(v: list[SSAValue], block: int) -> SSAValue:
        """The kernel's reduction of one output's lanes, by the size of its block of outputs
        (the unpack / add sequence of its 4-, 2- and 1-row tails)."""
        if block == 4:
            return add(add(add(add(v[0], v[1]), v[2]), v[3]), add(add(add(v[4], v[5]), v[6]), v[7]))
        if block == 2:
            return add(add(add(v[0], v[2]), add(v[4], v[6])), add(add(v[1], v[3]), add(v[5], v[7])))
        return add(add(add(v[0], v[1]), add(v[2], v[3])), add(add(v[4], v[5]), add(v[6], v[7])))

    def finish(total: SSAValue, n: SSAValue, m: SSAValue, out_ivs: list[SSAValue]) -> None:
        value = kb.alu("add", total, kb.load(b_f, [m]))
        kb.store(_quantized(kb, quantize, value, y_s, y_zero, out_type), y, [n, m, *out_ivs])

    if form == "m1-transb":
        # The kernel takes a group's outputs in blocks of 4, then 2, then 1.
        blocks = [4] * (out_per_group // 4) + [2] * (out_per_group % 4 // 2) + [1] * (out_per_group % 2)
        with kb.loop_nest([out_shape[0], group, *out_shape[2:]]) as (n, g, *out_ivs):
            start = 0
            for block in blocks:
                with kb.loop(start + block, start) as j:
                    m = kb.alu("add", kb.alu("mul", g, kb.index(out_per_group)), j)
                    finish(reduced(lanes(n, m, out_ivs), block), n, m, out_ivs)
                start += block
        return y
    if form == "fma":
        # MLAS's SGEMM kernels (AVX-512F, FMA3): acc = fma(x_f, w_f, acc), k = 0, 1, ... A block
        # of a group's output channels per x tap: each keeps its own chain, x_f is computed once.
        block = next(b for b in (4, 2, 1) if out_per_group % b == 0)
        with kb.loop_nest([out_shape[0], out_channels // block, *out_shape[2:]]) as (n, mb, *out_ivs):
            first = kb.alu("mul", mb, kb.index(block))
            ms = [first] + [kb.alu("add", first, kb.index(j)) for j in range(1, block)]
            accs = [kb.define_acc(0.0, F32) for _ in ms]
            with kb.loop(group_channels) as c, kb.loop_nest(kernel) as tap_ivs:
                x_f = x_tap(n, first, out_ivs, c, tap_ivs)
                for m, acc in zip(ms, accs, strict=True):
                    kb.acc_set(acc, _fma(kb, x_f, kb.load(w_f, [m, c, *tap_ivs]), kb.acc_get(acc)))
            for m, acc in zip(ms, accs, strict=True):
                finish(kb.acc_get(acc), n, m, out_ivs)
        return y
    with kb.loop_nest(out_shape) as (n, m, *out_ivs):
        finish(one_row(n, m, out_ivs), n, m, out_ivs)
    return y


def float_global_pool(op: Operation, kb: KernelBuilder, constants: Constants, quantize: Quantize) -> Layout:
    """The window sum `fold-qdq` makes of a 16-bit whole-input average pool (`mean`), as
    MlasPoolGlobalKernel computes the float32 pool on x86-64: per channel, 4 lanes summing x_f of
    the elements i ≡ lane (mod 4) among the first 4·⌊S/4⌋, reduced as (l0 + l2) + (l1 + l3)
    (SSE's MlasReduceAddFloat32x4; NEON's pairwise form would be (l0 + l1) + (l2 + l3)), the last
    S mod 4 added one at a time, divided by float32(S); then QuantizeLinear."""
    x = layout_of(input_value(op, 0))
    out_shape = tensor_shape(op.results[0])
    out_type = tensor_element_type(op.results[0])
    kernel = list(tensor_shape(op.operands[3])[2:])
    size = math.prod(kernel)
    x_s, y_s = (kb.const(float(np.float32(_scalar(constants, i))), F32) for i in (1, 6))
    x_zero, y_zero = (kb.const(int(_scalar(constants, i)), I32) for i in (2, 7))
    count = kb.const(float(np.float32(size)), F32)
    y = result_layout(kb, op, result_name(op), out_shape, out_type)

    def element(n: SSAValue, c: SSAValue, i: SSAValue) -> SSAValue:
        """x_f of the window's i-th element (row-major: onnxruntime reads NCHW)."""
        position = []
        for extent in reversed(kernel):
            position.append(kb.alu("rem", i, kb.index(extent)))
            i = kb.alu("div", i, kb.index(extent))
        return _dequantized(kb, kb.load(x, [n, c, *reversed(position)]), x_zero, x_s)

    with kb.loop_nest(out_shape[:2]) as (n, c):
        accs = [kb.define_acc(0.0, F32) for _ in range(4)]
        with kb.loop(size // 4) as q:
            base = kb.alu("mul", q, kb.index(4))
            for j, acc in enumerate(accs):
                kb.acc_set(acc, kb.alu("add", kb.acc_get(acc), element(n, c, kb.alu("add", base, kb.index(j)))))
        l0, l1, l2, l3 = (kb.acc_get(acc) for acc in accs)
        total = kb.alu("add", kb.alu("add", l0, l2), kb.alu("add", l1, l3))
        for i in range(size - size % 4, size):
            total = kb.alu("add", total, element(n, c, kb.index(i)))
        mean = kb.alu("div", total, count)
        kb.store(_quantized(kb, quantize, mean, y_s, y_zero, out_type), y, [n, c, *[kb.index(0)] * (len(out_shape) - 2)])
    return y


def float_add(kb: KernelBuilder, quantize: Quantize, a: Layout, b: Layout, y: Layout, scales, zero_points, out_type: Attribute) -> None:
    """A 16-bit QLinearAdd (`add`) as onnxruntime's float Add of the two dequantized tensors:
    float32(a_f + b_f), then QuantizeLinear."""
    a_s, b_s, c_s = (kb.const(float(np.float32(s)), F32) for s in scales)
    a_zero, b_zero, c_zero = (kb.const(int(z), I32) for z in zero_points)
    with kb.loop_nest(y.shape) as ivs:
        total = kb.alu("add", _dequantized(kb, kb.load(a, ivs), a_zero, a_s), _dequantized(kb, kb.load(b, ivs), b_zero, b_s))
        kb.store(_quantized(kb, quantize, total, c_s, c_zero, out_type), y, ivs)
