"""The graph's inputs and outputs as the generated entry point takes them, and inputs made up for
the ones a user does not give. Below both the driver (which embeds inputs into a firmware image)
and the runtime (which calls a host build), so neither imports the other for them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from zant.errors import ZantError
from zant.ir.strings import encode


@dataclass
class TensorSignature:
    """One graph input or output as the generated entry point takes it."""

    name: str
    shape: list[int]
    dtype: str  # numpy dtype name
    # An output whose size depends on the data, compiled at its bound (`zant.frontend.bounded`):
    # the dimension holding the count; the extents output says how many entries are valid.
    bounded_dim: int | None = None
    extents: bool = False  # the int32 extents array of the bounded outputs (the last output)
    # A slot of a sequence output whose length is only known at run time (`resolve-sequences`):
    # the sequence's number among such outputs; the extents array's entry after the bounded
    # outputs' ones, at that number, says how many of its slots hold elements.
    sequence: int | None = None

    def __post_init__(self) -> None:
        # NumPy names string fields `bytesN` (bits); the signature spells them `S{CAP}` (bytes),
        # the type np.dtype reads back (zant.ir.strings)
        if self.dtype.startswith("bytes"):
            self.dtype = f"S{int(self.dtype[5:]) // 8}"

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def as_json(self) -> dict:
        """For the plan JSON; the bound fields only where they are set (other models' JSON stays
        as it was)."""
        entry = {"name": self.name, "shape": self.shape, "dtype": self.dtype}
        if self.bounded_dim is not None:
            entry["bounded_dim"] = self.bounded_dim
        if self.extents:
            entry["extents"] = True
        if self.sequence is not None:
            entry["sequence"] = self.sequence
        return entry


def caller_outputs(signatures: Sequence[TensorSignature]) -> list[TensorSignature]:
    """The outputs a caller reads: all but the extents array."""
    return [s for s in signatures if not getattr(s, "extents", False)]


def valid_parts(signatures: Sequence[TensorSignature], arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The outputs `NAME_predict` wrote (`arrays`, one per signature), as a caller reads them:
    each bounded output cut to the extent the extents array gives it (the k-th bounded output
    the k-th entry, clamped to its capacity), the slots of a run-time-length sequence past its
    length dropped (its entry after the bounded ones), the extents array dropped."""
    return [array for _, array in valid_outputs(signatures, arrays)]


def valid_outputs(
    signatures: Sequence[TensorSignature], arrays: Sequence[np.ndarray]
) -> list[tuple[TensorSignature, np.ndarray]]:
    """`valid_parts` with the signature of each output kept."""
    extents = [a for s, a in zip(signatures, arrays) if getattr(s, "extents", False)]
    entries = extents[0].reshape(-1).tolist() if extents else []
    counts = iter(entries)
    bounded = sum(getattr(s, "bounded_dim", None) is not None for s in signatures)
    filled: dict[int, int] = {}  # per run-time-length sequence: its slots seen so far
    result = []
    for signature, array in zip(signatures, arrays):
        dim = getattr(signature, "bounded_dim", None)
        if getattr(signature, "extents", False):
            continue
        if dim is not None:
            extent = min(max(int(next(counts)), 0), array.shape[dim])
            array = np.take(array, np.arange(extent), axis=dim)
        group = getattr(signature, "sequence", None)
        if group is not None:
            slot = filled.get(group, 0)
            filled[group] = slot + 1
            length = int(entries[bounded + group]) if bounded + group < len(entries) else 0
            if slot >= length:
                continue
        result.append((signature, array))
    return result


def check_inputs(
    signatures: Sequence[TensorSignature],
    given: Mapping[str, object],
    *,
    cast: bool = False,
    option: str = "--input",
    cast_hint: str = "pass --cast-inputs to convert it",
    frozen: Sequence[str] = (),
) -> dict[str, np.ndarray]:
    """The `given` inputs checked against the graph's: each names an input (not a `frozen` one)
    and has its shape; an array of another element type is refused (a float64 image, uint8
    pixels) unless `cast`, when it is converted. A Python number or list, which has no element
    type of its own, is converted. Returns the arrays, in the inputs' types. Errors are one line
    each, `option` naming where the value came from (`--input x: …`)."""
    known = {s.name: s for s in signatures}
    checked: dict[str, np.ndarray] = {}
    for name, value in given.items():
        signature = known.get(name)
        if signature is None:
            listed = ", ".join(f"'{n}'" for n in known) or "none"
            why = " (it is frozen by --freeze)" if name in frozen else ""
            raise ZantError(f"{option} {name}: the model has no input '{name}'{why} (inputs: {listed})")
        want = np.dtype(signature.dtype)
        if want.kind == "S":  # strings: UTF-8 in fields of the compiled capacity, never cut
            checked[name] = encode(value, signature.shape, want.itemsize, name)
            continue
        if isinstance(value, (np.ndarray, np.generic)) and value.dtype != want and not cast:
            raise ZantError(
                f"{option} {name}: the array is {value.dtype}, the input is declared {want} "
                f"(convert it first, or {cast_hint})"
            )
        try:
            array = np.asarray(value, dtype=want)
        except (TypeError, ValueError) as error:
            raise ZantError(f"{option} {name}: cannot convert the value to {want}: {error}") from None
        if list(array.shape) != list(signature.shape):
            declared = "x".join(map(str, signature.shape)) or "a scalar"
            raise ZantError(f"{option} {name}: the array has shape {list(array.shape)}, the input is declared {declared}")
        checked[name] = array
    return checked


def complete_feeds(
    signatures: Sequence[TensorSignature], given: Mapping[str, np.ndarray], seed: int = 0
) -> tuple[dict[str, np.ndarray], list[str]]:
    """The given inputs in graph order, converted to their dtypes, and seeded values for the rest
    (floats ~ N(0, 1), bools, small integers); also the names of the inputs made up."""
    known = {s.name for s in signatures}
    unknown = sorted(set(given) - known)
    if unknown:
        raise ZantError(f"--input names unknown inputs: {', '.join(unknown)} (the model has {', '.join(sorted(known))})")
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    for signature in signatures:
        kind = np.dtype(signature.dtype).kind
        if signature.name in given and kind == "S":
            feeds[signature.name] = encode(given[signature.name], signature.shape, np.dtype(signature.dtype).itemsize, signature.name)
        elif signature.name in given:
            feeds[signature.name] = np.asarray(given[signature.name]).astype(signature.dtype)
        elif kind == "f":
            feeds[signature.name] = rng.standard_normal(signature.shape).astype(signature.dtype)
        elif kind == "b":
            feeds[signature.name] = rng.integers(0, 2, signature.shape).astype(bool)
        else:
            feeds[signature.name] = rng.integers(0, 10, signature.shape).astype(signature.dtype)
    return feeds, [s.name for s in signatures if s.name not in given]
