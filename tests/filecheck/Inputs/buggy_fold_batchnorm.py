"""`buggy-fold-batchnorm`: a copy of `fold-batchnorm` with a seeded bug, for `--check-each-pass`
tests of the onnx-level passes.

The copy is made from the real pass's source when this plugin loads, with epsilon left out of
the folded scale: gamma / sqrt(var) instead of gamma / sqrt(var + epsilon). Loaded with
`zant-opt --load-passes`.
"""

from __future__ import annotations

import inspect
import sys
import types

from zant.passes import fold_batchnorm

SCALE = 's = gamma / np.sqrt(var + get_attr(op, "epsilon"))'
"""The line the copy gets wrong (the plugin fails to load if fold-batchnorm no longer has it)."""

_source = inspect.getsource(fold_batchnorm)
if SCALE not in _source:
    raise RuntimeError("fold-batchnorm no longer has the line this seeded bug changes: update SCALE")
_copy = types.ModuleType(f"{__name__}_copy")
sys.modules[_copy.__name__] = _copy  # dataclasses look a class's module up while defining it
exec(compile(_source.replace(SCALE, "s = gamma / np.sqrt(var)"), "<buggy fold_batchnorm copy>", "exec"), _copy.__dict__)


class BuggyFoldBatchNormPass(_copy.FoldBatchNormPass):
    """fold-batchnorm without epsilon (seeded bug)."""

    name = "buggy-fold-batchnorm"
