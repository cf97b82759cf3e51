"""`arm_mve`: a small target dialect beside uop for Armv8.1-M's M-profile Vector Extension
(Helium: Cortex-M55, M85).

Three ops, each one instruction on a core with MVE, made by the `mve-dot` pass from int8
dot-product loops and printed by the Zig printer (the contiguous loads stay `uop.vload`, and a
`uop.cast` of one from `vector<8xi8>` to `vector<8xi16>` is one widening `VLDRB.S16`):

* `%v = arm_mve.vldrb_gather %p [0, 125, 250, 375, 500, 625, 750, 875] : !uop.ptr<i8> ->
  vector<8xi16>` — the 8 int8 at `%p + offset[k]`, each sign-extended to a 16-bit lane
  (`VLDRB.S16 Qd, [Rn, Qm]` with the constant byte offsets in the 16-bit lanes of Qm, kept in a
  register across loops): a channel column of an NCHW activation (stride H·W), or two rows of
  a Conv window (0, 1, 2, 3, W, W+1, W+2, W+3). With 16 offsets it gives `vector<16xi8>` (two
  `VLDRB.U16` gathers and a `VMOVNT.I16`). Offsets are unsigned 16-bit; bytes need no
  alignment. LLVM makes MVE
  gathers only from its own vectorizer's intrinsics, which Zig cannot spell.
* `%v = arm_mve.vldrh_gather %p [0, 125, …] : !uop.ptr<i16> -> vector<8xi16>` — the 8 int16
  at `%p + offset[k]` elements (`VLDRH.U16 Qd, [Rn, Qm, UXTW #1]`): an int16 activation's
  channel column (16x8 quantization).
* `%r = arm_mve.vmlava %acc, %a, %b : vector<16xi8>` — `acc + Σ a[i]·b[i]` over the lanes of two
  `vector<16xi8>` or `vector<8xi16>`, products and sum in 32 bits, wrapping (`VMLAVA.S8` /
  `VMLAVA.S16`: multiply, add across the vector, accumulate into a general register). LLVM
  forms it from `acc + @reduce(.Add, a·b)` in a loop, but not once such loops are unrolled
  (it merges the reductions of the unrolled iterations first), so it is an op too.

`mve-requantize` adds four for the requantization epilogue, four outputs at once (each one
instruction but `vmov_lanes`, two):

* `%v = arm_mve.vmov_lanes %a, %b, %c, %d : vector<4xi32>` — four int32 scalars as the lanes
  of a vector (two `VMOV Qd[2], Qd[0], Rt, Rt2`): the sums four `VMLAVA` left in registers.
* `%h = arm_mve.vmulh %a, %b : vector<4xi32>` — the high word of each 64-bit product,
  `(a·b) >> 32`, rounded down (`VMULH.S32`).
* `%r = arm_mve.vrshr %a, 5 : vector<4xi32>` — `(a + 2^(n-1)) >> n`, rounded to nearest, ties
  up, in 33 bits (`VRSHR.S32 #n`, 1 ≤ n ≤ 32). With `vmulh` it is exactly the scalar epilogue's
  `(a·b + 2^(s-1)) >> s` for s = 32 + n (the low word of the product cannot carry the sum
  across a multiple of 2^n: `mve-requantize` gives the argument).
* `arm_mve.vstrb_scatter %v, %p [0, 125, 250, 375] : vector<4xi32>, !uop.ptr<i8>` — the low
  byte of lane k to `%p + offset[k]` (`VSTRB.32 Qd, [Rn, Qm]` with the byte offsets in Qm; contiguous offsets
  0, 1, 2, 3 are the plain narrowing store `VSTRB.32 Qd, [Rn]`): one output pixel of four
  channels of an NCHW tensor (stride H·W), or four pixels of a channel. Two lanes may name one
  byte only when they hold the same value (the order of their writes is not defined). Of a
  `vector<8xi16>`, 8 offsets (`VSTRB.16`; offsets 0 to 7: `VSTRB.16 Qd, [Rn]`): the bytes an
  8-lane `vldrb_gather` read (`mve-gather`).

The depthwise form of `onnx-to-uop{conv-mve=true}` (`conv_depthwise_mve`) sums four outputs
in one `vector<4xi32>` and takes each out for its requantization:

* `%s = arm_mve.vmov_lane %v, 2 : vector<4xi32>` — lane k of `%v` as an int32 (`VMOV.32 Rt,
  Qn[k]`); `mve-requantize` takes four of them, lanes 0 to 3 of one vector in order, as that
  vector again (no `vmov_lanes`).

Each op declares its Zig and what it computes (`zant.ir.target_ops`), which the generic printer
and interpreter read. On a core with MVE (`builtin.cpu` has the `mve` feature: Cortex-M55, M85)
`zant_vldrb_gather` is one `VLDRB.S16` gather and `zant_vmlava` one `VMLAVA.S8` / `VMLAVA.S16`,
as inline assembly. The gather's offset vector is a comptime constant, which LLVM keeps in a
register across the loop; VMLAVA's accumulator must be an even-numbered register, the `^Te`
constraint (LLVM's spelling of GCC's `Te`). Both are `volatile`, which keeps them in the order
`mve-dot` wrote them: otherwise LLVM's scheduler hoists the gathers of a fully unrolled
reduction ahead of their multiply-accumulates and spills vector and pointer registers (KWS int8
on the M55: 4% more instructions). The gather also declares that it reads memory (`.memory`),
so no store moves past it. Elsewhere (the host, for tests) they are the same functions in plain
Zig, so a module `mve-dot` rewrote still builds and computes the same values on any target.
"""
from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import I32, ArrayAttr, IntAttr, IntegerType, VectorType
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import MemoryEffectKind, Pure
from xdsl.utils.exceptions import VerifyException

