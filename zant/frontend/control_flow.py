"""Control flow unrolled at compile time: If, Loop and Scan become straight-line ONNX.

A microcontroller model has static shapes, so its control flow is usually static too: an `If`
on a condition known at compile time (an initializer, or foldable from constants and static
shapes), a `Loop` with a constant trip count, a `Scan` over a sequence of static length. Each
such node is replaced by copies of its subgraph, inlined into the main graph:

- `If` with a known condition: the chosen branch. With a run-time condition, both branches and
  one `Where` per output, when the branches produce tensors of one static shape (ONNX ops have
  no side effects, so computing both is only slower); else, when the condition is computed from
  parameter inputs whose values the declared outputs pin down (`parameter_guesses`), the branch
  those values choose, behind a `Guard` that the condition has that value at run time.
- `Loop`: one body copy per iteration, `iter_num` a constant, the loop-carried values threaded
  from copy to copy; the condition must be known after every iteration (absent, constant, or
  foldable), so an early exit is decided at compile time. Scan outputs are concatenated. When
  the trip count or a condition is only known at run time, the loop is unrolled for the extent
  the model declares for its scan outputs, and Zant's `Guard` ops (domain `ai.zant`) make
  NAME_predict return STATUS_BAD_PARAMETER unless it runs exactly that many times: one before
  the copies (trip count, initial condition), one after (the conditions the copies compute).
- `Scan`: one body copy per element of the scan axis, each scan input element a `Gather` of
  one index (counted from the end for a reverse direction), the scan outputs unsqueezed and
  concatenated along their axes (in reverse order for a reverse direction).

Sequences and optionals (issue 29 item 3): a Loop's carried values and a statically chosen If
branch's outputs may be sequences or optionals; the copies' sequence ops are straight-line ONNX
that `resolve-sequences` takes apart later. A trip count or condition computed from a sequence's
length (`SequenceLength`, as SequenceMap's function body has it) or an optional's presence
(`OptionalHasElement`) is known when the sequence's length is: a graph input's from its layout
(`edges`, what `input_shapes` gives), else from the ops that built it (SequenceEmpty,
SequenceConstruct, SequenceInsert, SequenceErase, Optional, Identity). A run-time If condition
selects between two sequences of one known length and element shapes element by element (a
Where of each pair, built into a SequenceConstruct), and between optionals with an
`ai.zant.SequenceSelect` (their presence then a run-time flag, `resolve-sequences`); between
sequences of unknown or different lengths, it is a ZantError naming the node.

Every value defined in a copy (nested subgraphs included) gets a fresh name; values the body
reads from the enclosing scope keep theirs. Nodes are unrolled one at a time, in graph order,
with shape inference in between, so nested control flow, and conditions or lengths that
depend on earlier unrolled values, are handled by later rounds. What cannot be decided
statically raises a ZantError naming the node.

Why before the IR (issue 31 item 3): the dialect's If, Loop and Scan hold their bodies as opaque
GRAPH attributes, not regions, and every IR value has a static tensor type; the unrolled copies'
values get theirs only from ONNX's shape inference with data propagation, run on each copy
(a carried value may change shape per iteration), and the unroller decides from values
(conditions, trip counts) that shape folding computes on the protobuf. As a pass it would need
regions for subgraphs and types for values inside them first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import onnx
from onnx import GraphProto, ModelProto, NodeProto, helper, numpy_helper

from zant.dialects.onnx import ZANT_DOMAIN
from zant.errors import ZantError
from zant.frontend.sequences import EdgeLayout
from zant.ir.onnx_graph import CONTROL_FLOW_OPS, NameSource, all_names, rename_node
from zant.dialects.onnx_shape_folding import evaluate_node, is_foldable, shape_node_value, static_shape

MAX_ITERATIONS = 4096
"""A Loop without a trip count stops when its condition folds to false; this bounds the copies."""

Infer = Callable[[ModelProto], ModelProto]


def _default_infer(model: ModelProto) -> ModelProto:
    return onnx.shape_inference.infer_shapes(model, data_prop=True)


def unroll_control_flow(
    model: ModelProto, infer: Infer = _default_infer, edges: Mapping[str, EdgeLayout] | None = None,
    sequence_capacity: int | None = None,
) -> ModelProto:
    """The model with every If, Loop and Scan of its main graph unrolled (see the module doc);
    the model itself when it has none. `edges`: the layouts of its sequence and optional graph
    inputs (`zant.frontend.sequences.edge_layouts`), whose lengths and presence are then known.
    `sequence_capacity` (`--sequence-capacity`): the most iterations a Loop that carries a
    sequence runs when its trip count or condition is only known at run time (None: such a
    Loop is a ZantError naming the option)."""
    if not any(node.op_type in CONTROL_FLOW_OPS for node in model.graph.node):
        return model
    names = NameSource(all_names(model.graph))
    opset = _default_opset(model)
    while True:
        model = infer(model)
        graph = model.graph
        position = next((i for i, n in enumerate(graph.node) if n.op_type in CONTROL_FLOW_OPS), None)
        if position is None:
            return model
        node = graph.node[position]
        unroller = _Unroller(graph, node, names, opset, model, infer, edges or {})
        unroller.sequence_capacity = sequence_capacity
        try:
            UNROLLERS[node.op_type](unroller)
        except (ValueError, NotImplementedError) as error:
            raise ZantError(f"{_label(node)}: {error}") from None
        nodes = [*graph.node[:position], *unroller.nodes, *graph.node[position + 1 :]]
        del graph.node[:]
        graph.node.extend(nodes)
        # What was inferred (or guessed from consumers) for the node's outputs is inferred
        # again from the copies: a guess for an If's output may not be its chosen branch's.
        kept = [v for v in graph.value_info if v.name not in node.output]
        del graph.value_info[:]
        graph.value_info.extend(kept)
        graph.initializer.extend(unroller.initializers)
        _type_sequence_elements(graph, unroller.constants)
        if any(n.domain == ZANT_DOMAIN for n in unroller.nodes) and all(o.domain != ZANT_DOMAIN for o in model.opset_import):
            model.opset_import.append(helper.make_opsetid(ZANT_DOMAIN, 1))


def _type_sequence_elements(graph: GraphProto, constants: _Constants) -> None:
    """Declare the static shape of each SequenceAt at a constant position of a sequence whose
    element shapes are known (`_Constants.element_shapes`): ONNX's inference gives a sequence's
    elements one shape, with a dimension they differ in unknown, so an unrolled body reading
    element i (SequenceMap's function body) would otherwise have no static shape."""
    declared = {v.name for v in graph.value_info if static_shape(v.type) is not None}
    for node in graph.node:
        if node.op_type != "SequenceAt" or node.output[0] in declared:
            continue
        shapes, position = constants.element_shapes(node.input[0]), constants.value(node.input[1])
        sequence = constants.types.get(node.input[0])
        if shapes is None or position is None or sequence is None or sequence.WhichOneof("value") != "sequence_type":
            continue
        index = int(np.asarray(position).reshape(-1)[0])
        if not -len(shapes) <= index < len(shapes):
            continue
        element = sequence.sequence_type.elem_type.tensor_type.elem_type
        kept = [v for v in graph.value_info if v.name != node.output[0]]
        del graph.value_info[:]
        graph.value_info.extend([*kept, helper.make_tensor_value_info(node.output[0], element, shapes[index])])


def _default_opset(model: ModelProto) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)


