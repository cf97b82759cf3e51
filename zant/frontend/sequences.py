"""Sequence and optional values at the graph's edges, and their types in the `onnx` dialect.

ONNX types a sequence by its elements' type alone: how many elements a graph input holds, and
their shapes, are not in the model. Zant compiles a sequence input for a length and element
shapes fixed at compile time, given like a tensor input's shape (`input_shapes`, the API's and
`--input-shape`'s): a list of shapes, one per element (`[[4], [3], [2]]`; `[]` the empty
sequence). In the C ABI the input is then that many tensors, in order, named `x.0`, `x.1` ...;
the importer builds the sequence from them with an `onnx.SequenceConstruct`, so the IR holds
the model's sequence value faithfully and `resolve-sequences` takes it apart again.

An optional input is compiled either holding a value (its shape given as for a tensor, or as
a sequence's list of shapes for an optional sequence; in the ABI the tensor(s) it holds, the
same names) or empty (`None`: no ABI input at all), built with an `onnx.Optional`. An optional
tensor input without a given shape holds a tensor of the shape the model declares.

`value_type` gives a sequence value the type `!onnx.seq<T>` and an optional `!onnx.opt<T>`,
T as ONNX's inference has it: a dimension the elements do not share is dynamic, an unknown rank
unranked. A tensor produced by a sequence op (SequenceAt, OptionalGetElement ...) may be typed
the same way; `resolve-sequences` replaces it by the element it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx
from onnx import ModelProto, TypeProto
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType, UnrankedTensorType
from xdsl.ir import Attribute

from zant.dialects.onnx_types import OptionalType, SequenceType
from zant.errors import ZantError
from zant.ir.types import mlir_element_type

SEQUENCE_RESULT_OPS = frozenset({"SequenceAt", "OptionalGetElement", "ConcatFromSequence"})
"""Ops whose tensor result `resolve-sequences` replaces by a tensor it knows: their results may
have a type with dynamic dimensions at import."""


@dataclass(frozen=True)
class EdgeLayout:
    """A sequence or optional graph input as compiled: `shapes` of the tensors the caller
    passes (one per sequence element, one for an optional tensor, none for an empty optional);
    `sequence` whether they form a sequence, `optional` whether it is wrapped in an optional."""

    shapes: tuple[tuple[int, ...], ...]
    sequence: bool
    optional: bool
    present: bool = True

    def names(self, name: str) -> list[str]:
        """The ABI names of its tensors: `name.0`, `name.1` ... for a sequence, else `name`."""
        return [f"{name}.{i}" for i in range(len(self.shapes))] if self.sequence else [name] * len(self.shapes)


def _kind(type_proto: TypeProto) -> str:
    return type_proto.WhichOneof("value") or "none"


def _shapes(name: str, given) -> tuple[tuple[int, ...], ...]:
    try:
        shapes = tuple(tuple(int(d) for d in shape) for shape in given)
    except TypeError:
        raise ZantError(
            f"--input-shape {name}: a sequence input takes one shape per element, e.g. {name}=[[4],[3]]"
        ) from None
    for shape in shapes:
        if any(d < 0 for d in shape):
            raise ZantError(f"--input-shape {name}: negative dimension in {list(shape)}")
    return shapes


def _set_shape(tensor: onnx.TypeProto.Tensor, shapes: tuple[tuple[int, ...], ...]) -> None:
    """The element shape every one of `shapes` has (a dimension they differ in left unset)."""
    tensor.ClearField("shape")
    if not shapes or any(len(s) != len(shapes[0]) for s in shapes):
        return
    tensor.shape.SetInParent()
    for extents in zip(*shapes):
        dim = tensor.shape.dim.add()
        if len(set(extents)) == 1:
            dim.dim_value = extents[0]
    if not shapes[0]:
        tensor.shape.SetInParent()


def edge_layouts(model: ModelProto, input_shapes: dict) -> tuple[dict[str, list[int]], dict[str, EdgeLayout]]:
    """Split `input_shapes` into the tensor inputs' shapes and the layouts of the sequence and
    optional graph inputs (see the module docstring); the latter's element shapes are written
    into the model's input types, for ONNX's inference. A sequence input without a layout, or
    a layout that does not fit its input, is a `ZantError` naming it."""
    initializers = {t.name for t in model.graph.initializer}
    inputs = {v.name: v for v in model.graph.input if v.name not in initializers}
    tensors: dict[str, list[int]] = {}
    layouts: dict[str, EdgeLayout] = {}
    for name, value in inputs.items():
        kind = _kind(value.type)
        if kind == "tensor_type":
            if name in input_shapes:
                tensors[name] = input_shapes[name]
            continue
        given = input_shapes.get(name, ...)
        if kind == "sequence_type":
            if given is ... or given is None:
                raise ZantError(
                    f"input '{name}' is a sequence: give its length and element shapes at compile time "
                    f"(--input-shape {name}=[[D0,D1],[D0,D1],...]; a sequence is N tensors in the C ABI)"
                )
            shapes = _shapes(name, given)
            element = value.type.sequence_type.elem_type
            if _kind(element) != "tensor_type":
                raise ZantError(f"input '{name}': a sequence of {_kind(element).removesuffix('_type')}s is not supported")
            _set_shape(element.tensor_type, shapes)
            layouts[name] = EdgeLayout(shapes, sequence=True, optional=False)
        elif kind == "optional_type":
            inner = value.type.optional_type.elem_type
            inner_kind = _kind(inner)
            if given is None:
                layouts[name] = EdgeLayout((), sequence=inner_kind == "sequence_type", optional=True, present=False)
            elif inner_kind == "sequence_type":
                if given is ...:
                    raise ZantError(
                        f"input '{name}' is an optional sequence: give its element shapes (--input-shape "
                        f"{name}=[[D0],[D0],...]) or say it is empty ({name}=none)"
                    )
                shapes = _shapes(name, given)
                _set_shape(inner.sequence_type.elem_type.tensor_type, shapes)
                layouts[name] = EdgeLayout(shapes, sequence=True, optional=True)
            elif inner_kind == "tensor_type":
                tensor = inner.tensor_type
                if given is ...:
                    declared = [d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim]
                    if not tensor.HasField("shape") or -1 in declared:
                        raise ZantError(
                            f"input '{name}' is an optional tensor of unknown shape: give it (--input-shape "
                            f"{name}=D0xD1...) or say it is empty ({name}=none)"
                        )
                    given = declared
                shape = tuple(int(d) for d in given)
                _set_shape(tensor, (shape,))
                layouts[name] = EdgeLayout((shape,), sequence=False, optional=True)
            else:
                raise ZantError(f"input '{name}': an optional {inner_kind.removesuffix('_type')} is not supported")
        else:
            raise ZantError(f"input '{name}' is a {kind.removesuffix('_type')}, which Zant does not compile")
    unknown = sorted(set(input_shapes) - set(inputs))
    if unknown:
        known = ", ".join(inputs) or "none"
        raise ZantError(f"--input-shape names unknown input '{unknown[0]}' (inputs: {known})")
    return tensors, layouts


def tensor_value_type(type_proto: TypeProto, name: str) -> TensorType | UnrankedTensorType:
    """The tensor type `type_proto` describes, an unknown extent dynamic, an unknown rank unranked."""
    tensor = type_proto.tensor_type
    element = mlir_element_type(tensor.elem_type, name)
    if not tensor.HasField("shape"):
        return UnrankedTensorType(element)
    return TensorType(element, [d.dim_value if d.HasField("dim_value") else DYNAMIC_INDEX for d in tensor.shape.dim])


def value_type(type_proto: TypeProto, name: str) -> Attribute | None:
    """`!onnx.seq<...>` / `!onnx.opt<...>` for a sequence or optional value, None for a tensor
    (whose static type the importer requires); a map is a `ZantError` naming `name`."""
    kind = _kind(type_proto)
    if kind == "tensor_type":
        return None
    if kind == "sequence_type":
        element = type_proto.sequence_type.elem_type
        if _kind(element) != "tensor_type":
            raise ZantError(f"'{name}': a sequence of {_kind(element).removesuffix('_type')}s is not supported")
        return SequenceType(tensor_value_type(element, name))
    if kind == "optional_type":
        inner = type_proto.optional_type.elem_type
        inner_type = value_type(inner, name) if _kind(inner) != "tensor_type" else tensor_value_type(inner, name)
        return OptionalType(inner_type)
    raise ZantError(f"'{name}' is a {kind.removesuffix('_type')}, which Zant does not compile")


def edge_value_ops(layout: EdgeLayout, parts: list, value: Attribute) -> list:
    """The ops that make a sequence or optional input of type `value` from the tensors the
    caller passes (`parts`): a SequenceConstruct (SequenceEmpty for none), an Optional around it
    or around the one tensor; the value is the last op's result."""
    from zant.dialects.onnx import OptionalOp, SequenceConstructOp, SequenceEmptyOp

    sequence_type = value.element if layout.optional else value
    ops = []
    if layout.sequence and layout.present:
        if parts:
            ops.append(SequenceConstructOp.from_onnx(parts, [sequence_type], {}))
        else:
            ops.append(SequenceEmptyOp.from_onnx([], [sequence_type], {}))
        parts = [ops[-1].results[0]]
    if layout.optional:
        ops.append(OptionalOp.from_onnx([parts[0] if layout.present else None], [value], {}))
    return ops
