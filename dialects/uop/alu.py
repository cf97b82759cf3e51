"""The uop dialect's compute ops and their folding: `uop.const`, one op per ALU primitive,
`uop.fma`, casts, `uop.where`, and the vector-only `uop.broadcast` and `uop.reduce_add`."""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialect_interfaces.constant_materialization import ConstantMaterializationInterface
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float32Type,
    Float64Type,
    VectorType,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.interfaces import HasFolderInterface
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Commutative, ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException

from zant.ir.types import is_storage_float
from zant.dialects.uop.types import (
    PureUnlessTrapping, build, is_float_type, is_scalar_type, is_vector_type, lane_type, lanes, verify_vector_of,
)


# ---------------------------------------------------------------------------------------------
# Vector-only ops
# ---------------------------------------------------------------------------------------------

@irdl_op_definition
class BroadcastOp(IRDLOperation):
    """`%v = uop.broadcast %x : f32 to vector<8xf32>` copies a scalar into every lane."""

    name = "uop.broadcast"

    input = operand_def()
    result = result_def(VectorType)

    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation, vector_type: VectorType):
        super().__init__(operands=[input], result_types=[vector_type])

    def verify_(self) -> None:
        verify_vector_of(self.result.type, self.input.type, "the result")


@irdl_op_definition
class ReduceAddOp(IRDLOperation):
    """`%s = uop.reduce_add %v : vector<8xf32> to f32` sums the lanes (wrapping for integers;
    for floats in an unspecified order)."""

    name = "uop.reduce_add"

    input = operand_def(VectorType)
    result = result_def()

    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation):
        vector_type = SSAValue.get(input).type
        super().__init__(operands=[input], result_types=[lane_type(vector_type)])

    def verify_(self) -> None:
        verify_vector_of(self.input.type, self.result.type, "the operand")
        if self.result.type == i1:
            raise VerifyException("uop.reduce_add takes no i1 vectors")


# ---------------------------------------------------------------------------------------------
# Scalars: constants, ALU primitives, casts, select
# ---------------------------------------------------------------------------------------------


@irdl_op_definition
class ConstOp(IRDLOperation, HasFolderInterface):
    """A scalar literal: `%c = uop.const 1.5 : f32`, `%n = uop.const 3 : index`."""

    name = "uop.const"

    value = prop_def(IntegerAttr | FloatAttr)
    result = result_def()

    traits = traits_def(Pure(), ConstantLike())

    def fold(self) -> Sequence[SSAValue | Attribute]:
        return (self.value,)

    def __init__(self, value: int | float | bool, value_type: Attribute):
        if isinstance(value_type, AnyFloat):
            attr: Attribute = FloatAttr(float(value), value_type)
        else:
            attr = IntegerAttr(int(value), value_type)
        build(self, result_types=[value_type], properties={"value": attr})

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        value = parser.parse_attribute()
        attributes = parser.parse_optional_attr_dict()
        if not isinstance(value, IntegerAttr | FloatAttr):
            parser.raise_error("uop.const takes an integer or float literal with its type")
        op = cls.create(properties={"value": value}, result_types=[value.type])
        op.attributes.update(attributes)
        return op

    def verify_(self) -> None:
        if self.result.type != self.value.type:
            raise VerifyException("result type differs from the literal's type")


# ---------------------------------------------------------------------------------------------
# Folding: what canonicalize may compute at compile time. Integers wrap as the generated code
# does; floats are folded only where the result is exact for every input (no reassociation, and
# no `x * 0 → 0` or `x + 0 → x`: NaN * 0 is NaN and -0.0 + 0.0 is +0.0).
# ---------------------------------------------------------------------------------------------

_INDEX_RANGE = range(-(2**31), 2**31)
"""Index values folded at compile time stay within the smallest target's isize (32 bits)."""


def wrap_integer(value: int, t: Attribute) -> int | None:
    """`value` as a value of type `t` (two's complement wrap; i1 is 0 or 1), None for an index
    outside `_INDEX_RANGE` (its width is the target's, unknown here)."""
    if isinstance(t, IndexType):
        return value if value in _INDEX_RANGE else None
    assert isinstance(t, IntegerType)
    width = t.width.data
    if width == 1:
        return value & 1
    if t.signedness.data == Signedness.UNSIGNED:
        return value % (1 << width)
    half = 1 << (width - 1)
    return (value + half) % (1 << width) - half


