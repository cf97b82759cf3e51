"""Opset conversion, including the oldest opsets, which `onnx.version_converter` alone cannot start
from or converts with a changed meaning.

The converter upgrades one opset at a time with per-operator adapters. From old models:

* its 6 → 7 adapters of the broadcasting ops (Add with `broadcast`/`axis`, Gemm …) need the shapes
  of their inputs, which it does not infer, and ops of opsets 1–5 (Add-1 …) have no shape
  inference at all: `mnist-1` fails with "Shape of input 0 is not available". A model older than
  opset 10 is therefore converted in hops (to 6, 7, 9, then the target), its shapes inferred
  before each;
* PRelu up to opset 6 applies a 1-D slope per channel (axis 1); from opset 7 the slope broadcasts
  like NumPy's (from the last axis), and the converter calls the two compatible. The slope is
  unsqueezed to (C, 1, …, 1) before the hop to 7;
* Upsample (to opset 9) becomes Resize (opset 10) keeping Resize's default sampling
  (`half_pixel`), not Upsample's (x_out / scale, floored when nearest): set after conversion;
* BatchNormalization up to opset 8 with `spatial=0` normalizes every element by its own statistics
  (scale, B, mean and var shaped (C, D1, …)); opset 9 dropped the attribute and the converter
  refuses it. Such a node becomes its arithmetic, (X − mean) / √(var + ε) · scale + B, before
  the hop to 9.

* Scan up to opset 8 has a batch axis (every input and output leads with it) and an optional
  `sequence_lens`; opset 9's Scan has neither, and the converter's adapter just strips the leading
  dimension off every type (right only for a batch of one, and it rewrites the graph's declared
  inputs). Each such Scan becomes one Scan per batch entry (`Gather` of the entry, the Scan with
  the body converted on its own, `Unsqueeze` and `Concat` of the results), the Scans hidden from
  the converter in a private domain until the conversion is done.

Whatever the converter still refuses is reported with the node, its operator and the model's
opset, found by converting the nodes one at a time.

Why before the IR (issue 31 item 3: rewrites that can be passes are passes): the `onnx` dialect
has one op per operator at its latest version, generated from the newest schemas, so Add-6 with
`broadcast`/`axis`, PRelu-6's per-channel slope or Upsample have no op to be imported as; and the
conversion is `onnx.version_converter`'s, a protobuf-to-protobuf library whose adapters need
ONNX's shape inference between hops. Converting is part of translating into the dialect.
"""

from __future__ import annotations

import re

import numpy as np
import onnx
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

from zant.errors import ZantError
from zant.ir.onnx_graph import NameSource, all_names, rename_graph

LEGACY_BELOW = 10
"""Models of an older opset (Upsample's included) take the hops below; newer ones are converted
in one call."""
HOPS = (6, 7, 9)
"""6: every op has shape inference (and still the old PRelu); 7: NumPy broadcasting; 9: no
BatchNormalization `spatial`."""


def convert_opset(model: ModelProto, version: int, target: int) -> ModelProto:
    """`model` (default-domain opset `version`) converted to opset `target`."""
    converted = _convert_opset(model, version, target)
    _check_signature_kept(model, converted, version, target)
    # The converter keeps the file's IR version; one older than 4 (opset <= 8) makes shape
    # inference ignore initializers that are not graph inputs, such as the constants the
    # control-flow unroller adds later (test_scan_sum's Gathers came out shapeless).
    default = [o for o in converted.opset_import if o.domain in ("", "ai.onnx")]
    converted.ir_version = max(converted.ir_version, helper.find_min_ir_version_for(default, ignore_unknown=True))
    return converted


def _declared_shapes(model: ModelProto) -> dict[str, list[int | str]]:
    # A symbolic dimension is '?' whatever its name: the converter names the unnamed ones.
    return {
        v.name: [d.dim_value if d.HasField("dim_value") else "?" for d in v.type.tensor_type.shape.dim]
        for v in [*model.graph.input, *model.graph.output]
        if v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape")
    }


