"""What a target and a board can hold: the checks a compile makes before it prints any Zig.

Sizes and indices in the generated code are the target's `isize` (index values are `isize`, see
`zig_printer`), and LLVM assumes no object is larger than that either; so no tensor, arena or
loop index may exceed `maxInt(isize)`: 2,147,483,647 on the 32-bit microcontrollers, and on the
host that of the machine running Zant. Left unchecked, such a model compiles to a header that
promises a 2^50-element input to a 32-bit part.

A firmware image must also fit its board: the arenas, the embedded inputs and outputs and a
minimum stack (what the plan already knows; the code only the linker does) against the board's
RAM, flash and weights region. A staged constant arena counts twice: its blob in flash, its
copy in RAM.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp

from zant.backend.boards import Board, format_bytes
from zant.targets import RECORDS
from zant.dialects.uop import ConstOp, RangeOp
from zant.errors import ZantError

HOST_BITS = RECORDS["host"].address_bits
EMBEDDED_ALIGNMENT = 16
"""Each embedded input and output buffer of a firmware image is `align(16)`."""


def address_bits(target: str) -> int:
    """The pointer width of `target` (`Target.address_bits`: every MCU target is a 32-bit part)."""
    return RECORDS[target].address_bits


def largest_object(target: str) -> int:
    """The most bytes (and the largest index) one object may have on `target`: `maxInt(isize)`."""
    return (1 << (address_bits(target) - 1)) - 1


def check_target_limits(module: ModuleOp, plan: dict, target: str) -> None:
    """Raise `ZantError` naming the first tensor, arena or loop of a planned module (`plan` is
    its plan JSON) that cannot exist on `target`."""
    limit = largest_object(target)
    bits = address_bits(target)
    beyond = f"{target} is a {bits}-bit target, where no object exceeds {limit:,} B"
    for tensor in plan["tensors"]:
        if tensor["size"] > limit:
            raise ZantError(f"{tensor['role']} tensor '{tensor['name']}' needs {tensor['size']:,} B; {beyond}")
    for arena in plan["arenas"]:
        if arena["size"] > limit:
            raise ZantError(f"the {arena['role']} arena needs {arena['size']:,} B; {beyond}")
    together = sum(a["size"] for a in plan["arenas"]) + sum(
        t["size"] for t in plan["tensors"] if t["role"] in ("input", "output")
    )
    if together > 1 << bits:
        raise ZantError(
            f"the arenas, inputs and outputs need {together:,} B together, more than the "
            f"{1 << bits:,} B address space of {target}"
        )
    for op in module.walk():
        if isinstance(op, RangeOp):
            bound = max(abs(op.start.data), abs(op.end.data))
        elif (
            isinstance(op, ConstOp) and isinstance(op.result.type, IndexType) and isinstance(op.value, IntegerAttr)
        ):
            bound = abs(op.value.value.data)
        else:
            continue
        if bound > limit:
            what = "a loop counts to" if isinstance(op, RangeOp) else "an index reaches"
            raise ZantError(
                f"{what} {bound:,} (a broadcast or a loop over too many elements); indices on "
                f"{target} ({bits}-bit) are at most {limit:,}"
            )


def ram_parts(plan: dict, min_stack: int = 0) -> list[tuple[str, int]]:
    """What a firmware image of `plan` takes from the board's RAM, by part: the scratch arena left
    in `.bss` (a scratch arena `place-memories` put in one of the board's own memories takes
    nothing from it), the persistent arena, a staged constant arena's copy (`NAME_init` copies
    the weights from flash into it), the outputs and `min_stack`."""
    arenas = plan["arenas"]
    staged = sum(a["size"] for a in arenas if a["role"] == "constant" and a.get("memory") == "ram")
    return [
        ("scratch arena", sum(a["size"] for a in arenas if a["role"] == "scratch" and "memory" not in a)),
        ("persistent arena", sum(a["size"] for a in arenas if a["role"] == "persistent")),
        ("staged constant arena", staged),
        ("outputs", _embedded(plan, "output")),
        ("stack", min_stack),
    ]


def check_board_memory(plan: dict, board: Board, min_stack: int) -> None:
    """Raise `ZantError` if what a firmware image of `plan` needs in RAM (`ram_parts`: scratch,
    persistent and staged constant arenas, outputs, `min_stack`) or in flash / the weights
    region (the weights, read in place or the source of a staged copy, and embedded inputs)
    exceeds the board's, saying which memory, the bytes needed and by how much it misses."""
    # Flash holds the blob whatever the mode: read in place, copied at init, or (external) kept
    # in the image's read-only data for NAME_init.
    weights = sum(a["size"] for a in plan["arenas"] if a["role"] == "constant")
    needs = [
        ("RAM", board.ram, ram_parts(plan, min_stack)),
        (
            "weights region" if board.weights else "flash",
            board.weights or board.flash,
            [("weights", weights), ("inputs", _embedded(plan, "input"))],
        ),
    ]
    problems = []
    for memory, region, parts in needs:
        total = sum(size for _, size in parts)
        if total > region.size:
            reached = {"scratch arena": f" ({_reached(plan)})"} if "strategy" in plan else {}  # a real plan
            terms = " + ".join(f"{label} {size:,} B{reached.get(label, '')}" for label, size in parts if size)
            code = " even without the code" if memory == "flash" else ""
            capacity = format_bytes(region.size)
            if not capacity.endswith(" B"):
                capacity += f" ({region.size:,} B)"
            problems.append(
                f"{terms} = {total:,} B do not fit the {capacity} {memory} of "
                f"{board.label}{code}: {total - region.size:,} B over"
            )
    if problems:
        raise ZantError("; ".join(problems))


