"""The `ai.onnx.ml` linear models: LinearRegressor, LinearClassifier and SVMRegressor."""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, SSAValue
from zant.dialects.onnx import MlLinearClassifierOp, MlLinearRegressorOp, MlSVMRegressorOp, get_attr, inputs
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    constant_table,
    layout_of,
    tensor_element_type,
    tensor_shape,
)
from zant.passes.onnx_to_uop.ml import (
    POST_TRANSFORMS,
    as_rows,
    fold_alu,
    label_table,
    post_transform,
    store_labels,
)


def linear_scores(op: Operation, kb: KernelBuilder, result: int, classes: int = 0) -> Layout:
    """scores[n, k] = Σ_f x[n, f]·coefficients[k·F + f] + intercepts[k], then the post
    transform; one score row for two `classes` scores both, (-s, s), as ONNX's reference does."""
    x = as_rows(layout_of(inputs(op)[0]))
    rows, features = x.shape
    out_type = tensor_element_type(op.results[result])
    coefficients = np.asarray(get_attr(op, "coefficients"), np.float32)
    if features == 0 or coefficients.size % features:
        raise ValueError(f"{coefficients.size} coefficients for {features} features")
    count = coefficients.size // features
    intercepts = np.asarray(get_attr(op, "intercepts") or [0.0] * count, np.float32)
    if intercepts.size != count:
        raise ValueError(f"{intercepts.size} intercepts for {count} score columns")
    transform = get_attr(op, "post_transform")
    if transform not in POST_TRANSFORMS:
        raise ValueError(f"post_transform {transform}")
    name = result_name(op, result)
    weights = constant_table(op, f"{name}_coefficients", coefficients.reshape(count, features), out_type)
    bias = constant_table(op, f"{name}_intercepts", intercepts, out_type)
    both = count == 1 and classes == 2
    out = kb.alloc(name, (rows, 2 if both else count), out_type)
    with kb.loop(rows) as row:
        with kb.loop(count) as k:
            acc = kb.define_acc(0.0, out_type)
            with kb.loop(features) as f:
                kb.mulacc(acc, kb.load(x, [row, f]), kb.load(weights, [k, f]))
            score = kb.alu("add", kb.acc_get(acc), kb.load(bias, [k]))
            if both:
                kb.store(kb.alu("neg", score), out, [row, kb.index(0)])
                kb.store(score, out, [row, kb.index(1)])
            else:
                kb.store(score, out, [row, k])
        post_transform(kb, transform, out.shape[1], out, lambda t: [row, t], out_type)
    return out


_KERNELS = {
    # (x·v, |x - v|², γ, c0) → the kernel of the SVM ops
    "LINEAR": lambda kb, dot, distance, gamma, coef0, degree: dot,
    "POLY": lambda kb, dot, distance, gamma, coef0, degree: _power(kb, kb.alu("add", kb.alu("mul", gamma, dot), coef0), degree),
    "SIGMOID": lambda kb, dot, distance, gamma, coef0, degree: kb.alu("tanh", kb.alu("add", kb.alu("mul", gamma, dot), coef0)),
    "RBF": lambda kb, dot, distance, gamma, coef0, degree: kb.alu("exp", kb.alu("mul", kb.alu("neg", gamma), distance)),
}


def _power(kb: KernelBuilder, value: SSAValue, degree: int) -> SSAValue:
    """value^degree by repeated products (the degree is an integer attribute)."""
    return fold_alu(kb, "mul", [value] * degree) if degree > 0 else kb.const(1.0, value.type)


class SVMRegressorLowering(OnnxLowering):
    """Y[n] = Σ_j coefficients[j]·K(x[n], support_vectors[j]) + rho (linear without support
    vectors: x[n]·coefficients + rho); a one-class SVM answers ±1."""

    op_names = frozenset({MlSVMRegressorOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x = as_rows(layout_of(inputs(op)[0]))
        rows, features = x.shape
        out_type = tensor_element_type(op.results[0])
        supports = get_attr(op, "n_supports") or 0
        kernel = get_attr(op, "kernel_type") if supports else "LINEAR"
        if kernel not in _KERNELS:
            raise ValueError(f"kernel_type {kernel}")
        if get_attr(op, "post_transform") != "NONE":
            raise NotImplementedError(f"post_transform {get_attr(op, 'post_transform')} for SVMRegressor")
        coefficients = np.asarray(get_attr(op, "coefficients"), np.float32)
        vectors = (
            np.asarray(get_attr(op, "support_vectors"), np.float32).reshape(supports, features)
            if supports
            else coefficients.reshape(1, features)
        )
        weights = coefficients if supports else np.ones(1, np.float32)
        if weights.size != vectors.shape[0]:
            raise ValueError(f"{coefficients.size} coefficients for {supports} support vectors")
        params = list(get_attr(op, "kernel_params") or [0.0, 0.0, 0.0])
        name = result_name(op)
        vector_table = constant_table(op, f"{name}_vectors", vectors, out_type)
        weight_table = constant_table(op, f"{name}_weights", weights, out_type)
        out = kb.alloc(name, (rows, 1), out_type)
        c = lambda v: kb.const(float(v), out_type)
        rho = float((get_attr(op, "rho") or [0.0])[0])
        with kb.loop(rows) as row:
            total = kb.define_acc(0.0, out_type)
            with kb.loop(vectors.shape[0]) as j:
                dot, distance = kb.define_acc(0.0, out_type), kb.define_acc(0.0, out_type)
                with kb.loop(features) as f:
                    value, support = kb.cast(kb.load(x, [row, f]), out_type), kb.load(vector_table, [j, f])
                    kb.mulacc(dot, value, support)
                    difference = kb.alu("sub", value, support)
                    kb.mulacc(distance, difference, difference)
                similarity = _KERNELS[kernel](kb, kb.acc_get(dot), kb.acc_get(distance), c(params[0]), c(params[1]), int(params[2]))
                kb.mulacc(total, kb.load(weight_table, [j]), similarity)
            score = kb.alu("add", kb.acc_get(total), c(rho))
            if get_attr(op, "one_class"):
                score = kb.where(kb.alu("cmplt", c(0.0), score), c(1.0), c(-1.0))
            kb.store(score, out, [row, kb.index(0)])
        return [Layout.contiguous(out.buffer, tensor_shape(op.results[0]))]


class LinearRegressorLowering(OnnxLowering):
    """Y = X·coefficientsᵀ + intercepts, `targets` columns, then the post transform."""

    op_names = frozenset({MlLinearRegressorOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        return [linear_scores(op, kb, 0)]


class LinearClassifierLowering(OnnxLowering):
    """Scores as LinearRegressor's (two classes from one row: (-s, s)), labels of the best."""

    op_names = frozenset({MlLinearClassifierOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        width = tensor_shape(op.results[1])[-1]
        if width < 2:
            raise NotImplementedError("a single score column (labels by threshold)")
        labels = label_table(op, "classlabels_ints", width)
        scores = linear_scores(op, kb, 1, len(get_attr(op, "classlabels_ints") or []))
        return [store_labels(kb, op, scores, labels), scores]


PATTERNS = (
    LinearRegressorLowering(),
    LinearClassifierLowering(),
    SVMRegressorLowering(),
)

__all__ = ["PATTERNS", "LinearRegressorLowering", "LinearClassifierLowering", "SVMRegressorLowering", "linear_scores"]
