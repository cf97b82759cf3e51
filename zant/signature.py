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


@dataclass
class TensorSignature:
    """One graph input or output as the generated entry point takes it."""

    name: str
    shape: list[int]
    dtype: str  # numpy dtype name

    @property
    def size(self) -> int:
        return math.prod(self.shape)


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
        if signature.name in given:
            feeds[signature.name] = np.asarray(given[signature.name]).astype(signature.dtype)
        elif kind == "f":
            feeds[signature.name] = rng.standard_normal(signature.shape).astype(signature.dtype)
        elif kind == "b":
            feeds[signature.name] = rng.integers(0, 2, signature.shape).astype(bool)
        else:
            feeds[signature.name] = rng.integers(0, 10, signature.shape).astype(signature.dtype)
    return feeds, [s.name for s in signatures if s.name not in given]
