"""Model-local ONNX functions in the `onnx` dialect: `onnx.function`, `onnx.call`, `onnx.return`.

A model's `functions` (`FunctionProto`s: what torch's exporter writes for a custom module with
`export_modules_as_functions`, or any converter that keeps a subgraph as a function) are
imported as they are, one `onnx.function` per function and instance, a node calling one as an
`onnx.call` of it; `inline-functions` replaces each call by a copy of the body.

    onnx.function @"custom.Scale"(%x: tensor<4xf32>) -> tensor<4xf32>
        attributes {domain = "custom", op_type = "Scale"} {
      %y = onnx.Mul(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      onnx.return %y : tensor<4xf32>
    }
    %r = onnx.call @"custom.Scale"(%a) : (tensor<4xf32>) -> tensor<4xf32>

An ONNX function is generic: its values have no types and its body may refer to the calling
node's attributes (`ref_attr_name`). The dialect's values are typed and its attributes are
values, so the importer makes one `onnx.function` per distinct instance (the callee's input
types and attribute values), its body typed by ONNX's inference and its attribute references
resolved; a second node with the same types and attributes calls the same symbol.

`onnx.function` is a symbol (`sym_name`) in the module, isolated from above, of one block whose
arguments have its `function_type`'s inputs and which ends in `onnx.return` of its results;
`domain` and `op_type` say which ONNX function it is. `onnx.call` names one and its operand and
result types must be the function's.
"""

from __future__ import annotations

from collections.abc import Sequence
from io import StringIO

from xdsl.dialects.builtin import (
    FlatSymbolRefAttrConstr,
    FunctionType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
)
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    ReturnLike,
    SymbolOpInterface,
    SymbolTable,
    SymbolUserOpInterface,
)
from xdsl.utils.exceptions import VerifyException

def _spelled(types: Sequence[Attribute]) -> str:
    """Types as the IR writes them, in brackets."""
    stream = StringIO()
    printer = Printer(stream=stream)
    printer.print_list(types, printer.print_attribute)
    return f"[{stream.getvalue()}]"


_SHOWN_PROPERTIES = ("domain", "op_type")
"""Properties printed in the `attributes {...}` dictionary of the custom format."""


def function_symbol(domain: str, op_type: str, instance: int = 0) -> str:
    """The symbol of an instance of the ONNX function `domain.op_type`: `custom.Scale`, then
    `custom.Scale_1`, `custom.Scale_2` ... for instances of other types or attributes."""
    base = f"{domain}.{op_type}" if domain else op_type
    return base if instance == 0 else f"{base}_{instance}"


@irdl_op_definition
class FunctionOp(IRDLOperation):
    """An instance of a model-local ONNX function: its body for one set of input types and
    attribute values (see the module docstring)."""

    name = "onnx.function"

    body = region_def("single_block")
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    domain = prop_def(StringAttr)
    op_type = prop_def(StringAttr)

    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove())

    def __init__(
        self,
        sym_name: str,
        function_type: FunctionType,
        domain: str,
        op_type: str,
        region: Region | None = None,
    ):
        if region is None:
            region = Region(Block(arg_types=function_type.inputs.data))
        super().__init__(
            properties={
                "sym_name": StringAttr(sym_name),
                "function_type": function_type,
                "domain": StringAttr(domain),
                "op_type": StringAttr(op_type),
            },
            regions=[region],
        )

    def verify_(self) -> None:
        block = self.body.block
        if tuple(block.arg_types) != self.function_type.inputs.data:
            raise VerifyException(
                f"onnx.function @{self.sym_name.data}: its block's argument types "
                f"{_spelled(block.arg_types)} are not its inputs' {_spelled(self.function_type.inputs.data)}"
            )
        if not isinstance(block.last_op, ReturnOp):
            raise VerifyException(f"onnx.function @{self.sym_name.data}: its body must end in onnx.return")

    @classmethod
    def parse(cls, parser: Parser) -> FunctionOp:
        start = parser.pos
        name, inputs, outputs, region, extra, arg_attrs, res_attrs = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type")
        )
        if arg_attrs is not None or res_attrs is not None:
            parser.raise_error("onnx.function: arguments and results take no attributes", start, parser.pos)
        attributes = dict(extra.data) if extra is not None else {}
        shown = {}
        for key in _SHOWN_PROPERTIES:
            value = attributes.pop(key, None)
            if not isinstance(value, StringAttr):
                parser.raise_error(f"onnx.function: expected a string '{key}' in its attributes", start, parser.pos)
            shown[key] = value.data
        op = cls(name, FunctionType.from_lists(inputs, outputs), shown["domain"], shown["op_type"], region)
        op.attributes |= attributes
        return op

    def print(self, printer: Printer) -> None:
        attributes = {key: self.properties[key] for key in _SHOWN_PROPERTIES} | dict(self.attributes)
        print_func_op_like(
            printer, self.sym_name, self.function_type, self.body, attributes,
            reserved_attr_names=("sym_name", "function_type"),
        )


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """The results of an `onnx.function`, of its result types."""

    name = "onnx.return"

    arguments = var_operand_def()

    traits = traits_def(HasParent(FunctionOp), IsTerminator(), ReturnLike())

    assembly_format = "attr-dict ($arguments^ `:` type($arguments))?"

    def __init__(self, *values: SSAValue | Operation):
        super().__init__(operands=[values])

    def verify_(self) -> None:
        function = self.parent_op()
        assert isinstance(function, FunctionOp)
        expected = function.function_type.outputs.data
        if tuple(self.arguments.types) != expected:
            raise VerifyException(
                f"onnx.return: the results' types {_spelled(self.arguments.types)} are not those of "
                f"@{function.sym_name.data}, {_spelled(expected)}"
            )


class _CalleeIsAFunction(SymbolUserOpInterface):
    """An `onnx.call` names an `onnx.function` of the module, of its operand and result types."""

    def verify(self, op: Operation) -> None:
        assert isinstance(op, CallOp)
        callee = SymbolTable.lookup_symbol(op, op.callee)
        name = op.callee.string_value()
        if not isinstance(callee, FunctionOp):
            raise VerifyException(f"onnx.call: @{name} is not an onnx.function of the module")
        expected = callee.function_type
        if tuple(op.arguments.types) != expected.inputs.data:
            raise VerifyException(
                f"onnx.call @{name}: operand types {_spelled(op.arguments.types)}, the function takes "
                f"{_spelled(expected.inputs.data)}"
            )
        if tuple(op.res.types) != expected.outputs.data:
            raise VerifyException(
                f"onnx.call @{name}: result types {_spelled(op.res.types)}, the function gives "
                f"{_spelled(expected.outputs.data)}"
            )


@irdl_op_definition
class CallOp(IRDLOperation):
    """A node calling a model-local function: the `onnx.function` instance for its types and
    attributes."""

    name = "onnx.call"

    arguments = var_operand_def()
    callee = prop_def(FlatSymbolRefAttrConstr)
    res = var_result_def()

    traits = traits_def(_CalleeIsAFunction())

    assembly_format = "$callee `(` $arguments `)` attr-dict `:` functional-type($arguments, $res)"

    def __init__(self, callee: str, arguments: Sequence[SSAValue], result_types: Sequence[Attribute]):
        super().__init__(
            operands=[arguments], result_types=[result_types], properties={"callee": SymbolRefAttr(callee)}
        )


FUNCTION_OPS = (FunctionOp, CallOp, ReturnOp)
"""The ops this module adds to the `onnx` dialect."""

