"""Small Zig functions the printer emits into a generated file, each only when an op uses it.

They hold the semantics that are more than one Zig operator: NaN-propagating max/min, round half
to even, shifts without undefined behaviour, ONNX casts, erf, and f16 fallbacks for std.math
functions that only exist for f32/f64. Every helper is generic over the element type, so one
definition covers all widths.

Each is declared as data (`ZigHelper`): its source, the helpers it calls and whether it is an
`inline fn`; the printer reads those facts (`uses`, `call_weight`), never the Zig text.
"""

from collections.abc import Mapping

from zant.ir.target_ops import ZigHelper

HELPERS: dict[str, ZigHelper] = {
    helper.name: helper
    for helper in (
        ZigHelper(
            "zant_fmax",
            """\
/// max with NaN propagation (ONNX / NumPy): NaN if either operand is NaN.
inline fn zant_fmax(comptime T: type, a: T, b: T) T {
    return if (a != a or b != b) a + b else @max(a, b);
}""",
        ),
        ZigHelper(
            "zant_fmin",
            """\
/// min with NaN propagation (ONNX / NumPy): NaN if either operand is NaN.
inline fn zant_fmin(comptime T: type, a: T, b: T) T {
    return if (a != a or b != b) a + b else @min(a, b);
}""",
        ),
        ZigHelper(
            "zant_sign",
            """\
/// -1, 0 or 1 by the sign of x (NaN and signed zeros are returned unchanged).
inline fn zant_sign(comptime T: type, x: T) T {
    if (comptime (@typeInfo(T) == .int and @typeInfo(T).int.signedness == .unsigned)) {
        return if (x > 0) 1 else 0;
    } else {
        return if (x > 0) 1 else if (x < 0) -1 else x;
    }
}""",
        ),
        ZigHelper(
            "zant_round",
            """\
/// Round half to even (ONNX Round, NumPy rint). Below 2^m (m mantissa bits) |x| + 2^m lands
/// where the spacing is 1, so the add rounds |x| to an integer, nearest-even, and subtracting 2^m
/// is exact; from 2^m up every float is an integer already. No libcall: @round and @trunc are
/// calls to compiler-rt on cores without VRINT (Cortex-M4F: ~90 instructions per QuantizeLinear
/// element before, mobilenet_int8's input 2.57 M of its 23.8 M).
inline fn zant_round(comptime T: type, x: T) T {
    const big: T = comptime @floatFromInt(@as(u64, 1) << @intCast(std.math.floatMantissaBits(T)));
    const a = @abs(x);
    const r = if (a < big) (a + big) - big else a;
    return std.math.copysign(r, x);
}""",
        ),
        ZigHelper(
            "zant_shl",
            """\
/// x << y on the bit pattern; 0 when y is negative or at least the width (no UB, no trap).
inline fn zant_shl(comptime T: type, x: T, y: T) T {
    const bits = @typeInfo(T).int.bits;
    const U = @Int(.unsigned, bits);
    if (y < 0 or y >= bits) return 0;
    return @bitCast(@as(U, @bitCast(x)) << @intCast(y));
}""",
        ),
        ZigHelper(
            "zant_shr",
            """\
/// x >> y (arithmetic for signed types); a shift by the width or more fills with the sign bit,
/// and so does a negative one (NumPy: a huge unsigned shift count).
inline fn zant_shr(comptime T: type, x: T, y: T) T {
    const bits = @typeInfo(T).int.bits;
    if (comptime @typeInfo(T).int.signedness == .signed) {
        const shift: T = if (y < 0 or y >= bits) bits - 1 else y;
        return x >> @intCast(shift);
    } else {
        return if (y >= bits) 0 else x >> @intCast(y);
    }
}""",
        ),
        ZigHelper(
            "zant_tanh",
            """\
/// std.math.tanh, through f32 for f16.
inline fn zant_tanh(comptime T: type, x: T) T {
    if (comptime T == f16) {
        return @floatCast(std.math.tanh(@as(f32, x)));
    } else {
        return std.math.tanh(x);
    }
}""",
        ),
        ZigHelper(
            "zant_math",
            """\
/// A one-argument std.math function (asin, atanh …), through f32 for f16.
inline fn zant_math(comptime T: type, comptime f: anytype, x: T) T {
    if (comptime T == f16) {
        return @floatCast(f(@as(f32, x)));
    } else {
        return f(x);
    }
}""",
        ),
        ZigHelper(
            "zant_pow",
            """\
/// std.math.pow (C pow semantics), through f32 for f16.
inline fn zant_pow(comptime T: type, x: T, y: T) T {
    if (comptime T == f16) {
        return @floatCast(std.math.pow(f32, x, y));
    } else {
        return std.math.pow(T, x, y);
    }
}""",
        ),
        ZigHelper(
            "zant_erf",
            """\
/// erf(x) = 2/sqrt(pi) * exp(-x^2) * sum_n 2^n x^(2n+1) / (1*3*...*(2n+1)).
/// Every term is positive, so the sum has no cancellation; exp and the series use the same
/// rounded x^2, whose error then cancels to first order. Computed in f64 (within 16 ulp: the
/// term recurrence accumulates rounding), so f32 and f16 results are correctly rounded in practice. |x| >= 6 gives +-1 (erf(6) = 1 - 2e-17).
fn zant_erf(comptime T: type, x: T) T {
    const xd: f64 = x;
    if (xd != xd) return x;
    const ax = @abs(xd);
    var r: f64 = 1.0;
    if (ax < 6.0) {
        const x2 = ax * ax;
        var term: f64 = ax;
        var sum: f64 = ax;
        var n: f64 = 0.0;
        while (term > sum * 0x1p-56) {
            n += 1.0;
            term *= 2.0 * x2 / (2.0 * n + 1.0);
            sum += term;
        }
        r = 1.1283791670955126 * @exp(-x2) * sum;
    }
    return @floatCast(std.math.copysign(r, xd));
}""",
            inline=False,
        ),
        ZigHelper(
            "zant_load_packed",
            """\
/// Element i of a packed buffer (int4, uint4, float4e2m1: two to a byte; int2, uint2: four),
/// the first element of each byte in its lowest bits, as ONNX lays them out.
inline fn zant_load_packed(comptime T: type, bytes: [*]const u8, i: usize) T {
    const bits = @bitSizeOf(T);
    const per_byte = 8 / bits;
    const shift: u3 = @intCast((i % per_byte) * bits);
    return @bitCast(@as(@Int(.unsigned, bits), @truncate(bytes[i / per_byte] >> shift)));
}""",
        ),
        ZigHelper(
            "zant_store_packed",
            """\
/// Write element i of a packed buffer (zant_load_packed's layout), keeping the others of its byte.
inline fn zant_store_packed(comptime T: type, bytes: [*]u8, i: usize, value: T) void {
    const bits = @bitSizeOf(T);
    const per_byte = 8 / bits;
    const shift: u3 = @intCast((i % per_byte) * bits);
    const mask: u8 = @as(u8, (1 << bits) - 1) << shift;
    const code: u8 = @as(@Int(.unsigned, bits), @bitCast(value));
    bytes[i / per_byte] = (bytes[i / per_byte] & ~mask) | (code << shift);
}""",
        ),
        ZigHelper(
            "zant_to_e8m0",
            """\
/// f32 -> float8e8m0 (an exponent, 2^(e-127); no sign, no zero), ONNX's round_mode "up": the
/// exponent of |x|, plus one if it has a fraction; NaN and +-Inf are 0xFF (NaN). Beyond 2^127:
/// 2^127 when `saturate`, else NaN.
inline fn zant_to_e8m0(comptime saturate: bool, x: f32) u8 {
    const bits: u32 = @bitCast(x);
    const exponent: u32 = (bits >> 23) & 0xff;
    if (exponent == 0xff) return 0xff;
    const up: u32 = if (bits & 0x7fffff != 0) 1 else 0;
    if (saturate and exponent == 0xfe) return 0xfe;
    return @intCast(exponent + up);
}""",
        ),
        ZigHelper(
            "zant_from_e8m0",
            """\
/// float8e8m0 -> f32, exactly: 2^(e-127) (e = 0: the subnormal 2^-127), 0xFF NaN.
inline fn zant_from_e8m0(b: u8) f32 {
    if (b == 0xff) return std.math.nan(f32);
    if (b == 0) return @bitCast(@as(u32, 0x00400000));
    return @bitCast(@as(u32, b) << 23);
}""",
        ),
        ZigHelper(
            "zant_float_kind",
            """\
/// The special values of a small float kept as bits (bfloat16, float8; zant.ir.types.STORAGE_FLOATS):
/// ieee: +-Inf and NaNs in the all-ones exponent; fn: no Inf, NaN is S.1111.111; fnuz: no Inf, no
/// -0, the one NaN is 0x80 (the -0 pattern); finite: neither.
const ZantFloatKind = enum { ieee, fn_, fnuz, finite };""",
            inline=False,
        ),
        ZigHelper(
            "zant_to_small_float",
            """\
/// f32 -> the bits of a small float with e exponent bits, m mantissa bits and `bias`: rounded
/// to nearest, ties to even, on the bits (no float arithmetic). Beyond the largest finite value
/// (and +-Inf): +-max when `saturate` (ONNX Cast's default for float8), else Inf (ieee) or NaN.
/// NaN stays NaN (quiet, its sign kept where the type has one); float4e2m1 has none.
inline fn zant_to_small_float(comptime Bits: type, comptime kind: ZantFloatKind, comptime e: u5, comptime m: u5, comptime bias: u32, comptime saturate: bool, x: f32) Bits {
    const sign_bit: u32 = @as(u32, 1) << (e + m);
    const all_ones: u32 = (@as(u32, 1) << e) - 1; // the largest exponent field
    const max_finite: u32 = switch (kind) {
        .ieee => ((all_ones - 1) << m) | ((@as(u32, 1) << m) - 1),
        .fn_ => sign_bit - 2,
        .fnuz, .finite => sign_bit - 1,
    };
    const bits: u32 = @bitCast(x);
    const sign: u32 = if (bits >> 31 != 0) sign_bit else 0;
    const a = bits & 0x7fffffff;
    if (a > 0x7f800000) { // NaN
        return @intCast(switch (kind) {
            .ieee => sign | (all_ones << m) | (@as(u32, 1) << (m - 1)),
            .fn_ => sign | (sign_bit - 1),
            .fnuz => sign_bit,
            .finite => sign ^ sign_bit, // no NaN: -0 for NaN, +0 for -NaN, as ml_dtypes and onnx's reference
        });
    }
    const shift: u5 = 23 - m;
    const min_normal: u32 = 128 - bias; // the f32 exponent field of the type's smallest normal
    const exponent = a >> 23;
    var r: u32 = undefined;
    if (a == 0x7f800000) {
        r = max_finite + 1; // overflows below
    } else if (exponent >= min_normal) { // a normal of the type, or an overflow
        const v = a - ((127 - bias) << 23); // rebiased: the exponent field is the type's
        r = (v + ((@as(u32, 1) << (shift - 1)) - 1) + ((v >> shift) & 1)) >> shift;
    } else { // a subnormal of the type, or zero (a carry into the exponent is the smallest normal)
        const mantissa = if (exponent == 0) a else (a & 0x7fffff) | 0x800000;
        const s = @as(u32, shift) + min_normal - @max(exponent, 1);
        if (s >= 26) {
            r = 0;
        } else {
            const k: u5 = @intCast(s);
            r = (mantissa + ((@as(u32, 1) << (k - 1)) - 1) + ((mantissa >> k) & 1)) >> k;
        }
    }
    if (r > max_finite) {
        if (saturate or kind == .finite) {
            r = max_finite;
        } else {
            return @intCast(switch (kind) {
                .ieee => sign | (all_ones << m),
                .fn_ => sign | (sign_bit - 1),
                .fnuz, .finite => sign_bit,
            });
        }
    }
    if (kind == .fnuz and r == 0) return 0; // no -0: its pattern is the NaN
    return @intCast(sign | r);
}""",
            calls=("zant_float_kind",),
        ),
        ZigHelper(
            "zant_from_small_float",
            """\
/// The bits of a small float (as zant_to_small_float describes it) -> f32, exactly.
inline fn zant_from_small_float(comptime kind: ZantFloatKind, comptime e: u5, comptime m: u5, comptime bias: u32, b: anytype) f32 {
    const u: u32 = b;
    const sign_bit: u32 = @as(u32, 1) << (e + m);
    const all_ones: u32 = (@as(u32, 1) << e) - 1;
    const sign: u32 = if (u & sign_bit != 0) 0x80000000 else 0;
    const magnitude = u & (sign_bit - 1);
    const exponent = magnitude >> m;
    const mantissa = magnitude & ((@as(u32, 1) << m) - 1);
    if (comptime bias == 127 and e == 8) return @bitCast(u << (23 - m)); // bfloat16: the top half
    switch (kind) {
        .ieee => if (exponent == all_ones) return @bitCast(sign | 0x7f800000 | (mantissa << (23 - m))),
        .fn_ => if (magnitude == sign_bit - 1) return @bitCast(sign | 0x7fc00000),
        .fnuz => if (u == sign_bit) return @bitCast(@as(u32, 0x7fc00000)),
        .finite => {},
    }
    if (exponent == 0) { // subnormal: mantissa * 2^(1 - bias - m), a power of two f32 holds
        const scale: f32 = comptime @bitCast(@as(u32, 127 + 1 - bias - m) << 23);
        const value: f32 = @as(f32, @floatFromInt(mantissa)) * scale;
        return if (sign != 0) -value else value;
    }
    return @bitCast(sign | ((exponent + 127 - bias) << 23) | (mantissa << (23 - m)));
}""",
            calls=("zant_float_kind",),
        ),
        ZigHelper(
            "zant_cast",
            """\
/// ONNX Cast: float->int truncates toward zero and saturates (NaN -> 0); int->int keeps the low
/// bits (wraps), sign- or zero-extending by the source type; x->bool is x != 0.
inline fn zant_cast(comptime To: type, x: anytype) To {
    const From = @TypeOf(x);
    if (comptime From == To) {
        return x;
    } else if (comptime To == bool) {
        return x != 0;
    } else if (comptime From == bool) {
        if (comptime @typeInfo(To) == .float) {
            return @floatFromInt(@intFromBool(x));
        } else {
            return @intFromBool(x);
        }
    } else if (comptime @typeInfo(To) == .float) {
        if (comptime @typeInfo(From) == .float) {
            return @floatCast(x);
        } else {
            return @floatFromInt(x);
        }
    } else if (comptime @typeInfo(From) == .float) {
        // Saturate, then @intFromFloat truncates toward zero: the same as saturating trunc(x)
        // (lo and hi are integers), without @trunc's compiler-rt call on cores without VRINT.
        const t: f64 = @as(f64, x);
        if (t != t) return 0;
        const lo: f64 = @floatFromInt(std.math.minInt(To));
        const hi: f64 = @floatFromInt(std.math.maxInt(To));
        if (t <= lo) return std.math.minInt(To);
        if (t >= hi) return std.math.maxInt(To);
        return @intFromFloat(t);
    } else {
        const from = @typeInfo(From).int;
        const S = @Int(from.signedness, @typeInfo(To).int.bits);
        if (comptime @typeInfo(To).int.bits <= from.bits) {
            return @bitCast(@as(S, @truncate(x)));
        } else {
            return @bitCast(@as(S, x));
        }
    }
}""",
        ),
        ZigHelper(
            "zant_vfmax",
            """\
/// Lane-wise max of float vectors with NaN propagation, as zant_fmax.
inline fn zant_vfmax(comptime T: type, a: T, b: T) T {
    const E = @typeInfo(T).vector.child;
    return @select(E, a != a, a, @select(E, b != b, b, @max(a, b)));
}""",
        ),
        ZigHelper(
            "zant_vfmin",
            """\
/// Lane-wise min of float vectors with NaN propagation, as zant_fmin.
inline fn zant_vfmin(comptime T: type, a: T, b: T) T {
    const E = @typeInfo(T).vector.child;
    return @select(E, a != a, a, @select(E, b != b, b, @min(a, b)));
}""",
        ),
        ZigHelper(
            "zant_vgather",
            """\
/// n elements `stride` apart from p, as a vector (a strided vector load). Not `inline fn`:
/// Zig counts every inline call against the caller's comptime branch quota (1000), so a
/// kernel with that many strided accesses would not compile; LLVM inlines this plain generic
/// fn in ReleaseFast and ReleaseSafe all the same. The loop is a runtime one that LLVM unrolls
/// (`inline for` would count against the quota too). A small stride loads the span from the
/// first lane to the last (no element past it) as one vector and shuffles the lanes out: a
/// few vector loads and a permute instead of n scalar loads (a stride-2 pooling window).
fn zant_vgather(comptime n: usize, comptime T: type, comptime stride: usize, p: *const T) @Vector(n, T) {
    const span = (n - 1) * stride + 1;
    if (comptime stride <= 4 and n > 1) {
        const all: @Vector(span, T) = @as(*align(1) const [span]T, @ptrCast(p)).*;
        const picks: @Vector(n, i32) = comptime picks: {
            var lanes: [n]i32 = undefined;
            for (&lanes, 0..) |*lane, i| lane.* = @intCast(i * stride);
            break :picks lanes;
        };
        return @shuffle(T, all, undefined, picks);
    }
    const base: [*]const T = @ptrCast(p);
    var lanes: [n]T = undefined;
    for (&lanes, 0..) |*lane, i| lane.* = base[i * stride];
    return lanes;
}""",
            inline=False,
        ),
        ZigHelper(
            "zant_vscatter",
            """\
/// The lanes of v to n elements `stride` apart from p (a strided vector store); a plain fn
/// for the reason zant_vgather is.
fn zant_vscatter(comptime n: usize, comptime T: type, comptime stride: usize, p: *T, v: @Vector(n, T)) void {
    const base: [*]T = @ptrCast(p);
    const lanes: [n]T = v;
    for (lanes, 0..) |lane, i| base[i * stride] = lane;
}""",
            inline=False,
        ),
    )
}


