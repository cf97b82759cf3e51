"""Static bounds of index values and of the elements a `uop.gep` can address.

Bounds come from loop ranges, constants and index arithmetic; an index loaded from memory has
none. `verify-arena-plan` uses them to prove every scratch access in bounds, and every gep
marked `inbounds` (`uop.gep inbounds`, whose address the printer leaves unchecked) whichever pass
marked it; `mark-inbounds` to mark the geps proven in bounds.
"""

from __future__ import annotations

from xdsl.ir import Block, SSAValue

from zant.dialects import uop
from zant.ir.target_ops import Reach
from zant.ir.types import element_bits


def index_bounds(value: SSAValue, cache: dict[SSAValue, tuple[int, int] | None]) -> tuple[int, int] | None:
    """Static [low, high] of an index value, or None if unknown."""
    if value in cache:
        return cache[value]
    result: tuple[int, int] | None = None
    owner = value.owner
    if isinstance(owner, Block):
        loop = owner.parent_op()
        if isinstance(loop, uop.RangeOp) and loop.trip_count > 0:
            result = (loop.start.data, loop.start.data + loop.step.data * (loop.trip_count - 1))
    elif isinstance(owner, uop.ConstOp):
        v = owner.value.value.data
        result = (int(v), int(v))
    elif len(owner.operands) in (1, 2):
        bounds = [index_bounds(o, cache) for o in owner.operands]
        if all(b is not None for b in bounds):
            result = _combine(owner.name.removeprefix("uop."), bounds)  # type: ignore[arg-type]
    cache[value] = result
    return result


def _combine(name: str, bounds: list[tuple[int, int]]) -> tuple[int, int] | None:
    if len(bounds) == 1:
        (lo, hi), = bounds
        return {"neg": (-hi, -lo), "abs": (0 if lo <= 0 <= hi else min(abs(lo), abs(hi)), max(abs(lo), abs(hi)))}.get(name)
    (a, b), (c, d) = bounds
    if name == "add":
        return a + c, b + d
    if name == "sub":
        return a - d, b - c
    if name == "mul":
        products = (a * c, a * d, b * c, b * d)
        return min(products), max(products)
    if name == "max":
        return max(a, c), max(b, d)
    if name == "min":
        return min(a, c), min(b, d)
    if name == "div" and a >= 0 and c > 0:
        return a // d, b // c
    if name == "rem" and a >= 0 and c > 0:
        return 0, min(b, d - 1)
    return None


def gep_element_range(gep: uop.GepOp, cache) -> tuple[int, int] | None:
    """The lowest and highest buffer element a gep can address, or None if unknown."""
    strides, low = gep.layout
    high = low
    for index, stride in zip(gep.indices, strides):
        bounds = index_bounds(index, cache)
        if bounds is None:
            return None
        ends = (bounds[0] * stride, bounds[1] * stride)
        low, high = low + min(ends), high + max(ends)
    return low, high


ASM_REACH_ATTRIBUTE = "zant.asm_reach"
"""The module attribute in which `verify-arena-plan` counts the pointers of the ops that declare
their reach: `{checked = N, unresolved = M}` (those with static bounds, proved inside their
buffers, and those without); the plan JSON's `asm_reach`."""


def pointer_elements(pointer: SSAValue, cache) -> tuple[SSAValue, int, int] | None:
    """The buffer a pointer addresses and the lowest and highest element of it the pointer can
    start at, for every index value its loops give (a `uop.gep` of the buffer or of a view of
    it), or None: not a gep, or an index with no static bound (one loaded from memory, or an
    argument of the function)."""
    gep = pointer.owner
    if not isinstance(gep, uop.GepOp):
        return None
    reach = gep_element_range(gep, cache)
    return None if reach is None else (gep.buffer, *reach)


def pointer_bytes(pointer: SSAValue, cache) -> tuple[SSAValue, int, int] | None:
    """`pointer_elements` in bytes: the lowest and highest byte the pointer can start at. Bytes
    of packed elements (int4) count from the byte holding the element."""
    found = pointer_elements(pointer, cache)
    if found is None:
        return None
    buffer, low, high = found
    bits = element_bits(uop.memory_element_type(buffer.type))
    return buffer, low * bits // 8, high * bits // 8


