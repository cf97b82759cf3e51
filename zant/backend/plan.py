"""What the generated code promises about memory: the arena plan, its hashes, header and JSON.

Everything here reads what `plan-arenas` recorded on a planned uop module (offsets, live steps,
arena sizes, lower bounds; see `zant.passes.plan_arenas`) and recomputes nothing but the hashes
of it, so the same module gives byte-identical header and JSON on every run. An unplanned module
is refused.

* `describe_plan(module, name)` → `PlanInfo`: scratch / constant arenas, the regions (one per
  arena, one per scratch memory after `place-memories`, one per input and output), every
  tensor's region and offset, the liveness lower bound and the hashes;
* `emit_header(module, name) -> str`: the C header `NAME.h`;
* `emit_plan_json(module, name) -> dict`: the content of `NAME.plan.json`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
)
from xdsl.ir import Attribute, Operation

from zant.backend.names import Namer, reserved_names, sanitize_zig, validate_prefix
from zant.dialects.uop import BufferRole, DefineGlobalOp, DefineLocalOp
from zant.dialects.abi import ArenaOp, ArenaRole, Status, arena_of, constants_mode
from zant.errors import ZantError
from zant.ir.strings import STRING_CAPACITY_ATTR
from zant.ir.types import element_bits, is_packed, numpy_dtype, storage_float
from zant.analysis.liveness import align_up

def main_function(module: ModuleOp) -> func.FuncOp:
    """The module's entry function: its one public `func.func` (the kernels `outline-kernels`
    made are private)."""
    functions = [
        op for op in module.ops
        if isinstance(op, func.FuncOp) and (op.sym_visibility is None or op.sym_visibility.data != "private")
    ]
    if len(functions) != 1:
        raise ZantError(f"expected exactly one public func.func in the module, found {len(functions)}")
    return functions[0]


def globals_by_role(function: func.FuncOp, role: BufferRole) -> list[DefineGlobalOp]:
    return buffers_of(function)[0][role]


def buffers_of(function: func.FuncOp) -> tuple[dict[BufferRole, list[DefineGlobalOp]], list[DefineLocalOp]]:
    """The function's `uop.define_global`s by role (each role's in index order) and its
    `uop.define_local`s in `walk`'s order, in one visit of its ops."""
    # Without `walk`'s nested generators (twice as fast; printing a MobileNetV2 asks for the
    # globals 13 times over 14,000 ops).
    globals_: dict[BufferRole, list[DefineGlobalOp]] = {role: [] for role in BufferRole}
    locals_: list[DefineLocalOp] = []

    def visit(op: Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for child in block.ops:
                    if isinstance(child, DefineGlobalOp):
                        globals_[child.role.data].append(child)
                    elif isinstance(child, DefineLocalOp):
                        locals_.append(child)
                    if child.regions:
                        visit(child)

    visit(function)
    for ops in globals_.values():
        ops.sort(key=lambda op: op.index.value.data)
    return globals_, locals_


def parameter_names(function: func.FuncOp, namer: Namer) -> dict[DefineGlobalOp, str]:
    """The entry point's parameter names: `input_<name>` then `output_<name>`, unique."""
    names = {}
    globals_ = buffers_of(function)[0]
    for role in (BufferRole.INPUT, BufferRole.OUTPUT):
        for op in globals_[role]:
            names[op] = namer.fresh(f"{role}_{sanitize_zig(op.tensor_name.data)}")
    return names


C_TYPES = {
    ("f", 8): "uint8_t",  # float8: its bits
    ("f", 16): "uint16_t",  # f16, bfloat16: its bits
    ("f", 32): "float",
    ("f", 64): "double",
}


def _bits_note(t: Attribute) -> str:
    """How a float the C ABI passes as its bits is named in the header: f16, bfloat16, float8_e4m3fn …"""
    storage = storage_float(t)
    return "f16" if storage is None else storage[0]


def _packed_note(t: Attribute) -> str:
    """How the header describes a packed buffer: `int4, 2 per byte, first in the low bits`."""
    per_byte = 8 // element_bits(t)
    name = _bits_note(t) if isinstance(t, AnyFloat) else str(numpy_dtype(t))
    return f"{name}, {per_byte} per byte, the first in the lowest bits"


def c_type(t: Attribute) -> str:
    if is_packed(t):  # int4 …: a packed byte buffer
        return "uint8_t"
    if isinstance(t, AnyFloat):
        return C_TYPES[("f", t.bitwidth)]
    if isinstance(t, IntegerType):
        width = t.width.data
        if width == 1:
            return "bool"
        unsigned = t.signedness.data == Signedness.UNSIGNED
        return f"{'u' if unsigned else ''}int{width}_t"
    raise ZantError(f"no C type for {t}")


@dataclass(frozen=True)
class TensorPlacement:
    name: str
    role: str
    offset: int | None
    size: int
    region: int = 0  # the id of the region holding it (`PlanRegion.id`)
    memory: str = ""
    element_type: str = ""  # as MLIR spells it: i8, ui8, f32 …

    def as_dict(self) -> dict:
        return {
            "name": self.name, "role": self.role, "region": self.region, "memory": self.memory,
            "offset": self.offset, "size": self.size, "element_type": self.element_type,
        }

    @property
    def is_float(self) -> bool:
        return self.element_type.startswith(("f", "bf"))


DEFAULT_MEMORY = {"scratch": "ram", "persistent": "ram", "constant": "flash", "io": "caller"}
"""The memory of a region no pass placed: the scratch and persistent arenas in the image's RAM
(`.bss`), the constants in its read-only data, inputs and outputs wherever the caller keeps them.
`plan-arenas{constants=...}` records the constant arena's own: flash (embedded), ram from source
flash (staged) or external."""


def region_id(name: str) -> int:
    """A region's stable id: 31 bits of the SHA-256 of its name (`scratch.dtcm`, `constant`,
    `io.input.x`), so it depends on what the region is, not on how many others precede it."""
    return int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) & 0x7FFF_FFFF


