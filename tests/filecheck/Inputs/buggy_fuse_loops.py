"""`buggy-fuse-loops`: a copy of `fuse-loops` with a seeded bug, for `--check-each-pass` tests.

The copy is made from the real pass's source when this plugin loads, with one line of its
legality check removed: rule 3 of `_legal_into_producer`, which refuses to fuse a consumer into
its producer when another buffer the consumer reads is written in between. Without it the fused
consumer reads that buffer before it is written. Loaded with `zant-opt --load-passes`.
"""

from __future__ import annotations

import inspect
import sys
import types

from zant.passes import fuse_loops

RULE = (
    "        if any(self._writers(b) & (span - {producer}) for b in loaded):\n"
    "            return None\n"
)
"""The check the copy drops (the plugin fails to load if fuse-loops no longer has it)."""

_source = inspect.getsource(fuse_loops)
if RULE not in _source:
    raise RuntimeError("fuse-loops no longer has the check this seeded bug removes: update RULE")
_copy = types.ModuleType(f"{__name__}_copy")
sys.modules[_copy.__name__] = _copy  # dataclasses look a class's module up while defining it
exec(compile(_source.replace(RULE, ""), "<buggy fuse_loops copy>", "exec"), _copy.__dict__)


class BuggyFuseLoopsPass(_copy.FuseLoopsPass):
    """fuse-loops without its write-in-between check (seeded bug)."""

    name = "buggy-fuse-loops"
