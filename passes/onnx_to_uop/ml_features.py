"""The `ai.onnx.ml` feature transforms on dense tensors: Binarizer, Scaler, ArrayFeatureExtractor,
Imputer, LabelEncoder and OneHotEncoder (numeric), Normalizer."""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import Operation
from zant.dialects.onnx import get_attr, inputs
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    constant_table,
    layout_of,
    tensor_element_type,
    tensor_shape,
)
from zant.passes.onnx_to_uop.ml import as_rows, ml_compute_type, ml_op_names
from zant.passes.onnx_to_uop.parameters import constant_indices, data_index


class BinarizerLowering(OnnxLowering):
    """Y = X > threshold ? 1 : 0, in X's type (NaN gives 0)."""

    op_names = ml_op_names("Binarizer")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        (x,) = (layout_of(v) for v in inputs(op))
        element_type = x.element_type
        compute = ml_compute_type(element_type)
        threshold = kb.const(float(get_attr(op, "threshold")), compute)
        one, zero = kb.const(1, element_type), kb.const(0, element_type)
        out = kb.alloc(result_name(op), x.shape, element_type)
        with kb.loop_nest(x.shape) as ivs:
            above = kb.alu("cmplt", threshold, kb.cast(kb.load(x, ivs), compute))
            kb.store(kb.where(above, one, zero), out, ivs)
        return [out]


class ScalerLowering(OnnxLowering):
    """Y = (X - offset) · scale per feature (the last axis); one value broadcasts to all."""

    op_names = ml_op_names("Scaler")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        (x,) = (layout_of(v) for v in inputs(op))
        out_type = tensor_element_type(op.results[0])
        features = x.shape[-1] if x.rank else 1
        tables = []
        for name in ("offset", "scale"):
            values = np.asarray(get_attr(op, name) or [0.0 if name == "offset" else 1.0], np.float32)
            if values.size not in (1, features):
                raise ValueError(f"{name} has {values.size} values for {features} features")
            tables.append(constant_table(op, f"{result_name(op)}_{name}", values, out_type))
        offset, scale = tables
        out = kb.alloc(result_name(op), x.shape, out_type)
        with kb.loop_nest(x.shape) as ivs:
            feature = [ivs[-1] if offset.size > 1 else kb.index(0)]
            centered = kb.alu("sub", kb.cast(kb.load(x, ivs), out_type), kb.load(offset, feature))
            feature = [ivs[-1] if scale.size > 1 else kb.index(0)]
            kb.store(kb.alu("mul", centered, kb.load(scale, feature)), out, ivs)
        return [out]


class ArrayFeatureExtractorLowering(OnnxLowering):
    """Z[..., k] = X[..., Y[k]] over the flattened indices Y (negative ones count from the end);
    a rank-1 X gives one row [1, K], as onnxruntime does. An index out of range is a compile
    error (constant) or `STATUS_BAD_INDEX` (`uop.bound_index`)."""

    op_names = ml_op_names("ArrayFeatureExtractor")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x, indices = (layout_of(v) for v in inputs(op))
        if x.rank == 1:
            x = as_rows(x)
        flat = indices.reshape((indices.size,))
        if flat is None:
            raise NotImplementedError("strided indices")
        out_shape = tensor_shape(op.results[0])
        if tuple(out_shape) != (*x.shape[:-1], indices.size):
            raise ValueError(f"output shape {out_shape} does not fit X {x.shape} and {indices.size} indices")
        out = kb.alloc(result_name(op), out_shape, x.element_type)
        width = x.shape[-1]
        known = constant_indices(op, 1, width)
        with kb.loop_nest(out_shape) as ivs:
            column = data_index(kb, kb.load(flat, [ivs[-1]]), width, known)
            kb.store(kb.load(x, [*ivs[:-1], column]), out, ivs)
        return [out]


class ImputerLowering(OnnxLowering):
    """Y = X with every `replaced_value` (NaN: every NaN) replaced by its column's imputed value
    (one value: every column's)."""

    op_names = ml_op_names("Imputer")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x = as_rows(layout_of(inputs(op)[0]))
        floats = get_attr(op, "imputed_value_floats") or []
        values, replaced = (
            (floats, get_attr(op, "replaced_value_float"))
            if floats
            else (get_attr(op, "imputed_value_int64s") or [], get_attr(op, "replaced_value_int64"))
        )
        if len(values) not in (1, x.shape[1]):
            raise ValueError(f"{len(values)} imputed values for {x.shape[1]} columns")
        element_type = x.element_type
        table = constant_table(op, f"{result_name(op)}_imputed", np.array(values), element_type)
        out = kb.alloc(result_name(op), x.shape, element_type)
        with kb.loop_nest(x.shape) as (row, column):
            value = kb.load(x, [row, column])
            if isinstance(replaced, float) and math.isnan(replaced):
                missing = kb.alu("cmpne", value, value)
            else:
                missing = kb.alu("cmpeq", value, kb.const(replaced, element_type))
            imputed = kb.load(table, [column if len(values) > 1 else kb.index(0)])
            kb.store(kb.where(missing, imputed, value), out, [row, column])
        return [Layout.contiguous(out.buffer, tensor_shape(op.results[0]))]


