"""Index values as linear forms: `Σ coefficient·atom + constant`, built through `uop.add`,
`uop.sub`, `uop.mul` by a constant and index constants. Shared by the passes that reason about
addresses (`fuse-loops`, `vectorize`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from xdsl.dialects.builtin import IndexType
from xdsl.ir import Operation, SSAValue

from zant.dialects import uop

Linear = dict[SSAValue | None, int]
"""Coefficient per atom; the constant term under the key None."""

AFFINE_OPS = ("add", "sub", "mul")


def linear_form(value: SSAValue, opaque: Callable[[SSAValue], Linear | None]) -> Linear | None:
    """`value` as a linear form; any other value (not an affine index op or index constant, or
    a product of two non-constants) is `opaque(value)`: an atom of its own (`{value: 1}`), or
    None to give up."""
    owner = value.owner
    if isinstance(owner, uop.ConstOp) and isinstance(value.type, IndexType):
        return {None: owner.value.value.data}  # type: ignore[attr-defined]
    short = owner.name.removeprefix("uop.") if isinstance(owner, Operation) else ""
    if short not in AFFINE_OPS or not isinstance(value.type, IndexType):
        return opaque(value)
    lhs, rhs = (linear_form(v, opaque) for v in owner.operands)
    if lhs is None or rhs is None:
        return None
    if short == "mul":
        constant = next((e for e in (lhs, rhs) if e.keys() <= {None}), None)
        if constant is None:
            return opaque(value)
        other = rhs if constant is lhs else lhs
        return {k: c * constant.get(None, 0) for k, c in other.items()}
    sign = 1 if short == "add" else -1
    # The atoms in the order they first appear (a set's order follows the values' ids, which
    # differ from one run to the next: the index a pass rebuilds from the form, and the
    # generated code, would too).
    atoms = [*lhs, *(k for k in rhs if k not in lhs)]
    return {k: lhs.get(k, 0) + sign * rhs.get(k, 0) for k in atoms}


def atom(value: SSAValue) -> Linear:
    """`value` as an atom of its own (the `opaque` of a form that never gives up)."""
    return {value: 1}


def affine_terms(value: SSAValue, opaque: Callable[[SSAValue], Linear] = atom) -> tuple[dict[SSAValue, int], int]:
    """`value` as (the non-zero coefficient of each atom, the constant): `linear_form` with
    every other value an atom (or what `opaque` makes of it), so the terms of two indices
    compare equal exactly when they differ by a constant."""
    form = linear_form(value, opaque)
    assert form is not None, "an opaque that never gives up gives a form"
    constant = form.pop(None, 0)
    return {a: k for a, k in form.items() if k}, constant


def index_ops(terms: Iterable[tuple[SSAValue, int]], constant: int) -> list[Operation]:
    """The `uop` ops computing Σ k·atom + constant over `terms` (atom, k), in order (the inverse
    of `affine_terms`); the last one's result is the index."""
    ops: list[Operation] = [uop.ConstOp(constant, IndexType())]
    at = ops[0].results[0]
    for atom, k in terms:
        term = atom
        if k != 1:
            ops += [uop.ConstOp(k, IndexType())]
            ops += [uop.MulOp(atom, ops[-1].results[0])]
            term = ops[-1].results[0]
        ops.append(uop.AddOp(at, term))
        at = ops[-1].results[0]
    return ops
