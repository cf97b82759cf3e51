"""Signal processing: DFT and STFT as direct O(N²) sums, and the f32 inverse DFT as NumPy's FFT.

An f32 inverse (two-sided) DFT whose length pocketfft splits into its hard-coded radices
(2, 3, 4, 5, 7, 8, 11) is computed in float32 in pocketfft's order (`fft`): NumPy's inverse of
complex64 data runs so, and its rounding is what the ONNX suite's data holds. Everything else:

Every output bin is one pair of accumulators (real, imaginary) over the samples:
    out[k] = Σ_n x[n] · e^{±2πi·k·n/N},
with the phase reduced modulo N in integer arithmetic first, so that cos/sin always see an
angle in [0, 2π) whatever k·n. Sums and trigonometry run in f64: in f32, sin(π)·x leaves
residues of 1e-5 where the exact result (e.g. the imaginary part of a real signal's Nyquist
bin) is 0, far outside an absolute tolerance. Complex tensors keep (real, imaginary) in a last dimension of 2;
real ones have a last dimension of 1.

The window ops (Hann, Hamming, Blackman) are constant tables: the result type gives the length,
and a `size` only known at run time must be that length (`abi.check`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import IndexType, f32, f64
from xdsl.ir import Attribute, Operation, SSAValue

from zant.dialects.onnx import (
    BlackmanWindowOp,
    DFTOp,
    HammingWindowOp,
    HannWindowOp,
    MelWeightMatrixOp,
    STFTOp,
    get_attr,
    inputs,
)
import zant.passes.onnx_to_uop.fft as fft
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.elementwise import reject_bfloat16
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    constant_table,
    layout_of,
    tensor_element_type,
    tensor_shape,
)
from zant.passes.onnx_to_uop.parameters import I64, all_of, any_of, check, guard_builder, load_all, runtime_input
from zant.passes.onnx_to_uop.reduce import constant_input, normalize_axes

Sample = Callable[[SSAValue], tuple[SSAValue, SSAValue | None]]
"""The n-th term's (real, imaginary) parts, in the accumulator type; None for a zero imaginary."""


def _scalar(op: Operation, index: int, default: int | None) -> int | None:
    value = constant_input(op, index)
    return default if value is None else int(np.asarray(value).reshape(-1)[0])


def fourier_sum(
    kb: KernelBuilder, sample: Sample, count: int, k: SSAValue, n_fft: int, sign: int, acc_type: Attribute
) -> tuple[SSAValue, SSAValue]:
    """Σ_{n < count} sample(n) · e^{sign·2πi·k·n/n_fft}, as (real, imaginary)."""
    real, imag = kb.define_acc(0, acc_type), kb.define_acc(0, acc_type)
    with kb.loop(count) as n:
        a, b = sample(n)
        turns = kb.alu("rem", kb.alu("mul", k, n), kb.index(n_fft))
        angle = kb.alu("mul", kb.cast(turns, acc_type), kb.const(2 * math.pi / n_fft, acc_type))
        c, s = kb.alu("cos", angle), kb.alu("sin", angle)
        if sign < 0:
            s = kb.alu("neg", s)
        # (a + ib)(c + is) = (ac - bs) + i(as + bc)
        kb.mulacc(real, a, c)
        kb.mulacc(imag, a, s)
        if b is not None:
            kb.mulacc(real, kb.alu("neg", b), s)
            kb.mulacc(imag, b, c)
    return kb.acc_get(real), kb.acc_get(imag)


def _complex_sample(kb: KernelBuilder, x: Layout, outer: list[SSAValue], acc_type: Attribute) -> Sample:
    """Reads x[*outer, n, 0] (and x[*outer, n, 1] when x is complex)."""

    def sample(n: SSAValue) -> tuple[SSAValue, SSAValue | None]:
        part = lambda p: kb.cast(kb.load(x, [*outer, n, kb.index(p)]), acc_type)  # noqa: E731
        return part(0), part(1) if x.shape[-1] == 2 else None

    return sample


def _store_complex(
    kb: KernelBuilder, out: Layout, where: list[SSAValue], parts: tuple[SSAValue, ...], select: SSAValue | None = None
) -> None:
    """Stores the parts; with `select`, each keeps the old value unless it holds."""
    for p, value in enumerate(parts[: out.shape[-1]]):
        at = [*where, kb.index(p)]
        value = kb.cast(value, out.element_type)
        if select is not None:
            value = kb.where(select, value, kb.load(out, at))
        kb.store(value, out, at)


