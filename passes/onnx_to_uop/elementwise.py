"""Element-wise ONNX ops: one loop nest over the output, operands read through broadcast views.

Each op is an entry in a table mapping it to the scalar code of one element, so adding an
element-wise op is one line; the two patterns below build the loops for all of them.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import Operation, SSAValue

from zant.dialects.onnx import get_attr, inputs
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    layout_of,
    tensor_element_type,
    tensor_shape,
)

ScalarFn = Callable[[KernelBuilder, Operation, list[SSAValue | None]], SSAValue]


def _alu(name: str) -> ScalarFn:
    return lambda kb, op, xs: kb.alu(name, *xs)


def _fold(name: str) -> ScalarFn:
    """A variadic op (Max, Min, Sum) as a left fold of a binary primitive."""

    def fn(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
        acc = xs[0]
        for x in xs[1:]:
            acc = kb.alu(name, acc, x)
        return acc

    return fn


def _relu(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    (x,) = xs
    return kb.alu("max", x, kb.const(0, x.type))


def _leaky_relu(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    (x,) = xs
    alpha = kb.const(get_attr(op, "alpha"), x.type)
    negative = kb.alu("cmplt", x, kb.const(0, x.type))
    return kb.where(negative, kb.alu("mul", alpha, x), x)


def _sigmoid(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    (x,) = xs
    one = kb.const(1, x.type)
    return kb.alu("div", one, kb.alu("add", one, kb.alu("exp", kb.alu("neg", x))))


def _clip(kb: KernelBuilder, op: Operation, xs: list[SSAValue | None]) -> SSAValue:
    # The optional min/max inputs (None when absent); the frontend converts models to the
    # current opset, where they replaced the old attributes.
    x, low, high = (xs + [None, None])[:3]
    assert x is not None
    if low is not None:
        x = kb.alu("max", x, low)
    if high is not None:
        x = kb.alu("min", x, high)
    return x


def _pow(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    base, exponent = xs
    return kb.alu("pow", base, kb.cast(exponent, base.type))


UNARY: dict[str, ScalarFn] = {
    "onnx.Relu": _relu,
    "onnx.LeakyRelu": _leaky_relu,
    "onnx.Sigmoid": _sigmoid,
    "onnx.Tanh": _alu("tanh"),
    "onnx.Exp": _alu("exp"),
    "onnx.Log": _alu("log"),
    "onnx.Abs": _alu("abs"),
    "onnx.Neg": _alu("neg"),
    "onnx.Sqrt": _alu("sqrt"),
    "onnx.Reciprocal": _alu("recip"),
    "onnx.Erf": _alu("erf"),
    "onnx.Floor": _alu("floor"),
    "onnx.Ceil": _alu("ceil"),
    "onnx.Clip": _clip,
}

BINARY: dict[str, ScalarFn] = {
    "onnx.Add": _alu("add"),
    "onnx.Sub": _alu("sub"),
    "onnx.Mul": _alu("mul"),
    "onnx.Div": _alu("div"),
    "onnx.Pow": _pow,
    "onnx.Max": _fold("max"),
    "onnx.Min": _fold("min"),
    "onnx.Sum": _fold("add"),
}


def lower_elementwise(op: Operation, kb: KernelBuilder, fn: ScalarFn) -> list[Layout]:
    """One loop nest over the output shape; each present operand broadcast to it."""
    out_shape = tensor_shape(op.results[0])
    operands = [None if v is None else layout_of(v).broadcast_to(out_shape) for v in inputs(op)]
    out = kb.alloc(result_name(op), out_shape, tensor_element_type(op.results[0]))
    with kb.loop_nest(out_shape) as ivs:
        # Absent optional inputs stay None, so each scalar function sees ONNX input positions.
        values = [None if layout is None else kb.load(layout, ivs) for layout in operands]
        kb.store(fn(kb, op, values), out, ivs)
    return [out]


class ElementwiseUnaryLowering(OnnxLowering):
    """Activations and unary math (Relu, Sigmoid, Exp, Clip …): `y[i] = f(x[i])`."""

    op_names = frozenset(UNARY)

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x = tensor_element_type(inputs(op)[0])
        if op.name in ("onnx.Sigmoid", "onnx.Tanh", "onnx.Erf", "onnx.Exp", "onnx.Log") and not isinstance(x, AnyFloat):
            raise ValueError(f"{op.name} on {x} is not defined")
        return lower_elementwise(op, kb, UNARY[op.name])


class ElementwiseBinaryLowering(OnnxLowering):
    """Arithmetic with NumPy broadcasting (Add, Mul, Pow, variadic Max …) through stride-0 views."""

    op_names = frozenset(BINARY)

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        return lower_elementwise(op, kb, BINARY[op.name])


PATTERNS = (ElementwiseUnaryLowering(), ElementwiseBinaryLowering())
