"""Nodes whose output extents onnx 1.23's shape inference gets wrong, rewritten before it runs
into the same computation in a form it reads right (`rewrite_misinferred`):

- Pools whose `ceil_mode` adds a window that is dropped. With `ceil_mode = 1` a MaxPool / AveragePool / LpPool rounds its output extent up, but a last
window that would start past the input and its leading pad is dropped (the ONNX definition's
note, PyTorch and onnxruntime; onnx's reference evaluator too). onnx 1.23's shape inference
keeps that window: x [1, 1, 4, 4] pooled by a 1x1 kernel with strides 2 has a [1, 1, 2, 2]
result, inferred [1, 1, 3, 3], so no declared output shape passes strict inference once
another node follows. Such a node is rewritten into the same windows (`rewrite_ceil_mode`):
floor mode, or less end padding.
- ConvTranspose with SAME_UPPER / SAME_LOWER and `output_padding`: its extent is `in·stride`
(the definition, onnxruntime, onnx's reference evaluator), inference adds `output_padding`
to it (x [1, 1, 4, 3], strides [1, 3], output_padding [0, 1]: 9 inferred 10). The pads SAME
gives are written out (`explicit_same_pads`), which inference reads right.

Why before the IR (issue 31 item 3): the rewritten node is the same computation in the form
ONNX's inference types right; the types are needed to build the IR at all. (The importer could
instead type such nodes itself, as it types the com.microsoft ops from their definitions, and
import them unchanged: a possible follow-up.)
"""

from __future__ import annotations

import onnx
from onnx import ModelProto, NodeProto, helper

POOLS = frozenset({"MaxPool", "AveragePool", "LpPool"})
DEFAULT_DOMAINS = ("", "ai.onnx")


def _attribute(node: NodeProto, name: str, default=None):
    found = next((a for a in node.attribute if a.name == name), None)
    return default if found is None else helper.get_attribute_value(found)


def _set(node: NodeProto, name: str, value) -> None:
    kept = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend([*kept, helper.make_attribute(name, value)])


