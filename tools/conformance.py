"""`zant conformance`: run the ONNX backend node-test suite through the whole compiler.

    zant conformance [--filter REGEX | --slice [REPORT]] [--as-written] [--target T] [--pipeline PIPELINE] [--jobs N]
                     [--batch-size N]
                     [--output-json PATH] [--output-md PATH] [--beside REPORT ...]
    zant conformance --target T --firmware [--board B] [-O MODE] ...
    zant conformance --render REPORT --output-md PATH [--beside REPORT ...] [--note TEXT]
    zant conformance --models [any of the options above]
    python -m zant.tools.conformance ...   (the same, standalone)

`--models` runs the model suites onnx ships with their data instead of the node suite
(`load_model_cases`: onnx/backend/test/data/{simple, pytorch-converted, pytorch-operator} and
the `light` models, fed as onnx's backend test runner feeds them), each case named
`suite/test_name` and labelled by its suite where a node case names its operator; the rest (the
classification, batches, columns, reports, `--render` and `--beside`) is the same. A model's
graph input with an initializer (IR >= 4: a default) that the data sets leave out takes its
default (`defaulted_inputs`).

Every case of `onnx.backend.test.case.node.collect_testcases()` is first classified:

* out of scope: non-tensor values (map), training-mode Dropout without a seed, images of a format
  ImageDecoder does not decode (none of the suite's since WebP decodes: `UNDECODED_IMAGES`)
  (string tensors are compiled: `zant.ir.strings`, each case with the `--string-capacity` of its
  longest input string, `_string_capacity`);
* unsupported: an operator with no lowering (`supported_ops()`; ai.onnx.ml operators count
  like default-domain ones, named `ai.onnx.ml.Op`), another operator domain, or a control-flow
  op with subgraphs;
* otherwise compiled: `import_model_bytes` → `run_pipeline(PIPELINE)` → `emit_artifacts`
  with the name `cNNNN` (the case's index). Python-side failures are compile errors. PIPELINE is
  the driver's `default_pipeline(TARGET)` (`--target`, default host: `DEFAULT_PIPELINE`; a
  microcontroller: `MCU_PIPELINE`) unless `--pipeline` names another (the reports record both).
  Without `--firmware`, the generated Zig is built and run on the host whatever the target: it
  is the same source a firmware build compiles.

Inputs that real models carry as constants (shapes, axes, pads, k, Clip bounds, Resize scales ...,
see `PARAMETER_INPUTS`) are frozen into initializers with the case's values when every data set
agrees on them; the record lists them (`frozen`). With `--as-written` nothing is frozen: every graph
input stays a run-time input, as the file is written and as `zant compile` takes it. The reports
record the mode (`"mode": "as-written"` or `"frozen"`).

The generated files are built in batches (`--batch-size`, 100) into one ReleaseSafe shared
library per batch, from a generated root file that imports each case file; a failing build is
bisected to the broken case(s) ("compile error: zig: ...") and the rest rebuilt. Each batch then
runs in a child process (`zant.tools.batch`, shared with the random-graph tests): ReleaseSafe code
traps on out-of-bounds or overflow and kills its process; when the child dies, the batch's
remaining cases run one per process to pinpoint the trapping ones ("trap"). Outputs are compared
with the case's rtol/atol (`np.testing.assert_allclose`, NaN equals NaN), exactly for integers
and booleans.

A case with a random op (Bernoulli, Random*) whose expected data is not what ONNX's reference
draws from the model's seed (no seed: any draw is right; or data drawn from NumPy's global
generator) is "checked", a status of its own: compiled with the model's seed (seed 0 added where
there is none, as `zant compile` refuses an unseeded random op), its outputs must equal
`onnx.reference`'s for that seed exactly, and the case's data must have the same shapes, types
and value range (`random_reference`). `--jobs` workers (default 2) each compile, build and run whole batches.

With `--firmware` (an MCU target; the cases default to the target's representative slice), each
batch is linked instead into one firmware image (`zant.backend.firmware.write_image`, every case a
model of it) for the target's board, in `-O` mode (ReleaseFast), and run under QEMU: each case on
its first data set, its outputs compared in the same way. A panic or fault in a case is a trap;
the cases it kept from running go into a new image.

`--beside REPORT` (repeatable) shows other runs' JSON reports next to this one in the Markdown
(docs/onnx-conformance.md: the host pipeline's, beside the host's as written and the MCU pipeline's
built for the host and as firmware). `--render REPORT` writes the Markdown of a saved JSON report
(with `--beside` runs) without running anything.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import re
import shutil
import sys
import tempfile
import textwrap
import time
import warnings
from dataclasses import asdict, dataclass, field
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from zant.tools.batch import (
    Builder,
    Compiled,
    build_batch,
    compare_outputs,
    compile_zig,
    describe_error,
    one_line,
    run_batch,
)
from zant.progress import Estimate
from zant.signature import caller_outputs

if TYPE_CHECKING:
    from zant.backend.boards import Board


# -- classification -------------------------------------------------------------------------

DATA_DEPENDENT_OPS: frozenset[str] = frozenset()
"""Ops whose output size depends on the data and that do not compile yet (NonZero, Compress,
NonMaxSuppression, StringSplit and StringNormalizer compile for the size the model declares; Unique also at its bound when the
model leaves the size symbolic; ImageDecoder for the declared shape when its images are of a
format it decodes, `DECODED_IMAGES`)."""
DECODED_IMAGES = (b"BM", b"P6", b"\xff\xd8", b"\x89PNG", b"II*\x00", b"MM\x00*", b"\x00\x00\x00\x0cjP", b"\xffO\xffQ", b"RIFF")
"""How the images ImageDecoder decodes begin (24-bit BMP, binary PPM, baseline JPEG, PNG,
uncompressed TIFF, JPEG 2000 as JP2 or J2K, lossy WebP; a compressed TIFF, a JPEG 2000 of several
quality layers or a lossless or animated WebP is refused at run time), compiled for the shape the
model declares; the other formats' cases are out of scope (`UNDECODED_IMAGES`)."""
UNDECODED_IMAGES: dict[bytes, str] = {}
"""The image formats ImageDecoder does not decode, by how they begin, with the reason."""
SUBGRAPH_OPS = frozenset({"If", "Loop", "Scan"})

PARAMETER_INPUTS: dict[str, tuple[int, ...]] = {
    "Reshape": (1,), "Expand": (1,), "Tile": (1,), "Slice": (1, 2, 3, 4), "Pad": (1, 2, 3),
    "Squeeze": (1,), "Unsqueeze": (1,), "Resize": (1, 2, 3), "Upsample": (1,), "TopK": (1,),
    "ConstantOfShape": (0,), "Range": (0, 1, 2), "OneHot": (1,), "Split": (1,),
    "ReduceSum": (1,), "ReduceMean": (1,), "ReduceMax": (1,), "ReduceMin": (1,), "ReduceProd": (1,),
    "ReduceL1": (1,), "ReduceL2": (1,), "ReduceLogSum": (1,), "ReduceLogSumExp": (1,),
    "ReduceSumSquare": (1,), "CenterCropPad": (1,), "Trilu": (1,), "CumSum": (1,), "CumProd": (1,), "Clip": (1, 2),
    "Dropout": (1, 2), "MaxUnpool": (2,), "Col2Im": (1, 2), "DFT": (1, 2), "STFT": (1, 3),
    "BlackmanWindow": (0,), "HammingWindow": (0,), "HannWindow": (0,), "MelWeightMatrix": (0, 1, 2, 3, 4),
    "Loop": (0, 1), "AffineGrid": (1,), "NonMaxSuppression": (2, 3, 4),
    "SequenceInsert": (2,), "SequenceErase": (1,), "SequenceAt": (1,), "SplitToSequence": (1,),
}
"""Op → indices of inputs that models normally hold as constants (frozen when the data agree)."""

STATUSES = ("pass", "checked", "mismatch", "trap", "compile_error", "unsupported", "out_of_scope")

RANDOM_OPS = frozenset({"Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial"})
RUNNER_SEED = 0.0
"""The seed the runner gives a random op without one (the compiler refuses it: no generator)."""

_ALIGN_CORNERS_DATA = (
    "the case's expected output is onnx's reference Resize, which divides align_corners by "
    "in·scale - 1 (a fractional 1.2 - 1, 2.4 - 1 ... here); the definition's length_resized is the "
    "output's extent (1 - 1, 2 - 1 ...), as Zant and onnxruntime have it (onnxruntime mismatches "
    "this case the same way)"
)
MISMATCH_CAUSES = {
    "test_resize_downsample_scales_linear_align_corners": _ALIGN_CORNERS_DATA,
    "test_resize_downsample_scales_cubic_align_corners": _ALIGN_CORNERS_DATA,
}
"""Why a case still mismatches, where it was investigated: listed beside it in the report (the
status stays a mismatch)."""


