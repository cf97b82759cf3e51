"""The uop dialect's loops (`uop.range` / `uop.endrange`, with their canonicalization) and
accumulators (`uop.define_acc`, `uop.mulacc`, `uop.acc_set`, `uop.acc_get`)."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import FloatAttr, IndexType, IntAttr, IntegerAttr, UnitAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.interfaces import HasCanonicalizationPatternsInterface
from xdsl.parser import Parser
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsTerminator,
    MemoryEffectKind,
    OpTrait,
    Pure,
    RecursiveMemoryEffect,
    SingleBlockImplicitTerminator,
)
from xdsl.utils.exceptions import VerifyException

from zant.dialects.uop.alu import ConstOp
from zant.dialects.uop.types import AccType, Accesses, build, is_float_type, is_vector_type, lane_type


# ---------------------------------------------------------------------------------------------
# Loops
# ---------------------------------------------------------------------------------------------


class LoopLike(OpTrait):
    """The op is a loop whose body region runs zero or more times, with the values defined
    outside it unchanged between iterations (MLIR's LoopLikeOpInterface, the part `licm`
    needs). An op hoisted out of the body must be speculatable: the loop may not run."""

    @classmethod
    def body(cls, op: Operation) -> Region:
        return op.regions[0]


@irdl_op_definition
class EndRangeOp(IRDLOperation):
    """Terminates the body of a `uop.range` (implicit in the custom format)."""

    name = "uop.endrange"

    assembly_format = "attr-dict"

    def __init__(self):
        build(self)

    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(RangeOp), Pure()))


@irdl_op_definition
class RangeOp(IRDLOperation, HasCanonicalizationPatternsInterface):
    """A counted loop: `uop.range %i = 0 to 10 step 1 { … }`.

    The body's single block argument (an `index`) takes `start, start+step, …` while below `end`.
    """

    name = "uop.range"

    start = prop_def(IntAttr)
    end = prop_def(IntAttr)
    step = prop_def(IntAttr)
    body = region_def("single_block")

    traits = traits_def(
        SingleBlockImplicitTerminator(EndRangeOp), RecursiveMemoryEffect(), LoopLike()
    )

    def __init__(
        self,
        start: int,
        end: int,
        step: int = 1,
        body: Region | Block | None = None,
    ):
        if body is None:
            body = Block(arg_types=[IndexType()])
        if isinstance(body, Block):
            body = Region(body)
        build(self, properties={"start": IntAttr(start), "end": IntAttr(end), "step": IntAttr(step)}, regions=[body])

    @property
    def induction_var(self) -> SSAValue:
        return self.body.block.args[0]

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (EraseEmptyRange(), InlineSingleIterationRange())

    @property
    def trip_count(self) -> int:
        start, end, step = self.start.data, self.end.data, self.step.data
        return max(0, -(-(end - start) // step))

    def verify_(self) -> None:
        if self.step.data <= 0:
            raise VerifyException(f"step must be positive, got {self.step.data}")
        args = self.body.block.args
        if len(args) != 1 or not isinstance(args[0].type, IndexType):
            raise VerifyException("the body must have exactly one index block argument")

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_operand(self.induction_var)
        printer.print_string(f" = {self.start.data} to {self.end.data}")
        if self.step.data != 1:
            printer.print_string(f" step {self.step.data}")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_block_terminators=False)

    @classmethod
    def parse(cls, parser: Parser) -> RangeOp:
        induction_var = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        start = parser.parse_integer()
        parser.parse_keyword("to")
        end = parser.parse_integer()
        step = parser.parse_integer() if parser.parse_optional_keyword("step") else 1
        attributes = parser.parse_optional_attr_dict_with_keyword()
        attributes = attributes.data if attributes is not None else {}
        body = parser.parse_region((induction_var.resolve(IndexType()),))
        block = body.block
        if not isinstance(block.last_op, EndRangeOp):
            block.add_op(EndRangeOp())
        op = cls(start, end, step, body)
        op.attributes.update(attributes)
        return op


class EraseEmptyRange(RewritePattern):
    """A loop that runs zero times does nothing."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: RangeOp, rewriter: PatternRewriter) -> None:
        if op.trip_count == 0:
            rewriter.erase_op(op)