@dataclass(frozen=True)
class PlanRegion:
    """One contiguous block of memory of the plan: an arena (in one memory) or a caller's tensor."""

    name: str  # role, then the memory of a placed scratch arena or the tensor of an I/O region
    role: str  # scratch, persistent, constant or io
    memory: str
    size: int
    alignment: int
    source: str = ""  # where a staged arena is copied from at init; "": it is not staged

    @property
    def id(self) -> int:
        return region_id(self.name)

    @property
    def source_memory(self) -> str:
        """The memory its bytes come from: `memory` unless the arena is staged."""
        return self.source or self.memory

    @property
    def staged(self) -> bool:
        return self.source_memory != self.memory

    def as_dict(self) -> dict:
        return {
            "id": self.id, "name": self.name, "role": self.role, "memory": self.memory,
            "source_memory": self.source_memory, "size": self.size, "alignment": self.alignment,
        }


@dataclass(frozen=True)
class Lifetime:
    """A scratch tensor's live span in top-level schedule steps (ops of the function body)."""

    name: str
    first_use: int
    last_use: int

    def as_dict(self) -> dict:
        return {"name": self.name, "first_use": self.first_use, "last_use": self.last_use}


@dataclass(frozen=True)
class PlanInfo:
    scratch_size: int
    scratch_alignment: int
    constant_size: int
    lower_bound_bytes: int
    tensors: tuple[TensorPlacement, ...]
    constant_alignment: int = 16
    aligned_lower_bound_bytes: int = 0
    strategy: str = ""
    link_section: str = ""
    persistent_size: int = 0
    persistent_alignment: int = 16
    lifetimes: tuple[Lifetime, ...] = ()
    step_count: int = 0
    regions: tuple[PlanRegion, ...] = ()
    io: tuple[tuple[str, str, int, str], ...] = ()  # (role, name, element count, element type)
    constants: str = "embedded"  # where the constant arena lives: embedded, staged or external

    def arenas(self) -> list[dict]:
        """The arenas (regions but the caller's tensors), each placed scratch arena with its
        memory, the constant arena with its memory and source memory."""
        arenas = []
        for r in self.regions:
            if r.role == "io":
                continue
            arena = {"role": r.role, "size": r.size, "alignment": r.alignment}
            if r.role == "scratch" and r.name != "scratch":
                arena["memory"] = r.memory
            if r.role == "constant":
                arena["memory"], arena["source_memory"] = r.memory, r.source_memory
            arenas.append(arena)
        return arenas

    @property
    def constant_region(self) -> PlanRegion:
        return next(r for r in self.regions if r.role == "constant")

    @property
    def scratch_regions(self) -> list[PlanRegion]:
        return [r for r in self.regions if r.role == "scratch"]

    @property
    def plan_hash(self) -> str:
        """Over every region and every tensor's placement: any change of either changes it."""
        return _hash([[r.as_dict() for r in self.regions], [t.as_dict() for t in self.tensors]])

    @property
    def tensor_layout_hash(self) -> str:
        """Over every tensor's placement only."""
        return _hash([t.as_dict() for t in self.tensors])

    @property
    def layout_hash(self) -> str:
        """Over the entry point's ABI: each input's and output's role, name, element count and
        element type, in parameter order."""
        return _hash([list(t) for t in self.io])


