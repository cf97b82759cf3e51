"""ONNX model → `onnx` dialect module (the `.onnx` frontend of `zant-opt`).

Steps, each turning library failures into one `ZantError` message:

1. parse the protobuf and check what the ONNX checker does not (`model_checks.py`: UTF-8 text,
   known opsets, outputs and element types, tensor data against their dims); a graph input that
   also has an initializer is a run-time input from IR 4 on (`_inputs_with_defaults`); refuse
   unknown operators and operators outside the default domain, except `ai.onnx.ml` and
   `ai.onnx.preview.training` ones that have a lowering (imported with their domain's opset;
   `ai.onnx.ml`'s is recorded as `onnx.ml_opset`: only the default domain is converted) and
   onnxruntime's com.microsoft QLinear ops (`contrib_quantized.py`; `fold-qoperator` lowers them);
2. load external data, refusing any location that leaves the model's folder and, before reading
   a byte, sizes that contradict the tensors or their files or pass protobuf's 2 GB;
3. `onnx.checker.check_model`;
4. opset: models older than the installed `onnx`'s default opset have their types checked at
   their own opset, then are converted to it with `onnx.version_converter` (`legacy_opsets.py`:
   in hops from the oldest opsets, with their old forms rewritten), so the dialect (generated
   from the latest schemas) describes every node exactly; the module records the opset used as
   `onnx.opset`;
5. apply `--input-shape` overrides, insist on static graph inputs, then strict shape inference
   with data propagation (intermediate shapes the file declares and its nodes contradict are
   re-inferred, with a `ModelWarning`), the outputs of com.microsoft ops typed from their
   definitions; every value must end up with a static tensor type;
6. ops without a uop lowering that ONNX defines by a function body are imported as themselves
   (the `inline-functions` pass replaces them by their body), except the bodies the dialect
   cannot hold, which are inlined here (`expand.py`: control flow, other domains), with shape
   inference again; subgraphs left after that are refused;
7. build `func.func @main`: initializers first (as `onnx.Constant`), then one op per node
   (`zant.dialects.onnx_nodes`; a zero point a com.microsoft node leaves out written as a
   constant 0 before it). A node calling a model-local function (`ModelProto.functions`) is an
   `onnx.call` of an `onnx.function` holding the function's body for that node's input types
   and attributes, imported by the same steps from the model `local_functions.instance_model`
   makes of it (`inline-functions` inlines the calls).

Names stay verbatim in string attributes (`onnx.input_names`, `onnx.node_name` ...); SSA name
hints are sanitized copies, for readability only. Each node's op has the node's name as its
location (`loc("conv1")`, see `node_location`), which the passes carry down to the Zig kernels.
"""

from __future__ import annotations

