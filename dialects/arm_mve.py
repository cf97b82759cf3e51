"""`arm_mve`: a small target dialect beside uop for Armv8.1-M's M-profile Vector Extension
(Helium: Cortex-M55, M85).

Two ops, each one instruction on a core with MVE, made by the `mve-dot` pass from int8
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
* `%r = arm_mve.vmlava %acc, %a, %b : vector<16xi8>` — `acc + Σ a[i]·b[i]` over the lanes of two
  `vector<16xi8>` or `vector<8xi16>`, products and sum in 32 bits, wrapping (`VMLAVA.S8` /
  `VMLAVA.S16`: multiply, add across the vector, accumulate into a general register). LLVM
  forms it from `acc + @reduce(.Add, a·b)` in a loop, but not once such loops are unrolled
  (it merges the reductions of the unrolled iterations first), so it is an op too.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I32, ArrayAttr, IntAttr, IntegerType, VectorType
from xdsl.ir import Dialect, Operation, SSAValue
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
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryEffectKind, Pure
from xdsl.utils.exceptions import VerifyException

from zant.dialects.uop import Accesses, PtrType

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


@irdl_op_definition
class VldrbGatherOp(IRDLOperation):
    """`%v = arm_mve.vldrb_gather %p [0, 125, …] : !uop.ptr<i8> -> vector<8xi16>`: the 8 int8
    at `%p + offset[k]`, sign-extended to 16 bits (`VLDRB.S16` with a vector of offsets); with
    16 offsets, `-> vector<16xi8>`: the 16 int8 at `%p + offset[k]` (two `VLDRB.U16` gathers,
    the even and the odd lanes, and one `VMOVNT.I16` that puts the odd ones into the high byte
    of each 16-bit lane: 3 instructions)."""

    name = "arm_mve.vldrb_gather"

    ptr = operand_def(PtrType)
    offsets = prop_def(ArrayAttr[IntAttr])
    result = result_def(VectorType)

    traits = traits_def(Accesses(MemoryEffectKind.READ, "ptr"))

    def __init__(self, ptr: SSAValue | Operation, offsets: Sequence[int]):
        super().__init__(
            operands=[ptr],
            properties={"offsets": ArrayAttr([IntAttr(o) for o in offsets])},
            result_types=[BYTE_TYPE if len(offsets) == BYTE_TYPE.get_shape()[0] else GATHER_TYPE],
        )

    @property
    def byte_offsets(self) -> list[int]:
        return [o.data for o in self.offsets.data]

    def verify_(self) -> None:
        assert isinstance(self.ptr.type, PtrType)
        if self.ptr.type.element_type != IntegerType(8):
            raise VerifyException(f"vldrb_gather reads int8 elements, got a pointer to {self.ptr.type.element_type}")
        if self.result.type not in (GATHER_TYPE, BYTE_TYPE):
            raise VerifyException(f"vldrb_gather gives {GATHER_TYPE} or {BYTE_TYPE}, got {self.result.type}")
        offsets = self.byte_offsets
        lanes = self.result.type.get_shape()[0]
        if len(offsets) != lanes:
            raise VerifyException(f"vldrb_gather to {self.result.type} takes {lanes} offsets, got {len(offsets)}")
        if not all(0 <= o <= MAX_OFFSET for o in offsets):
            raise VerifyException(f"vldrb_gather offsets are 16-bit unsigned, got {offsets}")

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_operand(self.ptr)
        printer.print_string(" [" + ", ".join(str(o) for o in self.byte_offsets) + "]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.ptr.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> VldrbGatherOp:
        ptr = parser.parse_unresolved_operand()
        offsets = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ptr_type = parser.parse_type()
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        op = cls.create(
            operands=[parser.resolve_operand(ptr, ptr_type)],
            properties={"offsets": ArrayAttr([IntAttr(o) for o in offsets])},
            result_types=[result_type],
        )
        op.attributes.update(attributes)
        return op


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

    def __init__(self, acc: SSAValue | Operation, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(operands=[acc, lhs, rhs], result_types=[IntegerType(32)])

    def verify_(self) -> None:
        if self.lhs.type not in DOT_TYPES:
            raise VerifyException(f"vmlava multiplies vector<16xi8> or vector<8xi16>, got {self.lhs.type}")


ArmMve = Dialect("arm_mve", [VldrbGatherOp, VmlavaOp], [])
