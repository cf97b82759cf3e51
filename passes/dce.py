"""`dce`: xDSL's dead-code elimination (`xdsl.transforms.dead_code_elimination`), with each op's
memory effects computed once.

This pass replaces xDSL's under the same name and removes the same ops: an op is live if it has
effects beyond its results (or is a terminator or a symbol) or if a live op uses one of its
results, propagated to a fixed point, then everything not live is erased. xDSL asks
`get_effects` of every op on every sweep, and the effects of a loop are those of everything
nested in it, so each op of a loop nest was visited once per loop around it, per sweep (ResNet-8
for the M4: 0.14 s of CPU for the pipeline's two `dce` runs). Here the effects of an op are kept
for the pass: propagation changes no op.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import (
    EffectInstance,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
    RecursiveMemoryEffect,
    SymbolOpInterface,
)
from xdsl.transforms.dead_code_elimination import LiveSet


@dataclass
class _LiveSet(LiveSet):
    """xDSL's `LiveSet`, remembering the effects of ops and whether each would be dead unused."""

    effects_of: dict[Operation, Set[EffectInstance] | None] = field(default_factory=dict)
    dead_if_unused: dict[Operation, bool] = field(default_factory=dict)

    def effects(self, op: Operation) -> Set[EffectInstance] | None:
        """`xdsl.traits.get_effects(op)`, the effects of nested ops taken from the memo."""
        if op in self.effects_of:
            return self.effects_of[op]
        interfaces = op.get_traits_of_type(MemoryEffect)
        result: set[EffectInstance] | None = set() if interfaces else None
        for interface in interfaces:
            if type(interface) is RecursiveMemoryEffect:
                found = self._nested_effects(op)
            else:
                found = interface.get_effects(op)
            if found is None:
                result = None
                break
            result.update(found)  # type: ignore[union-attr]
        self.effects_of[op] = result
        return result

    def _nested_effects(self, op: Operation) -> set[EffectInstance] | None:
        effects: set[EffectInstance] = set()
        for region in op.regions:
            for block in region.blocks:
                for child in block.ops:
                    found = self.effects(child)
                    if found is None:
                        return None
                    effects.update(found)
        return effects

    def would_be_dead(self, op: Operation) -> bool:
        """`would_be_trivially_dead(op)` of xDSL, remembered."""
        if op not in self.dead_if_unused:
            self.dead_if_unused[op] = (
                not op.has_trait(IsTerminator, value_if_unregistered=False)
                and not op.has_trait(SymbolOpInterface, value_if_unregistered=False)
                and self._result_only_effects(op)
            )
        return self.dead_if_unused[op]

    def _result_only_effects(self, root: Operation) -> bool:
        effects = self.effects(root)
        return effects is not None and all(
            e.kind == MemoryEffectKind.READ
            or (
                e.kind == MemoryEffectKind.ALLOC
                and isinstance(v := e.value, SSAValue)
                and root.is_ancestor(v.owner)
            )
            for e in effects
        )

    def propagate_op_liveness(self, op: Operation) -> None:
        for region in op.regions:
            self.propagate_region_liveness(region)
        if self.is_live(op):
            return
        if not self.would_be_dead(op) or any(
            self.is_live(use.operation) for result in op.results for use in result.uses
        ):
            self.set_live(op)


@dataclass(frozen=True)
class DeadCodeEliminationPass(ModulePass):
    """Erase the ops whose results nothing live uses and that have no other effect."""

    name = "dce"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        live = _LiveSet()
        while live.changed:
            live.changed = False
            live.propagate_region_liveness(op.body)
        live.delete_dead(op.body, None)