@dataclass
class Record:
    index: int
    name: str
    op: str
    status: str = ""
    reason: str = ""
    numeric: bool = True
    ops: list[str] = field(default_factory=list)
    missing_ops: list[str] = field(default_factory=list)
    frozen: list[str] = field(default_factory=list)
    max_abs_error: float | None = None
    max_ulp: float | None = None
    rtol: float = 0.0
    atol: float = 0.0
    scratch_bytes: int | None = None
    lower_bound_bytes: int | None = None
    checked: str = ""
    """A random case's check (`random_reference`): a pass is then "checked", with this reason."""


def case_name(index: int) -> str:
    return f"c{index:04d}"


def _value_kind(value) -> str:
    return value.type.WhichOneof("value") or "none"


def _all_nodes(graph):
    for node in graph.node:
        yield node
        for attribute in node.attribute:
            if attribute.type == attribute.GRAPH:
                yield from _all_nodes(attribute.g)
            for g in attribute.graphs:
                yield from _all_nodes(g)


_SCHEMA_NAMES: dict[str, str] | None = None
_NAME_ALIASES = {
    "sce": "SoftmaxCrossEntropyLoss",
    "nllloss": "NegativeLogLikelihoodLoss",
    "mvn": "MeanVarianceNormalization",
    "batchnorm": "BatchNormalization",
}


def operator_label(case) -> str:
    """The operator a case tests: its single node, else the schema its name starts with."""
    global _SCHEMA_NAMES
    nodes = list(case.model.graph.node)
    if len(nodes) == 1:
        return nodes[0].op_type
    if _SCHEMA_NAMES is None:
        import onnx.defs

        _SCHEMA_NAMES = {s.name.lower(): s.name for s in onnx.defs.get_all_schemas_with_history()}
        _SCHEMA_NAMES.update(_NAME_ALIASES)
    tokens = case.name.removeprefix("test_").split("_")
    best = None
    for i in range(1, len(tokens) + 1):
        joined = "".join(tokens[:i]).lower()
        if joined in _SCHEMA_NAMES:
            best = _SCHEMA_NAMES[joined]
    if best is None and nodes:
        counts = collections.Counter(n.op_type for n in nodes)
        best = counts.most_common(1)[0][0]
    return best or "?"


NUMERIC_TYPES = frozenset(
    {"FLOAT", "FLOAT16", "DOUBLE", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "BOOL"}
)
"""The element types the compiler targets; cases on other types (float8, int4, bfloat16 …) still run."""


def _element_type(type_proto) -> int:
    """The element type of a tensor type, or of the tensors a sequence or optional holds."""
    kind = type_proto.WhichOneof("value")
    if kind == "sequence_type":
        return _element_type(type_proto.sequence_type.elem_type)
    if kind == "optional_type":
        return _element_type(type_proto.optional_type.elem_type)
    return type_proto.tensor_type.elem_type if kind == "tensor_type" else 0


def _is_numeric(case) -> bool:
    from onnx import TensorProto

    for value in [*case.model.graph.input, *case.model.graph.output]:
        if _value_kind(value) != "tensor_type":
            return False
        if TensorProto.DataType.Name(value.type.tensor_type.elem_type) not in NUMERIC_TYPES:
            return False
    return True


def _expandable(op_type: str, domain: str = "", model=None) -> bool:
    """The importer replaces an op without a lowering by its schema's function body, if it has one."""
    from onnx import defs

    from zant.frontend.expand import domain_version, has_function_body

    opset = defs.onnx_opset_version()
    version = domain_version(model, domain, opset) if model is not None else opset
    return has_function_body(op_type, version, domain)


def _undecoded_image(case) -> str | None:
    """Why ImageDecoder does not decode an input of a data set (its format, `UNDECODED_IMAGES`),
    or None when every input is of a format of `DECODED_IMAGES`."""
    names = [v.name for v in case.model.graph.input]
    encoded = {n.input[0] for n in _all_nodes(case.model.graph) if n.op_type == "ImageDecoder"}
    for inputs, _ in case.data_sets:
        for name in encoded & set(names):
            head = bytes(np.asarray(inputs[names.index(name)]).ravel()[:8])
            if not head.startswith(DECODED_IMAGES):
                return next((why for magic, why in UNDECODED_IMAGES.items() if head.startswith(magic)), "an unknown format")
    return None


def classify(case, index: int, supported: frozenset[str]) -> Record:
    """A `Record` with status "out_of_scope" or "unsupported" (and its reason), or status ""."""
    from zant.dialects.onnx import LOWERED_DOMAINS, op_name
    from zant.frontend.expand import DEFAULT_DOMAINS
    from zant.passes.expand_gradients import DIFFERENTIATED_OPS
    from zant.passes.resolve_sequences import RESOLVED_OPS

    graph = case.model.graph
    nodes = list(_all_nodes(graph))
    record = Record(
        index=index,
        name=case.name,
        op=operator_label(case),
        ops=sorted({n.op_type for n in nodes}),
        numeric=_is_numeric(case),
        rtol=float(case.rtol),
        atol=float(case.atol),
    )

    def out(reason: str) -> Record:
        record.status, record.reason = "out_of_scope", reason
        return record

    for value in [*graph.input, *graph.output]:
        kind = _value_kind(value)
        if kind not in ("tensor_type", "sequence_type", "optional_type"):
            return out(f"non-tensor type ({kind.removesuffix('_type')})")
    types = {n.op_type for n in nodes}
    if "ImageDecoder" in types and (why := _undecoded_image(case)) is not None:
        return out(f"image format (ImageDecoder decodes BMP, PPM, baseline JPEG, PNG and uncompressed TIFF): {why}")
    if types & DATA_DEPENDENT_OPS:
        return out(f"data-dependent output shape ({', '.join(sorted(types & DATA_DEPENDENT_OPS))})")
    for node in nodes:
        # A seed makes training mode reproducible (compiled: the reference's NumPy stream).
        if (
            node.op_type == "Dropout" and len(node.input) >= 3 and node.input[2] and "zero_ratio" not in case.name
            and not any(a.name == "seed" for a in node.attribute)
        ):
            return out("random op (Dropout in training mode without a seed)")

    # ai.onnx.ml and training ops are the compiler's to refuse (no lowering) like default-domain ones.
    # A call of a model-local function is the importer's (an onnx.call of its body).
    local = {(f.domain, f.name) for f in case.model.functions}
    foreign = sorted({f"{n.domain}.{n.op_type}" for n in nodes
                      if n.domain not in (*DEFAULT_DOMAINS, *LOWERED_DOMAINS) and (n.domain, n.op_type) not in local
                      and not _expandable(n.op_type, n.domain, case.model)})
    if foreign:
        record.status, record.missing_ops = "unsupported", foreign
        record.reason = f"operator domain not supported: {', '.join(foreign)}"
        return record
    # Control flow and function bodies are decided by the importer (unrolled, expanded, or a
    # compile error that `compile_case` turns into "unsupported").
    missing = sorted({
        n.op_type if n.domain in DEFAULT_DOMAINS else f"{n.domain}.{n.op_type}" for n in nodes
        if op_name(n.op_type, n.domain) not in supported and n.op_type not in SUBGRAPH_OPS
        and not (n.domain in DEFAULT_DOMAINS and n.op_type in RESOLVED_OPS)
        and not (n.domain == "ai.onnx.preview.training" and n.op_type in DIFFERENTIATED_OPS)
        and not _expandable(n.op_type, n.domain, case.model) and (n.domain, n.op_type) not in local
    })
    if missing:
        record.status, record.missing_ops = "unsupported", missing
        record.reason = f"no lowering for {', '.join(missing)}"
    return record


SCALAR_ARITHMETIC_OPS = frozenset(
    {"Cast", "CastLike", "Add", "Sub", "Mul", "Div", "Ceil", "Floor", "Neg", "Abs", "Max", "Min",
     "Identity", "Reshape", "Unsqueeze", "Squeeze", "Concat", "Gather", "Mod", "Relu", "Split", "Slice"}
)
"""Ops through which a parameter is computed from a graph input (expanded function bodies do this)."""


def _parameter_sources(graph, inputs: set[str]) -> set[str]:
    """Graph inputs that feed a parameter slot, directly or through scalar arithmetic only (in
    subgraphs too: an expanded body may compute a shape inside an If branch)."""
    nodes = list(_all_nodes(graph))
    producers = {out: node for node in nodes for out in node.output}
    sources: set[str] = set()
    pending = [
        node.input[slot]
        for node in nodes
        for slot in PARAMETER_INPUTS.get(node.op_type, ())
        if slot < len(node.input) and node.input[slot]
    ]
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in inputs:
            sources.add(name)
        elif name in producers and producers[name].op_type in SCALAR_ARITHMETIC_OPS:
            pending.extend(n for n in producers[name].input if n)
        elif name in producers and producers[name].op_type == "If":  # either branch's value
            pending.extend(o.name for a in producers[name].attribute if a.type == a.GRAPH for o in a.g.output)
    return sources


