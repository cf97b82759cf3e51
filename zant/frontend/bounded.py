"""Data-dependent output sizes a model leaves symbolic, compiled at their upper bound.

Some ops' output sizes depend on the data: Unique's number of distinct values. A model that
declares such a size static gets a run-time check of it (the op's lowering ends `NAME_predict`
with `STATUS_OUTPUT_SIZE` when the data disagree). A model that leaves it symbolic (`'?'`)
gets, as embedded detection post-processing does, a buffer with the op's upper bound as its
capacity: the dimension is compiled at that bound (`BOUNDS`, the one place that decides it),
the valid part comes first and the rest is zero, and the graph gets one more output, the int32
extents array (`EXTENTS_NAME`, last), with one entry per bounded output in output order: how
many entries of its bounded dimension are valid after the call. Models without bounded outputs
keep their signature unchanged. Another op joins by an entry in `BOUNDS` and a lowering that
zero-fills past the count (NonZero, Compress and NonMaxSuppression compile for declared sizes
only today: `passes/onnx_to_uop/data_dependent.py`).

The extents are ordinary graph values (nodes appended here: for Unique, the number of nonzero
`counts`, which its lowering zero-fills past the distinct values), so every backend computes
them the same way. A bounded tensor must be a graph output: a node reading it would read the
padding as data.

Why before the IR (issue 31 item 3): a symbolic dimension has no IR type, so the bound is chosen
while typing the import; the extents output it adds changes the generated function's signature.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import onnx
from onnx import TensorProto, helper

from zant.dialects.onnx import BOUNDED_ATTR, OUTPUT_BOUNDS_ATTR  # noqa: F401 (re-exported)
from zant.errors import ZantError

EXTENTS_NAME = "extents"
"""The extents array's graph output name (made unique against the model's names)."""



@dataclass(frozen=True)
class Capacity:
    """An op's outputs at their upper bounds: each output's compiled shape, which dimension of it
    counts data-dependent entries (outputs whose size is exact at the bound are not listed),
    and the tensor whose number of nonzero entries is that count: ("output", i) (named by the
    frontend if the model leaves it out), or ("input", i) (NonZero's would be its input 0)."""

    shapes: dict[int, list[int]]
    counted_dim: dict[int, int]
    counted_by: tuple[str, int]


def _unique_capacity(node: onnx.NodeProto, x_shape: list[int]) -> Capacity:
    axis = next((a.i for a in node.attribute if a.name == "axis"), None)
    if axis is None:
        n = math.prod(x_shape)
        y_shape, y_dim = [n], 0
    else:
        axis += len(x_shape) if axis < 0 else 0
        if not 0 <= axis < len(x_shape):
            raise ZantError(f"{_label(node)}: axis {axis} is out of range for rank {len(x_shape)}")
        n = x_shape[axis]
        y_shape, y_dim = [*x_shape[:axis], n, *x_shape[axis + 1 :]], axis
    # Y, indices and counts hold one entry per distinct value (at most n); inverse_indices one per
    # input slice (exactly n).
    return Capacity({0: y_shape, 1: [n], 2: [n], 3: [n]}, {0: y_dim, 1: 0, 3: 0}, counted_by=("output", 3))


BOUNDS: dict[str, Callable[[onnx.NodeProto, list[int]], Capacity]] = {"Unique": _unique_capacity}
"""Op type → its outputs' capacity from its first input's shape."""


@dataclass(frozen=True)
class BoundedOutput:
    name: str
    dim: int
    count_tensor: str  # an int tensor whose number of nonzero entries is the extent


def _label(node: onnx.NodeProto) -> str:
    return f"node '{node.name}' ({node.op_type})" if node.name else f"an unnamed {node.op_type} node"


def _static(tensor_type) -> list[int] | None:
    if not tensor_type.HasField("shape"):
        return None
    dims = tensor_type.shape.dim
    return [d.dim_value for d in dims] if all(d.HasField("dim_value") for d in dims) else None


def bound_outputs(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict[int, list[int]], list[int]]:
    """`model` (a copy when anything changes) with every symbolic data-dependent dimension of an
    op in `BOUNDS` compiled at its bound and the extents output appended; per index of such a
    node, the indices of its outputs that are bounded; and per graph output the dimension
    compiled at its bound or -1 (empty when nothing is bounded)."""
    if not any(n.op_type in BOUNDS and n.domain in ("", "ai.onnx") for n in model.graph.node):
        return model, {}, []
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    graph = copy.graph
    values = {v.name: v for v in [*graph.input, *graph.value_info, *graph.output]}
    names = set(values) | {t.name for t in graph.initializer} | {o for n in graph.node for o in n.output}
    bounded_nodes: dict[int, list[int]] = {}
    bounded: dict[str, BoundedOutput] = {}
    for index, node in enumerate(list(graph.node)):
        rule = BOUNDS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        x = values.get(node.input[0]) if rule is not None and node.input else None
        x_shape = _static(x.type.tensor_type) if x is not None else None
        if rule is None or x_shape is None:
            continue
        capacity = rule(node, x_shape)
        declared = {}
        for slot, shape in capacity.shapes.items():
            name = node.output[slot] if slot < len(node.output) else ""
            value = values.get(name) if name else None
            if value is None or not value.type.HasField("tensor_type"):
                continue
            dims = value.type.tensor_type.shape.dim
            if len(dims) != len(shape):
                continue  # a rank the op cannot have: shape inference names it
            declared[slot] = [d.dim_value if d.HasField("dim_value") else None for d in dims]
            if slot in capacity.counted_dim and declared[slot][capacity.counted_dim[slot]] is None:
                bounded_nodes.setdefault(index, []).append(slot)
            for dim, size in zip(dims, shape):
                if not dim.HasField("dim_value"):
                    dim.dim_value = size
        if index not in bounded_nodes:
            continue
        kind, source = capacity.counted_by
        if kind == "input":
            count_tensor = node.input[source]
        else:
            while len(node.output) <= source:
                node.output.append("")
            if not node.output[source]:  # the count is read off an output the model leaves out
                node.output[source] = _fresh(f"{node.output[0]}_counts", names)
                graph.value_info.append(
                    helper.make_tensor_value_info(node.output[source], TensorProto.INT64, capacity.shapes[source])
                )
            count_tensor = node.output[source]
        for slot in bounded_nodes[index]:
            name = node.output[slot]
            bounded[name] = BoundedOutput(name, capacity.counted_dim[slot], count_tensor)
    if not bounded:  # sizes declared (checked at run time); exact ones may have been filled in
        return copy, {}, []
    _check_only_outputs(graph, bounded)
    outputs = [bounded.get(v.name) for v in graph.output]
    _append_extents(graph, [b for b in outputs if b is not None], names)
    return copy, bounded_nodes, [-1 if b is None else b.dim for b in outputs] + [-1]


def _fresh(base: str, names: set[str]) -> str:
    name, suffix = base, 0
    while name in names:
        suffix += 1
        name = f"{base}_{suffix}"
    names.add(name)
    return name


def _check_only_outputs(graph: onnx.GraphProto, bounded: dict[str, BoundedOutput]) -> None:
    """A bounded tensor is read by its caller only: a node reading it would read padding."""
    outputs = {v.name for v in graph.output}
    producers = {o: n for n in graph.node for o in n.output}
    for name, b in bounded.items():
        reader = next((n for n in graph.node if name in n.input), None)
        if reader is not None or name not in outputs:
            where = f"is read by {_label(reader)}" if reader is not None else "is not a graph output"
            raise ZantError(
                f"{_label(producers[name])}: output '{name}' has a data-dependent size along "
                f"dimension {b.dim} and {where}; only a graph output can be compiled at its bound: "
                "declare its shape in the model (a static size is checked at run time)"
            )


def _append_extents(graph: onnx.GraphProto, bounded: list[BoundedOutput], names: set[str]) -> None:
    """The extents output: per bounded output, the number of nonzero entries of its count tensor."""
    parts = []
    counted: dict[str, str] = {}
    for b in bounded:
        if b.count_tensor not in counted:
            flags = _fresh(f"{b.count_tensor}_nonzero", names)
            ints = _fresh(f"{b.count_tensor}_ones", names)
            total = _fresh(f"{b.count_tensor}_extent", names)
            graph.node.extend([
                helper.make_node("Cast", [b.count_tensor], [flags], to=TensorProto.BOOL),
                helper.make_node("Cast", [flags], [ints], to=TensorProto.INT32),
                helper.make_node("ReduceSum", [ints], [total], keepdims=1),
            ])
            size = next(_static(v.type.tensor_type) for v in [*graph.input, *graph.value_info, *graph.output]
                        if v.name == b.count_tensor)
            graph.value_info.extend([
                helper.make_tensor_value_info(flags, TensorProto.BOOL, size),
                helper.make_tensor_value_info(ints, TensorProto.INT32, size),
                helper.make_tensor_value_info(total, TensorProto.INT32, [1]),
            ])
            counted[b.count_tensor] = total
        parts.append(counted[b.count_tensor])
    extents = _fresh(EXTENTS_NAME, names)
    graph.node.append(helper.make_node("Concat", parts, [extents], axis=0))
    graph.output.append(helper.make_tensor_value_info(extents, TensorProto.INT32, [len(parts)]))
