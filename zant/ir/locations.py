"""Provenance: which ONNX nodes an op was made of, as its MLIR location.

The frontend gives each onnx op the location `loc("NODE")` (a `NameLoc` of its node's name);
`onnx-to-uop` gives it to every op a node lowers to, and passes that merge the code of several
nodes (`fuse-loops`) give the result `loc(fused["A", "B"])`. Printed with `--print-debuginfo`,
parsed back by any xDSL parser.

`fuse_locations(*locations)` merges locations (flattened, unknown ones and repeats dropped);
`node_names(location)` lists the node names a location stands for, in order; `locate(ops, loc)`
gives the ops a pass makes in place of others the location of what they replace.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xdsl.dialects.builtin import ArrayAttr, FusedLoc, LocationAttr, NameLoc, NoneAttr, UnknownLoc
from xdsl.ir import Attribute, Operation


def _flatten(location: Attribute) -> Iterable[Attribute]:
    if isinstance(location, FusedLoc):
        for inner in location.locations:
            yield from _flatten(inner)
    elif not isinstance(location, UnknownLoc):
        yield location


def fuse_locations(*locations: Attribute) -> LocationAttr:
    """One location standing for all of `locations`: unknown if none is known, the one known
    location itself, or a `FusedLoc` of the distinct ones in order."""
    parts: list[Attribute] = []
    for location in locations:
        parts += [p for p in _flatten(location) if p not in parts]
    if not parts:
        return UnknownLoc()
    if len(parts) == 1:
        return parts[0]  # type: ignore[return-value]
    return FusedLoc(ArrayAttr(parts), NoneAttr())


def node_names(location: Attribute) -> list[str]:
    """The ONNX node names `location` stands for (empty for an unknown location)."""
    names: list[str] = []
    for part in _flatten(location):
        if isinstance(part, NameLoc) and part.desc.data not in names:
            names.append(part.desc.data)
    return names


def locate(ops: Iterable[Operation], location: Attribute) -> None:
    """Give `location` to each of `ops` and the ops nested in them whose location is unknown:
    what a pass calls on the ops it makes in place of others."""
    for op in ops:
        for inner in op.walk():
            if isinstance(inner.location, UnknownLoc):
                inner.location = location  # type: ignore[assignment]


def located(ops: Sequence[Operation], location: Attribute) -> Sequence[Operation]:
    """`ops`, `locate`d at `location`: for a rewrite's replacement ops."""
    locate(ops, location)
    return ops