def defaulted_inputs(model, data_sets, freeze: bool) -> tuple[object, list[tuple[list, list]], list[str]]:
    """The model and data sets with its inputs that have defaults settled. From IR version 4 a
    graph input that also has an initializer is a run-time input whose initializer is only a
    default (onnxruntime's reading, and the importer's); a data set gives the inputs in
    graph-input order (as onnx's backend test runner reads them) and leaves the defaulted ones
    at its end out to mean "the default". Those are frozen to their initializer (`freeze`: the
    model lists them no more; returned as frozen) or passed their default at run time (as
    written); an input a data set gives is a plain run-time input (its initializer dropped)."""
    import onnx
    from onnx import numpy_helper

    initializers = {i.name: i for i in model.graph.initializer}
    names = [v.name for v in model.graph.input]
    if model.ir_version < 4 or not initializers.keys() & set(names) or not data_sets:
        return model, data_sets, []
    given = min(len(ins) for ins, _ in data_sets)
    left = [n for n in names[given:] if n in initializers]
    if len(left) != len(names) - given:
        return model, data_sets, []  # a data set leaves out an input without a default: as it is
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    graph = copy.graph
    keep = [t for t in graph.initializer if t.name not in names[:given]]
    del graph.initializer[:]
    graph.initializer.extend(keep)
    if freeze:
        inputs = [v for v in graph.input if v.name not in left]
        del graph.input[:]
        graph.input.extend(inputs)
        return copy, [(ins[:given], outs) for ins, outs in data_sets], left
    defaults = [numpy_helper.to_array(initializers[n]) for n in left]
    return model, [(ins[:given] + defaults, outs) for ins, outs in data_sets], []


def freeze_parameters(case) -> tuple[object, list[tuple[list, list]], list[str]]:
    """A copy of the model whose parameter inputs (see PARAMETER_INPUTS) are initializers, and
    whose defaulted inputs the data sets leave out are frozen to their default
    (`defaulted_inputs`)."""
    import onnx
    from onnx import numpy_helper

    # Some cases store their data as TensorProto (e.g. float casts): use numpy throughout.
    as_array = lambda x: numpy_helper.to_array(x) if isinstance(x, onnx.TensorProto) else x  # noqa: E731
    data_sets = [([as_array(x) for x in ins], [as_array(y) for y in outs]) for ins, outs in case.data_sets]
    source, data_sets, defaulted = defaulted_inputs(case.model, data_sets, freeze=True)
    model = onnx.ModelProto()
    model.CopyFrom(source)
    graph = model.graph
    initializers = {i.name for i in graph.initializer}
    inputs = [v.name for v in graph.input if v.name not in initializers]
    candidates = _parameter_sources(graph, set(inputs))
    frozen = []
    for name in inputs:
        if name not in candidates:
            continue
        position = inputs.index(name)
        values = [np.asarray(ins[position]) for ins, _ in data_sets if position < len(ins)]
        if len(values) != len(data_sets) or not values:
            continue
        if any(v.shape != values[0].shape or not np.array_equal(v, values[0]) for v in values[1:]):
            continue
        graph.initializer.append(numpy_helper.from_array(values[0], name))
        frozen.append(name)
    if frozen:
        keep = [v for v in graph.input if v.name not in frozen]
        del graph.input[:]
        graph.input.extend(keep)
        positions = [i for i, n in enumerate(inputs) if n in frozen]
        data_sets = [([x for i, x in enumerate(ins) if i not in positions], outs) for ins, outs in data_sets]
    return model, data_sets, defaulted + frozen


# -- compiling ------------------------------------------------------------------------------


def _unknown_input_shapes(model, data_sets) -> dict[str, list[int]]:
    """Shapes for the graph inputs a case declares without static dimensions, taken from its
    first data set (what `--input-shape` does for a user)."""
    initializers = {i.name for i in model.graph.initializer}
    graph_inputs = [v for v in model.graph.input if v.name not in initializers]
    shapes = {}
    if not data_sets:
        return shapes
    for value, array in zip(graph_inputs, data_sets[0][0]):
        if _value_kind(value) != "tensor_type":  # a sequence's or optional's layout (zant.frontend.sequences)
            shapes[value.name] = _edge_shapes(array)
            continue
        dims = value.type.tensor_type.shape.dim
        if not value.type.tensor_type.HasField("shape") or any(not d.HasField("dim_value") for d in dims):
            shapes[value.name] = list(np.asarray(array).shape)
    return shapes


def _string_capacity(data_sets) -> int:
    """`--string-capacity` for a case: the bytes of the longest string its data sets give a
    string input (at least 1), so its fields are exactly full (docs/strings.md)."""
    lengths = [
        len(v if isinstance(v, bytes) else str(v).encode("utf-8"))
        for inputs, _ in data_sets
        for array in inputs
        if isinstance(array, np.ndarray) and array.dtype.kind in "OUS"
        for v in array.reshape(-1)
    ]
    return max([1, *lengths])


def _sequence_capacity(data_sets) -> int:
    """`--sequence-capacity` for a case: the length of the longest sequence its data sets hold
    (inputs or outputs, at least 1), which bounds the iterations of a Loop that builds one
    element per iteration (docs/sequences.md)."""
    lengths = [len(v) for ins, outs in data_sets for v in [*ins, *outs] if isinstance(v, list)]
    return max([1, *lengths])


def _edge_shapes(data):
    """`--input-shape`'s value for a sequence or optional input holding `data`: a list of shapes
    for a list, None for an empty optional, a shape for a tensor."""
    if data is None:
        return None
    if isinstance(data, list):
        return [list(np.asarray(a).shape) for a in data]
    return list(np.asarray(data).shape)


def flat_values(values: list) -> list:
    """A data set's inputs or outputs as the C ABI takes them: a sequence its tensors, an empty
    optional nothing."""
    flat = []
    for value in values:
        if isinstance(value, list):
            flat += [np.asarray(v) for v in value]
        elif value is not None:
            flat.append(value)
    return flat


def as_written(case) -> tuple[object, list[tuple[list, list]], list[str]]:
    """The case's model and data sets as the file has them: every graph input a run-time input
    (one with a default the data sets leave out is passed its default, `defaulted_inputs`)."""
    import onnx
    from onnx import numpy_helper

    as_array = lambda x: numpy_helper.to_array(x) if isinstance(x, onnx.TensorProto) else x  # noqa: E731
    data_sets = [([as_array(x) for x in ins], [as_array(y) for y in outs]) for ins, outs in case.data_sets]
    return defaulted_inputs(case.model, data_sets, freeze=False)


def _undrawable(node, values: np.ndarray) -> np.ndarray:
    """The elements of `values` random `node`'s output cannot hold: Bernoulli draws 0 or 1, a
    uniform draw lies in [low, high], a normal draw may be anything."""
    import onnx

    attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    values = np.asarray(values, np.float64).reshape(-1)
    if node.op_type == "Bernoulli":
        return values[(values != 0) & (values != 1)]
    if node.op_type.startswith("RandomUniform"):
        return values[(values < attributes.get("low", 0.0)) | (values > attributes.get("high", 1.0))]
    return values[:0]


def random_reference(model, data_sets) -> tuple[object, list[tuple[list, list]], str]:
    """A random case (a node of `RANDOM_OPS`) whose expected data is not ONNX's reference for the
    model's seed: the model with `RUNNER_SEED` given to each random node without a seed, and
    data sets whose expected outputs are `onnx.reference`'s for that model; the check made, for
    `Record.checked` (empty when the case's data already is the reference's: a plain case).

    The case's own outputs are checked against the reference's by shape and element type, and
    where a random node's output is a graph output, by the values it can take (Bernoulli 0 or 1,
    a uniform draw within [low, high]: `_undrawable`)."""
    import onnx
    from onnx.reference import ReferenceEvaluator

    random_nodes = [n for n in _all_nodes(model.graph) if n.op_type in RANDOM_OPS and n.domain in ("", "ai.onnx")]
    if not random_nodes:
        return model, data_sets, ""
    seeded = onnx.ModelProto()
    seeded.CopyFrom(model)
    added = 0
    for node in _all_nodes(seeded.graph):
        if node.op_type in RANDOM_OPS and node.domain in ("", "ai.onnx"):
            if not any(a.name == "seed" for a in node.attribute):
                node.attribute.append(onnx.helper.make_attribute("seed", RUNNER_SEED))
                added += 1
    initializers = {i.name for i in seeded.graph.initializer}
    names = [v.name for v in seeded.graph.input if v.name not in initializers]
    evaluator = ReferenceEvaluator(seeded)
    output_names = [v.name for v in seeded.graph.output]
    producers = {out: n for n in random_nodes for out in n.output}
    reference_sets, same = [], True
    for ins, outs in data_sets:
        want = evaluator.run(None, dict(zip(names, ins)))
        for name, expected, drawn in zip(output_names, outs, want):
            expected, drawn = np.asarray(expected), np.asarray(drawn)
            if expected.shape != drawn.shape or expected.dtype != drawn.dtype:
                raise ValueError(
                    f"the case's data ({expected.dtype}{list(expected.shape)}) and onnx.reference's draws "
                    f"({drawn.dtype}{list(drawn.shape)}) differ in shape or type"
                )
            outside = _undrawable(producers[name], expected) if name in producers else []
            if len(outside):
                raise ValueError(f"the case's data hold {outside[0]} for '{name}', which {producers[name].op_type} cannot draw")
            same = same and np.array_equal(expected, drawn, equal_nan=True)
        reference_sets.append((ins, want))
    if same and not added:
        return model, data_sets, ""
    ops = ", ".join(sorted({n.op_type for n in random_nodes}))
    if added:
        why = f"no seed in the model: seed {RUNNER_SEED:g} added by the runner, any draw is right"
    else:
        why = "the case's expected data are not the seed's draws (NumPy's global generator drew them)"
    check = (
        f"random op ({ops}): checked by shape, type and drawable values against the case's data, and "
        f"equal to onnx.reference's draws for the seed ({why})"
    )
    return seeded, reference_sets, check


