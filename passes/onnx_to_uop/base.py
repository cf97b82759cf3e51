"""The base of every onnx-to-uop pattern: lower one op family, publish the result layouts."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from xdsl.dialects.builtin import StringAttr, UnrealizedConversionCastOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from zant.dialects import uop
from zant.errors import ZantError
from zant.ir.locations import locate
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout, result_name  # noqa: F401 (re-exported)
from zant.dialects.onnx import NODE_NAME


def node_label(op: Operation) -> str:
    """How errors name an op: its ONNX node name (if any) and its op name."""
    name = op.attributes.get(NODE_NAME)
    if isinstance(name, StringAttr) and name.data:
        return f"node '{name.data}' ({op.name})"
    return f"an unnamed {op.name} node"


class LoweringError(ZantError):
    """A node whose attributes or shapes this lowering does not handle."""


class OnnxLowering(RewritePattern, ABC):
    """Lowers the ops named in `op_names` (one family) to uop loops.

    `lower` builds the code with a KernelBuilder placed in front of the op and returns one
    Layout per result; this class replaces each result by a cast of that layout, for the
    consumers lowered after it.
    """

    op_names: ClassVar[frozenset[str]]

    def matches(self, op: Operation) -> bool:
        """Whether this pattern lowers `op`: by default, one of `op_names`."""
        return op.name in self.op_names

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not self.matches(op):
            return
        before = op.prev_op  # everything a lowering makes lands between it and `op`
        kb = KernelBuilder(op)
        try:
            layouts = self.lower(op, kb)
        except (ValueError, NotImplementedError) as error:
            raise LoweringError(f"{node_label(op)}: {error}") from error
        replacements: list[SSAValue] = []
        for result, layout in zip(op.results, layouts, strict=True):
            source = layout.buffer if layout.covers_buffer() else kb.view(layout)
            cast = UnrealizedConversionCastOp.get([source], [result.type])
            rewriter.insert(cast, InsertPoint.before(op))
            replacements.append(cast.results[0])
        inherit_location(op, before)
        rewriter.replace(op, [], replacements)

    @abstractmethod
    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]: ...


def inherit_location(op: Operation, before: Operation | None) -> None:
    """Give every op lowered from `op` (those after `before` and ahead of `op` in its block,
    and everything nested in them) `op`'s location: its ONNX node's name, for the kernels'
    comments and `zant profile`. Done here once rather than in every pattern."""
    made, step = [], op.prev_op
    while step is not None and step is not before:
        made.append(step)
        step = step.prev_op
    locate(made, op.location)


def copy_layout(kb: KernelBuilder, source: Layout, target: Layout) -> None:
    """Element-wise copy between two layouts of one shape."""
    with kb.loop_nest(source.shape) as ivs:
        kb.store(kb.load(source, ivs), target, ivs)


def materialize(kb: KernelBuilder, layout: Layout, name: str) -> Layout:
    """A row-major copy of `layout` in a fresh scratch buffer (when a view cannot express it)."""
    target = kb.alloc(name, layout.shape, layout.element_type)
    copy_layout(kb, layout, target)
    return target


__all__ = ["OnnxLowering", "LoweringError", "node_label", "result_name", "materialize", "uop"]
