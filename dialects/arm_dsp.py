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
"""

from __future__ import annotations

from xdsl.dialects.builtin import I32, IntAttr, IntegerType
from xdsl.ir import Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryEffectKind, Pure
from xdsl.utils.exceptions import VerifyException

from zant.dialects.uop import Accesses, PtrType

ROTATIONS = (0, 8, 16, 24)
"""The rotations `SXTB16` can apply to its operand first (`ror #8`, `#16`, `#24`)."""


@irdl_op_definition
class LoadWordOp(IRDLOperation):
    """`%w = arm_dsp.load_word %p : !uop.ptr<i8>`: the 4 int8 at `%p` as a little-endian i32."""

    name = "arm_dsp.load_word"

    ptr = operand_def(PtrType)
    result = result_def(I32)

    assembly_format = "$ptr attr-dict `:` type($ptr)"

    traits = traits_def(Accesses(MemoryEffectKind.READ, "ptr"))

    def __init__(self, ptr: SSAValue | Operation):
        super().__init__(operands=[ptr], result_types=[IntegerType(32)])

    def verify_(self) -> None:
        assert isinstance(self.ptr.type, PtrType)
        if self.ptr.type.element_type != IntegerType(8):
            raise VerifyException(f"load_word reads int8 elements, got a pointer to {self.ptr.type.element_type}")


@irdl_op_definition
class Sxtb16Op(IRDLOperation):
    """`%h = arm_dsp.sxtb16 %w (ror 8)? : i32`: bytes 0 and 2 of `%w` (rotated right by 0, 8, 16
    or 24 bits first) sign-extended into the low and high 16-bit halves."""

    name = "arm_dsp.sxtb16"

    input = operand_def(I32)
    rotate = opt_prop_def(IntAttr)
    result = result_def(I32)

    traits = traits_def(Pure())

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

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation, addend: SSAValue | Operation):
        super().__init__(operands=[lhs, rhs, addend], result_types=[IntegerType(32)])


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


ArmDsp = Dialect("arm_dsp", [LoadWordOp, Sxtb16Op, SmladOp, SmladBytesOp, SmladBytesPairOp], [])