MODES = ("frozen", "as-written")
"""`frozen`: parameter inputs become initializers (`freeze_parameters`); `as-written`: none do."""


def compile_case(
    case, index: int, out_dir: Path, record: Record, pipeline: str | None = None, mode: str = "frozen"
) -> Compiled | None:
    """Frontend, passes (`pipeline`, default the host's) and emission of one case into
    `out_dir/cNNNN.zig`, its parameter inputs frozen or not (`mode`, see MODES); None on an error."""
    name = case_name(index)
    try:
        model, data_sets, frozen = freeze_parameters(case) if mode == "frozen" else as_written(case)
        record.frozen = frozen
        model, data_sets, record.checked = random_reference(model, data_sets)
        compiled, plan = compile_zig(
            model, name, out_dir, pipeline=pipeline, input_shapes=_unknown_input_shapes(model, data_sets),
            string_capacity=_string_capacity(data_sets), sequence_capacity=_sequence_capacity(data_sets),
        )
        record.scratch_bytes = next(a["size"] for a in plan["arenas"] if a["role"] == "scratch")
        record.lower_bound_bytes = plan["aligned_lower_bound_bytes"]
    except Exception as error:  # ZantError or a compiler bug: both are compile errors here
        missing = unsupported_ops(error)
        if missing:
            record.status, record.missing_ops = "unsupported", missing
            record.reason = f"no lowering for {', '.join(missing)} (after expansion)"
        else:
            record.status = "compile_error"
            record.reason = "compile error: " + one_line(describe_error(error))
        return None
    compiled.data_sets = [(flat_values(ins), flat_values(outs)) for ins, outs in data_sets]
    return compiled


def localize_case(case, index: int, pipeline: str, mode: str, rtol: float, atol: float) -> str:
    """`--localize`: which pass of `pipeline` changes a mismatched case's result on its first
    data set, by `zant.interpreter`'s checker (the onnx-level module by the ONNX reference op by
    op, each later module against the one before); or that the first interpreted module already
    differs from the expected outputs, or that every pass agrees (the Zig side differs)."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import make_context
    from zant.frontend.onnx_importer import import_model_bytes
    from zant.interpreter import PassChangedResult, PassChecker, first_difference
    from zant.plugins import all_passes

    try:
        model, data_sets, _ = freeze_parameters(case) if mode == "frozen" else as_written(case)
        inputs, expected = (flat_values(values) for values in data_sets[0])
        module = import_model_bytes(model.SerializeToString(), ".", _unknown_input_shapes(model, data_sets))
        checker = PassChecker(module, inputs=[np.asarray(x).reshape(-1) for x in inputs])
        ctx, compared = make_context(), False
        for p in [None, *PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, pipeline).passes]:
            if p is not None:
                p.apply(ctx, module)
                checker.after(p.name)
            outputs = checker.outputs()
            if not compared and outputs is not None:  # the first interpreted module: against the data
                compared = True
                want = [np.asarray(y).reshape(-1).astype(o.dtype) for y, o in zip(expected, outputs)]
                if first_difference(want, outputs, max(rtol, 1e-6), max(atol, 1e-6)) is not None:
                    stage = "input module" if p is None else f"module after '{p.name}'"
                    return f"the {stage} (the first interpreted) already differs from the expected outputs"
        if not compared:
            return "not localized: no module of the pipeline could be interpreted"
    except PassChangedResult as error:
        return str(error)
    except Exception as error:  # noqa: BLE001 - a localization that fails says why
        return f"not localized: {one_line(describe_error(error), 200)}"
    return "the interpreter agrees with the expected outputs after every pass: the Zig printer or build differs"


def unsupported_ops(error: BaseException) -> list[str]:
    """The operators a compile error names as having no lowering (`UnsupportedOpsError.ops`),
    each once: `Conv` for the default domain, `ai.onnx.ml.SVMClassifier` for another."""
    from zant.errors import UnsupportedOpsError

    if not isinstance(error, UnsupportedOpsError):
        return []
    return sorted({op.qualified for op in error.ops})


# -- the driver -----------------------------------------------------------------------------

SUITES = ("node", "models")
"""`node`: `collect_testcases()`; `models` (`--models`): the model suites onnx ships with data."""
MODEL_SUITES = ("simple", "pytorch-converted", "pytorch-operator", "light")
"""The suites of `onnx/backend/test/data` whose cases carry their data (`light`'s models sit
in `light/` and are listed by `real/*/data.json`, which also gives their tolerances)."""
_LIGHT_PREFIX = "onnx/backend/test/data/light/"
SOLO_SUITES = ("light",)
"""Suites whose cases are each built alone (a batch of one): the `light` models' weights are
tens to hundreds of MB (vgg19: 548 MB of f32), and one library of several would not fit a
build's memory."""

_CASES: dict[str, list] = {}


def load_cases(suite: str = "node") -> list:
    """The cases of a suite (see SUITES), loaded once per process, in a fixed order (the
    records' indices)."""
    if suite not in _CASES:
        if suite == "node":
            from onnx.backend.test.case.node import collect_testcases

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _CASES[suite] = list(collect_testcases())
        elif suite == "models":
            _CASES[suite] = load_model_cases()
        else:
            from zant.errors import ZantError

            raise ZantError(f"unknown conformance suite '{suite}' (choose from {', '.join(SUITES)})")
    return _CASES[suite]


@dataclass
class ModelCase:
    """A case of the model suites: the fields of onnx's `TestCase` the runner reads, and its
    suite (which labels it in the reports, as an operator labels a node case)."""

    name: str
    suite: str
    model: object
    data_sets: list
    rtol: float
    atol: float


def _read_value(path: Path, type_proto):
    """A data file as onnx's backend test runner reads it: a tensor, a sequence (a list of
    arrays) or an optional (None when empty), by the type of the graph value it feeds."""
    import onnx
    from onnx import numpy_helper

    kind = type_proto.WhichOneof("value")
    payload = path.read_bytes()
    if kind == "sequence_type":
        sequence = onnx.SequenceProto()
        sequence.ParseFromString(payload)
        return numpy_helper.to_list(sequence)
    if kind == "optional_type":
        optional = onnx.OptionalProto()
        optional.ParseFromString(payload)
        return numpy_helper.to_optional(optional)
    tensor = onnx.TensorProto()
    tensor.ParseFromString(payload)
    return numpy_helper.to_array(tensor)


def _light_inputs(model) -> list[np.ndarray]:
    """What onnx's runner feeds a `light` model (`generate_dummy_data(random=False)`): each
    float graph input filled with arange(n) / n, unknown dimensions taken as 1."""
    initializers = {i.name for i in model.graph.initializer}
    inputs = []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in value.type.tensor_type.shape.dim)
        n = int(np.prod(shape))
        inputs.append((np.arange(n).reshape(shape) / n).astype(np.float32))
    return inputs


def load_model_cases() -> list[ModelCase]:
    """The model suites' cases (MODEL_SUITES), read as onnx's backend test runner reads them
    (`onnx.backend.test.loader.load_model_tests`, `runner._add_model_test`): a model.onnx with
    test_data_set_*/input_*.pb and output_*.pb; a `light` model with the inputs the runner
    generates (`_light_inputs`) and the output .pb beside it. Named `suite/test_name`."""
    import onnx
    from onnx.backend.test.loader import DATA_DIR, load_model_tests

    cases = []
    for suite in MODEL_SUITES:
        tests = load_model_tests(kind="real" if suite == "light" else suite)
        for test in sorted(tests, key=lambda t: t.name):
            if suite == "light":
                if not (test.url or "").startswith(_LIGHT_PREFIX):
                    continue
                path = Path(DATA_DIR).parent.parent.parent.parent / test.url
                model = onnx.load(str(path))
                outputs = [
                    _read_value(path.with_name(f"{path.stem}_output_{i}.pb"), value.type)
                    for i, value in enumerate(model.graph.output)
                ]
                data_sets = [(_light_inputs(model), outputs)]
            else:
                directory = Path(test.model_dir)
                model = onnx.load(str(directory / "model.onnx"))
                data_sets = []
                for data_dir in sorted(directory.glob("test_data_set_*")):
                    count = lambda kind: len(list(data_dir.glob(f"{kind}_*.pb")))  # noqa: E731
                    inputs = [_read_value(data_dir / f"input_{i}.pb", model.graph.input[i].type) for i in range(count("input"))]
                    outputs = [
                        _read_value(data_dir / f"output_{i}.pb", model.graph.output[i].type) for i in range(count("output"))
                    ]
                    data_sets.append((inputs, outputs))
            cases.append(ModelCase(f"{suite}/{test.name}", suite, model, data_sets, float(test.rtol), float(test.atol)))
    return cases