from zant.dialects.uop import Accesses, PtrType
from zant.ir.target_ops import Reach, Read, ZigCall, ZigHelper, wrap_signed

GATHER_LANES = 8
"""Lanes of a `VLDRB.S16` gather: 8 bytes into 16-bit lanes."""

GATHER_TYPE = VectorType(IntegerType(16), [GATHER_LANES])
"""What `vldrb_gather` gives: `vector<8xi16>`."""

BYTE_TYPE = VectorType(IntegerType(8), [16])
"""16 int8 lanes: a 128-bit vector of bytes."""

DOT_TYPES = (BYTE_TYPE, GATHER_TYPE)
"""The operand types of `vmlava`: 16 int8 or 8 int16 lanes."""

MAX_OFFSET = 2**16 - 1
"""The largest byte offset a 16-bit offset lane holds."""

# -- Zig: the ops' helpers (inline assembly on an MVE core, plain Zig elsewhere) -------------

_HAS_MVE = (
    '@import("builtin").cpu.arch.isThumb() and '
    'std.Target.arm.featureSetHas(@import("builtin").cpu.features, .mve)'
)


def _vstrb_sources(width: int, suffix: str, scatter_doc: str, narrow_doc: str) -> dict[str, tuple[tuple[str, ...], str]]:
    """The two helpers `vstrb_scatter` of `width`-bit lanes (128 / width of them) prints as, named
    with `suffix`: the scatter to a vector of byte offsets (`VSTRB.<width>` with offsets as wide
    as the lanes) and the narrowing store to p[0 .. lanes] (offsets 0, 1, …: `VSTRB.<width>`
    with no offsets), each after its doc comment."""
    n = 128 // width
    lanes, offsets = f"@Vector({n}, i{width})", f"@Vector({n}, u{width})"
    scatter = f"""\
{scatter_doc}
inline fn zant_vstrb_scatter{suffix}(comptime offsets: {offsets}, p: *i8, v: {lanes}) void {{
    if (comptime {_HAS_MVE}) {{
        asm volatile ("vstrb.{width} %[v], [%[p], %[o]]"
            :
            : [v] "w" (v),
              [p] "r" (p),
              [o] "w" (offsets),
            : .{{ .memory = true }});
        return;
    }}
    const base: [*]i8 = @ptrCast(p);
    const at: [{n}]u{width} = offsets;
    const lanes: [{n}]i{width} = v;
    for (at, lanes) |offset, lane| base[offset] = @truncate(lane);
}}"""
    narrow = f"""\
{narrow_doc}
inline fn zant_vstrb_narrow{suffix}(p: *i8, v: {lanes}) void {{
    if (comptime {_HAS_MVE}) {{
        // The narrowing store's base is a low register (3 bits in its encoding): "l".
        asm volatile ("vstrb.{width} %[v], [%[p]]"
            :
            : [v] "w" (v),
              [p] "l" (p),
            : .{{ .memory = true }});
        return;
    }}
    const base: *align(1) [{n}]i8 = @ptrCast(p);
    base.* = @as([{n}]i8, @as(@Vector({n}, i8), @truncate(v)));
}}"""
    return {f"zant_vstrb_scatter{suffix}": ((), scatter), f"zant_vstrb_narrow{suffix}": ((), narrow)}

