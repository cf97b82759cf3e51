"""The Zig of the `arm_dsp` ops: small helpers the printer emits when an op uses them.

On an Arm core with the DSP extension (`builtin.cpu` has the `dsp` feature: Cortex-M4, M7,
M33, M55) `zant_sxtb16` and `zant_smlad` are one `SXTB16` / `SMLAD` instruction each, as inline
assembly: LLVM has no int8 pattern it turns into `SXTB16`, and its ARM parallel-DSP pass only
forms `SMLAD` from pairs of adjacent 16-bit loads. Elsewhere (the host, for tests) they are the
same functions in plain Zig, so a module `arm-dsp-dot` rewrote still builds and computes the
same values on any target. `zant_load_word` is an unaligned 32-bit load (one `LDR` on
Armv7-M/Armv8-M Mainline, see `zant.dialects.arm_dsp`).

The print cases of the `arm_dsp` ops are registered here (`zant.backend.zig_cases`), which the
generic printer consults the first time it meets one of them.
"""

from __future__ import annotations

from zant.backend.zig_cases import print_case, register_helpers
from zant.dialects import arm_dsp

_HAS_DSP = (
    '@import("builtin").cpu.arch.isThumb() and '
    'std.Target.arm.featureSetHas(@import("builtin").cpu.features, .dsp)'
)

ARM_DSP_HELPERS: dict[str, tuple[tuple[str, ...], str]] = {
    # name: (helpers it calls, source), as zant.backend.zig_helpers.HELPERS
    "zant_load_word": (
        (),
        """\
/// The 4 int8 at p as one little-endian i32 (arm_dsp.load_word; p need not be word-aligned).
inline fn zant_load_word(p: *const i8) i32 {
    // An align(1) i32 load, not std.mem.readInt's [4]u8: ReleaseSmall kept that a loop of 4
    // byte loads per word (int8 KWS on the Cortex-M4: 27.0 M instructions instead of 10.9 M).
    return std.mem.littleToNative(i32, @as(*align(1) const i32, @ptrCast(p)).*);
}""",
    ),
    "zant_sxtb16": (
        (),
        f"""\
/// Bytes 0 and 2 of x rotated right by `rot` bits, sign-extended into two 16-bit halves (SXTB16).
inline fn zant_sxtb16(x: i32, comptime rot: u5) i32 {{
    if (comptime {_HAS_DSP}) {{
        const ror = switch (rot) {{
            0 => "",
            8 => ", ror #8",
            16 => ", ror #16",
            24 => ", ror #24",
            else => @compileError("sxtb16 rotates by 0, 8, 16 or 24 bits"),
        }};
        return asm ("sxtb16 %[r], %[x]" ++ ror
            : [r] "=r" (-> i32),
            : [x] "r" (x),
        );
    }}
    const u: u32 = std.math.rotr(u32, @bitCast(x), rot);
    const lo: u32 = @as(u16, @bitCast(@as(i16, @as(i8, @bitCast(@as(u8, @truncate(u)))))));
    const hi: u32 = @as(u16, @bitCast(@as(i16, @as(i8, @bitCast(@as(u8, @truncate(u >> 16)))))));
    return @bitCast(lo | (hi << 16));
}}""",
    ),
    "zant_smlad": (
        (),
        f"""\
/// c + a.lo * b.lo + a.hi * b.hi of the signed 16-bit halves, wrapping (SMLAD).
inline fn zant_smlad(a: i32, b: i32, c: i32) i32 {{
    if (comptime {_HAS_DSP}) {{
        return asm ("smlad %[r], %[a], %[b], %[c]"
            : [r] "=r" (-> i32),
            : [a] "r" (a),
              [b] "r" (b),
              [c] "r" (c),
        );
    }}
    const a_lo: i32 = @as(i16, @truncate(a));
    const b_lo: i32 = @as(i16, @truncate(b));
    const a_hi: i32 = @as(i16, @truncate(a >> 16));
    const b_hi: i32 = @as(i16, @truncate(b >> 16));
    return c +% a_lo *% b_lo +% a_hi *% b_hi;
}}""",
    ),
    "zant_smlad_bytes": (
        ("zant_sxtb16", "zant_smlad"),
        f"""\
/// c + even * sxtb16(w) + odd * sxtb16(w ror 8): the 4 int8 of w times the other operand's
/// halves (arm_dsp.smlad_bytes). One asm block of 4 instructions and one scratch register, so
/// LLVM's scheduler cannot widen many words ahead of their SMLAD (the Cortex-M4 spilled).
inline fn zant_smlad_bytes(even: i32, odd: i32, w: i32, c: i32) i32 {{
    if (comptime {_HAS_DSP}) {{
        var t: i32 = undefined;
        // r starts as c (tied: "0"), is written before w and odd are last read (early clobber).
        return asm ("sxtb16 %[t], %[w]\\n\\tsmlad %[r], %[even], %[t], %[r]\\n\\t" ++
                "sxtb16 %[t], %[w], ror #8\\n\\tsmlad %[r], %[odd], %[t], %[r]"
            : [r] "=&r" (-> i32),
              [t] "=&r" (t),
            : [c] "0" (c),
              [even] "r" (even),
              [odd] "r" (odd),
              [w] "r" (w),
        );
    }}
    return zant_smlad(odd, zant_sxtb16(w, 8), zant_smlad(even, zant_sxtb16(w, 0), c));
}}""",
    ),
    "zant_smlad_bytes_pair": (
        ("zant_smlad_bytes",),
        f"""\
/// smlad_bytes(e0, o0, w, c0) and smlad_bytes(e1, o1, w, c1), w widened once for both sums
/// (arm_dsp.smlad_bytes_pair): one asm block of 6 instructions and one scratch register.
inline fn zant_smlad_bytes_pair(e0: i32, o0: i32, e1: i32, o1: i32, w: i32, c0: i32, c1: i32) [2]i32 {{
    if (comptime {_HAS_DSP}) {{
        var r0: i32 = undefined;
        var r1: i32 = undefined;
        var t: i32 = undefined;
        // r0, r1 start as c0, c1 (tied: "0", "1") and are written before the inputs are last read.
        asm ("sxtb16 %[t], %[w]\\n\\tsmlad %[r0], %[e0], %[t], %[r0]\\n\\tsmlad %[r1], %[e1], %[t], %[r1]\\n\\t" ++
                "sxtb16 %[t], %[w], ror #8\\n\\tsmlad %[r0], %[o0], %[t], %[r0]\\n\\tsmlad %[r1], %[o1], %[t], %[r1]"
            : [r0] "=&r" (r0),
              [r1] "=&r" (r1),
              [t] "=&r" (t),
            : [c0] "0" (c0),
              [c1] "1" (c1),
              [e0] "r" (e0),
              [o0] "r" (o0),
              [e1] "r" (e1),
              [o1] "r" (o1),
              [w] "r" (w),
        );
        return .{{ r0, r1 }};
    }}
    return .{{ zant_smlad_bytes(e0, o0, w, c0), zant_smlad_bytes(e1, o1, w, c1) }};
}}""",
    ),
}
"""The helpers of the `arm_dsp` ops by name."""

