"""The `ai.onnx.preview.training` optimizers: Adagrad, Adam and Momentum (and Nesterov momentum).

Each is an element-wise update of every (X, G, states) group (`optimizer_groups`) by one rule,
after factors computed once from the scalar inputs R (learning rate) and T (update count), which
are read at run time. The rules are ONNX's (`onnx/reference/ops/aionnx_preview_training`), in
the element type of X.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Attribute, Operation, SSAValue

from zant.dialects.onnx import OPTIMIZER_STATES, TRAINING_DOMAIN, get_attr, op_name, optimizer_groups
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout, layout_of, tensor_element_type


@dataclass
class Arithmetic:
    """Float arithmetic in one element type, attribute values as constants of it."""

    kb: KernelBuilder
    type: Attribute

    def c(self, value: float) -> SSAValue:
        return self.kb.const(float(value), self.type)

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.kb.alu("add", a, b)

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.kb.alu("sub", a, b)

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.kb.alu("mul", a, b)

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.kb.alu("div", a, b)

    def sqrt(self, a: SSAValue) -> SSAValue:
        return self.kb.alu("sqrt", a)

    def complement(self, a: float) -> SSAValue:
        """1 - a, a an attribute: in f32, the attributes' type (so says ONNX's reference too)."""
        return self.c(np.float32(1.0) - np.float32(a))

    def axpy(self, a: float, x: SSAValue, y: SSAValue) -> SSAValue:
        """a·x + y, a an attribute (the regularized gradient, the moving averages)."""
        return self.add(self.mul(self.c(a), x), y)


@dataclass(frozen=True)
class Step:
    """What every element's update reads: the attributes, the scalar factors computed once."""

    attrs: dict[str, float | str]
    factors: tuple[SSAValue, ...]


Prepare = Callable[[Arithmetic, dict, SSAValue, SSAValue], tuple[SSAValue, ...]]
"""(arithmetic, attributes, R, T) → the factors the update uses (R and T in the element type)."""
Update = Callable[[Arithmetic, Step, SSAValue, SSAValue, Sequence[SSAValue]], tuple[SSAValue, ...]]
"""(arithmetic, step, x, g, states) → (new x, *new states)."""


def _after_first_update(f: Arithmetic, t: SSAValue, then: SSAValue, otherwise: SSAValue) -> SSAValue:
    """`then` when T > 0, else `otherwise` (both rules treat the first update apart)."""
    return f.kb.where(f.kb.alu("cmplt", f.c(0.0), t), then, otherwise)


def _adagrad_factors(f: Arithmetic, attrs: dict, r: SSAValue, t: SSAValue):
    # The learning rate decays with the update count: R / (1 + T·decay_factor).
    return (f.div(r, f.axpy(attrs["decay_factor"], t, f.c(1.0))),)


def _adagrad(f: Arithmetic, step: Step, x: SSAValue, g: SSAValue, states: Sequence[SSAValue]):
    (rate,), (h,) = step.factors, states
    g = f.axpy(step.attrs["norm_coefficient"], x, g)
    h = f.add(h, f.mul(g, g))
    scale = f.add(f.sqrt(h), f.c(step.attrs["epsilon"]))
    return f.sub(x, f.div(f.mul(rate, g), scale)), h


def _adam_factors(f: Arithmetic, attrs: dict, r: SSAValue, t: SSAValue):
    # Bias correction of both moving averages, from the second update on (T > 0).
    power = lambda base: f.kb.alu("pow", f.c(base), t)  # noqa: E731
    corrected = f.div(
        f.mul(r, f.sqrt(f.sub(f.c(1.0), power(attrs["beta"])))), f.sub(f.c(1.0), power(attrs["alpha"]))
    )
    return (_after_first_update(f, t, corrected, r),)