import os
import re
import warnings

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import AttributeProto, ModelProto, TensorProto, helper
from xdsl.dialects.builtin import (
    i64,
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    FunctionType,
    TensorType,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Region, SSAValue

from zant.dialects.onnx import (
    GRAPH_NAME,
    INPUT_NAMES,
    LOWERED_DOMAINS,
    ML_DOMAIN,
    ML_OPSET,
    NODE_NAME,
    OPSET,
    OUTPUT_NAMES,
    TRAINING_DOMAIN,
    ZANT_DOMAIN,
    CallOp,
    ConstantOp,
    FunctionOp,
    op_name,
)
from zant.dialects.onnx import ReturnOp as FunctionReturnOp
from zant.dialects.onnx_function_ops import function_symbol
from zant.dialects.onnx_nodes import (
    array_type,
    constant_node_array,
    constant_op,
    node_label,
    op_of_node,
    static_tensor_type,
    string_constant_op,
    tensor_array,
)
from zant.frontend.bounded import BOUNDED_ATTR, OUTPUT_BOUNDS_ATTR, bound_outputs
from zant.frontend.contrib_quantized import absent_zero_points, check_contrib_node, is_contrib_op, type_contrib_outputs
from zant.errors import ModelWarning, UnsupportedOp, UnsupportedOpsError, ZantError
from zant.frontend.expand import (
    DEFAULT_DOMAINS,
    EXPANDABLE_DOMAINS,
    domain_version,
    expand_model,
    has_function_body,
    spell_out_defaults,
)
from zant.frontend.legacy_opsets import convert_opset
from zant.frontend.local_functions import calls_local_function, instance_key, instance_model, local_functions
from zant.frontend.model_checks import check_external_sizes, check_model_structure
from zant.frontend.parameter_guesses import shapes_from_parameter_guesses
from zant.frontend.qonnx import lower_qonnx
from zant.frontend.sequences import (
    SEQUENCE_RESULT_OPS,
    EdgeLayout,
    edge_layouts,
    edge_value_ops,
    tensor_value_type,
    value_type,
)
from zant.dialects.onnx_shape_folding import all_shapes_static, fold_shape_subgraphs
from zant.ir.resources import make_constant_attr
from zant.frontend.strings import string_capacities
from zant.ir.strings import DEFAULT_STRING_CAPACITY, StringType
from zant.ir.types import mlir_element_type, numpy_dtype

def import_model(path: str, input_shapes: dict[str, list[int]] | None = None) -> ModuleOp:
    """Import the ONNX model file at `path`."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as error:
        raise ZantError(f"cannot read model '{path}': {error.strerror}") from None
    return import_model_bytes(data, os.path.dirname(os.path.abspath(path)), input_shapes)


def import_model_bytes(
    data: bytes, model_dir: str, input_shapes: dict[str, list[int]] | None = None,
    string_capacity: int = DEFAULT_STRING_CAPACITY, sequence_capacity: int | None = None,
) -> ModuleOp:
    """Import a serialized ONNX model; `model_dir` is where its external data files live;
    `string_capacity`: the bytes of each element of a string graph input (`zant.ir.strings`);
    `sequence_capacity`: the most iterations of a Loop that builds a sequence over a run-time
    trip count (`zant.frontend.control_flow`)."""
    model = ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as error:
        raise ZantError(f"malformed ONNX model (not a valid protobuf): {error}") from None
    if not model.HasField("graph"):
        raise ZantError("malformed ONNX model: no graph (empty or truncated file?)")
    check_model_structure(model)
    model = lower_qonnx(model)  # QONNX's Quant/BipolarQuant/Trunc as Q/Clip/DQ (`qonnx.py`)
    _inputs_with_defaults(model)
    _check_operators(model)
    _load_external_data(model, model_dir, len(data))
    try:
        onnx.checker.check_model(model)
    except (onnx.checker.ValidationError, ValueError) as error:
        raise ZantError(f"invalid ONNX model: {_first_line(error)}") from None
    model, opset = _convert_opset(model)
    tensor_shapes, layouts = edge_layouts(model, input_shapes or {})
    _apply_input_shapes(model, tensor_shapes)
    model = _expanded(model, opset, layouts, sequence_capacity)
    model, bounded_nodes, output_bounds = bound_outputs(model)
    return _GraphImporter(model, opset, bounded_nodes, output_bounds, layouts, string_capacity=string_capacity).build()


def _expanded(
    model: ModelProto, opset: int, layouts: dict[str, EdgeLayout] | None = None, sequence_capacity: int | None = None
) -> ModelProto:
    """Steps 5 and 6 (shape inference, control flow and function bodies) of a converted model."""
    infer = lambda m: _infer_shapes(m, opset)  # noqa: E731
    model = expand_model(infer(spell_out_defaults(model, opset)), opset, _has_lowering, infer, layouts, sequence_capacity)
    _check_expanded(model)
    return model


MAX_FUNCTION_DEPTH = 32
"""Model-local functions call each other a few levels deep; a cycle (which ONNX forbids) stops here."""


class _Instances:
    """The `onnx.function`s made for a model's calls, by `instance_key`, shared by the importers
    of the main graph and of the instances (a body may call another function)."""

    def __init__(self, model: ModelProto):
        self.model = model
        self.functions = local_functions(model)
        self.by_key: dict[tuple, FunctionOp] = {}
        self.ops: list[FunctionOp] = []
        self.depth = 0

    def callee(self, node: onnx.NodeProto, input_types: list[onnx.TypeProto | None]) -> FunctionOp:
        """The instance `node` calls, imported on first use."""
        function = self.functions[(node.domain, node.op_type)]
        key = instance_key(node, function, input_types)
        if key in self.by_key:
            return self.by_key[key]
        if self.depth >= MAX_FUNCTION_DEPTH:
            raise ZantError(f"{node_label(node)}: model-local functions call each other more than {MAX_FUNCTION_DEPTH} deep")
        taken = {op.sym_name.data for op in self.ops}
        symbol = next(s for k in range(len(self.ops) + 1) if (s := function_symbol(function.domain, function.name, k)) not in taken)
        model, opset = _convert_opset(instance_model(self.model, node, function, input_types))
        _check_operators(model)
        self.depth += 1
        try:
            op = _GraphImporter(_expanded(model, opset), opset, instances=self).build_function(symbol, function)
        finally:
            self.depth -= 1
        self.by_key[key] = op
        self.ops.append(op)
        return op


def _infer_shapes(model: ModelProto, opset: int) -> ModelProto:
    """Strict shape inference with data propagation; shape subgraphs folded when it is not enough.
    Intermediate shapes the file declares and its nodes contradict are re-inferred, with a
    `ModelWarning` (`_drop_stale_value_info`)."""
    try:
        return _infer_shapes_strictly(model, opset)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError) as error:
        failure = error
    if _drop_stale_value_info(model):
        try:
            return _infer_shapes_strictly(model, opset)
        except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError) as error:
            failure = error
    raise ZantError(f"shape inference failed: {_first_line(failure)}") from None


def _infer_shapes_strictly(model: ModelProto, opset: int) -> ModelProto:
    if any((node.domain == ML_DOMAIN and node.op_type in _ML_SHAPES) or is_contrib_op(node) for node in model.graph.node):
        model = _infer_open_outputs(model, opset)
    model = _infer_and_fold(model, opset)
    if not all_shapes_static(model):
        model = shapes_from_parameter_guesses(model, lambda m: _infer_and_fold(m, opset))
    return model


def _drop_stale_value_info(model: ModelProto) -> bool:
    """Remove from `model` the shapes it declares for intermediate values (value_info) that its
    nodes contradict (another rank, size or element type than inference without them gives),
    with a `ModelWarning` naming them; True if any. Exporters leave such stale entries behind
    (a CNTK MNIST declares a Reshape's [8, 1, 1] result as [8]); the graph's inputs and outputs
    are its interface and are never overridden."""
    graph = model.graph
    probe = ModelProto()
    probe.CopyFrom(model)
    del probe.graph.value_info[:]
    try:
        inferred = onnx.shape_inference.infer_shapes(probe, data_prop=True)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError):
        return False
    found = {v.name: v.type for v in inferred.graph.value_info}
    interface = {v.name for v in [*graph.input, *graph.output]}
    stale = [
        (v, found[v.name]) for v in graph.value_info
        if v.name not in interface and v.name in found and _contradicts(v.type, found[v.name])
    ]
    if not stale:
        return False
    listed = ", ".join(f"'{v.name}' {_spell_type(v.type)} (inferred {_spell_type(t)})" for v, t in stale[:3])
    more = f" and {len(stale) - 3} more" if len(stale) > 3 else ""
    warnings.warn(
        f"the model declares stale shapes for {listed}{more}: re-inferred from its nodes", ModelWarning, stacklevel=2
    )
    names = {v.name for v, _ in stale}
    kept = [v for v in graph.value_info if v.name not in names]
    del graph.value_info[:]
    graph.value_info.extend(kept)
    return True


def _contradicts(declared: onnx.TypeProto, inferred: onnx.TypeProto) -> bool:
    """Whether two tensor types cannot describe the same value (an unknown part agrees with any)."""
    if not (declared.HasField("tensor_type") and inferred.HasField("tensor_type")):
        return False
    a, b = declared.tensor_type, inferred.tensor_type
    if a.elem_type and b.elem_type and a.elem_type != b.elem_type:
        return True
    if not (a.HasField("shape") and b.HasField("shape")):
        return False
    if len(a.shape.dim) != len(b.shape.dim):
        return True
    return any(
        x.HasField("dim_value") and y.HasField("dim_value") and x.dim_value != y.dim_value
        for x, y in zip(a.shape.dim, b.shape.dim)
    )


def _spell_type(type_proto: onnx.TypeProto) -> str:
    tensor = type_proto.tensor_type
    if not tensor.HasField("shape"):
        return "of unknown shape"
    return "[" + ", ".join(str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?") for d in tensor.shape.dim) + "]"


def _infer_and_fold(model: ModelProto, opset: int) -> ModelProto:
    model = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    return model if all_shapes_static(model) else fold_shape_subgraphs(model, opset)


def _attribute(node: onnx.NodeProto, name: str, default=None):
    found = next((a for a in node.attribute if a.name == name), None)
    return default if found is None else helper.get_attribute_value(found)


def _classes(node: onnx.NodeProto) -> int:
    return max(len(_attribute(node, f"classlabels_{kind}", [])) for kind in ("ints", "int64s", "strings"))


def _linear_scores(node: onnx.NodeProto, rows: int, features: int) -> list[int]:
    """LinearClassifier: one score per coefficient row; one row for two classes scores both."""
    columns = len(_attribute(node, "coefficients", [])) // max(features, 1)
    return [rows, 2 if columns == 1 and _classes(node) == 2 else columns]


_FLOAT, _INT64 = TensorProto.FLOAT, TensorProto.INT64
_ML_SHAPES = {
    "Scaler": lambda node, n, f, shape: [(0, _FLOAT, shape)],
    "Normalizer": lambda node, n, f, shape: [(0, _FLOAT, shape)],
    "Imputer": lambda node, n, f, shape: [(0, None, shape)],
    "SVMRegressor": lambda node, n, f, shape: [(0, _FLOAT, [n, 1])],
    "LinearRegressor": lambda node, n, f, shape: [(0, _FLOAT, [n, _attribute(node, "targets", 1)])],
    "LinearClassifier": lambda node, n, f, shape: [(0, _INT64, [n]), (1, _FLOAT, _linear_scores(node, n, f))],
    # A binary classifier scores both classes even when it labels one.
    "TreeEnsembleClassifier": lambda node, n, f, shape: [(0, _INT64, [n]), (1, _FLOAT, [n, max(_classes(node), 2)])],
}
"""ai.onnx.ml ops whose output types ONNX's shape inference leaves open: (node, rows, features,
input shape) → (output index, element type (None: the input's), shape) of each output."""


def _infer_open_outputs(model: ModelProto, opset: int) -> ModelProto:
    """Lenient inference and the rules for what ONNX's leaves open (`_ML_SHAPES`, the
    com.microsoft ops' definitions) in turn until no output is left open; the strict inference
    that follows then checks the whole graph (strict inference fails on the first consumer of an
    untyped value, before these rules could run)."""
    for _ in range(len(model.graph.node) + 1):
        model = onnx.shape_inference.infer_shapes(model, data_prop=True)
        ml, contrib = _fill_ml_shapes(model), type_contrib_outputs(model, opset)
        if not (ml or contrib):
            break
    return model


def _fill_ml_shapes(model: ModelProto) -> bool:
    """Give the outputs of `_ML_SHAPES` nodes their types where still open; True if any."""
    graph = model.graph
    values = {v.name: v for v in [*graph.input, *graph.value_info, *graph.output]}
    changed = False
    for node in graph.node:
        rule = _ML_SHAPES.get(node.op_type) if node.domain == ML_DOMAIN else None
        source = values.get(node.input[0]) if rule else None
        if source is None or not source.type.tensor_type.HasField("shape"):
            continue
        shape = [d.dim_value for d in source.type.tensor_type.shape.dim]
        rows, features = (shape[0], shape[1]) if len(shape) == 2 else (1, shape[-1] if shape else 1)
        for index, element_type, result in rule(node, rows, features, shape):
            if index >= len(node.output) or not node.output[index]:
                continue
            target = values.get(node.output[index])
            if target is not None and target.type.tensor_type.HasField("shape"):
                continue
            element_type = element_type or source.type.tensor_type.elem_type
            typed = helper.make_tensor_value_info(node.output[index], element_type, result)
            if target is None:
                graph.value_info.append(typed)
            else:
                target.type.CopyFrom(typed.type)
            changed = True
    return changed


def _has_lowering(op_type: str, domain: str = "") -> bool:
    from zant.passes.onnx_to_uop import supported_ops
    from zant.passes.resolve_sequences import RESOLVED_OPS

    from zant.passes.expand_gradients import DIFFERENTIATED_OPS

    return op_name(op_type, domain) in supported_ops() or (domain in DEFAULT_DOMAINS and op_type in RESOLVED_OPS) or (
        domain == TRAINING_DOMAIN and op_type in DIFFERENTIATED_OPS
    )


_ML_NON_TENSOR_OPS = frozenset({"ZipMap", "CastMap", "DictVectorizer"})
"""ai.onnx.ml operators that read or produce maps or sequences of maps: out of scope, the
generated code passes dense tensors only."""


def _check_lowered_operator(node: onnx.NodeProto) -> None:
    """An op of `LOWERED_DOMAINS` is imported when it has a lowering."""
    if node.domain == ML_DOMAIN and node.op_type in _ML_NON_TENSOR_OPS:
        raise ZantError(
            f"{node_label(node)}: {ML_DOMAIN}.{node.op_type} works on maps or sequences, which "
            "are out of scope (tensors only; convert classifiers without ZipMap, e.g. skl2onnx's "
            "options={'zipmap': False})"
        )
    if not _has_lowering(node.op_type, node.domain):
        raise _unsupported(node, f"no lowering for operator '{node.domain}.{node.op_type}'")


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _unsupported(node: onnx.NodeProto, problem: str) -> UnsupportedOpsError:
    return UnsupportedOpsError(
        f"{node_label(node)}: {problem}", [UnsupportedOp(node.name, node.op_type, node.domain)]
    )


def _check_operators(model: ModelProto) -> None:
    """Only default-domain operators known to the installed `onnx` are supported, operators of
    `LOWERED_DOMAINS` with a lowering, and ops of other domains that ONNX defines by a function body
    (they are expanded), and calls of the model's own functions."""
    functions = local_functions(model)
    for node in model.graph.node:
        if calls_local_function(node, functions):
            continue
        if node.domain in LOWERED_DOMAINS:
            _check_lowered_operator(node)
            continue
        if is_contrib_op(node):
            check_contrib_node(node)
            continue
        if node.domain in EXPANDABLE_DOMAINS and has_function_body(
            node.op_type, domain_version(model, node.domain, 0), node.domain
        ):
            continue
        if node.domain not in DEFAULT_DOMAINS:
            raise _unsupported(node, f"unsupported operator domain '{node.domain}'")
        if not onnx.defs.has(node.op_type):
            raise _unsupported(node, f"unsupported operator '{node.op_type}'")


def _check_expanded(model: ModelProto) -> None:
    """Control flow must have been unrolled and other domains' ops expanded by `expand_model`;
    what is left cannot be lowered (calls of the model's own functions are imported as calls)."""
    functions = local_functions(model)
    for node in model.graph.node:
        if calls_local_function(node, functions):
            continue
        if node.domain == ZANT_DOMAIN and node.op_type in ("Guard", "SequenceSelect"):
            continue  # the unroller's (a Loop unrolled for its declared extent or the sequence capacity)
        if node.domain not in (*DEFAULT_DOMAINS, *LOWERED_DOMAINS) and not is_contrib_op(node):
            raise ZantError(f"{node_label(node)}: no function body of '{node.domain}.{node.op_type}' "
                            "fits this node's attributes and input types")
        if node.op_type == "SequenceMap" and node.domain in DEFAULT_DOMAINS:
            continue  # its body is a graph attribute, inlined per element by resolve-sequences
        for attribute in node.attribute:
            if attribute.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS):
                raise _unsupported(node, "subgraph attributes are not supported")


def _load_external_data(model: ModelProto, model_dir: str, model_bytes: int) -> None:
    """Read external tensor data, refusing locations outside the model's folder and sizes that
    contradict the tensors, their files or protobuf's 2 GB (`check_external_sizes`, before any
    byte is read); `model_bytes` is the size of the model file."""
    from onnx import external_data_helper

    tensors = [
        t
        for t in external_data_helper._get_all_tensors(model)
        if external_data_helper.uses_external_data(t)
    ]
    if not tensors:
        return
    root = os.path.realpath(model_dir)
    for tensor in tensors:
        location = next((e.value for e in tensor.external_data if e.key == "location"), "")
        parts = re.split(r"[\\/]", location)
        target = os.path.realpath(os.path.join(root, location))
        if (
            not location
            or os.path.isabs(location)
            or ".." in parts
            or os.path.commonpath([root, target]) != root
        ):
            raise ZantError(
                f"tensor '{tensor.name}': external data location '{location}' is outside "
                "the model's folder"
            )
    check_external_sizes(tensors, root, model_bytes)
    try:
        external_data_helper.load_external_data_for_model(model, root)
    except (OSError, ValueError, onnx.checker.ValidationError) as error:
        raise ZantError(f"cannot load external data: {_first_line(error)}") from None


def _convert_opset(model: ModelProto) -> tuple[ModelProto, int]:
    target = onnx.defs.onnx_opset_version()
    version = next(
        (o.version for o in model.opset_import if o.domain in DEFAULT_DOMAINS), None
    )
    if version is None:
        if any(node.domain in DEFAULT_DOMAINS for node in model.graph.node):
            raise ZantError("model imports no default-domain ('ai.onnx') opset")
        return model, target  # only other domains' ops (a lone ai.onnx.ml node): nothing to convert
    if version >= target:
        return model, version
    _check_types_at(model, version)
    converted = convert_opset(model, version, target)
    # The converter drops model-local functions: each instance is converted as a model of its own.
    del converted.functions[:]
    converted.functions.extend(model.functions)
    return converted, target


def _check_types_at(model: ModelProto, version: int) -> None:
    """Each node's input and output types are ones its operator takes at the model's own opset
    (`version`): the conversion to a newer one would launder a type only the newer opset allows
    (a float16 QuantizeLinear at opset 17). Shape problems are left to the inference after it."""
    try:
        onnx.shape_inference.infer_shapes(_without_weights(model), check_type=True)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError) as error:
        raise ZantError(f"invalid ONNX model at opset {version}: {_first_line(error)}") from None


def _without_weights(model: ModelProto) -> ModelProto:
    """A copy of `model` whose initializers are graph inputs of their type and shape: the same
    types for inference to check, without copying and serializing the weights for it
    (ResNet-18's 47 MB: 126 ms of a 1.3 s import)."""
    skeleton = ModelProto()
    for message, copy in ((model, skeleton), (model.graph, skeleton.graph)):
        for field, value in message.ListFields():
            if field.name in ("graph", "initializer"):
                continue
            if field.is_repeated:
                getattr(copy, field.name).extend(value)
            elif field.type == field.TYPE_MESSAGE:
                getattr(copy, field.name).CopyFrom(value)
            else:
                setattr(copy, field.name, value)
    listed = {v.name for v in skeleton.graph.input}
    skeleton.graph.input.extend(
        helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
        for t in model.graph.initializer
        if t.name not in listed
    )
    return skeleton


def _inputs_with_defaults(model: ModelProto) -> None:
    """From IR version 4, a graph input that also has an initializer is a run-time input and the
    initializer only its default (onnxruntime lets the caller override it): it stays an input of
    the generated function and its value is not compiled in (`--freeze` does that). The
    initializer is dropped; its dims give the input's shape where the input leaves it open.
    Before IR 4 every initializer had to be listed among the inputs: there they are constants."""
    if model.ir_version < 4:
        return
    inputs = {v.name: v for v in model.graph.input}
    defaults = [t for t in model.graph.initializer if t.name in inputs]
    if not defaults:
        return
    for tensor in defaults:
        if not inputs[tensor.name].type.HasField("tensor_type"):
            continue  # the checker refuses it
        declared = inputs[tensor.name].type.tensor_type
        if not declared.HasField("shape"):
            declared.shape.SetInParent()
            declared.shape.dim.extend(onnx.TensorShapeProto.Dimension(dim_value=d) for d in tensor.dims)
        elif len(declared.shape.dim) == len(tensor.dims):
            for dim, size in zip(declared.shape.dim, tensor.dims):
                if not dim.HasField("dim_value"):
                    dim.dim_value = size
    kept = [t for t in model.graph.initializer if t.name not in inputs]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)


