"""`fold-batchnorm`: fold per-channel affine ops into the weights of the Conv/Gemm producing them.

An inference BatchNormalization, an Add of a per-channel constant and a Mul by one are all
y = x·s[c] + t[c] along the channel axis (axis 1) of x. When x is the only use of a Conv,
ConvTranspose or Gemm with constant weights, the affine map moves into those weights:

    W' = W·s (along W's output-channel axis)      B' = B·s + t      (B absent: 0)

so the op disappears with its intermediate tensor. For BatchNormalization
s = gamma / sqrt(var + eps) and t = beta − mean·s. A Gemm's C is scaled by beta first
(C' = beta·C·s + t, beta' = 1). A MatMul of a 2-D A and a constant 2-D B followed by the Add of
a constant becomes a Gemm with that constant as C, which the folds above then extend.

Arithmetic is in float64, the result stored in the weight's element type. Nothing fires unless
the weights, bias and the other operand are `onnx.Constant`, the producer's result has one use,
the element type is floating point, and (BatchNormalization) it is the one-result inference form.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, Float32Type, FloatAttr, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint

from zant.dialects.onnx import (
    AddOp,
    BatchNormalizationOp,
    ConstantOp,
    ConvOp,
    ConvTransposeOp,
    GemmOp,
    MatMulOp,
    MulOp,
    OnnxOp,
    get_attr,
    inputs,
)
from zant.ir.locations import fuse_locations
from zant.ir.resources import constant_array, make_constant_attr
from zant.ir.types import numpy_dtype

# --------------------------------------------------------------------------------------------
# Constants.
# --------------------------------------------------------------------------------------------


def _is_constant(value: SSAValue | None) -> bool:
    owner = value.owner if value is not None else None
    return isinstance(owner, ConstantOp) and "value" in owner.properties


def _constant(value: SSAValue | None) -> np.ndarray | None:
    """The value of an `onnx.Constant` result, None for anything else."""
    return constant_array(value.owner) if _is_constant(value) else None


def _split_constant(op: OnnxOp) -> tuple[SSAValue, SSAValue] | None:
    """(the other operand, the constant one) of a binary op with one constant operand."""
    a, b = inputs(op)
    if _is_constant(a) == _is_constant(b):
        return None
    return (b, a) if _is_constant(a) else (a, b)


def _new_constant(
    rewriter: PatternRewriter, array: np.ndarray, like: SSAValue, name: str, before: Operation
) -> SSAValue:
    """An `onnx.Constant` holding `array` in `like`'s element type, inserted before `before`."""
    dtype = numpy_dtype(like.type.get_element_type())
    value = np.asarray(array, dtype=dtype)
    constant = ConstantOp.from_onnx(
        [],
        [TensorType(like.type.get_element_type(), value.shape)],
        {"value": make_constant_attr(value, name)},
    )
    constant.results[0].name_hint = name
    rewriter.insert(constant, InsertPoint.before(before))
    return constant.results[0]


def _erase_if_unused(rewriter: PatternRewriter, values: list[SSAValue | None]) -> None:
    """Erase the constants among `values` that the rewrite left without uses."""
    for value in values:
        if _is_constant(value) and not value.uses:
            rewriter.erase(value.owner)


def _is_float_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and numpy_dtype(value.type.get_element_type()).kind == "f"