class DFTLowering(OnnxLowering):
    """DFT along `axis`: forward or inverse (scaled by 1/N), full or one-sided (RFFT), and the
    IRFFT (one-sided inverse: the missing half is the conjugate mirror, so each interior bin
    counts twice in the real result). The signal is cut or zero-padded to `dft_length`."""

    op_names = frozenset({DFTOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        reject_bfloat16(op)
        x = layout_of(inputs(op)[0])
        rank = x.rank
        element_type = tensor_element_type(op.results[0])
        out = kb.alloc(result_name(op), tensor_shape(op.results[0]), element_type)
        if runtime_input(op, 2) is not None:
            # The axis is read at run time: one masked kernel per axis the shapes allow (the
            # value picks the one that stores), and a check that it names one of them.
            gb = guard_builder(kb, op, [2])
            (axis_value,) = load_all(gb, inputs(op)[2])
            candidates = [a for a in range(rank - 1) if self.fits(op, x.shape, out.shape, a)]
            if not candidates:
                raise ValueError(f"no axis transforms shape {list(x.shape)} into {list(out.shape)}")
            selects = {
                a: gb.alu("or", gb.alu("cmpeq", axis_value, gb.const(a, I64)), gb.alu("cmpeq", axis_value, gb.const(a - rank, I64)))
                for a in candidates
            }
            check(gb, any_of(gb, list(selects.values())))
            for axis, select in selects.items():
                self.transform(kb, op, x, out, axis, select)
            return [out]
        (axis,) = normalize_axes([_scalar(op, 2, -2)], rank)
        if axis == rank - 1:
            raise ValueError("the DFT axis cannot be the last (real, imaginary) dimension")
        self.transform(kb, op, x, out, axis)
        return [out]

    @staticmethod
    def n_fft(op: Operation, length: int) -> int:
        inverse, onesided = bool(get_attr(op, "inverse")), bool(get_attr(op, "onesided"))
        return _scalar(op, 1, 2 * (length - 1) if inverse and onesided else length)

    @classmethod
    def fits(cls, op: Operation, in_shape: tuple[int, ...], out_shape: tuple[int, ...], axis: int) -> bool:
        """Whether transforming along `axis` gives `out_shape` (the other dimensions kept)."""
        n_fft = cls.n_fft(op, in_shape[axis])
        inverse, onesided = bool(get_attr(op, "inverse")), bool(get_attr(op, "onesided"))
        size = n_fft // 2 + 1 if onesided and not inverse else n_fft
        return out_shape[axis] == size and all(out_shape[d] == in_shape[d] for d in range(len(in_shape) - 1) if d != axis)

    def transform(
        self, kb: KernelBuilder, op: Operation, x: Layout, out: Layout, axis: int, select: SSAValue | None = None
    ) -> None:
        """The kernel along `axis`; with `select`, each store keeps the old value unless it holds."""
        rank = x.rank
        inverse, onesided = bool(get_attr(op, "inverse")), bool(get_attr(op, "onesided"))
        length = x.shape[axis]
        n_fft = self.n_fft(op, length)
        acc_type = f64
        perm = [d for d in range(rank - 1) if d != axis] + [axis, rank - 1]
        x_rows, out_rows = x.permute(perm), out.permute(perm)
        plan = fft.factors(n_fft)
        if inverse and not onesided and out.element_type == f32 and plan is not None:
            self._numpy_inverse(kb, op, x_rows, out_rows, min(length, n_fft), n_fft, plan, select)
            return
        scale = kb.const(1 / n_fft, acc_type) if inverse else None
        with kb.loop_nest(out_rows.shape[:-2]) as outer:
            with kb.loop(out_rows.shape[-2]) as k:
                sample = _complex_sample(kb, x_rows, outer, acc_type)
                count = min(length, n_fft)
                if inverse and onesided:
                    sample, count = self._mirrored(kb, sample, n_fft, acc_type), min(length, n_fft // 2 + 1)
                parts = fourier_sum(kb, sample, count, k, n_fft, 1 if inverse else -1, acc_type)
                if scale is not None:
                    parts = tuple(kb.alu("mul", p, scale) for p in parts)
                _store_complex(kb, out_rows, [*outer, k], parts, select)

    @staticmethod
    def _numpy_inverse(
        kb: KernelBuilder,
        op: Operation,
        x_rows: Layout,
        out_rows: Layout,
        count: int,
        n_fft: int,
        plan: list[int],
        select: SSAValue | None,
    ) -> None:
        """The f32 inverse as NumPy computes it (`fft`: pocketfft's passes in float32, then the
        scale float32(1/N)), row by row through two [N, 2] scratch buffers. NumPy's forward
        transform of complex64 data runs in double (its scale is a Python int, which selects
        the complex128 loop), which the f64 sums match; its inverse gets a float32 scale and
        runs in float32, whose rounding (1.9e-7 where the exact bin is 0, in the suite's
        10-point inverse) only this order reproduces."""
        name = result_name(op)
        buffers = [kb.alloc(f"{name}_fft{b}", [n_fft, 2], f32) for b in range(2)]
        tables = [
            None if table.size == 0 else kb.constant(f"{name}_twiddles{k}", _padded(table), f32)
            for k, table in enumerate(fft.pass_twiddles(n_fft, plan))
        ]
        ar = fft.Arith[SSAValue](
            add=lambda a, b: kb.alu("add", a, b),
            sub=lambda a, b: kb.alu("sub", a, b),
            mul=lambda a, b: kb.alu("mul", a, b),
            neg=lambda a: kb.alu("neg", a),
            const=lambda c: kb.const(float(c), f32),
        )
        part = [kb.index(0), kb.index(1)]
        with kb.loop_nest(out_rows.shape[:-2]) as outer:
            # The signal cut or zero-padded to N, its imaginary part 0 if real.
            first = buffers[0]
            with kb.loop(count) as n:
                for p in range(2):
                    if p < x_rows.shape[-1]:
                        value = kb.cast(kb.load(x_rows, [*outer, n, part[p]]), f32)
                    else:
                        value = kb.const(0.0, f32)
                    kb.store(value, first, [n, part[p]])
            if count < n_fft:
                with kb.loop(n_fft, start=count) as n:
                    for p in range(2):
                        kb.store(kb.const(0.0, f32), first, [n, part[p]])
            l1 = 1
            for k, p in enumerate(plan):
                ido = n_fft // (l1 * p)
                source = buffers[k % 2].reshape([l1, p, ido, 2])
                target = buffers[(k + 1) % 2].reshape([p, l1, ido, 2])
                assert source is not None and target is not None
                with kb.loop(l1) as column:
                    _fft_pass(kb, ar, p, source, target, column, kb.index(0), None)
                    if ido > 1:
                        with kb.loop(ido, start=1) as i:
                            _fft_pass(kb, ar, p, source, target, column, i, tables[k])
                l1 *= p
            result = buffers[len(plan) % 2]
            scale = kb.const(float(np.float32(1) / np.float32(n_fft)), f32)
            with kb.loop(n_fft) as m:
                parts = tuple(kb.alu("mul", kb.load(result, [m, part[p]]), scale) for p in range(2))
                _store_complex(kb, out_rows, [*outer, m], parts, select)

    @staticmethod
    def _mirrored(kb: KernelBuilder, sample: Sample, n_fft: int, acc_type: Attribute) -> Sample:
        """The one-sided spectrum's bins weighted by how often they occur in the full one: the
        DC bin (and the Nyquist bin of an even N) once, every other bin twice (with its mirror)."""

        def weighted(n: SSAValue) -> tuple[SSAValue, SSAValue | None]:
            a, b = sample(n)
            single = kb.alu("cmpeq", n, kb.index(0))
            if n_fft % 2 == 0:
                single = kb.alu("or", single, kb.alu("cmpeq", n, kb.index(n_fft // 2)))
            weight = kb.where(single, kb.const(1, acc_type), kb.const(2, acc_type))
            return kb.alu("mul", a, weight), None if b is None else kb.alu("mul", b, weight)

        return weighted


def _padded(table: np.ndarray) -> np.ndarray:
    """A pass's [p - 1, ido - 1, 2] twiddles with a first column (unread) so that column i is
    indexed by i itself."""
    return np.concatenate([np.zeros_like(table[:, :1]), table], axis=1) if table.shape[1] else table


def _fft_pass(
    kb: KernelBuilder,
    ar: fft.Arith[SSAValue],
    p: int,
    source: Layout,
    target: Layout,
    k: SSAValue,
    i: SSAValue,
    twiddles: Layout | None,
) -> None:
    """One radix-p butterfly of an inverse pass: source[k, j, i] (j < p) to target[j, k, i],
    outputs after the first multiplied by the column's twiddles (`twiddles` None at i = 0)."""
    re, im = kb.index(0), kb.index(1)
    values = [(kb.load(source, [k, kb.index(j), i, re]), kb.load(source, [k, kb.index(j), i, im])) for j in range(p)]
    for u, value in enumerate(fft.butterfly(ar, p, values, forward=False)):
        if u > 0 and twiddles is not None:
            w = (kb.load(twiddles, [kb.index(u - 1), i, re]), kb.load(twiddles, [kb.index(u - 1), i, im]))
            value = fft.twiddle(ar, value, w, forward=False)
        kb.store(value[0], target, [kb.index(u), k, i, re])
        kb.store(value[1], target, [kb.index(u), k, i, im])


class STFTLowering(OnnxLowering):
    """STFT: the DFT of each frame (frame f starts at f·frame_step), weighted by the window."""

    op_names = frozenset({STFTOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        reject_bfloat16(op)
        signal_value, _, window_value, _ = (inputs(op) + [None] * 4)[:4]
        signal = layout_of(signal_value)
        window = None if window_value is None else layout_of(window_value)
        _, frames, bins, _ = tensor_shape(op.results[0])
        gb = guard_builder(kb, op, [1, 3])
        conditions = []
        if runtime_input(op, 3) is not None:
            # Read at run time, the frame length must be the one the shapes give: the window's,
            # else the bin count (two-sided) or the even length with that many bins (one-sided).
            if window is not None:
                frame_length = window.shape[0]
            else:
                frame_length = 2 * (bins - 1) if get_attr(op, "onesided") else bins
            (length_value,) = load_all(gb, inputs(op)[3])
            conditions.append(gb.alu("cmpeq", length_value, gb.const(frame_length, I64)))
        else:
            frame_length = _scalar(op, 3, None if window is None else window.shape[0])
        step_index: SSAValue | None = None
        if runtime_input(op, 1) is not None:
            # frames = ⌊(N - L) / step⌋ + 1 for a positive step; each frame starts at f·step.
            if frame_length is None:
                raise ValueError("STFT needs a window or frame_length")
            span = signal.shape[1] - frame_length
            (step_value,) = load_all(gb, inputs(op)[1])
            positive = gb.alu("cmplt", gb.const(0, I64), step_value)
            step_value = gb.alu("max", gb.alu("min", step_value, gb.const(max(span, 0) + 1, I64)), gb.const(1, I64))
            counted = gb.alu("add", gb.alu("div", gb.const(span, I64), step_value), gb.const(1, I64))
            conditions += [positive, gb.alu("cmpeq", counted, gb.const(frames, I64))]
            step_index = gb.cast(step_value, IndexType())
            step = 0
        else:
            step = _scalar(op, 1, None)
        if step is None or frame_length is None:
            raise ValueError("STFT needs a frame_step and a window or frame_length")
        if conditions:
            check(gb, all_of(gb, conditions))
        element_type = tensor_element_type(op.results[0])
        acc_type = f64
        out = kb.alloc(result_name(op), tensor_shape(op.results[0]), element_type)
        batch, frames, bins, _ = out.shape
        with kb.loop_nest((batch, frames, bins)) as (b, f, k):
            start = kb.alu("mul", f, kb.index(step) if step_index is None else step_index)
            framed = _complex_sample(kb, signal, [b], acc_type)

            def sample(n: SSAValue) -> tuple[SSAValue, SSAValue | None]:
                a, c = framed(kb.alu("add", start, n))
                if window is None:
                    return a, c
                w = kb.cast(kb.load(window, [n]), acc_type)
                return kb.alu("mul", a, w), None if c is None else kb.alu("mul", c, w)

            parts = fourier_sum(kb, sample, frame_length, k, frame_length, -1, acc_type)
            _store_complex(kb, out, [b, f, k], parts)
        return [out]


def mel_weight_matrix(mel_bins: int, dft_length: int, sample_rate: int, low_hz: float, high_hz: float) -> np.ndarray:
    """The [dft_length // 2 + 1, mel_bins] triangular filter bank of ONNX's MelWeightMatrix.

    As the operator defines it: mel_bins + 2 edges evenly spaced on the mel scale (the step
    divides the range by mel_bins + 2), each mapped to the spectrogram bin
    floor((dft_length + 1) · hz / sample_rate); filter i rises from edge i to edge i + 1 and
    falls to edge i + 2.
    """
    def to_mel(hz: float) -> float:
        return 2595 * math.log10(1 + hz / 700)

    low, high = to_mel(low_hz), to_mel(high_hz)
    step = (high - low) / (mel_bins + 2)
    mels = np.arange(mel_bins + 2) * step + low
    hertz = 700 * (10 ** (mels / 2595) - 1)
    edges = ((dft_length + 1) * hertz // sample_rate).astype(int)
    table = np.zeros((dft_length // 2 + 1, mel_bins))
    for i in range(mel_bins):
        left, center, right = edges[i : i + 3]
        if center == left:
            table[center, i] = 1
        else:
            table[left : center + 1, i] = (np.arange(left, center + 1) - left) / (center - left)
        if right > center:
            table[center:right, i] = (right - np.arange(center, right)) / (right - center)
    return table


class MelWeightMatrixLowering(OnnxLowering):
    """MelWeightMatrix: a constant table computed at compile time when every input is a
    constant; else computed when NAME_predict runs (`_run_time_mel_weight_matrix`)."""

    op_names = frozenset({MelWeightMatrixOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        if any(runtime_input(op, index) is not None for index in range(5)):
            return [_run_time_mel_weight_matrix(op, kb)]
        values = [constant_input(op, index) for index in range(5)]
        mel_bins, dft_length, sample_rate = (int(np.asarray(v).reshape(-1)[0]) for v in values[:3])
        low_hz, high_hz = (float(np.asarray(v).reshape(-1)[0]) for v in values[3:])
        table = mel_weight_matrix(mel_bins, dft_length, sample_rate, low_hz, high_hz)
        expected = tensor_shape(op.results[0])
        if table.shape != expected:
            raise ValueError(f"MelWeightMatrix table is {table.shape}, the result type says {expected}")
        return [constant_table(op, result_name(op), table, tensor_element_type(op.results[0]))]


def _run_time_mel_weight_matrix(op: Operation, kb: KernelBuilder) -> Layout:
    """`mel_weight_matrix` with its inputs read at run time (the sample rate and the edge
    frequencies set the values, which the result type does not fix). num_mel_bins must be the
    result's columns and dft_length // 2 + 1 its rows; the sample rate positive, and every edge's
    spectrogram bin in [0, rows] (the filters then stay in the table): else `abi.check` makes
    NAME_predict return STATUS_BAD_PARAMETER before the table is written. In f64, as at compile
    time: the edges are computed into scratch, then each entry from its filter's three edges."""
    rows, mel_bins = tensor_shape(op.results[0])
    gb = guard_builder(kb, op, range(5))
    bins, dft_length, sample_rate = (gb.cast(gb.load(layout_of(inputs(op)[i]), []), I64) for i in range(3))
    low_hz, high_hz = (gb.cast(gb.load(layout_of(inputs(op)[i]), []), f64) for i in (3, 4))
    check(gb, all_of(gb, [
        gb.alu("cmpeq", bins, gb.const(mel_bins, I64)),
        gb.alu("cmpeq", gb.alu("add", gb.alu("div", dft_length, gb.const(2, I64)), gb.const(1, I64)), gb.const(rows, I64)),
        gb.alu("cmplt", gb.const(0, I64), sample_rate),
    ]))

    def to_mel(hz: SSAValue) -> SSAValue:  # 2595 · log10(1 + hz / 700)
        ratio = gb.alu("add", gb.const(1.0, f64), gb.alu("div", hz, gb.const(700.0, f64)))
        return gb.alu("mul", gb.alu("log", ratio), gb.const(2595 / math.log(10), f64))

    low = to_mel(low_hz)
    step = gb.alu("div", gb.alu("sub", to_mel(high_hz), low), gb.const(float(mel_bins + 2), f64))
    scale = gb.alu("div", gb.cast(gb.alu("add", dft_length, gb.const(1, I64)), f64), gb.cast(sample_rate, f64))
    edges = gb.alloc(f"{result_name(op)}_edges", [mel_bins + 2], I64)
    outside = gb.define_acc(0, I64)
    with gb.loop(mel_bins + 2) as k:
        mel = gb.alu("add", gb.alu("mul", gb.cast(k, f64), step), low)
        hz = gb.alu("mul", gb.const(700.0, f64), gb.alu("sub", gb.alu("exp", gb.alu("mul", mel, gb.const(math.log(10) / 2595, f64))), gb.const(1.0, f64)))
        edge = gb.alu("floor", gb.alu("mul", scale, hz))
        # A NaN fails both comparisons: never converted to an integer.
        inside = gb.alu("and", gb.alu("cmple", gb.const(0.0, f64), edge), gb.alu("cmple", edge, gb.const(float(rows), f64)))
        gb.acc_set(outside, gb.alu("add", gb.acc_get(outside), gb.where(inside, gb.const(0, I64), gb.const(1, I64))))
        gb.store(gb.cast(gb.where(inside, edge, gb.const(0.0, f64)), I64), edges, [k])
    check(gb, gb.alu("cmpeq", gb.acc_get(outside), gb.const(0, I64)))

    element_type = tensor_element_type(op.results[0])
    out = kb.alloc(result_name(op), [rows, mel_bins], element_type)
    one, zero = kb.const(1.0, f64), kb.const(0.0, f64)
    with kb.loop_nest([rows, mel_bins]) as (j, i):
        left, center, right = (
            kb.cast(kb.load(edges, [kb.alu("add", i, kb.index(d))]), f64) for d in range(3)
        )
        row = kb.cast(j, f64)

        def ramp(numerator: SSAValue, denominator: SSAValue) -> SSAValue:
            safe = kb.where(kb.alu("cmpeq", denominator, zero), one, denominator)
            return kb.alu("div", numerator, safe)

        # Rising from the left edge to the centre (1 at a centre equal to the left edge), then
        # falling to the right edge, which wins where both apply (the centre: 1 either way).
        rising = kb.alu("and", kb.alu("cmple", left, row), kb.alu("cmple", row, center))
        falling = kb.alu("and", kb.alu("cmple", center, row), kb.alu("cmplt", row, right))
        up = kb.where(kb.alu("cmpeq", center, left), one, ramp(kb.alu("sub", row, left), kb.alu("sub", center, left)))
        down = ramp(kb.alu("sub", right, row), kb.alu("sub", right, center))
        value = kb.where(falling, down, kb.where(rising, up, zero))
        kb.store(kb.cast(value, element_type), out, [j, i])
    return out


def _window(name: str, size: int, periodic: bool) -> np.ndarray:
    """The window's values in f64, by the ONNX definitions (N = size, or size - 1 symmetric)."""
    n = np.arange(size, dtype=np.float64)
    period = size if periodic else size - 1
    angle = 2 * np.pi * n / period if period else np.zeros(size)
    if name == HannWindowOp.name:
        return np.sin(angle / 2) ** 2
    if name == HammingWindowOp.name:
        alpha = 25.0 / 46.0
        return alpha - (1 - alpha) * np.cos(angle)
    return 0.42 - 0.5 * np.cos(angle) + 0.08 * np.cos(2 * angle)


class WindowLowering(OnnxLowering):
    """HannWindow, HammingWindow, BlackmanWindow: a constant table of the result's length. A
    `size` read at run time must be that length, else NAME_predict returns
    STATUS_BAD_PARAMETER."""

    op_names = frozenset({HannWindowOp.name, HammingWindowOp.name, BlackmanWindowOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        (length,) = tensor_shape(op.results[0])
        size_value = inputs(op)[0]
        assert size_value is not None
        if runtime_input(op, 0) is not None:
            gb = guard_builder(kb, op, [0])
            (size,) = load_all(gb, size_value)
            check(gb, gb.alu("cmpeq", size, gb.const(length, I64)))
        else:
            size = int(constant_input(op, 0).reshape(-1)[0])
            if size != length:
                raise ValueError(f"size {size} differs from the result's length {length}")
        table = _window(op.name, length, bool(get_attr(op, "periodic")))
        return [kb.constant(result_name(op), table, tensor_element_type(op.results[0]))]


PATTERNS = (DFTLowering(), STFTLowering(), MelWeightMatrixLowering(), WindowLowering())