def _hash(payload) -> str:
    """SHA-256 of the canonical JSON of `payload`, truncated to 64 bits, in hex."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def element_bytes(t: Attribute) -> int:
    """Bytes of one element of a buffer of element type `t` as the C ABI passes it (bool: 1)."""
    if isinstance(t, AnyFloat):
        return t.bitwidth // 8
    if isinstance(t, IntegerType):
        return max(1, t.width.data // 8)
    return 1


def _unplanned(what: str) -> ZantError:
    return ZantError(f"{what}: the module has no arena plan; run the plan-arenas pass first")


def _recorded_int(value: IntegerAttr | None, key: str) -> int:
    if value is None:
        raise _unplanned(f"the scratch arena does not record '{key}'")
    return value.value.data


def describe_plan(module: ModuleOp) -> PlanInfo:
    """The plan as `plan-arenas` recorded it on the IR (nothing is recomputed)."""
    function = main_function(module)
    scratches = [
        op for op in function.body.block.ops if isinstance(op, ArenaOp) and op.role.data == ArenaRole.SCRATCH
    ]
    scratch = scratches[0] if scratches else None
    constant = arena_of(function, ArenaRole.CONSTANT)
    persistent = arena_of(function, ArenaRole.PERSISTENT)
    if scratch is None or constant is None or persistent is None:
        raise _unplanned("no scratch, constant or persistent abi.arena")
    regions: dict[str | None, PlanRegion] = {}  # scratch arenas by memory
    for op in scratches:
        memory = None if op.memory is None else op.memory.data
        regions[memory] = PlanRegion(
            "scratch" if memory is None else f"scratch.{memory}", "scratch", memory or DEFAULT_MEMORY["scratch"],
            op.size.value.data, op.alignment.value.data,
        )
    constant_region = PlanRegion(
        "constant", "constant", constant.memory.data if constant.memory else DEFAULT_MEMORY["constant"],
        constant.size.value.data, constant.alignment.value.data, constant.source.data if constant.source else "",
    )
    arena_regions = [
        *regions.values(),
        constant_region,
        PlanRegion("persistent", "persistent", DEFAULT_MEMORY["persistent"], persistent.size.value.data, persistent.alignment.value.data),
    ]
    tensors: list[TensorPlacement] = []
    io_regions: list[PlanRegion] = []
    io: list[tuple[str, str, int, str]] = []
    globals_, locals_ = buffers_of(function)
    for role in BufferRole:
        for op in globals_[role]:
            size = op.result.type.byte_size  # type: ignore[attr-defined]
            if role == BufferRole.CONSTANT:
                if op.offset is None:
                    raise _unplanned(f"constant '{op.tensor_name.data}' has no offset")
                tensors.append(
                    TensorPlacement(
                        op.tensor_name.data, role.value, op.offset.value.data, size, constant_region.id,
                        constant_region.memory, str(op.result.type.element_type),  # type: ignore[attr-defined]
                    )
                )
                continue
            element_type = op.result.type.element_type  # type: ignore[attr-defined]
            region = PlanRegion(f"io.{role.value}.{op.tensor_name.data}", "io", DEFAULT_MEMORY["io"], size, element_bytes(element_type))
            io_regions.append(region)
            io.append((role.value, op.tensor_name.data, op.result.type.size.data, str(element_type)))  # type: ignore[attr-defined]
            tensors.append(TensorPlacement(op.tensor_name.data, role.value, None, size, region.id, region.memory, str(element_type)))
    lifetimes = []
    for op in locals_:
        if op.offset is None or op.live is None:
            raise _unplanned(f"scratch buffer '{op.tensor_name.data}' has no offset or live steps")
        home = regions.get(None if op.memory is None else op.memory.data)
        if home is None:
            raise _unplanned(f"scratch buffer '{op.tensor_name.data}' is in a memory without a scratch arena")
        first, last = op.live.first.data, op.live.last.data
        tensors.append(
            TensorPlacement(
                op.tensor_name.data, "scratch", op.offset.value.data, op.result.type.byte_size,  # type: ignore[attr-defined]
                home.id, home.memory, str(op.result.type.element_type),  # type: ignore[attr-defined]
            )
        )
        lifetimes.append(Lifetime(op.tensor_name.data, first, last))
    return PlanInfo(
        regions=(*arena_regions, *io_regions),
        io=tuple(io),
        constants=constants_mode(constant),
        scratch_size=sum(r.size for r in regions.values()),
        scratch_alignment=scratch.alignment.value.data,
        constant_size=constant.size.value.data,
        lower_bound_bytes=sum(_recorded_int(op.unaligned_lower_bound, "unaligned_lower_bound") for op in scratches),
        tensors=tuple(tensors),
        constant_alignment=constant.alignment.value.data,
        aligned_lower_bound_bytes=sum(op.lower_bound.value.data for op in scratches if op.lower_bound),
        strategy=scratch.strategy.data.value if scratch.strategy else "",
        link_section=constant.link_section.data if constant.link_section else "",
        persistent_size=persistent.size.value.data,
        persistent_alignment=persistent.alignment.value.data,
        lifetimes=tuple(lifetimes),
        step_count=_recorded_int(scratch.steps, "steps"),
    )


def float_scratch_bytes(info: PlanInfo) -> int:
    """The bytes of the scratch arenas that some float buffer occupies (buffers sharing bytes
    over time counted once)."""
    covered = 0
    for region in info.scratch_regions:
        spans = sorted(
            (t.offset, t.offset + t.size) for t in info.tensors
            if t.role == "scratch" and t.region == region.id and t.is_float and t.offset is not None
        )
        end = 0
        for start, stop in spans:
            covered += max(0, stop - max(start, end))
            end = max(end, stop)
    return covered


def ram_arena_bytes(info: PlanInfo) -> int:
    """The bytes of the arenas in the image's own RAM: the scratch arena no pass placed in another
    memory, the persistent arena and a staged constant arena's copy."""
    return sum(r.size for r in info.regions if r.memory == "ram" and r.role != "io")