def constant_of(value: SSAValue) -> IntegerAttr | FloatAttr | None:
    """The literal behind a scalar value, if a `uop.const` (or another constant-like op) makes it."""
    attr = ConstantLike.get_constant_value(value)
    return attr if isinstance(attr, IntegerAttr | FloatAttr) else None


def _integer(attr: IntegerAttr) -> int:
    wrapped = wrap_integer(attr.value.data, attr.type)
    return attr.value.data if wrapped is None else wrapped


def _is_integer(attr: Attribute | None, value: int) -> bool:
    return isinstance(attr, IntegerAttr) and _integer(attr) == value


def _is_number(attr: Attribute | None, value: int) -> bool:
    """An integer or float literal equal to `value` (1 and 1.0 are both units of `mul`)."""
    return _is_integer(attr, value) or (isinstance(attr, FloatAttr) and attr.value.data == value)


def _truncating_division(x: int, y: int) -> int:
    quotient = abs(x) // abs(y)
    return quotient if (x < 0) == (y < 0) else -quotient


def _round_float(value: float, t: Attribute) -> float | None:
    """`value` rounded to f32 (to nearest, ties to even, as the generated code does) or f64;
    None for other float types or when it overflows."""
    if isinstance(t, Float64Type):
        return value
    if isinstance(t, Float32Type):
        try:
            return struct.unpack("f", struct.pack("f", value))[0]
        except OverflowError:
            return None
    return None


def fold_cast(attr: IntegerAttr | FloatAttr, target: Attribute) -> Attribute | None:
    """`uop.cast` of a literal, where the result is exact (no wrapping, saturation or rounding
    question): integer to a type that holds the value, integer to float without rounding, float
    to float, finite float to an integer type that holds its truncation, integer to i1."""
    if attr.type == i1 or not is_scalar_type(target):
        return None
    if isinstance(attr, IntegerAttr):
        value = _integer(attr)
        if target == i1:
            return IntegerAttr(int(value != 0), i1)
        if isinstance(target, IntegerType | IndexType):
            return IntegerAttr(value, target) if wrap_integer(value, target) == value else None
        as_float = _round_float(float(value), target)
        return FloatAttr(as_float, target) if as_float == value else None
    value = attr.value.data
    if not math.isfinite(value) or target == i1:
        return None
    if isinstance(target, IntegerType | IndexType):
        whole = math.trunc(value)
        return IntegerAttr(whole, target) if wrap_integer(whole, target) == whole else None
    rounded = _round_float(value, target)
    return None if rounded is None else FloatAttr(rounded, target)


class UOpConstantMaterialization(ConstantMaterializationInterface):
    """Folded literals become `uop.const` ops."""

    def materialize_constant(self, value: Attribute, type: Attribute) -> Operation | None:
        if not isinstance(value, IntegerAttr | FloatAttr) or value.type != type:
            return None
        return ConstOp.create(properties={"value": value}, result_types=[type])


VECTOR_ALU_OPS = frozenset(
    {"add", "sub", "mul", "div", "max", "min", "neg", "abs", "sqrt", "and", "or", "xor", "fma"}
)
"""The ALU ops that also take vectors (lane by lane); integer `div` only on scalars (a zero
lane would trap)."""


def _verify_storage_float(op: IRDLOperation, t: Attribute) -> None:
    """No arithmetic on a storage float's bits (bfloat16, float8): it is cast to f32 first."""
    if is_storage_float(lane_type(t) if is_vector_type(t) else t):
        raise VerifyException(f"{op.name} does not compute on {t}: cast it to f32 first")


def _verify_alu_type(op: IRDLOperation, t: Attribute, what: str) -> None:
    short = op.name.removeprefix("uop.")
    _verify_storage_float(op, t)
    if is_vector_type(t):
        if short not in VECTOR_ALU_OPS:
            raise VerifyException(f"{op.name} takes no vectors, got {t}")
        if short == "div" and not is_float_type(lane_type(t)):
            raise VerifyException(f"{op.name} takes no integer vectors, got {t}")
    elif not is_scalar_type(t):
        raise VerifyException(f"{op.name} takes scalar or vector {what}, got {t}")


