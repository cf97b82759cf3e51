"""The `abi` dialect: what a generated function shows its caller, apart from the computation.

* `abi.arena` (set by `plan-arenas`): one memory arena of the planned function (scratch,
  constant, persistent), with the size and alignment the header exports, the link section, the
  memory of the board it lives in, and the planner's figures (lower bound, strategy, steps);
* `Status`: every status the generated functions return (`NAME_STATUS_*` in the header), the
  one table the printer, the header and the documentation read;
* `abi.check %ok, 4` ends `NAME_predict` with a status unless `%ok` holds.

The uop dialect computes; this one is the contract around the computation (MLIR keeps
bufferization apart from memref in the same way).
"""

from __future__ import annotations

from enum import IntEnum

from xdsl.dialects import func
from xdsl.dialects.builtin import I32, I64, IntegerAttr, ModuleOp, StringAttr, i1
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Dialect, Operation, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from zant.dialects.uop.loops import LoopLike
from zant.dialects.uop.memory import DefineLocalOp
from zant.dialects.uop.types import BindsOutsideMemory, parse_enum, print_quoted_enum

# ---------------------------------------------------------------------------------------------
# Statuses
# ---------------------------------------------------------------------------------------------


class Status(IntEnum):
    """What the generated functions return: 0 on success, else one of these, defined in the
    header as `NAME_STATUS_<member>`. Nothing else spells a status's number."""

    OK = 0
    NOT_INITIALIZED = 1
    """`NAME_predict` before `NAME_init` has succeeded (staged or external constants, or a
    persistent arena)."""
    BAD_CONSTANTS = 2
    """`NAME_init(address)`: a null or misaligned address (external constants)."""
    PLAN_MISMATCH = 3
    """`NAME_check_plan(expected)`: `expected` is not the file's plan hash."""
    BAD_PARAMETER = 4
    """`NAME_predict`, from an `abi.check` the onnx-to-uop lowerings make: a run-time parameter
    input (reduction axes, Trilu's k, ...) contradicts the shapes the code was compiled for."""
    OUTPUT_SIZE = 5
    """`NAME_predict`, from an `abi.check` guarding a data-dependent output (NonZero, Compress,
    NonMaxSuppression, StringSplit's pieces, StringNormalizer's strings kept): the number of elements the data select differs from the output's
    compiled (declared) extent; for ImageDecoder, the bytes are not an image it decodes
    (24-bit BMP, binary PPM, baseline JPEG, PNG, uncompressed TIFF) of the compiled shape. Nothing of that output has been written."""
    BAD_INDEX = 6
    """`NAME_predict`, from an `abi.check` made by `check-data-indices`: an index read from the
    data (Gather's, a Scatter's, MaxUnpool's ...; a `uop.bound_index`) is outside the range its op
    allows. Nothing the indexed op writes has been written."""
    BAD_BUFFER = 7
    """`NAME_predict`: a null buffer pointer; `NAME_predict_sized` also a buffer size other than
    its tensor's bytes. Returned before anything is read or written."""
    BAD_ARENA = 8
    """`NAME_set_arena`: a null or misaligned arena, or one smaller than `NAME_ARENA_SIZE` (the
    model then has no arena); `NAME_predict` without an arena (`--arena caller` only). Returned
    before anything is read or written."""

    @property
    def macro(self) -> str:
        """The header's name for it, after the `NAME_` prefix: `STATUS_BAD_INDEX`."""
        return f"STATUS_{self.name}"

    def define(self, prefix: str) -> str:
        """The header's `#define NAME_STATUS_X n /* meaning */` line for the model `prefix`."""
        return f"#define {prefix}_{self.macro} {self.value} /* {STATUS_COMMENTS[self].replace('NAME_', prefix + '_')} */"