def plan_summary(module: ModuleOp) -> dict:
    """The figures of a planned module that compare strategies: scratch bytes, the lower bounds
    (unaligned, and with every buffer rounded up to the alignment: the best any aligned plan can
    do), the scratch a naive plan (one slot per buffer) would take, constant and persistent bytes."""
    info = describe_plan(module)
    alignment = info.scratch_alignment
    naive = sum(align_up(t.size, alignment) for t in info.tensors if t.role == "scratch")
    return {
        "strategy": info.strategy,
        "scratch_bytes": info.scratch_size,
        "lower_bound_bytes": info.lower_bound_bytes,
        "aligned_lower_bound_bytes": info.aligned_lower_bound_bytes,
        "naive_bytes": naive,
        "constant_bytes": info.constant_size,
        "persistent_bytes": info.persistent_size,
    }


def emit_plan_json(module: ModuleOp, name: str, info: PlanInfo | None = None) -> dict:
    """The content of `NAME.plan.json` (`info`: the module's `describe_plan`, if known)."""
    validate_prefix(name)
    info = info or describe_plan(module)
    return {
        "name": name,
        "arenas": info.arenas(),
        "lower_bound_bytes": info.lower_bound_bytes,
        "aligned_lower_bound_bytes": info.aligned_lower_bound_bytes,
        "float_scratch_bytes": float_scratch_bytes(info),
        "strategy": info.strategy,
        "constant_link_section": info.link_section,
        "constants": info.constants,
        "ram_arena_bytes": ram_arena_bytes(info),
        "regions": [r.as_dict() for r in info.regions],
        "plan_hash": info.plan_hash,
        "layout_hash": info.layout_hash,
        "tensor_layout_hash": info.tensor_layout_hash,
        "tensors": [t.as_dict() for t in info.tensors],
        "lifetimes": [l.as_dict() for l in info.lifetimes],
        # only for models with outputs compiled at their bound: the ABI's extents array
        **({"bounded_outputs": bounded} if (bounded := bounded_outputs(main_function(module))) else {}),
        # only for models with sequence outputs of a run-time length: their extents entries
        **({"sequence_lengths": lengths} if (lengths := sequence_lengths(main_function(module))) else {}),
        # only for plans below the layer bound (schedule-in-place, schedule-patches): the nests
        # written in place, the stages run patch by patch
        **({"schedules": schedules} if (schedules := in_place_schedules(module) + patch_schedules(module)) else {}),
        # only for modules with asm ops (asm_reach), vector loads and stores (vector_reach) or
        # inbounds geps (inbounds_reach): the pointers verify-arena-plan proved inside their
        # buffers (checked) and those it could not bound (unresolved)
        **reach_counts(module),
    }