SCHEDULES = (
    "layer by layer, element-wise ops written in place over inputs that die there, "
    "convolutions written over their inputs through line and plane buffers, "
    "the early stage run patch by patch"
)
"""The schedules a plan chooses among (docs/ram-budget.md): the default plan (`plan-arenas`:
liveness, in-place reuse, the best placement), and when a RAM budget needs it the slower
`schedule-in-place` (each convolution's input copied a pixel or a channel at a time, so its
output can take the input's bytes); a miss names the smaller of the two plans."""


def _reached(plan: dict) -> str:
    """What a budget miss says of the plan's scratch arena: the smallest Zant reaches (the
    plan's own: see `SCHEDULES`) and the lower bound no placement of this schedule can beat."""
    bound = plan.get("aligned_lower_bound_bytes") or plan.get("lower_bound_bytes", 0)
    strategy = plan.get("strategy", "best")
    if strategy not in ("best", ""):  # a hand-written pipeline's plan: not the smallest
        return (
            f"plan-arenas strategy {strategy}; 'best' places this schedule in the fewest bytes, "
            f"lower bound {bound:,} B"
        )
    return f"the smallest Zant reaches for this model: {SCHEDULES}; lower bound {bound:,} B"


def check_ram_budget(plan: dict, budget: int | None) -> None:
    """Raise `ZantError` if the scratch arena left in `.bss` exceeds `budget` bytes
    (`zant compile --ram-budget`), naming the smallest scratch reached and the bytes over."""
    if budget is None:
        return
    scratch = ram_parts(plan)[0][1]
    if scratch > budget:
        raise ZantError(
            f"scratch arena {scratch:,} B ({_reached(plan)}) does not fit the RAM budget of "
            f"{budget:,} B: {scratch - budget:,} B over"
        )


def _embedded(plan: dict, role: str) -> int:
    """The bytes of a firmware image's embedded inputs or outputs (each `align(16)`)."""
    return sum(_align(t["size"]) for t in plan["tensors"] if t["role"] == role)


def _align(size: int) -> int:
    return -(-size // EMBEDDED_ALIGNMENT) * EMBEDDED_ALIGNMENT
