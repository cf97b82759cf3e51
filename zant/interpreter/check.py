"""`check_each_pass`: run a pipeline pass by pass, interpret the module after each, and name the
first pass that changes a result (`zant-opt --check-each-pass`).

The module is interpreted on seeded inputs, the same for every pass, from the first pass on: in
the `onnx` dialect by the ONNX reference evaluator op by op (`zant.interpreter.onnx_reference`,
with Zant's integer ops as `onnx-to-uop` lowers them), in the uop dialect by the uop
interpreter. So the ONNX-level folds and `onnx-to-uop` itself are checked too. A module neither
can run (an op the reference lacks, inputs it fails on) is reported unchecked, with why, and the
next pass is compared with the last module that ran.

Each pass's results are compared with the previous interpretable module's: integers and booleans
exactly, floats within `RTOL` relative plus `ATOL` absolute (legal passes reassociate float sums:
`vectorize` reductions, `contract-mulacc`), NaN equal to NaN; when either module is at the onnx
level, floats within `ONNX_RTOL` plus `ONNX_ATOL` (the reference computes each op by its own
NumPy formula, in float32 or float64, and rounds to the tensor's type after each op). Each uop
module runs twice, with scratch and output memory first filled with two different bytes: an
output element that differs between the two was never written (or computed from memory that was
not); such elements of the previous module are not compared, and a pass that leaves one
undefined that was defined before changes the result.

A pass that leaves the module as it was (most stages of a pipeline on any one model) is checked
without interpreting the module again: the same IR computes the same results (`_shape`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.ir import Block, SSAValue

from zant.errors import ZantError
from zant.interpreter.onnx_reference import (
    OnnxUnsupported,
    onnx_graph_functions,
    onnx_input_types,
    onnx_opsets,
    run_onnx_function,
)
from zant.interpreter.run import (
    InterpreterTrap,
    graph_functions,
    run_defined,
    seeded_arrays,
    seeded_inputs,
    unsupported_ops,
)

RTOL = 1e-4
"""Relative tolerance between two passes' float results (at least 4 ulp of the type)."""
ATOL = 1e-5
"""Absolute tolerance between two passes' float results (sums that cancel to about 0)."""
ONNX_RTOL = 1e-3
"""Relative tolerance when either module is at the onnx level (the reference's own formulas)."""
ONNX_ATOL = 1e-4
"""Absolute tolerance when either module is at the onnx level."""


class PassChangedResult(ZantError):
    """A pass changed what the module computes; the message names the pass, the output, the
    largest difference and the seed."""

    def __init__(self, message: str, pass_name: str, output: int, function: str):
        super().__init__(message)
        self.pass_name = pass_name
        self.output = output
        self.function = function


@dataclass
class CheckReport:
    """What `check_each_pass` did: the passes after which the module was interpreted, and those
    it could not interpret after, in pipeline order, with why (`why`, by pass name; the input
    module as `input`)."""

    checked: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    why: dict[str, str] = field(default_factory=dict)
    levels: list[tuple[str, str]] = field(default_factory=list)
    """(pass name or `input`, `onnx` or `uop`): the dialect each module that ran was interpreted at."""

    def notes(self) -> list[str]:
        """One line per pass (or the input module) that could not be checked, with why."""
        return [f"could not check {'the input module' if stage == 'input' else f'pass {stage!r}'}: {why}"
                for stage, why in self.why.items()]


@dataclass(frozen=True)
class Difference:
    output: int
    max_abs_diff: float
    index: int
    undefined: bool = False
    """The element at `index` was defined before and is not after (it reads unwritten memory)."""