register_helpers(ARM_DSP_HELPERS)


@print_case(arm_dsp.LoadWordOp)
def _load_word(printer, op: arm_dsp.LoadWordOp) -> None:
    printer.helpers_used.add("zant_load_word")
    printer.define(op.result, f"zant_load_word({printer.expr(op.ptr)})")


@print_case(arm_dsp.Sxtb16Op)
def _sxtb16(printer, op: arm_dsp.Sxtb16Op) -> None:
    printer.helpers_used.add("zant_sxtb16")
    printer.define(op.result, f"zant_sxtb16({printer.expr(op.input)}, {op.rotation})")


@print_case(arm_dsp.SmladOp)
def _smlad(printer, op: arm_dsp.SmladOp) -> None:
    printer.helpers_used.add("zant_smlad")
    a, b, c = (printer.expr(v) for v in op.operands)
    printer.define(op.result, f"zant_smlad({a}, {b}, {c})")


@print_case(arm_dsp.SmladBytesOp)
def _smlad_bytes(printer, op: arm_dsp.SmladBytesOp) -> None:
    printer.helpers_used.update(("zant_smlad_bytes", "zant_sxtb16", "zant_smlad"))  # its portable form
    even, odd, word, addend = (printer.expr(v) for v in op.operands)
    printer.define(op.result, f"zant_smlad_bytes({even}, {odd}, {word}, {addend})")


@print_case(arm_dsp.SmladBytesPairOp)
def _smlad_bytes_pair(printer, op: arm_dsp.SmladBytesPairOp) -> None:
    printer.helpers_used.update(("zant_smlad_bytes_pair", "zant_smlad_bytes", "zant_sxtb16", "zant_smlad"))
    pair = printer.namer.fresh("pair")
    arguments = ", ".join(printer.expr(v) for v in op.operands)
    printer.emit(f"const {pair} = zant_smlad_bytes_pair({arguments});")
    printer.define(op.result0, f"{pair}[0]")
    printer.define(op.result1, f"{pair}[1]")
