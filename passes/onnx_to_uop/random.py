"""Random ops with a `seed`: RandomUniform, RandomNormal, RandomUniformLike and RandomNormalLike
as constants, Bernoulli as a comparison of its input with draws made at compile time.

ONNX leaves the generator behind `seed` to the implementation. Zant takes, as for a seeded
Dropout (`movement.DropoutLowering`), NumPy's legacy MT19937 stream that ONNX's reference draws
(`onnx/reference/ops/_op_common_random.py`): `numpy.random.RandomState(int(seed))`, reseeded on
every call, so a seeded random op gives the same values on every call. Those values depend on
the seed and the shape only, never on the data, so they are drawn here.

Without a seed every call must draw fresh values, which compiled code without a generator of
its own cannot do: a compile error naming the node (as Dropout in training mode).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import Float64Type
from xdsl.ir import Operation

from zant.dialects.onnx import (
    BernoulliOp,
    RandomNormalLikeOp,
    RandomNormalOp,
    RandomUniformLikeOp,
    RandomUniformOp,
    get_attr,
    inputs,
)
from zant.ir.types import numpy_dtype
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout, layout_of, tensor_element_type, tensor_shape


def random_state(op: Operation) -> np.random.RandomState:
    """The reference's generator for `op`'s `seed`; NotImplementedError without one."""
    seed = get_attr(op, "seed")
    if seed is None:
        raise NotImplementedError(
            f"{op.name.removeprefix('onnx.')} without a seed attribute draws fresh values on every "
            "call, which compiled code cannot reproduce (give it a seed)"
        )
    if not 0 <= int(seed) < 2**32:
        raise ValueError(f"seed {seed} is outside [0, 2**32), the seeds of NumPy's RandomState")
    return np.random.RandomState(int(seed))


class RandomTensorLowering(OnnxLowering):
    """RandomUniform(Like), RandomNormal(Like) with a seed: the reference's values as a constant.

    The reference draws float64 (`rand` / `randn` of the output's shape), rounds them to the
    output type, then scales and shifts in that type (`(high - low)` and `low`, or `scale` and
    `mean`, as NumPy scalars of the output type); the same statements here give the same bits."""

    op_names = frozenset(op.name for op in (RandomUniformOp, RandomNormalOp, RandomUniformLikeOp, RandomNormalLikeOp))

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        result = op.results[0]
        shape, element_type = tensor_shape(result), tensor_element_type(result)
        dtype = numpy_dtype(element_type)
        state = random_state(op)
        if isinstance(op, RandomUniformOp | RandomUniformLikeOp):
            values = state.rand(*shape).astype(dtype)
            values *= dtype.type(get_attr(op, "high") - get_attr(op, "low"))
            values += dtype.type(get_attr(op, "low"))
        else:
            values = state.randn(*shape).astype(dtype)
            values *= dtype.type(get_attr(op, "scale"))
            values += dtype.type(get_attr(op, "mean"))
        return [kb.constant(result_name(op), np.asarray(values, dtype).reshape(shape), element_type)]


class BernoulliLowering(OnnxLowering):
    """Bernoulli with a seed: element i is 1 with probability p_i, drawn as the reference does.

    The reference is `RandomState(seed).binomial(1, p)`. NumPy's legacy binomial takes exactly one
    uniform draw u_i (`random_sample`, float64) per element, whatever p_i (0 and 1 included; checked
    against NumPy on 5,000 seeds, 148,918 elements, tests/test_random_ops.py), and for n = 1 its
    inversion gives 1 where u_i > 1 - p_i when p_i <= 0.5, else where u_i <= 1 - (1 - p_i), in
    float64 (NumPy compares with exp(log(q)) for q, equal to q but for a last-place rounding). The
    draws are a float64 constant of the input's shape, p is read at run time."""

    op_names = frozenset({BernoulliOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x = layout_of(inputs(op)[0])
        result = op.results[0]
        f64 = Float64Type()
        draws = kb.constant(f"{result_name(op)}_draws", random_state(op).random_sample(x.shape), f64)
        out = kb.alloc(result_name(op), x.shape, tensor_element_type(result))
        one, half = kb.const(1.0, f64), kb.const(0.5, f64)
        with kb.loop_nest(x.shape) as ivs:
            p = kb.cast(kb.load(x, ivs), f64)
            u = kb.load(draws, ivs)
            q = kb.alu("sub", one, p)
            low = kb.alu("cmplt", q, u)  # p <= 0.5: u > 1 - p
            high = kb.alu("cmple", u, kb.alu("sub", one, q))  # else: u <= 1 - (1 - p)
            hit = kb.where(kb.alu("cmple", p, half), low, high)
            kb.store(kb.cast(hit, out.element_type), out, ivs)
        return [out]


PATTERNS = (RandomTensorLowering(), BernoulliLowering())
