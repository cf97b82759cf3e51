"""Static shapes that the declared outputs pin down through a run-time parameter input.

An expanded function body (CenterCropPad's, AffineGrid's) computes its intermediate shapes from a
small integer graph input (`shape`, `size`): Shape → Max → Sub → Pad → Slice. Folding cannot help
while that input is only known at run time, yet the model declares its outputs' shapes, and only
some values of the input produce them. This step tries values for the parameter inputs the
unresolved values depend on, each element taken from the dimensions the graph declares (outputs
and other inputs), in lexicographic order: the model is inferred and folded as if the inputs held
the candidate, and the first candidate for which every value gets a static shape and the outputs
their declared ones gives its shapes to the unresolved values, declared in the model (as
`value_info`). The inputs themselves stay run-time inputs.

The shapes are then the compiled ones, and the value is checked where it is used: every lowering
that reads a parameter at run time (Pad's pads, Slice's starts, Expand's shape ...) compares it
with the shapes it was compiled for, and `NAME_predict` returns STATUS_BAD_PARAMETER when they
disagree (as for `shapes_from_consumers`' guesses). Another value that gives the declared output
shapes through other intermediate shapes can only be refused that way, never read out of bounds.

The control-flow unroller asks the same question (`first_consistent_guess`, each trial unrolled)
of an If whose condition is only known at run time and whose branches cannot be merged: it
inlines the branch the guessed values choose, behind a Guard of the condition's value.

Why before the IR (issue 31 item 3): it finds types (static shapes) for values the importer
could not otherwise type, and the IR has no value without one; the outputs are declared
`value_info`, the graph's nodes are not changed.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import ModelProto, TensorProto, numpy_helper

from zant.ir.onnx_graph import CONTROL_FLOW_OPS
from zant.dialects.onnx_shape_folding import all_shapes_static, static_shape

MAX_PARAMETER_ELEMENTS = 6
"""Parameter inputs are small: a shape, a size, a pair of axes."""
MAX_CANDIDATES = 512
"""Candidates tried at most (each is one shape inference and folding), in lexicographic order."""

_INTEGER = (TensorProto.INT64, TensorProto.INT32)

Infer = Callable[[ModelProto], ModelProto]


def _unresolved(model: ModelProto) -> list[str]:
    graph = model.graph
    typed = {v.name: v.type for v in [*graph.input, *graph.value_info, *graph.output]}
    constants = {i.name for i in graph.initializer}
    return [
        name
        for node in graph.node
        for name in node.output
        if name and name not in constants and (name not in typed or static_shape(typed[name]) is None)
    ]


def _parameters(model: ModelProto, unresolved: list[str]) -> list[onnx.ValueInfoProto]:
    """The small integer graph inputs the unresolved values are computed from, in input order."""
    graph = model.graph
    producers = {output: node for node in graph.node for output in node.output}
    initializers = {i.name for i in graph.initializer}
    seen, todo = set(), list(unresolved)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            if name in producers:
                todo.extend(n for n in producers[name].input if n)
    found = []
    for value in graph.input:
        shape = static_shape(value.type)
        if (
            value.name in seen
            and value.name not in initializers
            and value.type.tensor_type.elem_type in _INTEGER
            and shape is not None
            and len(shape) <= 1
            and 0 < int(np.prod(shape)) <= MAX_PARAMETER_ELEMENTS
        ):
            found.append(value)
    return found


Typed = tuple[int, tuple[int, ...]]
"""An element type and a static shape."""


def _types(model: ModelProto) -> dict[str, Typed]:
    graph = model.graph
    types = {i.name: (i.data_type, tuple(i.dims)) for i in graph.initializer}
    for value in [*graph.value_info, *graph.output]:
        shape = static_shape(value.type)
        if shape is not None:
            types[value.name] = (value.type.tensor_type.elem_type, tuple(shape))
    return types


def _trial(model: ModelProto, values: dict[str, np.ndarray], infer: Infer) -> dict[str, Typed] | None:
    """The types of every value when the parameter inputs hold `values`, or None when
    some value stays without one or an output's differs from its declared shape."""
    trial = ModelProto()
    trial.CopyFrom(model)
    declared = {v.name: static_shape(v.type) for v in trial.graph.output}
    # Every shape inferred afresh from the values: one an earlier round took from a consumer
    # would hide a contradiction; the outputs' are compared with the declaration after.
    del trial.graph.value_info[:]
    for output in trial.graph.output:
        output.type.tensor_type.ClearField("shape")
    for name, value in values.items():
        trial.graph.initializer.append(numpy_helper.from_array(value, name))
    try:
        trial = infer(trial)
    except Exception:  # noqa: BLE001 - a value the model refuses (a negative size ...): not a candidate
        return None
    if not all_shapes_static(trial):
        return None
    types = _types(trial)
    if any(types.get(name, (0, None))[1] != tuple(shape) for name, shape in declared.items()):
        return None
    return types