def _label(node: NodeProto) -> str:
    return f"node '{node.name}' ({node.op_type})" if node.name else f"a {node.op_type} node"


class _Constants:
    """Values known at compile time: initializers, and nodes folded on demand from them and
    from static shapes (Shape/Size), with ONNX's reference evaluator; SequenceLength and
    OptionalHasElement from what is known of sequences and optionals (`sequence_length`,
    `holds_value`)."""

    def __init__(self, graph: GraphProto, opset: int, edges: Mapping[str, EdgeLayout] | None = None):
        self.opset = opset
        self.edges = edges or {}
        self.values = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        self.types = {v.name: v.type for v in [*graph.input, *graph.value_info, *graph.output]}
        self.producers: dict[str, NodeProto] = {}
        self.add_nodes(graph.node)

    def add_nodes(self, nodes: Iterable[NodeProto]) -> None:
        for node in nodes:
            self.producers.update((name, node) for name in node.output if name)

    def value(self, name: str) -> np.ndarray | None:
        if name in self.values:
            return self.values[name]
        node = self.producers.get(name)
        if node is None or not is_foldable(node):
            return None
        results = None
        if node.op_type == "SequenceLength":
            length = self.sequence_length(node.input[0])
            results = None if length is None else [np.array(length, np.int64)]
        elif node.op_type == "OptionalHasElement":
            present = self.holds_value(node.input[0]) if node.input and node.input[0] else False
            results = None if present is None else [np.array(present)]
        elif node.op_type in ("Shape", "Size") and node.input[0] in self.types:
            shape = static_shape(self.types[node.input[0]])
            results = None if shape is None else [shape_node_value(node, shape)]
        else:
            inputs = {n: self.value(n) for n in node.input if n}
            if all(v is not None for v in inputs.values()):
                results = evaluate_node(node, inputs, self.opset)
        if results is None:
            return None
        self.values.update((n, v) for n, v in zip(node.output, results) if n)
        return self.values.get(name)

    def sequence_length(self, name: str) -> int | None:
        """How many tensors the sequence `name` holds, when the ops that made it say (None:
        not known, or not a sequence)."""
        edge = self.edges.get(name)
        if edge is not None:
            return len(edge.shapes) if edge.sequence and edge.present else None
        node = self.producers.get(name)
        if node is None:
            return None
        if node.op_type == "SequenceEmpty":
            return 0
        if node.op_type == "SequenceConstruct":
            return len(node.input)
        if node.op_type in ("SequenceInsert", "SequenceErase", "Identity", "Optional", "OptionalGetElement"):
            base = self.sequence_length(node.input[0]) if node.input and node.input[0] else None
            if base is None:
                return None
            return base + {"SequenceInsert": 1, "SequenceErase": -1}.get(node.op_type, 0)
        return None

    def element_shapes(self, name: str) -> list[list[int]] | None:
        """The static shapes of the tensors the sequence `name` holds, in order, when known: a
        graph input's from its layout, a SequenceConstruct's from its inputs' types."""
        edge = self.edges.get(name)
        if edge is not None:
            return [list(s) for s in edge.shapes] if edge.sequence and edge.present else None
        node = self.producers.get(name)
        if node is None:
            return None
        if node.op_type == "SequenceConstruct":
            shapes = [self.tensor_shape(n) for n in node.input]
            return None if any(s is None for s in shapes) else shapes
        if node.op_type in ("Identity", "OptionalGetElement") and node.input and node.input[0]:
            return self.element_shapes(node.input[0])
        return None

    def tensor_shape(self, name: str) -> list[int] | None:
        """The static shape of tensor `name`: its inferred type's, or its value's when known."""
        if name in self.types:
            return static_shape(self.types[name])
        value = self.value(name)
        return None if value is None else list(np.shape(value))

    def holds_value(self, name: str) -> bool | None:
        """Whether the optional (or plain) value `name` holds a value: an optional graph input as
        laid out, an Optional as built (Identity passes it on), any other op's result does."""
        edge = self.edges.get(name)
        if edge is not None:
            return edge.present
        node = self.producers.get(name)
        if node is None:
            return True if name in self.types or name in self.values else None
        if node.op_type == "Optional":
            return bool(node.input and node.input[0])
        if node.op_type == "Identity":
            return self.holds_value(node.input[0])
        return True