def _graph_inputs(model: ModelProto) -> list[onnx.ValueInfoProto]:
    initializers = {t.name for t in model.graph.initializer}
    return [v for v in model.graph.input if v.name not in initializers]


def _apply_input_shapes(model: ModelProto, input_shapes: dict[str, list[int]]) -> None:
    inputs = {v.name: v for v in _graph_inputs(model)}
    for name, shape in input_shapes.items():
        value = inputs.get(name)
        if value is None:
            known = ", ".join(inputs) or "none"
            raise ZantError(f"--input-shape names unknown input '{name}' (inputs: {known})")
        tensor_type = value.type.tensor_type
        if tensor_type.HasField("shape") and len(tensor_type.shape.dim) != len(shape):
            raise ZantError(
                f"--input-shape {name}: rank {len(shape)} does not match the input's rank "
                f"{len(tensor_type.shape.dim)}"
            )
        tensor_type.shape.Clear()
        for size in shape:
            tensor_type.shape.dim.add().dim_value = size
    for value in inputs.values():
        if not value.type.HasField("tensor_type"):
            continue  # a sequence or optional: laid out by `edge_layouts`
        tensor_type = value.type.tensor_type
        if not tensor_type.HasField("shape"):
            raise ZantError(
                f"input '{value.name}' has unknown rank; fix it with --input-shape "
                f"{value.name}=D0xD1x..."
            )
        dims = tensor_type.shape.dim
        for index, dim in enumerate(dims):
            # A set dim_value of 0 is a real, empty dimension; only an unset one is symbolic.
            if not dim.HasField("dim_value") or dim.dim_value < 0:
                symbol = f" ('{dim.dim_param}')" if dim.dim_param else ""
                example = "x".join(
                    str(d.dim_value) if d.HasField("dim_value") and d.dim_value > 0 else "1"
                    for d in dims
                )
                raise ZantError(
                    f"input '{value.name}' has symbolic dimension {index}{symbol}; fix it "
                    f"with --input-shape {value.name}={example}"
                )