class BinaryOp(IRDLOperation, HasFolderInterface):
    """`%z = uop.<op> %x, %y : T` with operands and result of one scalar type.

    An op folds two integer literals with `evaluate` and `x op c` with `fold_with_constant`
    (`c op x` too when it is `Commutative`)."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)

    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    traits = traits_def(PureUnlessTrapping())

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        build(self, [lhs, rhs], [SSAValue.get(lhs).type])

    def may_trap(self) -> bool:
        return False

    def evaluate(self, x: int, y: int) -> int | None:
        """x op y on integer literals before wrapping; None: not folded."""
        return None

    def fold_with_constant(self, x: SSAValue, c: IntegerAttr | FloatAttr) -> SSAValue | Attribute | None:
        """`x op c` when it is x itself or a literal whatever x is; None otherwise."""
        return None

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        lhs, rhs = constant_of(self.lhs), constant_of(self.rhs)
        if isinstance(lhs, IntegerAttr) and isinstance(rhs, IntegerAttr):
            value = self.evaluate(_integer(lhs), _integer(rhs))
            if value is not None and (wrapped := wrap_integer(value, self.result.type)) is not None:
                return (IntegerAttr(wrapped, self.result.type),)
        if rhs is not None and (folded := self.fold_with_constant(self.lhs, rhs)) is not None:
            return (folded,)
        if lhs is not None and self.has_trait(Commutative):
            if (folded := self.fold_with_constant(self.rhs, lhs)) is not None:
                return (folded,)
        return None

    def verify_(self) -> None:
        _verify_alu_type(self, self.result.type, "operands")


class FloatOnly:
    """Mixin: the op is only defined on floating-point values."""

    def verify_(self) -> None:
        t = lane_type(self.result.type)  # type: ignore[attr-defined]
        if not is_float_type(t):
            raise VerifyException(f"{self.name} takes floating-point operands, got {t}")  # type: ignore[attr-defined]
        super().verify_()  # type: ignore[misc]


class IntegerOnly:
    """Mixin: the op is only defined on integers (including i1 and index)."""

    def verify_(self) -> None:
        t = lane_type(self.result.type)  # type: ignore[attr-defined]
        if not isinstance(t, IntegerType | IndexType):
            raise VerifyException(f"{self.name} takes integer operands, got {t}")  # type: ignore[attr-defined]
        super().verify_()  # type: ignore[misc]


class UnaryOp(IRDLOperation):
    """`%y = uop.<op> %x : T` with operand and result of one scalar type."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    input = operand_def(T)
    result = result_def(T)

    assembly_format = "$input attr-dict `:` type($result)"

    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation):
        super().__init__(operands=[input], result_types=[SSAValue.get(input).type])

    def verify_(self) -> None:
        _verify_alu_type(self, self.result.type, "operand")


def compare_result_type(operand_type: Attribute) -> Attribute:
    """`i1` for scalar operands, `vector<N x i1>` for `vector<N x T>` ones (lane by lane)."""
    if isinstance(operand_type, VectorType):
        return VectorType(i1, operand_type.get_shape())
    return i1