class InlineSingleIterationRange(RewritePattern):
    """A loop that runs once is its body, with the induction variable a `uop.const` start."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: RangeOp, rewriter: PatternRewriter) -> None:
        if op.trip_count != 1:
            return
        start = ConstOp(op.start.data, IndexType())
        rewriter.insert_op(start, InsertPoint.before(op))
        block = op.body.block
        assert block.last_op is not None
        rewriter.erase_op(block.last_op)
        rewriter.inline_block(block, InsertPoint.before(op), (start.result,))
        rewriter.erase_op(op)



# ---------------------------------------------------------------------------------------------
# Accumulators
# ---------------------------------------------------------------------------------------------


@irdl_op_definition
class DefineAccOp(IRDLOperation):
    """`%acc = uop.define_acc 0.0 : f32` makes an accumulator cell holding the initial value;
    `uop.define_acc 0.0 : f32 to vector<8xf32>` a vector cell with the value in every lane."""

    name = "uop.define_acc"

    init = prop_def(IntegerAttr | FloatAttr)
    result = result_def(AccType)

    # A fresh cell each time: two with one initial value are not one (cse), nor hoisted (licm).
    traits = traits_def(Accesses(MemoryEffectKind.ALLOC, "result"))

    def __init__(self, init: int | float, element_type: Attribute):
        value = ConstOp(init, lane_type(element_type)).value
        build(self, result_types=[AccType(element_type)], properties={"init": value})

    def verify_(self) -> None:
        assert isinstance(self.result.type, AccType)
        if self.init.type != lane_type(self.result.type.element_type):
            raise VerifyException("initial value type differs from the accumulator's")

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_attribute(self.init)
        printer.print_op_attributes(self.attributes)
        assert isinstance(self.result.type, AccType)
        if is_vector_type(self.result.type.element_type):
            printer.print_string(" to ")
            printer.print_attribute(self.result.type.element_type)

    @classmethod
    def parse(cls, parser: Parser) -> DefineAccOp:
        init = parser.parse_attribute()
        if not isinstance(init, IntegerAttr | FloatAttr):
            parser.raise_error("uop.define_acc takes an integer or float literal with its type")
        attributes = parser.parse_optional_attr_dict()
        element_type = parser.parse_type() if parser.parse_optional_keyword("to") else init.type
        op = cls.create(properties={"init": init}, result_types=[AccType(element_type)])
        op.attributes.update(attributes)
        return op


def _acc_element_type(acc: SSAValue) -> Attribute:
    assert isinstance(acc.type, AccType)
    return acc.type.element_type


@irdl_op_definition
class MulAccOp(IRDLOperation):
    """`uop.mulacc %acc, %x, %y : !uop.acc<f32>, f32` adds x·y into the accumulator;
    `uop.mulacc fused …` computes acc + x·y with a single rounding (a fused multiply-add)."""

    name = "uop.mulacc"

    T: ClassVar = VarConstraint("T", AnyAttr())
    acc = operand_def(AccType)
    lhs = operand_def(T)
    rhs = operand_def(T)
    fused = opt_prop_def(UnitAttr)

    traits = traits_def(Accesses(MemoryEffectKind.READ, "acc"), Accesses(MemoryEffectKind.WRITE, "acc"))

    assembly_format = (
        "(`fused` $fused^)? $acc `,` $lhs `,` $rhs attr-dict `:` type($acc) `,` type($lhs)"
    )

    def __init__(
        self,
        acc: SSAValue | Operation,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        fused: bool = False,
    ):
        build(self, [acc, lhs, rhs], properties={"fused": UnitAttr()} if fused else None)

    def verify_(self) -> None:
        element_type = _acc_element_type(self.acc)
        if self.lhs.type != element_type or self.rhs.type != element_type:
            raise VerifyException(
                f"operands must match the accumulator's type {element_type}, "
                f"got {self.lhs.type} and {self.rhs.type}"
            )
        # Integer arithmetic does not round, so `fused` there would be a flag that means nothing.
        if self.fused is not None and not is_float_type(lane_type(element_type)):
            raise VerifyException(f"only a float accumulator can be fused, got {element_type}")


@irdl_op_definition
class AccSetOp(IRDLOperation):
    """`uop.acc_set %acc, %x : !uop.acc<f32>` overwrites the accumulator with x."""

    name = "uop.acc_set"

    acc = operand_def(AccType)
    value = operand_def()

    assembly_format = "$acc `,` $value attr-dict `:` type($acc) `,` type($value)"

    traits = traits_def(Accesses(MemoryEffectKind.WRITE, "acc"))

    def __init__(self, acc: SSAValue | Operation, value: SSAValue | Operation):
        super().__init__(operands=[acc, value])

    def verify_(self) -> None:
        element_type = _acc_element_type(self.acc)
        if self.value.type != element_type:
            raise VerifyException(
                f"value type {self.value.type} differs from the accumulator's {element_type}"
            )


@irdl_op_definition
class AccGetOp(IRDLOperation):
    """`%x = uop.acc_get %acc : !uop.acc<f32>, f32` reads the accumulator."""

    name = "uop.acc_get"

    acc = operand_def(AccType)
    result = result_def()

    assembly_format = "$acc attr-dict `:` type($acc) `,` type($result)"

    traits = traits_def(Accesses(MemoryEffectKind.READ, "acc"))

    def __init__(self, acc: SSAValue | Operation):
        build(self, [acc], [_acc_element_type(SSAValue.get(acc))])

    def verify_(self) -> None:
        if self.result.type != _acc_element_type(self.acc):
            raise VerifyException("result type differs from the accumulator's")
