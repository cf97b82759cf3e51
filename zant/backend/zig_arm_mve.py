"""The Zig of the `arm_mve` ops: helpers the printer emits when an op uses them.

On a core with MVE (`builtin.cpu` has the `mve` feature: Cortex-M55, M85) `zant_vldrb_gather`
is one `VLDRB.S16` gather and `zant_vmlava` one `VMLAVA.S8` / `VMLAVA.S16`, as inline assembly
(why LLVM does not make them itself: `zant.dialects.arm_mve`). The gather's offset vector is a
comptime constant, which LLVM keeps in a register across the loop; VMLAVA's accumulator must
be an even-numbered register, the `^Te` constraint (LLVM's spelling of GCC's `Te`). Both are
`volatile`, which keeps them in the order `mve-dot` wrote them: otherwise LLVM's scheduler
hoists the gathers of a fully unrolled reduction ahead of their multiply-accumulates and
spills vector and pointer registers (KWS int8 on the M55: 4% more instructions). The gather
also declares that it reads memory (`.memory`), so no store moves past it. Elsewhere (the host, for tests) it is the same
function in plain Zig, so a module `mve-dot` rewrote still builds and computes the same values
on any target.

The print cases of the `arm_mve` ops are registered here (`zant.backend.zig_cases`), which the
generic printer consults the first time it meets one of them.
"""

from __future__ import annotations

from zant.backend.zig_cases import print_case, register_helpers
from zant.dialects import arm_mve, uop

_HAS_MVE = (
    '@import("builtin").cpu.arch.isThumb() and '
    'std.Target.arm.featureSetHas(@import("builtin").cpu.features, .mve)'
)

ARM_MVE_HELPERS: dict[str, tuple[tuple[str, ...], str]] = {
    # name: (helpers it calls, source), as zant.backend.zig_helpers.HELPERS
    "zant_vldrb_gather": (
        (),
        f"""\
/// The 8 int8 at p + offsets[i], sign-extended to 16 bits (arm_mve.vldrb_gather: VLDRB.S16
/// with a vector of byte offsets).
inline fn zant_vldrb_gather(comptime offsets: @Vector(8, u16), p: *const i8) @Vector(8, i16) {{
    if (comptime {_HAS_MVE}) {{
        return asm volatile ("vldrb.s16 %[r], [%[p], %[o]]"
            : [r] "=&w" (-> @Vector(8, i16)),
            : [p] "r" (p),
              [o] "w" (offsets),
            : .{{ .memory = true }});
    }}
    const base: [*]const i8 = @ptrCast(p);
    var lanes: [8]i16 = undefined;
    const at: [8]u16 = offsets;
    for (&lanes, at) |*lane, offset| lane.* = base[offset];
    return lanes;
}}""",
    ),
    "zant_vldrb_gather16": (
        ("zant_vldrb_gather_u16",),
        f"""\
/// The 16 int8 at p + offsets[i] (arm_mve.vldrb_gather to 16 lanes): the even lanes and the
/// odd ones by two VLDRB.U16 gathers (each byte into the low half of a 16-bit lane), which
/// LLVM joins with one VMOVNT.I16.
inline fn zant_vldrb_gather16(comptime even: @Vector(8, u16), comptime odd: @Vector(8, u16), p: *const i8) @Vector(16, i8) {{
    if (comptime {_HAS_MVE}) {{
        const lo: @Vector(8, u8) = @truncate(zant_vldrb_gather_u16(even, p));
        const hi: @Vector(8, u8) = @truncate(zant_vldrb_gather_u16(odd, p));
        return @bitCast(@shuffle(u8, lo, hi, [16]i32{{ 0, -1, 1, -2, 2, -3, 3, -4, 4, -5, 5, -6, 6, -7, 7, -8 }}));
    }}
    const base: [*]const i8 = @ptrCast(p);
    var lanes: [16]i8 = undefined;
    const at_even: [8]u16 = even;
    const at_odd: [8]u16 = odd;
    for (0..8) |i| {{
        lanes[2 * i] = base[at_even[i]];
        lanes[2 * i + 1] = base[at_odd[i]];
    }}
    return lanes;
}}""",
    ),
    "zant_vldrb_gather_u16": (
        (),
        """\
/// The 8 bytes at p + offsets[i], zero-extended to 16 bits (VLDRB.U16 with a vector of
/// offsets; only on MVE cores).
inline fn zant_vldrb_gather_u16(comptime offsets: @Vector(8, u16), p: *const i8) @Vector(8, u16) {
    return asm volatile ("vldrb.u16 %[r], [%[p], %[o]]"
        : [r] "=&w" (-> @Vector(8, u16)),
        : [p] "r" (p),
          [o] "w" (offsets),
        : .{ .memory = true });
}""",
    ),
    "zant_vmlava": (
        (),
        f"""\
/// acc + the sum of a[i] * b[i] over the n lanes, in 32 bits, wrapping (arm_mve.vmlava:
/// VMLAVA.S8 on 16 int8 lanes, VMLAVA.S16 on 8 int16 lanes).
inline fn zant_vmlava(comptime n: usize, comptime T: type, acc: i32, a: @Vector(n, T), b: @Vector(n, T)) i32 {{
    if (comptime {_HAS_MVE}) {{
        const suffix = switch (T) {{
            i8 => "s8",
            i16 => "s16",
            else => @compileError("vmlava multiplies i8 or i16 lanes"),
        }};
        return asm volatile ("vmlava." ++ suffix ++ " %[acc], %[a], %[b]"
            : [acc] "=^Te" (-> i32),
            : [a] "w" (a),
              [b] "w" (b),
              [c] "0" (acc),
        );
    }}
    return acc +% @reduce(.Add, @as(@Vector(n, i32), a) *% @as(@Vector(n, i32), b));
}}""",
    ),
}
"""The helpers of the `arm_mve` ops by name."""

register_helpers(ARM_MVE_HELPERS)


@print_case(arm_mve.VldrbGatherOp)
def _vldrb_gather(printer, op: arm_mve.VldrbGatherOp) -> None:
    offsets = op.byte_offsets
    if len(offsets) == 16:  # even and odd lanes
        printer.helpers_used.update(("zant_vldrb_gather16", "zant_vldrb_gather_u16"))
        even, odd = (", ".join(str(o) for o in offsets[i::2]) for i in (0, 1))
        printer.define(op.result, f"zant_vldrb_gather16(.{{ {even} }}, .{{ {odd} }}, {printer.expr(op.ptr)})")
        return
    listed = ", ".join(str(o) for o in offsets)
    printer.helpers_used.add("zant_vldrb_gather")
    printer.define(op.result, f"zant_vldrb_gather(.{{ {listed} }}, {printer.expr(op.ptr)})")


@print_case(arm_mve.VmlavaOp)
def _vmlava(printer, op: arm_mve.VmlavaOp) -> None:
    from zant.backend.zig_printer import zig_type

    printer.helpers_used.add("zant_vmlava")
    n, lane = uop.lanes(op.lhs.type), zig_type(uop.lane_type(op.lhs.type))
    acc, a, b = (printer.expr(v) for v in op.operands)
    printer.define(op.result, f"zant_vmlava({n}, {lane}, {acc}, {a}, {b})")