STATUS_COMMENTS: dict[Status, str] = {
    Status.NOT_INITIALIZED: "NAME_predict before NAME_init succeeded",
    Status.BAD_CONSTANTS: "NAME_init: a null or misaligned address",
    Status.PLAN_MISMATCH: "NAME_check_plan: another plan",
    Status.BAD_PARAMETER: "NAME_predict: a parameter input (axes, pads, k ...) contradicts the compiled shapes",
    Status.OUTPUT_SIZE: (
        "NAME_predict: the data select another number of elements than a data-dependent output's "
        "compiled shape holds (NonZero, Compress, NonMaxSuppression, StringSplit, StringNormalizer), "
        "or an ImageDecoder's bytes are "
        "not an image it decodes (BMP, PPM, baseline JPEG, PNG, uncompressed TIFF) of that shape"
    ),
    Status.BAD_INDEX: (
        "NAME_predict: an index read from the data (Gather, Scatter, MaxUnpool ... indices) is out of "
        "range; the indexed op has written nothing"
    ),
    Status.BAD_BUFFER: (
        "NAME_predict: a null buffer pointer (a tensor of no elements may be NULL); NAME_predict_sized: "
        "that, or a buffer size other than its tensor's bytes; nothing read or written"
    ),
    Status.BAD_ARENA: (
        "NAME_set_arena: a null or misaligned arena, or one smaller than NAME_ARENA_SIZE; NAME_predict: "
        "no arena set; nothing read or written"
    ),
}
"""The one-line meaning of each failure status, as the header's comment prints it (`NAME_` is
the model's prefix)."""


@irdl_op_definition
class CheckOp(IRDLOperation):
    """`abi.check %ok, 4` ends the function with status 4 (the generated `NAME_predict`
    returns it) unless the i1 `%ok` is true. It guards values only known at run time, such as a
    parameter input (axes, k, pads ...) that must agree with the shapes the code was compiled
    for (`Status.BAD_PARAMETER`), the size data select for a data-dependent output
    (`Status.OUTPUT_SIZE`) or an index read from the data (`Status.BAD_INDEX`): the kernels
    after it rely on them. It lives in the function's body, never in a loop, so no kernel after
    it has run when it fails."""

    name = "abi.check"

    condition = operand_def(i1)
    status = prop_def(IntegerAttr[I32])

    assembly_format = "$condition `,` $status attr-dict"

    # No memory effect is declared, so no pass may erase, hoist or reorder it: its effect is
    # the function's return.

    def __init__(self, condition: SSAValue | Operation, status: Status = Status.BAD_PARAMETER):
        super().__init__(operands=[condition], properties={"status": IntegerAttr(int(status), 32)})

    def verify_(self) -> None:
        status = self.status.value.data
        if status == Status.OK:
            raise VerifyException("status 0 means success: a failed check needs another")
        if status not in {int(s) for s in Status}:
            raise VerifyException(f"status {status} is not one of the ABI's (abi.Status: 1..{max(Status)})")
        parent = self.parent_op()
        while parent is not None:
            if parent.has_trait(LoopLike):
                raise VerifyException("abi.check must not be inside a loop")
            parent = parent.parent_op()


# ---------------------------------------------------------------------------------------------
# Arenas
# ---------------------------------------------------------------------------------------------

class ArenaRole(StrEnum):
    SCRATCH = "scratch"
    CONSTANT = "constant"
    PERSISTENT = "persistent"


class PlanStrategy(StrEnum):
    """How `plan-arenas` placed the scratch buffers: in definition order (`naive`), greedy by
    size with best fit (`greedy`), or the better of greedy and its improvement (`best`)."""

    NAIVE = "naive"
    GREEDY = "greedy"
    BEST = "best"


ARENA_ROLES = tuple(r.value for r in ArenaRole)
PLAN_STRATEGIES = tuple(s.value for s in PlanStrategy)

CONSTANT_PLACEMENTS: dict[str, tuple[str | None, str | None]] = {
    "embedded": ("flash", None),
    "staged": ("ram", "flash"),
    "external": ("external", None),
    "": (None, None),  # planned before the constants had a memory: read in place, as embedded
}
"""`plan-arenas{constants=MODE}` → the constant arena's (memory, source memory)."""
CONSTANT_MODES = tuple(mode for mode in CONSTANT_PLACEMENTS if mode)


def constants_mode(arena: ArenaOp) -> str:
    """embedded, staged or external: where a constant arena's memory and source put it."""
    where = (
        None if arena.memory is None else arena.memory.data,
        None if arena.source is None else arena.source.data,
    )
    return next((mode for mode, place in CONSTANT_PLACEMENTS.items() if mode and place == where), "embedded")


