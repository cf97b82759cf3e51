"""What a target dialect's op declares about itself, so that adding one touches its dialect module
only: its Zig and its reference semantics, as data the generic code reads.

An op class of a target dialect (`arm_dsp`, `arm_mve`) that carries

* `ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]]`: the Zig functions its call may use (those it
  calls directly and the ones they call), each a name, the names it calls and its source;
* `zig_call(self, args) -> ZigCall`: its call of one of those helpers, given the Zig expressions
  of its operands in order, whose text is the Zig expression of its results (an op with several
  results returns an array of them);
* `ZIG_RESULTS: ClassVar[str]` (several results only): the name the printer gives that array;
* `reference(self, *operands) -> tuple`: what it computes, one value per result, in Python
  integers and NumPy arrays (a scalar integer operand is a Python int, a vector a NumPy array, a
  pointer operand a function `read(offsets)` giving the elements at those offsets from it as a
  NumPy array, after the interpreter checked they exist);
* `WRITES: ClassVar[tuple[str, ...]]` (an op that writes memory only): the names of the pointer
  operands it writes through, each given to `reference` as a function `write(offsets, values)`
  instead (`image.decode_jpeg` writes its decoded pixels so);
* `reach(self) -> dict[str, Reach]` (an op whose pointer arithmetic is its own: inline
  assembly, an unaligned word load): per pointer operand (by name), the bytes it reads or
  writes relative to that pointer, from its properties, which `verify-arena-plan` proves inside
  the pointer's buffer; exactly the hull of what its `reference` touches (tested);

is printed by the one declared-op case of `zant.backend.zig_cases` and run by the one declared-op
`@impl` of `zant.interpreter.functions`: neither names the op. `TargetOp` spells the protocol;
a target op need not inherit from it.

This module knows no dialect (zant.ir sits below them) and no backend or interpreter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class ZigHelper:
    """A Zig function the printer emits once per file when a printed call names it."""

    name: str
    source: str
    calls: tuple[str, ...] = ()
    """The other helpers its source uses (emitted with it), once per call in it: a helper its
    body calls twice is listed twice (each inline call counts towards the branch quota)."""
    inline: bool = True
    """An `inline fn`: Zig counts each call of it, and the inline calls in its body, against the
    comptime branch quota of the function it is called in (a plain `fn`, or a type, costs none)."""


@dataclass(frozen=True)
class ZigCall:
    """A call of a Zig helper: `helper(arguments…)` as text, the helper's name as data (so the
    printer knows which helper it printed without reading its own output)."""

    helper: str
    arguments: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.helper}({', '.join(self.arguments)})"


@dataclass(frozen=True)
class Reach:
    """The bytes [lo, hi) an op touches through one pointer operand, relative to the pointer
    (a hull: bytes between its accesses count as touched)."""

    lo: int
    hi: int

    @staticmethod
    def span(width: int, *axes: tuple[int, int]) -> Reach:
        """The hull of `width`-byte accesses at Σ k·stride over k < count for each `(count,
        stride)` axis (bytes): `span(4, (steps, a_step), (2, a_next))` is a word at s·a_step and
        one a_next further, s < steps. A set {0, d} is the axis (2, d)."""
        lo = sum(min(0, (count - 1) * stride) for count, stride in axes)
        hi = sum(max(0, (count - 1) * stride) for count, stride in axes)
        return Reach(lo, hi + width)

    @staticmethod
    def at(offsets: Sequence[int], width: int) -> Reach:
        """The hull of `width`-byte accesses at these byte offsets (at least one)."""
        return Reach(min(offsets), max(offsets) + width)

    def __str__(self) -> str:
        return f"[{self.lo}, {self.hi})"


Read = Callable[[Sequence[int]], np.ndarray]
"""A pointer operand in `reference`: the elements at these offsets from the pointer."""


@runtime_checkable
class TargetOp(Protocol):
    """The protocol of an op that declares its Zig and its semantics (see the module)."""

    ZIG_HELPERS: ClassVar[tuple[ZigHelper, ...]]

    def zig_call(self, args: Sequence[str]) -> ZigCall: ...

    def reference(self, *operands: Any) -> tuple[Any, ...]: ...


def declared_reach(op: object) -> dict[str, Reach] | None:
    """The bytes `op` touches through each of its pointer operands (its `reach()`), or None when
    it declares none."""
    reach = getattr(type(op), "reach", None)
    return reach(op) if callable(reach) else None


def declares_target_semantics(op_class: type) -> bool:
    """Whether ops of `op_class` print and run from their own declaration."""
    return all(hasattr(op_class, a) for a in ("ZIG_HELPERS", "zig_call", "reference"))


def wrap_signed(value: int, bits: int = 32) -> int:
    """`value` modulo 2^bits, as a signed `bits`-bit integer (two's complement wrap-around)."""
    half = 1 << (bits - 1)
    return ((value + half) & ((1 << bits) - 1)) - half