class CompareOp(IRDLOperation, HasFolderInterface):
    """`%c = uop.<cmp> %x, %y : T` compares two scalars of type T into an `i1`; two literals
    fold (floats too: a comparison is exact, NaN compares unequal). On vectors it compares lane
    by lane: `%m = uop.cmplt %x, %y : vector<8xf32>` is a `vector<8xi1>` (the result type is
    implied by the operands', so it is not printed)."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(IntegerType | VectorType)

    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        operand_type = SSAValue.get(lhs).type
        build(self, [lhs, rhs], [compare_result_type(operand_type)])

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_list((self.lhs, self.rhs), printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.lhs.type)

    @classmethod
    def parse(cls, parser: Parser) -> CompareOp:
        unresolved = [parser.parse_unresolved_operand()]
        parser.parse_punctuation(",")
        unresolved.append(parser.parse_unresolved_operand())
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        operand_type = parser.parse_type()
        lhs, rhs = (parser.resolve_operand(u, operand_type) for u in unresolved)
        op = cls(lhs, rhs)
        op.attributes.update(attributes)
        return op

    def compare(self, x: int | float, y: int | float) -> bool:
        raise NotImplementedError

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        lhs, rhs = constant_of(self.lhs), constant_of(self.rhs)
        if lhs is None or rhs is None:
            return None
        x, y = (_integer(a) if isinstance(a, IntegerAttr) else a.value.data for a in (lhs, rhs))
        return (IntegerAttr(int(self.compare(x, y)), i1),)

    def verify_(self) -> None:
        operand_type = self.lhs.type
        _verify_storage_float(self, operand_type)
        if not (is_scalar_type(operand_type) or is_vector_type(operand_type)):
            raise VerifyException(
                f"{self.name} takes scalar or 1-D vector operands, got {operand_type}"
            )
        expected = compare_result_type(operand_type)
        if self.result.type != expected:
            raise VerifyException(
                f"{self.name} of {operand_type} gives {expected}, got {self.result.type}"
            )


def _integer_division_may_trap(op: BinaryOp) -> bool:
    """Integer x / y and x % y trap on y = 0 (and on MIN / -1), so licm must not hoist them out
    of a loop that might not run; float division gives inf or NaN instead. A constant divisor
    other than 0 and -1 cannot trap."""
    if is_float_type(lane_type(op.result.type)):
        return False
    divisor = op.rhs.owner
    return not (isinstance(divisor, ConstOp) and divisor.value.value.data not in (0, -1))


# One class per ALU primitive; the base gives the operands, format and traits, a mixin the type
# rule, the docstring the semantics (the `*_OPS` tables below are read off these classes).


@irdl_op_definition
class AddOp(BinaryOp):
    """x + y (wrapping for integers)"""

    name = "uop.add"

    traits = traits_def(Commutative())

    def evaluate(self, x: int, y: int) -> int:
        return x + y

    def fold_with_constant(self, x: SSAValue, c: IntegerAttr | FloatAttr) -> SSAValue | None:
        return x if _is_integer(c, 0) else None


@irdl_op_definition
class SubOp(BinaryOp):
    """x - y (wrapping for integers)"""

    name = "uop.sub"

    def evaluate(self, x: int, y: int) -> int:
        return x - y

    def fold_with_constant(self, x: SSAValue, c: IntegerAttr | FloatAttr) -> SSAValue | None:
        if isinstance(c, IntegerAttr):
            return x if _is_integer(c, 0) else None
        # x - (+0.0) is x for every float, -0.0 and NaN included; x - (-0.0) is not, for -0.0.
        return x if c.value.data == 0 and math.copysign(1.0, c.value.data) > 0 else None


@irdl_op_definition
class MulOp(BinaryOp):
    """x * y (wrapping for integers)"""

    name = "uop.mul"

    traits = traits_def(Commutative())

    def evaluate(self, x: int, y: int) -> int:
        return x * y

    def fold_with_constant(self, x: SSAValue, c: IntegerAttr | FloatAttr) -> SSAValue | Attribute | None:
        if _is_number(c, 1):
            return x
        return IntegerAttr(0, c.type) if _is_integer(c, 0) else None


@irdl_op_definition
class DivOp(BinaryOp):
    """x / y; integers truncate toward zero"""

    name = "uop.div"

    def may_trap(self) -> bool:
        return _integer_division_may_trap(self)

    def evaluate(self, x: int, y: int) -> int | None:
        # By 0 or -1 (MIN / -1) the generated code traps: that stays for run time to report.
        return None if y in (0, -1) else _truncating_division(x, y)

    def fold_with_constant(self, x: SSAValue, c: IntegerAttr | FloatAttr) -> SSAValue | None:
        return x if _is_number(c, 1) else None


@irdl_op_definition
class RemOp(BinaryOp):
    """remainder with the sign of x (C fmod / Zig @rem)"""

    name = "uop.rem"

    def may_trap(self) -> bool:
        return _integer_division_may_trap(self)

    def evaluate(self, x: int, y: int) -> int | None:
        return None if y in (0, -1) else x - _truncating_division(x, y) * y


@irdl_op_definition
class MaxOp(BinaryOp):
    """the larger of x and y (NaN-propagating for floats)"""

    name = "uop.max"

    traits = traits_def(Commutative())

    def evaluate(self, x: int, y: int) -> int:
        return max(x, y)


@irdl_op_definition
class MinOp(BinaryOp):
    """the smaller of x and y (NaN-propagating for floats)"""

    name = "uop.min"

    traits = traits_def(Commutative())

    def evaluate(self, x: int, y: int) -> int:
        return min(x, y)


@irdl_op_definition
class PowOp(FloatOnly, BinaryOp):
    """x raised to the power y"""

    name = "uop.pow"


@irdl_op_definition
class AndOp(IntegerOnly, BinaryOp):
    """bitwise (or logical, for i1) and"""

    name = "uop.and"

    traits = traits_def(Commutative())

    def evaluate(self, x: int, y: int) -> int:
        return x & y


@irdl_op_definition
class OrOp(IntegerOnly, BinaryOp):
    """bitwise (or logical, for i1) or"""

    name = "uop.or"

    traits = traits_def(Commutative())

    def evaluate(self, x: int, y: int) -> int:
        return x | y


@irdl_op_definition
class XorOp(IntegerOnly, BinaryOp):
    """bitwise (or logical, for i1) exclusive or"""

    name = "uop.xor"

    traits = traits_def(Commutative())

    def evaluate(self, x: int, y: int) -> int:
        return x ^ y


@irdl_op_definition
class ShlOp(IntegerOnly, BinaryOp):
    """x shifted left by y bits (zero if y ≥ width)"""

    name = "uop.shl"


@irdl_op_definition
class ShrOp(IntegerOnly, BinaryOp):
    """x shifted right by y bits (arithmetic for signed types)"""

    name = "uop.shr"


@irdl_op_definition
class NegOp(UnaryOp):
    """-x"""

    name = "uop.neg"


@irdl_op_definition
class AbsOp(UnaryOp):
    """|x|"""

    name = "uop.abs"


@irdl_op_definition
class SignOp(UnaryOp):
    """-1, 0 or 1 by the sign of x"""

    name = "uop.sign"


@irdl_op_definition
class SqrtOp(FloatOnly, UnaryOp):
    """square root"""

    name = "uop.sqrt"


@irdl_op_definition
class RecipOp(FloatOnly, UnaryOp):
    """1 / x"""

    name = "uop.recip"


@irdl_op_definition
class ExpOp(FloatOnly, UnaryOp):
    """e to the x"""

    name = "uop.exp"


@irdl_op_definition
class LogOp(FloatOnly, UnaryOp):
    """natural logarithm"""

    name = "uop.log"


@irdl_op_definition
class TanhOp(FloatOnly, UnaryOp):
    """hyperbolic tangent"""

    name = "uop.tanh"


@irdl_op_definition
class ErfOp(FloatOnly, UnaryOp):
    """error function"""

    name = "uop.erf"


@irdl_op_definition
class FloorOp(FloatOnly, UnaryOp):
    """round toward -inf"""

    name = "uop.floor"


@irdl_op_definition
class CeilOp(FloatOnly, UnaryOp):
    """round toward +inf"""

    name = "uop.ceil"


@irdl_op_definition
class RoundOp(FloatOnly, UnaryOp):
    """round half to even"""

    name = "uop.round"


@irdl_op_definition
class SinOp(FloatOnly, UnaryOp):
    """sine"""

    name = "uop.sin"


@irdl_op_definition
class CosOp(FloatOnly, UnaryOp):
    """cosine"""

    name = "uop.cos"


@irdl_op_definition
class TanOp(FloatOnly, UnaryOp):
    """tangent"""

    name = "uop.tan"


@irdl_op_definition
class AsinOp(FloatOnly, UnaryOp):
    """arcsine"""

    name = "uop.asin"


@irdl_op_definition
class AcosOp(FloatOnly, UnaryOp):
    """arccosine"""

    name = "uop.acos"


@irdl_op_definition
class AtanOp(FloatOnly, UnaryOp):
    """arctangent"""

    name = "uop.atan"


@irdl_op_definition
class SinhOp(FloatOnly, UnaryOp):
    """hyperbolic sine"""

    name = "uop.sinh"


@irdl_op_definition
class CoshOp(FloatOnly, UnaryOp):
    """hyperbolic cosine"""

    name = "uop.cosh"


@irdl_op_definition
class AsinhOp(FloatOnly, UnaryOp):
    """inverse hyperbolic sine"""

    name = "uop.asinh"


@irdl_op_definition
class AcoshOp(FloatOnly, UnaryOp):
    """inverse hyperbolic cosine"""

    name = "uop.acosh"


@irdl_op_definition
class AtanhOp(FloatOnly, UnaryOp):
    """inverse hyperbolic tangent"""

    name = "uop.atanh"


@irdl_op_definition
class IsnanOp(FloatOnly, UnaryOp):
    """1.0 if x is NaN else 0.0"""

    name = "uop.isnan"


@irdl_op_definition
class NotOp(IntegerOnly, UnaryOp):
    """bitwise (or logical, for i1) complement"""

    name = "uop.not"


@irdl_op_definition
class CmpltOp(CompareOp):
    """x < y"""

    name = "uop.cmplt"

    def compare(self, x: int | float, y: int | float) -> bool:
        return x < y


@irdl_op_definition
class CmpleOp(CompareOp):
    """x <= y"""

    name = "uop.cmple"

    def compare(self, x: int | float, y: int | float) -> bool:
        return x <= y


@irdl_op_definition
class CmpeqOp(CompareOp):
    """x == y"""

    name = "uop.cmpeq"

    traits = traits_def(Commutative())

    def compare(self, x: int | float, y: int | float) -> bool:
        return x == y


@irdl_op_definition
class CmpneOp(CompareOp):
    """x != y"""

    name = "uop.cmpne"

    traits = traits_def(Commutative())

    def compare(self, x: int | float, y: int | float) -> bool:
        return x != y


_ALU_CLASSES: tuple[type[IRDLOperation], ...] = (
    *(AddOp, SubOp, MulOp, DivOp, RemOp, MaxOp, MinOp, PowOp),
    *(AndOp, OrOp, XorOp, ShlOp, ShrOp),
    *(NegOp, AbsOp, SignOp, SqrtOp, RecipOp, ExpOp, LogOp, TanhOp, ErfOp),
    *(FloorOp, CeilOp, RoundOp, SinOp, CosOp, TanOp, AsinOp, AcosOp, AtanOp),
    *(SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, IsnanOp, NotOp),
    *(CmpltOp, CmpleOp, CmpeqOp, CmpneOp),
)

ALU_OPS: dict[str, type[IRDLOperation]] = {op.name.removeprefix("uop."): op for op in _ALU_CLASSES}
"""Every scalar ALU primitive by its short name (`"add"`, `"exp"`, `"cmplt"` …)."""


def _docs(base: type, mixin: type | None = None) -> dict[str, str]:
    """Short name → docstring of the ALU ops on `base` (with `mixin`, or with neither mixin)."""
    return {
        short: op.__doc__ or ""
        for short, op in ALU_OPS.items()
        if issubclass(op, base)
        and (issubclass(op, mixin) if mixin else not issubclass(op, (FloatOnly, IntegerOnly)))
    }


BINARY_OPS = _docs(BinaryOp)
FLOAT_BINARY_OPS = _docs(BinaryOp, FloatOnly)
INTEGER_BINARY_OPS = _docs(BinaryOp, IntegerOnly)
UNARY_OPS = _docs(UnaryOp)
FLOAT_UNARY_OPS = _docs(UnaryOp, FloatOnly)
INTEGER_UNARY_OPS = _docs(UnaryOp, IntegerOnly)
COMPARE_OPS = _docs(CompareOp)


@irdl_op_definition
class FmaOp(FloatOnly, IRDLOperation):
    """`%r = uop.fma %a, %b, %c : f32` is a·b + c rounded once (a fused multiply-add: Zig's
    `@mulAdd`, one instruction where the CPU has an FMA unit and a libm call where it has not).
    Floats only; vectors lane by lane: `uop.fma %a, %b, %c : vector<8xf32>`. It is not an
    `ALU_OPS` entry (those take one or two operands) but is one of `VECTOR_ALU_OPS`."""

    name = "uop.fma"

    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    addend = operand_def(T)
    result = result_def(T)

    assembly_format = "$lhs `,` $rhs `,` $addend attr-dict `:` type($result)"

    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation, addend: SSAValue | Operation):
        build(self, [lhs, rhs, addend], [SSAValue.get(lhs).type])

    def verify_(self) -> None:
        super().verify_()  # FloatOnly: float lanes
        _verify_alu_type(self, self.result.type, "operands")



@irdl_op_definition
class CastOp(IRDLOperation, HasFolderInterface):
    """`%y = uop.cast %x : f32 to i32`: numeric conversion (float→int truncates toward zero,
    saturating; int→i1 is `x != 0`). A storage float (bfloat16, float8) converts to or from f32
    only: from it exactly, to it rounded to nearest even (ONNX Cast), a value beyond its largest
    finite one saturating to ±max for float8 (ONNX's default `saturate=1`; see
    `uop.cast_unsaturated`) and becoming ±Inf for bfloat16."""

    name = "uop.cast"

    input = operand_def()
    result = result_def()

    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        if self.input.type == self.result.type:
            return (self.input,)
        attr = constant_of(self.input)
        folded = None if attr is None else fold_cast(attr, self.result.type)
        return None if folded is None else (folded,)

    def verify_(self) -> None:
        source, target = self.input.type, self.result.type
        if is_vector_type(source) or is_vector_type(target):
            _verify_vector_cast(source, target)  # never a storage float's: is_lossless_cast
            return
        for t in (source, target):
            if not is_scalar_type(t):
                raise VerifyException(f"uop.cast converts scalars or vectors, got {t}")
        _verify_storage_float_cast("uop.cast", source, target)


def _verify_storage_float_cast(name: str, source: Attribute, target: Attribute) -> None:
    """A storage float (bfloat16, float8: kept as bits, `zant.ir.types.is_storage_float`)
    converts to or from f32 only: every other conversion goes through f32."""
    for t, other in ((source, target), (target, source)):
        if is_storage_float(t) and other != Float32Type():
            raise VerifyException(f"{name} converts {t} to or from f32 only, got {source} to {target}")


@irdl_op_definition
class CastUnsaturatedOp(IRDLOperation):
    """`%y = uop.cast_unsaturated %x : f32 to f8E4M3FN`: ONNX Cast with `saturate=0` to a float8
    type: rounded to nearest even as `uop.cast`, but a value beyond the type's largest finite
    one (and ±Inf) becomes ±Inf (f8E5M2) or NaN (the fn and fnuz types, which have no Inf)
    instead of ±max (`uop.cast`, ONNX's default `saturate=1`)."""

    name = "uop.cast_unsaturated"

    input = operand_def()
    result = result_def()

    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        source, target = self.input.type, self.result.type
        if source != Float32Type() or not is_storage_float(target) or isinstance(target, BFloat16Type):
            raise VerifyException(f"uop.cast_unsaturated converts f32 to a float8 type, got {source} to {target}")


def is_lossless_cast(source: Attribute, target: Attribute) -> bool:
    """Casts whose lane-wise form needs no saturation or wrapping: float to float, integer to
    float, and integer widening that keeps every value (not to or from i1); never a storage
    float's (bfloat16, float8: converted by their bits, one scalar at a time)."""
    if is_storage_float(source) or is_storage_float(target):
        return False
    if is_float_type(target):
        return is_float_type(source) or (isinstance(source, IntegerType) and source != i1)
    if not isinstance(source, IntegerType) or not isinstance(target, IntegerType) or i1 in (source, target):
        return False
    unsigned = Signedness.UNSIGNED
    source_signed = source.signedness.data != unsigned
    target_signed = target.signedness.data != unsigned
    if source_signed and not target_signed:
        return False
    extra = 1 if target_signed and not source_signed else 0
    return target.width.data >= source.width.data + extra


def _verify_vector_cast(source: Attribute, target: Attribute) -> None:
    if not (is_vector_type(source) and is_vector_type(target)) or lanes(source) != lanes(target):
        raise VerifyException(f"uop.cast of vectors needs two vectors of one length, got {source} to {target}")
    if not is_lossless_cast(lane_type(source), lane_type(target)):
        raise VerifyException(
            f"uop.cast of vectors must be lossless (float, int to float, or widening), "
            f"got {source} to {target}"
        )


@irdl_op_definition
class BitcastOp(IRDLOperation):
    """`%y = uop.bitcast %x : f32 to i32`: the same bits read as another scalar type of the same
    width (ONNX BitCast; no numeric conversion, so NaN payloads and -0.0 survive). Vectors lane
    by lane: `uop.bitcast %v : vector<8xf32> to vector<8xi32>`."""

    name = "uop.bitcast"

    input = operand_def()
    result = result_def()

    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        source, target = self.input.type, self.result.type
        if is_vector_type(source) or is_vector_type(target):
            if not (is_vector_type(source) and is_vector_type(target)) or lanes(source) != lanes(target):
                raise VerifyException(f"uop.bitcast of vectors needs two vectors of one length, got {source} to {target}")
            source, target = lane_type(source), lane_type(target)
        for t in (source, target):
            if not is_scalar_type(t) or isinstance(t, IndexType) or t == i1:
                raise VerifyException(f"uop.bitcast reinterprets sized scalars, got {t}")
        if source.bitwidth != target.bitwidth:
            raise VerifyException(f"uop.bitcast needs equal widths, got {source} ({source.bitwidth} bits) "
                                  f"to {target} ({target.bitwidth} bits)")


@irdl_op_definition
class WhereOp(IRDLOperation, HasFolderInterface):
    """`%z = uop.where %c, %x, %y : f32` is x if the i1 `%c` is true, else y (x and y may be
    vectors, picked whole). With a `vector<N x i1>` condition it picks lane by lane between two
    `vector<N x T>`: `%z = uop.where %m, %x, %y : vector<8xi1>, vector<8xf32>` (the condition's
    type is printed only when it is a vector)."""

    name = "uop.where"

    T: ClassVar = VarConstraint("T", AnyAttr())
    condition = operand_def(IntegerType | VectorType)
    true_value = operand_def(T)
    false_value = operand_def(T)
    result = result_def(T)

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        if isinstance(self.condition.type, VectorType):
            printer.print_attribute(self.condition.type)
            printer.print_string(", ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> WhereOp:
        unresolved = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            unresolved.append(parser.parse_unresolved_operand())
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = [parser.parse_type()]
        if parser.parse_optional_punctuation(","):
            types.append(parser.parse_type())
        condition_type = types[0] if len(types) == 2 else i1
        condition = parser.resolve_operand(unresolved[0], condition_type)
        x, y = (parser.resolve_operand(u, types[-1]) for u in unresolved[1:])
        op = cls(condition, x, y)
        op.attributes.update(attributes)
        return op

    def verify_(self) -> None:
        condition = self.condition.type
        if condition == i1:
            return
        if not (isinstance(condition, VectorType) and condition.get_num_dims() == 1
                and condition.get_element_type() == i1):
            raise VerifyException(f"the condition must be i1 or a 1-D vector of i1, got {condition}")
        values = self.result.type
        if not is_vector_type(values) or lanes(values) != lanes(condition):
            raise VerifyException(
                f"a {condition} condition picks lanes of a {lanes(condition)}-lane vector, got {values}"
            )

    traits = traits_def(Pure())

    def __init__(
        self,
        condition: SSAValue | Operation,
        true_value: SSAValue | Operation,
        false_value: SSAValue | Operation,
    ):
        build(self, [condition, true_value, false_value], [SSAValue.get(true_value).type])

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        if self.true_value == self.false_value:
            return (self.true_value,)
        condition = constant_of(self.condition)
        if condition is None:
            return None
        return (self.true_value if _integer(condition) else self.false_value,)