def reach_counts(module: ModuleOp) -> dict[str, dict[str, int]]:
    """`verify-arena-plan`'s counts of checked and unresolved pointers, by plan JSON key, from
    the module attributes it recorded them in (`zant.analysis.bounds.REACH_ATTRIBUTES`)."""
    from zant.analysis.bounds import REACH_ATTRIBUTES

    found = {}
    for key, attribute in REACH_ATTRIBUTES.items():
        recorded = module.attributes.get(attribute)
        if isinstance(recorded, DictionaryAttr):
            found[key] = {name: value.value.data for name, value in recorded.data.items()}  # type: ignore[attr-defined]
    return found


def in_place_schedules(module: ModuleOp) -> list[dict]:
    """The loop nests `schedule-in-place` wrote over their inputs: {"schedule": "in-place",
    "input", "output"} (tensor names), in program order."""
    from zant.analysis.liveness import scheduled_in_place

    found = []
    for op in module.walk():
        pair = scheduled_in_place(op) if op.attributes else None
        if pair is not None:
            found.append({"schedule": "in-place", "input": pair[0], "output": pair[1]})
    return found


def patch_schedules(module: ModuleOp) -> list[dict]:
    """The stages `schedule-patches` ran tile by tile (its `zant.patches` module attribute):
    {"schedule": "patches", "output", "layers", "first", "tiles": [rows, cols], "macs",
    "layer_macs", "estimated_peak_bytes"}."""
    recorded = module.attributes.get("zant.patches")
    if not isinstance(recorded, ArrayAttr):
        return []
    found = []
    for entry in recorded.data:
        row = {}
        for key, value in entry.data.items():  # type: ignore[attr-defined]
            if isinstance(value, ArrayAttr):
                row[key] = [v.value.data for v in value.data]  # type: ignore[attr-defined]
            elif isinstance(value, StringAttr):
                row[key] = value.data
            else:
                row[key] = value.value.data  # type: ignore[attr-defined]
        found.append(row)
    return found