def rewrite_ceil_mode(node: NodeProto, in_spatial: list[int]) -> bool:
    """Rewrite `node` (in place) so that onnx's inference gives its true output extents, where
    ceil mode adds a window that is dropped; True if it did.

    Per axis, ceil mode either changes nothing (the span divides), adds a window that stays
    ("real"), or adds one that is dropped ("idle"). With no real axis the node's windows are
    floor mode's: ceil_mode 0. Otherwise each idle axis loses the end pad its span leaves over
    (no window reaches it) if it has that much; else, unless an AveragePool counts its pads,
    floor mode with each real axis's end pad widened to hold its last window (a pad adds
    nothing to a max, and an uncounted one nothing to an average).
    """
    kernel = _attribute(node, "kernel_shape")
    rank = len(in_spatial)
    if not kernel or len(kernel) != rank:
        return False
    auto_pad = _attribute(node, "auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    if auto_pad not in ("NOTSET", "VALID"):
        return False  # SAME_* extents do not depend on ceil_mode
    strides = _attribute(node, "strides") or [1] * rank
    dilations = _attribute(node, "dilations") or [1] * rank
    pads = list(_attribute(node, "pads") or [0] * (2 * rank)) if auto_pad == "NOTSET" else [0] * (2 * rank)
    if len(strides) != rank or len(dilations) != rank or len(pads) != 2 * rank:
        return False
    real, idle = {}, {}  # axis -> the span's remainder
    for i, size in enumerate(in_spatial):
        stride, begin = strides[i], pads[i]
        span = size + begin + pads[rank + i] - ((kernel[i] - 1) * dilations[i] + 1)
        if stride <= 0 or span < 0:
            return False
        if span % stride == 0:
            continue
        ceil_out = -(-span // stride) + 1
        (idle if (ceil_out - 1) * stride >= size + begin else real)[i] = span % stride
    if not idle:
        return False
    if not real:
        _set(node, "ceil_mode", 0)
        return True
    if all(pads[rank + i] >= rest for i, rest in idle.items()):
        for i, rest in idle.items():
            pads[rank + i] -= rest
    elif node.op_type != "AveragePool" or not _attribute(node, "count_include_pad", 0):
        for i, rest in real.items():
            pads[rank + i] += strides[i] - rest
        _set(node, "ceil_mode", 0)
    else:
        return False
    _set(node, "auto_pad", "NOTSET")
    _set(node, "pads", pads)
    return True


def explicit_same_pads(node: NodeProto, in_spatial: list[int], kernel: list[int]) -> bool:
    """Write the pads of a SAME_* ConvTranspose without `output_shape` out (in place): the
    full extent `stride·(in - 1) + output_padding + extent` less the target `in·stride`, the odd
    one at the end for SAME_UPPER, at the beginning for SAME_LOWER; True if it did."""
    auto_pad = _attribute(node, "auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    rank = len(in_spatial)
    output_padding = _attribute(node, "output_padding") or [0] * rank
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER") or _attribute(node, "output_shape") or not any(output_padding):
        return False
    strides = _attribute(node, "strides") or [1] * rank
    dilations = _attribute(node, "dilations") or [1] * rank
    if not (len(kernel) == len(strides) == len(dilations) == len(output_padding) == rank):
        return False
    pads = [0] * (2 * rank)
    for i, size in enumerate(in_spatial):
        full = strides[i] * (size - 1) + output_padding[i] + (kernel[i] - 1) * dilations[i] + 1
        total = full - size * strides[i]
        if total < 0:
            return False
        pads[i] = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
        pads[rank + i] = total - pads[i]
    _set(node, "auto_pad", "NOTSET")
    _set(node, "pads", pads)
    return True


def _rewrite(node: NodeProto, shapes: dict[str, list[int]]) -> bool:
    if node.op_type in POOLS:
        shape = shapes.get(node.input[0]) if node.input else None
        return shape is not None and len(shape) >= 3 and rewrite_ceil_mode(node, shape[2:])
    x, w = (shapes.get(name) for name in (list(node.input) + ["", ""])[:2])
    if x is None or w is None or len(x) < 3 or len(w) != len(x):
        return False
    return explicit_same_pads(node, x[2:], list(_attribute(node, "kernel_shape") or w[2:]))


def _needs_look(node: NodeProto) -> bool:
    if node.domain not in DEFAULT_DOMAINS:
        return False
    if node.op_type in POOLS:
        return bool(_attribute(node, "ceil_mode", 0))
    return node.op_type == "ConvTranspose" and any(_attribute(node, "output_padding") or [])


def rewrite_misinferred(model: ModelProto) -> ModelProto:
    """Rewrite (in place) the main graph's nodes that onnx's inference misreads (see above).
    Input shapes come from a lenient shape inference, redone after each change (a later
    node's input shape may follow from it)."""
    graph = model.graph
    pending = [n for n in graph.node if _needs_look(n)]
    for _ in range(len(pending)):
        try:
            inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
        except Exception:  # noqa: BLE001 - the strict inference that follows reports it
            break
        shapes = {}
        for value in [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]:
            tensor = value.type.tensor_type
            if tensor.HasField("shape") and all(d.HasField("dim_value") for d in tensor.shape.dim):
                shapes[value.name] = [d.dim_value for d in tensor.shape.dim]
        for initializer in inferred.graph.initializer:
            shapes.setdefault(initializer.name, list(initializer.dims))
        changed = False
        while pending and not changed:
            node = pending.pop(0)
            if not _rewrite(node, shapes):
                continue
            # a shape declared for the result from the old inference would now contradict it
            kept = [v for v in graph.value_info if v.name not in node.output]
            del graph.value_info[:]
            graph.value_info.extend(kept)
            changed = True
        if not pending:
            break
    return model