def access_span(access) -> int:
    """How many elements past its address an access reaches: 0 for a scalar load or store,
    (lanes - 1) · stride for a vector one."""
    if isinstance(access, uop.VLoadOp):
        return (uop.lanes(access.result.type) - 1) * access.element_stride
    if isinstance(access, uop.VStoreOp):
        return (uop.lanes(access.value.type) - 1) * access.element_stride
    return 0


VECTOR_REACH_ATTRIBUTE = "zant.vector_reach"
"""The module attribute in which `verify-arena-plan` counts the vector loads and stores:
`{checked = N, unresolved = M}`, as `ASM_REACH_ATTRIBUTE` counts the asm ops' pointers; the plan
JSON's `vector_reach`."""

INBOUNDS_REACH_ATTRIBUTE = "zant.inbounds_reach"
"""The module attribute in which `verify-arena-plan` counts the `inbounds` geps (whose addresses
the printer leaves unchecked): `{checked = N, unresolved = M}`, as `ASM_REACH_ATTRIBUTE` counts
the asm ops' pointers; the plan JSON's `inbounds_reach`."""

REACH_ATTRIBUTES = {
    "asm_reach": ASM_REACH_ATTRIBUTE, "vector_reach": VECTOR_REACH_ATTRIBUTE, "inbounds_reach": INBOUNDS_REACH_ATTRIBUTE,
}
"""Each count's key in the plan JSON, and its module attribute."""


def vector_reach(access: uop.VLoadOp | uop.VStoreOp, start: int = 0) -> Reach:
    """The bytes a vector access touches relative to its pointer's byte (`pointer_bytes`), its
    pointer at element `start` of its buffer: its lanes' hull, `access_span` elements on and the
    last lane whole. Lanes of packed elements (int4) end in a byte that depends on where in its
    byte the first starts (`start`); whole-byte lanes do not."""
    bits = element_bits(access.ptr.type.element_type)  # type: ignore[attr-defined]
    return Reach(0, -(-(start + access_span(access) + 1) * bits // 8) - start * bits // 8)


SMALLEST_ISIZE_LIMIT = 2**31 - 1
"""The largest `isize` of the smallest target (32-bit): every part of a proven address fits it."""


def _fits(low: int, high: int) -> bool:
    return -SMALLEST_ISIZE_LIMIT <= low and high <= SMALLEST_ISIZE_LIMIT


def _arithmetic_fits(value: SSAValue, cache) -> bool:
    """Whether every index add/sub/mul computing `value` stays within every target's `isize`."""
    owner = value.owner
    if not isinstance(owner, uop.AddOp | uop.SubOp | uop.MulOp):
        return True
    bounds = index_bounds(value, cache)
    return bounds is not None and _fits(*bounds) and all(_arithmetic_fits(o, cache) for o in owner.operands)


def gep_access_range(gep: uop.GepOp, cache) -> tuple[int, int] | None:
    """The lowest and highest buffer element the gep and the accesses through it reach (a vector
    load's or store's lanes: `access_span` elements past the gep's last), for every index value
    its loops give, or None if unknown (`gep_element_range`)."""
    reach = gep_element_range(gep, cache)
    if reach is None:
        return None
    return reach[0], reach[1] + max((access_span(use.operation) for use in gep.result.uses), default=0)


def proven_in_bounds(gep: uop.GepOp, cache) -> bool:
    """Whether every element the gep and the (vector) accesses through it reach lies inside its
    buffer (`gep_access_range`), for every index value its loops give, and no part of its
    address overflows: each index's arithmetic, each product by a stride and each partial sum
    (in index order, the offset last: as `linearize-geps` computes it) fits a 32-bit `isize`."""
    reach = gep_access_range(gep, cache)
    if reach is None or reach[0] < 0 or reach[1] >= gep.buffer.type.size.data:  # type: ignore[attr-defined]
        return False
    strides, offset = gep.layout
    low = high = 0
    for index, stride in zip(gep.indices, strides):
        lo, hi = index_bounds(index, cache)  # type: ignore[misc]  (known: reach is)
        ends = (lo * stride, hi * stride)
        low, high = low + min(ends), high + max(ends)
        if not (_arithmetic_fits(index, cache) and _fits(min(ends), max(ends)) and _fits(low, high)):
            return False
    return _fits(low + offset, high + offset)