class LabelEncoderLowering(OnnxLowering):
    """Numeric keys to numeric values (lists or tensors), the default where no key matches; a
    key listed twice maps to its last value, as in ONNX's reference."""

    op_names = ml_op_names("LabelEncoder")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        if any(get_attr(op, f"{kind}_strings") for kind in ("keys", "values")):
            raise NotImplementedError("string keys or values (string tensors are out of scope)")
        keys, values = (self._listed(op, kind) for kind in ("keys", "values"))
        if keys is None or values is None or len(keys) != len(values):
            raise ValueError("keys and values must be given, one value per key")
        x = layout_of(inputs(op)[0])
        out_type = tensor_element_type(op.results[0])
        default = get_attr(op, "default_tensor")
        if default is None:
            default = get_attr(op, "default_float" if isinstance(out_type, AnyFloat) else "default_int64")
        name = result_name(op)
        key_table = constant_table(op, f"{name}_keys", np.asarray(keys), x.element_type)
        value_table = constant_table(op, f"{name}_values", np.asarray(values), out_type)
        out = kb.alloc(name, x.shape, out_type)
        with kb.loop_nest(x.shape) as ivs:
            value = kb.load(x, ivs)
            result = kb.define_acc(float(np.asarray(default).item()) if isinstance(out_type, AnyFloat)
                                   else int(np.asarray(default).item()), out_type)
            with kb.loop(len(keys)) as k:
                hit = kb.alu("cmpeq", value, kb.load(key_table, [k]))
                kb.acc_set(result, kb.where(hit, kb.load(value_table, [k]), kb.acc_get(result)))
            kb.store(kb.acc_get(result), out, ivs)
        return [out]

    @staticmethod
    def _listed(op: Operation, kind: str) -> list | None:
        for suffix in ("tensor", "floats", "int64s"):
            found = get_attr(op, f"{kind}_{suffix}")
            if found is not None and len(found):
                return np.asarray(found).ravel().tolist()
        return None


class OneHotEncoderLowering(OnnxLowering):
    """Y[..., c] = 1.0 where X[...] is category c (`cats_int64s`), else 0.0. With zeros=0 ONNX
    makes an unknown category a run-time error, which generated code cannot raise: refused."""

    op_names = ml_op_names("OneHotEncoder")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        if get_attr(op, "cats_strings"):
            raise NotImplementedError("string categories (string tensors are out of scope)")
        if not get_attr(op, "zeros"):
            raise NotImplementedError("zeros=0 (an unknown category is a run-time error); use zeros=1")
        categories = list(get_attr(op, "cats_int64s") or [])
        x = layout_of(inputs(op)[0])
        out_type = tensor_element_type(op.results[0])
        out_shape = tensor_shape(op.results[0])
        if tuple(out_shape) != (*x.shape, len(categories)):
            raise ValueError(f"output shape {out_shape} for input {x.shape} and {len(categories)} categories")
        table = constant_table(op, f"{result_name(op)}_categories", np.array(categories, np.int64), ml_compute_type(x.element_type))
        out = kb.alloc(result_name(op), out_shape, out_type)
        one, zero = kb.const(1.0, out_type), kb.const(0.0, out_type)
        with kb.loop_nest(out_shape) as ivs:
            value = kb.cast(kb.load(x, ivs[:-1]), ml_compute_type(x.element_type))
            kb.store(kb.where(kb.alu("cmpeq", value, kb.load(table, [ivs[-1]])), one, zero), out, ivs)
        return [out]


_NORMS = {"MAX": ("abs", "max"), "L1": ("abs", "add"), "L2": ("square", "add")}
"""Normalizer's norms: (each element's term, how the terms combine)."""


class NormalizerLowering(OnnxLowering):
    """Each row divided by its MAX (largest magnitude), L1 or L2 norm, at least 1e-30."""

    op_names = ml_op_names("Normalizer")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x = as_rows(layout_of(inputs(op)[0]))
        norm = get_attr(op, "norm")
        if norm not in _NORMS:
            raise ValueError(f"norm '{norm}' (MAX, L1 or L2)")
        term, combine = _NORMS[norm]
        out_type = tensor_element_type(op.results[0])
        out = kb.alloc(result_name(op), x.shape, out_type)
        with kb.loop(x.shape[0]) as row:
            total = kb.define_acc(0.0, out_type)
            with kb.loop(x.shape[1]) as column:
                value = kb.cast(kb.load(x, [row, column]), out_type)
                part = kb.alu("mul", value, value) if term == "square" else kb.alu("abs", value)
                kb.acc_set(total, kb.alu(combine, kb.acc_get(total), part))
            size = kb.alu("sqrt", kb.acc_get(total)) if term == "square" else kb.acc_get(total)
            size = kb.alu("max", size, kb.const(1e-30, out_type))
            with kb.loop(x.shape[1]) as column:
                value = kb.cast(kb.load(x, [row, column]), out_type)
                kb.store(kb.alu("div", value, size), out, [row, column])
        return [Layout.contiguous(out.buffer, tensor_shape(op.results[0]))]


PATTERNS = (
    BinarizerLowering(),
    ScalerLowering(),
    ArrayFeatureExtractorLowering(),
    ImputerLowering(),
    LabelEncoderLowering(),
    OneHotEncoderLowering(),
    NormalizerLowering(),
)

__all__ = ["PATTERNS", "BinarizerLowering", "ScalerLowering", "ArrayFeatureExtractorLowering", "ImputerLowering", "LabelEncoderLowering", "OneHotEncoderLowering", "NormalizerLowering"]