def _c_string(text: str) -> str:
    """`text` as a C comment-safe string (for comments only)."""
    return "".join(c if c.isascii() and c.isprintable() and c not in "*/\\" else "?" for c in text)


def _init_declaration(name: str, info: PlanInfo) -> list[str]:
    """`NAME_init` and its statuses, for a constant arena that is staged or external."""
    constants = info.constants
    if constants == "embedded" and not info.persistent_size:
        return []
    zeroes = (
        f" and zeroes the persistent arena ({name}_PERSISTENT_BYTES bytes of state kept between calls)"
        if info.persistent_size else ""
    )
    if constants == "embedded":
        return [
            Status.NOT_INITIALIZED.define(name),
            "",
            f"/* Zeroes the persistent arena ({name}_PERSISTENT_BYTES bytes of state kept between calls);",
            "   returns 0. Call it first, and again to reset the state. */",
            f"int32_t {name}_init(void);",
            "",
        ]
    lines = [
        Status.NOT_INITIALIZED.define(name),
        Status.BAD_CONSTANTS.define(name),
        f"#define {name}_CONSTANT_ALIGNMENT {info.constant_alignment}u",
        "",
    ]
    if constants == "staged":
        return lines + [
            f"/* Copies the constants from read-only memory into their RAM arena{zeroes}; returns 0. */",
            f"int32_t {name}_init(void);",
            "",
        ]
    return lines + [
        f"/* Where the firmware placed {name}.weights.bin ({name}_CONSTANT_BYTES bytes, aligned to",
        f"   {name}_CONSTANT_ALIGNMENT){zeroes}; returns 0, or {name}_STATUS_BAD_CONSTANTS. */",
        f"int32_t {name}_init(const void *constants);",
        "",
    ]


def _region_lines(name: str, info: PlanInfo) -> list[str]:
    """The regions' ids, and each scratch arena's bytes when `place-memories` split it."""
    lines = ["/* Regions: stable ids (from what each region is, not from their order). */"]
    counts: dict[str, int] = {}
    for r in info.regions:
        if r.role == "io":  # by parameter index: tensor names need not be identifiers
            role = r.name.split(".")[1]
            counts[role] = counts.get(role, -1) + 1
            macro = f"{role.upper()}_{counts[role]}"
        else:
            macro = re.sub(r"[^A-Za-z0-9]", "_", r.name).upper()
        lines.append(
            f"#define {name}_REGION_{macro} 0x{r.id:08x}u /* {r.role} in {_c_string(r.memory)}"
            f"{f' from {_c_string(r.source_memory)}' if r.staged else ''}: {r.size} B, align {r.alignment} */"
        )
    placed = [r for r in info.scratch_regions if r.name != "scratch"]
    for r in placed:
        lines.append(f"#define {name}_SCRATCH_{r.memory.upper()}_BYTES {r.size}u")
    return lines + [
        "",
        Status.PLAN_MISMATCH.define(name),
        Status.BAD_PARAMETER.define(name),
        Status.OUTPUT_SIZE.define(name),
        Status.BAD_INDEX.define(name),
        Status.BAD_BUFFER.define(name),
        "",
    ]


def bounded_outputs(function: func.FuncOp) -> list[dict]:
    """The outputs compiled at the bound of their data-dependent size (`zant.frontend.bounded`),
    in output order: output index, tensor name, the dimension holding the count, and the entry
    of the extents array (the last output) that `NAME_predict` writes their valid extent to."""
    from zant.dialects.onnx import OUTPUT_BOUNDS_ATTR

    bounds = function.attributes.get(OUTPUT_BOUNDS_ATTR)
    if not isinstance(bounds, DenseArrayBase):
        return []
    outputs = globals_by_role(function, BufferRole.OUTPUT)
    dims = [(op, int(dim)) for op, dim in zip(outputs, bounds.get_values(), strict=True) if dim >= 0]
    return [
        {"output": op.index.value.data, "name": op.tensor_name.data, "dim": dim, "extent_index": k}
        for k, (op, dim) in enumerate(dims)
    ]