def _check_signature_kept(model: ModelProto, converted: ModelProto, version: int, target: int) -> None:
    """onnx's converter may rewrite a graph's declared inputs and outputs (Scan 8 -> 9 drops the
    batch dimension of every one): the caller's buffers would no longer be the model's."""
    before, after = _declared_shapes(model), _declared_shapes(converted)
    for name, shape in before.items():
        # A symbolic dimension the converter inferred is no change; a static one it alters is.
        changed = name in after and (
            len(after[name]) != len(shape) or any(b not in ("?", a) for b, a in zip(shape, after[name]))
        )
        if changed:
            raise ZantError(
                f"converting the model from opset {version} to {target} changes graph tensor '{name}' "
                f"from {shape} to {after[name]} (onnx's version converter); re-export the model at a "
                "newer opset"
            )


def _convert_opset(model: ModelProto, version: int, target: int) -> ModelProto:
    if version >= LEGACY_BELOW:
        return _convert(model, version, target)
    given = {v.name for v in model.graph.value_info}
    if version <= 8 and any(map(_is_scan, model.graph.node)):
        model = _with_shapes(model)
        _scans_per_batch_entry(model, version, target)
    upsampled = {n.output[0] for n in model.graph.node if n.op_type == "Upsample" and n.domain in ("", "ai.onnx")}
    for hop in (*(h for h in HOPS if version < h < target), target):
        model = _with_shapes(model)
        if version <= 6 < hop:
            _refuse_training_mode(model, version)
            _per_channel_prelu(model, version)
        if version <= 8 < hop:
            _elementwise_batchnorm(model, version)
        model = _convert(model, version, hop)
        version = hop
    _asymmetric_resize(model, upsampled)
    _restore_scans(model)
    # The shapes inferred on the way were the old ops'; the importer infers the new ones.
    kept = [v for v in model.graph.value_info if v.name in given]
    del model.graph.value_info[:]
    model.graph.value_info.extend(kept)
    return model


def _convert(model: ModelProto, version: int, target: int) -> ModelProto:
    try:
        return onnx.version_converter.convert_version(model, target)
    except Exception as error:  # the converter raises bare RuntimeErrors and more
        raise ZantError(_conversion_failure(model, version, target, error)) from None


def _first_line(error: Exception) -> str:
    """The converter's message without its source location and assertion text."""
    text = str(error).strip()
    line = text.splitlines()[0] if text else type(error).__name__
    return re.sub(r"^\S+:\d+: [^:]+: Assertion `.*?` failed: ", "", line).replace("$", "")


def node_label(node: NodeProto) -> str:
    return f"node '{node.name}' ({node.op_type})" if node.name else f"node {node.op_type}"


def _conversion_failure(model: ModelProto, version: int, target: int, error: Exception) -> str:
    """The message for a failed conversion: the first node that fails alone, else the model."""
    types = _value_types(model)
    for node in model.graph.node:
        try:
            onnx.version_converter.convert_version(_single_node_model(model, node, types), target)
        except Exception as node_error:  # as above
            return (
                f"{node_label(node)} of opset {version}: the ONNX version converter cannot "
                f"upgrade it to opset {target}: {_first_line(node_error)}"
            )
    return f"cannot convert the model from opset {version} to {target}: {_first_line(error)}"


def _single_node_model(model: ModelProto, node: NodeProto, types: dict[str, onnx.TypeProto]) -> ModelProto:
    initializers = {t.name: t for t in model.graph.initializer}

    def value(name: str) -> onnx.ValueInfoProto:
        info = onnx.ValueInfoProto(name=name)
        if name in types:
            info.type.CopyFrom(types[name])
        return info

    inputs = [n for n in dict.fromkeys(node.input) if n]
    graph = helper.make_graph(
        [node],
        "node",
        [value(n) for n in inputs],
        [value(n) for n in node.output if n],
        [initializers[n] for n in inputs if n in initializers],
    )
    return helper.make_model(graph, opset_imports=model.opset_import, ir_version=model.ir_version)