def first_difference(
    before: Sequence[np.ndarray],
    after: Sequence[np.ndarray],
    rtol: float = RTOL,
    atol: float = ATOL,
    before_defined: Sequence[np.ndarray] | None = None,
    after_defined: Sequence[np.ndarray] | None = None,
) -> Difference | None:
    """The first output whose values differ between two runs (exactly for integers, within the
    tolerances for floats), its largest difference and where; None when they agree. With the
    runs' defined-element masks (`run_defined`), an element undefined before is not compared,
    and one defined before but not after differs (by NaN)."""
    for k, (a, b) in enumerate(zip(before, after)):
        if a.shape != b.shape or a.dtype != b.dtype:
            return Difference(k, float("nan"), 0)
        if a.dtype.kind == "f":
            tolerance = max(rtol, 4 * float(np.finfo(a.dtype).eps))
            wa, wb = a.astype(np.float64), b.astype(np.float64)
            with np.errstate(invalid="ignore"):
                diff = np.abs(wa - wb)
                close = (wa == wb) | (np.isnan(wa) & np.isnan(wb)) | (
                    diff <= atol + tolerance * np.maximum(np.abs(wa), np.abs(wb))
                )
        else:
            wa, wb = a.astype(np.int64), b.astype(np.int64)
            diff = np.abs(wa - wb).astype(np.float64)
            close = wa == wb
        lost = np.zeros(close.shape, bool)
        if before_defined is not None:
            close |= ~before_defined[k]
        if after_defined is not None:
            lost = ~after_defined[k] & (before_defined[k] if before_defined is not None else True)
            close &= ~lost
        if close.all():
            continue
        bad = np.flatnonzero(~close)
        if lost.any():
            index = int(np.flatnonzero(lost)[0])
            return Difference(k, float(diff[index]), index, undefined=True)
        worst = np.where(np.isnan(diff[bad]), np.inf, diff[bad])
        index = int(bad[int(np.argmax(worst))])
        return Difference(k, float(diff[index]), index)
    if len(before) != len(after):
        return Difference(min(len(before), len(after)), float("nan"), 0)
    return None


def _format_diff(x: float) -> str:
    return f"{x:.6g}" if x == x else "nan"


REBASING_PASSES = frozenset({"requant-rounding"})
"""Passes that choose which arithmetic the module computes (the rounding mode of its
requantizations), so change its results by design: the module after one is the new baseline,
not compared with the one before (the interpreter computes the chosen arithmetic, and every
later pass is checked against it)."""


class PassChecker:
    """Interprets a module between passes and raises `PassChangedResult` at the first pass that
    changes a result: `PassChecker(module, seed)` runs the module as it is (the baseline, if
    interpretable), then `after(pass_name)` after each pass. Inputs are drawn from `seed` once
    per graph function and reused, or given (`inputs`, for a module of one graph function)."""

    def outputs(self, function: str = "main") -> list[np.ndarray] | None:
        """The last interpreted outputs of a graph function (flat), None before any."""
        found = self.previous.get(function)
        return None if found is None else found[0]

    def __init__(
        self,
        module: ModuleOp,
        seed: int = 0,
        rtol: float = RTOL,
        atol: float = ATOL,
        inputs: Sequence[np.ndarray] | None = None,
    ):
        self.module = module
        self.seed = seed
        self.rtol = rtol
        self.atol = atol
        self.report = CheckReport()
        self.inputs: dict[str, list[np.ndarray]] = {}
        if inputs is not None:  # given: for the graph's one function (uop or onnx)
            functions = graph_functions(module) or onnx_graph_functions(module)
            self.inputs = {f.sym_name.data: list(inputs) for f in functions}
        self.previous: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {}
        self.many = max(len(graph_functions(module)), len(onnx_graph_functions(module))) > 1
        self.level = "uop"
        """The dialect of the last interpreted module."""
        self.shape = _shape(module)
        """The module as last interpreted (or found uninterpretable)."""
        self.last = ("input", self._interpret(None))
        """That module's stage, and whether it ran."""

    def after(self, pass_name: str) -> None:
        """Check the module after `pass_name` ran on it."""
        shape = _shape(self.module)
        if shape == self.shape:  # the same IR: the last run's results stand
            stage, checked = self.last
            if checked:
                self.report.levels.append((pass_name, self.level))
            elif stage in self.report.why:
                self.report.why[pass_name] = self.report.why[stage]
        else:
            checked = self._interpret(pass_name)
            self.shape, self.last = shape, (pass_name, checked)
        (self.report.checked if checked else self.report.unchecked).append(pass_name)

    def _where(self, name: str) -> str:
        return f" of @{name}" if self.many else ""

    def _interpret(self, stage: str | None) -> bool:
        uop_functions = graph_functions(self.module)
        if uop_functions and not any(unsupported_ops(f) for f in uop_functions):
            return self._interpret_uop(stage, uop_functions)
        onnx_functions = onnx_graph_functions(self.module)
        if not onnx_functions:
            unsupported = [n for f in uop_functions for n in unsupported_ops(f)]
            self.report.why[stage or "input"] = (
                f"the uop interpreter cannot run '{unsupported[0]}'" if unsupported else "no graph function to interpret"
            )
            return False
        opsets = onnx_opsets(self.module)
        runs = {}
        for function in onnx_functions:
            name = function.sym_name.data
            try:
                if name not in self.inputs:
                    self.inputs[name] = seeded_arrays(onnx_input_types(function), self.seed)
                runs[name] = run_onnx_function(function, self.inputs[name], opsets)
            except OnnxUnsupported as error:
                self.report.why[stage or "input"] = f"{error}{self._where(name)}"
                return False
        for name, results in runs.items():
            self._compare(stage, name, results, [np.ones(r.shape, bool) for r in results], "onnx")
        self.level = "onnx"
        self.report.levels.append((stage or "input", "onnx"))
        return True

    def _interpret_uop(self, stage: str | None, functions: list) -> bool:
        seed = self.seed
        for function in functions:
            name = function.sym_name.data
            if name not in self.inputs:
                self.inputs[name] = seeded_inputs(function, seed)
            try:
                results, defined = run_defined(function, self.inputs[name])
            except InterpreterTrap as trap:
                if stage is None or name not in self.previous:
                    before = "the input module" if stage is None else f"the module after pass '{stage}'"
                    raise ZantError(
                        f"cannot check: {before} traps{self._where(name)}: {trap} (seed {seed})"
                    ) from None
                raise PassChangedResult(
                    f"pass '{stage}' made the module trap{self._where(name)}: {trap} (seed {seed})", stage, -1, name
                ) from None
            self._compare(stage, name, results, defined, "uop")
        self.level = "uop"
        self.report.levels.append((stage or "input", "uop"))
        return True

    def _compare(self, stage: str | None, name: str, results: list[np.ndarray], defined: list[np.ndarray], level: str) -> None:
        """Compare a function's results with the last interpreted ones (raising
        `PassChangedResult`), then keep them; after a `REBASING_PASSES` pass, only keep them."""
        if stage is not None and name in self.previous and stage not in REBASING_PASSES:
            before, before_defined = self.previous[name]
            rtol, atol = self.rtol, self.atol
            if "onnx" in (level, self.level):
                rtol, atol = max(rtol, ONNX_RTOL), max(atol, ONNX_ATOL)
            difference = first_difference(before, results, rtol, atol, before_defined, defined)
            if difference is not None:
                what = (
                    f"element {difference.index} now reads memory nothing wrote"
                    if difference.undefined
                    else f"max abs diff {_format_diff(difference.max_abs_diff)} at index {difference.index}"
                )
                raise PassChangedResult(
                    f"pass '{stage}' changed output {difference.output}{self._where(name)}: {what} (seed {self.seed})",
                    stage,
                    difference.output,
                    name,
                )
        self.previous[name] = results, defined