def _sanitize(name: str) -> str | None:
    hint = re.sub(r"[^A-Za-z0-9_]", "_", name).strip("_")
    if not hint:
        return None
    return hint if not hint[0].isdigit() else "v" + hint


def node_location(node: onnx.NodeProto, index: int) -> NameLoc:
    """The location of the op made of `node`: its name, or `OpType_<index in the graph>` for an
    unnamed node. Lowerings and loop passes carry it to the code made of the op (provenance for
    the generated Zig's comments and `zant profile`)."""
    return NameLoc(StringAttr(node.name or f"{node.op_type}_{index}"), NoneAttr())


DATA_DEPENDENT_SIZE_OPS = frozenset({"NonZero", "Compress", "NonMaxSuppression", "StringSplit", "StringNormalizer"})
"""Ops whose output size depends on the data, compiled for the shape the model declares (the
lowering checks the data against it); one left symbolic is an error naming the node."""


class _GraphImporter:
    """Builds `@main` from a checked, shape-inferred model; one instance per import."""

    def __init__(
        self,
        model: ModelProto,
        opset: int,
        bounded_nodes: dict[int, list[int]] | None = None,
        output_bounds: list[int] | None = None,
        layouts: dict[str, EdgeLayout] | None = None,
        instances: _Instances | None = None,
        string_capacity: int = DEFAULT_STRING_CAPACITY,
    ):
        self.model = model
        self.instances = instances if instances is not None else _Instances(model)
        self.opset = opset
        self.bounded_nodes = bounded_nodes or {}  # node index → its results compiled at their bound
        self.output_bounds = output_bounds or []
        self.layouts = layouts or {}  # sequence/optional graph input → the tensors it is compiled as
        self.graph = model.graph
        self.values: dict[str, SSAValue] = {}
        self.types: dict[str, onnx.TypeProto] = {
            v.name: v.type
            for v in [*self.graph.input, *self.graph.value_info, *self.graph.output]
        }
        self.producers = {out: node for node in self.graph.node for out in node.output}
        self.string_capacities = string_capacities(self.graph, self.types, string_capacity)

    def tensor_type(self, name: str) -> Attribute:
        """The static tensor type of value `name`; a sequence or optional value's `!onnx.seq` or
        `!onnx.opt`, a tensor a sequence op gives (`SEQUENCE_RESULT_OPS`) maybe dynamic."""
        type_proto = self.types.get(name)
        producer = self.producers.get(name)
        where = f" (output of {node_label(producer)})" if producer is not None else ""
        if type_proto is not None and not type_proto.HasField("tensor_type") and type_proto.WhichOneof("value"):
            return value_type(type_proto, name)
        if type_proto is None or not type_proto.HasField("tensor_type"):
            raise ZantError(f"cannot infer a static tensor type for '{name}'{where}")
        if type_proto.tensor_type.elem_type == onnx.TensorProto.STRING and name in self.string_capacities:
            shape = type_proto.tensor_type.shape
            dims = [d.dim_value if d.HasField("dim_value") else None for d in shape.dim]
            if producer is not None and producer.op_type == "StringSplit" and dims and None not in dims[:-1] and 0 in dims[:-1]:
                dims[-1] = 0  # no strings, no pieces: the reference's [..., 0]
            if not type_proto.tensor_type.HasField("shape") or None in dims:
                raise ZantError(f"cannot infer a static shape for '{name}'{where}{self.freeze_hint(name)}")
            return TensorType(StringType(self.string_capacities[name]), dims)
        found = static_tensor_type(type_proto, name)
        if found is None and producer is not None and producer.op_type in SEQUENCE_RESULT_OPS:
            return tensor_value_type(type_proto, name)
        if found is None:
            raise ZantError(f"cannot infer a static shape for '{name}'{where}{self.freeze_hint(name)}")
        return found

    def freeze_hint(self, name: str) -> str:
        """How a user may make `name`'s shape static: declaring it (the output of a data-dependent
        op), freezing the small graph inputs (rank 0 or 1: axes, sizes, a Range's limit ...) it
        is computed from, or declaring it."""
        producer = self.producers.get(name)
        if producer is not None and producer.op_type in DATA_DEPENDENT_SIZE_OPS and producer.domain in DEFAULT_DOMAINS:
            # No input value or --input-shape makes it static: only a declared shape does.
            return ("; its size depends on the data: declare its shape in the model (the code is "
                    "compiled for it and checks the data against it)")
        inputs = {v.name: v for v in _graph_inputs(self.model)}
        seen, todo, found = set(), [name], []
        while todo:
            value = todo.pop()
            if value in seen:
                continue
            seen.add(value)
            if value in inputs:
                shape = inputs[value].type.tensor_type.shape
                if len(shape.dim) <= 1:
                    found.append(value)
            elif value in self.producers:
                todo.extend(v for v in self.producers[value].input if v)
        if not found:
            return "; declare its shape in the model or fix the inputs' with --input-shape"
        names = ", ".join(f"'{v}'" for v in sorted(found))
        example = " ".join(f"--freeze {v}=FILE.npy" for v in sorted(found))
        return f": it depends on the value of {names}; freeze it ({example}) or declare the shape in the model"

    def bind(self, name: str, value: SSAValue) -> None:
        value.name_hint = _sanitize(name)
        self.values[name] = value

    def build(self) -> ModuleOp:
        inputs = _graph_inputs(self.model)
        arg_names, arg_types = [], []
        for value in inputs:
            layout = self.layouts.get(value.name)
            if layout is None:
                arg_names.append(value.name)
                arg_types.append(self.tensor_type(value.name))
                continue
            element = value.type.optional_type.elem_type if layout.optional else value.type
            element = element.sequence_type.elem_type if layout.sequence else element
            for abi_name, shape in zip(layout.names(value.name), layout.shapes, strict=True):
                arg_names.append(abi_name)
                arg_types.append(TensorType(mlir_element_type(element.tensor_type.elem_type, value.name), shape))
        block = self.block = Block(arg_types=arg_types)
        args = iter(block.args)
        for value in inputs:
            layout = self.layouts.get(value.name)
            if layout is None:
                self.bind(value.name, next(args))
                continue
            parts = [next(args) for _ in layout.shapes]
            for abi_name, part in zip(layout.names(value.name), parts):
                part.name_hint = _sanitize(abi_name)
            for op in edge_value_ops(layout, parts, self.tensor_type(value.name)):
                block.add_op(op)
            self.bind(value.name, block.last_op.results[0])
        for initializer in self.graph.initializer:
            block.add_op(self.constant(initializer.name, tensor_array(initializer)))
        for index, node in enumerate(self.graph.node):
            op = self.import_node(node)
            if index in self.bounded_nodes:
                op.attributes[BOUNDED_ATTR] = DenseArrayBase.from_list(i64, self.bounded_nodes[index])
            op.location = node_location(node, index)
            block.add_op(op)
        results = [self.values[v.name] for v in self.graph.output]
        block.add_op(ReturnOp(*results))
        main = FuncOp(
            "main", ([a.type for a in block.args], [r.type for r in results]), Region(block)
        )
        main.attributes[INPUT_NAMES] = ArrayAttr([StringAttr(n) for n in arg_names])
        main.attributes[OUTPUT_NAMES] = ArrayAttr(
            [StringAttr(v.name) for v in self.graph.output]
        )
        main.attributes[GRAPH_NAME] = StringAttr(self.graph.name)
        if self.output_bounds:
            main.attributes[OUTPUT_BOUNDS_ATTR] = DenseArrayBase.from_list(i64, self.output_bounds)
        attributes = {OPSET: IntegerAttr(self.opset, i64)}
        ml_opset = next((o.version for o in self.model.opset_import if o.domain == ML_DOMAIN), None)
        if ml_opset is not None:
            attributes[ML_OPSET] = IntegerAttr(ml_opset, i64)
        return ModuleOp([*self.instances.ops, main], attributes=attributes)

    def build_function(self, symbol: str, function: onnx.FunctionProto) -> FunctionOp:
        """The `onnx.function` @`symbol` of this (instance) model: its graph inputs the block's
        arguments, its nodes the ops, its outputs returned."""
        inputs = list(self.graph.input)
        block = self.block = Block(arg_types=[self.tensor_type(v.name) for v in inputs])
        for value, argument in zip(inputs, block.args, strict=True):
            self.bind(value.name, argument)
        for index, node in enumerate(self.graph.node):
            op = self.import_node(node)
            op.location = node_location(node, index)
            block.add_op(op)
        results = [self.values[v.name] for v in self.graph.output]
        block.add_op(FunctionReturnOp(*results))
        function_type = FunctionType.from_lists(list(block.arg_types), [r.type for r in results])
        return FunctionOp(symbol, function_type, function.domain, function.name, Region(block))

    def import_call(self, node: onnx.NodeProto) -> CallOp:
        """A node calling a model-local function: an `onnx.call` of its instance."""
        weights = {t.name: t for t in self.graph.initializer if t.name not in self.types}
        input_types = [
            self.types[n] if n in self.types
            else helper.make_tensor_type_proto(weights[n].data_type, list(weights[n].dims)) if n in weights
            else None
            for n in node.input
        ]
        for name, type_proto in zip(node.input, input_types):
            if name and type_proto is None:
                raise ZantError(f"{node_label(node)}: no type inferred for its input '{name}'")
        callee = self.instances.callee(node, input_types)
        call = CallOp(callee.sym_name.data, [self.values[n] for n in node.input if n], callee.function_type.outputs.data)
        if node.name:
            call.attributes[NODE_NAME] = StringAttr(node.name)
        for name, result in zip(node.output, call.res):
            if name:
                self.bind(name, result)
        return call

    def constant(self, name: str, array: np.ndarray):
        if array.dtype == object:  # strings: NUL-padded fields (zant.ir.strings)
            op = string_constant_op(array, self.string_capacities[name], name)
            self.bind(name, op.results[0])
            return op
        op = constant_op(array, self.tensor_type(name) if name in self.types else array_type(array, name), name)
        self.bind(name, op.results[0])
        return op

    def import_node(self, node: onnx.NodeProto):
        if calls_local_function(node, self.instances.functions):
            return self.import_call(node)
        if node.op_type == "Constant":
            return self.import_constant(node)
        op_inputs: list[SSAValue | None] = [self.values[n] if n else None for n in node.input]
        if is_contrib_op(node):
            op_inputs = self.with_zero_points(node, op_inputs)
        if node.domain == TRAINING_DOMAIN and node.op_type == "Gradient":
            op_inputs.append(self.gradient_target(node))
        result_types = [self.tensor_type(n) if n else None for n in node.output]
        op = op_of_node(node, op_inputs, result_types)
        for name, result in zip([n for n in node.output if n], op.results, strict=True):
            self.bind(name, result)
        return op

    def gradient_target(self, node: onnx.NodeProto) -> SSAValue:
        """The value a Gradient node's `y` names, given to its op as a last operand
        (`expand-gradients` differentiates it)."""
        target = next((a.s.decode() for a in node.attribute if a.name == "y"), "")
        if target not in self.values:
            raise ZantError(f"{node_label(node)}: its y '{target}' is not computed before it (Gradient must follow the "
                            "nodes that compute y)")
        return self.values[target]

    def with_zero_points(self, node: onnx.NodeProto, op_inputs: list[SSAValue | None]) -> list[SSAValue | None]:
        """A com.microsoft node's inputs, each zero point it leaves out a constant 0 (added to
        the block) of the element type of the tensor it belongs to."""
        for index, like in absent_zero_points(node):
            element = op_inputs[like].type.get_element_type()
            array = np.zeros((), numpy_dtype(element))
            zero = ConstantOp.from_onnx([], [TensorType(element, [])], {"value": make_constant_attr(array, "zero_point")})
            zero.results[0].name_hint = _sanitize(f"{node.name or node.output[0]}_zero_point")
            self.block.add_op(zero)
            op_inputs = [*op_inputs, *[None] * (index + 1 - len(op_inputs))]
            op_inputs[index] = zero.results[0]
        return op_inputs

    def import_constant(self, node: onnx.NodeProto):
        op = self.constant(node.output[0], constant_node_array(node))
        if node.name:
            op.attributes[NODE_NAME] = StringAttr(node.name)
        return op