def _with_shapes(model: ModelProto) -> ModelProto:
    """Lenient shape inference: what it cannot infer at an old opset stays open."""
    try:
        return onnx.shape_inference.infer_shapes(model)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError):
        return model


def _value_types(model: ModelProto) -> dict[str, onnx.TypeProto]:
    graph = model.graph
    types = {v.name: v.type for v in [*graph.input, *graph.value_info, *graph.output]}
    for tensor in graph.initializer:
        if tensor.name not in types:
            types[tensor.name] = helper.make_tensor_type_proto(tensor.data_type, tensor.dims)
    return types


def _rank(types: dict[str, onnx.TypeProto], name: str) -> int | None:
    found = types.get(name)
    if found is None or not found.tensor_type.HasField("shape"):
        return None
    return len(found.tensor_type.shape.dim)


def _dims(types: dict[str, onnx.TypeProto], name: str) -> list[int] | None:
    found = types.get(name)
    if found is None or not found.tensor_type.HasField("shape"):
        return None
    dims = found.tensor_type.shape.dim
    return [d.dim_value if d.HasField("dim_value") else -1 for d in dims]


def _rebuild(model: ModelProto, replace: dict[int, list[NodeProto]]) -> None:
    """Replace the nodes at the given indices by node lists, keeping the order."""
    nodes = list(model.graph.node)
    del model.graph.node[:]
    for index, node in enumerate(nodes):
        model.graph.node.extend(replace.get(index, [node]))


def _asymmetric_resize(model: ModelProto, upsampled: set[str]) -> None:
    """Upsample samples input x_out / scale, and its nearest mode floors that; the converter's
    Resize keeps Resize's defaults (half_pixel, round_prefer_floor), which shift `linear`."""
    for node in model.graph.node:
        if node.op_type == "Resize" and node.output[0] in upsampled:
            kept = [a for a in node.attribute if a.name not in ("coordinate_transformation_mode", "nearest_mode")]
            del node.attribute[:]
            node.attribute.extend(kept)
            node.attribute.append(helper.make_attribute("coordinate_transformation_mode", "asymmetric"))
            node.attribute.append(helper.make_attribute("nearest_mode", "floor"))


def _refuse_training_mode(model: ModelProto, version: int) -> None:
    """BatchNormalization and Dropout ≤ 6 with `is_test=0` run as in training (batch statistics,
    random dropout): not an inference model."""
    for node in model.graph.node:
        if node.op_type in ("BatchNormalization", "Dropout") and node.domain in ("", "ai.onnx"):
            if any(a.name == "is_test" and a.i == 0 for a in node.attribute):
                raise ZantError(
                    f"{node_label(node)} of opset {version}: is_test=0 (training mode) is not "
                    "supported; export the model for inference"
                )


def _per_channel_prelu(model: ModelProto, version: int) -> None:
    """PRelu ≤ 6: a 1-D slope of C > 1 values applies along axis 1; unsqueeze it to
    (C, 1, …, 1) so that NumPy broadcasting (opset 7) puts it there."""
    types = _value_types(model)
    names = NameSource(all_names(model.graph))
    replace: dict[int, list[NodeProto]] = {}
    for index, node in enumerate(model.graph.node):
        if node.op_type != "PRelu" or node.domain not in ("", "ai.onnx"):
            continue
        slope = _dims(types, node.input[1])
        if slope is not None and (len(slope) != 1 or slope[0] == 1):
            continue  # shared, or already shaped for broadcasting
        rank = _rank(types, node.input[0])
        if slope is None or rank is None:
            raise ZantError(
                f"{node_label(node)} of opset {version}: cannot infer the shapes of its input and "
                "slope, needed to apply its slope per channel"
            )
        if rank <= 2:
            continue  # (N, C): the last axis is the channel axis
        per_channel = names.fresh(f"{node.input[1]}_per_channel")
        unsqueeze = helper.make_node(
            "Unsqueeze", [node.input[1]], [per_channel], axes=list(range(1, rank - 1))
        )
        node.input[1] = per_channel
        replace[index] = [unsqueeze, node]
    _rebuild(model, replace)


