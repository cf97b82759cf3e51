"""`arm_dsp`: a small target dialect beside uop for the Armv7E-M / Armv8-M DSP extension.

Three ops, each one instruction on a core with the extension (Cortex-M4, M7, M33, M55), made by
the `arm-dsp-dot` pass from int8 dot-product loops and printed by the Zig printer:

* `%w = arm_dsp.load_word %p : !uop.ptr<i8>` — the 4 int8 at `%p .. %p+3` as one i32, byte `%p`
  in bits 0–7 (little-endian, `LDR`). The address need not be word-aligned: an unaligned `LDR`
  is legal on Armv7-M and Armv8-M Mainline (Cortex-M3/M4/M7/M33/M55) for normal memory as long
  as `CCR.UNALIGN_TRP` is clear, its reset value; it is a fault on Armv6-M (Cortex-M0+), which
  has no DSP extension and never gets these ops.
* `%h = arm_dsp.sxtb16 %w : i32` — bytes 0 and 2 of `%w`, each sign-extended into a 16-bit half
  (`SXTB16`); `arm_dsp.sxtb16 %w ror 8 : i32` rotates `%w` right by 8 bits first: bytes 1 and 3.
* `%r = arm_dsp.smlad %a, %b, %c : i32` — `c + a.lo·b.lo + a.hi·b.hi` of the signed 16-bit halves,
  wrapping modulo 2^32 (`SMLAD`; the hardware sets the Q flag on overflow, which nothing reads).

* `%r = arm_dsp.smla %a, %b, %c {halves = "tb"} : i32` — `c + a.t·b.b`: one signed 16-bit
  half of each operand (`b` bottom, `t` top; `SMLABB`, `SMLABT`, `SMLATB`, `SMLATT`), wrapping.
  The depthwise rows' products of one half of a word by one tap of a packed weight word: as
  an instruction of its own LLVM cannot hoist the weight's half out of a loop into a register
  of its own (a 5-wide row of KWS then spilled 6 such halves).

So a dot product of 4 int8 pairs is two word loads, four `SXTB16` and two `SMLAD`:
`smlad(sxtb16(x), sxtb16(w), smlad(sxtb16(x) ror 8, sxtb16(w) ror 8, acc))`.

One more op is a fixed sequence of those instructions, made by `fuse-smlad-bytes`:

* `%r = arm_dsp.smlad_bytes %even, %odd, %w, %c : i32` — `c` plus the dot product of the 4 int8
  of the word `%w` with the halves `%even` (elements 0, 2) and `%odd` (1, 3) another operand's
  `sxtb16` pair gave: `smlad(%odd, sxtb16(%w ror 8), smlad(%even, sxtb16(%w), %c))`, two
  `SXTB16` and two `SMLAD` through one scratch register, kept together (one inline-assembly
  block) so LLVM cannot hoist the `SXTB16` of many words ahead of their `SMLAD` and run out of
  registers.
* `%r0, %r1 = arm_dsp.smlad_bytes_pair %e0, %o0, %e1, %o1, %w, %c0, %c1 : i32` — the same for
  one word `%w` read by two sums (a register tile's two pixels): `%r0 = smlad_bytes(%e0, %o0,
  %w, %c0)`, `%r1 = smlad_bytes(%e1, %o1, %w, %c1)`, each `SXTB16` of `%w` made once and read
  by both sums' `SMLAD` (two `SXTB16` and four `SMLAD` through one scratch register, one
  inline-assembly block: LLVM hoisted the widened words of a 2 x 2 tile and spilled).
* `%r00, %r10, %r01, %r11 = arm_dsp.smlad_tile %pa, %pb, %c00, %c10, %c01, %c11 {steps, …}` —
  a 2 x 2 register tile's whole reduction over words at constant strides from two pointers
  (made by `arm-dsp-tile-loops` from a loop of two `smlad_bytes_pair`): one loop in assembly,
  its words loaded together and each widened once, which LLVM's schedule of the same steps
  was not.

Two more are a requantization's instructions, made by `arm-dsp-requant` from the epilogue of a
fully connected block (`smlad_rows`' sums):

* `%r = arm_dsp.smmla %a, %b, %c : i32` — `c + floor(a·b / 2^32)`, the high word of the signed
  64-bit product plus `c`, wrapping (`SMMLA`).
* `%r = arm_dsp.ssat %x {bits = 8, shift = 11} : i32` — `x >> shift` saturated to a signed
  `bits`-bit value (`SSAT` with `ASR`).
* `arm_dsp.smlad_layer %pa, %pb, %shared, %py {…}` — a fully connected layer's blocks of 5 rows,
  each `smlad_rows` then those two instructions per sum and a byte store: the whole layer one
  asm block.
* `arm_dsp.smlad_tile_row %pa, %pb, %py, %c0, %c1, %m0, %m1 {…}` — a row of `smlad_tile`s over
  pixel pairs (a pointwise Conv's two output channels), each sum from its channel's bias, then
  those two instructions per sum and a byte store: the row one asm block (`arm-dsp-tile-rows`).
* `arm_dsp.smlad_block_row %pa, %pb, %py, %c0 … %c3, %m0 … %m3 {…}` — the same for a row of
  `smlad_block`s (4 output channels x a pixel pair, the first convs' `conv_first`):
  `arm-dsp-block-rows`.

Each op declares its Zig and what it computes (`zant.ir.target_ops`): the helper functions it
prints as (`ZIG_HELPERS`, below: on an Arm core with the DSP extension, `builtin.cpu` having the
`dsp` feature, `zant_sxtb16` and `zant_smlad` are one `SXTB16` / `SMLAD` instruction each, as
inline assembly, since LLVM has no int8 pattern it turns into `SXTB16` and its ARM parallel-DSP
pass only forms `SMLAD` from pairs of adjacent 16-bit loads; elsewhere, the host for tests, the
same functions in plain Zig, so a module `arm-dsp-dot` rewrote builds and computes the same values
on any target), its call (`zig_call`) and its `reference` semantics in Python integers, which
the generic printer and interpreter read: adding an op here touches no other module. An op
with a pointer operand also declares its `reach()`: the bytes each pointer's asm (or unaligned
load) touches, as its `reference` does, which `verify-arena-plan` proves inside the pointer's
buffer (`zant.ir.target_ops.Reach`).
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import I32, IntAttr, IntegerType, StringAttr, i8, i16, i32
from xdsl.ir import Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    OpTraits,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryEffectKind, Pure
from xdsl.utils.exceptions import VerifyException

from zant.dialects.uop import Accesses, PtrType
from zant.ir.target_ops import Reach, Read, ZigCall, ZigHelper, wrap_signed

ROTATIONS = (0, 8, 16, 24)
"""The rotations `SXTB16` can apply to its operand first (`ror #8`, `#16`, `#24`)."""

# -- Zig: the ops' helpers (inline assembly on a DSP core, plain Zig elsewhere) ---------------

_HAS_DSP = (
    '@import("builtin").cpu.arch.isThumb() and '
    'std.Target.arm.featureSetHas(@import("builtin").cpu.features, .dsp)'
)

_ZIG: dict[str, tuple[tuple[str, ...], str]] = {
    # name: (helpers it calls, once per call, source), as zant.backend.zig_helpers.HELPERS
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
    "zant_load_word16": (
        (),
        """\