class _Unroller:
    """Builds the replacement of one control-flow node: `nodes` and `initializers`."""

    def __init__(
        self, graph: GraphProto, node: NodeProto, names: NameSource, opset: int,
        model: ModelProto | None = None, infer: Infer = _default_infer,
        edges: Mapping[str, EdgeLayout] | None = None,
    ):
        self.model = model  # holding `graph`, for the trials of `_assumed_condition`
        self.infer = infer
        self.node = node
        self.graph = graph
        self.names = names
        self.opset = opset
        self.constants = _Constants(graph, opset, edges)
        self.prefix = node.name or node.op_type
        self.nodes: list[NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.sequence_capacity: int | None = None  # `unroll_control_flow`'s

    def freeze_hint(self, name: str) -> str:
        """`: freeze 'a', 'b' (--freeze a=FILE.npy …)`, naming the graph inputs `name` is computed
        from; empty when it depends on none."""
        producers = {output: node for node in self.graph.node for output in node.output}
        inputs = {v.name for v in self.graph.input} - {t.name for t in self.graph.initializer}
        seen, todo, found = set(), [name], set()
        while todo:
            value = todo.pop()
            if value in seen:
                continue
            seen.add(value)
            if value in inputs:
                found.add(value)
            elif value in producers:
                todo.extend(v for v in producers[value].input if v)
        if not found:
            return ""
        names = sorted(found)
        flags = " ".join(f"--freeze {v}=FILE.npy" for v in names)
        return f": freeze {', '.join(repr(v) for v in names)} ({flags})"

    def attribute(self, name: str, default=None):
        for attribute in self.node.attribute:
            if attribute.name == name:
                return helper.get_attribute_value(attribute)
        return default

    def constant(self, value: np.ndarray, hint: str) -> str:
        name = self.names.fresh(f"{self.prefix}/{hint}")
        self.initializers.append(numpy_helper.from_array(np.asarray(value), name))
        self.constants.values[name] = np.asarray(value)
        return name

    def emit(self, op_type: str, inputs: Sequence[str], output: str | None = None, **attributes) -> str:
        output = output or self.names.fresh(f"{self.prefix}/{op_type.lower()}")
        self.nodes.append(helper.make_node(op_type, list(inputs), [output], **attributes))
        return output

    def inline(self, body: GraphProto, bound: Sequence[str], copy: str) -> list[str]:
        """A copy of `body` whose inputs are the values `bound`; the names of its outputs."""
        if len(bound) != len(body.input):
            raise ValueError(f"the subgraph takes {len(body.input)} inputs, {len(bound)} given")
        renamed = {formal.name: actual for formal, actual in zip(body.input, bound)}
        defined = _defined_names(body)

        def rename(name: str) -> str:
            if name in renamed:
                return renamed[name]
            if name in defined:  # a value of this copy (else: the enclosing scope's, kept)
                renamed[name] = self.names.fresh(f"{self.prefix}/{copy}/{name}")
                return renamed[name]
            return name

        for tensor in body.initializer:
            moved = onnx.TensorProto()
            moved.CopyFrom(tensor)
            moved.name = rename(tensor.name)
            self.initializers.append(moved)
            self.constants.values[moved.name] = numpy_helper.to_array(moved)
        copies = []
        for inner in body.node:
            node = NodeProto()
            node.CopyFrom(inner)
            node.name = self.names.fresh(f"{self.prefix}/{copy}/{inner.name or inner.op_type}")
            rename_node(node, rename)
            copies.append(node)
        self.nodes.extend(copies)
        self.constants.add_nodes(copies)
        return [rename(output.name) for output in body.output]

    def bind_outputs(self, values: Sequence[str]) -> None:
        """The node's outputs as Identities of `values` (absent outputs skipped)."""
        for output, value in zip(self.node.output, values):
            if output:
                self.emit("Identity", [value], output)

    def stack(self, parts: Sequence[str], axis: int, output: str) -> None:
        """Concatenate per-iteration values along a new `axis` (ONNX scan outputs)."""
        if not parts:
            raise ValueError("zero iterations: the scan outputs would be empty")
        if self.opset >= 13:
            axes = self.constant(np.array([axis], np.int64), "axes")
            expanded = [self.emit("Unsqueeze", [p, axes]) for p in parts]
        else:
            expanded = [self.emit("Unsqueeze", [p], axes=[axis]) for p in parts]
        self.emit("Concat", expanded, output, axis=axis)

    def tensor_shape(self, name: str) -> list[int] | None:
        value_type = self.constants.types.get(name)
        return None if value_type is None else static_shape(value_type)


def _defined_names(graph: GraphProto) -> set[str]:
    """Every value a subgraph defines, its nested subgraphs' included."""
    names = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    for node in graph.node:
        names.update(n for n in node.output if n)
        for attribute in node.attribute:
            for sub in [attribute.g] if attribute.type == attribute.GRAPH else attribute.graphs:
                names |= _defined_names(sub)
    return names


def _tensor_outputs(graph: GraphProto, what: str) -> None:
    for output in graph.output:
        if output.type.WhichOneof("value") not in (None, "tensor_type"):
            raise NotImplementedError(f"{what} returns a non-tensor value ('{output.name}')")


def _unroll_if(u: _Unroller) -> None:
    then_branch, else_branch = u.attribute("then_branch"), u.attribute("else_branch")
    condition = u.constants.value(u.node.input[0])
    if condition is not None:
        chosen = then_branch if bool(np.asarray(condition).reshape(-1)[0]) else else_branch
        u.bind_outputs(u.inline(chosen, [], "then" if chosen is then_branch else "else"))
        return
    kinds = {o.type.WhichOneof("value") for b in (then_branch, else_branch) for o in b.output}
    if kinds - {None, "tensor_type"}:
        _select_sequences(u, then_branch, else_branch)
        return
    shapes = [[static_shape(o.type) for o in b.output] for b in (then_branch, else_branch)]
    if any(s is None for s in shapes[0]) or shapes[0] != shapes[1]:
        assumed = _assumed_condition(u, u.node.input[0])
        if assumed is None:
            raise NotImplementedError(
                "the condition is only known at run time and the branches' outputs do not have "
                "one declared static shape, so neither can be chosen statically nor selected with Where"
            )
        holds = u.node.input[0] if assumed else u.emit("Not", [u.node.input[0]])
        u.nodes.append(helper.make_node("Guard", [holds], [], domain=ZANT_DOMAIN))
        chosen = then_branch if assumed else else_branch
        u.bind_outputs(u.inline(chosen, [], "then" if assumed else "else"))
        return
    condition_name = _scalar_condition(u)
    then_values = u.inline(then_branch, [], "then")
    else_values = u.inline(else_branch, [], "else")
    for output, a, b in zip(u.node.output, then_values, else_values):
        if output:
            u.emit("Where", [condition_name, a, b], output)


def _scalar_condition(u: _Unroller) -> str:
    """The If's condition as a scalar (a one-element tensor would broadcast in Where)."""
    name = u.node.input[0]
    if u.tensor_shape(name) != []:
        name = u.emit("Reshape", [name, u.constant(np.zeros(0, np.int64), "scalar")])
    return name


def _select_sequences(u: _Unroller, then_branch: GraphProto, else_branch: GraphProto) -> None:
    """A run-time If whose branches return sequences: both branches, and per sequence output a
    Where of each pair of elements, built into a SequenceConstruct; the two sequences must have
    one known length and their elements one static shape each (tensor outputs: as for tensors,
    one declared static shape). An optional output is present or not as the condition says: an
    `ai.zant.SequenceSelect` of the two branches' optionals by the condition (0: else, 1: then),
    which `resolve-sequences` makes an optional with a run-time presence flag."""
    why = "the condition is only known at run time"
    for then_out, else_out in zip(then_branch.output, else_branch.output):
        kinds = {o.type.WhichOneof("value") or "tensor_type" for o in (then_out, else_out)}
        if len(kinds) != 1:
            raise NotImplementedError(f"{why} and the branches return a sequence and a tensor ('{then_out.name}', '{else_out.name}')")
        if kinds == {"tensor_type"} and (static_shape(then_out.type) is None or static_shape(then_out.type) != static_shape(else_out.type)):
            raise NotImplementedError(f"{why} and the branches' tensors '{then_out.name}', '{else_out.name}' do not have one declared static shape")
    condition = _scalar_condition(u)
    then_values = u.inline(then_branch, [], "then")
    else_values = u.inline(else_branch, [], "else")
    for output, a, b, declared in zip(u.node.output, then_values, else_values, then_branch.output):
        if not output:
            continue
        if declared.type.WhichOneof("value") == "optional_type":
            index = u.emit("Cast", [condition], to=onnx.TensorProto.INT64)
            u.nodes.append(helper.make_node("SequenceSelect", [index, b, a], [output], domain=ZANT_DOMAIN))
            continue
        if declared.type.WhichOneof("value") != "sequence_type":
            u.emit("Where", [condition, a, b], output)
            continue
        shapes = [u.constants.element_shapes(a), u.constants.element_shapes(b)]
        if shapes[0] is None or shapes[0] != shapes[1]:
            raise NotImplementedError(
                f"{why} and the branches' sequences '{a}', '{b}' do not have one known length and element "
                f"shapes ({shapes[0]}, {shapes[1]}), so they cannot be selected element by element"
            )
        picked = []
        for i in range(len(shapes[0])):
            position = u.constant(np.array(i, np.int64), f"at{i}")
            pair = [u.emit("SequenceAt", [value, position]) for value in (a, b)]
            picked.append(u.emit("Where", [condition, *pair]))
        if picked:
            u.emit("SequenceConstruct", picked, output)
        else:
            element = declared.type.sequence_type.elem_type.tensor_type.elem_type
            u.emit("SequenceEmpty", [], output, dtype=element)


class _RunTime(Exception):
    """A trip count or condition only known at run time: unroll for the declared extent."""


def _assumed_condition(u: _Unroller, name: str) -> bool | None:
    """The value the condition `name` takes where the parameter inputs it is computed from hold
    the first values that give the declared outputs (`parameter_guesses`, each trial unrolled);
    None when there are none."""
    # Imported here: its trials unroll with this module.
    from zant.frontend.parameter_guesses import first_consistent_guess

    if u.model is None:
        return None
    found = first_consistent_guess(u.model, [name], lambda m: unroll_control_flow(u.infer(m), u.infer))
    if found is None:
        return None
    constants = _Constants(u.graph, u.opset)
    constants.values.update(found[0])
    value = constants.value(name)
    return None if value is None else bool(np.asarray(value).reshape(-1)[0])


def _unroll_loop(u: _Unroller) -> None:
    body = u.attribute("body")
    trip_input, cond_input, *carried = (list(u.node.input) + ["", ""])[: max(2, len(u.node.input))]
    if not trip_input and not cond_input:
        raise ValueError("a Loop without trip count nor condition never ends")
    try:
        _unroll_loop_statically(u, body, trip_input, cond_input, carried)
    except _RunTime as reason:
        del u.nodes[:], u.initializers[:]
        kinds = [u.constants.types.get(name) for name in carried]
        builds_sequence = any(k is not None and (k.HasField("sequence_type") or k.HasField("optional_type")) for k in kinds)
        if builds_sequence and len(body.output) == 1 + len(carried):  # no scan outputs
            if u.sequence_capacity is None:
                raise NotImplementedError(
                    f"{reason}, and the loop builds a sequence, whose length the data would decide: "
                    "give the most iterations it may run (--sequence-capacity N, sequence_capacity=N)"
                )
            _unroll_loop_to_capacity(u, body, trip_input, cond_input, carried, u.sequence_capacity)
            return
        _unroll_loop_to_declared_extent(u, body, trip_input, cond_input, carried, str(reason))


def _unroll_loop_statically(u: _Unroller, body: GraphProto, trip_input: str, cond_input: str, carried: list[str]) -> None:
    """Every iteration decided at compile time: the trip count and each condition constants."""
    trip_count = None
    if trip_input:
        value = u.constants.value(trip_input)
        if value is None:
            raise _RunTime(f"the trip count is only known at run time; it must be a constant{u.freeze_hint(trip_input)}")
        trip_count = int(np.asarray(value).reshape(-1)[0])
    running = _loop_condition(u, cond_input, "the initial condition")
    scan_count = len(body.output) - 1 - len(carried)
    scans: list[list[str]] = [[] for _ in range(scan_count)]
    always = u.constant(np.array(True), "true")
    iteration = 0
    while running and (trip_count is None or iteration < trip_count):
        if iteration >= MAX_ITERATIONS:
            raise NotImplementedError(f"more than {MAX_ITERATIONS} iterations")
        index = u.constant(np.array(iteration, np.int64), f"iter{iteration}")
        cond_out, *outs = u.inline(body, [index, always, *carried], f"iter{iteration}")
        running = _loop_condition(u, cond_out, f"the condition after iteration {iteration}")
        carried = outs[: len(carried)]
        for part, value in zip(scans, outs[len(carried) :]):
            part.append(value)
        iteration += 1
    u.bind_outputs(carried)
    for output, parts in zip(u.node.output[len(carried) :], scans):
        if output:
            u.stack(parts, 0, output)


Term = bool | str
"""A condition of the loop's run: known at compile time, or the name of a bool tensor."""


def _unroll_loop_to_declared_extent(
    u: _Unroller, body: GraphProto, trip_input: str, cond_input: str, carried: list[str], reason: str
) -> None:
    """A trip count or condition known only at run time: `extent` iterations, the extent the
    model declares for the scan outputs, guarded by "the loop runs exactly `extent` times" (else
    NAME_predict returns STATUS_BAD_PARAMETER): a Guard of what the trip count and the initial
    condition say before the copies of the body, so that a contradicting graph input stops it
    before any of them runs, and one of the conditions the copies compute after them. Under the
    guards every condition the body reads is true, so the copies get a constant true one."""
    scan_outputs = u.node.output[len(carried) :]
    extents = {(u.tensor_shape(name) or [None])[0] for name in scan_outputs if name}
    if len(extents) != 1 or None in extents:
        raise NotImplementedError(f"{reason}, or the model must declare the extent of the scan outputs")
    (extent,) = extents
    if not 0 < extent <= MAX_ITERATIONS:
        raise NotImplementedError(f"{reason}; the scan outputs declare {extent} iterations")
    always = u.constant(np.array(True), "true")
    conditions: list[Term] = []  # after each copy: whether the loop goes on
    scans: list[list[str]] = [[] for _ in scan_outputs]
    for iteration in range(extent):
        index = u.constant(np.array(iteration, np.int64), f"iter{iteration}")
        cond_out, *outs = u.inline(body, [index, always, *carried], f"iter{iteration}")
        carried = outs[: len(carried)]
        for part, value in zip(scans, outs[len(carried) :]):
            part.append(value)
        conditions.append(_term(u, cond_out))
    copies = u.nodes[:]
    del u.nodes[:]

    # Before the copies: the initial condition holds and the trip count lets `extent` run; it
    # stops them there when the last condition is a constant true.
    last = conditions[-1]
    before: list[Term] = [_term(u, cond_input)] if cond_input else []
    if trip_input:
        before.append(_compare_trip_count(u, trip_input, "Equal" if last is True else "GreaterOrEqual", extent))
    elif last is True:
        before.append(False)  # nothing ever stops it
    _guard(u, before, reason, extent)
    u.nodes.extend(copies)
    # After them: the copies' conditions go on until the last, which stops the loop unless the
    # trip count does.
    stops: Term = _not(u, last)
    if trip_input and not isinstance(last, bool):
        stops = _or(u, _compare_trip_count(u, trip_input, "Equal", extent), stops)
    _guard(u, [*conditions[:-1], stops if not isinstance(last, bool) else True], reason, extent)
    u.bind_outputs(carried)
    for output, parts in zip(scan_outputs, scans):
        if output:
            u.stack(parts, 0, output)


def _unroll_loop_to_capacity(
    u: _Unroller, body: GraphProto, trip_input: str, cond_input: str, carried: list[str], capacity: int
) -> None:
    """A Loop carrying a sequence, whose trip count or condition is only known at run time:
    `capacity` copies of the body (each computed; ONNX ops have no side effects), the number
    n of them that run counted at run time (copy k runs while the trip count exceeds k and
    every condition before it held), a Guard that the loop would not run past them (else
    NAME_predict returns STATUS_BAD_PARAMETER), and each carried value the one after n copies:
    an `ai.zant.SequenceSelect` of the carried sequences (which `resolve-sequences` makes a
    run-time bounded sequence), a Where chain on n of carried tensors, which must keep the
    static shape the body declares. A copy reads a true condition: it matters only when it runs."""
    if not 0 < capacity <= MAX_ITERATIONS:
        raise NotImplementedError(f"a sequence capacity of {capacity} iterations (1 to {MAX_ITERATIONS})")
    for name, formal in zip(carried, body.output[1:]):
        kind = u.constants.types.get(name)
        if kind is not None and kind.HasField("tensor_type"):
            shape = static_shape(formal.type) if formal.type.HasField("tensor_type") else None
            if shape is None or shape != u.tensor_shape(name):
                raise NotImplementedError(
                    f"the loop carries tensor '{name}' besides a sequence over a run-time trip count; "
                    "the body must declare it the static shape it starts with"
                )
    always = u.constant(np.array(True), "true")
    history = [list(carried)]  # the carried values before copy k, and after the last
    conditions: list[Term] = []  # after copy k: whether the loop goes on
    for iteration in range(capacity):
        index = u.constant(np.array(iteration, np.int64), f"iter{iteration}")
        cond_out, *outs = u.inline(body, [index, always, *history[-1]], f"iter{iteration}")
        history.append(outs)
        conditions.append(_term(u, cond_out))

    def trip_allows(k: int) -> Term:  # trip count > k
        if not trip_input:
            return True
        value = u.constants.value(trip_input)
        if value is not None:
            return int(np.asarray(value).reshape(-1)[0]) > k
        return u.emit("Greater", [trip_input, u.constant(np.array(k, np.int64), "iteration")])

    running: list[Term] = []  # copy k runs
    previous: Term = _term(u, cond_input) if cond_input else True
    for k in range(capacity + 1):
        runs = _all(u, [previous, trip_allows(k)])
        if k == capacity:
            stops = _not(u, runs)
            if stops is False:
                raise NotImplementedError(f"the loop always runs more than the sequence capacity of {capacity} iterations")
            if stops is not True:
                u.nodes.append(helper.make_node("Guard", [stops], [], domain=ZANT_DOMAIN))
            break
        running.append(runs)
        previous = _all(u, [runs, conditions[k]])
    count: str | None = None
    known = 0
    for runs in running:
        if isinstance(runs, bool):
            known += int(runs)
            continue
        step = u.emit("Cast", [runs], to=onnx.TensorProto.INT64)
        count = step if count is None else u.emit("Add", [count, step])
    total = u.constant(np.array(known, np.int64), "iterations")
    count = total if count is None else u.emit("Add", [count, total])
    for j, output in enumerate(u.node.output[: len(carried)]):
        if not output:
            continue
        candidates = [values[j] for values in history]
        kind = u.constants.types.get(carried[j])
        if kind is not None and kind.HasField("tensor_type"):
            chosen = candidates[0]
            for k in range(1, len(candidates)):
                same = u.emit("Equal", [count, u.constant(np.array(k, np.int64), "copies")])
                chosen = u.emit("Where", [same, candidates[k], chosen])
            u.emit("Identity", [chosen], output)
            continue
        u.nodes.append(helper.make_node("SequenceSelect", [count, *candidates], [output], domain=ZANT_DOMAIN))
        formal = body.output[1 + j]
        if formal.type.HasField("sequence_type") and all(v.name != output for v in u.graph.output):
            u.graph.value_info.append(helper.make_value_info(output, formal.type))


def _guard(u: _Unroller, terms: Sequence[Term], reason: str, extent: int) -> None:
    """A Guard of the conjunction of `terms`; none when it holds at compile time, an error when
    it never does."""
    condition = _all(u, terms)
    if condition is False:
        raise NotImplementedError(f"{reason}; the loop cannot run the {extent} iterations its scan outputs declare")
    if condition is not True:
        u.nodes.append(helper.make_node("Guard", [condition], [], domain=ZANT_DOMAIN))


def _term(u: _Unroller, name: str) -> Term:
    value = u.constants.value(name)
    return name if value is None else bool(np.asarray(value).reshape(-1)[0])


def _compare_trip_count(u: _Unroller, trip_input: str, op: str, extent: int) -> Term:
    """trip_count == extent (op "Equal") or >= extent ("GreaterOrEqual"), folded when the trip
    count is a constant."""
    value = u.constants.value(trip_input)
    if value is not None:
        trip = int(np.asarray(value).reshape(-1)[0])
        return trip == extent if op == "Equal" else trip >= extent
    return u.emit(op, [trip_input, u.constant(np.array(extent, np.int64), "extent")])


def _not(u: _Unroller, a: Term) -> Term:
    return (not a) if isinstance(a, bool) else u.emit("Not", [a])


def _or(u: _Unroller, a: Term, b: Term) -> Term:
    if isinstance(a, bool) or isinstance(b, bool):
        known, other = (a, b) if isinstance(a, bool) else (b, a)
        return True if known else other
    return u.emit("Or", [a, b])


def _all(u: _Unroller, terms: Sequence[Term]) -> Term:
    if any(t is False for t in terms):
        return False
    names = [t for t in terms if not isinstance(t, bool)]
    if not names:
        return True
    result = names[0]
    for name in names[1:]:
        result = u.emit("And", [result, name])
    return result


def _loop_condition(u: _Unroller, name: str, what: str) -> bool:
    if not name:
        return True
    value = u.constants.value(name)
    if value is None:
        raise _RunTime(f"{what} is only known at run time; it must fold to a constant")
    return bool(np.asarray(value).reshape(-1)[0])


def _unroll_scan(u: _Unroller) -> None:
    body = u.attribute("body")
    _tensor_outputs(body, "the body")
    scan_inputs = u.attribute("num_scan_inputs")
    states = list(u.node.input[: len(u.node.input) - scan_inputs])
    sequences = list(u.node.input[len(states) :])
    scan_outputs = len(body.output) - len(states)
    in_axes = u.attribute("scan_input_axes", [0] * scan_inputs)
    in_reverse = u.attribute("scan_input_directions", [0] * scan_inputs)
    out_axes = u.attribute("scan_output_axes", [0] * scan_outputs)
    out_reverse = u.attribute("scan_output_directions", [0] * scan_outputs)

    lengths = set()
    for name, axis in zip(sequences, in_axes):
        shape = u.tensor_shape(name)
        if shape is None:
            raise NotImplementedError(f"scan input '{name}' has no static shape")
        lengths.add(shape[axis])
    if len(lengths) != 1:
        raise ValueError(f"scan inputs of different lengths {sorted(lengths)}")
    (length,) = lengths

    parts: list[list[str]] = [[] for _ in range(scan_outputs)]
    for step in range(length):
        elements = [
            u.emit("Gather", [name, u.constant(np.array(length - 1 - step if rev else step, np.int64), f"t{step}")], axis=axis)
            for name, axis, rev in zip(sequences, in_axes, in_reverse)
        ]
        outs = u.inline(body, [*states, *elements], f"t{step}")
        states = outs[: len(states)]
        for part, value in zip(parts, outs[len(states) :]):
            part.append(value)
    u.bind_outputs(states)
    for output, values, axis, rev in zip(u.node.output[len(states) :], parts, out_axes, out_reverse):
        if output:
            u.stack(values[::-1] if rev else values, axis, output)


UNROLLERS: dict[str, Callable[[_Unroller], None]] = {
    "If": _unroll_if,
    "Loop": _unroll_loop,
    "Scan": _unroll_scan,
}