def _elementwise_batchnorm(model: ModelProto, version: int) -> None:
    """BatchNormalization ≤ 8 with `spatial=0`: its arithmetic, the statistics per element."""
    types = _value_types(model)
    names = NameSource(all_names(model.graph))
    replace: dict[int, list[NodeProto]] = {}
    for index, node in enumerate(model.graph.node):
        if node.op_type != "BatchNormalization" or node.domain not in ("", "ai.onnx"):
            continue
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if attributes.get("spatial", 1) != 0:
            continue
        if any(node.output[1:]):
            raise ZantError(
                f"{node_label(node)} of opset {version}: spatial=0 with the running statistics "
                "as outputs (training mode) is not supported"
            )
        x, scale, bias, mean, var = node.input
        element_type = types[x].tensor_type.elem_type if x in types else TensorProto.FLOAT
        epsilon = names.fresh(f"{node.output[0]}_epsilon")
        epsilon_value = helper.make_tensor(epsilon, element_type, [], [attributes.get("epsilon", 1e-5)])
        centered, shifted, deviation, normalized, scaled = (
            names.fresh(f"{node.output[0]}_{part}")
            for part in ("centered", "var_eps", "deviation", "normalized", "scaled")
        )
        replace[index] = [
            helper.make_node("Constant", [], [epsilon], value=epsilon_value),
            helper.make_node("Sub", [x, mean], [centered]),
            helper.make_node("Add", [var, epsilon], [shifted]),
            helper.make_node("Sqrt", [shifted], [deviation]),
            helper.make_node("Div", [centered, deviation], [normalized]),
            helper.make_node("Mul", [normalized, scale], [scaled]),
            helper.make_node("Add", [scaled, bias], [node.output[0]], name=node.name),
        ]
    _rebuild(model, replace)


HIDDEN_SCAN_DOMAIN = "zant.per_batch_scan"
"""The private domain the per-batch Scans of an opset-8 Scan wait in while the rest of the model
is converted (the converter leaves other domains' nodes alone); `_restore_scans` moves them back."""


def _is_scan(node: NodeProto) -> bool:
    return node.op_type == "Scan" and node.domain in ("", "ai.onnx")