/// The 2 int16 at p as one little-endian i32, element 0 in the low half (arm_dsp.load_word of
/// an i16 pointer; p need not be word-aligned).
inline fn zant_load_word16(p: *const i16) i32 {
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
    "zant_smla": (
        (),
        f"""\
/// c + one signed 16-bit half of a times one of b (xy: "bb", "bt", "tb" or "tt", b the bottom
/// half, t the top), wrapping (SMLABB / SMLABT / SMLATB / SMLATT).
inline fn zant_smla(comptime xy: *const [2]u8, a: i32, b: i32, c: i32) i32 {{
    if (comptime {_HAS_DSP}) {{
        return asm ("smla" ++ xy ++ " %[r], %[a], %[b], %[c]"
            : [r] "=r" (-> i32),
            : [a] "r" (a),
              [b] "r" (b),
              [c] "r" (c),
        );
    }}
    const x: i32 = @as(i16, @truncate(if (xy[0] == 't') a >> 16 else a));
    const y: i32 = @as(i16, @truncate(if (xy[1] == 't') b >> 16 else b));
    return c +% x *% y;
}}""",
    ),
    "zant_smlad_bytes": (
        ("zant_smlad", "zant_sxtb16", "zant_smlad", "zant_sxtb16"),
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
        ("zant_smlad_bytes", "zant_smlad_bytes"),
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

ZIG_HELPER_SOURCES: dict[str, ZigHelper] = {
    name: ZigHelper(name, source, calls) for name, (calls, source) in _ZIG.items()
}
"""The helpers of the `arm_dsp` ops by name (`zant_load_word` is an unaligned 32-bit load: one
`LDR` on Armv7-M/Armv8-M Mainline)."""


def _helpers(*names: str) -> tuple[ZigHelper, ...]:
    return tuple(ZIG_HELPER_SOURCES[n] for n in names)


# -- semantics: what the instructions compute, in Python integers ------------------------------


def _sext8(byte: int) -> int:
    return byte - 256 if byte >= 128 else byte


def _half(word: int, shift: int) -> int:
    """The signed 16-bit half of `word` at bit `shift` (0 or 16)."""
    half = (word >> shift) & 0xFFFF
    return half - 0x10000 if half >= 0x8000 else half


def halves_words(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """int32 words of two 16-bit halves, elementwise: `low` in bits 0-15, `high` in bits 16-31
    (each modulo 2^16), the words an `SMLAD` multiplies half by half (weights packed at compile
    time)."""
    low, high = np.asarray(low, np.int64), np.asarray(high, np.int64)
    return wrap_signed((low & 0xFFFF) | ((high & 0xFFFF) << 16)).astype(np.int32)


def sxtb16(word: int, rotation: int = 0) -> int:
    """`SXTB16`: bytes 0 and 2 of `word` rotated right by `rotation`, sign-extended to halves."""
    word &= 0xFFFFFFFF
    word = ((word >> rotation) | (word << (32 - rotation))) & 0xFFFFFFFF if rotation else word
    low, high = _sext8(word & 0xFF), _sext8((word >> 16) & 0xFF)
    return wrap_signed((low & 0xFFFF) | ((high & 0xFFFF) << 16))


def smlad(a: int, b: int, c: int) -> int:
    """`SMLAD`: c + a.lo·b.lo + a.hi·b.hi of the signed 16-bit halves, wrapping."""
    return wrap_signed(c + _half(a, 0) * _half(b, 0) + _half(a, 16) * _half(b, 16))


def smlad_bytes(even: int, odd: int, word: int, c: int) -> int:
    """c + the 4 int8 of `word` times the halves of `even` (bytes 0, 2) and `odd` (1, 3)."""
    word &= 0xFFFFFFFF
    total = c
    for byte, halves in enumerate((even, odd, even, odd)):  # bytes 0, 2 pair with even; 1, 3 with odd
        total += _sext8((word >> (8 * byte)) & 0xFF) * _half(halves, 16 * (byte // 2))
    return wrap_signed(total)


@irdl_op_definition
class LoadWordOp(IRDLOperation):
    """`%w = arm_dsp.load_word %p : !uop.ptr<i8>`: the 4 int8 at `%p` as a little-endian i32;
    of a `!uop.ptr<i16>`, the 2 int16 at `%p` (element 0 in the low half: `SMLAD`'s pairs as
    they are, 16x8 quantization's activations)."""

    name = "arm_dsp.load_word"

    ptr = operand_def(PtrType)
    result = result_def(I32)

    assembly_format = "$ptr attr-dict `:` type($ptr)"

    traits = traits_def(Accesses(MemoryEffectKind.READ, "ptr"))

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers("zant_load_word", "zant_load_word16")

    def __init__(self, ptr: SSAValue | Operation):
        super().__init__(operands=[ptr], result_types=[IntegerType(32)])

    @property
    def halves(self) -> bool:
        """Whether the word holds 2 int16 (an i16 pointer) rather than 4 int8."""
        assert isinstance(self.ptr.type, PtrType)
        return self.ptr.type.element_type == i16

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_load_word16" if self.halves else "zant_load_word", (args[0],))

    def reach(self) -> dict[str, Reach]:
        return {"ptr": Reach(0, 4)}  # one unaligned LDR: 4 int8 or 2 int16

    def reference(self, read: Read) -> tuple[int]:
        if self.halves:
            return (int.from_bytes(read(range(2)).astype(np.int16).tobytes(), "little", signed=True),)
        return (int.from_bytes(read(range(4)).astype(np.int8).tobytes(), "little", signed=True),)

    def verify_(self) -> None:
        assert isinstance(self.ptr.type, PtrType)
        if self.ptr.type.element_type not in (i8, i16):
            raise VerifyException(f"load_word reads int8 or int16 elements, got a pointer to {self.ptr.type.element_type}")


@irdl_op_definition
class Sxtb16Op(IRDLOperation):
    """`%h = arm_dsp.sxtb16 %w (ror 8)? : i32`: bytes 0 and 2 of `%w` (rotated right by 0, 8, 16
    or 24 bits first) sign-extended into the low and high 16-bit halves."""

    name = "arm_dsp.sxtb16"

    input = operand_def(I32)
    rotate = opt_prop_def(IntAttr)
    result = result_def(I32)

    traits = traits_def(Pure())

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers("zant_sxtb16")

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_sxtb16", (args[0], str(self.rotation)))

    def reference(self, word: int) -> tuple[int]:
        return (sxtb16(word, self.rotation),)

    def __init__(self, input: SSAValue | Operation, rotate: int = 0):
        properties = {"rotate": IntAttr(rotate)} if rotate else {}
        super().__init__(operands=[input], properties=properties, result_types=[IntegerType(32)])

    @property
    def rotation(self) -> int:
        return self.rotate.data if self.rotate is not None else 0

    def verify_(self) -> None:
        if self.rotation not in ROTATIONS:
            raise VerifyException(f"sxtb16 rotates by 0, 8, 16 or 24 bits, got {self.rotation}")

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_operand(self.input)
        if self.rotate is not None:
            printer.print_string(f" ror {self.rotate.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> Sxtb16Op:
        input = parser.parse_unresolved_operand()
        rotate = parser.parse_integer() if parser.parse_optional_keyword("ror") else None
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        properties = {"rotate": IntAttr(rotate)} if rotate is not None else {}
        op = cls.create(
            operands=[parser.resolve_operand(input, result_type)], properties=properties, result_types=[result_type]
        )
        op.attributes.update(attributes)
        return op


@irdl_op_definition
class SmladOp(IRDLOperation):
    """`%r = arm_dsp.smlad %a, %b, %c : i32`: c + a.lo·b.lo + a.hi·b.hi (signed 16-bit halves),
    wrapping."""

    name = "arm_dsp.smlad"

    lhs = operand_def(I32)
    rhs = operand_def(I32)
    addend = operand_def(I32)
    result = result_def(I32)

    assembly_format = "$lhs `,` $rhs `,` $addend attr-dict `:` type($result)"

    traits = traits_def(Pure())

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers("zant_smlad")

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation, addend: SSAValue | Operation):
        super().__init__(operands=[lhs, rhs, addend], result_types=[IntegerType(32)])

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_smlad", tuple(args))

    def reference(self, a: int, b: int, c: int) -> tuple[int]:
        return (smlad(a, b, c),)


HALVES = ("bb", "bt", "tb", "tt")
"""The halves `arm_dsp.smla` multiplies: of its first operand, then of its second (b the
bottom 16 bits, t the top)."""


def smla(a: int, b: int, c: int, halves: str) -> int:
    """`SMLA<x><y>`: c + one signed 16-bit half of a times one of b, wrapping."""
    return wrap_signed(c + _half(a, 16 if halves[0] == "t" else 0) * _half(b, 16 if halves[1] == "t" else 0))


@irdl_op_definition
class SmlaOp(IRDLOperation):
    """`%r = arm_dsp.smla %a, %b, %c {halves = "tb"} : i32`: c + a.t·b.b, one signed 16-bit
    half of each operand (`HALVES`), wrapping."""

    name = "arm_dsp.smla"

    lhs = operand_def(I32)
    rhs = operand_def(I32)
    addend = operand_def(I32)
    halves = prop_def(StringAttr)
    result = result_def(I32)

    assembly_format = "$lhs `,` $rhs `,` $addend attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    traits = traits_def(Pure())

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers("zant_smla")

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation, addend: SSAValue | Operation, halves: str):
        super().__init__(operands=[lhs, rhs, addend], properties={"halves": StringAttr(halves)}, result_types=[IntegerType(32)])

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_smla", (f'"{self.halves.data}"', *args))

    def reference(self, a: int, b: int, c: int) -> tuple[int]:
        return (smla(a, b, c, self.halves.data),)

    def verify_(self) -> None:
        if self.halves.data not in HALVES:
            raise VerifyException(f"smla multiplies halves bb, bt, tb or tt, got {self.halves.data!r}")


@irdl_op_definition
class SmladBytesOp(IRDLOperation):
    """`%r = arm_dsp.smlad_bytes %even, %odd, %w, %c : i32`: c + even·sxtb16(w) + odd·sxtb16(w
    ror 8) as two SMLAD of signed 16-bit halves, wrapping: the 4 int8 of `w` times the elements
    (0, 2) in `even` and (1, 3) in `odd`."""

    name = "arm_dsp.smlad_bytes"

    even = operand_def(I32)
    odd = operand_def(I32)
    word = operand_def(I32)
    addend = operand_def(I32)
    result = result_def(I32)

    assembly_format = "$even `,` $odd `,` $word `,` $addend attr-dict `:` type($result)"

    traits = traits_def(Pure())

    def __init__(
        self, even: SSAValue | Operation, odd: SSAValue | Operation, word: SSAValue | Operation, addend: SSAValue | Operation
    ):
        super().__init__(operands=[even, odd, word, addend], result_types=[IntegerType(32)])

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers("zant_smlad_bytes", "zant_sxtb16", "zant_smlad")

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_smlad_bytes", tuple(args))

    def reference(self, even: int, odd: int, word: int, c: int) -> tuple[int]:
        return (smlad_bytes(even, odd, word, c),)


@irdl_op_definition
class SmladBytesPairOp(IRDLOperation):
    """`%r0, %r1 = arm_dsp.smlad_bytes_pair %e0, %o0, %e1, %o1, %w, %c0, %c1 : i32`: two
    `smlad_bytes` of one word, `r0 = smlad_bytes(e0, o0, w, c0)` and `r1 = smlad_bytes(e1, o1,
    w, c1)`, the word widened once for both."""

    name = "arm_dsp.smlad_bytes_pair"

    even0 = operand_def(I32)
    odd0 = operand_def(I32)
    even1 = operand_def(I32)
    odd1 = operand_def(I32)
    word = operand_def(I32)
    addend0 = operand_def(I32)
    addend1 = operand_def(I32)
    result0 = result_def(I32)
    result1 = result_def(I32)

    assembly_format = (
        "$even0 `,` $odd0 `,` $even1 `,` $odd1 `,` $word `,` $addend0 `,` $addend1 attr-dict `:` type($result0)"
    )

    traits = traits_def(Pure())

    def __init__(
        self, even0: SSAValue, odd0: SSAValue, even1: SSAValue, odd1: SSAValue, word: SSAValue,
        addend0: SSAValue, addend1: SSAValue,
    ):
        super().__init__(
            operands=[even0, odd0, even1, odd1, word, addend0, addend1], result_types=[IntegerType(32)] * 2
        )

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers(
        "zant_smlad_bytes_pair", "zant_smlad_bytes", "zant_sxtb16", "zant_smlad"
    )
    ZIG_RESULTS: ClassVar[str] = "pair"

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_smlad_bytes_pair", tuple(args))

    def reference(self, e0: int, o0: int, e1: int, o1: int, word: int, c0: int, c1: int) -> tuple[int, int]:
        return (smlad_bytes(e0, o0, word, c0), smlad_bytes(e1, o1, word, c1))


ZIG_HELPER_SOURCES["zant_ssub16"] = ZigHelper(
    "zant_ssub16",
    f"""\
/// a - b in each signed 16-bit half, wrapping within the half (SSUB16).
inline fn zant_ssub16(a: u32, b: u32) u32 {{
    if (comptime {_HAS_DSP}) {{
        return asm ("ssub16 %[r], %[a], %[b]"
            : [r] "=r" (-> u32),
            : [a] "r" (a),
              [b] "r" (b),
        );
    }}
    const lo: u16 = @as(u16, @truncate(a)) -% @as(u16, @truncate(b));
    const hi: u16 = @as(u16, @truncate(a >> 16)) -% @as(u16, @truncate(b >> 16));
    return @as(u32, lo) | (@as(u32, hi) << 16);
}}""",
)
ZIG_HELPER_SOURCES["zant_load_s4x4"] = ZigHelper(
    "zant_load_s4x4",
    """\
/// The 4 int4 at element i (even) of packed bytes as two i32 of sign-extended 16-bit halves,
/// elements (0, 2) and (1, 3) (arm_dsp.load_s4x4). The halfword h = b0 | b1 << 8 (one LDRH)
/// spread as h | h << 8 puts b0 in byte 0 and b1 in byte 2; masking the low (or, shifted by 4,
/// the high) nibble of each gives two 4-bit codes u in 16-bit halves, and (u ^ 8) - 8 (EOR,
/// SSUB16) is their signed value: 8 instructions for 4 weights, no per-lane shift needed.
inline fn zant_load_s4x4(bytes: [*]const u8, i: usize) [2]i32 {
    const h: u32 = std.mem.littleToNative(u16, @as(*align(1) const u16, @ptrCast(bytes + (i >> 1))).*);
    const spread = h | (h << 8);
    const nibbles: u32 = 0x000F000F;
    const eight: u32 = 0x00080008;
    const even = zant_ssub16((spread & nibbles) ^ eight, eight);
    const odd = zant_ssub16(((spread >> 4) & nibbles) ^ eight, eight);
    return .{ @bitCast(even), @bitCast(odd) };
}""",
    ("zant_ssub16", "zant_ssub16"),
)


SMLAD_TILE_STRAIGHT = 8
"""An `arm_dsp.smlad_tile` of at most this many steps is straight-line code (no loop, no bound
register), longer ones a loop (`zant_smlad_tile`)."""

ROW_TRIPLE_STEPS = 2
"""The fewest steps a `zant_smlad_tile_row` takes in tiles of three pixels (where its pixels are
evenly spaced and come in threes): 27 cycles per step for 24 products against 19 for 16, and
one epilogue's bookkeeping per 6 outputs."""

ZIG_HELPER_SOURCES["zant_smlad_tile"] = ZigHelper(
    "zant_smlad_tile",
    f"""\
/// A 2 x 2 register tile's whole reduction (arm_dsp.smlad_tile): for each of `steps` steps s,
/// the words a0 = pa[s·a_step], a1 = pa[s·a_step + a_next], b0 = pb[s·b_step], b1 = pb[s·b_step
/// + b_next] (4 int8 each), c_ij += the dot product of a_i and b_j. On a DSP core, straight-line
/// asm for at most SMLAD_TILE_STRAIGHT steps (its 4 loads per step back to back, b1 in the
/// register a loop's bound takes), else one asm loop of 13 registers, `unroll` steps per pass
/// (4, 2 or 1, dividing `steps`): per step 4 LDR
/// (the first 3 pipelined; b1 loaded into b0's register once b0 is used: with 14 registers
/// LLVM could not allocate the rest of the function in Debug and ReleaseSafe), each word
/// widened once (8 SXTB16) and 8 SMLAD; the pointers advance by immediates. LLVM's own loop
/// spilled the words it loaded ahead of their SMLAD and read its bound from the stack, or,
/// unrolling it whole, outgrew a flash accelerator's instruction cache.
inline fn zant_smlad_tile(comptime steps: usize, comptime a_step: isize, comptime a_next: isize, comptime b_step: isize, comptime b_next: isize, pa: *const i8, pb: *const i8, c00: i32, c10: i32, c01: i32, c11: i32) [4]i32 {{
    if (comptime {_HAS_DSP}) {{
        const straight = comptime steps <= {SMLAD_TILE_STRAIGHT};
        const unroll: usize = comptime if (straight) steps else if (steps % 4 == 0) 4 else if (steps % 2 == 0) 2 else 1;
        const body = comptime text: {{
            var text: []const u8 = if (straight) "" else "1:\\n\\t";
            for (0..unroll) |i| {{
                const ia = @as(isize, @intCast(i)) * a_step;
                const ib = @as(isize, @intCast(i)) * b_step;
                // b1 into a register of its own, loaded with the others (straight-line: the
                // bound's register is free), else into b0's once b0 is read.
                const b1 = if (straight) "%[b1]" else "%[b]";
                const b1_load = std.fmt.comptimePrint("ldr " ++ b1 ++ ", [%[pb], #{{d}}]\\n\\t", .{{ib + b_next}});
                text = text ++ std.fmt.comptimePrint(
                    "ldr %[a0], [%[pa], #{{d}}]\\n\\tldr %[a1], [%[pa], #{{d}}]\\n\\tldr %[b], [%[pb], #{{d}}]\\n\\t",
                    .{{ ia, ia + a_next, ib }},
                ) ++ (if (straight) b1_load else "") ++
                    "sxtb16 %[e0], %[a0]\\n\\tsxtb16 %[a0], %[a0], ror #8\\n\\tsxtb16 %[e1], %[a1]\\n\\tsxtb16 %[a1], %[a1], ror #8\\n\\t" ++
                    "sxtb16 %[t], %[b]\\n\\tsmlad %[c00], %[e0], %[t], %[c00]\\n\\tsmlad %[c10], %[e1], %[t], %[c10]\\n\\t" ++
                    "sxtb16 %[b], %[b], ror #8\\n\\tsmlad %[c00], %[a0], %[b], %[c00]\\n\\tsmlad %[c10], %[a1], %[b], %[c10]\\n\\t" ++
                    (if (straight) "" else b1_load) ++
                    "sxtb16 %[t], " ++ b1 ++ "\\n\\tsmlad %[c01], %[e0], %[t], %[c01]\\n\\tsmlad %[c11], %[e1], %[t], %[c11]\\n\\t" ++
                    "sxtb16 " ++ b1 ++ ", " ++ b1 ++ ", ror #8\\n\\tsmlad %[c01], %[a0], " ++ b1 ++ ", %[c01]\\n\\tsmlad %[c11], %[a1], " ++ b1 ++ ", %[c11]\\n\\t";
            }}
            if (straight) break :text text;
            break :text text ++ std.fmt.comptimePrint(
                "add %[pa], %[pa], #{{d}}\\n\\tadd %[pb], %[pb], #{{d}}\\n\\tcmp %[pb], %[end]\\n\\tbne 1b",
                .{{ a_step * @as(isize, unroll), b_step * @as(isize, unroll) }},
            );
        }};
        var r00: i32 = undefined;
        var r10: i32 = undefined;
        var r01: i32 = undefined;
        var r11: i32 = undefined;
        var qa: *const i8 = undefined;
        var qb: *const i8 = undefined;
        var a0: i32 = undefined;
        var a1: i32 = undefined;
        var b: i32 = undefined;
        var b1: i32 = undefined;
        var e0: i32 = undefined;
        var e1: i32 = undefined;
        var t: i32 = undefined;
        if (straight) {{
            asm volatile (body
                : [c00] "=&r" (r00),
                  [c10] "=&r" (r10),
                  [c01] "=&r" (r01),
                  [c11] "=&r" (r11),
                  [pa] "=&r" (qa),
                  [pb] "=&r" (qb),
                  [a0] "=&r" (a0),
                  [a1] "=&r" (a1),
                  [b] "=&r" (b),
                  [b1] "=&r" (b1),
                  [e0] "=&r" (e0),
                  [e1] "=&r" (e1),
                  [t] "=&r" (t),
                : [i00] "0" (c00),
                  [i10] "1" (c10),
                  [i01] "2" (c01),
                  [i11] "3" (c11),
                  [ipa] "4" (pa),
                  [ipb] "5" (pb),
                : .{{ .memory = true, .cpsr = true }});
        }} else {{
            const end: *const i8 = @ptrFromInt(@intFromPtr(pb) +% @as(usize, @bitCast(b_step * @as(isize, steps))));
            asm volatile (body
                : [c00] "=&r" (r00),
                  [c10] "=&r" (r10),
                  [c01] "=&r" (r01),
                  [c11] "=&r" (r11),
                  [pa] "=&r" (qa),
                  [pb] "=&r" (qb),
                  [a0] "=&r" (a0),
                  [a1] "=&r" (a1),
                  [b] "=&r" (b),
                  [e0] "=&r" (e0),
                  [e1] "=&r" (e1),
                  [t] "=&r" (t),
                : [i00] "0" (c00),
                  [i10] "1" (c10),
                  [i01] "2" (c01),
                  [i11] "3" (c11),
                  [ipa] "4" (pa),
                  [ipb] "5" (pb),
                  [end] "r" (end),
                : .{{ .memory = true, .cpsr = true }});
        }}
        return .{{ r00, r10, r01, r11 }};
    }}
    const a: [*]const i8 = @ptrCast(pa);
    const b: [*]const i8 = @ptrCast(pb);
    var r = [4]i32{{ c00, c10, c01, c11 }};
    for (0..steps) |s| {{
        const i: isize = @intCast(s);
        const words = [4]i32{{
            zant_load_word(&a[@intCast(i * a_step)]), zant_load_word(&a[@intCast(i * a_step + a_next)]),
            zant_load_word(&b[@intCast(i * b_step)]), zant_load_word(&b[@intCast(i * b_step + b_next)]),
        }};
        for (0..2) |j| {{
            for (0..2) |k| {{
                r[2 * j + k] = zant_smlad_bytes(zant_sxtb16(words[k], 0), zant_sxtb16(words[k], 8), words[2 + j], r[2 * j + k]);
            }}
        }}
    }}
    return r;
}}""",
    ("zant_load_word", "zant_load_word", "zant_load_word", "zant_load_word", "zant_smlad_bytes", "zant_sxtb16", "zant_sxtb16"),
)


def _word(read: Read, offset: int) -> int:
    return int.from_bytes(read(range(offset, offset + 4)).astype(np.int8).tobytes(), "little", signed=True)


def smlad_tile_reach(
    steps: int, a_step: int, a_next: int, b_step: int, b_next: int, *pb_axes: tuple[int, int]
) -> dict[str, Reach]:
    """The bytes `arm_dsp.smlad_tile`'s words cover from pa and pb (`pb_axes`: pb's further
    offsets, a row's tiles)."""
    return {
        "pa": Reach.span(4, (steps, a_step), (2, a_next)),
        "pb": Reach.span(4, (steps, b_step), (2, b_next), *pb_axes),
    }


def smlad_tile(pa: Read, pb: Read, sums: list[int], steps: int, a_step: int, a_next: int, b_step: int, b_next: int) -> tuple[int, int, int, int]:
    """`arm_dsp.smlad_tile`'s sums r00, r10, r01, r11 from the addends `sums` (same order)."""
    sums = list(sums)
    for s in range(steps):
        a = [_word(pa, s * a_step), _word(pa, s * a_step + a_next)]
        b = [_word(pb, s * b_step), _word(pb, s * b_step + b_next)]
        for j in range(2):
            for i in range(2):
                sums[2 * j + i] = smlad_bytes(sxtb16(a[i], 0), sxtb16(a[i], 8), b[j], sums[2 * j + i])
    return tuple(sums)  # type: ignore[return-value]


@irdl_op_definition
class SmladTileOp(IRDLOperation):
    """`%r00, %r10, %r01, %r11 = arm_dsp.smlad_tile %pa, %pb, %c00, %c10, %c01, %c11 {steps = S,
    a_step = …, a_next = …, b_step = …, b_next = …} : !uop.ptr<i8>, !uop.ptr<i8>`: a 2 x 2
    register tile's whole int8 reduction, `r_ij = c_ij + Σ_s dot4(a_i(s), b_j(s))` wrapping,
    where a_0(s) is the word at `pa + s·a_step`, a_1(s) at `pa + s·a_step + a_next`, b_0(s) at
    `pb + s·b_step`, b_1(s) at `pb + s·b_step + b_next` (offsets in elements: bytes). One loop
    the target compiler does not schedule (`arm-dsp-tile-loops`)."""

    name = "arm_dsp.smlad_tile"

    pa = operand_def(PtrType)
    pb = operand_def(PtrType)
    addend00 = operand_def(I32)
    addend10 = operand_def(I32)
    addend01 = operand_def(I32)
    addend11 = operand_def(I32)
    steps = prop_def(IntAttr)
    a_step = prop_def(IntAttr)
    a_next = prop_def(IntAttr)
    b_step = prop_def(IntAttr)
    b_next = prop_def(IntAttr)
    result00 = result_def(I32)
    result10 = result_def(I32)
    result01 = result_def(I32)
    result11 = result_def(I32)

    assembly_format = (
        "$pa `,` $pb `,` $addend00 `,` $addend10 `,` $addend01 `,` $addend11 attr-dict `:` type($pa) `,` type($pb)"
    )

    traits = traits_def(Accesses(MemoryEffectKind.READ, "pa"), Accesses(MemoryEffectKind.READ, "pb"))
    irdl_options = (ParsePropInAttrDict(),)

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers(
        "zant_smlad_tile", "zant_load_word", "zant_smlad_bytes", "zant_sxtb16", "zant_smlad"
    )
    ZIG_RESULTS: ClassVar[str] = "tile"

    def __init__(
        self, pa: SSAValue, pb: SSAValue, addends: Sequence[SSAValue], steps: int, a_step: int, a_next: int,
        b_step: int, b_next: int,
    ):
        super().__init__(
            operands=[pa, pb, *addends], result_types=[IntegerType(32)] * 4,
            properties={
                "steps": IntAttr(steps), "a_step": IntAttr(a_step), "a_next": IntAttr(a_next),
                "b_step": IntAttr(b_step), "b_next": IntAttr(b_next),
            },
        )

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        constants = (self.steps, self.a_step, self.a_next, self.b_step, self.b_next)
        return ZigCall("zant_smlad_tile", (*(str(c.data) for c in constants), *args))

    def reach(self) -> dict[str, Reach]:
        return smlad_tile_reach(*(n.data for n in (self.steps, self.a_step, self.a_next, self.b_step, self.b_next)))

    def reference(self, pa: Read, pb: Read, c00: int, c10: int, c01: int, c11: int) -> tuple[int, int, int, int]:
        steps = (self.steps, self.a_step, self.a_next, self.b_step, self.b_next)
        return smlad_tile(pa, pb, [c00, c10, c01, c11], *(n.data for n in steps))

    def verify_(self) -> None:
        for ptr in (self.pa, self.pb):
            assert isinstance(ptr.type, PtrType)
            if ptr.type.element_type != IntegerType(8):
                raise VerifyException(f"smlad_tile reads int8 words, got a pointer to {ptr.type.element_type}")
        if self.steps.data < 1:
            raise VerifyException(f"smlad_tile takes at least one step, got {self.steps.data}")


ZIG_HELPER_SOURCES["zant_smlad_window"] = ZigHelper(
    "zant_smlad_window",
    f"""\
/// A 2 x 2 register tile's whole reduction over a window (arm_dsp.smlad_window): for each of
/// `rows` rows r and `steps` steps s, the int8 words x_j = px[r·x_row + 4s + j·x_next] (two
/// pixels) and the weights' pre-widened int16 pairs at pw[8(r·steps + s) + 4i] (bytes 0, 2 of
/// channel i's word) and + 2 (bytes 1, 3), c_ij += SMLAD(even_i, SXTB16(x_j)) + SMLAD(odd_i,
/// SXTB16(x_j ror 8)). On a DSP core one asm loop of 13 registers, `unroll` steps per pass (all
/// of at most 8, else the first of 8, 6, 4, 3, 2, 1 dividing `steps`: ic_int8 on the L4R5 took
/// 19.19 M cycles at 4, 18.87 M at 6, 18.79 M at 8, 22.66 M with its 16-channel rows as one
/// pass of 12, which outgrew the 1 KB instruction cache):
/// per step the two pixels' words and both channels' pairs loaded back to back (6 loads in 7
/// cycles: the core pipelines a load after a load), each pixel's word widened once, its even
/// half into the one free register and its odd half in place, 8 SMLAD: 19 cycles per 16
/// products (22 in smlad_tile, whose weights are widened again for every pixel pair). A pass's
/// first loads advance the pointers (post-indexed) and the others reach back from there; the
/// row's bound and the weights' end live on the stack (the registers hold the loads), so the
/// rows' loop is in the asm too and a window is one copy of the loop, not one per row (LLVM
/// unrolled the row loop around smlad_tile: ResNet-8's 3x3 kernels outgrew the L4R5's 1 KB
/// instruction cache, a third of their cycles flash stalls).
inline fn zant_smlad_window(comptime rows: usize, comptime steps: usize, comptime x_row: isize, comptime x_next: isize, px: *const i8, pw: *const i16, c00: i32, c10: i32, c01: i32, c11: i32) [4]i32 {{
    if (comptime {_HAS_DSP}) {{
        const unroll: usize = comptime if (steps <= 8) steps else if (steps % 8 == 0) 8 else if (steps % 6 == 0) 6 else if (steps % 4 == 0) 4 else if (steps % 3 == 0) 3 else if (steps % 2 == 0) 2 else 1;
        const skip: isize = x_row - 4 * @as(isize, steps); // from a row's end to the next row's start
        const body = comptime text: {{
            // [sp]: the weights' end, [sp, #4]: the row's.
            var text: []const u8 = "strd %[wa], %[f], [sp, #-8]!\\n\\t2:\\n\\t1:\\n\\t";
            const back_x: isize = 4 * @as(isize, unroll);
            const back_w: isize = 16 * @as(isize, unroll);
            for (0..unroll) |i| {{
                const ox = 4 * @as(isize, @intCast(i)) - back_x;
                const ow = 16 * @as(isize, @intCast(i)) - back_w;
                text = text ++ (if (i == 0)
                    std.fmt.comptimePrint("ldr %[x0], [%[px]], #{{d}}\\n\\tldr %[x1], [%[px], #{{d}}]\\n\\tldr %[wa], [%[pw]], #{{d}}\\n\\t", .{{ back_x, x_next - back_x, back_w }})
                else
                    std.fmt.comptimePrint("ldr %[x0], [%[px], #{{d}}]\\n\\tldr %[x1], [%[px], #{{d}}]\\n\\tldr %[wa], [%[pw], #{{d}}]\\n\\t", .{{ ox, ox + x_next, ow }})) ++
                    std.fmt.comptimePrint("ldr %[wb], [%[pw], #{{d}}]\\n\\tldr %[wc], [%[pw], #{{d}}]\\n\\tldr %[wd], [%[pw], #{{d}}]\\n\\t", .{{ ow + 4, ow + 8, ow + 12 }}) ++
                    "sxtb16 %[f], %[x0]\\n\\tsmlad %[c00], %[wa], %[f], %[c00]\\n\\tsmlad %[c10], %[wc], %[f], %[c10]\\n\\t" ++
                    "sxtb16 %[f], %[x1]\\n\\tsmlad %[c01], %[wa], %[f], %[c01]\\n\\tsmlad %[c11], %[wc], %[f], %[c11]\\n\\t" ++
                    "sxtb16 %[x0], %[x0], ror #8\\n\\tsmlad %[c00], %[wb], %[x0], %[c00]\\n\\tsmlad %[c10], %[wd], %[x0], %[c10]\\n\\t" ++
                    "sxtb16 %[x1], %[x1], ror #8\\n\\tsmlad %[c01], %[wb], %[x1], %[c01]\\n\\tsmlad %[c11], %[wd], %[x1], %[c11]\\n\\t";
            }}
            text = text ++ "ldr %[f], [sp, #4]\\n\\tcmp %[pw], %[f]\\n\\tbne 1b\\n\\t";
            if (rows > 1) {{
                // The next row: X's pointer over the rest of the padded row, the row's bound one
                // row on; done when the weights' pointer reaches their end.
                const advance = if (skip >= 0) std.fmt.comptimePrint("add %[px], %[px], #{{d}}", .{{skip}}) else std.fmt.comptimePrint("sub %[px], %[px], #{{d}}", .{{-skip}});
                text = text ++ std.fmt.comptimePrint(
                    "add %[f], %[f], #{{d}}\\n\\tstr %[f], [sp, #4]\\n\\t{{s}}\\n\\tldr %[f], [sp]\\n\\tcmp %[pw], %[f]\\n\\tbne 2b\\n\\t",
                    .{{ 16 * steps, advance }},
                );
            }}
            break :text text ++ "add sp, sp, #8";
        }};
        const end: usize = @intFromPtr(pw) +% 16 * steps;
        const last: usize = @intFromPtr(pw) +% 16 * steps * rows;
        var r00: i32 = undefined;
        var r10: i32 = undefined;
        var r01: i32 = undefined;
        var r11: i32 = undefined;
        var qx: *const i8 = undefined;
        var qw: *const i16 = undefined;
        var x0: i32 = undefined;
        var x1: i32 = undefined;
        var wa: usize = undefined;
        var wb: i32 = undefined;
        var wc: i32 = undefined;
        var wd: i32 = undefined;
        var f: usize = undefined;
        asm volatile (body
            : [c00] "=&r" (r00),
              [c10] "=&r" (r10),
              [c01] "=&r" (r01),
              [c11] "=&r" (r11),
              [px] "=&r" (qx),
              [pw] "=&r" (qw),
              [x0] "=&r" (x0),
              [x1] "=&r" (x1),
              [wa] "=&r" (wa),
              [wb] "=&r" (wb),
              [wc] "=&r" (wc),
              [wd] "=&r" (wd),
              [f] "=&r" (f),
            : [i00] "0" (c00),
              [i10] "1" (c10),
              [i01] "2" (c01),
              [i11] "3" (c11),
              [ipx] "4" (px),
              [ipw] "5" (pw),
              [ilast] "8" (last),
              [iend] "12" (end),
            : .{{ .memory = true, .cpsr = true }});
        return .{{ r00, r10, r01, r11 }};
    }}
    const x: [*]const i8 = @ptrCast(px);
    const w: [*]const i16 = @ptrCast(pw);
    var r = [4]i32{{ c00, c10, c01, c11 }};
    for (0..rows) |row| {{
        for (0..steps) |s| {{
            const at: isize = @as(isize, @intCast(row)) * x_row + 4 * @as(isize, @intCast(s));
            const words = [2]i32{{ zant_load_word(&x[@intCast(at)]), zant_load_word(&x[@intCast(at + x_next)]) }};
            const k = 8 * (row * steps + s);
            for (0..2) |j| {{
                for (0..2) |i| {{
                    const even = zant_load_word16(&w[k + 4 * i]);
                    const odd = zant_load_word16(&w[k + 4 * i + 2]);
                    r[2 * j + i] = zant_smlad(odd, zant_sxtb16(words[j], 8), zant_smlad(even, zant_sxtb16(words[j], 0), r[2 * j + i]));
                }}
            }}
        }}
    }}
    return r;
}}""",
    ("zant_load_word", "zant_load_word", "zant_load_word16", "zant_load_word16", "zant_smlad", "zant_sxtb16", "zant_smlad", "zant_sxtb16"),
)


def _pair(read: Read, offset: int) -> int:
    """The int16 pair at `offset` (elements) as the word SMLAD reads, element 0 in the low half."""
    low, high = (int(v) for v in read(range(offset, offset + 2)))
    return wrap_signed((low & 0xFFFF) | ((high & 0xFFFF) << 16))


@irdl_op_definition
class SmladWindowOp(IRDLOperation):
    """`%r00, %r10, %r01, %r11 = arm_dsp.smlad_window %px, %pw, %c00, %c10, %c01, %c11 {rows = R,
    steps = S, x_row = …, x_next = …} : !uop.ptr<i8>, !uop.ptr<i16>`: a 2 x 2 register tile's
    whole reduction over a window of R rows of S words (`conv_window`: 2 output channels i by
    2 pixels j), `r_ij = c_ij + Σ_{r,s} SMLAD(odd_i, SXTB16(x_j ror 8), SMLAD(even_i,
    SXTB16(x_j), ·))` wrapping, where x_j is the int8 word at `px + r·x_row + 4s + j·x_next`
    (bytes) and even_i, odd_i the int16 pairs at `pw + 8(r·S + s) + 4i` and `+ 2` (elements):
    the weights pre-widened, each word's bytes 0, 2 then 1, 3, the two channels' interleaved
    per step. One loop the target compiler does not schedule, its rows' loop included."""

    name = "arm_dsp.smlad_window"

    px = operand_def(PtrType)
    pw = operand_def(PtrType)
    addend00 = operand_def(I32)
    addend10 = operand_def(I32)
    addend01 = operand_def(I32)
    addend11 = operand_def(I32)
    rows = prop_def(IntAttr)
    steps = prop_def(IntAttr)
    x_row = prop_def(IntAttr)
    x_next = prop_def(IntAttr)
    result00 = result_def(I32)
    result10 = result_def(I32)
    result01 = result_def(I32)
    result11 = result_def(I32)

    assembly_format = (
        "$px `,` $pw `,` $addend00 `,` $addend10 `,` $addend01 `,` $addend11 attr-dict `:` type($px) `,` type($pw)"
    )

    traits = traits_def(Accesses(MemoryEffectKind.READ, "px"), Accesses(MemoryEffectKind.READ, "pw"))
    irdl_options = (ParsePropInAttrDict(),)

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers(
        "zant_smlad_window", "zant_load_word", "zant_load_word16", "zant_sxtb16", "zant_smlad"
    )
    ZIG_RESULTS: ClassVar[str] = "window"

    def __init__(
        self, px: SSAValue, pw: SSAValue, addends: Sequence[SSAValue], rows: int, steps: int, x_row: int, x_next: int,
    ):
        super().__init__(
            operands=[px, pw, *addends], result_types=[IntegerType(32)] * 4,
            properties={"rows": IntAttr(rows), "steps": IntAttr(steps), "x_row": IntAttr(x_row), "x_next": IntAttr(x_next)},
        )

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        constants = (self.rows, self.steps, self.x_row, self.x_next)
        return ZigCall("zant_smlad_window", (*(str(c.data) for c in constants), *args))

    def reach(self) -> dict[str, Reach]:
        rows, steps = self.rows.data, self.steps.data
        return {
            "px": Reach.span(4, (rows, self.x_row.data), (steps, 4), (2, self.x_next.data)),
            "pw": Reach.span(4, (rows * steps, 16), (2, 8), (2, 4)),  # per step 2 channels' even and odd pairs
        }

    def reference(self, px: Read, pw: Read, c00: int, c10: int, c01: int, c11: int) -> tuple[int, int, int, int]:
        sums = [c00, c10, c01, c11]
        rows, steps, x_row, x_next = self.rows.data, self.steps.data, self.x_row.data, self.x_next.data
        for r in range(rows):
            for s in range(steps):
                words = [_word(px, r * x_row + 4 * s + j * x_next) for j in range(2)]
                k = 8 * (r * steps + s)
                for j in range(2):
                    for i in range(2):
                        even, odd = _pair(pw, k + 4 * i), _pair(pw, k + 4 * i + 2)
                        sums[2 * j + i] = smlad(odd, sxtb16(words[j], 8), smlad(even, sxtb16(words[j], 0), sums[2 * j + i]))
        return tuple(sums)  # type: ignore[return-value]

    def verify_(self) -> None:
        for ptr, element, what in ((self.px, IntegerType(8), "int8 words"), (self.pw, IntegerType(16), "int16 pairs")):
            assert isinstance(ptr.type, PtrType)
            if ptr.type.element_type != element:
                raise VerifyException(f"smlad_window reads {what} at its {'first' if ptr is self.px else 'second'} pointer, got a pointer to {ptr.type.element_type}")
        if self.rows.data < 1 or self.steps.data < 1:
            raise VerifyException(f"smlad_window takes at least one row and one step, got {self.rows.data} and {self.steps.data}")



def _sext4(code: int) -> int:
    return code - 16 if code >= 8 else code


@irdl_op_definition
class LoadS4x4Op(IRDLOperation):
    """`%even, %odd = arm_dsp.load_s4x4 %p : !uop.ptr<i4>`: the 4 int4 at `%p .. %p+3` (packed
    two to a byte, `%p` an even element, so they are two whole bytes) widened into the halves
    `sxtb16` gives a word of 4 int8: `%even` holds elements 0 and 2, `%odd` 1 and 3, each a
    signed 16-bit half. A halfword load, a shifted OR, and per half an AND, an EOR and an
    `SSUB16` ((u ^ 8) - 8 sign-extends a 4-bit code u); CMSIS-NN's s4 kernels widen by SXTB16
    and rotations instead (10 instructions): an int4 weight read as its int8 twin is, without
    an int8 copy."""

    name = "arm_dsp.load_s4x4"

    ptr = operand_def(PtrType)
    even = result_def(I32)
    odd = result_def(I32)

    assembly_format = "$ptr attr-dict `:` type($ptr)"

    traits = traits_def(Accesses(MemoryEffectKind.READ, "ptr"))

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers("zant_load_s4x4", "zant_ssub16")
    ZIG_RESULTS: ClassVar[str] = "nibbles"

    def __init__(self, ptr: SSAValue | Operation):
        super().__init__(operands=[ptr], result_types=[IntegerType(32)] * 2)

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_load_s4x4", (args[0],))

    def reach(self) -> dict[str, Reach]:
        return {"ptr": Reach(0, 2)}  # one LDRH: 4 int4 from an even element

    def reference(self, read: Read) -> tuple[int, int]:
        values = [_sext4(int(v) & 0xF) for v in read(range(4))]

        def halves(lo: int, hi: int) -> int:
            return wrap_signed((lo & 0xFFFF) | ((hi & 0xFFFF) << 16))

        return halves(values[0], values[2]), halves(values[1], values[3])

    def verify_(self) -> None:
        assert isinstance(self.ptr.type, PtrType)
        if self.ptr.type.element_type != IntegerType(4):
            raise VerifyException(f"load_s4x4 reads int4 elements, got a pointer to {self.ptr.type.element_type}")


SMLAD_ROWS = 5
"""The most rows an `arm_dsp.smlad_rows` takes, and the rows of each `arm_dsp.smlad_layer` block:
5 sums, 5 weight words, the 2 activation words and 2 pointers are the Cortex-M4's 14 registers
(r0-r12, lr) without a frame pointer; the loop's end then lives in an FPU register (s0, a VMOV
each way) or, without an FPU, a stack slot."""

ZIG_HELPER_SOURCES["zant_smlad_rows_text"] = ZigHelper(
    "zant_smlad_rows_text",
    """\
/// The assembly of a fully connected block's reduction (zant_smlad_rows): the biases loaded and
/// `shared` (in %[a]) added, the loop's end into `end`, the loop and the rest. `end` is a
/// register, or kept apart, written through %[b] and read back into %[a] (dead at a pass's end)
/// where a register of its own would take a fifth row's: an FPU register ("s0": VMOV, 1 cycle
/// a pass) or a stack slot ("[sp, #n]": LDR, 2 cycles: after the SMLADs no load pipelines). `wregs`
/// weight registers (%[w0] ...): a row past them loads its word into the register of the row
/// `wregs` before once that row's SMLADs read it (a load of its own: one cycle more a step).
fn zant_smlad_rows_text(comptime steps: usize, comptime rows: usize, comptime wregs: usize, comptime end: []const u8) []const u8 {{
    {{
        // Formatting 8 steps of 5 rows takes more of the comptime branch quota than a kernel
        // of several blocks (a loop's and the rows left) would otherwise be given.
        @setEvalBranchQuota(100000);
        const unroll: usize = if (steps % 8 == 0) 8 else if (steps >= 4) 4 else steps;
        const rest: usize = steps % unroll;
        const names = [5][]const u8{{ "%[w0]", "%[w1]", "%[w2]", "%[w3]", "%[w4]" }};
        const sums = [5][]const u8{{ "%[c0]", "%[c1]", "%[c2]", "%[c3]", "%[c4]" }};
        const slot = end[0] == '[';
        const apart = slot or end[0] == 's';
        const read = if (slot) "ldr %[a], " ++ end else "vmov %[a], " ++ end;
        const check = (if (apart) read ++ "\\n\\tcmp %[pb], %[a]" else "cmp %[pb], " ++ end) ++ "\\n\\tbne 1b";
        const into = if (apart) "%[b]" else end;
        // The biases (c0's load last: it moves pb to the weights), `shared` (in a) added,
        // then the loop's end.
        comptime var text: []const u8 = "";
        for (1..rows) |r| {{
            text = text ++ std.fmt.comptimePrint("ldr {{s}}, [%[pb], #{{d}}]\\n\\t", .{{ sums[r], 4 * r }});
        }}
        text = text ++ std.fmt.comptimePrint("ldr %[c0], [%[pb]], #{{d}}\\n\\t", .{{4 * rows}});
        for (0..@max(4, rows)) |r| {{
            text = text ++ (if (r < rows) "add " ++ sums[r] ++ ", " ++ sums[r] ++ ", %[a]\\n\\t" else "mov " ++ sums[r] ++ ", %[a]\\n\\t");
        }}
        const span: usize = 4 * rows * (steps - rest);
        if (span < 4096) {{
            text = text ++ std.fmt.comptimePrint("addw " ++ into ++ ", %[pb], #{{d}}\\n\\t", .{{span}});
        }} else {{
            text = text ++ std.fmt.comptimePrint("movw " ++ into ++ ", #{{d}}\\n\\tmovt " ++ into ++ ", #{{d}}\\n\\tadd " ++ into ++ ", " ++ into ++ ", %[pb]\\n\\t", .{{ span & 0xFFFF, span >> 16 }});
        }}
        if (apart) text = text ++ (if (slot) "str %[b], " ++ end else "vmov " ++ end ++ ", %[b]") ++ "\\n\\t";
        text = text ++ "1:\\n\\t";
        for (0..unroll + rest) |i| {{
            if (i == unroll) {{ // the loop's end, then the rest from the advanced pointers
                text = text ++ check ++ "\\n\\t";
            }}
            const k = if (i < unroll) i else i - unroll;
            // In the loop, the pass's first loads advance the pointers (post-indexed) and
            // the others reach back from there: no add per pass.
            const back_a: isize = if (i < unroll) 8 * unroll else 0;
            const back_b: isize = if (i < unroll) 4 * rows * unroll else 0;
            if (i == 0) {{
                text = text ++ std.fmt.comptimePrint("ldr %[a], [%[pa]], #{{d}}\\n\\t", .{{back_a}});
            }} else {{
                text = text ++ std.fmt.comptimePrint("ldr %[a], [%[pa], #{{d}}]\\n\\t", .{{@as(isize, 8 * k) - back_a}});
            }}
            text = text ++ std.fmt.comptimePrint("ldr %[b], [%[pa], #{{d}}]\\n\\t", .{{@as(isize, 8 * k + 4) - back_a}});
            for (0..@min(rows, wregs)) |r| {{
                if (i == 0 and r == 0) {{
                    text = text ++ std.fmt.comptimePrint("ldr {{s}}, [%[pb]], #{{d}}\\n\\t", .{{ names[r], back_b }});
                }} else {{
                    text = text ++ std.fmt.comptimePrint("ldr {{s}}, [%[pb], #{{d}}]\\n\\t", .{{ names[r], @as(isize, 4 * rows * k + 4 * r) - back_b }});
                }}
            }}
            for (0..rows) |r| {{
                const w = names[r % wregs];
                text = text ++ "smlad " ++ sums[r] ++ ", " ++ w ++ ", %[a], " ++ sums[r] ++ "\\n\\t" ++
                    "sxtb16 " ++ w ++ ", " ++ w ++ ", ror #8\\n\\t" ++
                    "smlad " ++ sums[r] ++ ", " ++ w ++ ", %[b], " ++ sums[r] ++ "\\n\\t";
                if (r + wregs < rows) {{
                    text = text ++ std.fmt.comptimePrint("ldr {{s}}, [%[pb], #{{d}}]\\n\\t", .{{ w, @as(isize, 4 * rows * k + 4 * (r + wregs)) - back_b }});
                }}
            }}
        }}
        if (rest == 0) {{
            text = text ++ check;
        }}
        return text;
    }}
}}""".format(),
    inline=False,
)
ZIG_HELPER_SOURCES["zant_smlad_rows"] = ZigHelper(
    "zant_smlad_rows",
    f"""\
/// A fully connected block's whole reduction (arm_dsp.smlad_rows): pb holds the block's `rows`
/// int32 biases, then for each of `steps` steps s the `rows` weight words w_r (4 int8 each);
/// with the activation words a = pa[4s], b = pa[4s + 2] (int16 pairs), c_r = bias_r + shared
/// + Σ_s SMLAD(w_r, a) + SMLAD(SXTB16(w_r ror 8), b) (c_r = shared for rows ≤ r < 4). On a DSP
/// core one asm block of 13 registers: the biases loaded and `shared` added first (so the
/// caller keeps no sums, bias pointer or loop end of its own across the block), then one loop,
/// `unroll` steps per pass (8 where they divide `steps`, else 4, or all of fewer than 4), the
/// last `steps % unroll` after the loop: per step the 2 + rows loads adjacent (the core
/// pipelines a load after a load: one cycle each after the first) and 3 instructions per row
/// (the word's odd bytes widened into its own register once its SMLAD read it); a pass's first
/// loads advance the pointers (post-indexed), the others reach back from there, so a pass adds
/// nothing. LLVM's own schedule spread the loads among the arithmetic (two cycles each, or
/// three per LDRD) and spilled a pointer. (16 steps per pass outgrew the L4R5's 1 KB
/// instruction cache: AD 539 K -> 973 K cycles; 8 against 4: 549 K -> 539 K.) Five rows take
/// 14 registers built for speed (ReleaseFast, ReleaseSmall: no frame pointer), else 4 weight
/// registers, the fifth row's word loaded once the first row's SMLADs read theirs; the loop's
/// end in s0 (without an FPU on the stack: zant_smlad_rows_text).
inline fn zant_smlad_rows(comptime steps: usize, comptime rows: usize, pa: *const i16, pb: *const i8, shared: i32) [@max(4, rows)]i32 {{
    if (comptime {_HAS_DSP}) {{
        var r0: i32 = undefined;
        var r1: i32 = undefined;
        var r2: i32 = undefined;
        var r3: i32 = undefined;
        var qa: *const i16 = undefined;
        var qb: *const i8 = undefined;
        var a: i32 = undefined;
        var b: i32 = undefined;
        var w0: i32 = undefined;
        var w1: i32 = undefined;
        var w2: i32 = undefined;
        var w3: i32 = undefined;
        if (comptime rows <= 4) {{
            const body = comptime zant_smlad_rows_text(steps, rows, rows, "%[end]");
            var end: usize = undefined;
            asm volatile (body
                : [c0] "=&r" (r0),
                  [c1] "=&r" (r1),
                  [c2] "=&r" (r2),
                  [c3] "=&r" (r3),
                  [pa] "=&r" (qa),
                  [pb] "=&r" (qb),
                  [a] "=&r" (a),
                  [b] "=&r" (b),
                  [w0] "=&r" (w0),
                  [w1] "=&r" (w1),
                  [w2] "=&r" (w2),
                  [w3] "=&r" (w3),
                  [end] "=&r" (end),
                : [ipa] "4" (pa),
                  [ipb] "5" (pb),
                  [shared] "6" (shared),
                : .{{ .memory = true, .cpsr = true }});
            return .{{ r0, r1, r2, r3 }};
        }} else {{
            const mode = @import("builtin").mode;
            const wregs: usize = comptime if (mode == .fast or mode == .small) rows else rows - 1;
            const fp = comptime std.Target.arm.featureSetHas(@import("builtin").cpu.features, .fpregs);
            const body = comptime if (fp) zant_smlad_rows_text(steps, rows, wregs, "s0") else "sub sp, sp, #8\\n\\t" ++ zant_smlad_rows_text(steps, rows, wregs, "[sp]") ++ "\\n\\tadd sp, sp, #8";
            var r4: i32 = undefined;
            if (comptime wregs == rows) {{
                var w4: i32 = undefined;
                asm volatile (body
                    : [c0] "=&r" (r0),
                      [c1] "=&r" (r1),
                      [c2] "=&r" (r2),
                      [c3] "=&r" (r3),
                      [c4] "=&r" (r4),
                      [pa] "=&r" (qa),
                      [pb] "=&r" (qb),
                      [a] "=&r" (a),
                      [b] "=&r" (b),
                      [w0] "=&r" (w0),
                      [w1] "=&r" (w1),
                      [w2] "=&r" (w2),
                      [w3] "=&r" (w3),
                      [w4] "=&r" (w4),
                    : [ipa] "5" (pa),
                      [ipb] "6" (pb),
                      [shared] "7" (shared),
                    : .{{ .memory = true, .cpsr = true, .s0 = fp }});
            }} else {{
                asm volatile (body
                    : [c0] "=&r" (r0),
                      [c1] "=&r" (r1),
                      [c2] "=&r" (r2),
                      [c3] "=&r" (r3),
                      [c4] "=&r" (r4),
                      [pa] "=&r" (qa),
                      [pb] "=&r" (qb),
                      [a] "=&r" (a),
                      [b] "=&r" (b),
                      [w0] "=&r" (w0),
                      [w1] "=&r" (w1),
                      [w2] "=&r" (w2),
                      [w3] "=&r" (w3),
                    : [ipa] "5" (pa),
                      [ipb] "6" (pb),
                      [shared] "7" (shared),
                    : .{{ .memory = true, .cpsr = true, .s0 = fp }});
            }}
            return .{{ r0, r1, r2, r3, r4 }};
        }}
    }}
    const x: [*]const i16 = @ptrCast(pa);
    const w: [*]const i8 = @ptrCast(pb);
    var r: [@max(4, rows)]i32 = @splat(shared);
    for (0..rows) |k| {{
        r[k] +%= zant_load_word(&w[4 * k]);
    }}
    for (0..steps) |s| {{
        const a = zant_load_word16(&x[4 * s]);
        const b = zant_load_word16(&x[4 * s + 2]);
        for (0..rows) |k| {{
            const word = zant_load_word(&w[4 * rows * (s + 1) + 4 * k]);
            r[k] = zant_smlad(zant_sxtb16(word, 8), b, zant_smlad(word, a, r[k]));
        }}
    }}
    return r;
}}""",
    ("zant_smlad_rows_text", "zant_smlad_rows_text", "zant_smlad_rows_text", "zant_load_word16", "zant_load_word16", "zant_load_word", "zant_load_word", "zant_smlad", "zant_sxtb16", "zant_smlad"),
)


def smlad_rows_reach(steps: int, rows: int, blocks: int = 1) -> dict[str, Reach]:
    """The bytes `blocks` consecutive `arm_dsp.smlad_rows` of `rows` rows cover: pa's int16
    pairs (the same for every block), pb's biases and words (block after block)."""
    return {"pa": Reach(0, 2 * 4 * steps), "pb": Reach.span(4 * rows * (steps + 1), (blocks, 4 * rows * (steps + 1)))}


def smlad_rows(pa: Read, pb: Read, shared: int, steps: int, rows: int) -> list[int]:
    """`arm_dsp.smlad_rows`' max(4, rows) sums (its docstring) from its pointers as `reference`
    reads them."""
    halves = pa(range(4 * steps)).astype(np.int64)
    data = pb(range(4 * rows * (steps + 1))).astype(np.int8).tobytes()

    def word(at: int) -> int:
        return int.from_bytes(data[at : at + 4], "little", signed=True)

    sums = [wrap_signed(shared + (word(4 * k) if k < rows else 0)) for k in range(max(4, rows))]
    for s in range(steps):
        a = wrap_signed((int(halves[4 * s]) & 0xFFFF) | ((int(halves[4 * s + 1]) & 0xFFFF) << 16))
        b = wrap_signed((int(halves[4 * s + 2]) & 0xFFFF) | ((int(halves[4 * s + 3]) & 0xFFFF) << 16))
        for k in range(rows):
            w = word(4 * rows * (s + 1) + 4 * k)
            sums[k] = smlad(sxtb16(w, 8), b, smlad(w, a, sums[k]))
    return sums


@irdl_op_definition
class SmladRowsOp(IRDLOperation):
    """`%r0, %r1, %r2, %r3 = arm_dsp.smlad_rows %pa, %pb, %shared {steps = S, rows = R}
    : !uop.ptr<i16>, !uop.ptr<i8>`: a fully connected block's whole reduction
    (`fully_connected`) from its bias, max(4, R) sums for R ≤ `SMLAD_ROWS` rows: r_k = bias_k +
    shared + Σ_s SMLAD(w_k(s), a(s)) + SMLAD(SXTB16(w_k(s) ror 8), b(s)) wrapping, for k < R
    (the others are `shared`), where
    bias_k is the little-endian int32 at `pb + 4k`, w_k(s) the int8 word at `pb + 4R(s + 1) +
    4k` (the block's R biases, then its steps' words) and a(s), b(s) the int16 pairs at `pa +
    4s`, `pa + 4s + 2`. One asm block the target compiler does not schedule.
    Reach (its asm, as `reference`): pa's int16 [0, 4S), pb's bytes [0, 4R(S + 1)); the loop's
    span 4R(S - rest) from pb, the rest after it."""

    name = "arm_dsp.smlad_rows"

    pa = operand_def(PtrType)
    pb = operand_def(PtrType)
    shared = operand_def(I32)
    steps = prop_def(IntAttr)
    rows = prop_def(IntAttr)
    sums = var_result_def(I32)

    assembly_format = "$pa `,` $pb `,` $shared attr-dict `:` type($pa) `,` type($pb) `->` type($sums)"

    traits = traits_def(Accesses(MemoryEffectKind.READ, "pa"), Accesses(MemoryEffectKind.READ, "pb"))
    irdl_options = (ParsePropInAttrDict(),)

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers(
        "zant_smlad_rows", "zant_smlad_rows_text", "zant_load_word16", "zant_load_word", "zant_sxtb16", "zant_smlad"
    )
    ZIG_RESULTS: ClassVar[str] = "sums"

    def __init__(self, pa: SSAValue, pb: SSAValue, shared: SSAValue, steps: int, rows: int):
        super().__init__(
            operands=[pa, pb, shared], result_types=[[IntegerType(32)] * max(4, rows)],
            properties={"steps": IntAttr(steps), "rows": IntAttr(rows)},
        )

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_smlad_rows", (str(self.steps.data), str(self.rows.data), *args))

    def reach(self) -> dict[str, Reach]:
        return smlad_rows_reach(self.steps.data, self.rows.data)

    def reference(self, pa: Read, pb: Read, shared: int) -> tuple[int, ...]:
        return tuple(smlad_rows(pa, pb, shared, self.steps.data, self.rows.data))

    def verify_(self) -> None:
        if not 1 <= self.rows.data <= SMLAD_ROWS or self.steps.data < 1:
            raise VerifyException(f"smlad_rows takes 1 to {SMLAD_ROWS} rows and at least one step")
        if len(self.sums) != max(4, self.rows.data):
            raise VerifyException(f"smlad_rows of {self.rows.data} rows has {max(4, self.rows.data)} sums")


SMLAD_BLOCK_ROWS = 4
"""Output channels (rows of pb) of an `arm_dsp.smlad_block`; it has 2 pixels (words of pa)."""

LOAD_OFFSETS = range(-255, 4096)
"""The offsets a Thumb-2 LDR/STRB reaches from its base register by an immediate (T4's 8 bits
back, T3's 12 bits forward): an asm block's fixed offsets must lie within them, or it does not
assemble."""


def smlad_block_reach(steps: int, a_next: int, b_next: int, *pa_axes: tuple[int, int]) -> dict[str, Reach]:
    """The bytes `arm_dsp.smlad_block`'s words cover from pa and pb (`pa_axes`: pa's further
    offsets in bytes, a row's blocks)."""
    return {
        "pa": Reach.span(4, (2, 4 * a_next), (steps, 4), *pa_axes),
        "pb": Reach.span(4, (SMLAD_BLOCK_ROWS, 4 * b_next), (steps, 4)),
    }


def smlad_block_in_reach(steps: int, a_next: int, b_next: int) -> bool:
    """Whether `zant_smlad_block`'s loads reach every word by an immediate: pb's fourth row at
    4·(3·b_next + s) and pa's second pixel at 4·(a_next + s) bytes, s below the steps of one
    straight pass (at most 8; a loop's passes reach back from the pointers they advance, no
    further). MobileNetV2's 960-channel projection (b_next 480: 5,760 bytes) is past it."""
    last = min(steps, 8) - 1
    return 4 * (max(a_next, (SMLAD_BLOCK_ROWS - 1) * b_next) + last) < LOAD_OFFSETS.stop

ZIG_HELPER_SOURCES["zant_smlad_block"] = ZigHelper(
    "zant_smlad_block",
    f"""\
/// A 4 x 2 register block's whole reduction over words of two int16 (arm_dsp.smlad_block): for
/// each of `steps` steps s, x_j = pa[j·a_next + s] (j < 2), w_i = pb[i·b_next + s] (i < 4),
/// c_ij += SMLAD(x_j, w_i); results row-major (c00, c01, c10 …).
/// No SXTB16: both operands were widened before (`conv_columns._pointwise_wide`). On a DSP core
/// one asm block, `unroll` steps per pass (8, 7, 4, 2 or 1, dividing `steps`: the first convs'
/// 14 took 2, whose loop overhead was 6 of 38 cycles a pass), straight-line code for at most 8
/// steps; per step 6 LDR and 8 SMLAD. Built for speed (ReleaseFast, ReleaseSmall:
/// no frame pointer) it takes 14 registers (8 sums, 2 pointers, x0, x1, two w): x0, x1 and two
/// w loaded back to back, then the other two w (the core pipelines a load after a load), 16
/// cycles per step; else 13 (one w, each loaded once the SMLADs read the one before: 18 cycles;
/// with r7 the frame pointer LLVM has no 14th register). A loop's bound has no register of its
/// own: it enters in w's, is pushed, and is read back into w (dead there) at each pass's end.
inline fn zant_smlad_block(comptime steps: usize, comptime a_next: isize, comptime b_next: isize, pa: *const i32, pb: *const i32, c: anytype) [8]i32 {{
    if (comptime {_HAS_DSP}) {{
        const mode = @import("builtin").mode;
        if (comptime mode == .fast or mode == .small) return zant_smlad_block_asm(steps, a_next, b_next, true, pa, pb, c);
        return zant_smlad_block_asm(steps, a_next, b_next, false, pa, pb, c);
    }}
    const a: [*]const i32 = @ptrCast(pa);
    const b: [*]const i32 = @ptrCast(pb);
    var r: [8]i32 = if (@TypeOf(c) == @TypeOf(null)) .{{ 0, 0, 0, 0, 0, 0, 0, 0 }} else c;
    for (0..steps) |s| {{
        for (0..4) |i| {{
            const w = b[@intCast(@as(isize, @intCast(i)) * b_next + @as(isize, @intCast(s)))];
            for (0..2) |j| {{
                r[2 * i + j] = zant_smlad(a[@intCast(@as(isize, @intCast(j)) * a_next + @as(isize, @intCast(s)))], w, r[2 * i + j]);
            }}
        }}
    }}
    return r;
}}

/// One pass of `unroll` steps of zant_smlad_block_asm's text: in a loop (not `straight`), each
/// pointer's first load advances it by the pass (post-indexed) and its other loads reach back
/// from there (no ADD per pointer and pass); `zero`: the pass's first step starts the sums
/// (SMUAD: no addends to set to 0 before the block).
fn zant_smlad_block_pass(comptime unroll: usize, comptime straight: bool, comptime two_w: bool, comptime zero: bool, comptime a_next: isize, comptime b_next: isize) []const u8 {{
    const sums = [4][2][]const u8{{ .{{ "%[c00]", "%[c01]" }}, .{{ "%[c10]", "%[c11]" }}, .{{ "%[c20]", "%[c21]" }}, .{{ "%[c30]", "%[c31]" }} }};
    comptime var text: []const u8 = "";
    const pass: isize = if (straight) 0 else 4 * @as(isize, @intCast(unroll));
    inline for (0..unroll) |k| {{
        const at: isize = 4 * @as(isize, @intCast(k)) - (if (k == 0) 0 else pass);
        const first = !straight and k == 0;
        const start = zero and k == 0;
        text = text ++ (if (first) std.fmt.comptimePrint("ldr %[x0], [%[pa]], #{{d}}\\n\\t", .{{pass}}) else std.fmt.comptimePrint("ldr %[x0], [%[pa], #{{d}}]\\n\\t", .{{at}})) ++
            std.fmt.comptimePrint("ldr %[x1], [%[pa], #{{d}}]\\n\\t", .{{(if (first) at - pass else at) + 4 * a_next}});
        if (two_w) {{
            inline for (0..2) |h| {{
                const r0 = 2 * h;
                const w_at = (if (first and h > 0) at - pass else at) + 4 * b_next * @as(isize, @intCast(r0));
                const w_load = if (first and h == 0) std.fmt.comptimePrint("ldr %[w], [%[pb]], #{{d}}\\n\\t", .{{pass}}) else std.fmt.comptimePrint("ldr %[w], [%[pb], #{{d}}]\\n\\t", .{{w_at}});
                const v_at = (if (first) at - pass else at) + 4 * b_next * @as(isize, @intCast(r0 + 1));
                text = text ++ w_load ++ std.fmt.comptimePrint("ldr %[v], [%[pb], #{{d}}]\\n\\t", .{{v_at}}) ++
                    zant_smlad_block_step(start, sums[r0][0], "%[x0]", "%[w]") ++
                    zant_smlad_block_step(start, sums[r0][1], "%[x1]", "%[w]") ++
                    zant_smlad_block_step(start, sums[r0 + 1][0], "%[x0]", "%[v]") ++
                    zant_smlad_block_step(start, sums[r0 + 1][1], "%[x1]", "%[v]");
            }}
        }} else {{
            inline for (0..4) |i| {{
                const w_load = if (first and i == 0) std.fmt.comptimePrint("ldr %[w], [%[pb]], #{{d}}\\n\\t", .{{pass}}) else std.fmt.comptimePrint("ldr %[w], [%[pb], #{{d}}]\\n\\t", .{{(if (first) at - pass else at) + 4 * b_next * @as(isize, @intCast(i))}});
                text = text ++ w_load ++
                    zant_smlad_block_step(start, sums[i][0], "%[x0]", "%[w]") ++
                    zant_smlad_block_step(start, sums[i][1], "%[x1]", "%[w]");
            }}
        }}
    }}
    return text;
}}

/// `sum` += SMLAD(x, w), or `sum` = SMUAD(x, w) where the step starts the sum.
fn zant_smlad_block_step(comptime start: bool, comptime sum: []const u8, comptime x: []const u8, comptime w: []const u8) []const u8 {{
    if (start) return "smuad " ++ sum ++ ", " ++ x ++ ", " ++ w ++ "\\n\\t";
    return "smlad " ++ sum ++ ", " ++ x ++ ", " ++ w ++ ", " ++ sum ++ "\\n\\t";
}}

/// `c`: the 8 addends, or null for sums that start at 0 (the first step an SMUAD; in a loop,
/// the first pass peeled ahead of it).
inline fn zant_smlad_block_asm(comptime steps: usize, comptime a_next: isize, comptime b_next: isize, comptime two_w: bool, pa: *const i32, pb: *const i32, c: anytype) [8]i32 {{
    const zero = comptime @TypeOf(c) == @TypeOf(null);
    const straight = comptime steps <= 8;
    // Built for size, at most 4 steps a pass (KWS in ReleaseSmall: 8 outgrew 40 KB of flash).
    const most: usize = comptime if (@import("builtin").mode == .small) 4 else 8;
    const unroll: usize = comptime if (straight) steps else if (steps % 8 == 0 and most == 8) 8 else if (steps % 7 == 0 and most == 8) 7 else if (steps % 4 == 0) 4 else if (steps % 2 == 0) 2 else 1;
    const body = comptime text: {{
        if (straight) break :text zant_smlad_block_pass(unroll, true, two_w, zero, a_next, b_next);
        const peeled = if (zero) zant_smlad_block_pass(unroll, false, two_w, true, a_next, b_next) else "";
        break :text "str %[w], [sp, #-8]!\\n\\t" ++ peeled ++ "1:\\n\\t" ++ zant_smlad_block_pass(unroll, false, two_w, false, a_next, b_next) ++
            "ldr %[w], [sp]\\n\\tcmp %[pb], %[w]\\n\\tbne 1b\\n\\tadd sp, sp, #8";
    }};
    const in: [8]i32 = if (zero) undefined else c;
    const end: i32 = @bitCast(@as(u32, @truncate(@intFromPtr(pb) +% 4 * steps)));
    var r00: i32 = undefined;
    var r01: i32 = undefined;
    var r10: i32 = undefined;
    var r11: i32 = undefined;
    var r20: i32 = undefined;
    var r21: i32 = undefined;
    var r30: i32 = undefined;
    var r31: i32 = undefined;
    var qa: *const i32 = undefined;
    var qb: *const i32 = undefined;
    var x0: i32 = undefined;
    var x1: i32 = undefined;
    var w: i32 = undefined;
    if (two_w) {{
        var v: i32 = undefined;
        asm volatile (body
            : [c00] "=&r" (r00),
              [c01] "=&r" (r01),
              [c10] "=&r" (r10),
              [c11] "=&r" (r11),
              [c20] "=&r" (r20),
              [c21] "=&r" (r21),
              [c30] "=&r" (r30),
              [c31] "=&r" (r31),
              [pa] "=&r" (qa),
              [pb] "=&r" (qb),
              [x0] "=&r" (x0),
              [x1] "=&r" (x1),
              [w] "=&r" (w),
              [v] "=&r" (v),
            : [i00] "0" (in[0]),
              [i01] "1" (in[1]),
              [i10] "2" (in[2]),
              [i11] "3" (in[3]),
              [i20] "4" (in[4]),
              [i21] "5" (in[5]),
              [i30] "6" (in[6]),
              [i31] "7" (in[7]),
              [ipa] "8" (pa),
              [ipb] "9" (pb),
              [end] "12" (end),
            : .{{ .memory = true, .cpsr = true }});
    }} else {{
        asm volatile (body
            : [c00] "=&r" (r00),
              [c01] "=&r" (r01),
              [c10] "=&r" (r10),
              [c11] "=&r" (r11),
              [c20] "=&r" (r20),
              [c21] "=&r" (r21),
              [c30] "=&r" (r30),
              [c31] "=&r" (r31),
              [pa] "=&r" (qa),
              [pb] "=&r" (qb),
              [x0] "=&r" (x0),
              [x1] "=&r" (x1),
              [w] "=&r" (w),
            : [i00] "0" (in[0]),
              [i01] "1" (in[1]),
              [i10] "2" (in[2]),
              [i11] "3" (in[3]),
              [i20] "4" (in[4]),
              [i21] "5" (in[5]),
              [i30] "6" (in[6]),
              [i31] "7" (in[7]),
              [ipa] "8" (pa),
              [ipb] "9" (pb),
              [end] "12" (end),
            : .{{ .memory = true, .cpsr = true }});
    }}
    return .{{ r00, r01, r10, r11, r20, r21, r30, r31 }};
}}""",
    ("zant_smlad",),
)


@irdl_op_definition
class SmladBlockOp(IRDLOperation):
    """`%r00, %r01, %r10 … %r31 = arm_dsp.smlad_block %pa, %pb, %c00 … %c31 {steps = S, a_next,
    b_next} : !uop.ptr<i32>, !uop.ptr<i32>`: a register block of 4 rows (output channels) x 2
    pixels over operands already widened into words of two int16 (`SXTB16`'s halves), r_ij =
    c_ij + Σ_s SMLAD(x_j(s), w_i(s)) wrapping, where x_j(s) is the word at `pa + j·a_next + s`
    and w_i(s) the word at `pb + i·b_next + s` (offsets in words); sums and results row-major.
    Without addends (`arm_dsp.smlad_block %pa, %pb {…}`) every c_ij is 0: the first step is an
    SMUAD, and no register is set to 0 ahead of the block (8 instructions a block).
    One assembly loop the target compiler does not schedule (`conv_columns._pointwise_wide`).
    Reach (its asm, as `reference`): pa's words j·a_next + s, pb's i·b_next + s (s < S); its
    passes divide S, the loop ending at pb + 4S bytes exactly."""

    name = "arm_dsp.smlad_block"

    pa = operand_def(PtrType)
    pb = operand_def(PtrType)
    addends = var_operand_def(I32)
    steps = prop_def(IntAttr)
    a_next = prop_def(IntAttr)
    b_next = prop_def(IntAttr)
    sums = var_result_def(I32)

    assembly_format = "$pa `,` $pb (`,` $addends^)? attr-dict `:` type($pa) `,` type($pb) `->` type($sums)"

    traits = traits_def(Accesses(MemoryEffectKind.READ, "pa"), Accesses(MemoryEffectKind.READ, "pb"))
    irdl_options = (ParsePropInAttrDict(),)

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers("zant_smlad_block", "zant_smlad")
    ZIG_RESULTS: ClassVar[str] = "block"

    def __init__(self, pa: SSAValue, pb: SSAValue, addends: Sequence[SSAValue], steps: int, a_next: int, b_next: int):
        """`addends`: the 8 c_ij, or none for sums that start at 0."""
        super().__init__(
            operands=[pa, pb, list(addends)], result_types=[[IntegerType(32)] * (2 * SMLAD_BLOCK_ROWS)],
            properties={"steps": IntAttr(steps), "a_next": IntAttr(a_next), "b_next": IntAttr(b_next)},
        )

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        constants = (self.steps, self.a_next, self.b_next)
        addends = "." + "{ " + ", ".join(args[2:]) + " }" if self.addends else "null"
        return ZigCall("zant_smlad_block", (*(str(c.data) for c in constants), args[0], args[1], addends))

    def reach(self) -> dict[str, Reach]:
        return smlad_block_reach(self.steps.data, self.a_next.data, self.b_next.data)

    def reference(self, pa: Read, pb: Read, *addends: int) -> tuple[int, ...]:
        steps, a_next, b_next = self.steps.data, self.a_next.data, self.b_next.data
        x = pa(range(a_next + steps))
        w = pb(range((SMLAD_BLOCK_ROWS - 1) * b_next + steps))
        sums = list(addends) or [0] * (2 * SMLAD_BLOCK_ROWS)
        for i in range(SMLAD_BLOCK_ROWS):
            for j in range(2):
                for s in range(steps):
                    sums[2 * i + j] = smlad(int(x[j * a_next + s]), int(w[i * b_next + s]), sums[2 * i + j])
        return tuple(sums)

    def verify_(self) -> None:
        for ptr in (self.pa, self.pb):
            assert isinstance(ptr.type, PtrType)
            if ptr.type.element_type != IntegerType(32):
                raise VerifyException(f"smlad_block reads words of two int16, got a pointer to {ptr.type.element_type}")
        if len(self.addends) not in (0, 2 * SMLAD_BLOCK_ROWS) or len(self.sums) != 2 * SMLAD_BLOCK_ROWS:
            raise VerifyException(f"smlad_block has {2 * SMLAD_BLOCK_ROWS} sums (and as many addends, or none)")
        if self.steps.data < 1:
            raise VerifyException(f"smlad_block takes at least one step, got {self.steps.data}")
        if not smlad_block_in_reach(self.steps.data, self.a_next.data, self.b_next.data):
            raise VerifyException(
                f"smlad_block's words lie within {LOAD_OFFSETS.stop - 1} bytes of pa and pb (LDR immediates), "
                f"got a_next = {self.a_next.data}, b_next = {self.b_next.data}"
            )


# -- requantization: the high word of a product and a saturating shift --------------------------

ZIG_HELPER_SOURCES["zant_smmla"] = ZigHelper(
    "zant_smmla",
    f"""\
/// c + ((a * b) >> 32): the high word of the signed 64-bit product plus c, wrapping (SMMLA).
inline fn zant_smmla(a: i32, b: i32, c: i32) i32 {{
    if (comptime {_HAS_DSP}) {{
        return asm ("smmla %[r], %[a], %[b], %[c]"
            : [r] "=r" (-> i32),
            : [a] "r" (a),
              [b] "r" (b),
              [c] "r" (c),
        );
    }}
    return c +% @as(i32, @intCast((@as(i64, a) * @as(i64, b)) >> 32));
}}""",
)
ZIG_HELPER_SOURCES["zant_ssat"] = ZigHelper(
    "zant_ssat",
    f"""\
/// x >> shift (arithmetic) saturated to a signed `bits`-bit value (SSAT with ASR).
inline fn zant_ssat(x: i32, comptime bits: u6, comptime shift: u5) i32 {{
    if (comptime {_HAS_DSP}) {{
        const by = if (shift == 0) "" else std.fmt.comptimePrint(", asr #{{d}}", .{{shift}});
        return asm (std.fmt.comptimePrint("ssat %[r], #{{d}}, %[x]", .{{bits}}) ++ by
            : [r] "=r" (-> i32),
            : [x] "r" (x),
        );
    }}
    const low: i32 = -(@as(i32, 1) << @intCast(bits - 1));
    return std.math.clamp(x >> shift, low, -(low + 1));
}}""",
)


def smmla(a: int, b: int, c: int) -> int:
    """`SMMLA`: c + the high word of the signed product a·b (floor(a·b / 2^32)), wrapping."""
    return wrap_signed(c + ((wrap_signed(a) * wrap_signed(b)) >> 32))


def ssat(x: int, bits: int, shift: int) -> int:
    """`SSAT #bits, x, ASR #shift`: x >> shift saturated to [-2^(bits-1), 2^(bits-1) - 1]."""
    low = -(1 << (bits - 1))
    return min(max(wrap_signed(x) >> shift, low), -low - 1)


def _verify_pointers(op: Operation, pointers: Sequence[tuple[str, IntegerType]]) -> None:
    """Each named pointer operand of `op` points to its element type (the asm's loads and
    stores are of that width)."""
    for name, element in pointers:
        ptr = getattr(op, name)
        assert isinstance(ptr.type, PtrType)
        if ptr.type.element_type != element:
            raise VerifyException(f"{op.name}'s {name} points to {element}, got a pointer to {ptr.type.element_type}")


def stores_in_reach(y_next: int, y_pixel: int) -> bool:
    """Whether a row op's stores of a pixel pair's outputs reach them from Y's pointer (or from
    it plus whole rows) by STRB immediates: y_pixel, y_next and their sum in `LOAD_OFFSETS`."""
    return all(o in LOAD_OFFSETS for o in (y_pixel, y_next, y_next + y_pixel))


def _verify_store_offsets(op: Operation) -> None:
    """`stores_in_reach` for a row op's `y_next` and `y_pixel`."""
    y_next, y_pixel = op.y_next.data, op.y_pixel.data
    if not stores_in_reach(y_next, y_pixel):
        raise VerifyException(
            f"{op.name}'s outputs lie within -{-LOAD_OFFSETS.start} to {LOAD_OFFSETS.stop - 1} bytes of py (STRB immediates), "
            f"got y_next = {y_next}, y_pixel = {y_pixel}"
        )


def _row_traits(*reads: str) -> OpTraits:
    """The traits of a `RequantRowOp` that reads the memory at the operands `reads`: those
    reads, then its write through `py` (in this order: the order of an op's effects decides
    the order of what the passes after it see, and so the generated code's)."""
    return traits_def(*(Accesses(MemoryEffectKind.READ, name) for name in reads), Accesses(MemoryEffectKind.WRITE, "py"))


class RequantRowOp(IRDLOperation, ABC):
    """A row of sums, each requantized as `arm_dsp.ssat` (8 bits, shift `shift`) of an
    `arm_dsp.smmla` and stored as an int8 through `py`, in one asm block: the `shift`, the
    pointer operands' element types (`POINTERS`) and the Zig call `zant_<op>(<LAYOUT's
    properties>, <operands>)` every such op has. A subclass declares its operands (their order
    is its own), its other properties and its traits (`_row_traits`)."""

    shift = prop_def(IntAttr)

    irdl_options = (ParsePropInAttrDict(),)

    WRITES: ClassVar[tuple[str, ...]] = ("py",)
    LAYOUT: ClassVar[tuple[str, ...]]
    """Its integer properties, in the order of its Zig helper's comptime parameters."""
    POINTERS: ClassVar[tuple[tuple[str, IntegerType], ...]]
    """Its pointer operands and the element type each points to."""
    COUNTS: ClassVar[tuple[str, ...]] = ()
    """Its properties that count iterations of the asm's loops (steps, pairs …): at least 1."""
    INT32: ClassVar[tuple[str, ...]] = ()
    """Its properties the asm takes as an int32 immediate (`MOVW`/`MOVT`)."""

    def __init__(self, operands: Sequence[SSAValue | Sequence[SSAValue]], layout: Mapping[str, int]):
        super().__init__(operands=operands, properties={name: IntAttr(layout[name]) for name in self.LAYOUT})

    def layout(self) -> dict[str, int]:
        """`LAYOUT`'s properties by name."""
        return {name: getattr(self, name).data for name in self.LAYOUT}

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        helper = "zant_" + self.name.removeprefix("arm_dsp.")
        return ZigCall(helper, (*(str(value) for value in self.layout().values()), *args))

    def verify_(self) -> None:
        _verify_pointers(self, self.POINTERS)
        for name in self.COUNTS:
            if getattr(self, name).data < 1:
                raise VerifyException(f"{self.name}'s {name} is at least 1, got {getattr(self, name).data}")
        if not 0 <= self.shift.data <= 31:
            raise VerifyException(f"{self.name}'s SSAT shifts right by 0 to 31 bits, got {self.shift.data}")
        for name in self.INT32:
            if not -(2**31) <= getattr(self, name).data < 2**31:
                raise VerifyException(f"{self.name}'s {name} is an int32, got {getattr(self, name).data}")


class RequantAddendRowOp(RequantRowOp, ABC):
    """A `RequantRowOp` whose SMMLA addend (the requantization's rounding and output zero point)
    is one constant for the whole row: a property, an int32."""

    addend = prop_def(IntAttr)

    INT32: ClassVar[tuple[str, ...]] = ("addend",)


@irdl_op_definition
class SmmlaOp(IRDLOperation):
    """`%r = arm_dsp.smmla %a, %b, %c : i32`: c + floor(a·b / 2^32), the high word of the
    signed 64-bit product, wrapping (`SMMLA`): a requantization's multiply, its rounding addend
    and zero point in `c` (`arm-dsp-requant`)."""

    name = "arm_dsp.smmla"

    lhs = operand_def(I32)
    rhs = operand_def(I32)
    addend = operand_def(I32)
    result = result_def(I32)

    assembly_format = "$lhs `,` $rhs `,` $addend attr-dict `:` type($result)"

    traits = traits_def(Pure())

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers("zant_smmla")

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation, addend: SSAValue | Operation):
        super().__init__(operands=[lhs, rhs, addend], result_types=[IntegerType(32)])

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_smmla", tuple(args))

    def reference(self, a: int, b: int, c: int) -> tuple[int]:
        return (smmla(a, b, c),)


@irdl_op_definition
class SsatOp(IRDLOperation):
    """`%r = arm_dsp.ssat %x {bits = 8, shift = 6} : i32`: x >> shift (arithmetic) saturated to
    a signed `bits`-bit value, [-2^(bits-1), 2^(bits-1) - 1] (`SSAT` with `ASR`): a
    requantization's shift and clamp in one instruction."""

    name = "arm_dsp.ssat"

    input = operand_def(I32)
    bits = prop_def(IntAttr)
    shift = prop_def(IntAttr)
    result = result_def(I32)

    assembly_format = "$input attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    traits = traits_def(Pure())

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers("zant_ssat")

    def __init__(self, input: SSAValue | Operation, bits: int, shift: int):
        super().__init__(
            operands=[input], properties={"bits": IntAttr(bits), "shift": IntAttr(shift)}, result_types=[IntegerType(32)]
        )

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_ssat", (args[0], str(self.bits.data), str(self.shift.data)))

    def reference(self, x: int) -> tuple[int]:
        return (ssat(x, self.bits.data, self.shift.data),)

    def verify_(self) -> None:
        if not 1 <= self.bits.data <= 32:
            raise VerifyException(f"ssat saturates to 1 to 32 bits, got {self.bits.data}")
        if not 0 <= self.shift.data <= 31:
            raise VerifyException(f"ssat shifts right by 0 to 31 bits, got {self.shift.data}")



ZIG_HELPER_SOURCES["zant_smlad_layer"] = ZigHelper(
    "zant_smlad_layer",
    f"""\
/// A fully connected layer of `blocks` blocks of {SMLAD_ROWS} rows (arm_dsp.smlad_layer): each block's
/// zant_smlad_rows from pb + block·4·rows·(steps + 1), its sums requantized as SSAT(#8,
/// SMMLA(c, multiplier, addend), ASR #shift) and stored at py + rows·block .. + rows - 1. One
/// asm block for the whole layer, so no compiled loop runs around each block: the output
/// pointer, the layer's end, `shared`, the activations' start, the multiplier and the addend
/// live in 24 bytes below sp, the block's loop end in s0 (a core without an FPU: a stack slot
/// beside them); pb runs on from block to block. Built for
/// speed (ReleaseFast, ReleaseSmall: no frame pointer) it takes 14 registers, a weight
/// register a row; else 13 (with r7 the frame pointer LLVM has no 14th), the fifth row's word
/// loaded apart (zant_smlad_rows_text's `wregs`).
inline fn zant_smlad_layer(comptime steps: usize, comptime blocks: usize, comptime multiplier: i32, comptime addend: i32, comptime shift: u5, pa: *const i16, pb: *const i8, shared: i32, py: *i8) void {{
    const rows: usize = {SMLAD_ROWS};
    if (comptime {_HAS_DSP}) {{
        const mode = @import("builtin").mode;
        const wregs: usize = comptime if (mode == .fast or mode == .small) rows else rows - 1;
        const fp = comptime std.Target.arm.featureSetHas(@import("builtin").cpu.features, .fpregs);
        const unroll: usize = comptime if (steps % 8 == 0) 8 else if (steps >= 4) 4 else steps;
        const rest: usize = steps % unroll;
        const sums = [5][]const u8{{ "%[c0]", "%[c1]", "%[c2]", "%[c3]", "%[c4]" }};
        const text = comptime t: {{
            const total: u32 = 4 * rows * (steps + 1) * blocks;
            const m: u32 = @bitCast(multiplier);
            const c: u32 = @bitCast(addend);
            // py enters in b.
            var s: []const u8 = std.fmt.comptimePrint(
                "sub sp, sp, #32\\n\\tstr %[b], [sp]\\n\\tstr %[a], [sp, #8]\\n\\tstr %[pa], [sp, #12]\\n\\t" ++
                    "movw %[b], #{{d}}\\n\\tmovt %[b], #{{d}}\\n\\tadd %[b], %[b], %[pb]\\n\\tstr %[b], [sp, #4]\\n\\t" ++
                    "movw %[w0], #{{d}}\\n\\tmovt %[w0], #{{d}}\\n\\tmovw %[w1], #{{d}}\\n\\tmovt %[w1], #{{d}}\\n\\tstrd %[w0], %[w1], [sp, #16]\\n" ++
                    "2:\\n\\tldr %[a], [sp, #8]\\n\\tldr %[pa], [sp, #12]\\n\\t",
                .{{ total & 0xFFFF, total >> 16, m & 0xFFFF, m >> 16, c & 0xFFFF, c >> 16 }},
            );
            s = s ++ zant_smlad_rows_text(steps, rows, wregs, if (fp) "s0" else "[sp, #24]");
            if (rest != 0) {{ // the rest's loads did not advance pb: on to the next block
                s = s ++ std.fmt.comptimePrint("\\n\\tadd %[pb], %[pb], #{{d}}", .{{4 * rows * rest}});
            }}
            // The multiplier and addend from the stack beside the output pointer and the layer's
            // end: one group of 4 loads (5 cycles) where their movw/movt took 4 more.
            s = s ++ "\\n\\tldr %[w0], [sp, #16]\\n\\tldr %[w1], [sp, #20]\\n\\tldr %[b], [sp]\\n\\tldr %[a], [sp, #4]";
            const by = if (shift == 0) "" else std.fmt.comptimePrint(", asr #{{d}}", .{{shift}});
            for (0..rows) |r| {{
                s = s ++ "\\n\\tsmmla " ++ sums[r] ++ ", " ++ sums[r] ++ ", %[w0], %[w1]\\n\\tssat " ++ sums[r] ++ ", #8, " ++ sums[r] ++ by;
            }}
            for (0..rows) |r| {{
                s = s ++ std.fmt.comptimePrint("\\n\\tstrb {{s}}, [%[b], #{{d}}]", .{{ sums[r], r }});
            }}
            s = s ++ std.fmt.comptimePrint("\\n\\tadd %[b], %[b], #{{d}}\\n\\tstr %[b], [sp]", .{{rows}}) ++
                "\\n\\tcmp %[pb], %[a]\\n\\tbne 2b\\n\\tadd sp, sp, #32";
            break :t s;
        }};
        var r0: i32 = undefined;
        var r1: i32 = undefined;
        var r2: i32 = undefined;
        var r3: i32 = undefined;
        var r4: i32 = undefined;
        var qa: *const i16 = undefined;
        var qb: *const i8 = undefined;
        var a: i32 = undefined;
        var qy: *i8 = undefined;
        var w0: i32 = undefined;
        var w1: i32 = undefined;
        var w2: i32 = undefined;
        var w3: i32 = undefined;
        if (comptime wregs == rows) {{
            var w4: i32 = undefined;
            asm volatile (text
                : [c0] "=&r" (r0),
                  [c1] "=&r" (r1),
                  [c2] "=&r" (r2),
                  [c3] "=&r" (r3),
                  [c4] "=&r" (r4),
                  [pa] "=&r" (qa),
                  [pb] "=&r" (qb),
                  [a] "=&r" (a),
                  [b] "=&r" (qy),
                  [w0] "=&r" (w0),
                  [w1] "=&r" (w1),
                  [w2] "=&r" (w2),
                  [w3] "=&r" (w3),
                  [w4] "=&r" (w4),
                : [ipa] "5" (pa),
                  [ipb] "6" (pb),
                  [shared] "7" (shared),
                  [ipy] "8" (py),
                : .{{ .memory = true, .cpsr = true, .s0 = fp }});
        }} else {{
            asm volatile (text
                : [c0] "=&r" (r0),
                  [c1] "=&r" (r1),
                  [c2] "=&r" (r2),
                  [c3] "=&r" (r3),
                  [c4] "=&r" (r4),
                  [pa] "=&r" (qa),
                  [pb] "=&r" (qb),
                  [a] "=&r" (a),
                  [b] "=&r" (qy),
                  [w0] "=&r" (w0),
                  [w1] "=&r" (w1),
                  [w2] "=&r" (w2),
                  [w3] "=&r" (w3),
                : [ipa] "5" (pa),
                  [ipb] "6" (pb),
                  [shared] "7" (shared),
                  [ipy] "8" (py),
                : .{{ .memory = true, .cpsr = true, .s0 = fp }});
        }}
        return;
    }}
    const w: [*]const i8 = @ptrCast(pb);
    const y: [*]i8 = @ptrCast(py);
    for (0..blocks) |block| {{
        const totals = zant_smlad_rows(steps, rows, pa, &w[4 * rows * (steps + 1) * block], shared);
        for (0..rows) |r| {{
            y[rows * block + r] = @intCast(zant_ssat(zant_smmla(totals[r], multiplier, addend), 8, shift));
        }}
    }}
}}""",
    ("zant_smlad_rows_text", "zant_smlad_rows", "zant_smmla", "zant_ssat"),
)


@irdl_op_definition
class SmladLayerOp(RequantAddendRowOp):
    """`arm_dsp.smlad_layer %pa, %pb, %shared, %py {steps = S, blocks = B, multiplier = M,
    addend = C, shift = H} : !uop.ptr<i16>, !uop.ptr<i8>, !uop.ptr<i8>`: a fully connected
    layer's B blocks of R = `SMLAD_ROWS` (5) rows, each `arm_dsp.smlad_rows` of R rows from
    `pb + 4R(S + 1)·b`, its sums s_r requantized as `arm_dsp.ssat` (8 bits, shift H) of
    `arm_dsp.smmla(s_r, M, C)` and stored at `py + Rb + r` (int8): the loop over blocks, their
    epilogues and stores in one asm block (`arm-dsp-requant`).
    Reach (its asm, as `reference`): pb's bytes [0, 4R(S + 1)·B) (pb runs on to the layer's end
    exactly), pa's as `smlad_rows`', py's [0, RB)."""

    name = "arm_dsp.smlad_layer"

    pa = operand_def(PtrType)
    pb = operand_def(PtrType)
    shared = operand_def(I32)
    py = operand_def(PtrType)
    steps = prop_def(IntAttr)
    blocks = prop_def(IntAttr)
    multiplier = prop_def(IntAttr)

    assembly_format = "$pa `,` $pb `,` $shared `,` $py attr-dict `:` type($pa) `,` type($pb) `,` type($py)"

    traits = _row_traits("pa", "pb")

    LAYOUT: ClassVar[tuple[str, ...]] = ("steps", "blocks", "multiplier", "addend", "shift")
    POINTERS: ClassVar[tuple[tuple[str, IntegerType], ...]] = (("pa", i16), ("pb", i8), ("py", i8))
    COUNTS: ClassVar[tuple[str, ...]] = ("steps", "blocks")
    INT32: ClassVar[tuple[str, ...]] = ("multiplier", "addend")
    ROWS: ClassVar[int] = SMLAD_ROWS

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers(
        "zant_smlad_layer", "zant_smlad_rows_text", "zant_smlad_rows", "zant_load_word16", "zant_load_word",
        "zant_sxtb16", "zant_smlad", "zant_smmla", "zant_ssat",
    )

    def __init__(
        self, pa: SSAValue, pb: SSAValue, shared: SSAValue, py: SSAValue, steps: int, blocks: int,
        multiplier: int, addend: int, shift: int,
    ):
        super().__init__(
            [pa, pb, shared, py], dict(steps=steps, blocks=blocks, multiplier=multiplier, addend=addend, shift=shift)
        )

    def reach(self) -> dict[str, Reach]:
        blocks = self.blocks.data
        return {**smlad_rows_reach(self.steps.data, self.ROWS, blocks), "py": Reach(0, self.ROWS * blocks)}

    def reference(self, pa: Read, pb: Read, shared: int, write) -> tuple[()]:
        steps, rows = self.steps.data, self.ROWS
        stride = 4 * rows * (steps + 1)
        values = []
        for block in range(self.blocks.data):
            def at(offsets: Sequence[int], base: int = block * stride) -> np.ndarray:
                return pb([base + o for o in offsets])

            totals = smlad_rows(pa, at, shared, steps, rows)
            values += [ssat(smmla(t, self.multiplier.data, self.addend.data), 8, self.shift.data) for t in totals]
        write(list(range(len(values))), np.array(values, np.int64).astype(np.int8))
        return ()

    def verify_(self) -> None:
        super().verify_()
        if 4 * self.ROWS * (self.steps.data + 1) * self.blocks.data >= 2**32:
            raise VerifyException("smlad_layer's weights span more than 4 GB")


ZIG_HELPER_SOURCES["zant_smlad_tile_row"] = ZigHelper(
    "zant_smlad_tile_row",
    f"""\
/// A row of 2 x 2 register tiles, each requantized and stored (arm_dsp.smlad_tile_row): for
/// each of `pairs` pairs q, the sums r_ij = c_i + zant_smlad_tile's reduction from pa and
/// pb + q·b_pair (i: a's rows, two output channels; j: b's, two pixels), each stored as
/// SSAT(#8, SMMLA(r_ij, m_i, addend), ASR #shift) at py + q·y_pair + i·y_next + j·y_pixel. On a
/// DSP core one asm block of 13 registers for the whole row, so no compiled loop spills and
/// reloads around each tile. a's words are the same for every tile: widened once, at the row's
/// start, into 16 bytes of stack per step (even and odd halves of each row), below the biases,
/// multipliers, Y's pointer and the addend; pa's register then holds pb's end. Per tile: the
/// biases into c00, c10 (LDRD), then per step b's two words and a's four halves loaded back to
/// back (6 loads in 7 cycles), each b word widened once (4 SXTB16), 8 SMLAD: 19 cycles per 16
/// products where widening a's words again for every tile took 21; the first step's second
/// pixel summed from the biases before the first pixel's sums move on (no copies); then the
/// multipliers, the addend and Y's pointer back to back, 4 SMMLA, 4 SSAT, 4 STRB. Two tiles a
/// pass where `pairs` is even and their steps few (at most 4: ~0.4 KB of code), halving the
/// pass's bookkeeping. Not inlined: LLVM weighed the asm as one instruction and unrolled the loop
/// over channel pairs around it, a copy of the asm per pair (vww_int8: +20 KB of flash).
noinline fn zant_smlad_tile_row(comptime steps: usize, comptime a_step: isize, comptime a_next: isize, comptime b_step: isize, comptime b_next: isize, comptime pairs: usize, comptime b_pair: isize, comptime y_pair: isize, comptime y_next: isize, comptime y_pixel: isize, comptime addend: i32, comptime shift: u5, pa: *const i8, pb: *const i8, py: *i8, c0: i32, c1: i32, m0: i32, m1: i32) void {{
    if (comptime {_HAS_DSP} and steps <= {SMLAD_TILE_STRAIGHT}) {{
        // (the second tile's loads and stores reach b_pair, y_pair further: within the immediates)
        const unroll: usize = comptime if (pairs % 2 == 0 and steps <= 4 and b_pair + (@as(isize, steps) - 1) * b_step + b_next < 4096 and
            y_pair + y_next + y_pixel < 4096 and 2 * b_pair < 4096 and 2 * y_pair < 4096) 2 else 1;
        // Tiles of three pixels where the pixels are evenly spaced and come in threes (b's third
        // word in pa's register, the third pixel's sums in e0, e1; pb's end on the stack).
        const triples = comptime b_pair == 2 * b_next and y_pair == 2 * y_pixel and (2 * pairs) % 3 == 0 and steps >= {ROW_TRIPLE_STEPS} and
            (@as(isize, steps) - 1) * b_step + 2 * b_next < 4096 and y_next + 2 * y_pixel < 4096 and 3 * b_next < 4096 and 3 * y_pixel < 4096;
        // Two tiles of three a pass where their steps are few, as for two-pixel tiles.
        const unroll3: usize = comptime if (triples and (2 * pairs / 3) % 2 == 0 and steps <= 4 and 3 * b_next + (@as(isize, steps) - 1) * b_step + 2 * b_next < 4096 and
            3 * y_pixel + y_next + 2 * y_pixel < 4096 and 6 * b_next < 4096 and 6 * y_pixel < 4096) 2 else 1;
        const body = comptime if (triples) text: {{
            const c: u32 = @bitCast(addend);
            const by = if (shift == 0) "" else std.fmt.comptimePrint(", asr #{{d}}", .{{shift}});
            const w: usize = 16 * steps;
            var text: []const u8 = std.fmt.comptimePrint(
                "sub sp, sp, #{{d}}\\n\\tstrd %[c00], %[c10], [sp, #{{d}}]\\n\\tstrd %[a0], %[a1], [sp, #{{d}}]\\n\\tstrd %[b], %[b1], [sp, #{{d}}]\\n\\t" ++
                    "movw %[t], #{{d}}\\n\\tmovt %[t], #{{d}}\\n\\tstr %[t], [sp, #{{d}}]\\n\\t",
                .{{ w + 32, w, w + 8, w + 16, c & 0xFFFF, c >> 16, w + 24 }},
            );
            for (0..steps) |i| {{
                const ia = @as(isize, @intCast(i)) * a_step;
                text = text ++ std.fmt.comptimePrint(
                    "ldr %[a0], [%[pa], #{{d}}]\\n\\tldr %[a1], [%[pa], #{{d}}]\\n\\tsxtb16 %[e0], %[a0]\\n\\tsxtb16 %[a0], %[a0], ror #8\\n\\t" ++
                        "sxtb16 %[e1], %[a1]\\n\\tsxtb16 %[a1], %[a1], ror #8\\n\\tstrd %[e0], %[a0], [sp, #{{d}}]\\n\\tstrd %[e1], %[a1], [sp, #{{d}}]\\n\\t",
                    .{{ ia, ia + a_next, 16 * i, 16 * i + 8 }},
                );
            }}
            text = text ++ "1:\\n\\t";
            for (0..unroll3) |u| {{
            const off = @as(isize, @intCast(u)) * 3 * b_next;
            const at = @as(isize, @intCast(u)) * 3 * y_pixel;
            text = text ++ std.fmt.comptimePrint("ldrd %[c00], %[c10], [sp, #{{d}}]\\n\\t", .{{w}});
            for (0..steps) |i| {{
                const ib = off + @as(isize, @intCast(i)) * b_step;
                // The third and second pixels' sums start from the biases (c00, c10 until the first's move on).
                const f0 = if (i == 0) "%[c00]" else "%[e0]";
                const f1 = if (i == 0) "%[c10]" else "%[e1]";
                const g0 = if (i == 0) "%[c00]" else "%[c01]";
                const g1 = if (i == 0) "%[c10]" else "%[c11]";
                text = text ++ std.fmt.comptimePrint(
                    "ldr %[b], [%[pb], #{{d}}]\\n\\tldr %[b1], [%[pb], #{{d}}]\\n\\tldr %[pa], [%[pb], #{{d}}]\\n\\tldr %[a0], [sp, #{{d}}]\\n\\tldr %[a1], [sp, #{{d}}]\\n\\t",
                    .{{ ib, ib + b_next, ib + 2 * b_next, 16 * i, 16 * i + 8 }},
                ) ++
                    "sxtb16 %[t], %[pa]\\n\\tsmlad %[e0], %[a0], %[t], " ++ f0 ++ "\\n\\tsmlad %[e1], %[a1], %[t], " ++ f1 ++ "\\n\\t" ++
                    "sxtb16 %[t], %[b1]\\n\\tsmlad %[c01], %[a0], %[t], " ++ g0 ++ "\\n\\tsmlad %[c11], %[a1], %[t], " ++ g1 ++ "\\n\\t" ++
                    "sxtb16 %[t], %[b]\\n\\tsmlad %[c00], %[a0], %[t], %[c00]\\n\\tsmlad %[c10], %[a1], %[t], %[c10]\\n\\t" ++
                    std.fmt.comptimePrint("ldr %[a0], [sp, #{{d}}]\\n\\tldr %[a1], [sp, #{{d}}]\\n\\t", .{{ 16 * i + 4, 16 * i + 12 }}) ++
                    "sxtb16 %[b], %[b], ror #8\\n\\tsmlad %[c00], %[a0], %[b], %[c00]\\n\\tsmlad %[c10], %[a1], %[b], %[c10]\\n\\t" ++
                    "sxtb16 %[b1], %[b1], ror #8\\n\\tsmlad %[c01], %[a0], %[b1], %[c01]\\n\\tsmlad %[c11], %[a1], %[b1], %[c11]\\n\\t" ++
                    "sxtb16 %[pa], %[pa], ror #8\\n\\tsmlad %[e0], %[a0], %[pa], %[e0]\\n\\tsmlad %[e1], %[a1], %[pa], %[e1]\\n\\t";
            }}
            text = text ++ std.fmt.comptimePrint(
                "ldr %[a0], [sp, #{{d}}]\\n\\tldr %[a1], [sp, #{{d}}]\\n\\tldr %[t], [sp, #{{d}}]\\n\\tldr %[b], [sp, #{{d}}]\\n\\t" ++
                    "smmla %[c00], %[c00], %[a0], %[t]\\n\\tsmmla %[c01], %[c01], %[a0], %[t]\\n\\tsmmla %[e0], %[e0], %[a0], %[t]\\n\\t" ++
                    "smmla %[c10], %[c10], %[a1], %[t]\\n\\tsmmla %[c11], %[c11], %[a1], %[t]\\n\\tsmmla %[e1], %[e1], %[a1], %[t]\\n\\t" ++
                    "ssat %[c00], #8, %[c00]{{s}}\\n\\tssat %[c01], #8, %[c01]{{s}}\\n\\tssat %[e0], #8, %[e0]{{s}}\\n\\t" ++
                    "ssat %[c10], #8, %[c10]{{s}}\\n\\tssat %[c11], #8, %[c11]{{s}}\\n\\tssat %[e1], #8, %[e1]{{s}}\\n\\t" ++
                    "strb %[c00], [%[b], #{{d}}]\\n\\tstrb %[c01], [%[b], #{{d}}]\\n\\tstrb %[e0], [%[b], #{{d}}]\\n\\t" ++
                    "strb %[c10], [%[b], #{{d}}]\\n\\tstrb %[c11], [%[b], #{{d}}]\\n\\tstrb %[e1], [%[b], #{{d}}]\\n\\t",
                .{{ w + 8, w + 12, w + 24, w + 16, by, by, by, by, by, by, at, at + y_pixel, at + 2 * y_pixel, at + y_next, at + y_next + y_pixel,
                   at + y_next + 2 * y_pixel }},
            );
            }}
            const span = @as(isize, @intCast(unroll3)) * 3;
            break :text text ++ std.fmt.comptimePrint(
                "add %[b], %[b], #{{d}}\\n\\tstr %[b], [sp, #{{d}}]\\n\\tadd %[pb], %[pb], #{{d}}\\n\\tldr %[b1], [sp, #{{d}}]\\n\\tcmp %[pb], %[b1]\\n\\tbne 1b\\n\\tadd sp, sp, #{{d}}",
                .{{ span * y_pixel, w + 16, span * b_next, w + 20, w + 32 }},
            );
        }} else text: {{
            const c: u32 = @bitCast(addend);
            const by = if (shift == 0) "" else std.fmt.comptimePrint(", asr #{{d}}", .{{shift}});
            // [sp, #16s]: step s's halves e0, o0, e1, o1; past them (at w), c0, c1, m0, m1, Y's pointer, the addend.
            const w: usize = 16 * steps;
            var text: []const u8 = std.fmt.comptimePrint(
                "sub sp, sp, #{{d}}\\n\\tstrd %[c00], %[c10], [sp, #{{d}}]\\n\\tstrd %[a0], %[a1], [sp, #{{d}}]\\n\\tstr %[b], [sp, #{{d}}]\\n\\t" ++
                    "movw %[t], #{{d}}\\n\\tmovt %[t], #{{d}}\\n\\tstr %[t], [sp, #{{d}}]\\n\\t",
                .{{ w + 32, w, w + 8, w + 16, c & 0xFFFF, c >> 16, w + 24 }},
            );
            for (0..steps) |i| {{
                const ia = @as(isize, @intCast(i)) * a_step;
                text = text ++ std.fmt.comptimePrint(
                    "ldr %[a0], [%[pa], #{{d}}]\\n\\tldr %[a1], [%[pa], #{{d}}]\\n\\tsxtb16 %[e0], %[a0]\\n\\tsxtb16 %[a0], %[a0], ror #8\\n\\t" ++
                        "sxtb16 %[e1], %[a1]\\n\\tsxtb16 %[a1], %[a1], ror #8\\n\\tstrd %[e0], %[a0], [sp, #{{d}}]\\n\\tstrd %[e1], %[a1], [sp, #{{d}}]\\n\\t",
                    .{{ ia, ia + a_next, 16 * i, 16 * i + 8 }},
                );
            }}
            text = text ++ "mov %[pa], %[b1]\\n\\t1:\\n\\t";
            for (0..unroll) |u| {{
                const off = @as(isize, @intCast(u)) * b_pair;
                const at = @as(isize, @intCast(u)) * y_pair;
                text = text ++ std.fmt.comptimePrint("ldrd %[c00], %[c10], [sp, #{{d}}]\\n\\t", .{{w}});
                for (0..steps) |i| {{
                    const ib = off + @as(isize, @intCast(i)) * b_step;
                    text = text ++ std.fmt.comptimePrint(
                        "ldr %[b], [%[pb], #{{d}}]\\n\\tldr %[b1], [%[pb], #{{d}}]\\n\\tldr %[e0], [sp, #{{d}}]\\n\\tldr %[e1], [sp, #{{d}}]\\n\\t" ++
                            "ldr %[a0], [sp, #{{d}}]\\n\\tldr %[a1], [sp, #{{d}}]\\n\\t",
                        .{{ ib, ib + b_next, 16 * i, 16 * i + 8, 16 * i + 4, 16 * i + 12 }},
                    );
                    const first = "sxtb16 %[t], %[b]\\n\\tsmlad %[c00], %[e0], %[t], %[c00]\\n\\tsmlad %[c10], %[e1], %[t], %[c10]\\n\\t";
                    // The second pixel's sums start from the biases (in c00, c10 until the first's move on).
                    const from = if (i == 0) [2][]const u8{{ "%[c00]", "%[c10]" }} else [2][]const u8{{ "%[c01]", "%[c11]" }};
                    const second = "sxtb16 %[t], %[b1]\\n\\tsmlad %[c01], %[e0], %[t], " ++ from[0] ++ "\\n\\tsmlad %[c11], %[e1], %[t], " ++ from[1] ++ "\\n\\t";
                    text = text ++ (if (i == 0) second ++ first else first ++ second) ++
                        "sxtb16 %[b], %[b], ror #8\\n\\tsmlad %[c00], %[a0], %[b], %[c00]\\n\\tsmlad %[c10], %[a1], %[b], %[c10]\\n\\t" ++
                        "sxtb16 %[b1], %[b1], ror #8\\n\\tsmlad %[c01], %[a0], %[b1], %[c01]\\n\\tsmlad %[c11], %[a1], %[b1], %[c11]\\n\\t";
                }}
                text = text ++ std.fmt.comptimePrint(
                    "ldr %[a0], [sp, #{{d}}]\\n\\tldr %[a1], [sp, #{{d}}]\\n\\tldr %[t], [sp, #{{d}}]\\n\\tldr %[b], [sp, #{{d}}]\\n\\t" ++
                        "smmla %[c00], %[c00], %[a0], %[t]\\n\\tsmmla %[c01], %[c01], %[a0], %[t]\\n\\t" ++
                        "smmla %[c10], %[c10], %[a1], %[t]\\n\\tsmmla %[c11], %[c11], %[a1], %[t]\\n\\t" ++
                        "ssat %[c00], #8, %[c00]{{s}}\\n\\tssat %[c01], #8, %[c01]{{s}}\\n\\tssat %[c10], #8, %[c10]{{s}}\\n\\tssat %[c11], #8, %[c11]{{s}}\\n\\t" ++
                        "strb %[c00], [%[b], #{{d}}]\\n\\tstrb %[c01], [%[b], #{{d}}]\\n\\tstrb %[c10], [%[b], #{{d}}]\\n\\tstrb %[c11], [%[b], #{{d}}]\\n\\t",
                    .{{ w + 8, w + 12, w + 24, w + 16, by, by, by, by, at, at + y_pixel, at + y_next, at + y_next + y_pixel }},
                );
            }}
            const span = @as(isize, @intCast(unroll));
            text = text ++ std.fmt.comptimePrint(
                "add %[b], %[b], #{{d}}\\n\\tstr %[b], [sp, #{{d}}]\\n\\tadd %[pb], %[pb], #{{d}}\\n\\tcmp %[pb], %[pa]\\n\\tbne 1b\\n\\tadd sp, sp, #{{d}}",
                .{{ span * y_pair, w + 16, span * b_pair, w + 32 }},
            );
            break :text text;
        }};
        const end: usize = @intFromPtr(pb) +% @as(usize, @bitCast(b_pair * @as(isize, pairs)));
        var r00: i32 = undefined;
        var r10: i32 = undefined;
        var r01: i32 = undefined;
        var r11: i32 = undefined;
        var qa: *const i8 = undefined;
        var qb: *const i8 = undefined;
        var a0: i32 = undefined;
        var a1: i32 = undefined;
        var b: usize = undefined;
        var b1: usize = undefined;
        var e0: i32 = undefined;
        var e1: i32 = undefined;
        var t: i32 = undefined;
        asm volatile (body
            : [c00] "=&r" (r00),
              [c10] "=&r" (r10),
              [c01] "=&r" (r01),
              [c11] "=&r" (r11),
              [pa] "=&r" (qa),
              [pb] "=&r" (qb),
              [a0] "=&r" (a0),
              [a1] "=&r" (a1),
              [b] "=&r" (b),
              [b1] "=&r" (b1),
              [e0] "=&r" (e0),
              [e1] "=&r" (e1),
              [t] "=&r" (t),
            : [i0] "0" (c0),
              [i1] "1" (c1),
              [ipa] "4" (pa),
              [ipb] "5" (pb),
              [im0] "6" (m0),
              [im1] "7" (m1),
              [ipy] "8" (@intFromPtr(py)),
              [iend] "9" (end),
            : .{{ .memory = true, .cpsr = true }});
        return;
    }}
    const b: [*]const i8 = @ptrCast(pb);
    const y: [*]i8 = @ptrCast(py);
    const multiplier = [2]i32{{ m0, m1 }};
    for (0..pairs) |q| {{
        const at: isize = @as(isize, @intCast(q));
        const r = zant_smlad_tile(steps, a_step, a_next, b_step, b_next, pa, &b[@intCast(at * b_pair)], c0, c1, c0, c1);
        for (0..2) |j| {{
            for (0..2) |i| {{
                const value = zant_ssat(zant_smmla(r[2 * j + i], multiplier[i], addend), 8, shift);
                y[@intCast(at * y_pair + @as(isize, @intCast(i)) * y_next + @as(isize, @intCast(j)) * y_pixel)] = @intCast(value);
            }}
        }}
    }}
}}""",
    ("zant_smlad_tile", "zant_smmla", "zant_ssat"),
    inline=False,
)


@irdl_op_definition
class SmladTileRowOp(RequantAddendRowOp):
    """`arm_dsp.smlad_tile_row %pa, %pb, %py, %c0, %c1, %m0, %m1 {steps, a_step, a_next, b_step,
    b_next, pairs = Q, b_pair, y_pair, y_next, y_pixel, addend = C, shift = H} : !uop.ptr<i8>,
    !uop.ptr<i8>, !uop.ptr<i8>`: Q 2 x 2 register tiles along a row of pixel pairs, each tile q
    the `arm_dsp.smlad_tile` of `pa` and `pb + q·b_pair` from the addends c_i (a's row i: one
    output channel's bias, for both of b's pixels j), each sum requantized as `arm_dsp.ssat`
    (8 bits, shift H) of `arm_dsp.smmla(r_ij, m_i, C)` and stored (int8) at `py + q·y_pair +
    i·y_next + j·y_pixel`: the loop, the epilogues and the stores in one asm block
    (`arm-dsp-tile-rows`).
    Reach (its asm, as `reference`): pa's bytes s·a_step + {0, a_next} + [0, 3], pb's
    q·b_pair + s·b_step + {0, b_next} + [0, 3], py's q·y_pair + {0, y_next} + {0, y_pixel} (s < steps, q < Q;
    two tiles or three pixels a pass only where they divide Q)."""

    name = "arm_dsp.smlad_tile_row"

    pa = operand_def(PtrType)
    pb = operand_def(PtrType)
    py = operand_def(PtrType)
    addend0 = operand_def(I32)
    addend1 = operand_def(I32)
    multiplier0 = operand_def(I32)
    multiplier1 = operand_def(I32)
    steps = prop_def(IntAttr)
    a_step = prop_def(IntAttr)
    a_next = prop_def(IntAttr)
    b_step = prop_def(IntAttr)
    b_next = prop_def(IntAttr)
    pairs = prop_def(IntAttr)
    b_pair = prop_def(IntAttr)
    y_pair = prop_def(IntAttr)
    y_next = prop_def(IntAttr)
    y_pixel = prop_def(IntAttr)

    assembly_format = (
        "$pa `,` $pb `,` $py `,` $addend0 `,` $addend1 `,` $multiplier0 `,` $multiplier1 attr-dict `:` "
        "type($pa) `,` type($pb) `,` type($py)"
    )

    traits = _row_traits("pa", "pb")

    LAYOUT: ClassVar[tuple[str, ...]] = ("steps", "a_step", "a_next", "b_step", "b_next", "pairs", "b_pair", "y_pair", "y_next", "y_pixel", "addend", "shift")
    POINTERS: ClassVar[tuple[tuple[str, IntegerType], ...]] = (("pa", i8), ("pb", i8), ("py", i8))
    COUNTS: ClassVar[tuple[str, ...]] = ("steps", "pairs")

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers(
        "zant_smlad_tile_row", "zant_smlad_tile", "zant_load_word", "zant_smlad_bytes", "zant_sxtb16", "zant_smlad",
        "zant_smmla", "zant_ssat",
    )

    def __init__(
        self, pa: SSAValue, pb: SSAValue, py: SSAValue, addends: Sequence[SSAValue], multipliers: Sequence[SSAValue],
        **layout: int,
    ):
        super().__init__([pa, pb, py, *addends, *multipliers], layout)

    def reach(self) -> dict[str, Reach]:
        p = self.layout()
        tile = (p[n] for n in ("steps", "a_step", "a_next", "b_step", "b_next"))
        return {
            **smlad_tile_reach(*tile, (p["pairs"], p["b_pair"])),
            "py": Reach.span(1, (p["pairs"], p["y_pair"]), (2, p["y_next"]), (2, p["y_pixel"])),
        }

    def reference(self, pa: Read, pb: Read, py, c0: int, c1: int, m0: int, m1: int) -> tuple[()]:
        p = self.layout()
        offsets, values = [], []
        for q in range(p["pairs"]):
            def at(offsets: Sequence[int], base: int = q * p["b_pair"]) -> np.ndarray:
                return pb([base + o for o in offsets])

            tile = smlad_tile(pa, at, [c0, c1, c0, c1], *(p[n] for n in ("steps", "a_step", "a_next", "b_step", "b_next")))
            for (i, j), total in zip(((0, 0), (1, 0), (0, 1), (1, 1)), tile):
                offsets.append(q * p["y_pair"] + i * p["y_next"] + j * p["y_pixel"])
                values.append(ssat(smmla(total, (m0, m1)[i], p["addend"]), 8, p["shift"]))
        py(offsets, np.array(values, np.int64).astype(np.int8))
        return ()

    def verify_(self) -> None:
        super().verify_()
        _verify_store_offsets(self)


DEPTHWISE_OUTPUTS = 4
"""Outputs of a row an `arm_dsp.depthwise_step` computes."""

DEPTHWISE_TAPS = 3
"""Taps per row of a depthwise window an `arm_dsp.depthwise_step` reads."""

ZIG_HELPER_SOURCES["zant_depthwise_step_text"] = ZigHelper(
    "zant_depthwise_step_text",
    """\
/// The assembly of a depthwise step's products (zant_depthwise_step), the sums' start in c0:
/// per row of taps its two weight words (LDRD) and its words loaded back to back, then their
/// halves' products; the first row's products start c1, c2 and c3 from c0 (no moves).
fn zant_depthwise_step_text(comptime stride: usize, comptime rows: usize, comptime x_row: isize) []const u8 {{
    var text: []const u8 = "";
    for (0..rows) |r| {{
        const o: isize = @as(isize, @intCast(r)) * x_row;
        const from = [4][]const u8{{ "%[c0]", if (r == 0) "%[c0]" else "%[c1]", if (r == 0) "%[c0]" else "%[c2]", if (r == 0) "%[c0]" else "%[c3]" }};
        text = text ++ std.fmt.comptimePrint("ldrd %[w], %[m], [%[pw], #{{d}}]\\n\\tldr %[a], [%[px], #{{d}}]\\n\\tldr %[b], [%[px], #{{d}}]\\n\\t", .{{ 8 * r, o, o + 2 * @as(isize, stride) }}) ++
            "sxtb16 %[e], %[a]\\n\\tsxtb16 %[a], %[a], ror #8\\n\\tsxtb16 %[f], %[b]\\n\\tsxtb16 %[b], %[b], ror #8\\n\\t";
        if (stride == 1) {{
            // words x[0..3] = (e, a), x[2..5] = (f, b)
            text = text ++ "smlad %[c1], %[a], %[w], " ++ from[1] ++ "\\n\\tsmlad %[c2], %[f], %[w], " ++ from[2] ++ "\\n\\t" ++
                "smlad %[c3], %[b], %[w], " ++ from[3] ++ "\\n\\tsmlad %[c0], %[e], %[w], %[c0]\\n\\t" ++
                "smlabb %[c0], %[a], %[m], %[c0]\\n\\tsmlatb %[c1], %[e], %[m], %[c1]\\n\\t" ++
                "smlabb %[c2], %[b], %[m], %[c2]\\n\\tsmlatb %[c3], %[f], %[m], %[c3]\\n\\t";
        }} else {{
            // words x[0..3] = (e, a), x[4..7] = (f, b), then the byte x[8] in a
            text = text ++ "smlatb %[c1], %[a], %[m], " ++ from[1] ++ "\\n\\tsmlabb %[c2], %[b], %[m], " ++ from[2] ++ "\\n\\t" ++
                "smlatb %[c3], %[f], %[w], " ++ from[3] ++ "\\n\\tsmlad %[c0], %[e], %[w], %[c0]\\n\\tsmlabb %[c0], %[a], %[m], %[c0]\\n\\t" ++
                std.fmt.comptimePrint("ldrsb %[a], [%[px], #{{d}}]\\n\\t", .{{o + 8}}) ++
                "pkhbt %[e], %[f], %[e]\\n\\tsmladx %[c1], %[e], %[w], %[c1]\\n\\tsmlad %[c2], %[f], %[w], %[c2]\\n\\t" ++
                "smlatb %[c3], %[b], %[m], %[c3]\\n\\tsmlabt %[c3], %[a], %[w], %[c3]\\n\\t";
        }}
    }}
    return text;
}}""".format(),
    inline=False,
)


ZIG_HELPER_SOURCES["zant_depthwise_step"] = ZigHelper(
    "zant_depthwise_step",
    f"""\
/// 4 consecutive outputs of a depthwise row (arm_dsp.depthwise_step): for each of `rows` rows
/// of taps r, with x = px + r·x_row, (w0, w2) = pw[2r] (int16 halves) and w1 = pw[2r + 1],
/// c_j += w0·x[stride·j] + w1·x[stride·j + 1] + w2·x[stride·j + 2], each c_j from c. On a DSP
/// core one asm block of 12 registers (4 sums, 2 pointers, a row's two weight words, 4
/// scratch), a row's weights (LDRD) and words loaded back to back. Stride 1, words x[0..3] =
/// (E, O) and x[2..5] = (E', O'): c0 += SMLAD(E, w02) + O.b·w1, c1 += SMLAD(O, w02) + E.t·w1,
/// the same for c2, c3 from E', O' (14 instructions a row for 12 products). Stride 2, words
/// x[0..3], x[4..7] and the byte x[8]: c0 as above, c1 += SMLADX(PKHBT(E', E), w02) + O.t·w1
/// (x4·w2 + x2·w0: the pair packed from both words), c2 += SMLAD(E', w02) + O'.b·w1, c3 +=
/// E'.t·w0 + O'.t·w1 + x8·w2 (18 instructions for 12 products, where a word per output took
/// 20). Reads the taps' bytes only.
inline fn zant_depthwise_step(comptime stride: usize, comptime rows: usize, comptime x_row: isize, px: *const i8, pw: *const i32, c: i32) [4]i32 {{
    if (comptime {_HAS_DSP}) {{
        const body = comptime zant_depthwise_step_text(stride, rows, x_row);
        var r0: i32 = undefined;
        var r1: i32 = undefined;
        var r2: i32 = undefined;
        var r3: i32 = undefined;
        var w: i32 = undefined;
        var m: i32 = undefined;
        var a: i32 = undefined;
        var b: i32 = undefined;
        var e: i32 = undefined;
        var f: i32 = undefined;
        asm volatile (body
            : [c0] "=&r" (r0),
              [c1] "=&r" (r1),
              [c2] "=&r" (r2),
              [c3] "=&r" (r3),
              [w] "=&r" (w),
              [m] "=&r" (m),
              [a] "=&r" (a),
              [b] "=&r" (b),
              [e] "=&r" (e),
              [f] "=&r" (f),
            : [ic] "0" (c),
              [px] "r" (px),
              [pw] "r" (pw),
            : .{{ .memory = true, .cpsr = true }});
        return .{{ r0, r1, r2, r3 }};
    }}
    const x: [*]const i8 = @ptrCast(px);
    const t: [*]const i32 = @ptrCast(pw);
    var sums = [4]i32{{ c, c, c, c }};
    for (0..rows) |r| {{
        const both = t[2 * r];
        const taps = [3]i32{{ @as(i16, @truncate(both)), t[2 * r + 1], @as(i16, @truncate(both >> 16)) }};
        for (0..4) |j| {{
            for (0..3) |k| {{
                const at: isize = @as(isize, @intCast(r)) * x_row + @as(isize, @intCast(stride * j + k));
                sums[j] +%= @as(i32, x[@intCast(at)]) *% taps[k];
            }}
        }}
    }}
    return sums;
}}""",
    ("zant_depthwise_step_text",),
)


def depthwise_step_reach(stride: int, rows: int, x_row: int, *px_axes: tuple[int, int]) -> dict[str, Reach]:
    """The bytes an `arm_dsp.depthwise_step`'s taps cover from px (`px_axes`: px's further
    offsets, a row's steps) and its weight words from pw."""
    taps = stride * (DEPTHWISE_OUTPUTS - 1) + DEPTHWISE_TAPS
    return {"px": Reach.span(taps, (rows, x_row), *px_axes), "pw": Reach.span(8, (rows, 8))}


def depthwise_step(px: Read, pw: Read, c: int, stride: int, rows: int, x_row: int) -> tuple[int, ...]:
    """`arm_dsp.depthwise_step`'s sums: per row of taps r, (w0, w2) the halves of pw[2r] and w1
    the low half of pw[2r + 1] (a sign-extended int8 in both), c_j + Σ_k w_k·x[r·x_row +
    stride·j + k], wrapping."""
    sums = [c] * DEPTHWISE_OUTPUTS
    for r in range(rows):
        both, middle = (int(v) for v in pw([2 * r, 2 * r + 1]))
        taps = (_half(both, 0), _half(middle, 0), _half(both, 16))
        x = px([r * x_row + k for k in range(stride * (DEPTHWISE_OUTPUTS - 1) + DEPTHWISE_TAPS)])
        for j in range(DEPTHWISE_OUTPUTS):
            for k in range(DEPTHWISE_TAPS):
                sums[j] = wrap_signed(sums[j] + int(x[stride * j + k]) * taps[k])
    return tuple(sums)


@irdl_op_definition
class DepthwiseStepOp(IRDLOperation):
    """`%r0, %r1, %r2, %r3 = arm_dsp.depthwise_step %px, %pw, %c {stride = S, rows = R, x_row
    = …} : !uop.ptr<i8>, !uop.ptr<i32>`: 4 consecutive outputs of a depthwise row with 3 taps a
    row (`conv_depthwise`), `r_j = c + Σ_{r<R, k<3} w_rk·x[r·x_row + S·j + k]` wrapping, where x
    is the int8 row at `px` (the first output's first tap, rows x_row bytes apart) and w_r0,
    w_r2 the 16-bit halves of the int32 at `pw + 2r`, w_r1 the low half of the one at `pw + 2r
    + 1` (`conv_depthwise.paired_tap_weights`' rows). One asm block the target compiler does
    not schedule, reading only the taps' bytes.
    Reach: px's bytes r·x_row + [0, 3S + 2] (words at 0 and 2, or 0, 4 and the byte
    8), pw's [0, 8R); within `DEPTHWISE_REACH` of px."""

    name = "arm_dsp.depthwise_step"

    px = operand_def(PtrType)
    pw = operand_def(PtrType)
    addend = operand_def(I32)
    stride = prop_def(IntAttr)
    rows = prop_def(IntAttr)
    x_row = prop_def(IntAttr)
    sums = var_result_def(I32)

    assembly_format = "$px `,` $pw `,` $addend attr-dict `:` type($px) `,` type($pw) `->` type($sums)"

    traits = traits_def(Accesses(MemoryEffectKind.READ, "px"), Accesses(MemoryEffectKind.READ, "pw"))
    irdl_options = (ParsePropInAttrDict(),)

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers("zant_depthwise_step", "zant_depthwise_step_text")
    ZIG_RESULTS: ClassVar[str] = "step"

    def __init__(self, px: SSAValue, pw: SSAValue, addend: SSAValue, stride: int, rows: int, x_row: int):
        super().__init__(
            operands=[px, pw, addend], result_types=[[IntegerType(32)] * DEPTHWISE_OUTPUTS],
            properties={"stride": IntAttr(stride), "rows": IntAttr(rows), "x_row": IntAttr(x_row)},
        )

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_depthwise_step", (str(self.stride.data), str(self.rows.data), str(self.x_row.data), *args))

    def reach(self) -> dict[str, Reach]:
        return depthwise_step_reach(self.stride.data, self.rows.data, self.x_row.data)

    def reference(self, px: Read, pw: Read, c: int) -> tuple[int, ...]:
        return depthwise_step(px, pw, c, self.stride.data, self.rows.data, self.x_row.data)

    def verify_(self) -> None:
        if len(self.sums) != DEPTHWISE_OUTPUTS:
            raise VerifyException(f"depthwise_step has {DEPTHWISE_OUTPUTS} sums, got {len(self.sums)}")
        _verify_pointers(self, DEPTHWISE_POINTERS)
        _verify_depthwise(self, self.stride.data, self.rows.data, self.x_row.data)


DEPTHWISE_STRIDES = (1, 2)
"""Strides of a row `arm_dsp.depthwise_step` reads."""

DEPTHWISE_REACH = 4095
"""The largest byte offset from px a depthwise step reaches (an `LDR` immediate)."""


DEPTHWISE_POINTERS: tuple[tuple[str, IntegerType], ...] = (("px", i8), ("pw", i32))
"""The pointers a depthwise step reads: int8 taps, int32 weight words."""


def _verify_depthwise(op: Operation, stride: int, rows: int, x_row: int) -> None:
    """What `arm_dsp.depthwise_step` and `arm_dsp.depthwise_row` require of their properties."""
    if stride not in DEPTHWISE_STRIDES:
        raise VerifyException(f"{op.name} reads rows at stride 1 or 2, got {stride}")
    if not 1 <= rows <= DEPTHWISE_TAPS:
        raise VerifyException(f"{op.name} takes 1 to 3 rows of taps, got {rows}")
    reach = depthwise_step_reach(stride, rows, x_row)["px"].hi - 1
    if x_row < 1 or reach > DEPTHWISE_REACH:
        raise VerifyException(f"{op.name}'s taps lie within {DEPTHWISE_REACH} bytes of px, rows at least 1 byte apart, got x_row = {x_row}")



ZIG_HELPER_SOURCES["zant_depthwise_row_held_text"] = ZigHelper(
    "zant_depthwise_row_held_text",
    """\
/// The assembly of a stride-1 depthwise row (zant_depthwise_row): the rows' weights loaded once
/// into 5 registers (w0..w2 the (w0, w2) words, m01 the first two rows' w1 as halves, m2 the
/// third's; pw arrives in m2's register), then per step and row of taps each word x[0..3],
/// x[2..5] loaded and widened into (e, a) and its 4 products taken before the next (2 scratch
/// registers), the first row's starting c1..c3 from c0 (its second word first); the multiplier
/// (arriving in a), px's end and the addend below sp beside the sums' start. At stride 2 (a
/// 14th register, f) the words x[0..3] and x[4..7] are loaded together, x[8] after them.
fn zant_depthwise_row_held_text(comptime stride: usize, comptime rows: usize, comptime x_row: isize, comptime steps: usize, comptime y_step: usize, comptime addend: i32, comptime shift: u5) []const u8 {{
    const span: u32 = 4 * stride * steps;
    const add: u32 = @bitCast(addend);
    var text: []const u8 = std.fmt.comptimePrint(
        "sub sp, sp, #16\\n\\tstr %[c0], [sp]\\n\\tstr %[a], [sp, #4]\\n\\t" ++
            "movw %[a], #{{d}}\\n\\tmovt %[a], #{{d}}\\n\\tadd %[a], %[a], %[px]\\n\\tstr %[a], [sp, #8]\\n\\t" ++
            "movw %[a], #{{d}}\\n\\tmovt %[a], #{{d}}\\n\\tstr %[a], [sp, #12]\\n\\t",
        .{{ span & 0xFFFF, span >> 16, add & 0xFFFF, add >> 16 }},
    );
    const words = [3][]const u8{{ "%[w0]", "%[w1]", "%[w2]" }};
    const middles = [3][]const u8{{ "%[m01]", "%[m01]", "%[m2]" }};
    const halves = [3][]const u8{{ "b", "t", "b" }};
    // the w1 of rows 0 and 1 first into a and e (packed into m01), the last load overwrites pw
    const firsts = [3][]const u8{{ "%[a]", "%[e]", "%[m2]" }};
    for (0..rows) |r| {{
        text = text ++ std.fmt.comptimePrint("ldr " ++ words[r] ++ ", [%[m2], #{{d}}]\\n\\t", .{{8 * r}});
    }}
    for (0..rows) |r| {{
        const into = if (r + 1 == rows) "%[m2]" else firsts[r];
        text = text ++ std.fmt.comptimePrint("ldr " ++ into ++ ", [%[m2], #{{d}}]\\n\\t", .{{8 * r + 4}});
    }}
    if (rows == 2) text = text ++ "pkhbt %[m01], %[a], %[m2], lsl #16\\n\\t";
    if (rows == 3) text = text ++ "pkhbt %[m01], %[a], %[e], lsl #16\\n\\t";
    // rows 1: m2 holds row 0's w1 (its bottom half); 2: m01 both; 3: m01 and m2
    text = text ++ "1:\\n\\tldr %[c0], [sp]\\n\\t";
    for (0..rows) |r| {{
        const o: isize = @as(isize, @intCast(r)) * x_row;
        const w = words[r];
        const m = if (rows == 1) "%[m2]" else middles[r];
        const h = if (rows == 1) "b" else halves[r];
        const first = r == 0;
        if (stride == 2) {{
            // A = x[0..3] in a, B = x[4..7] in f; B's halves first (c2, c3 from the start in
            // row 0), then A's, then the byte x[8]; c0 last (it holds the start in row 0)
            text = text ++ std.fmt.comptimePrint("ldr %[a], [%[px], #{{d}}]\\n\\tldr %[f], [%[px], #{{d}}]\\n\\t", .{{ o, o + 4 }}) ++
                "sxtb16 %[e], %[f]\\n\\t" ++
                "smlad %[c2], %[e], " ++ w ++ ", " ++ (if (first) "%[c0]" else "%[c2]") ++ "\\n\\t" ++
                "smlatb %[c3], %[e], " ++ w ++ ", " ++ (if (first) "%[c0]" else "%[c3]") ++ "\\n\\t" ++
                "sxtb16 %[f], %[f], ror #8\\n\\t" ++
                "smlab" ++ h ++ " %[c2], %[f], " ++ m ++ ", %[c2]\\n\\t" ++
                "smlat" ++ h ++ " %[c3], %[f], " ++ m ++ ", %[c3]\\n\\t" ++
                "sxtb16 %[f], %[a]\\n\\tsxtb16 %[a], %[a], ror #8\\n\\t" ++
                "smlat" ++ h ++ " %[c1], %[a], " ++ m ++ ", " ++ (if (first) "%[c0]" else "%[c1]") ++ "\\n\\t" ++
                "pkhbt %[e], %[e], %[f]\\n\\tsmladx %[c1], %[e], " ++ w ++ ", %[c1]\\n\\t" ++
                "smlad %[c0], %[f], " ++ w ++ ", %[c0]\\n\\t" ++
                "smlab" ++ h ++ " %[c0], %[a], " ++ m ++ ", %[c0]\\n\\t" ++
                std.fmt.comptimePrint("ldrsb %[a], [%[px], #{{d}}]\\n\\t", .{{o + 8}}) ++
                "smlabt %[c3], %[a], " ++ w ++ ", %[c3]\\n\\t";
            continue;
        }}
        const word_a = std.fmt.comptimePrint("ldr %[a], [%[px], #{{d}}]\\n\\t", .{{o}}) ++
            "sxtb16 %[e], %[a]\\n\\tsxtb16 %[a], %[a], ror #8\\n\\t" ++
            "smlad %[c1], %[a], " ++ w ++ ", " ++ (if (first) "%[c0]" else "%[c1]") ++ "\\n\\t" ++
            "smlad %[c0], %[e], " ++ w ++ ", %[c0]\\n\\t" ++
            "smlab" ++ h ++ " %[c0], %[a], " ++ m ++ ", %[c0]\\n\\t" ++
            "smlat" ++ h ++ " %[c1], %[e], " ++ m ++ ", %[c1]\\n\\t";
        const word_b = std.fmt.comptimePrint("ldr %[a], [%[px], #{{d}}]\\n\\t", .{{o + 2}}) ++
            "sxtb16 %[e], %[a]\\n\\tsxtb16 %[a], %[a], ror #8\\n\\t" ++
            "smlad %[c3], %[a], " ++ w ++ ", " ++ (if (first) "%[c0]" else "%[c3]") ++ "\\n\\t" ++
            "smlad %[c2], %[e], " ++ w ++ ", " ++ (if (first) "%[c0]" else "%[c2]") ++ "\\n\\t" ++
            "smlab" ++ h ++ " %[c2], %[a], " ++ m ++ ", %[c2]\\n\\t" ++
            "smlat" ++ h ++ " %[c3], %[e], " ++ m ++ ", %[c3]\\n\\t";
        text = text ++ (if (first) word_b ++ word_a else word_a ++ word_b);
    }}
    const by = if (shift == 0) "" else std.fmt.comptimePrint(", asr #{{d}}", .{{shift}});
    text = text ++ "ldr %[a], [sp, #4]\\n\\tldr %[e], [sp, #12]\\n\\t";
    const sums = [4][]const u8{{ "%[c0]", "%[c1]", "%[c2]", "%[c3]" }};
    for (sums, 0..) |sum, j| {{
        text = text ++ "smmla " ++ sum ++ ", " ++ sum ++ ", %[a], %[e]\\n\\tssat " ++ sum ++ ", #8, " ++ sum ++ by ++
            std.fmt.comptimePrint("\\n\\tstrb " ++ sum ++ ", [%[py], #{{d}}]\\n\\t", .{{j * y_step}});
    }}
    return text ++ std.fmt.comptimePrint(
        "add %[px], %[px], #{{d}}\\n\\tadd %[py], %[py], #{{d}}\\n\\tldr %[a], [sp, #8]\\n\\tcmp %[px], %[a]\\n\\tbne 1b\\n\\tadd sp, sp, #16",
        .{{ 4 * stride, 4 * y_step }},
    );
}}""".format(),
    inline=False,
)


ZIG_HELPER_SOURCES["zant_depthwise_row"] = ZigHelper(
    "zant_depthwise_row",
    f"""\
/// `steps` zant_depthwise_step's along a row (arm_dsp.depthwise_row), the s-th from px +
/// 4·stride·s, each sum requantized as SSAT(#8, SMMLA(c, multiplier, addend), ASR #shift) and
/// stored at py + (4s + j)·y_step. On a DSP core one asm loop, the sums' start, the multiplier,
/// px's end and the addend in 16 bytes below sp. At stride 1, and at stride 2 where the build
/// keeps no frame pointer (ReleaseFast, ReleaseSmall: 14 registers), the rows' weights are held
/// in registers for the whole row (zant_depthwise_row_held_text; VWW's 48 -> 24 layer on the
/// L4R5 235.0 k -> 219.5 k cycles); else 13 registers (the step's 12 and py), each step loading
/// its rows' weight words (LDRD) into the registers that then take the multiplier and the
/// addend for the epilogue. A step at stride 1 is 6 LDR, 12 SXTB16, 24 products and 4 x
/// (SMMLA, SSAT, STRB) for 4 outputs; no
/// compiled loop runs around it (LLVM unrolled one around each zant_depthwise_step: VWW's
/// 24x24x32 layer's kernel grew to 1.9 KB, past the L4R5's 1 KB instruction cache, and took
/// 921 k cycles where the row form took 415 k).
inline fn zant_depthwise_row(comptime stride: usize, comptime rows: usize, comptime x_row: isize, comptime steps: usize, comptime y_step: usize, comptime addend: i32, comptime shift: u5, px: *const i8, pw: *const i32, c: i32, multiplier: i32, py: *i8) void {{
    if (comptime {_HAS_DSP} and stride == 1) {{
        const body = comptime zant_depthwise_row_held_text(stride, rows, x_row, steps, y_step, addend, shift);
        var r0: i32 = undefined;
        var r1: i32 = undefined;
        var r2: i32 = undefined;
        var r3: i32 = undefined;
        var qx: *const i8 = undefined;
        var qy: *i8 = undefined;
        var w0: i32 = undefined;
        var w1: i32 = undefined;
        var w2: i32 = undefined;
        var m01: i32 = undefined;
        var m2: usize = undefined;
        var a: i32 = undefined;
        var e: i32 = undefined;
        asm volatile (body
            : [c0] "=&r" (r0),
              [c1] "=&r" (r1),
              [c2] "=&r" (r2),
              [c3] "=&r" (r3),
              [px] "=&r" (qx),
              [py] "=&r" (qy),
              [w0] "=&r" (w0),
              [w1] "=&r" (w1),
              [w2] "=&r" (w2),
              [m01] "=&r" (m01),
              [m2] "=&r" (m2),
              [a] "=&r" (a),
              [e] "=&r" (e),
            : [ic] "0" (c),
              [ipx] "4" (px),
              [ipy] "5" (py),
              [ipw] "10" (pw),
              [imul] "11" (multiplier),
            : .{{ .memory = true, .cpsr = true }});
        return;
    }}
    const mode = @import("builtin").mode;
    if (comptime {_HAS_DSP} and stride == 2 and (mode == .fast or mode == .small)) {{
        const body = comptime zant_depthwise_row_held_text(stride, rows, x_row, steps, y_step, addend, shift);
        var r0: i32 = undefined;
        var r1: i32 = undefined;
        var r2: i32 = undefined;
        var r3: i32 = undefined;
        var qx: *const i8 = undefined;
        var qy: *i8 = undefined;
        var w0: i32 = undefined;
        var w1: i32 = undefined;
        var w2: i32 = undefined;
        var m01: i32 = undefined;
        var m2: usize = undefined;
        var a: i32 = undefined;
        var e: i32 = undefined;
        var f: i32 = undefined;
        asm volatile (body
            : [c0] "=&r" (r0),
              [c1] "=&r" (r1),
              [c2] "=&r" (r2),
              [c3] "=&r" (r3),
              [px] "=&r" (qx),
              [py] "=&r" (qy),
              [w0] "=&r" (w0),
              [w1] "=&r" (w1),
              [w2] "=&r" (w2),
              [m01] "=&r" (m01),
              [m2] "=&r" (m2),
              [a] "=&r" (a),
              [e] "=&r" (e),
              [f] "=&r" (f),
            : [ic] "0" (c),
              [ipx] "4" (px),
              [ipy] "5" (py),
              [ipw] "10" (pw),
              [imul] "11" (multiplier),
            : .{{ .memory = true, .cpsr = true }});
        return;
    }}
    if (comptime {_HAS_DSP}) {{
        const body = comptime text: {{
            const span: u32 = 4 * stride * steps;
            const add: u32 = @bitCast(addend);
            var text: []const u8 = std.fmt.comptimePrint(
                "sub sp, sp, #16\\n\\tstr %[c0], [sp]\\n\\tstr %[w], [sp, #4]\\n\\t" ++
                    "movw %[a], #{{d}}\\n\\tmovt %[a], #{{d}}\\n\\tadd %[a], %[a], %[px]\\n\\tstr %[a], [sp, #8]\\n\\t" ++
                    "movw %[a], #{{d}}\\n\\tmovt %[a], #{{d}}\\n\\tstr %[a], [sp, #12]\\n" ++
                    "1:\\n\\tldr %[c0], [sp]\\n\\t",
                .{{ span & 0xFFFF, span >> 16, add & 0xFFFF, add >> 16 }},
            );
            text = text ++ zant_depthwise_step_text(stride, rows, x_row);
            const by = if (shift == 0) "" else std.fmt.comptimePrint(", asr #{{d}}", .{{shift}});
            text = text ++ "ldr %[w], [sp, #4]\\n\\tldr %[m], [sp, #12]\\n\\t";
            const sums = [4][]const u8{{ "%[c0]", "%[c1]", "%[c2]", "%[c3]" }};
            for (sums, 0..) |sum, j| {{
                text = text ++ "smmla " ++ sum ++ ", " ++ sum ++ ", %[w], %[m]\\n\\tssat " ++ sum ++ ", #8, " ++ sum ++ by ++
                    std.fmt.comptimePrint("\\n\\tstrb " ++ sum ++ ", [%[py], #{{d}}]\\n\\t", .{{j * y_step}});
            }}
            break :text text ++ std.fmt.comptimePrint(
                "add %[px], %[px], #{{d}}\\n\\tadd %[py], %[py], #{{d}}\\n\\tldr %[a], [sp, #8]\\n\\tcmp %[px], %[a]\\n\\tbne 1b\\n\\tadd sp, sp, #16",
                .{{ 4 * stride, 4 * y_step }},
            );
        }};
        var r0: i32 = undefined;
        var r1: i32 = undefined;
        var r2: i32 = undefined;
        var r3: i32 = undefined;
        var qx: *const i8 = undefined;
        var qw: *const i32 = undefined;
        var qy: *i8 = undefined;
        var w: i32 = undefined;
        var m: i32 = undefined;
        var a: i32 = undefined;
        var b: i32 = undefined;
        var e: i32 = undefined;
        var f: i32 = undefined;
        asm volatile (body
            : [c0] "=&r" (r0),
              [c1] "=&r" (r1),
              [c2] "=&r" (r2),
              [c3] "=&r" (r3),
              [px] "=&r" (qx),
              [pw] "=&r" (qw),
              [py] "=&r" (qy),
              [w] "=&r" (w),
              [m] "=&r" (m),
              [a] "=&r" (a),
              [b] "=&r" (b),
              [e] "=&r" (e),
              [f] "=&r" (f),
            : [ic] "0" (c),
              [ipx] "4" (px),
              [ipw] "5" (pw),
              [ipy] "6" (py),
              [imul] "7" (multiplier),
            : .{{ .memory = true, .cpsr = true }});
        return;
    }}
    const x: [*]const i8 = @ptrCast(px);
    const y: [*]i8 = @ptrCast(py);
    for (0..steps) |s| {{
        const sums = zant_depthwise_step(stride, rows, x_row, &x[4 * stride * s], pw, c);
        for (sums, 0..) |sum, j| {{
            y[(4 * s + j) * y_step] = @intCast(zant_ssat(zant_smmla(sum, multiplier, addend), 8, shift));
        }}
    }}
}}""",
    ("zant_depthwise_row_held_text", "zant_depthwise_row_held_text", "zant_depthwise_step_text", "zant_depthwise_step", "zant_smmla", "zant_ssat"),
)


def depthwise_row(px: Read, pw: Read, c: int, multiplier: int, stride: int, rows: int, x_row: int, steps: int, addend: int, shift: int) -> list[int]:
    """`arm_dsp.depthwise_row`'s outputs in order (the step's 4, step after step)."""
    values = []
    for s in range(steps):
        def at(offsets: Sequence[int], base: int = DEPTHWISE_OUTPUTS * stride * s) -> np.ndarray:
            return px([base + o for o in offsets])

        values += [ssat(smmla(t, multiplier, addend), 8, shift) for t in depthwise_step(at, pw, c, stride, rows, x_row)]
    return values


@irdl_op_definition
class DepthwiseRowOp(RequantAddendRowOp):
    """`arm_dsp.depthwise_row %px, %pw, %c, %multiplier, %py {stride = S, rows = R, x_row = …,
    steps = N, y_step = …, addend = A, shift = H} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>`:
    N `arm_dsp.depthwise_step`s along a row (the s-th from `px + 4·S·s`), each sum r requantized
    as `arm_dsp.ssat` (8 bits, shift H) of `arm_dsp.smmla(r, multiplier, A)` and stored at `py
    + (4s + j)·y_step` (int8): the loop over a row's steps, their epilogues and stores in one
    asm block (`arm-dsp-depthwise-rows`).
    Reach (its asm, as `reference`): px's bytes 4S·s + `depthwise_step`'s (s < N, the loop
    ending at px + 4S·N exactly), pw's [0, 8R), py's (4s + j)·y_step (j < 4)."""

    name = "arm_dsp.depthwise_row"

    px = operand_def(PtrType)
    pw = operand_def(PtrType)
    start = operand_def(I32)
    multiplier = operand_def(I32)
    py = operand_def(PtrType)
    stride = prop_def(IntAttr)
    rows = prop_def(IntAttr)
    x_row = prop_def(IntAttr)
    steps = prop_def(IntAttr)
    y_step = prop_def(IntAttr)

    assembly_format = "$px `,` $pw `,` $start `,` $multiplier `,` $py attr-dict `:` type($px) `,` type($pw) `,` type($py)"

    traits = _row_traits("px", "pw")

    LAYOUT: ClassVar[tuple[str, ...]] = ("stride", "rows", "x_row", "steps", "y_step", "addend", "shift")
    POINTERS: ClassVar[tuple[tuple[str, IntegerType], ...]] = (*DEPTHWISE_POINTERS, ("py", i8))
    COUNTS: ClassVar[tuple[str, ...]] = ("steps",)
    MAX_Y_STEP: ClassVar[int] = 1023
    """The largest y_step: the asm advances py by 4·y_step, an `ADD` immediate below 4096."""

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers(
        "zant_depthwise_row", "zant_depthwise_row_held_text", "zant_depthwise_step_text", "zant_depthwise_step",
        "zant_smmla", "zant_ssat",
    )

    def __init__(
        self, px: SSAValue, pw: SSAValue, start: SSAValue, multiplier: SSAValue, py: SSAValue, stride: int, rows: int,
        x_row: int, steps: int, y_step: int, addend: int, shift: int,
    ):
        super().__init__(
            [px, pw, start, multiplier, py],
            dict(stride=stride, rows=rows, x_row=x_row, steps=steps, y_step=y_step, addend=addend, shift=shift),
        )

    def reach(self) -> dict[str, Reach]:
        stride, steps = self.stride.data, self.steps.data
        return {
            **depthwise_step_reach(stride, self.rows.data, self.x_row.data, (steps, DEPTHWISE_OUTPUTS * stride)),
            "py": Reach.span(1, (DEPTHWISE_OUTPUTS * steps, self.y_step.data)),
        }

    def reference(self, px: Read, pw: Read, start: int, multiplier: int, write) -> tuple[()]:
        values = depthwise_row(
            px, pw, start, multiplier, self.stride.data, self.rows.data, self.x_row.data, self.steps.data,
            self.addend.data, self.shift.data,
        )
        write([o * self.y_step.data for o in range(len(values))], np.array(values, np.int64).astype(np.int8))
        return ()

    def verify_(self) -> None:
        super().verify_()
        _verify_depthwise(self, self.stride.data, self.rows.data, self.x_row.data)
        if not 1 <= self.y_step.data <= self.MAX_Y_STEP:
            raise VerifyException(f"depthwise_row's outputs are 1 to {self.MAX_Y_STEP} bytes apart, got {self.y_step.data}")
        if DEPTHWISE_OUTPUTS * self.stride.data * self.steps.data >= 2**32:
            raise VerifyException("depthwise_row's input spans more than 4 GB")


DEPTHWISE_SHORT_WIDTH = 6
"""Inputs (and outputs) of the row an `arm_dsp.depthwise_short_row` computes whole: VWW's
6x6x128 layers' rows, one pad each side."""

ZIG_HELPER_SOURCES["zant_depthwise_short_row_text"] = ZigHelper(
    "zant_depthwise_short_row_text",
    """\
/// The assembly of a 6-wide depthwise row's sums (zant_depthwise_short_row): per row of taps
/// its weight words (LDRD), then the words x[2..5] and x[0..3] one after the other into two
/// scratch registers, each word's 6 products taken before the next is loaded; in the first
/// row x[2..5]'s come first, c3 and c4 starting from the interior's start in c1, then c2
/// from it before c1's own products.
fn zant_depthwise_short_row_text(comptime rows: usize, comptime x_row: isize) []const u8 {{
    var text: []const u8 = "";
    for (0..rows) |r| {{
        const o: isize = @as(isize, @intCast(r)) * x_row;
        const from = if (r == 0) "%[c1]" else "";
        text = text ++ std.fmt.comptimePrint("ldrd %[w], %[m], [%[pw], #{{d}}]\\n\\tldr %[a], [%[px], #{{d}}]\\n\\t", .{{ 8 * r, o + 2 }}) ++
            // E = (x2, x4), O = (x3, x5)
            "sxtb16 %[e], %[a]\\n\\tsxtb16 %[a], %[a], ror #8\\n\\t" ++
            "smlad %[c3], %[e], %[w], " ++ (if (r == 0) from else "%[c3]") ++ "\\n\\tsmlabb %[c3], %[a], %[m], %[c3]\\n\\t" ++
            "smlad %[c4], %[a], %[w], " ++ (if (r == 0) from else "%[c4]") ++ "\\n\\tsmlatb %[c4], %[e], %[m], %[c4]\\n\\t" ++
            "smlatb %[c5], %[e], %[w], %[c5]\\n\\tsmlatb %[c5], %[a], %[m], %[c5]\\n\\t" ++
            std.fmt.comptimePrint("ldr %[a], [%[px], #{{d}}]\\n\\t", .{{o}}) ++
            // E = (x0, x2), O = (x1, x3)
            "sxtb16 %[e], %[a]\\n\\tsxtb16 %[a], %[a], ror #8\\n\\t" ++
            "smlad %[c2], %[a], %[w], " ++ (if (r == 0) from else "%[c2]") ++ "\\n\\tsmlatb %[c2], %[e], %[m], %[c2]\\n\\t" ++
            "smlad %[c1], %[e], %[w], %[c1]\\n\\tsmlabb %[c1], %[a], %[m], %[c1]\\n\\t" ++
            "smlabb %[c0], %[e], %[m], %[c0]\\n\\tsmlabt %[c0], %[a], %[w], %[c0]\\n\\t";
    }}
    return text;
}}""".format(),
    inline=False,
)


ZIG_HELPER_SOURCES["zant_depthwise_short_row"] = ZigHelper(
    "zant_depthwise_short_row",
    f"""\
/// The 6 sums of a 6-wide depthwise row with one pad each side (arm_dsp.depthwise_short_row):
/// for each of `rows` rows of taps r, with x = px + r·x_row, (w0, w2) = pw[2r] (int16 halves)
/// and w1 = pw[2r + 1], c0 = s0 + w1·x0 + w2·x1, c_j = s1 + w0·x[j-1] + w1·x[j] + w2·x[j+1]
/// (j = 1..4), c5 = s2 + w0·x4 + w1·x5. On a DSP core one asm block of 12 registers (6 sums, 2
/// pointers, a row's two weight words, 2 scratch): per row of taps 1 LDRD, 2 LDR, 4 SXTB16, 4
/// SMLAD and 8 SMLAxy for 16 products, where LLVM's straight-line code took about 126 cycles
/// a row of 3 rows of taps with its epilogue on the L4R5. Reads the row's 6 bytes only.
inline fn zant_depthwise_short_row(comptime rows: usize, comptime x_row: isize, px: *const i8, pw: *const i32, s0: i32, s1: i32, s2: i32) [6]i32 {{
    if (comptime {_HAS_DSP}) {{
        const body = comptime zant_depthwise_short_row_text(rows, x_row);
        var r0: i32 = undefined;
        var r1: i32 = undefined;
        var r2: i32 = undefined;
        var r3: i32 = undefined;
        var r4: i32 = undefined;
        var r5: i32 = undefined;
        var w: i32 = undefined;
        var m: i32 = undefined;
        var a: i32 = undefined;
        var e: i32 = undefined;
        asm volatile (body
            : [c0] "=&r" (r0),
              [c1] "=&r" (r1),
              [c2] "=&r" (r2),
              [c3] "=&r" (r3),
              [c4] "=&r" (r4),
              [c5] "=&r" (r5),
              [w] "=&r" (w),
              [m] "=&r" (m),
              [a] "=&r" (a),
              [e] "=&r" (e),
            : [is0] "0" (s0),
              [is1] "1" (s1),
              [is2] "5" (s2),
              [px] "r" (px),
              [pw] "r" (pw),
            : .{{ .memory = true, .cpsr = true }});
        return .{{ r0, r1, r2, r3, r4, r5 }};
    }}
    const x: [*]const i8 = @ptrCast(px);
    const t: [*]const i32 = @ptrCast(pw);
    var sums = [6]i32{{ s0, s1, s1, s1, s1, s2 }};
    for (0..rows) |r| {{
        const both = t[2 * r];
        const taps = [3]i32{{ @as(i16, @truncate(both)), t[2 * r + 1], @as(i16, @truncate(both >> 16)) }};
        for (0..6) |j| {{
            for (0..3) |k| {{
                if (j + k == 0 or j + k == 7) continue; // the pads
                const at: isize = @as(isize, @intCast(r)) * x_row + @as(isize, @intCast(j + k)) - 1;
                sums[j] +%= @as(i32, x[@intCast(at)]) *% taps[k];
            }}
        }}
    }}
    return sums;
}}""",
    ("zant_depthwise_short_row_text",),
)


def depthwise_short_row_reach(rows: int, x_row: int, *px_axes: tuple[int, int]) -> dict[str, Reach]:
    """The bytes an `arm_dsp.depthwise_short_row`'s rows cover from px (`px_axes`: px's further
    offsets, a channel's rows) and its weight words from pw."""
    return {"px": Reach.span(DEPTHWISE_SHORT_WIDTH, (rows, x_row), *px_axes), "pw": Reach.span(8, (rows, 8))}


def depthwise_short_row(px: Read, pw: Read, starts: Sequence[int], rows: int, x_row: int) -> tuple[int, ...]:
    """`arm_dsp.depthwise_short_row`'s sums: per row of taps r, (w0, w2) the halves of pw[2r] and
    w1 the low half of pw[2r + 1], output j from its start (starts[0] the first, starts[1] the
    interior's, starts[2] the last) plus Σ_k w_k·x[r·x_row + j + k - 1] over the taps inside
    the row, wrapping."""
    width = DEPTHWISE_SHORT_WIDTH
    sums = [starts[0], *([starts[1]] * (width - 2)), starts[2]]
    for r in range(rows):
        both, middle = (int(v) for v in pw([2 * r, 2 * r + 1]))
        taps = (_half(both, 0), _half(middle, 0), _half(both, 16))
        x = px([r * x_row + i for i in range(width)])
        for j in range(width):
            for k in range(DEPTHWISE_TAPS):
                if 0 <= j + k - 1 < width:
                    sums[j] = wrap_signed(sums[j] + int(x[j + k - 1]) * taps[k])
    return tuple(sums)


@irdl_op_definition
class DepthwiseShortRowOp(IRDLOperation):
    """`%r0, …, %r5 = arm_dsp.depthwise_short_row %px, %pw, %s0, %s1, %s2 {rows = R, x_row = …}
    : !uop.ptr<i8>, !uop.ptr<i32>`: the sums of a 6-wide depthwise row with 3 taps a row and
    one pad each side (`conv_depthwise.short_row`), its padded taps left out: `r_j = s + Σ_{r<R,
    k<3, 0 <= j+k-1 < 6} w_rk·x[r·x_row + j + k - 1]` wrapping, s being s0 for the first output,
    s2 for the last and s1 between, x the int8 row at `px` (rows x_row bytes apart) and w_r0,
    w_r2 the 16-bit halves of the int32 at `pw + 2r`, w_r1 the low half of the one at `pw + 2r
    + 1` (`conv_depthwise.paired_tap_weights`' rows). One asm block the target compiler does
    not schedule, reading only the rows' 6 bytes.
    Reach: px's bytes r·x_row + [0, 5] (words at 2 and 0), pw's [0,
    8R); within `DEPTHWISE_REACH` of px."""

    name = "arm_dsp.depthwise_short_row"

    px = operand_def(PtrType)
    pw = operand_def(PtrType)
    starts = var_operand_def(I32)
    rows = prop_def(IntAttr)
    x_row = prop_def(IntAttr)
    sums = var_result_def(I32)

    assembly_format = "$px `,` $pw `,` $starts attr-dict `:` type($px) `,` type($pw) `->` type($sums)"

    traits = traits_def(Accesses(MemoryEffectKind.READ, "px"), Accesses(MemoryEffectKind.READ, "pw"))
    irdl_options = (ParsePropInAttrDict(),)

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers("zant_depthwise_short_row", "zant_depthwise_short_row_text")
    ZIG_RESULTS: ClassVar[str] = "short"

    def __init__(self, px: SSAValue, pw: SSAValue, starts: Sequence[SSAValue], rows: int, x_row: int):
        super().__init__(
            operands=[px, pw, list(starts)], result_types=[[IntegerType(32)] * DEPTHWISE_SHORT_WIDTH],
            properties={"rows": IntAttr(rows), "x_row": IntAttr(x_row)},
        )

    def zig_call(self, args: Sequence[str]) -> ZigCall:
        return ZigCall("zant_depthwise_short_row", (str(self.rows.data), str(self.x_row.data), *args))

    def reach(self) -> dict[str, Reach]:
        return depthwise_short_row_reach(self.rows.data, self.x_row.data)

    def reference(self, px: Read, pw: Read, *starts: int) -> tuple[int, ...]:
        return depthwise_short_row(px, pw, starts, self.rows.data, self.x_row.data)

    def verify_(self) -> None:
        if len(self.starts) != 3 or len(self.sums) != DEPTHWISE_SHORT_WIDTH:
            raise VerifyException(f"depthwise_short_row takes 3 starts and has {DEPTHWISE_SHORT_WIDTH} sums")
        for ptr, element, what in ((self.px, IntegerType(8), "int8 taps"), (self.pw, IntegerType(32), "int32 weight words")):
            assert isinstance(ptr.type, PtrType)
            if ptr.type.element_type != element:
                raise VerifyException(f"depthwise_short_row reads {what}, got a pointer to {ptr.type.element_type}")
        if not 1 <= self.rows.data <= DEPTHWISE_TAPS:
            raise VerifyException(f"depthwise_short_row takes 1 to 3 rows of taps, got {self.rows.data}")
        reach = depthwise_short_row_reach(self.rows.data, self.x_row.data)["px"].hi - 1
        if self.x_row.data < 1 or reach > DEPTHWISE_REACH:
            raise VerifyException(
                f"depthwise_short_row's taps lie within {DEPTHWISE_REACH} bytes of px, rows at least 1 byte apart, got x_row = {self.x_row.data}"
            )


ZIG_HELPER_SOURCES["zant_depthwise_short_rows"] = ZigHelper(
    "zant_depthwise_short_rows",
    f"""\
/// `count` zant_depthwise_short_row's (arm_dsp.depthwise_short_rows), the i-th from px +
/// i·x_next, each sum requantized as SSAT(#8, SMMLA(c, multiplier, addend), ASR #shift) and
/// stored at py + i·y_next + j·y_step. On a DSP core one asm loop of 13 registers, the sums'
/// starts, the multiplier, the addend and px's end in 24 bytes below sp: LLVM fully unrolled a
/// compiled loop of 4 rows around the asm block of zant_depthwise_short_row (VWW's 6x6x128
/// interior kernel 1.7 KB, past the L4R5's 1 KB instruction cache: 122 k -> 195 k cycles).
inline fn zant_depthwise_short_rows(comptime rows: usize, comptime x_row: isize, comptime count: usize, comptime x_next: usize, comptime y_step: usize, comptime y_next: usize, comptime shift: u5, px: *const i8, pw: *const i32, s0: i32, s1: i32, s2: i32, multiplier: i32, addend: i32, py: *i8) void {{
    if (comptime {_HAS_DSP}) {{
        const body = comptime text: {{
            const span: u32 = count * x_next;
            var text: []const u8 = std.fmt.comptimePrint(
                "sub sp, sp, #24\\n\\tstr %[c0], [sp]\\n\\tstr %[c1], [sp, #4]\\n\\tstr %[c5], [sp, #8]\\n\\t" ++
                    "str %[a], [sp, #12]\\n\\tstr %[e], [sp, #16]\\n\\t" ++
                    "movw %[a], #{{d}}\\n\\tmovt %[a], #{{d}}\\n\\tadd %[a], %[a], %[px]\\n\\tstr %[a], [sp, #20]\\n" ++
                    "1:\\n\\tldr %[c0], [sp]\\n\\tldr %[c1], [sp, #4]\\n\\tldr %[c5], [sp, #8]\\n\\t",
                .{{ span & 0xFFFF, span >> 16 }},
            );
            text = text ++ zant_depthwise_short_row_text(rows, x_row);
            const by = if (shift == 0) "" else std.fmt.comptimePrint(", asr #{{d}}", .{{shift}});
            text = text ++ "ldr %[w], [sp, #12]\\n\\tldr %[m], [sp, #16]\\n\\t";
            const sums = [6][]const u8{{ "%[c0]", "%[c1]", "%[c2]", "%[c3]", "%[c4]", "%[c5]" }};
            for (sums, 0..) |sum, j| {{
                text = text ++ "smmla " ++ sum ++ ", " ++ sum ++ ", %[w], %[m]\\n\\tssat " ++ sum ++ ", #8, " ++ sum ++ by ++
                    std.fmt.comptimePrint("\\n\\tstrb " ++ sum ++ ", [%[py], #{{d}}]\\n\\t", .{{j * y_step}});
            }}
            break :text text ++ std.fmt.comptimePrint(
                "add %[px], %[px], #{{d}}\\n\\tadd %[py], %[py], #{{d}}\\n\\tldr %[a], [sp, #20]\\n\\tcmp %[px], %[a]\\n\\tbne 1b\\n\\tadd sp, sp, #24",
                .{{ x_next, y_next }},
            );
        }};
        var r0: i32 = undefined;
        var r1: i32 = undefined;
        var r2: i32 = undefined;
        var r3: i32 = undefined;
        var r4: i32 = undefined;
        var r5: i32 = undefined;
        var qx: *const i8 = undefined;
        var qw: *const i32 = undefined;
        var qy: *i8 = undefined;
        var w: i32 = undefined;
        var m: i32 = undefined;
        var a: i32 = undefined;
        var e: i32 = undefined;
        asm volatile (body
            : [c0] "=&r" (r0),
              [c1] "=&r" (r1),
              [c2] "=&r" (r2),
              [c3] "=&r" (r3),
              [c4] "=&r" (r4),
              [c5] "=&r" (r5),
              [px] "=&r" (qx),
              [pw] "=&r" (qw),
              [py] "=&r" (qy),
              [w] "=&r" (w),
              [m] "=&r" (m),
              [a] "=&r" (a),
              [e] "=&r" (e),
            : [is0] "0" (s0),
              [is1] "1" (s1),
              [is2] "5" (s2),
              [ipx] "6" (px),
              [ipw] "7" (pw),
              [ipy] "8" (py),
              [imul] "11" (multiplier),
              [iadd] "12" (addend),
            : .{{ .memory = true, .cpsr = true }});
        return;
    }}
    const x: [*]const i8 = @ptrCast(px);
    const y: [*]i8 = @ptrCast(py);
    for (0..count) |i| {{
        const sums = zant_depthwise_short_row(rows, x_row, &x[i * x_next], pw, s0, s1, s2);
        for (sums, 0..) |sum, j| {{
            y[i * y_next + j * y_step] = @intCast(zant_ssat(zant_smmla(sum, multiplier, addend), 8, shift));
        }}
    }}
}}""",
    ("zant_depthwise_short_row_text", "zant_depthwise_short_row", "zant_smmla", "zant_ssat"),
)


@irdl_op_definition
class DepthwiseShortRowsOp(RequantRowOp):
    """`arm_dsp.depthwise_short_rows %px, %pw, %s0, %s1, %s2, %multiplier, %addend, %py {rows =
    R, x_row = …, count = N, x_next = …, y_step = …, y_next = …, shift = H} : !uop.ptr<i8>,
    !uop.ptr<i32>, !uop.ptr<i8>`: N `arm_dsp.depthwise_short_row`s (the i-th from `px +
    i·x_next`), each sum j requantized as `arm_dsp.ssat` (8 bits, shift H) of
    `arm_dsp.smmla(sum, multiplier, addend)` and stored at `py + i·y_next + j·y_step` (int8):
    a loop over a channel's rows, their epilogues and stores in one asm block
    (`arm-dsp-depthwise-rows`).
    Reach (its asm, as `reference`): px's bytes i·x_next + `depthwise_short_row`'s (i <
    N, the loop ending at px + N·x_next exactly), pw's [0, 8R), py's i·y_next + j·y_step (j < 6)."""

    name = "arm_dsp.depthwise_short_rows"

    px = operand_def(PtrType)
    pw = operand_def(PtrType)
    starts = var_operand_def(I32)
    multiplier = operand_def(I32)
    addend = operand_def(I32)
    py = operand_def(PtrType)
    rows = prop_def(IntAttr)
    x_row = prop_def(IntAttr)
    count = prop_def(IntAttr)
    x_next = prop_def(IntAttr)
    y_step = prop_def(IntAttr)
    y_next = prop_def(IntAttr)

    assembly_format = (
        "$px `,` $pw `,` `[` $starts `]` `,` $multiplier `,` $addend `,` $py attr-dict `:` type($px) `,` type($pw) `,` type($py)"
    )

    traits = _row_traits("px", "pw")

    LAYOUT: ClassVar[tuple[str, ...]] = ("rows", "x_row", "count", "x_next", "y_step", "y_next", "shift")
    POINTERS: ClassVar[tuple[tuple[str, IntegerType], ...]] = (*DEPTHWISE_POINTERS, ("py", i8))
    COUNTS: ClassVar[tuple[str, ...]] = ("count",)
    MAX_OFFSET: ClassVar[int] = 4095
    """The largest x_next, y_next and 5·y_step: `ADD` and `STRB` immediates."""

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers(
        "zant_depthwise_short_rows", "zant_depthwise_short_row", "zant_depthwise_short_row_text", "zant_smmla", "zant_ssat",
    )

    def __init__(
        self, px: SSAValue, pw: SSAValue, starts: Sequence[SSAValue], multiplier: SSAValue, addend: SSAValue, py: SSAValue,
        rows: int, x_row: int, count: int, x_next: int, y_step: int, y_next: int, shift: int,
    ):
        super().__init__(
            [px, pw, list(starts), multiplier, addend, py],
            dict(rows=rows, x_row=x_row, count=count, x_next=x_next, y_step=y_step, y_next=y_next, shift=shift),
        )

    def reach(self) -> dict[str, Reach]:
        count = self.count.data
        return {
            **depthwise_short_row_reach(self.rows.data, self.x_row.data, (count, self.x_next.data)),
            "py": Reach.span(1, (count, self.y_next.data), (DEPTHWISE_SHORT_WIDTH, self.y_step.data)),
        }

    def reference(self, px: Read, pw: Read, s0: int, s1: int, s2: int, multiplier: int, addend: int, write) -> tuple[()]:
        for i in range(self.count.data):
            def at(offsets: Sequence[int], base: int = i * self.x_next.data) -> np.ndarray:
                return px([base + o for o in offsets])

            sums = depthwise_short_row(at, pw, (s0, s1, s2), self.rows.data, self.x_row.data)
            values = [ssat(smmla(t, multiplier, addend), 8, self.shift.data) for t in sums]
            places = [i * self.y_next.data + j * self.y_step.data for j in range(len(values))]
            write(places, np.array(values, np.int64).astype(np.int8))
        return ()

    def verify_(self) -> None:
        super().verify_()
        if len(self.starts) != 3:
            raise VerifyException("depthwise_short_rows takes 3 starts")
        if not 1 <= self.rows.data <= DEPTHWISE_TAPS or self.x_row.data < 1:
            raise VerifyException("depthwise_short_rows takes 1 to 3 rows of taps at least 1 byte apart")
        if depthwise_short_row_reach(self.rows.data, self.x_row.data)["px"].hi - 1 > DEPTHWISE_REACH:
            raise VerifyException(f"depthwise_short_rows' taps lie within {DEPTHWISE_REACH} bytes of px")
        if not 1 <= self.x_next.data <= self.MAX_OFFSET or not 1 <= self.y_next.data <= self.MAX_OFFSET:
            raise VerifyException(f"depthwise_short_rows' rows are 1 to {self.MAX_OFFSET} bytes apart")
        if not 1 <= self.y_step.data or (DEPTHWISE_SHORT_WIDTH - 1) * self.y_step.data > self.MAX_OFFSET:
            raise VerifyException(f"depthwise_short_rows' outputs lie within {self.MAX_OFFSET} bytes of py")
        if self.count.data * self.x_next.data >= 2**32:
            raise VerifyException("depthwise_short_rows' input spans more than 4 GB")


ZIG_HELPER_SOURCES["zant_smlad_block_steps_text"] = ZigHelper(
    "zant_smlad_block_steps_text",
    """\
/// The assembly of a 4 x 2 register block's reduction over `steps` steps, as zant_smlad_block's,
/// for the asm of the row ops (zant_smlad_block_row, zant_smlad_quad_row): x0, x1 the words of
/// pa's two rows (a_next words apart), w, v those of pb's rows 2h and 2h + 1 (b_next words
/// apart), into the sums c<row of pb><row of pa>. Straight for 8 steps or fewer; else a loop
/// from label 2 (the caller closes it) of passes of 8, 7, 4, 2 or 1 steps (4 at most for size),
/// each pointer's first load of a pass advancing it by the pass (post-indexed) and its other
/// loads reaching back from there, so a pass adds nothing; the caller puts the pointers back.
fn zant_smlad_block_steps_text(comptime steps: usize, comptime a_next: isize, comptime b_next: isize, comptime small: bool) []const u8 {
    const straight = steps <= 8;
    const most: usize = if (small) 4 else 8;
    const unroll: usize = if (straight) steps else if (steps % 8 == 0 and most == 8) 8 else if (steps % 7 == 0 and most == 8) 7 else if (steps % 4 == 0) 4 else if (steps % 2 == 0) 2 else 1;
    const pass: isize = if (straight) 0 else 4 * @as(isize, @intCast(unroll));
    const sums = [4][2][]const u8{ .{ "%[c00]", "%[c01]" }, .{ "%[c10]", "%[c11]" }, .{ "%[c20]", "%[c21]" }, .{ "%[c30]", "%[c31]" } };
    var text: []const u8 = if (straight) "" else "2:\\n\\t";
    for (0..unroll) |k| {
        const at: isize = 4 * @as(isize, @intCast(k)) - (if (k == 0) 0 else pass);
        const first = !straight and k == 0;
        text = text ++ (if (first) std.fmt.comptimePrint("ldr %[x0], [%[pa]], #{d}\\n\\t", .{pass}) else std.fmt.comptimePrint("ldr %[x0], [%[pa], #{d}]\\n\\t", .{at})) ++
            std.fmt.comptimePrint("ldr %[x1], [%[pa], #{d}]\\n\\t", .{(if (first) at - pass else at) + 4 * a_next});
        for (0..2) |h| {
            const r0 = 2 * h;
            const w_at = (if (first and h > 0) at - pass else at) + 4 * b_next * @as(isize, @intCast(r0));
            const w_load = if (first and h == 0) std.fmt.comptimePrint("ldr %[w], [%[pb]], #{d}\\n\\t", .{pass}) else std.fmt.comptimePrint("ldr %[w], [%[pb], #{d}]\\n\\t", .{w_at});
            const v_at = (if (first) at - pass else at) + 4 * b_next * @as(isize, @intCast(r0 + 1));
            text = text ++ w_load ++ std.fmt.comptimePrint("ldr %[v], [%[pb], #{d}]\\n\\t", .{v_at}) ++
                "smlad " ++ sums[r0][0] ++ ", %[x0], %[w], " ++ sums[r0][0] ++ "\\n\\t" ++
                "smlad " ++ sums[r0][1] ++ ", %[x1], %[w], " ++ sums[r0][1] ++ "\\n\\t" ++
                "smlad " ++ sums[r0 + 1][0] ++ ", %[x0], %[v], " ++ sums[r0 + 1][0] ++ "\\n\\t" ++
                "smlad " ++ sums[r0 + 1][1] ++ ", %[x1], %[v], " ++ sums[r0 + 1][1] ++ "\\n\\t";
        }
    }
    return text;
}""",
    inline=False,
)


ZIG_HELPER_SOURCES["zant_smlad_grid_asm"] = ZigHelper(
    "zant_smlad_grid_asm",
    """\
/// The asm statement of a row of 4 x 2 register blocks (zant_smlad_block_row, zant_smlad_quad_row):
/// `body` over 14 registers, the 8 sums c00 .. c31 and pa, pb, x0, x1, w, v, the first 12
/// starting as `in` (the row's biases and multipliers, then pa, pb, py and the loop's end).
inline fn zant_smlad_grid_asm(comptime body: []const u8, in: [12]usize) void {
    var c00: usize = undefined;
    var c01: usize = undefined;
    var c10: usize = undefined;
    var c11: usize = undefined;
    var c20: usize = undefined;
    var c21: usize = undefined;
    var c30: usize = undefined;
    var c31: usize = undefined;
    var pa: usize = undefined;
    var pb: usize = undefined;
    var x0: usize = undefined;
    var x1: usize = undefined;
    var w: usize = undefined;
    var v: usize = undefined;
    asm volatile (body
        : [c00] "=&r" (c00),
          [c01] "=&r" (c01),
          [c10] "=&r" (c10),
          [c11] "=&r" (c11),
          [c20] "=&r" (c20),
          [c21] "=&r" (c21),
          [c30] "=&r" (c30),
          [c31] "=&r" (c31),
          [pa] "=&r" (pa),
          [pb] "=&r" (pb),
          [x0] "=&r" (x0),
          [x1] "=&r" (x1),
          [w] "=&r" (w),
          [v] "=&r" (v),
        : [i0] "0" (in[0]),
          [i1] "1" (in[1]),
          [i2] "2" (in[2]),
          [i3] "3" (in[3]),
          [i4] "4" (in[4]),
          [i5] "5" (in[5]),
          [i6] "6" (in[6]),
          [i7] "7" (in[7]),
          [i8] "8" (in[8]),
          [i9] "9" (in[9]),
          [i10] "10" (in[10]),
          [i11] "11" (in[11]),
        : .{ .memory = true, .cpsr = true });
}""",
)


ZIG_HELPER_SOURCES["zant_smlad_block_row"] = ZigHelper(
    "zant_smlad_block_row",
    """\
/// A row of 4 x 2 register blocks, each requantized and stored (arm_dsp.smlad_block_row): for
/// each of `pairs` pixel pairs q, the sums r_ij = c_i + zant_smlad_block's reduction of
/// pa + q·a_pair and pb (i: 4 output channels, b's rows; j: 2 pixels, a's; offsets in words),
/// each stored as SSAT(#8, SMMLA(r_ij, m_i, addend), ASR #shift) at py + q·y_pair + i·y_next +
/// j·y_pixel. Built for speed or size, one asm block of 14 registers for the whole row: the
/// biases, multipliers, addend, Y's pointer and the two ends live on the stack (48 bytes), so
/// no compiled loop spills and reloads the block's registers around each block (the first
/// convs' blocks took ~130 cycles a pixel pair of that). Per block: the biases into the sums (2
/// LDRD, 4 MOV), the reduction as zant_smlad_block's (16 cycles a step; passes of 8, 7, 4, 2
/// or 1 steps past 8, pb put back after), then 2 LDRD of the multipliers, the addend and Y's
/// pointer, 8 SMMLA, 8 SSAT, 8 STRB. Not inlined (as zant_smlad_tile_row: LLVM would unroll
/// the loop over blocks around copies of it). Other modes (a frame pointer leaves 13
/// registers): the same sums in plain Zig, each product a zant_smlad.
noinline fn zant_smlad_block_row(comptime steps: usize, comptime a_next: isize, comptime b_next: isize, comptime pairs: usize, comptime a_pair: isize, comptime y_pair: isize, comptime y_next: isize, comptime y_pixel: isize, comptime addend: i32, comptime shift: u5, pa: *const i32, pb: *const i32, py: *i8, c0: i32, c1: i32, c2: i32, c3: i32, m0: i32, m1: i32, m2: i32, m3: i32) void {
    const mode = @import("builtin").mode;
    if (comptime HAS_DSP and (mode == .fast or mode == .small)) {
        const body = comptime text: {
            const straight = steps <= 8;
            const c: u32 = @bitCast(addend);
            const by = if (shift == 0) "" else std.fmt.comptimePrint(", asr #{d}", .{shift});
            const sums = [4][2][]const u8{ .{ "%[c00]", "%[c01]" }, .{ "%[c10]", "%[c11]" }, .{ "%[c20]", "%[c21]" }, .{ "%[c30]", "%[c31]" } };
            // [sp]: c0..c3, m0..m3, the addend, Y's pointer, pa's end, pb's end of a reduction.
            var text: []const u8 = std.fmt.comptimePrint(
                "sub sp, sp, #48\\n\\tstrd %[c00], %[c01], [sp, #0]\\n\\tstrd %[c10], %[c11], [sp, #8]\\n\\tstrd %[c20], %[c21], [sp, #16]\\n\\t" ++
                    "strd %[c30], %[c31], [sp, #24]\\n\\tmovw %[w], #{d}\\n\\tmovt %[w], #{d}\\n\\tstrd %[w], %[x0], [sp, #32]\\n\\t" ++
                    "str %[x1], [sp, #40]\\n\\tadd %[w], %[pb], #{d}\\n\\tstr %[w], [sp, #44]\\n\\t1:\\n\\t" ++
                    "ldrd %[c00], %[c10], [sp, #0]\\n\\tldrd %[c20], %[c30], [sp, #8]\\n\\t" ++
                    "mov %[c01], %[c00]\\n\\tmov %[c11], %[c10]\\n\\tmov %[c21], %[c20]\\n\\tmov %[c31], %[c30]\\n\\t",
                .{ c & 0xFFFF, c >> 16, 4 * steps },
            );
            text = text ++ zant_smlad_block_steps_text(steps, a_next, b_next, mode == .small);
            if (!straight) text = text ++ std.fmt.comptimePrint("ldr %[w], [sp, #44]\\n\\tcmp %[pb], %[w]\\n\\tbne 2b\\n\\tsub %[pb], %[pb], #{d}\\n\\t", .{4 * steps});
            text = text ++ "ldrd %[x0], %[x1], [sp, #16]\\n\\tldrd %[w], %[v], [sp, #32]\\n\\t" ++
                "smmla %[c00], %[c00], %[x0], %[w]\\n\\tsmmla %[c01], %[c01], %[x0], %[w]\\n\\tsmmla %[c10], %[c10], %[x1], %[w]\\n\\tsmmla %[c11], %[c11], %[x1], %[w]\\n\\t" ++
                "ldrd %[x0], %[x1], [sp, #24]\\n\\t" ++
                "smmla %[c20], %[c20], %[x0], %[w]\\n\\tsmmla %[c21], %[c21], %[x0], %[w]\\n\\tsmmla %[c30], %[c30], %[x1], %[w]\\n\\tsmmla %[c31], %[c31], %[x1], %[w]\\n\\t";
            for (sums) |row| {
                for (row) |s| text = text ++ "ssat " ++ s ++ ", #8, " ++ s ++ by ++ "\\n\\t";
            }
            // Rows 0 and 1 from Y's pointer, rows 2 and 3 from it plus 2·y_next (x0).
            const far: u32 = @bitCast(@as(i32, @intCast(2 * y_next)));
            text = text ++ std.fmt.comptimePrint("movw %[x0], #{d}\\n\\tmovt %[x0], #{d}\\n\\tadd %[x0], %[v], %[x0]\\n\\t", .{ far & 0xFFFF, far >> 16 });
            for (0..4) |i| {
                const base = if (i < 2) "%[v]" else "%[x0]";
                const row_at = @as(isize, @intCast(i % 2)) * y_next;
                text = text ++ std.fmt.comptimePrint("strb {s}, [{s}, #{d}]\\n\\tstrb {s}, [{s}, #{d}]\\n\\t", .{ sums[i][0], base, row_at, sums[i][1], base, row_at + y_pixel });
            }
            // The next pair's column: pa moved on by the reduction's passes already.
            const moved: isize = 4 * a_pair - (if (straight) 0 else 4 * @as(isize, @intCast(steps)));
            const next = if (moved > 0) std.fmt.comptimePrint("add %[pa], %[pa], #{d}\\n\\t", .{moved}) else if (moved < 0) std.fmt.comptimePrint("sub %[pa], %[pa], #{d}\\n\\t", .{-moved}) else "";
            break :text text ++ std.fmt.comptimePrint("add %[v], %[v], #{d}\\n\\tstr %[v], [sp, #36]\\n\\t", .{y_pair}) ++ next ++
                "ldr %[w], [sp, #40]\\n\\tcmp %[pa], %[w]\\n\\tbne 1b\\n\\tadd sp, sp, #48";
        };
        const end: usize = @intFromPtr(pa) +% @as(usize, @bitCast(4 * a_pair * @as(isize, pairs)));
        zant_smlad_grid_asm(body, .{ @as(u32, @bitCast(c0)), @as(u32, @bitCast(c1)), @as(u32, @bitCast(c2)), @as(u32, @bitCast(c3)), @as(u32, @bitCast(m0)), @as(u32, @bitCast(m1)), @as(u32, @bitCast(m2)), @as(u32, @bitCast(m3)), @intFromPtr(pa), @intFromPtr(pb), @intFromPtr(py), end });
        return;
    }
    const a: [*]const i32 = @ptrCast(pa);
    const y: [*]i8 = @ptrCast(py);
    const multiplier = [4]i32{ m0, m1, m2, m3 };
    for (0..pairs) |q| {
        const at: isize = @as(isize, @intCast(q));
        // zant_smlad_block's plain form: its 13-register asm in this loop found too few registers
        // with a frame pointer (ReleaseSafe: LLVM's error).
        const x = a + @as(usize, @intCast(at * a_pair));
        const b: [*]const i32 = @ptrCast(pb);
        var s = [8]i32{ c0, c0, c1, c1, c2, c2, c3, c3 };
        for (0..steps) |k| {
            for (0..4) |i| {
                const wi = b[@intCast(@as(isize, @intCast(i)) * b_next + @as(isize, @intCast(k)))];
                for (0..2) |j| s[2 * i + j] = zant_smlad(x[@intCast(@as(isize, @intCast(j)) * a_next + @as(isize, @intCast(k)))], wi, s[2 * i + j]);
            }
        }
        for (0..4) |i| {
            for (0..2) |j| {
                const value = zant_ssat(zant_smmla(s[2 * i + j], multiplier[i], addend), 8, shift);
                y[@intCast(at * y_pair + @as(isize, @intCast(i)) * y_next + @as(isize, @intCast(j)) * y_pixel)] = @intCast(value);
            }
        }
    }
}""".replace("HAS_DSP", _HAS_DSP),
    ("zant_smlad_block_steps_text", "zant_smlad_grid_asm", "zant_smlad", "zant_smmla", "zant_ssat"),
    inline=False,
)


@irdl_op_definition
class SmladBlockRowOp(RequantAddendRowOp):
    """`arm_dsp.smlad_block_row %pa, %pb, %py, %c0, %c1, %c2, %c3, %m0, %m1, %m2, %m3 {steps,
    a_next, b_next, pairs = Q, a_pair, y_pair, y_next, y_pixel, addend = C, shift = H} :
    !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>`: Q 4 x 2 register blocks along a row of pixel
    pairs, block q the `arm_dsp.smlad_block` of `pa + q·a_pair` and `pb` (offsets in words)
    from the addends c_i (output channel i's bias, for both pixels j), each sum requantized as
    `arm_dsp.ssat` (8 bits, shift H) of `arm_dsp.smmla(r_ij, m_i, C)` and stored (int8) at
    `py + q·y_pair + i·y_next + j·y_pixel`: the loop, the epilogues and the stores in one asm
    block (`arm-dsp-block-rows`).
    Reach (its asm, as `reference`): pa's words q·a_pair + `smlad_block`'s (q < pairs, the
    loop ending at pa + 4·a_pair·pairs bytes exactly), pb's as `smlad_block`'s, py's q·y_pair + i·y_next +
    j·y_pixel (i < 4, j < 2)."""

    name = "arm_dsp.smlad_block_row"

    pa = operand_def(PtrType)
    pb = operand_def(PtrType)
    py = operand_def(PtrType)
    values = var_operand_def(I32)  # the 4 channels' biases c_i, then their multipliers m_i
    steps = prop_def(IntAttr)
    a_next = prop_def(IntAttr)
    b_next = prop_def(IntAttr)
    pairs = prop_def(IntAttr)
    a_pair = prop_def(IntAttr)
    y_pair = prop_def(IntAttr)
    y_next = prop_def(IntAttr)
    y_pixel = prop_def(IntAttr)

    assembly_format = (
        "$pa `,` $pb `,` $py `,` $values attr-dict `:` "
        "type($pa) `,` type($pb) `,` type($py)"
    )

    traits = _row_traits("pa", "pb")

    LAYOUT: ClassVar[tuple[str, ...]] = ("steps", "a_next", "b_next", "pairs", "a_pair", "y_pair", "y_next", "y_pixel", "addend", "shift")
    POINTERS: ClassVar[tuple[tuple[str, IntegerType], ...]] = (("pa", i32), ("pb", i32), ("py", i8))
    COUNTS: ClassVar[tuple[str, ...]] = ("steps", "pairs")

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers("zant_smlad_block_row", "zant_smlad_block_steps_text", "zant_smlad_grid_asm", "zant_smlad", "zant_smmla", "zant_ssat")

    def __init__(
        self, pa: SSAValue, pb: SSAValue, py: SSAValue, biases: Sequence[SSAValue], multipliers: Sequence[SSAValue], **layout: int,
    ):
        super().__init__([pa, pb, py, [*biases, *multipliers]], layout)

    def reach(self) -> dict[str, Reach]:
        p = self.layout()
        return {
            **smlad_block_reach(p["steps"], p["a_next"], p["b_next"], (p["pairs"], 4 * p["a_pair"])),
            "py": Reach.span(1, (p["pairs"], p["y_pair"]), (SMLAD_BLOCK_ROWS, p["y_next"]), (2, p["y_pixel"])),
        }

    def reference(self, pa: Read, pb: Read, py, *values: int) -> tuple[()]:
        p = self.layout()
        biases, multipliers = values[:SMLAD_BLOCK_ROWS], values[SMLAD_BLOCK_ROWS:]
        steps, a_next, b_next = p["steps"], p["a_next"], p["b_next"]
        w = pb(range((SMLAD_BLOCK_ROWS - 1) * b_next + steps))
        offsets, out = [], []
        for q in range(p["pairs"]):
            x = pa([q * p["a_pair"] + o for o in range(a_next + steps)])
            for i in range(SMLAD_BLOCK_ROWS):
                for j in range(2):
                    total = biases[i]
                    for s in range(steps):
                        total = smlad(int(x[j * a_next + s]), int(w[i * b_next + s]), total)
                    offsets.append(q * p["y_pair"] + i * p["y_next"] + j * p["y_pixel"])
                    out.append(ssat(smmla(total, multipliers[i], p["addend"]), 8, p["shift"]))
        py(offsets, np.array(out, np.int64).astype(np.int8))
        return ()

    def verify_(self) -> None:
        super().verify_()
        if len(self.values) != 2 * SMLAD_BLOCK_ROWS:
            raise VerifyException(f"smlad_block_row takes {SMLAD_BLOCK_ROWS} biases and {SMLAD_BLOCK_ROWS} multipliers")
        if not smlad_block_in_reach(self.steps.data, self.a_next.data, self.b_next.data):
            raise VerifyException(
                f"smlad_block_row's words lie within {LOAD_OFFSETS.stop - 1} bytes of pa and pb (LDR immediates), "
                f"got a_next = {self.a_next.data}, b_next = {self.b_next.data}"
            )
        _verify_store_offsets(self)


ZIG_HELPER_SOURCES["zant_smlad_quad_row"] = ZigHelper(
    "zant_smlad_quad_row",
    """\
/// A row of `quads` register blocks of 2 output channels x 4 pixels (arm_dsp.smlad_quad_row): the
/// pair of weight rows at pa (words of two int16, rows a_next words apart: widened at compile time,
/// read in place from flash) is fixed, quad q's 4 pixels are pb + q·b_quad + r·b_next (r < 4); sum
/// (r, k) starts at the bias c_k, takes zant_smlad_block's reduction (pa its 2 words, pb its 4),
/// and is stored as SSAT(#8, SMMLA(sum, m_k, addend), ASR #shift) at py + q·y_quad + r·y_pixel +
/// k·y_next. One asm block of 14 registers as zant_smlad_block_row (the 4 x 2 block with the roles
/// of pa and pb exchanged: a channel's bias and multiplier per column, not per row), so the pair's
/// 256 bytes (64 channels) are read from flash by the first quad and from the data cache by the
/// others (`conv_columns._pointwise_quads`). [sp]: c0, c1, m0, m1, the addend, Y's pointer, pb's
/// end, pa's end of a reduction. Not inlined (as zant_smlad_block_row). Other modes (a frame
/// pointer leaves 13 registers): the same sums in plain Zig, each product a zant_smlad.
noinline fn zant_smlad_quad_row(comptime steps: usize, comptime a_next: isize, comptime b_next: isize, comptime quads: usize, comptime b_quad: isize, comptime y_quad: isize, comptime y_next: isize, comptime y_pixel: isize, comptime addend: i32, comptime shift: u5, pa: *const i32, pb: *const i32, py: *i8, c0: i32, c1: i32, m0: i32, m1: i32) void {
    const mode = @import("builtin").mode;
    if (comptime HAS_DSP and (mode == .fast or mode == .small)) {
        const body = comptime text: {
            const straight = steps <= 8;
            const c: u32 = @bitCast(addend);
            const by = if (shift == 0) "" else std.fmt.comptimePrint(", asr #{d}", .{shift});
            // sums[r][k]: pixel r (pb's word rows), channel k (pa's words).
            const sums = [4][2][]const u8{ .{ "%[c00]", "%[c01]" }, .{ "%[c10]", "%[c11]" }, .{ "%[c20]", "%[c21]" }, .{ "%[c30]", "%[c31]" } };
            var text: []const u8 = std.fmt.comptimePrint(
                "sub sp, sp, #32\\n\\tstrd %[c00], %[c01], [sp, #0]\\n\\tstrd %[c10], %[c11], [sp, #8]\\n\\t" ++
                    "movw %[w], #{d}\\n\\tmovt %[w], #{d}\\n\\tstrd %[w], %[x0], [sp, #16]\\n\\t" ++
                    "str %[x1], [sp, #24]\\n\\tadd %[w], %[pa], #{d}\\n\\tstr %[w], [sp, #28]\\n\\t1:\\n\\t" ++
                    "ldrd %[c00], %[c01], [sp, #0]\\n\\t" ++
                    "mov %[c10], %[c00]\\n\\tmov %[c11], %[c01]\\n\\tmov %[c20], %[c00]\\n\\tmov %[c21], %[c01]\\n\\tmov %[c30], %[c00]\\n\\tmov %[c31], %[c01]\\n\\t",
                .{ c & 0xFFFF, c >> 16, 4 * steps },
            );
            text = text ++ zant_smlad_block_steps_text(steps, a_next, b_next, mode == .small);
            // pa (the pair of weight rows) back to its start for the next quad.
            if (!straight) text = text ++ std.fmt.comptimePrint("ldr %[w], [sp, #28]\\n\\tcmp %[pa], %[w]\\n\\tbne 2b\\n\\tsub %[pa], %[pa], #{d}\\n\\t", .{4 * steps});
            text = text ++ "ldrd %[x0], %[x1], [sp, #8]\\n\\tldrd %[w], %[v], [sp, #16]\\n\\t";
            for (sums) |row| {
                text = text ++ "smmla " ++ row[0] ++ ", " ++ row[0] ++ ", %[x0], %[w]\\n\\tsmmla " ++ row[1] ++ ", " ++ row[1] ++ ", %[x1], %[w]\\n\\t";
            }
            for (sums) |row| {
                for (row) |s| text = text ++ "ssat " ++ s ++ ", #8, " ++ s ++ by ++ "\\n\\t";
            }
            // Channel 0 from Y's pointer, channel 1 from it plus y_next (x0).
            const far: u32 = @bitCast(@as(i32, @intCast(y_next)));
            text = text ++ std.fmt.comptimePrint("movw %[x0], #{d}\\n\\tmovt %[x0], #{d}\\n\\tadd %[x0], %[v], %[x0]\\n\\t", .{ far & 0xFFFF, far >> 16 });
            for (0..4) |r| {
                const at = @as(isize, @intCast(r)) * y_pixel;
                text = text ++ std.fmt.comptimePrint("strb {s}, [%[v], #{d}]\\n\\tstrb {s}, [%[x0], #{d}]\\n\\t", .{ sums[r][0], at, sums[r][1], at });
            }
            // The next quad: pb moved on by the reduction's passes already.
            const moved: isize = 4 * b_quad - (if (straight) 0 else 4 * @as(isize, @intCast(steps)));
            const next = if (moved > 0) std.fmt.comptimePrint("add %[pb], %[pb], #{d}\\n\\t", .{moved}) else if (moved < 0) std.fmt.comptimePrint("sub %[pb], %[pb], #{d}\\n\\t", .{-moved}) else "";
            break :text text ++ std.fmt.comptimePrint("add %[v], %[v], #{d}\\n\\tstr %[v], [sp, #20]\\n\\t", .{y_quad}) ++ next ++
                "ldr %[w], [sp, #24]\\n\\tcmp %[pb], %[w]\\n\\tbne 1b\\n\\tadd sp, sp, #32";
        };
        const end: usize = @intFromPtr(pb) +% @as(usize, @bitCast(4 * b_quad * @as(isize, quads)));
        // c20 .. c31 are only written (each quad's sums start from the biases saved on the stack).
        zant_smlad_grid_asm(body, .{ @as(u32, @bitCast(c0)), @as(u32, @bitCast(c1)), @as(u32, @bitCast(m0)), @as(u32, @bitCast(m1)), undefined, undefined, undefined, undefined, @intFromPtr(pa), @intFromPtr(pb), @intFromPtr(py), end });
        return;
    }
    const a: [*]const i32 = @ptrCast(pa);
    const y: [*]i8 = @ptrCast(py);
    const multiplier = [2]i32{ m0, m1 };
    for (0..quads) |q| {
        const at: isize = @as(isize, @intCast(q));
        const b: [*]const i32 = @ptrCast(@as([*]const i32, @ptrCast(pb)) + @as(usize, @intCast(at * b_quad)));
        var s = [8]i32{ c0, c1, c0, c1, c0, c1, c0, c1 };
        for (0..steps) |t| {
            for (0..4) |r| {
                const x = b[@intCast(@as(isize, @intCast(r)) * b_next + @as(isize, @intCast(t)))];
                for (0..2) |k| s[2 * r + k] = zant_smlad(a[@intCast(@as(isize, @intCast(k)) * a_next + @as(isize, @intCast(t)))], x, s[2 * r + k]);
            }
        }
        for (0..4) |r| {
            for (0..2) |k| {
                const value = zant_ssat(zant_smmla(s[2 * r + k], multiplier[k], addend), 8, shift);
                y[@intCast(at * y_quad + @as(isize, @intCast(r)) * y_pixel + @as(isize, @intCast(k)) * y_next)] = @intCast(value);
            }
        }
    }
}""".replace("HAS_DSP", _HAS_DSP),
    ("zant_smlad_block_steps_text", "zant_smlad_grid_asm", "zant_smlad", "zant_smmla", "zant_ssat"),
    inline=False,
)

SMLAD_QUAD_PIXELS = 4
"""Pixels (words of pb) of an `arm_dsp.smlad_quad_row`'s block; it has 2 output channels."""


@irdl_op_definition
class SmladQuadRowOp(RequantAddendRowOp):
    """`arm_dsp.smlad_quad_row %pa, %pb, %py, %c0, %c1, %m0, %m1 {steps, a_next, b_next, quads = Q,
    b_quad, y_quad, y_next, y_pixel, addend = C, shift = H} : !uop.ptr<i32>, !uop.ptr<i32>,
    !uop.ptr<i8>`: Q register blocks of 2 output channels x 4 pixels along a row of pixel quads,
    over words of two int16: block q's sum (r, k) = c_k + Σ_s SMLAD(pa[k·a_next + s],
    pb[q·b_quad + r·b_next + s]) (s < S, r < 4, k < 2; offsets in words), requantized as
    `arm_dsp.ssat` (8 bits, shift H) of `arm_dsp.smmla(sum, m_k, C)` and stored (int8) at
    `py + q·y_quad + r·y_pixel + k·y_next`. An `arm_dsp.smlad_block_row` with the roles of pa and
    pb exchanged: pa, one pair of weight rows, is read by every quad (256 bytes at 64 channels,
    which a flash accelerator's data cache of 8 lines holds), pb moves (`arm-dsp-block-rows`).
    Reach (its asm, as `reference`): pa's words k·a_next + s; pb's q·b_quad + r·b_next + s (the
    loop ending at pb + 4·b_quad·Q bytes exactly); py's q·y_quad + r·y_pixel + k·y_next."""

    name = "arm_dsp.smlad_quad_row"

    pa = operand_def(PtrType)
    pb = operand_def(PtrType)
    py = operand_def(PtrType)
    values = var_operand_def(I32)  # the 2 channels' biases c_k, then their multipliers m_k
    steps = prop_def(IntAttr)
    a_next = prop_def(IntAttr)
    b_next = prop_def(IntAttr)
    quads = prop_def(IntAttr)
    b_quad = prop_def(IntAttr)
    y_quad = prop_def(IntAttr)
    y_next = prop_def(IntAttr)
    y_pixel = prop_def(IntAttr)

    assembly_format = "$pa `,` $pb `,` $py `,` $values attr-dict `:` type($pa) `,` type($pb) `,` type($py)"

    traits = _row_traits("pa", "pb")

    LAYOUT: ClassVar[tuple[str, ...]] = ("steps", "a_next", "b_next", "quads", "b_quad", "y_quad", "y_next", "y_pixel", "addend", "shift")
    POINTERS: ClassVar[tuple[tuple[str, IntegerType], ...]] = (("pa", i32), ("pb", i32), ("py", i8))
    COUNTS: ClassVar[tuple[str, ...]] = ("steps", "quads")

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]] = _helpers("zant_smlad_quad_row", "zant_smlad_block_steps_text", "zant_smlad_grid_asm", "zant_smlad", "zant_smmla", "zant_ssat")

    def __init__(
        self, pa: SSAValue, pb: SSAValue, py: SSAValue, biases: Sequence[SSAValue], multipliers: Sequence[SSAValue], **layout: int,
    ):
        super().__init__([pa, pb, py, [*biases, *multipliers]], layout)

    def reach(self) -> dict[str, Reach]:
        p = self.layout()
        return {
            "pa": Reach.span(4, (2, 4 * p["a_next"]), (p["steps"], 4)),
            "pb": Reach.span(4, (p["quads"], 4 * p["b_quad"]), (SMLAD_QUAD_PIXELS, 4 * p["b_next"]), (p["steps"], 4)),
            "py": Reach.span(1, (p["quads"], p["y_quad"]), (SMLAD_QUAD_PIXELS, p["y_pixel"]), (2, p["y_next"])),
        }

    def reference(self, pa: Read, pb: Read, py, *values: int) -> tuple[()]:
        p = self.layout()
        biases, multipliers = values[:2], values[2:]
        steps, a_next, b_next = p["steps"], p["a_next"], p["b_next"]
        w = pa(range(a_next + steps))
        offsets, out = [], []
        for q in range(p["quads"]):
            x = pb([q * p["b_quad"] + o for o in range((SMLAD_QUAD_PIXELS - 1) * b_next + steps)])
            for r in range(SMLAD_QUAD_PIXELS):
                for k in range(2):
                    total = biases[k]
                    for s in range(steps):
                        total = smlad(int(w[k * a_next + s]), int(x[r * b_next + s]), total)
                    offsets.append(q * p["y_quad"] + r * p["y_pixel"] + k * p["y_next"])
                    out.append(ssat(smmla(total, multipliers[k], p["addend"]), 8, p["shift"]))
        py(offsets, np.array(out, np.int64).astype(np.int8))
        return ()

    def verify_(self) -> None:
        super().verify_()
        if len(self.values) != 4:
            raise VerifyException("smlad_quad_row takes 2 biases and 2 multipliers")
        # pa's second row and pb's fourth pixel by LDR immediates (smlad_block's with the roles
        # exchanged: 2 words of pa, 4 of pb).
        if not smlad_block_in_reach(self.steps.data, self.a_next.data, self.b_next.data):
            raise VerifyException(
                f"smlad_quad_row's words lie within {LOAD_OFFSETS.stop - 1} bytes of pa and pb (LDR immediates), "
                f"got a_next = {self.a_next.data}, b_next = {self.b_next.data}"
            )
        if not all(o in LOAD_OFFSETS for o in (3 * self.y_pixel.data, 0)) or not 0 < self.y_quad.data < LOAD_OFFSETS.stop:
            raise VerifyException(
                f"smlad_quad_row's outputs lie within {LOAD_OFFSETS.stop - 1} bytes of py and py + y_next (STRB, ADD immediates), "
                f"got y_pixel = {self.y_pixel.data}, y_quad = {self.y_quad.data}"
            )


ArmDsp = Dialect("arm_dsp", [LoadWordOp, Sxtb16Op, SmladOp, SmlaOp, SmladBytesOp, SmladBytesPairOp, SmladTileOp, SmladWindowOp, SmladRowsOp, SmladBlockOp, LoadS4x4Op, SmmlaOp, SsatOp, SmladLayerOp, SmladTileRowOp, DepthwiseStepOp, DepthwiseRowOp, DepthwiseShortRowOp, DepthwiseShortRowsOp, SmladBlockRowOp, SmladQuadRowOp], [])
