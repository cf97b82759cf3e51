"""onnxruntime's float32 arithmetic for 16-bit QDQ layers, in NumPy (`zant.float_sum`).

onnxruntime runs DequantizeLinear → Conv / Gemm / Add / GlobalAveragePool → QuantizeLinear of
int16 codes in float32 with MLAS's kernels (it has no integer kernel for them). These functions
transcribe that arithmetic, operation for operation, for the interpreter's reference
(`--check-each-pass`) and the tests; `passes/onnx_to_uop/quant_float.py` generates the same
operations. The forms (`FLOAT_SUMS`, MLAS's x86-64 kernels):

* `fma`: its SGEMM kernels (AVX-512F, FMA3): acc = fma(x_f, w_f, acc) for k
  in im2col order (channel, then the kernel's taps), one rounding per step.
* `m1`: MlasSgemmKernelM1Avx (a GEMM with one row): each 4 consecutive products (VMULPS) summed
  left to right, the group then added to the running sum; a last group of 2, then of 1.
* `m1-transb`: MlasSgemmKernelM1TransposeBAvx: 8 lanes, lane l summing the products k ≡ l
  (mod 8) in order, reduced by the output's block (outputs taken 4, then 2, then 1 at a time).
* `mean`: MlasPoolGlobalKernel: 4 lanes over the first 4·⌊S/4⌋ elements, (l0 + l2) + (l1 + l3),
  the rest added one at a time, divided by float32(S).
* `add`: the float Add of the two dequantized tensors.

Then + the dequantized bias (a Conv's, added after the sum) and MLAS's QuantizeLinear,
rint(float32(v / y_scale)) + y_zp, saturated.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32


def dequantize(codes: np.ndarray, scale, zero_point) -> np.ndarray:
    """DequantizeLinear in float32: float32(q - zp) · scale, one rounding."""
    return (np.asarray(codes, np.int64) - np.asarray(zero_point, np.int64)).astype(F32) * F32(scale)


def quantize(values: np.ndarray, scale, zero_point, dtype: np.dtype) -> np.ndarray:
    """MLAS's QuantizeLinear: rint(float32(v / scale)) + zp, saturated to `dtype`."""
    info = np.iinfo(dtype)
    q = np.rint((values.astype(F32) / F32(scale)).astype(F32)).astype(np.int64) + int(zero_point)
    return np.clip(q, info.min, info.max).astype(dtype)


def fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a · b + c rounded once to float32. The product of two float32 is exact in float64; the
    sum is computed exactly as s + e (TwoSum) and s rounded to odd before the float32 rounding,
    which makes the double rounding correct (float64 has more than 24 + 2 bits)."""
    p = np.asarray(a, np.float64) * np.asarray(b, np.float64)
    c = np.asarray(c, np.float64)
    s = p + c
    v = s - p
    e = (p - (s - v)) + (c - v)
    even = (s.view(np.int64) & 1) == 0
    s = np.where((e != 0) & even & np.isfinite(s), np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)
    return s.astype(F32)


def _columns(x_f: np.ndarray, kernel, pads, strides, dilations, out_spatial) -> np.ndarray:
    """im2col of a float32 x [N, C, *spatial]: [N, C, *kernel taps, *out_spatial], zeros outside."""
    rank = len(kernel)
    padded = np.pad(x_f, [(0, 0), (0, 0)] + [(pads[d], pads[d + rank]) for d in range(rank)])
    taps = []
    for tap in np.ndindex(*kernel):
        index = tuple(
            slice(tap[d] * dilations[d], tap[d] * dilations[d] + strides[d] * (out_spatial[d] - 1) + 1, strides[d])
            for d in range(rank)
        )
        taps.append(padded[(slice(None), slice(None), *index)])
    return np.stack(taps, axis=2)  # [N, C, taps, *out]


def conv(
    form: str, x: np.ndarray, x_scale, x_zp, w: np.ndarray, w_scale: np.ndarray, w_zp, bias: np.ndarray | None,
    y_scale, y_zp, dtype: np.dtype, group: int = 1, pads=None, strides=None, dilations=None, out_spatial=None,
) -> np.ndarray:
    """A 16-bit QLinearConv (x [N, C, *spatial], w [M, C/group, *kernel]) as onnxruntime's
    float32 chain computes it with the MLAS kernel `form` (`fma`, `m1`, `m1-transb`)."""
    out_channels, group_channels, *kernel = w.shape
    rank = len(kernel)
    pads = list(pads or [0] * 2 * rank)
    strides, dilations = list(strides or [1] * rank), list(dilations or [1] * rank)
    if out_spatial is None:
        out_spatial = [
            (x.shape[2 + d] + pads[d] + pads[d + rank] - dilations[d] * (kernel[d] - 1) - 1) // strides[d] + 1 for d in range(rank)
        ]
    w_scale = np.broadcast_to(np.asarray(w_scale, F32).reshape(-1), (out_channels,))
    shape = (out_channels,) + (1,) * (w.ndim - 1)
    w_f = dequantize(w, w_scale.reshape(shape), np.broadcast_to(np.asarray(w_zp if w_zp is not None else 0).reshape(-1), (out_channels,)).reshape(shape))
    w_f = w_f.reshape(out_channels, -1)  # [M, K], k = (channel, tap)
    b_f = np.zeros(out_channels, F32) if bias is None else (np.asarray(bias).reshape(-1).astype(F32) * (F32(x_scale) * w_scale).astype(F32))
    columns = _columns(dequantize(x, x_scale, x_zp), kernel, pads, strides, dilations, out_spatial)
    n = x.shape[0]
    out_per_group = out_channels // group
    total = np.zeros((n, out_channels, *out_spatial), F32)
    for m in range(out_channels):
        g = m // out_per_group
        cols = columns[:, g * group_channels:(g + 1) * group_channels].reshape(n, -1, *out_spatial)  # [N, K, *out]
        depth = cols.shape[1]
        products = [(cols[:, k] * w_f[m, k]).astype(F32) for k in range(depth)]
        if form == "fma":
            acc = np.zeros((n, *out_spatial), F32)
            for k in range(depth):
                acc = fma32(cols[:, k], w_f[m, k], acc)
        elif form == "m1":
            acc, k = None, 0
            for size in [4] * (depth // 4) + [2] * (depth % 4 // 2) + [1] * (depth % 2):
                part = products[k]
                for j in range(1, size):
                    part = (part + products[k + j]).astype(F32)
                acc = part if acc is None else (part + acc).astype(F32)
                k += size
        elif form == "m1-transb":
            lanes = [np.zeros((n, *out_spatial), F32) for _ in range(8)]
            for k in range(depth):
                lanes[k % 8] = (lanes[k % 8] + products[k]).astype(F32)
            j = m % out_per_group
            full = out_per_group // 4 * 4
            block = 4 if j < full else (2 if j < full + out_per_group % 4 // 2 * 2 else 1)
            acc = _lane_reduction(lanes, block)
        else:
            raise ValueError(f"unknown float sum form '{form}'")
        total[:, m] = (acc + b_f[m]).astype(F32)
    return quantize(total, y_scale, y_zp, dtype)


def _lane_reduction(v: list[np.ndarray], block: int) -> np.ndarray:
    def add(a, b):
        return (a + b).astype(F32)

    if block == 4:
        return add(add(add(add(v[0], v[1]), v[2]), v[3]), add(add(add(v[4], v[5]), v[6]), v[7]))
    if block == 2:
        return add(add(add(v[0], v[2]), add(v[4], v[6])), add(add(v[1], v[3]), add(v[5], v[7])))
    return add(add(add(v[0], v[1]), add(v[2], v[3])), add(add(v[4], v[5]), add(v[6], v[7])))


def global_mean(x: np.ndarray, x_scale, x_zp, y_scale, y_zp, dtype: np.dtype, spatial_dims: int) -> np.ndarray:
    """A whole-input average pool of a 16-bit x ([N, C, *window]) as MlasPoolGlobalKernel sums it."""
    flat = dequantize(x, x_scale, x_zp).reshape(*x.shape[:2], -1)
    size = flat.shape[-1]
    lanes = [np.zeros(x.shape[:2], F32) for _ in range(4)]
    for i in range(size - size % 4):
        lanes[i % 4] = (lanes[i % 4] + flat[..., i]).astype(F32)
    total = ((lanes[0] + lanes[2]).astype(F32) + (lanes[1] + lanes[3]).astype(F32)).astype(F32)
    for i in range(size - size % 4, size):
        total = (total + flat[..., i]).astype(F32)
    mean = (total / F32(size)).astype(F32)
    return quantize(mean, y_scale, y_zp, dtype).reshape(*x.shape[:2], *[1] * spatial_dims)


def add(a: np.ndarray, a_scale, a_zp, b: np.ndarray, b_scale, b_zp, c_scale, c_zp, dtype: np.dtype) -> np.ndarray:
    """A 16-bit QLinearAdd as onnxruntime's float Add of the dequantized tensors."""
    return quantize((dequantize(a, a_scale, a_zp) + dequantize(b, b_scale, b_zp)).astype(F32), c_scale, c_zp, dtype)