@dataclass(frozen=True)
class Firmware:
    """`--firmware`: each batch is one image for `board`, linked in `optimize` mode, run under QEMU."""

    board: Board
    optimize: str = "ReleaseFast"


def process_batch(
    task: tuple[int, list[tuple[int, dict]], str, str, Firmware | None, str, str],
) -> tuple[list[dict], dict]:
    """Worker: compile, build and run one batch (a host library, or a firmware image) of a
    suite's cases; returns its records and timings."""
    batch_index, items, work_dir, pipeline, firmware, mode, suite = task
    cases = load_cases(suite)
    directory = Path(work_dir) / f"batch{batch_index:03d}"
    directory.mkdir(parents=True, exist_ok=True)
    timings = {"children": 0}
    start = time.perf_counter()
    records = {r["index"]: Record(**r) for _, r in items}
    compiled: list[Compiled] = []
    for index, _ in items:
        result = compile_case(cases[index], index, directory, records[index], pipeline, mode)
        if result is not None:
            compiled.append(result)
    timings["compile"] = time.perf_counter() - start
    if firmware is not None:
        run_images(directory, compiled, records, firmware, f"image{batch_index:03d}", timings)
        return [asdict(_settle_checked(r)) for r in records.values()], timings
    start = time.perf_counter()
    by_name = {case_name(i): records[i] for i in records}
    library, broken, builds = (None, {}, 0)
    if compiled:
        library, broken, builds = build_batch(directory, [c.name for c in compiled], f"batch{batch_index:03d}")
    for name, message in broken.items():
        by_name[name].status, by_name[name].reason = "compile_error", message
    timings["build"] = time.perf_counter() - start
    timings["builds"] = builds
    start = time.perf_counter()
    runnable = [c for c in compiled if c.name not in broken]
    if library is not None and runnable:
        specs = [
            {
                "name": c.name,
                "inputs": c.inputs,
                "outputs": c.outputs,
                "data_sets": c.data_sets,
                "rtol": records[int(c.name[1:])].rtol,
                "atol": records[int(c.name[1:])].atol,
            }
            for c in runnable
        ]
        results, timings["children"] = run_batch(library, specs, directory)
        for name, result in results.items():
            record = by_name[name]
            record.status = result["status"]
            record.reason = result.get("reason", "")
            record.max_abs_error = result.get("max_abs_error")
            record.max_ulp = result.get("max_ulp")
    timings["run"] = time.perf_counter() - start
    return [asdict(_settle_checked(r)) for r in records.values()], timings


def _settle_checked(record: Record) -> Record:
    """A random case that passed its check (`Record.checked`) is "checked", not "pass"."""
    if record.checked and record.status == "pass":
        record.status, record.reason = "checked", record.checked
    return record


def _image_builder(models: dict, firmware: Firmware) -> Builder:
    """A `build_batch` builder that links the named cases into one firmware image."""
    from zant.backend.build import ZigCompileError
    from zant.backend.firmware import build_firmware, write_image
    from zant.errors import ZantError

    def build(directory: Path, root: str, names: list[str]) -> tuple[Path | None, str]:
        try:
            source = write_image(directory, root, [models[n] for n in names], firmware.board)
            return build_firmware(source, root, firmware.board, firmware.optimize), ""
        except ZigCompileError as error:  # every error line: they name the broken cases
            return None, error.output
        except ZantError as error:
            return None, str(error)

    return build