def shapes_from_parameter_guesses(model: ModelProto, infer: Infer) -> ModelProto:
    """`model` with the shapes its declared outputs pin down declared (see the module doc);
    `model` itself when there is nothing to guess or the guesses do not settle the shapes.
    `infer` is one round of shape inference and folding."""
    unresolved = _unresolved(model)
    # Control flow is unrolled first (shape inference runs again after each node): a trial
    # would not see the shapes inside a subgraph.
    if not unresolved or any(node.op_type in CONTROL_FLOW_OPS for node in model.graph.node):
        return model
    found = first_consistent_guess(model, unresolved, infer, typed=unresolved)
    if found is None:
        return model
    _, types = found
    return _declare(model, {name: types[name] for name in unresolved}, infer)


def first_consistent_guess(
    model: ModelProto, values_of: list[str], pipeline: Infer, typed: Sequence[str] = ()
) -> tuple[dict[str, np.ndarray], dict[str, Typed]] | None:
    """The first candidate values of the parameter inputs that `values_of` are computed from
    (in lexicographic order) for which `pipeline` gives every value a static shape, the outputs
    their declared ones and each of `typed` a type, with the types it gives; None when there is
    none among `MAX_CANDIDATES`."""
    parameters = _parameters(model, values_of)
    declared_outputs = [static_shape(v.type) for v in model.graph.output]
    if not parameters or any(shape is None for shape in declared_outputs):
        return None
    names = {p.name for p in parameters}
    dims = sorted(
        {d for v in [*model.graph.input, *model.graph.output] if v.name not in names for d in static_shape(v.type) or []}
    )
    sizes = [int(np.prod(static_shape(p.type))) for p in parameters]
    for flat in itertools.islice(itertools.product(dims, repeat=sum(sizes)), MAX_CANDIDATES):
        values, start = {}, 0
        for parameter, size in zip(parameters, sizes):
            dtype = onnx.helper.tensor_dtype_to_np_dtype(parameter.type.tensor_type.elem_type)
            values[parameter.name] = np.array(flat[start : start + size], dtype).reshape(static_shape(parameter.type))
            start += size
        types = _trial(model, values, pipeline)
        if types is not None and all(name in types for name in typed):
            return values, types
    return None


def _declare(model: ModelProto, types: dict[str, Typed], infer: Infer) -> ModelProto:
    """`model` with `types` declared and inferred again; `model` itself if that fails."""
    result = ModelProto()
    result.CopyFrom(model)
    infos = {v.name: v for v in result.graph.value_info}
    for name, typed in types.items():
        info = infos.get(name)
        if info is None:
            info = result.graph.value_info.add()
            info.name = name
        info.type.CopyFrom(onnx.helper.make_tensor_type_proto(typed[0], list(typed[1])))
    try:
        result = infer(result)
    except Exception:  # noqa: BLE001 - declared shapes ONNX's inference rejects: leave the model
        return model
    return result if all_shapes_static(result) else model