_ZIG: dict[str, tuple[tuple[str, ...], str]] = {
    # name: (helpers it calls, once per call, source), as zant.backend.zig_helpers.HELPERS
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
        ("zant_vldrb_gather_u16", "zant_vldrb_gather_u16"),
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
    "zant_vldrh_gather": (
        (),
        f"""\
/// The 8 int16 at p + offsets[i] elements (arm_mve.vldrh_gather: VLDRH.U16 with a vector of
/// 16-bit element offsets, scaled by 2: UXTW #1).
inline fn zant_vldrh_gather(comptime offsets: @Vector(8, u16), p: *const i16) @Vector(8, i16) {{
    if (comptime {_HAS_MVE}) {{
        return asm volatile ("vldrh.u16 %[r], [%[p], %[o], uxtw #1]"
            : [r] "=&w" (-> @Vector(8, i16)),
            : [p] "r" (p),
              [o] "w" (offsets),
            : .{{ .memory = true }});
    }}
    const base: [*]const i16 = @ptrCast(p);
    var lanes: [8]i16 = undefined;
    const at: [8]u16 = offsets;
    for (&lanes, at) |*lane, offset| lane.* = base[offset];
    return lanes;
}}""",
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

_ZIG.update({
    "zant_vmov_lanes": (
        (),
        """\
/// Four int32 as the lanes of a vector (arm_mve.vmov_lanes: two VMOV Qd[2], Qd[0], Rt, Rt2).
inline fn zant_vmov_lanes(a: i32, b: i32, c: i32, d: i32) @Vector(4, i32) {
    return .{ a, b, c, d };
}""",
    ),
    "zant_vmulh": (
        (),
        f"""\
/// The high words of the 64-bit products, (a * b) >> 32 rounded down (arm_mve.vmulh: VMULH.S32).
inline fn zant_vmulh(a: @Vector(4, i32), b: @Vector(4, i32)) @Vector(4, i32) {{
    if (comptime {_HAS_MVE}) {{
        return asm ("vmulh.s32 %[r], %[a], %[b]"
            : [r] "=w" (-> @Vector(4, i32)),
            : [a] "w" (a),
              [b] "w" (b),
        );
    }}
    const wide = @as(@Vector(4, i64), a) * @as(@Vector(4, i64), b);
    return @intCast(wide >> @splat(32));
}}""",
    ),
    "zant_vrshr": (
        (),
        f"""\
/// (a + 2^(n-1)) >> n in 33 bits, 1 <= n <= 32 (arm_mve.vrshr: VRSHR.S32 #n).
inline fn zant_vrshr(comptime n: u6, a: @Vector(4, i32)) @Vector(4, i32) {{
    if (comptime {_HAS_MVE}) {{
        return asm ("vrshr.s32 %[r], %[a], #" ++ std.fmt.comptimePrint("{{d}}", .{{n}})
            : [r] "=w" (-> @Vector(4, i32)),
            : [a] "w" (a),
        );
    }}
    const wide = @as(@Vector(4, i64), a) + @as(@Vector(4, i64), @splat(@as(i64, 1) << (n - 1)));
    return @intCast(wide >> @splat(n));
}}""",
    ),
    **_vstrb_sources(
        32, "",
        "/// The low byte of lane k to p + offsets[k] (arm_mve.vstrb_scatter: VSTRB.32 with a vector\n/// of byte offsets).",
        "/// The low bytes of the 4 lanes to p[0..4] (arm_mve.vstrb_scatter at offsets 0, 1, 2, 3:\n/// VSTRB.32).",
    ),
})

_ZIG.update(_vstrb_sources(
    16, "16",
    "/// The low byte of lane k to p + offsets[k] (arm_mve.vstrb_scatter of 8 16-bit lanes: VSTRB.16\n/// with a vector of byte offsets).",
    "/// The low bytes of the 8 16-bit lanes to p[0..8] (arm_mve.vstrb_scatter at offsets 0 to 7:\n/// VSTRB.16).",
))

_ZIG["zant_vmov_lane"] = (
    (),
    """\
/// Lane k of v (arm_mve.vmov_lane: VMOV.32 Rt, Qn[k]).
inline fn zant_vmov_lane(v: @Vector(4, i32), comptime k: u2) i32 {
    return v[k];
}""",
)

ZIG_HELPER_SOURCES: dict[str, ZigHelper] = {
    name: ZigHelper(name, source, calls) for name, (calls, source) in _ZIG.items()
}
"""The helpers of the `arm_mve` ops by name."""


def _offsets_attr(offsets: Sequence[int]) -> ArrayAttr[IntAttr]:
    return ArrayAttr([IntAttr(o) for o in offsets])


class OffsetsOp(IRDLOperation, ABC):
    """An op on the elements at `%ptr + offset[k]` (a vector of offsets, a property), printed
    `%ptr [0, 125, …]` and checked for `ELEMENT` pointers: what the gathers (`vldrb_gather`,
    `vldrh_gather`) and the scatter (`vstrb_scatter`) share. A subclass's operands come before
    `ptr`."""

    ptr = operand_def(PtrType)
    offsets = prop_def(ArrayAttr[IntAttr])

    ELEMENT: ClassVar[IntegerType]
    """What `ptr` points to."""
    ACCESS: ClassVar[str]
    """What the op does to the elements, for its messages: "reads" or "writes"."""

    @property
    def offset_list(self) -> list[int]:
        return [o.data for o in self.offsets.data]

    def reach(self) -> dict[str, Reach]:
        size = self.ELEMENT.width.data // 8
        return {"ptr": Reach.at([size * o for o in self.offset_list], size)}

    def _verify_ptr(self) -> None:
        assert isinstance(self.ptr.type, PtrType)
        if self.ptr.type.element_type != self.ELEMENT:
            short = self.name.removeprefix("arm_mve.")
            raise VerifyException(
                f"{short} {self.ACCESS} int{self.ELEMENT.width.data} elements, got a pointer to {self.ptr.type.element_type}"
            )

    def _print_offsets(self, printer: Printer) -> None:
        """` %ptr [offsets] {attributes} : `."""
        printer.print_string(" ")
        printer.print_operand(self.ptr)
        printer.print_string(" [" + ", ".join(str(o) for o in self.offset_list) + "]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")

    @staticmethod
    def _parse_offsets(parser: Parser) -> tuple[UnresolvedOperand, list[int], dict[str, Attribute]]:
        """`%ptr [offsets] {attributes} :`, the pointer unresolved."""
        ptr = parser.parse_unresolved_operand()
        offsets = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        return ptr, offsets, attributes


class OffsetGatherOp(OffsetsOp):
    """A gather of `len(offsets)` elements at `%ptr + offset[k]` (16-bit unsigned offsets, in
    elements), written `%v = NAME %p [0, 125, …] : PTR -> VECTOR`: what `vldrb_gather` and
    `vldrh_gather` share."""

    result = result_def(VectorType)

    traits = traits_def(Accesses(MemoryEffectKind.READ, "ptr"))

    ACCESS: ClassVar[str] = "reads"

    def _verify_offsets(self, lanes: int) -> None:
        offsets = self.offset_list
        short = self.name.removeprefix("arm_mve.")
        if len(offsets) != lanes:
            raise VerifyException(f"{short} to {self.result.type} takes {lanes} offsets, got {len(offsets)}")
        if not all(0 <= o <= MAX_OFFSET for o in offsets):
            raise VerifyException(f"{short} offsets are 16-bit unsigned, got {offsets}")

    def print(self, printer: Printer):
        self._print_offsets(printer)
        printer.print_attribute(self.ptr.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> OffsetGatherOp:
        ptr, offsets, attributes = cls._parse_offsets(parser)
        ptr_type = parser.parse_type()
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        op = cls.create(
            operands=[parser.resolve_operand(ptr, ptr_type)], properties={"offsets": _offsets_attr(offsets)},
            result_types=[result_type],
        )
        op.attributes.update(attributes)
        return op


@irdl_op_definition
class VldrbGatherOp(OffsetGatherOp):
    """`%v = arm_mve.vldrb_gather %p [0, 125, …] : !uop.ptr<i8> -> vector<8xi16>`: the 8 int8
    at `%p + offset[k]`, sign-extended to 16 bits (`VLDRB.S16` with a vector of offsets); with
    16 offsets, `-> vector<16xi8>`: the 16 int8 at `%p + offset[k]` (two `VLDRB.U16` gathers,
    the even and the odd lanes, and one `VMOVNT.I16` that puts the odd ones into the high byte
    of each 16-bit lane: 3 instructions)."""

    name = "arm_mve.vldrb_gather"

    ELEMENT: ClassVar[IntegerType] = IntegerType(8)

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = tuple(
        ZIG_HELPER_SOURCES[n] for n in ("zant_vldrb_gather", "zant_vldrb_gather16", "zant_vldrb_gather_u16")
    )

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        offsets = self.offset_list
        if len(offsets) == 16:  # even and odd lanes
            even, odd = (", ".join(str(o) for o in offsets[i::2]) for i in (0, 1))
            return ZigCall("zant_vldrb_gather16", (f".{{ {even} }}", f".{{ {odd} }}", args[0]))
        listed = ", ".join(str(o) for o in offsets)
        return ZigCall("zant_vldrb_gather", (f".{{ {listed} }}", args[0]))

    def reference(self, read: Read) -> tuple[np.ndarray]:
        lanes = read(self.offset_list)
        return (lanes.astype(np.int16) if len(lanes) == GATHER_LANES else lanes.astype(np.int8),)

    def __init__(self, ptr: SSAValue | Operation, offsets: Sequence[int]):
        super().__init__(
            operands=[ptr], properties={"offsets": _offsets_attr(offsets)},
            result_types=[BYTE_TYPE if len(offsets) == BYTE_TYPE.get_shape()[0] else GATHER_TYPE],
        )

    def verify_(self) -> None:
        self._verify_ptr()
        if self.result.type not in (GATHER_TYPE, BYTE_TYPE):
            raise VerifyException(f"vldrb_gather gives {GATHER_TYPE} or {BYTE_TYPE}, got {self.result.type}")
        self._verify_offsets(self.result.type.get_shape()[0])


@irdl_op_definition
class VldrhGatherOp(OffsetGatherOp):
    """`%v = arm_mve.vldrh_gather %p [0, 125, …] : !uop.ptr<i16> -> vector<8xi16>`: the 8 int16
    at `%p + offset[k]` elements (`VLDRH.U16` with a vector of 16-bit offsets scaled by 2): an
    int16 activation's channel column (16x8 quantization), as `vldrb_gather` reads an int8 one."""

    name = "arm_mve.vldrh_gather"

    ELEMENT: ClassVar[IntegerType] = IntegerType(16)

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = (ZIG_HELPER_SOURCES["zant_vldrh_gather"],)

    def __init__(self, ptr: SSAValue | Operation, offsets: Sequence[int]):
        super().__init__(operands=[ptr], properties={"offsets": _offsets_attr(offsets)}, result_types=[GATHER_TYPE])

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_vldrh_gather", (f".{{ {', '.join(str(o) for o in self.offset_list)} }}", args[0]))

    def reference(self, read: Read) -> tuple[np.ndarray]:
        return (read(self.offset_list).astype(np.int16),)

    def verify_(self) -> None:
        self._verify_ptr()
        if self.result.type != GATHER_TYPE:
            raise VerifyException(f"vldrh_gather gives {GATHER_TYPE}, got {self.result.type}")
        self._verify_offsets(GATHER_LANES)


@irdl_op_definition
class VmlavaOp(IRDLOperation):
    """`%r = arm_mve.vmlava %acc, %a, %b : vector<16xi8>`: acc + Σ a[i]·b[i] in 32 bits,
    wrapping (`VMLAVA.S8`, or `VMLAVA.S16` on `vector<8xi16>`)."""

    name = "arm_mve.vmlava"

    T: ClassVar = VarConstraint("T", base(VectorType))

    acc = operand_def(I32)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(I32)

    assembly_format = "$acc `,` $lhs `,` $rhs attr-dict `:` type($lhs)"

    traits = traits_def(Pure())

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = (ZIG_HELPER_SOURCES["zant_vmlava"],)

    def __init__(self, acc: SSAValue | Operation, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(operands=[acc, lhs, rhs], result_types=[IntegerType(32)])

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        vector = self.lhs.type
        assert isinstance(vector, VectorType) and isinstance(vector.element_type, IntegerType)
        lanes, bits = vector.get_shape()[0], vector.element_type.width.data
        return ZigCall("zant_vmlava", (str(lanes), f"i{bits}", *args))

    def reference(self, acc: int, a: np.ndarray, b: np.ndarray) -> tuple[int]:
        return (wrap_signed(acc + int(np.dot(a.astype(np.int64), b.astype(np.int64)))),)

    def verify_(self) -> None:
        if self.lhs.type not in DOT_TYPES:
            raise VerifyException(f"vmlava multiplies vector<16xi8> or vector<8xi16>, got {self.lhs.type}")


QUAD_TYPE = VectorType(IntegerType(32), [4])
"""Four int32 lanes: what the requantization ops compute on."""


def _quad(values: np.ndarray) -> np.ndarray:
    """int64 lanes wrapped to int32 (the results the ops' ranges keep in 32 bits anyway)."""
    return values.astype(np.int64).astype(np.uint64).astype(np.uint32).astype(np.int32)


def high_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`vmulh`'s lanes: (a·b) >> 32, rounded down."""
    return _quad((a.astype(np.int64) * b.astype(np.int64)) >> 32)


def rounding_shift(a: np.ndarray, n: int) -> np.ndarray:
    """`vrshr`'s lanes: (a + 2^(n-1)) >> n without overflow."""
    return _quad((a.astype(np.int64) + (1 << (n - 1))) >> n)


@irdl_op_definition
class VmovLanesOp(IRDLOperation):
    """`%v = arm_mve.vmov_lanes %a, %b, %c, %d : vector<4xi32>`: four int32 as the lanes of a
    vector (two `VMOV Qd[2], Qd[0], Rt, Rt2`)."""

    name = "arm_mve.vmov_lanes"

    a = operand_def(I32)
    b = operand_def(I32)
    c = operand_def(I32)
    d = operand_def(I32)
    result = result_def(QUAD_TYPE)

    assembly_format = "$a `,` $b `,` $c `,` $d attr-dict `:` type($result)"

    traits = traits_def(Pure())

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = (ZIG_HELPER_SOURCES["zant_vmov_lanes"],)

    def __init__(self, lanes: Sequence[SSAValue | Operation]):
        super().__init__(operands=list(lanes), result_types=[QUAD_TYPE])

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_vmov_lanes", tuple(args))

    def reference(self, *lanes: int) -> tuple[np.ndarray]:
        return (np.array(lanes, dtype=np.int32),)


LANES_OF_QUAD = 4
"""The lanes of `QUAD_TYPE`."""

QUAD_LANES = range(LANES_OF_QUAD)
"""The lanes `vmov_lane` names."""


@irdl_op_definition
class VmovLaneOp(IRDLOperation):
    """`%s = arm_mve.vmov_lane %v, 2 : vector<4xi32>`: lane k of a vector of four int32 as a
    scalar (`VMOV.32 Rt, Qn[k]`)."""

    name = "arm_mve.vmov_lane"

    input = operand_def(QUAD_TYPE)
    lane = prop_def(IntAttr)
    result = result_def(I32)

    traits = traits_def(Pure())

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = (ZIG_HELPER_SOURCES["zant_vmov_lane"],)

    def __init__(self, input: SSAValue | Operation, lane: int):
        super().__init__(operands=[input], properties={"lane": IntAttr(lane)}, result_types=[IntegerType(32)])

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(f", {self.lane.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)

    @classmethod
    def parse(cls, parser: Parser) -> VmovLaneOp:
        input = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        lane = parser.parse_integer()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        input_type = parser.parse_type()
        op = cls.create(
            operands=[parser.resolve_operand(input, input_type)],
            properties={"lane": IntAttr(lane)},
            result_types=[IntegerType(32)],
        )
        op.attributes.update(attributes)
        return op

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_vmov_lane", (*args, str(self.lane.data)))

    def reference(self, v: np.ndarray) -> tuple[int]:
        return (int(v[self.lane.data]),)

    def verify_(self) -> None:
        if self.lane.data not in QUAD_LANES:
            raise VerifyException(f"vmov_lane takes lane 0 to 3, got {self.lane.data}")


@irdl_op_definition
class VmulhOp(IRDLOperation):
    """`%h = arm_mve.vmulh %a, %b : vector<4xi32>`: `(a·b) >> 32` per lane, the high word of
    the 64-bit product rounded down (`VMULH.S32`)."""

    name = "arm_mve.vmulh"

    lhs = operand_def(QUAD_TYPE)
    rhs = operand_def(QUAD_TYPE)
    result = result_def(QUAD_TYPE)

    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    traits = traits_def(Pure())

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = (ZIG_HELPER_SOURCES["zant_vmulh"],)

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(operands=[lhs, rhs], result_types=[QUAD_TYPE])

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_vmulh", tuple(args))

    def reference(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray]:
        return (high_product(a, b),)


VRSHR_SHIFTS = range(1, 33)
"""The immediates of `VRSHR.S32`."""


@irdl_op_definition
class VrshrOp(IRDLOperation):
    """`%r = arm_mve.vrshr %a, 5 : vector<4xi32>`: `(a + 2^(n-1)) >> n` per lane, computed in
    33 bits (`VRSHR.S32 #n`, 1 ≤ n ≤ 32)."""

    name = "arm_mve.vrshr"

    input = operand_def(QUAD_TYPE)
    shift = prop_def(IntAttr)
    result = result_def(QUAD_TYPE)

    traits = traits_def(Pure())

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = (ZIG_HELPER_SOURCES["zant_vrshr"],)

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(f", {self.shift.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> VrshrOp:
        input = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        shift = parser.parse_integer()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        op = cls.create(
            operands=[parser.resolve_operand(input, result_type)],
            properties={"shift": IntAttr(shift)},
            result_types=[result_type],
        )
        op.attributes.update(attributes)
        return op

    def __init__(self, input: SSAValue | Operation, shift: int):
        super().__init__(operands=[input], properties={"shift": IntAttr(shift)}, result_types=[QUAD_TYPE])

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_vrshr", (str(self.shift.data), *args))

    def reference(self, a: np.ndarray) -> tuple[np.ndarray]:
        return (rounding_shift(a, self.shift.data),)

    def verify_(self) -> None:
        if self.shift.data not in VRSHR_SHIFTS:
            raise VerifyException(f"vrshr shifts by 1 to 32, got {self.shift.data}")


MAX_SCATTER_OFFSET = 2**31 - 1
"""The largest byte offset `vstrb_scatter` takes (its offset lanes are 32-bit)."""


SCATTER_TYPES = (QUAD_TYPE, GATHER_TYPE)
"""What `vstrb_scatter` stores the low bytes of: 4 int32 lanes or 8 int16 ones."""


@irdl_op_definition
class VstrbScatterOp(OffsetsOp):
    """`arm_mve.vstrb_scatter %v, %p [0, 125, 250, 375] : vector<4xi32>, !uop.ptr<i8>`: the low
    byte of lane k to `%p + offset[k]` (`VSTRB.32 Qd, [Rn, Qm]`; offsets 0, 1, 2, 3: `VSTRB.32
    Qd, [Rn]`); of 8 int16 lanes, `vector<8xi16>` with 8 offsets (`VSTRB.16`, 16-bit offsets: a
    `vldrb_gather`'s bytes stored as they were read, `mve-gather`)."""

    name = "arm_mve.vstrb_scatter"

    value = operand_def(VectorType)

    traits = traits_def(Accesses(MemoryEffectKind.WRITE, "ptr"))

    WRITES: ClassVar[tuple[str, ...]] = ("ptr",)
    ELEMENT: ClassVar[IntegerType] = IntegerType(8)
    ACCESS: ClassVar[str] = "writes"

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = tuple(
        ZIG_HELPER_SOURCES[n]
        for n in ("zant_vstrb_scatter", "zant_vstrb_narrow", "zant_vstrb_scatter16", "zant_vstrb_narrow16")
    )

    def __init__(self, value: SSAValue | Operation, ptr: SSAValue | Operation, offsets: Sequence[int]):
        super().__init__(operands=[value, ptr], properties={"offsets": _offsets_attr(offsets)})

    @property
    def byte_offsets(self) -> list[int]:
        """The offsets, in bytes (the scatter's elements)."""
        return self.offset_list

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        value, ptr = args
        suffix = "16" if self.value.type == GATHER_TYPE else ""
        if self.byte_offsets == list(range(len(self.byte_offsets))):
            return ZigCall(f"zant_vstrb_narrow{suffix}", (ptr, value))
        return ZigCall(f"zant_vstrb_scatter{suffix}", (f".{{ {', '.join(str(o) for o in self.byte_offsets)} }}", ptr, value))

    def reference(self, value: np.ndarray, write) -> tuple[()]:
        for offset, lane in zip(self.byte_offsets, value.astype(np.int64).astype(np.uint8).astype(np.int8)):
            write([offset], np.array([lane]))  # lane by lane: two lanes may name one byte
        return ()

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(",")
        self._print_offsets(printer)
        printer.print_attribute(self.value.type)
        printer.print_string(", ")
        printer.print_attribute(self.ptr.type)

    @classmethod
    def parse(cls, parser: Parser) -> VstrbScatterOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        ptr, offsets, attributes = cls._parse_offsets(parser)
        value_type = parser.parse_type()
        parser.parse_punctuation(",")
        ptr_type = parser.parse_type()
        op = cls.create(
            operands=[parser.resolve_operand(value, value_type), parser.resolve_operand(ptr, ptr_type)],
            properties={"offsets": _offsets_attr(offsets)},
        )
        op.attributes.update(attributes)
        return op

    def verify_(self) -> None:
        self._verify_ptr()
        if self.value.type not in SCATTER_TYPES:
            raise VerifyException(f"vstrb_scatter stores {QUAD_TYPE} or {GATHER_TYPE}, got {self.value.type}")
        offsets = self.byte_offsets
        lanes = self.value.type.get_shape()[0]
        if len(offsets) != lanes:
            raise VerifyException(f"vstrb_scatter of {self.value.type} takes {lanes} offsets, got {len(offsets)}")
        if lanes == LANES_OF_QUAD and not all(0 <= o <= MAX_SCATTER_OFFSET for o in offsets):
            raise VerifyException(f"vstrb_scatter offsets are non-negative 32-bit, got {offsets}")
        if lanes != LANES_OF_QUAD and not all(0 <= o <= MAX_OFFSET for o in offsets):
            raise VerifyException(f"vstrb_scatter offsets of 16-bit lanes are 16-bit unsigned, got {offsets}")


ArmMve = Dialect(
    "arm_mve", [VldrbGatherOp, VldrhGatherOp, VmlavaOp, VmovLanesOp, VmovLaneOp, VmulhOp, VrshrOp, VstrbScatterOp], []
)