def run_images(
    directory: Path, compiled: list[Compiled], records: dict[int, Record], firmware: Firmware, tag: str, timings: dict
) -> None:
    """Link the compiled cases into one image, run it under QEMU and compare each case's outputs
    with its first data set's (every case of the suite has one). A panic or a fault stops the
    image: that case is a trap, and the cases it had not reached go into a new image. An image
    QEMU itself gives up on (a lockup, a timeout) is split in halves down to the case at fault."""
    from zant.backend.firmware import ImageModel, run_models
    from zant.errors import ZantError

    by_name = {c.name: c for c in compiled}
    record_of = {c.name: records[int(c.name[1:])] for c in compiled}
    models = {c.name: ImageModel(c.name, c.inputs, c.outputs, c.data_sets[0][0]) for c in compiled}
    timings.update(build=0.0, run=0.0, builds=0, children=0)
    groups, attempt = [list(by_name)], 0
    while groups:
        pending, attempt = groups.pop(0), attempt + 1
        start = time.perf_counter()
        image, broken, builds = build_batch(directory, pending, f"{tag}_{attempt}", build=_image_builder(models, firmware))
        timings["build"] += time.perf_counter() - start
        timings["builds"] += builds
        for name, message in broken.items():
            record_of[name].status, record_of[name].reason = "compile_error", message
        pending = [n for n in pending if n not in broken]
        if image is None or not pending:
            continue
        start = time.perf_counter()
        try:
            run = run_models(image, firmware.board, [models[n] for n in pending])
        except ZantError as error:
            if len(pending) > 1:
                groups += [pending[: len(pending) // 2], pending[len(pending) // 2 :]]
            else:
                record_of[pending[0]].status = "trap"
                record_of[pending[0]].reason = f"trap: {one_line(error, 200)}"
            continue
        finally:
            timings["run"] += time.perf_counter() - start
            timings["children"] += 1
        for name in pending:
            record = record_of[name]
            if name in run.outputs:
                case = by_name[name]
                named = set(run.names.get(name, ()))  # a run-time-length sequence: its valid slots
                signatures = [s for s in caller_outputs(case.outputs) if not named or s.name in named]
                result = compare_outputs(signatures, run.outputs[name], case.data_sets[0][1], record.rtol, record.atol)
                record.status, record.reason = result["status"], result["reason"]
                record.max_abs_error, record.max_ulp = result["max_abs_error"], result["max_ulp"]
            elif name in run.errors:
                error = run.errors[name]
                trapped = not error.startswith("returned")
                record.status = "trap" if trapped else "mismatch"
                record.reason = f"{'trap' if trapped else 'firmware'}: {name}_predict {one_line(error, 200)}"
        if run.not_run:
            groups.append(list(run.not_run))


def run_conformance(
    filter_regex: str | None = None,
    jobs: int = 2,
    batch_size: int = 100,
    work_dir: str | None = None,
    progress=None,
    names: frozenset[str] | None = None,
    pipeline: str | None = None,
    target: str = "host",
    firmware: Firmware | None = None,
    mode: str = "frozen",
    suite: str = "node",
) -> tuple[list[dict], dict]:
    """Classify, compile (with `pipeline`, default `default_pipeline(target)`; parameter inputs
    frozen or not, `mode`), build and run the node suite or the model suites (`suite`, see
    SUITES; or the `filter_regex` / `names` subset) on the host, or with `firmware` as images
    under QEMU. A model case's operator label is its suite."""
    from zant.driver import TARGETS, default_pipeline
    from zant.errors import ZantError
    from zant.passes.onnx_to_uop import supported_ops

    if target not in TARGETS:
        raise ZantError(f"unknown target '{target}' (choose from {', '.join(TARGETS)})")
    if mode not in MODES:
        raise ZantError(f"unknown conformance mode '{mode}' (choose from {', '.join(MODES)})")
    pipeline = pipeline or default_pipeline(target)
    started = time.perf_counter()
    cases = load_cases(suite)
    supported = supported_ops()
    pattern = re.compile(filter_regex, re.IGNORECASE) if filter_regex else None
    records: list[Record] = []
    for index, case in enumerate(cases):
        if names is not None and case.name not in names:
            continue
        record = classify(case, index, supported)
        if isinstance(case, ModelCase):
            record.op = case.suite
        if pattern and not (
            pattern.search(record.op) or pattern.search(case.name) or pattern.search(case.name.removeprefix("test_"))
        ):
            continue
        records.append(record)
    todo = [r for r in records if not r.status]
    alone = [r for r in todo if r.op in SOLO_SUITES]
    shared = [r for r in todo if r.op not in SOLO_SUITES]
    batches = [shared[i : i + batch_size] for i in range(0, len(shared), batch_size)] + [[r] for r in alone]
    owned = work_dir is None
    root = Path(work_dir or tempfile.mkdtemp(prefix="zant-conformance-"))
    root.mkdir(parents=True, exist_ok=True)
    tasks = [
        (i, [(r.index, asdict(r)) for r in batch], str(root), pipeline, firmware, mode, suite)
        for i, batch in enumerate(batches)
    ]
    done: dict[int, dict] = {r.index: asdict(r) for r in records if r.status}
    stats = {"batches": len(batches), "builds": 0, "children": 0, "compile": 0.0, "build": 0.0, "run": 0.0,
             "target": target, "pipeline": pipeline, "mode": mode, "suite": suite}
    if firmware is not None:
        stats["firmware"] = {"board": firmware.board.name, "optimize": firmware.optimize}
    try:
        if jobs <= 1 or len(tasks) <= 1:
            outcomes = map(process_batch, tasks)
            pool = None
        else:
            pool = multiprocessing.get_context("fork").Pool(min(jobs, len(tasks)))
            outcomes = pool.imap_unordered(process_batch, tasks)
        left, cases_done = Estimate(len(todo)), 0
        for finished, (batch_records, timings) in enumerate(outcomes, 1):
            for record in batch_records:
                done[record["index"]] = record
            for key in ("builds", "children", "compile", "build", "run"):
                stats[key] += timings[key]
            cases_done += len(batch_records)
            if progress:
                passed = sum(1 for r in batch_records if r["status"] == "pass")
                progress(
                    f"batch {finished}/{len(tasks)}: {passed}/{len(batch_records)} passed "
                    f"(compile {timings['compile']:.1f}s, build {timings['build']:.1f}s in {timings['builds']} build(s), "
                    f"run {timings['run']:.1f}s in {timings['children']} {'image run(s)' if firmware else 'process(es)'}); "
                    f"cases {left.describe(cases_done)}"
                )
        if pool is not None:
            pool.close()
            pool.join()
    finally:
        if owned:
            shutil.rmtree(root, ignore_errors=True)
    stats["seconds"] = time.perf_counter() - started
    return [done[i] for i in sorted(done)], stats


DEFAULT_REPORT = Path(__file__).resolve().parent.parent / "docs" / "onnx-conformance.json"
MCU_REPORT = DEFAULT_REPORT.with_name("onnx-conformance-mcu.json")
"""The committed reports of the host pipeline and of the MCU pipeline (`--target cortex-m4`)."""


def committed_report(target: str) -> Path:
    return DEFAULT_REPORT if target == "host" else MCU_REPORT


def representative_slice(report_path: Path = DEFAULT_REPORT, per_operator: int = 1) -> frozenset[str]:
    """Case names covering every operator that passes in a committed report: its first passing
    case(s). A regression slice: each of them must still pass."""
    report = json.loads(Path(report_path).read_text(encoding="utf-8"))
    chosen: dict[str, list[str]] = collections.defaultdict(list)
    for record in report["cases"]:
        if record["status"] == "pass" and len(chosen[record["op"]]) < per_operator:
            chosen[record["op"]].append(record["name"])
    return frozenset(name for names in chosen.values() for name in names)


# -- reports --------------------------------------------------------------------------------


def totals(records: list[dict]) -> dict[str, int]:
    counts = collections.Counter(r["status"] for r in records)
    return {
        "cases": len(records),
        "numeric cases": sum(1 for r in records if r["numeric"]),
        "numeric passed": sum(1 for r in records if r["numeric"] and r["status"] == "pass"),
        "passed": counts["pass"],
        "checked": counts["checked"],
        "mismatched": counts["mismatch"],
        "compile errors": counts["compile_error"],
        "traps": counts["trap"],
        "unsupported": counts["unsupported"],
        "out of scope": counts["out_of_scope"],
    }


def _reason_key(record: dict) -> str:
    """A failure reason with case-specific numbers and names stripped, for grouping."""
    reason = record["reason"]
    if record["status"] == "unsupported":
        return reason
    for prefix in ("compile error: ", "trap: "):
        reason = reason.removeprefix(prefix)
    reason = re.sub(r"\(max abs error.*\)", "", reason)
    reason = re.sub(r"\(\d+ of \d+ elements.*\)", "", reason)
    reason = re.sub(r"'[^']*'", "'…'", reason)
    reason = re.sub(r"%[\w.]+", "%…", reason)
    reason = re.sub(r"\bc\d{4}\b", "cNNNN", reason)
    reason = re.sub(r":\d+:\d+:", ":", reason)
    reason = re.sub(r"\d+", "N", reason)
    return one_line(reason, 140)


def top_unsupported(records: list[dict]) -> list[tuple[str, int]]:
    counts = collections.Counter(op for r in records if r["status"] == "unsupported" for op in r["missing_ops"])
    return counts.most_common()


def failure_causes(records: list[dict]) -> list[tuple[str, int]]:
    return collections.Counter(
        f"{r['status'].replace('_', ' ')}: {_reason_key(r)}" for r in records if r["status"] in ("mismatch", "trap", "compile_error")
    ).most_common()


def write_json(records: list[dict], stats: dict, path: str | Path, command: str) -> None:
    import onnx

    payload = {
        "command": command,
        "onnx": onnx.__version__,
        "target": stats.get("target", "host"),
        "pipeline": stats.get("pipeline"),
        "mode": stats.get("mode", "frozen"),
        "suite": stats.get("suite", "node"),
        "firmware": stats.get("firmware"),
        "totals": totals(records),
        "seconds": round(stats.get("seconds", 0.0), 1),
        "jobs": stats.get("jobs", 2),
        "note": stats.get("note"),
        "cases": records,
    }
    Path(path).write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def arena_summary(records: list[dict]) -> list[str]:
    """How the arena planner did on every compiled case: scratch against the (aligned) lower
    bound; `verify-arena-plan` ran on each as part of the default pipeline."""
    planned = [r for r in records if r.get("scratch_bytes") is not None]
    if not planned:
        return []
    above = [r for r in planned if r["scratch_bytes"] > r["lower_bound_bytes"]]
    lines = [
        "",
        f"Arena plans: {len(planned)} compiled cases planned and checked by `verify-arena-plan`; "
        f"scratch / aligned lower bound ≤ 1.00 on {len(planned) - len(above)} of them.",
    ]
    lines += [
        f"Above the bound: {r['name']} ({r['scratch_bytes']} B vs {r['lower_bound_bytes']} B)" for r in above
    ]
    return lines


@dataclass
class Beside:
    """Another run's JSON report (e.g. the MCU pipeline's), shown side by side with this run."""

    report: dict
    link: str  # its path relative to the Markdown file

    @property
    def label(self) -> str:
        return run_label(self.report)

    def passed_by_operator(self) -> dict[str, int]:
        counts = collections.Counter(r["op"] for r in self.report["cases"] if r["status"] == "pass")
        return {r["op"]: counts[r["op"]] for r in self.report["cases"]}


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "–"


def _pass_rates(t: dict) -> list[str]:
    lines = []
    in_scope = t["cases"] - t["out of scope"]
    if in_scope:
        lines += ["", f"Passed {t['passed']} of {in_scope} in-scope cases ({100 * t['passed'] / in_scope:.1f} %)."]
    if t["numeric cases"]:
        lines += [
            "",
            f"Passed {t['numeric passed']} of the {t['numeric cases']} numeric cases "
            f"({100 * t['numeric passed'] / t['numeric cases']:.1f} %).",
        ]
    return lines


def run_label(report: dict) -> str:
    """A run's column heading: its target, the board for a firmware run, and "as written" for a
    run that freezes no parameter input (reports before the mode was recorded froze them)."""
    firmware = report.get("firmware")
    target = report.get("target", "host")
    label = f"{target} on {firmware['board']}" if firmware else target
    return label + (", as written" if report.get("mode") == "as-written" else "")


def _freezing(mode: str | None) -> str:
    if mode == "as-written":
        return (
            "Every graph input stays a run-time input, as the file is written (`--as-written`: nothing is "
            "frozen, as with `zant compile`)."
        )
    return (
        "Inputs that real models hold as constants (shapes, axes, pads, k, Clip bounds, ...) are frozen "
        "to the data set's values (`frozen` in the JSON)."
    )


def _as_firmware(firmware: dict | None) -> str:
    if firmware is None:
        return " (built and run on the host)"
    return f" in {firmware['optimize']} firmware images run under QEMU (each case on its first data set)"


def totals_section(records: list[dict], stats: dict, beside: Sequence[Beside]) -> list[str]:
    """The totals of this run, beside those of the other reports if given (and the cases whose
    status differs from this run's in any of them)."""
    t = totals(records)
    if not beside:
        return ["## Totals", "", "| | cases |", "|---|---:|", *(f"| {k} | {v} |" for k, v in t.items()), *_pass_rates(t)]
    ours = run_label(stats)
    columns = [t, *(b.report["totals"] for b in beside)]
    lines = [
        "## Totals",
        "",
        f"`{ours}`: the pass pipeline above.",
        *(
            f"`{b.label}`: `{b.report.get('pipeline')}`{_as_firmware(b.report.get('firmware'))}"
            f"{', parameters frozen' if b.report.get('mode', 'frozen') == 'frozen' else ', as written'}, from "
            f"`{b.report.get('command')}` ({b.report.get('seconds', 0):.0f} s"
            f"{'; ' + b.report['note'].rstrip('.') if b.report.get('note') else ''}; [per-case records]({b.link}))."
            for b in beside
        ),
        "",
        "| | " + " | ".join([ours, *(b.label for b in beside)]) + " |",
        "|---|" + "---:|" * len(columns),
        *("| " + " | ".join([k, *(str(c.get(k, "–")) for c in columns)]) + " |" for k in t),
        "| in-scope cases passed | "
        + " | ".join(_percent(c["passed"], c["cases"] - c["out of scope"]) for c in columns) + " |",
        "| numeric cases passed | "
        + " | ".join(_percent(c["numeric passed"], c["numeric cases"]) for c in columns) + " |",
    ]
    for other in beside:
        statuses = {r["name"]: r for r in other.report["cases"]}
        differ = [(r, statuses[r["name"]]) for r in records if r["name"] in statuses and r["status"] != statuses[r["name"]]["status"]]
        if not differ:
            lines += ["", f"Every case has the same status in `{ours}` and `{other.label}`."]
            continue
        lines += ["", f"Cases whose status differs in `{other.label}`:", "",
                  f"| case | operator | {ours} | {other.label} |", "|---|---|---|---|"]
        lines += [
            f"| {r['name']} | {r['op']} | {r['status']} | {o['status']}: {_md_escape(one_line(o['reason'], 200))} |"
            for r, o in differ
        ]
    return lines


MODELS_PAGE_LINK = (
    "The model suites onnx ships with their data (simple, pytorch-converted, pytorch-operator, light): "
    "[ONNX backend model-test conformance](onnx-conformance-models.md) (`zant conformance --models`)."
)
"""The node reports' pointer to the model suites' page (beside them in docs/)."""

_MODELS_SOURCE = (
    "Each case of the model suites onnx ships with their data (`onnx/backend/test/data/`: simple, "
    "pytorch-converted, pytorch-operator, and light, the models `real/*/data.json` names, fed as onnx's "
    "backend test runner feeds them: arange(n)/n inputs, the output .pb beside the model; `zant conformance "
    "--models`)"
)


def per_case_section(records: list[dict], stats: dict, beside: Sequence[Beside]) -> list[str]:
    """Every case's status in this run and the `beside` runs (the model suites: few cases, each
    a whole model), with this run's largest error and scratch arena."""
    others = [{r["name"]: r for r in b.report["cases"]} for b in beside]
    labels = [run_label(stats), *(b.label for b in beside)]
    lines = ["", "## Per case", "",
             "| case | " + " | ".join(labels) + " | max abs error | scratch bytes | notes |",
             "|---|" + "---|" * len(labels) + "---:|---:|---|"]
    for r in records:
        statuses = [r["status"], *(o.get(r["name"], {}).get("status", "–") for o in others)]
        error = "" if r.get("max_abs_error") is None else f"{r['max_abs_error']:.3g}"
        scratch = "" if r.get("scratch_bytes") is None else f"{r['scratch_bytes']:,}"
        note = "" if r["status"] == "pass" else _md_escape(one_line(r["reason"], 200))
        lines.append(f"| {r['name']} | " + " | ".join(statuses) + f" | {error} | {scratch} | {note} |")
    return lines


def _how_run(firmware: dict | None) -> str:
    if firmware is None:
        return "built in ReleaseSafe (batched shared libraries), run on the host on every data set and"
    return (
        f"linked into {firmware['optimize']} firmware images for {firmware['board']} (a batch per image), run "
        "under QEMU on the first data set (every case of the suite has one) and"
    )


def render_markdown(
    records: list[dict],
    stats: dict,
    command: str,
    note: str | None = None,
    json_link: str | None = None,
    beside: Sequence[Beside] = (),
    source: str | None = None,
) -> str:
    """The Markdown report of a run; `source`: the command of the run whose saved records these
    are (`--render`)."""
    import onnx

    t = totals(records)
    run = f" from the records of `{source}`" if source else ""
    models = stats.get("suite") == "models"
    lines = [
        "# ONNX backend model-test conformance" if models else "# ONNX backend node-test conformance",
        "",
        f"Generated by `{command}`{run} (onnx {onnx.__version__}, {len(records)} cases, "
        f"{stats.get('seconds', 0):.0f} s with {stats.get('jobs', 2)} jobs). Do not edit: rerun the command.",
        "",
        f"Target: `{stats.get('target', 'host')}`; pass pipeline: `{stats.get('pipeline')}`.",
        *(["", note, ""] if note else [""]),
        *textwrap.wrap(
            (_MODELS_SOURCE if models else "Each case of `onnx.backend.test.case.node.collect_testcases()`")
            + " is classified (out of scope, "
            "unsupported = an op with neither a lowering nor an ONNX function body to expand, or one the "
            f"compiler names as missing after expansion), else compiled with the pass pipeline above, {_how_run(stats.get('firmware'))} "
            f"compared with the case's rtol/atol (integers and booleans exactly). {_freezing(stats.get('mode'))} "
            "\"numeric cases\": every graph input and output is a tensor of "
            "float32/16/64, (u)int8/16/32/64 or bool: the element types the compiler targets. Cases on other "
            "types (float8, int4, bfloat16 …) still run and count in the other totals.",
            100,
        ),
        *([f"Per-case records: [{Path(json_link).name}]({json_link})."] if json_link else []),
        *([] if models else ["", MODELS_PAGE_LINK]),
        "",
        *totals_section(records, stats, beside),
    ]

    lines += arena_summary(records)

    unsupported = top_unsupported(records)
    if unsupported:
        lines += ["", "## Operators without a lowering (by cases blocked)", ""]
        lines.append(", ".join(f"{op} {n}" for op, n in unsupported[:40]) + ("" if len(unsupported) <= 40 else ", …"))
    causes = failure_causes(records)
    if causes:
        lines += ["", "## Failures among compiled cases", "", "| cases | cause |", "|---:|---|"]
        lines += [f"| {n} | {_md_escape(c)} |" for c, n in causes[:30]]
    mismatched = [r for r in records if r["status"] == "mismatch"]
    if mismatched:
        lines += ["", "Mismatched cases:", "", "| case | operator | difference | why |", "|---|---|---|---|"]
        lines += [
            f"| {r['name']} | {r['op']} | {_md_escape(r['reason'])} | {_md_escape(MISMATCH_CAUSES.get(r['name'], 'not known'))} |"
            for r in mismatched
        ]

    beside_passed = [b.passed_by_operator() for b in beside]
    group = "suite" if models else "operator"
    if not beside:
        lines += ["", f"## Per {group}", "", f"| {group} | cases | passed | status / notes |", "|---|---:|---:|---|"]
    else:
        ours = run_label(stats)
        lines += [
            "", f"## Per {group}", "",
            f"Status and notes are `{ours}`'s.", "",
            f"| {group} | cases | " + " | ".join(f"passed ({label})" for label in [ours, *(b.label for b in beside)])
            + " | status / notes |",
            "|---|---:|" + "---:|" * (1 + len(beside)) + "---|",
        ]
    by_op: dict[str, list[dict]] = collections.defaultdict(list)
    for r in records:
        by_op[r["op"]].append(r)
    for op in sorted(by_op, key=str.lower):
        group = by_op[op]
        passed = sum(1 for r in group if r["status"] == "pass")
        scope = [r for r in group if r["status"] != "out_of_scope"]
        if not scope:
            note = "out of scope: " + "; ".join(sorted({r["reason"] for r in group}))
        elif passed == len(scope):
            note = "all pass" + (f" ({len(group) - len(scope)} out of scope)" if len(scope) < len(group) else "")
        else:
            reasons = collections.Counter(
                f"{r['status'].replace('_', ' ')}: {_reason_key(r)}" if r["status"] != "unsupported" else r["reason"]
                for r in scope
                if r["status"] != "pass"
            )
            note = "; ".join(f"{reason} ({n})" for reason, n in reasons.most_common(3))
        other = "".join(f" {passed_there.get(op, '–')} |" for passed_there in beside_passed)
        lines.append(f"| {op} | {len(group)} | {passed} |{other} {_md_escape(one_line(note, 400))} |")

    if models:
        lines += per_case_section(records, stats, beside)
    checked = [r for r in records if r["status"] == "checked"]
    if checked:
        lines += ["", "## Checked random cases", "",
                  "Not counted as passed: the case's data are not the draws of a reproducible seed.", "",
                  "| case | operator | check |", "|---|---|---|"]
        lines += [f"| {r['name']} | {r['op']} | {_md_escape(r['reason'])} |" for r in checked]
    out_of_scope = [r for r in records if r["status"] == "out_of_scope"]
    if out_of_scope:
        lines += ["", "## Out-of-scope cases", "", "| case | operator | reason |", "|---|---|---|"]
        lines += [f"| {r['name']} | {r['op']} | {_md_escape(r['reason'])} |" for r in out_of_scope]
    return "\n".join(lines) + "\n"


# -- command line ---------------------------------------------------------------------------


def _configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--filter", default=None, metavar="REGEX", help="only cases whose operator or name matches (default: all)")
    parser.add_argument(
        "--slice",
        nargs="?",
        const="",
        default=None,
        metavar="REPORT",
        help="only the first passing case of each operator in REPORT (default: the target's committed report, "
        "docs/onnx-conformance.json or, for a microcontroller, docs/onnx-conformance-mcu.json)",
    )
    parser.add_argument(
        "--target", default="host", metavar="T",
        help="compile with this target's default pipeline (host: DEFAULT_PIPELINE, a microcontroller: "
        "MCU_PIPELINE); the code still runs on the host (default host)",
    )
    parser.add_argument(
        "--pipeline", default=None, metavar="PIPELINE",
        help="the pass pipeline to compile with, as zant-opt -p takes it (default: the target's)",
    )
    parser.add_argument(
        "--firmware", action="store_true",
        help="run the cases as firmware under QEMU (an MCU --target): each batch linked into one image; "
        "without --filter or --slice, the target's representative slice (with --models: every model but the "
        "light ones, whose weights no board holds)",
    )
    parser.add_argument("--board", default=None, metavar="BOARD", help="the board of the images (default: the target's)")
    parser.add_argument(
        "-O", dest="optimize", default=None, metavar="MODE",
        help="the images' build mode (default ReleaseFast; the host libraries are always ReleaseSafe)",
    )
    parser.add_argument(
        "--render", default=None, metavar="REPORT",
        help="write the Markdown report (--output-md) of a saved run's JSON REPORT, with --beside runs, "
        "without running anything (default: run the suite)",
    )
    parser.add_argument(
        "--models", action="store_true",
        help="run the model suites onnx ships with data (onnx/backend/test/data: simple, pytorch-converted, "
        "pytorch-operator, light) instead of the node suite; cases are named suite/test_name",
    )
    parser.add_argument(
        "--as-written", action="store_true",
        help="freeze no parameter input (shapes, axes, pads, ...): every graph input a run-time input, as the "
        "file is written and as zant compile takes it",
    )
    parser.add_argument("--jobs", "-j", type=int, default=2, help="parallel workers (default 2)")
    parser.add_argument("--batch-size", type=int, default=100, help="cases per library build or image (default 100)")
    parser.add_argument("--output-json", default=None, metavar="PATH", help="write per-case records as JSON (default: none)")
    parser.add_argument("--output-md", default=None, metavar="PATH", help="write the Markdown report (default: none)")
    parser.add_argument("--work-dir", default=None, metavar="DIR", help="keep the generated files here (default: a temporary folder, deleted)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    parser.add_argument(
        "--localize", action="store_true",
        help="on a numeric mismatch, name the first pass that changes the case's result (zant-opt "
        "--check-each-pass's checker on its first data set), recorded as the case's 'culprit'",
    )
    parser.add_argument("--note", default=None, help="a line for the Markdown report (e.g. the commit measured; default: none)")
    parser.add_argument(
        "--beside", action="append", default=[], metavar="REPORT",
        help="another run's JSON report (e.g. --target cortex-m4's) to show side by side in the Markdown report (repeatable; default: none)",
    )
    parser.set_defaults(handler=cmd_conformance)
    return parser


def add_conformance_command(subparsers) -> argparse.ArgumentParser:
    """Add `conformance` to a `zant` sub-command parser set."""
    parser = subparsers.add_parser(
        "conformance", help="run the ONNX backend node-test suite and report conformance"
    )
    return _configure(parser)


def cmd_conformance(args: argparse.Namespace) -> int:
    quiet = getattr(args, "quiet", False)
    progress = None if quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    jobs = max(1, args.jobs)
    pipeline = getattr(args, "pipeline", None)
    target = getattr(args, "target", "host")
    slice_report = getattr(args, "slice", None)
    firmware = _firmware(args, target)
    mode = "as-written" if getattr(args, "as_written", False) else "frozen"
    suite = "models" if getattr(args, "models", False) else "node"
    models_firmware = firmware is not None and suite == "models" and args.filter is None and slice_report is None
    if firmware is not None and args.filter is None and slice_report is None and suite == "node":
        slice_report = ""  # the target's representative slice
    names = representative_slice(Path(slice_report or committed_report(target))) if slice_report is not None else None
    if models_firmware:  # every model but the light ones, whose weights no board holds
        names = frozenset(c.name for c in load_cases(suite) if c.suite not in SOLO_SUITES)
    beside = [_load_beside(path, args.output_md) for path in getattr(args, "beside", [])]
    if getattr(args, "render", None) is not None:
        return render_report(args, beside)
    records, stats = run_conformance(
        args.filter, jobs, max(1, args.batch_size), args.work_dir, progress, names, pipeline, target, firmware,
        mode, suite,
    )
    stats["jobs"] = jobs
    if getattr(args, "localize", False):
        cases = load_cases(suite)
        for record in records:
            if record["status"] == "mismatch":
                record["culprit"] = localize_case(
                    cases[record["index"]], record["index"], stats["pipeline"], mode,
                    record["rtol"], record["atol"],
                )
                if progress:
                    progress(f"{record['name']} localized: {record['culprit']}")
    command = "zant conformance" + (" --models" if suite == "models" else "")
    command += (f" --filter '{args.filter}'" if args.filter else "") + (" --slice" if slice_report is not None else "")
    command += " --as-written" if mode == "as-written" else ""
    command += f" --target {target}" if target != "host" else ""
    if firmware is not None:
        command += " --firmware" + (f" --board {args.board}" if args.board else "")
        command += f" -O {args.optimize}" if args.optimize else ""
    command += f" --pipeline '{pipeline}'" if pipeline else ""
    command += "".join(f" --beside {path}" for path in getattr(args, "beside", []))
    t = totals(records)
    print("  ".join(f"{k} {v}" for k, v in t.items()) + f"  ({stats['seconds']:.0f} s)")
    stats["note"] = args.note
    if args.output_json:
        write_json(records, stats, args.output_json, command)
    if args.output_md:
        json_link = _relative_link(args.output_json, args.output_md) if args.output_json else None
        markdown = render_markdown(records, stats, command, args.note, json_link, beside)
        Path(args.output_md).write_text(markdown, encoding="utf-8")
    return 0


def render_report(args: argparse.Namespace, beside: Sequence[Beside]) -> int:
    """`--render REPORT --output-md PATH [--beside OTHER ...]`: the Markdown report of a saved run
    (its JSON records), with other runs beside it, without running anything again."""
    from zant.errors import ZantError

    if args.output_md is None:
        raise ZantError("--render writes a Markdown report: give --output-md")
    chosen = [flag for flag, given in (
        ("--filter", args.filter), ("--slice", args.slice is not None), ("--as-written", args.as_written),
        ("--models", getattr(args, "models", False)),
        ("--target", args.target != "host"), ("--pipeline", args.pipeline), ("--firmware", args.firmware),
        ("--output-json", args.output_json),
    ) if given]
    if chosen:
        raise ZantError(f"--render shows a saved run: {', '.join(chosen)} would describe a new one")
    report = _load_beside(args.render, args.output_md).report
    stats = {key: report.get(key) for key in ("target", "pipeline", "mode", "firmware", "seconds", "suite")}
    stats["jobs"] = report.get("jobs", 2)
    command = f"zant conformance --render {args.render}" + "".join(f" --beside {path}" for path in args.beside)
    command += f" --output-md {args.output_md}"
    note = args.note or report.get("note")
    json_link = _relative_link(args.render, args.output_md)
    markdown = render_markdown(report["cases"], stats, command, note, json_link, beside, source=report.get("command"))
    Path(args.output_md).write_text(markdown, encoding="utf-8")
    return 0


def _firmware(args: argparse.Namespace, target: str) -> Firmware | None:
    """`--firmware [--board B] [-O MODE]`, checked before anything runs."""
    from zant.backend.build import OPTIMIZE_MODES, board_for
    from zant.backend.firmware import qemu_missing
    from zant.errors import ZantError

    if not getattr(args, "firmware", False):
        if getattr(args, "board", None) or getattr(args, "optimize", None):
            raise ZantError("--board and -O describe the firmware images: add --firmware")
        return None
    if target == "host":
        raise ZantError("--firmware runs the cases on a microcontroller: give an MCU --target (e.g. cortex-m4)")
    optimize = args.optimize or "ReleaseFast"
    if optimize not in OPTIMIZE_MODES:
        raise ZantError(f"unknown optimize mode '{optimize}' (choose from {', '.join(OPTIMIZE_MODES)})")
    board = board_for(target, args.board)
    missing = qemu_missing(board)
    if missing:
        raise ZantError(missing)
    return Firmware(board, optimize)


def _relative_link(path: str | Path, markdown: str | Path) -> str:
    return os.path.relpath(Path(path).resolve(), Path(markdown).resolve().parent)


def _load_beside(path: str, markdown: str | None) -> Beside:
    """The --beside report, read before the run so a bad path fails at once."""
    from zant.errors import ZantError

    try:
        report = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ZantError(f"cannot read --beside {path}: {one_line(error, 120)}") from error
    if not isinstance(report, dict) or not {"cases", "totals"} <= report.keys():
        raise ZantError(f"--beside {path} is not a conformance JSON report (no cases and totals)")
    return Beside(report, _relative_link(path, markdown) if markdown else str(path))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from zant.errors import run_cli

    parser = _configure(argparse.ArgumentParser(prog="zant conformance", description=__doc__.split("\n\n")[0]))
    args = parser.parse_args(argv)
    return run_cli("zant", lambda: cmd_conformance(args), False)


if __name__ == "__main__":
    sys.exit(main())