def sequence_lengths(function: func.FuncOp) -> list[dict]:
    """The sequence outputs whose length is only known at run time (`resolve-sequences`), by
    number: their slots (output indices) and the entry of the extents array (after the bounded
    outputs' ones) that `NAME_predict` writes their length to."""
    from zant.dialects.onnx import OUTPUT_SEQUENCES_ATTR

    groups = function.attributes.get(OUTPUT_SEQUENCES_ATTR)
    if not isinstance(groups, DenseArrayBase):
        return []
    slots: dict[int, list[int]] = {}
    for index, group in enumerate(groups.get_values()):
        if group >= 0:
            slots.setdefault(int(group), []).append(index)
    first = len(bounded_outputs(function))
    return [{"sequence": g, "outputs": slots[g], "extent_index": first + g} for g in sorted(slots)]


def _bounded_lines(name: str, function: func.FuncOp) -> list[str]:
    """The header's account of the bounded outputs and the extents array (none without them)."""
    bounded = bounded_outputs(function)
    lengths = sequence_lengths(function)
    if lengths:
        lines = [
            "/* Sequence outputs of a run-time length: one output per slot of the capacity; the",
            "   last parameter, an int32_t extents array, receives how many slots hold elements: */",
        ]
        lines += [
            f"/*   extents[{s['extent_index']}]: the length of the sequence in outputs {s['outputs'][0]}..{s['outputs'][-1]} */"
            for s in lengths
        ]
        return _bounded_lines_only(name, bounded) + lines + [
            f"#define {name}_SEQUENCE_LENGTHS {len(lengths)}u", ""
        ]
    return _bounded_lines_only(name, bounded)


def _bounded_lines_only(name: str, bounded: list[dict]) -> list[str]:
    if not bounded:
        return []
    lines = [
        f"/* Bounded outputs: their size depends on the data. Each buffer is compiled at the size's upper",
        f"   bound ({name}_OUTPUT_<i>_SIZE), the valid entries come first along the dimension named here",
        "   (the rest are zero), and the last parameter, an int32_t array of",
        f"   {name}_BOUNDED_OUTPUTS entries, receives how many are valid: */",
    ]
    lines += [
        f"/*   extents[{b['extent_index']}]: output {b['output']} ('{_c_string(b['name'])}'), dimension {b['dim']} */"
        for b in bounded
    ]
    return lines + [f"#define {name}_BOUNDED_OUTPUTS {len(bounded)}u", ""]


def default_arena(info: PlanInfo) -> tuple[int, int]:
    """The size and alignment of the scratch arena no pass placed in another memory (the
    library's `.bss` array, or the caller's arena): `NAME_ARENA_SIZE`, `NAME_ARENA_ALIGN`."""
    region = next((r for r in info.scratch_regions if r.name == "scratch"), None)
    return (region.size, region.alignment) if region is not None else (0, info.scratch_alignment)