def _channel_vector(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """The values along axis 1 of a constant that, broadcast against a tensor of `shape`, varies
    along that axis only and leaves the shape unchanged; None for any other constant."""
    if len(shape) < 2 or array.ndim > len(shape):
        return None
    aligned = array.reshape((1,) * (len(shape) - array.ndim) + array.shape)
    if aligned.shape[1] not in (1, shape[1]):
        return None
    if any(size != 1 for axis, size in enumerate(aligned.shape) if axis != 1):
        return None
    return np.broadcast_to(aligned.reshape(-1).astype(np.float64), (shape[1],))


# --------------------------------------------------------------------------------------------
# Producers: how the output channel c of each op scales with its weight.
# --------------------------------------------------------------------------------------------


def _scale_conv_weight(op: OnnxOp, weight: np.ndarray, s: np.ndarray) -> np.ndarray:
    # W is [M, C/group, k...]: output channel m is W[m].
    return weight * s.reshape((-1,) + (1,) * (weight.ndim - 1))


def _scale_conv_transpose_weight(op: OnnxOp, weight: np.ndarray, s: np.ndarray) -> np.ndarray:
    # W is [C, M/group, k...]: W[ci, j] feeds output channel (ci's group)·M/group + j.
    per_group_in = weight.shape[0] // get_attr(op, "group")
    out_channel = (np.arange(weight.shape[0])[:, None] // per_group_in) * weight.shape[1]
    out_channel = out_channel + np.arange(weight.shape[1])[None, :]
    return weight * s[out_channel].reshape(out_channel.shape + (1,) * (weight.ndim - 2))


def _scale_gemm_weight(op: OnnxOp, weight: np.ndarray, s: np.ndarray) -> np.ndarray:
    # B is [K, N] (transB = 0) or [N, K]: output column n is B[:, n] or B[n].
    return weight * (s[:, None] if get_attr(op, "transB") else s[None, :])


WEIGHT_SCALERS: dict[type[OnnxOp], Callable[[OnnxOp, np.ndarray, np.ndarray], np.ndarray]] = {
    ConvOp: _scale_conv_weight,
    ConvTransposeOp: _scale_conv_transpose_weight,
    GemmOp: _scale_gemm_weight,
}
"""Producer op → W' from W and the per-output-channel scale s. W is input 1, the bias input 2."""


def _fold_into_producer(
    rewriter: PatternRewriter, consumer: Operation, x: SSAValue, s: np.ndarray, t: np.ndarray
) -> None:
    """Replace `consumer`, which computes x·s[c] + t[c], by a copy of x's producer with folded
    weights; the producer's name stays for diagnostics, the consumer's result name for the value."""
    producer = x.owner
    assert isinstance(producer, OnnxOp)
    operands = inputs(producer)
    weight, bias = operands[1], operands[2] if len(operands) > 2 else None
    properties = dict(producer.properties)
    bias_scale = 1.0
    if isinstance(producer, GemmOp):
        bias_scale = get_attr(producer, "beta")
        properties["beta"] = FloatAttr(1.0, Float32Type())
    new_weight = WEIGHT_SCALERS[type(producer)](producer, _constant(weight).astype(np.float64), s)
    old_bias = _constant(bias).astype(np.float64) if bias is not None else np.float64(0.0)
    new_bias = bias_scale * old_bias * s + t
    # A chain of folds names its constants once: w → w_folded, absent bias → w_bias_folded.
    weight_name = (weight.name_hint or "weight").removesuffix("_folded")
    operands[1] = _new_constant(rewriter, new_weight, weight, f"{weight_name}_folded", producer)
    if bias is not None or np.any(new_bias != 0):
        bias_name = f"{weight_name}_bias" if bias is None else bias.name_hint or "bias"
        bias_name = bias_name.removesuffix("_folded")
        operands[2:] = [_new_constant(rewriter, new_bias, weight, f"{bias_name}_folded", producer)]
    else:
        properties.pop("beta", None)
    folded = type(producer).from_onnx(
        operands, [consumer.results[0].type], properties, dict(producer.attributes)
    )
    folded.results[0].name_hint = consumer.results[0].name_hint
    folded.location = fuse_locations(producer.location, consumer.location)
    old_operands = [*inputs(consumer), *inputs(producer)]
    rewriter.replace(consumer, folded)
    rewriter.erase(producer)
    _erase_if_unused(rewriter, old_operands)


def _foldable_producer(value: SSAValue | None, consumer: Operation) -> bool:
    """`value` is the single-use float result of a Conv/ConvTranspose/Gemm with constant weights
    (and bias), of the consumer's result type."""
    producer = value.owner if value is not None else None
    if type(producer) not in WEIGHT_SCALERS:
        return False
    if not value.has_one_use() or value.type != consumer.results[0].type or not _is_float_tensor(value):
        return False
    weights = inputs(producer)[1:3]
    return all(_is_constant(w) for w in weights if w is not None)


# --------------------------------------------------------------------------------------------
# Consumers: one pattern per fold, each saying which x·s + t it computes.
# --------------------------------------------------------------------------------------------


class _ChannelAffineFold(RewritePattern, ABC):
    """Fold an op that computes x·s[c] + t[c] into the Conv/ConvTranspose/Gemm producing x."""

    op_type: ClassVar[type[OnnxOp]]
    """The consumer op this fold matches."""

    @abstractmethod
    def affine_input(self, op: OnnxOp) -> SSAValue | None:
        """The input x that `op` maps, None when the op has no such form."""

    @abstractmethod
    def channel_affine(self, op: OnnxOp, x: SSAValue) -> tuple[np.ndarray, np.ndarray] | None:
        """(s, t) in float64 when `op` maps x to x·s[c] + t[c], else None."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, self.op_type) or len(op.results) != 1:
            return
        # The cheap structural checks first: constants are decoded only for a foldable chain.
        x = self.affine_input(op)
        if x is None or not _foldable_producer(x, op):
            return
        affine = self.channel_affine(op, x)
        if affine is not None:
            _fold_into_producer(rewriter, op, x, *affine)


class FoldBatchNormalization(_ChannelAffineFold):
    """Conv/ConvTranspose/Gemm → BatchNormalization (inference, constant statistics)."""

    op_type = BatchNormalizationOp

    def affine_input(self, op: OnnxOp) -> SSAValue | None:
        x, *statistics = inputs(op)
        foldable = not get_attr(op, "training_mode") and all(_is_constant(v) for v in statistics)
        return x if foldable else None

    def channel_affine(self, op: OnnxOp, x: SSAValue):
        gamma, beta, mean, var = (_constant(v).astype(np.float64) for v in inputs(op)[1:])
        s = gamma / np.sqrt(var + get_attr(op, "epsilon"))
        return s, beta - mean * s


class _ChannelConstantFold(_ChannelAffineFold):
    """A commutative binary op of the producer's result and a per-channel constant."""

    @abstractmethod
    def affine_of(self, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(s, t) of the op with per-channel constant k."""

    def affine_input(self, op: OnnxOp) -> SSAValue | None:
        split = _split_constant(op)
        return None if split is None else split[0]

    def channel_affine(self, op: OnnxOp, x: SSAValue):
        _, k = _split_constant(op)
        vector = _channel_vector(_constant(k), tuple(x.type.get_shape()))
        return None if vector is None else self.affine_of(vector)


class FoldChannelAdd(_ChannelConstantFold):
    """Conv/ConvTranspose/Gemm → Add of a per-channel constant: into the bias."""

    op_type = AddOp

    def affine_of(self, k):
        return np.ones_like(k), k


class FoldChannelMul(_ChannelConstantFold):
    """Conv/ConvTranspose/Gemm → Mul by a per-channel constant: into the weights and bias."""

    op_type = MulOp

    def affine_of(self, k):
        return k, np.zeros_like(k)


class MatMulAddToGemm(RewritePattern):
    """MatMul(A, B) → Add(constant C), A and B 2-D, B constant: Gemm(A, B, C).

    Any C that broadcasts to the MatMul's [N, M] result without changing it is a valid Gemm C.
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, AddOp):
            return
        split = _split_constant(op)
        matmul = split[0].owner if split is not None else None
        if not isinstance(matmul, MatMulOp):
            return
        product, c = split
        left, right = inputs(matmul)
        if not (
            product.has_one_use()
            and product.type == op.results[0].type
            and _is_float_tensor(product)
            and _is_constant(right)
            and all(isinstance(v.type, TensorType) and v.type.get_num_dims() == 2 for v in (left, right))
            and c.type.get_num_dims() <= 2
        ):
            return
        gemm = GemmOp.from_onnx(
            [left, right, c], [op.results[0].type], {}, dict(matmul.attributes)
        )
        gemm.results[0].name_hint = op.results[0].name_hint
        gemm.location = fuse_locations(matmul.location, op.location)
        rewriter.replace(op, gemm)
        rewriter.erase(matmul)


@dataclass(frozen=True)
class FoldBatchNormPass(ModulePass):
    """Fold BatchNormalization and per-channel Add/Mul into Conv/ConvTranspose/Gemm weights;
    MatMul + constant Add into Gemm."""

    name = "fold-batchnorm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Folded weights live in the builtin dialect's resource section: printing it needs the
        # dialect loaded.
        if all(d.name != "builtin" for d in ctx.loaded_dialects):
            if "builtin" in ctx.registered_dialect_names:
                ctx.load_registered_dialect("builtin")
            else:
                ctx.load_dialect(Builtin)
        # dce_enabled=False: erasing unrelated dead ops is the `dce` pass's job, not this one's.
        patterns = GreedyRewritePatternApplier(
            [
                MatMulAddToGemm(),
                FoldBatchNormalization(),
                FoldChannelAdd(),
                FoldChannelMul(),
            ],
            dce_enabled=False,
        )
        PatternRewriteWalker(patterns).rewrite_module(op)


__all__ = ["FoldBatchNormPass"]