# -- Zig's comptime branch quota ------------------------------------------------------------

DEFAULT_BRANCH_QUOTA = 1000
"""Zig counts every `inline fn` call (and the inline calls in its body) against the comptime
branch quota of the function it lands in, 1000 unless `@setEvalBranchQuota` raises it: a
function with more calls of the inline helpers would not compile ("evaluation exceeded 1000
backwards branches"), e.g. a fused chain of a thousand element-wise Max nodes."""

Helpers = Mapping[str, ZigHelper]
"""Helpers by name: `HELPERS`, and with them the target ones (`zig_cases.all_helpers`)."""


def uses(name: str, helpers: Helpers) -> set[str]:
    """Helper `name` and the helpers it uses (`ZigHelper.calls`), transitively: what a file
    calling it must hold."""
    used: set[str] = set()
    pending = [name]
    while pending:
        helper = pending.pop()
        if helper not in used:
            used.add(helper)
            pending.extend(helpers[helper].calls)
    return used


def call_weight(name: str, helpers: Helpers) -> int:
    """What one call of helper `name` counts against the comptime branch quota of the function it
    is printed in: 1 for an `inline fn`, plus the weight of each call in its body (its declared
    `calls`, each once per call); 0 for a plain `fn` or a type."""

    def weight(helper: str, callers: frozenset[str]) -> int:
        record = helpers[helper]
        if not record.inline or helper in callers:  # a helper does not call itself
            return 0
        return 1 + sum(weight(c, callers | {helper}) for c in record.calls)

    return weight(name, frozenset())


def branch_quota(inline_calls: int) -> int | None:
    """The `@setEvalBranchQuota` a function needs whose body makes `inline_calls` inline calls
    (the sum of its helper calls' `call_weight`): twice that, for what the standard library
    inlines below them, above Zig's default; None while the default is ample."""
    if 2 * inline_calls < DEFAULT_BRANCH_QUOTA // 2:
        return None
    return 2 * inline_calls + DEFAULT_BRANCH_QUOTA