def _adam(f: Arithmetic, step: Step, x: SSAValue, g: SSAValue, states: Sequence[SSAValue]):
    (rate,), (v, h), attrs = step.factors, states, step.attrs
    alpha, beta = attrs["alpha"], attrs["beta"]
    g = f.axpy(attrs["norm_coefficient"], x, g)
    v = f.axpy(alpha, v, f.mul(f.complement(alpha), g))
    h = f.axpy(beta, h, f.mul(f.complement(beta), f.mul(g, g)))
    scale = f.add(f.sqrt(h), f.c(attrs["epsilon"]))
    x = f.sub(x, f.mul(rate, f.div(v, scale)))
    return f.mul(f.complement(attrs["norm_coefficient_post"]), x), v, h


def _momentum_factors(f: Arithmetic, attrs: dict, r: SSAValue, t: SSAValue):
    # The gradient's coefficient is 1 at the first update (T = 0), beta after.
    if attrs["mode"] not in ("standard", "nesterov"):
        raise ValueError(f"mode '{attrs['mode']}' (expected 'standard' or 'nesterov')")
    return r, _after_first_update(f, t, f.c(attrs["beta"]), f.c(1.0))


def _momentum(f: Arithmetic, step: Step, x: SSAValue, g: SSAValue, states: Sequence[SSAValue]):
    (rate, beta), (v,), attrs = step.factors, states, step.attrs
    g = f.axpy(attrs["norm_coefficient"], x, g)
    v = f.add(f.mul(f.c(attrs["alpha"]), v), f.mul(beta, g))
    # Nesterov steps along the gradient plus the look-ahead momentum.
    direction = v if attrs["mode"] == "standard" else f.axpy(attrs["alpha"], v, g)
    return f.sub(x, f.mul(rate, direction)), v


RULES: dict[str, tuple[Prepare, Update]] = {
    "Adagrad": (_adagrad_factors, _adagrad),
    "Adam": (_adam_factors, _adam),
    "Momentum": (_momentum_factors, _momentum),
}
"""Optimizer → (its factors from R and T, its element-wise update)."""
assert RULES.keys() == OPTIMIZER_STATES.keys()


def _scalar(kb: KernelBuilder, value: SSAValue) -> SSAValue:
    """The element of a one-element tensor (the verifier checks R and T have one)."""
    layout = layout_of(value)
    return kb.load(layout, [kb.index(0) for _ in layout.shape])


class OptimizerLowering(OnnxLowering):
    """Adagrad, Adam, Momentum: the factors from R and T once, then one loop per group that
    reads x, g and the states and writes the new x and states."""

    op_names = frozenset(op_name(name, TRAINING_DOMAIN) for name in RULES)

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        schema = op.spec().schema
        prepare, update = RULES[schema.name]
        attrs = {name: get_attr(op, name) for name in schema.attributes}
        r, t = _scalar(kb, op.operands[0]), _scalar(kb, op.operands[1])
        steps: dict[Attribute, Step] = {}  # the factors, once per element type of the groups
        layouts: dict[SSAValue, Layout] = {}
        for group in optimizer_groups(op):
            element_type = tensor_element_type(group.x)
            f = Arithmetic(kb, element_type)
            if element_type not in steps:
                factors = prepare(f, attrs, kb.cast(r, element_type), kb.cast(t, element_type))
                steps[element_type] = Step(attrs, factors)
            sources = [layout_of(v) for v in (group.x, group.g, *group.states)]
            shape = sources[0].shape
            targets = {
                result: kb.alloc(result_name(op, result.index), shape, element_type)
                for result in (group.new_x, *group.new_states)
            }
            with kb.loop_nest(shape) as ivs:
                x, g, *states = (kb.load(source, ivs) for source in sources)
                for value, target in zip(update(f, steps[element_type], x, g, states), targets.values(), strict=True):
                    kb.store(value, target, ivs)
            layouts.update(targets)
        return [layouts[result] for result in op.results]


PATTERNS = (OptimizerLowering(),)

__all__ = ["PATTERNS", "OptimizerLowering", "RULES"]
