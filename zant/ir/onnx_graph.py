"""Value names of an ONNX graph: every name a graph uses (its subgraphs' too), fresh names that
collide with none of them, and renaming a node together with the subgraphs it carries. Shared by
the two steps that inline copies of a graph into another: function-body expansion (`expand`) and
control-flow unrolling (`control_flow`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from onnx import AttributeProto, GraphProto, NodeProto

CONTROL_FLOW_OPS = frozenset({"If", "Loop", "Scan"})
"""The ops whose attributes carry subgraphs run at run time (control flow), here so that both the
unroller (`control_flow`) and the parameter guesses that must wait for it can name them."""


def rename_node(node: NodeProto, rename: Callable[[str], str]) -> None:
    """Rename `node`'s inputs and outputs, and every name inside the subgraphs it carries."""
    node.input[:] = [rename(n) for n in node.input]
    node.output[:] = [rename(n) for n in node.output]
    for attribute in node.attribute:
        for graph in subgraphs(attribute):
            rename_graph(graph, rename)


def rename_graph(graph: GraphProto, rename: Callable[[str], str]) -> None:
    """Subgraphs of a body node see the body's values; all their names move together."""
    for value in [*graph.input, *graph.output, *graph.value_info]:
        value.name = rename(value.name)
    for tensor in graph.initializer:
        tensor.name = rename(tensor.name)
    for inner in graph.node:
        rename_node(inner, rename)


def subgraphs(attribute: AttributeProto) -> Iterable[GraphProto]:
    """The graphs an attribute holds (an If's branches, a Loop's or Scan's body); none for others."""
    if attribute.type == AttributeProto.GRAPH:
        yield attribute.g
    elif attribute.type == AttributeProto.GRAPHS:
        yield from attribute.graphs


def all_names(graph: GraphProto) -> set[str]:
    """Every value name `graph` defines or reads, its subgraphs' included."""
    names = {v.name for v in [*graph.input, *graph.output, *graph.value_info]}
    names.update(t.name for t in graph.initializer)
    for node in graph.node:
        names.update(node.input)
        names.update(node.output)
        for attribute in node.attribute:
            for sub in subgraphs(attribute):
                names.update(all_names(sub))
    return names


class NameSource:
    """Fresh value names that collide with nothing in the model."""

    def __init__(self, taken: set[str]):
        self.taken = taken

    def fresh(self, base: str) -> str:
        name, suffix = base, 1
        while name in self.taken:
            name, suffix = f"{base}_{suffix}", suffix + 1
        self.taken.add(name)
        return name