def emit_header(
    module: ModuleOp, name: str, info: PlanInfo | None = None, *, target: str | None = None,
    float_abi: str | None = None, optimize: str | None = None, runtime_symbols: list[str] | None = None,
    arena: str = "library", runtime: str = "external",
) -> str:
    """The C header `NAME.h`: the entry point (and `NAME_init` for external or staged
    constants, as the plan places them), arena sizes, plan hashes, tensor sizes (`info`: the
    module's `describe_plan`, if known); the scratch arena's size and alignment and, with
    `arena="caller"`, `NAME_set_arena`; given the `target`, how to link the library: its float
    ABI, the callers' compiler flags and the `runtime_symbols` it needs, or that its `runtime` is
    bundled (`zant.backend.c_abi`)."""
    from zant.backend.c_abi import abi_lines, arena_lines

    validate_prefix(name)
    function = main_function(module)
    info = info or describe_plan(module)

    parameters = parameter_names(function, Namer(reserved_names(name)))
    lines = [
        f"/* {name}.h: generated by zant. Do not edit. */",
        f"#ifndef {name}_H_",
        f"#define {name}_H_",
        "",
        "#include <stdbool.h>",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
        f"#define {name}_SCRATCH_BYTES {info.scratch_size}u",
        f"#define {name}_CONSTANT_BYTES {info.constant_size}u",
        *([f"#define {name}_PERSISTENT_BYTES {info.persistent_size}u"] if info.persistent_size else []),
        "/* The plan (every region and tensor placement) and the layout (the inputs and outputs) this",
        f"   file was generated with; {name}_check_plan compares a caller's expected plan hash. */",
        f"#define {name}_PLAN_HASH 0x{info.plan_hash}ULL",
        f"#define {name}_LAYOUT_HASH 0x{info.layout_hash}ULL",
        f"#define {name}_TENSOR_LAYOUT_HASH 0x{info.tensor_layout_hash}ULL",
        "",
        *(abi_lines(name, target, float_abi, optimize, runtime_symbols, runtime) if target is not None else []),
        *arena_lines(name, *default_arena(info), arena),
        *_region_lines(name, info),
    ]
    params, sized = [], []
    globals_ = buffers_of(function)[0]
    for role in (BufferRole.INPUT, BufferRole.OUTPUT):
        for op in globals_[role]:
            count = op.result.type.size.data  # type: ignore[attr-defined]
            element_type = op.result.type.element_type  # type: ignore[attr-defined]
            lines.append(
                f"#define {name}_{role.upper()}_{op.index.value.data}_SIZE {count}u "
                f"/* {_c_string(op.tensor_name.data)} */"
            )
            const = "const " if role == BufferRole.INPUT else ""
            note = f" /* {_bits_note(element_type)} bits */" if isinstance(element_type, AnyFloat) and c_type(
                element_type
            ) in ("uint16_t", "uint8_t") else ""
            if is_packed(element_type):
                note = f" /* {_packed_note(element_type)} */"
            capacity = op.attributes.get(STRING_CAPACITY_ATTR)
            if isinstance(capacity, IntegerAttr):  # strings: zant.ir.strings
                width = capacity.value.data
                note = f" /* {count // width} strings, each {width} bytes of UTF-8, NUL-padded */"
            params.append(f"{const}{c_type(element_type)} *{parameters[op]}{note}")
            sized += [params[-1], f"size_t {parameters[op]}_bytes"]
    lines += ["", *_init_declaration(name, info)] + [
        f"/* Returns 0 if this file was generated with plan hash `expected` ({name}_PLAN_HASH), else",
        f"   {name}_STATUS_PLAN_MISMATCH. */",
        f"int32_t {name}_check_plan(uint64_t expected);",
        f"extern const uint64_t {name}_plan_hash; /* {name}_PLAN_HASH, as linked */",
        f"extern const uint64_t {name}_layout_hash; /* {name}_LAYOUT_HASH, as linked */",
        "",
        *_bounded_lines(name, function),
        "/* Runs the model; inputs then outputs, dense row-major. Returns 0 on success. */",
        f"int32_t {name}_predict({', '.join(params) or 'void'});",
        f"/* {name}_predict with each buffer's size in bytes after it (its element count x its element",
        f"   size): another size returns {name}_STATUS_BAD_BUFFER before anything is read or written. */",
        f"int32_t {name}_predict_sized({', '.join(sized) or 'void'});",
        "",
        "#ifdef __cplusplus",
        "}",
        "#endif",
        "",
        f"#endif /* {name}_H_ */",
        "",
    ]
    return "\n".join(lines)
