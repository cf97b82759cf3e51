"""Freezing graph inputs: `zant compile --freeze NAME=FILE.npy`.

A model that takes its configuration as inputs (a Clip's bounds, a Resize's scales, a TopK's k,
a Reshape's shape) compiles to scalar loops that read those values at run time, or not at all
when a shape depends on them. Freezing such an input makes it an initializer with a fixed value
before import, so the folds and the lowering see a constant: the generated function no longer
takes it, and the code is specialized for that value.

Why before the IR (issue 31 item 3): freezing is the user's request, applied to the file before
inference, so shapes computed from the frozen value become static types at import.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx
from onnx import ModelProto, numpy_helper

from zant.errors import ZantError


def _declared(value: onnx.ValueInfoProto) -> tuple[np.dtype | None, list[int | None] | None]:
    """The element type and shape a graph input declares (None: unknown; a dimension None:
    symbolic, any size)."""
    tensor_type = value.type.tensor_type
    dtype = None
    if tensor_type.elem_type:
        try:
            dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type))
        except (KeyError, TypeError, ValueError):  # bfloat16, float8 …: no NumPy type to compare
            dtype = None
    if not tensor_type.HasField("shape"):
        return dtype, None
    dims = [d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else None for d in tensor_type.shape.dim]
    return dtype, dims


def freeze_inputs(model: ModelProto, values: Mapping[str, np.ndarray]) -> ModelProto:
    """A copy of `model` in which each graph input named in `values` is an initializer holding
    that value (and no longer an input). The value must have the input's element type and
    shape (a symbolic dimension takes any size)."""
    if not values:
        return model
    frozen = ModelProto()
    frozen.CopyFrom(model)
    graph = frozen.graph
    declared = {v.name: v for v in graph.input}
    for name, array in values.items():
        if name not in declared:
            listed = ", ".join(f"'{n}'" for n in declared) or "none"
            raise ZantError(f"--freeze {name}: the model has no input '{name}' (inputs: {listed})")
        array = np.asarray(array)
        dtype, dims = _declared(declared[name])
        if dtype is not None and array.dtype != dtype:
            raise ZantError(f"--freeze {name}: the value is {array.dtype}, the input is declared {dtype}")
        if dims is not None and (
            len(dims) != array.ndim or any(d is not None and d != s for d, s in zip(dims, array.shape))
        ):
            shape = "x".join(str(d) if d is not None else "?" for d in dims) or "a scalar"
            raise ZantError(
                f"--freeze {name}: the value has shape {list(array.shape)}, the input is declared {shape}"
            )
        # An input may already have an initializer: its default, which the given value replaces.
        kept = [t for t in graph.initializer if t.name != name]
        del graph.initializer[:]
        graph.initializer.extend([*kept, numpy_helper.from_array(array, name)])
    remaining = [v for v in graph.input if v.name not in values]
    del graph.input[:]
    graph.input.extend(remaining)
    return frozen
