"""`buggy-fold-qoperator`: a copy of `fold-qoperator` with a seeded bug, for `--check-each-pass`
tests of a QOperator model's lowering.

The copy is made from the real pass's source when this plugin loads, with the lookup tables of
QLinearSigmoid and QLinearLeakyRelu computed for HardSigmoid instead of the op's float
definition. Loaded with `zant-opt --load-passes`.
"""

from __future__ import annotations

import inspect
import sys
import types

from zant.passes import fold_qoperator

TABLE = "table = operator_table(QLINEAR_DEFINITIONS[type(op)].op, attributes, x, y)"
"""The line the copy gets wrong (the plugin fails to load if fold-qoperator no longer has it)."""

_source = inspect.getsource(fold_qoperator)
if TABLE not in _source:
    raise RuntimeError("fold-qoperator no longer has the line this seeded bug changes: update TABLE")
_copy = types.ModuleType(f"{__name__}_copy")
sys.modules[_copy.__name__] = _copy  # dataclasses look a class's module up while defining it
exec(compile(_source.replace(TABLE, 'table = operator_table("HardSigmoid", {}, x, y)'), "<buggy fold_qoperator copy>", "exec"), _copy.__dict__)


class BuggyFoldQOperatorPass(_copy.FoldQOperatorPass):
    """fold-qoperator with HardSigmoid tables (seeded bug)."""

    name = "buggy-fold-qoperator"