def _shape(module: ModuleOp) -> list[tuple]:
    """What the module computes, as values to compare: per op in walk order its name, its
    operands (by the position of their definitions), result types, properties, attributes,
    enclosing block, successors and its blocks' argument types. Two modules of equal shapes are
    the same IR (attributes compare by value, the weights behind a `dense_resource` handle
    included: a blob is written once, under a fresh key, `zant.ir.resources`)."""
    values: dict[SSAValue, int] = {}
    blocks: dict[Block, int] = {}
    ops = list(module.walk())
    for op in ops:  # every definition first: an operand may be defined after its use
        values.update((r, len(values)) for r in op.results)
        for region in op.regions:
            for block in region.blocks:
                blocks[block] = len(blocks)
                values.update((a, len(values)) for a in block.args)
    return [
        (
            op.name,
            tuple(values.get(v, -1) for v in op.operands),
            tuple(r.type for r in op.results),
            tuple(op.properties.items()),
            tuple(op.attributes.items()),
            blocks.get(op.parent, -1),
            tuple(blocks.get(b, -1) for b in op.successors),
            tuple(tuple(a.type for a in b.args) for region in op.regions for b in region.blocks),
        )
        for op in ops
    ]


def check_each_pass(
    module: ModuleOp,
    passes: Sequence[ModulePass],
    ctx: Context,
    *,
    seed: int = 0,
    rtol: float = RTOL,
    atol: float = ATOL,
    after_each: Callable[[ModulePass, ModuleOp], None] | None = None,
) -> CheckReport:
    """Apply `passes` to `module` in order (as a pipeline does, in place), interpreting every
    graph function after each pass on inputs drawn from `seed`; raise `PassChangedResult` at
    the first pass whose results differ from the previous pass's (or that makes a run trap).
    `after_each(pass, module)` runs after each pass, before the check (e.g. `module.verify()`).
    """
    checker = PassChecker(module, seed, rtol, atol)
    for p in passes:
        p.apply(ctx, module)
        if after_each is not None:
            after_each(p, module)
        checker.after(p.name)
    return checker.report
