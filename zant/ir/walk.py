"""`ops_of`: the ops of one kind under an op, for passes that collect them before rewriting.

xDSL's `Operation.walk` nests a generator per op, region and block, so every op it yields
climbs back through all of them: the 9,000 ops of ResNet-8's planned module took 11.5 ms to
walk against 4.9 ms for the plain recursion here, and the Cortex-M4 pipeline walks its module
a dozen times after lowering (Python 3.11).
"""

from __future__ import annotations

from typing import TypeVar

from xdsl.ir import Block, Operation

OpT = TypeVar("OpT", bound=Operation)


def ops_of(root: Operation | Block, kind: type[OpT] | tuple[type[OpT], ...]) -> list[OpT]:
    """The ops under `root` (an op, itself included, or a block) that are instances of `kind`,
    in the order of `root.walk()` (pre-order, first to last); a list, so the caller may rewrite
    them."""
    found: list[OpT] = []

    def visit(op: Operation) -> None:
        if isinstance(op, kind):
            found.append(op)
        for region in op.regions:
            for block in region.blocks:
                for child in block.ops:
                    visit(child)

    for op in root.ops if isinstance(root, Block) else (root,):
        visit(op)
    return found
