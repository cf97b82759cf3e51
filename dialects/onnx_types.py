"""The `onnx` dialect's non-tensor value types: `!onnx.seq<T>` and `!onnx.opt<T>`.

ONNX values are tensors, sequences of tensors or optionals (of a tensor or a sequence). The
importer gives a sequence value the type `!onnx.seq<tensor<...>>`, its element type as ONNX's
inference has it (a dimension the elements do not share is dynamic, `?`), and an optional value
`!onnx.opt<tensor<...>>` or `!onnx.opt<!onnx.seq<...>>`. Neither type says how long a sequence is
or whether an optional holds a value: `resolve-sequences` follows each one as a list of tensor
values known at compile time and rewrites the ops on them away, so no later pass sees one.

`VALUE_TYPE` is the operand/result constraint of the ops whose schema admits such values
(SequenceAt, Optional, Identity, ...): a tensor, a sequence or an optional.
"""

from __future__ import annotations

import base64
from typing import ClassVar

from xdsl.dialects.builtin import StringAttr, TensorType, UnrankedTensorType
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import base, irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


class _ContainerType(ParametrizedAttribute, TypeAttribute):
    """A type holding one element type, spelled `!onnx.NAME<T>`; `HOLDS` is what T may be."""

    element: Attribute = param_def(Attribute)
    HOLDS: ClassVar[tuple[type[Attribute], ...]]
    HOLDS_TEXT: ClassVar[str]

    def __init__(self, element: Attribute):
        super().__init__(element)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            return [parser.parse_type()]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.element)

    def verify(self) -> None:
        if not isinstance(self.element, self.HOLDS):
            raise VerifyException(f"!{self.name} holds {self.HOLDS_TEXT}, not {self.element}")


@irdl_attr_definition
class SequenceType(_ContainerType):
    """`!onnx.seq<T>`: an ONNX sequence of tensors of type T (ranked or unranked)."""

    name = "onnx.seq"
    HOLDS = (TensorType, UnrankedTensorType)
    HOLDS_TEXT = "tensors"


@irdl_attr_definition
class OptionalType(_ContainerType):
    """`!onnx.opt<T>`: an ONNX optional of a tensor or of a sequence of tensors."""

    name = "onnx.opt"
    HOLDS = (TensorType, UnrankedTensorType, SequenceType)
    HOLDS_TEXT = "a tensor or a sequence"


VALUE_TYPE = base(TensorType) | base(UnrankedTensorType) | base(SequenceType) | base(OptionalType)
"""A value an ONNX op may take or give where its schema admits sequences or optionals."""


def is_tensor_type(schema_type: str) -> bool:
    """Whether an ONNX schema type string ('tensor(float)', 'seq(tensor(int64))', ...) is a tensor's."""
    return schema_type.startswith(("tensor(", "sparse_tensor("))


GRAPH_PREFIX = "onnx.graph:"
"""How a graph attribute (SequenceMap's body) is kept: a string property, this prefix and the
GraphProto's bytes in base64 (`graph_attr`); `resolve-sequences` reads it back (`attr_graph`)."""


def graph_attr(graph) -> StringAttr:
    """The property that keeps the GraphProto `graph`."""
    return StringAttr(GRAPH_PREFIX + base64.b64encode(graph.SerializeToString()).decode("ascii"))


def attr_graph(attribute: Attribute):
    """The GraphProto a `graph_attr` property keeps, or None for any other attribute."""
    from onnx import GraphProto

    if not isinstance(attribute, StringAttr) or not attribute.data.startswith(GRAPH_PREFIX):
        return None
    graph = GraphProto()
    graph.ParseFromString(base64.b64decode(attribute.data.removeprefix(GRAPH_PREFIX)))
    return graph