def _scans_per_batch_entry(model: ModelProto, version: int, target: int) -> None:
    """Every Scan ≤ 8 of the main graph as one Scan per batch entry (see the module doc), each in
    `HIDDEN_SCAN_DOMAIN` with its body already converted to `target`."""
    types = _value_types(model)
    constants = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    names = NameSource(all_names(model.graph))
    replace: dict[int, list[NodeProto]] = {}
    for index, node in enumerate(model.graph.node):
        if not _is_scan(node):
            continue
        attributes = {a.name: a for a in node.attribute}
        scanned = node.input[-helper.get_attribute_value(attributes["num_scan_inputs"])]
        shape = _dims(types, scanned)
        if shape is None or len(shape) < 2 or min(shape[:2]) < 0:
            raise ZantError(
                f"{node_label(node)} of opset {version}: the batch and sequence lengths of its scan "
                f"input '{scanned}' are not static"
            )
        batch, steps = shape[:2]
        _check_full_sequences(node, constants, steps, version)
        body = _converted_body(attributes["body"].g, types, version, target)
        nodes: list[NodeProto] = []
        pieces: list[list[str]] = [[] for _ in node.output]
        for entry in range(batch):
            index_name = names.fresh(f"{node.name or 'scan'}_batch_{entry}")
            index_value = helper.make_tensor(index_name, TensorProto.INT64, [], [entry])
            nodes.append(helper.make_node("Constant", [], [index_name], value=index_value))
            entries = []
            for value in node.input[1:]:
                entries.append(names.fresh(f"{value}_{entry}"))
                nodes.append(helper.make_node("Gather", [value, index_name], [entries[-1]], axis=0))
            results = [names.fresh(f"{out}_{entry}") for out in node.output]
            scan = helper.make_node("Scan", entries, results, name=node.name, domain=HIDDEN_SCAN_DOMAIN)
            scan.attribute.extend(a for a in node.attribute if a.name not in ("body", "directions"))
            scan.attribute.append(helper.make_attribute("body", _renamed_copy(body, names, entry)))
            if "directions" in attributes:  # renamed at opset 9
                directions = list(attributes["directions"].ints)
                scan.attribute.append(helper.make_attribute("scan_input_directions", directions))
            nodes.append(scan)
            for out, piece, result in zip(node.output, pieces, results):
                piece.append(out if batch == 1 else names.fresh(f"{result}_unsqueezed"))
                nodes.append(helper.make_node("Unsqueeze", [result], [piece[-1]], axes=[0]))
        if batch > 1:
            nodes.extend(helper.make_node("Concat", piece, [out], axis=0) for out, piece in zip(node.output, pieces))
        replace[index] = nodes
    _rebuild(model, replace)
    model.opset_import.append(helper.make_opsetid(HIDDEN_SCAN_DOMAIN, 1))


def _check_full_sequences(node: NodeProto, constants: dict[str, np.ndarray], steps: int, version: int) -> None:
    """`sequence_lens` may only say what its absence says: every sequence runs its full length."""
    lengths = node.input[0]
    if not lengths:
        return
    if lengths not in constants or np.any(constants[lengths] != steps):
        raise ZantError(
            f"{node_label(node)} of opset {version}: sequence_lens '{lengths}' must be a constant "
            f"equal to the sequence length {steps} (shorter sequences are not supported)"
        )


def _converted_body(
    body: onnx.GraphProto, outer: dict[str, onnx.TypeProto], version: int, target: int
) -> onnx.GraphProto:
    """A Scan body converted from opset `version` to `target` as a model of its own; the outer
    values it reads are that model's extra inputs while it is converted."""
    defined = _defined_names(body)
    read = dict.fromkeys(name for n in body.node for name in n.input)
    free = [name for name in read if name and name not in defined]
    graph = onnx.GraphProto()
    graph.CopyFrom(body)
    for name in free:
        graph.input.append(helper.make_value_info(name, outer.get(name, onnx.TypeProto())))
    standalone = helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)])
    converted = convert_opset(standalone, version, target).graph
    kept = [v for v in converted.input if v.name not in free]
    del converted.input[:]
    converted.input.extend(kept)
    return converted


def _renamed_copy(body: onnx.GraphProto, names: NameSource, entry: int) -> onnx.GraphProto:
    """A copy of `body` whose own values have fresh names: value names are unique across a
    model's subgraphs (shape inference's data propagation keys them by name)."""
    copy = onnx.GraphProto()
    copy.CopyFrom(body)
    own = _defined_names(body)
    fresh = {name: names.fresh(f"{name}_{entry}") for name in sorted(own)}
    rename_graph(copy, lambda name: fresh.get(name, name))
    return copy


def _defined_names(graph: onnx.GraphProto) -> set[str]:
    """The values `graph` defines itself: its inputs, initializers and node outputs."""
    defined = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    defined.update(name for n in graph.node for name in n.output)
    return defined - {""}


def _restore_scans(model: ModelProto) -> None:
    """The per-batch Scans back in the default domain, once the model is converted."""
    for node in model.graph.node:
        if node.domain == HIDDEN_SCAN_DOMAIN:
            node.domain = ""
    kept = [o for o in model.opset_import if o.domain != HIDDEN_SCAN_DOMAIN]
    del model.opset_import[:]
    model.opset_import.extend(kept)