@irdl_attr_definition
class ArenaRoleAttr(EnumAttribute[ArenaRole], SpacedOpaqueSyntaxAttribute):
    """`#abi<arena_role "scratch">` in the generic form; `"scratch"` in `abi.arena`'s."""

    name = "abi.arena_role"

    def print_parameter(self, printer: Printer) -> None:
        print_quoted_enum(self, printer)

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> ArenaRole:
        return parse_enum(cls, parser, "arena role")


@irdl_attr_definition
class PlanStrategyAttr(EnumAttribute[PlanStrategy], SpacedOpaqueSyntaxAttribute):
    """`#abi<plan_strategy "best">` in the generic form; `strategy "best"` in `abi.arena`'s."""

    name = "abi.plan_strategy"

    def print_parameter(self, printer: Printer) -> None:
        print_quoted_enum(self, printer)

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> PlanStrategy:
        return parse_enum(cls, parser, "strategy")


@irdl_op_definition
class ArenaOp(IRDLOperation):
    """One memory arena of a planned function, set by `plan-arenas`.

    `abi.arena "scratch" size 96 align 16 lower_bound 64 strategy "best" steps 17
    unaligned_lower_bound 60`: the scratch arena holds every `uop.define_local` at its offset;
    `lower_bound` is the most bytes of scratch live at once (each buffer rounded up to the
    alignment), `unaligned_lower_bound` the same in unaligned bytes (what no plan of this schedule
    can beat), `steps` the number of top-level steps of the planned schedule (the steps the
    define_locals' `live` ranges count). `abi.arena "constant" size 2048 align 16 section ".rodata.zant"`: the read-only blob of
    the constants (each `uop.define_global "constant"` at its offset), in the given link section.
    `abi.arena "persistent" size 0 align 16`: state kept across calls (no op has any yet).
    `abi.arena "scratch" ... memory "dtcm"` (set by `place-memories`): the scratch arena in one
    memory of the board, holding the define_locals `in "dtcm"`; a function has one scratch arena
    per memory it uses, or one without a memory.

    Where the constant arena lives (`plan-arenas{constants=...}`), as its runtime memory (where
    the kernels read it) and, when it is copied there at init, its source memory:
    `memory "flash"` (embedded: read in place from the image's read-only data), `memory "ram"
    source "flash"` (staged: `NAME_init` copies it from flash into RAM) or `memory "external"`
    (the firmware places the blob and passes its address to `NAME_init`). No memory: flash.
    """

    name = "abi.arena"

    role = prop_def(ArenaRoleAttr)
    size = prop_def(IntegerAttr[I64])
    alignment = prop_def(IntegerAttr[I64])
    lower_bound = opt_prop_def(IntegerAttr[I64])
    strategy = opt_prop_def(PlanStrategyAttr)
    steps = opt_prop_def(IntegerAttr[I64])
    unaligned_lower_bound = opt_prop_def(IntegerAttr[I64])
    link_section = opt_prop_def(StringAttr)
    memory = opt_prop_def(StringAttr)
    source = opt_prop_def(StringAttr)

    assembly_format = (
        "$role `size` $size `align` $alignment (`lower_bound` $lower_bound^)? "
        "(`strategy` $strategy^)? (`steps` $steps^)? "
        "(`unaligned_lower_bound` $unaligned_lower_bound^)? (`section` $link_section^)? "
        "(`memory` $memory^)? (`source` $source^)? attr-dict"
    )

    traits = traits_def(BindsOutsideMemory())

    def __init__(
        self,
        role: ArenaRole | str,
        size: int,
        alignment: int,
        lower_bound: int | None = None,
        strategy: PlanStrategy | str | None = None,
        link_section: str | None = None,
        steps: int | None = None,
        unaligned_lower_bound: int | None = None,
        memory: str | None = None,
        source: str | None = None,
    ):
        super().__init__(
            properties={
                "memory": None if memory is None else StringAttr(memory),
                "source": None if source is None else StringAttr(source),
                "role": ArenaRoleAttr(ArenaRole(role)),
                "size": IntegerAttr(size, 64),
                "alignment": IntegerAttr(alignment, 64),
                "lower_bound": None if lower_bound is None else IntegerAttr(lower_bound, 64),
                "strategy": None if strategy is None else PlanStrategyAttr(PlanStrategy(strategy)),
                "link_section": None if link_section is None else StringAttr(link_section),
                "steps": None if steps is None else IntegerAttr(steps, 64),
                "unaligned_lower_bound": (
                    None if unaligned_lower_bound is None else IntegerAttr(unaligned_lower_bound, 64)
                ),
            }
        )

    def verify_(self) -> None:
        role, size, alignment = self.role.data, self.size.value.data, self.alignment.value.data
        if alignment <= 0 or alignment & (alignment - 1):
            raise VerifyException(f"arena alignment must be a power of two, got {alignment}")
        if size < 0 or size % alignment:
            raise VerifyException(
                f"arena size must be a non-negative multiple of its alignment, got {size}"
            )
        if self.lower_bound is not None:
            if role != ArenaRole.SCRATCH:
                raise VerifyException("only the scratch arena has a lower bound")
            if not 0 <= self.lower_bound.value.data <= size:
                raise VerifyException(
                    f"lower bound {self.lower_bound.value.data} is not within 0..{size}"
                )
        if self.strategy is not None:
            if role != ArenaRole.SCRATCH:
                raise VerifyException("only the scratch arena has a strategy")
        if self.steps is not None:
            if role != ArenaRole.SCRATCH:
                raise VerifyException("only the scratch arena has steps")
            if self.steps.value.data < 0:
                raise VerifyException(f"steps must be non-negative, got {self.steps.value.data}")
        if self.unaligned_lower_bound is not None:
            if role != ArenaRole.SCRATCH:
                raise VerifyException("only the scratch arena has an unaligned lower bound")
            bound = self.unaligned_lower_bound.value.data
            aligned = size if self.lower_bound is None else self.lower_bound.value.data
            if not 0 <= bound <= aligned:
                raise VerifyException(
                    f"unaligned lower bound {bound} is not within 0..{aligned} (the aligned "
                    "lower bound, or the size)"
                )
        if self.link_section is not None and role != ArenaRole.CONSTANT:
            raise VerifyException("only the constant arena has a link section")
        if role == ArenaRole.CONSTANT:
            where = (
                None if self.memory is None else self.memory.data,
                None if self.source is None else self.source.data,
            )
            if where not in CONSTANT_PLACEMENTS.values():
                raise VerifyException(
                    "a constant arena is in memory flash, ram from source flash (staged) or "
                    f"external, got memory {where[0]} source {where[1]}"
                )
        elif self.memory is not None and role != ArenaRole.SCRATCH:
            raise VerifyException("only a scratch or constant arena is placed in a memory")
        elif self.source is not None:
            raise VerifyException("only a constant arena has a source memory (staged constants)")
        block = self.parent_block()
        if block is not None:
            for other in block.ops:
                if other is not self and isinstance(other, ArenaOp) and other.role.data == role:
                    if other.memory != self.memory:
                        continue
                    where = "" if self.memory is None else f" in memory {self.memory.data}"
                    raise VerifyException(f"more than one {role} arena{where} in one block")


def arena_of(function: func.FuncOp, role: ArenaRole = ArenaRole.SCRATCH) -> ArenaOp | None:
    """The function's `abi.arena` of `role` (the first, when `place-memories` split the scratch
    arena by memory), or None before `plan-arenas`."""
    for op in function.body.block.ops:
        if isinstance(op, ArenaOp) and op.role.data == role:
            return op
    return None


def is_planned(module: ModuleOp) -> bool:
    """Whether `plan-arenas` has planned `module`: every `uop.define_local` has its offset and
    live steps, and every entry function its scratch arena (a kernel `outline-kernels` made is
    private and uses its caller's)."""
    for op in module.walk():
        if isinstance(op, DefineLocalOp) and (op.offset is None or op.live is None):
            return False
        private = isinstance(op, func.FuncOp) and op.sym_visibility is not None and op.sym_visibility.data == "private"
        if isinstance(op, func.FuncOp) and not private and arena_of(op) is None:
            return False
    return True


ABI = Dialect(
    "abi",
    [ArenaOp, CheckOp],
    [ArenaRoleAttr, PlanStrategyAttr],
)
