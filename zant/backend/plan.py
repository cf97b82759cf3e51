"""What the generated code promises about memory: the arena plan, its hashes, header and JSON.

Everything here reads a planned uop module (see `zant.passes.plan_arenas`) and is deterministic:
the same module gives byte-identical header and JSON on every run.

* `describe_plan(module, name)` → `PlanInfo`: scratch / constant arenas, every tensor's placement,
  the liveness lower bound and the two hashes;
* `emit_header(module, name) -> str`: the C header `NAME.h`;
* `emit_plan_json(module, name) -> dict`: the content of `NAME.plan.json`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    AnyFloat,
    IntegerType,
    ModuleOp,
    Signedness,
)
from xdsl.ir import Attribute, Operation, SSAValue

from zant.backend.names import Namer, sanitize_zig, validate_prefix
from zant.dialects.uop import DefineGlobalOp, DefineLocalOp, RangeOp, ViewOp
from zant.errors import ZantError
from zant.passes.plan_arenas import ALIGNMENT_ATTR, SCRATCH_SIZE_ATTR, align_up

CONSTANT_ALIGNMENT = 16
"""Every constant array is emitted with `align(16)`; the constant arena is their aligned sum."""


def main_function(module: ModuleOp) -> func.FuncOp:
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if len(functions) != 1:
        raise ZantError(f"expected exactly one func.func in the module, found {len(functions)}")
    return functions[0]


def globals_by_role(function: func.FuncOp, role: str) -> list[DefineGlobalOp]:
    ops = [op for op in function.walk() if isinstance(op, DefineGlobalOp) and op.role.data == role]
    return sorted(ops, key=lambda op: op.index.value.data)


def parameter_names(function: func.FuncOp, namer: Namer) -> dict[DefineGlobalOp, str]:
    """The entry point's parameter names: `input_<name>` then `output_<name>`, unique."""
    names = {}
    for role in ("input", "output"):
        for op in globals_by_role(function, role):
            names[op] = namer.fresh(f"{role}_{sanitize_zig(op.tensor_name.data)}")
    return names


C_TYPES = {
    ("f", 16): "uint16_t",
    ("f", 32): "float",
    ("f", 64): "double",
}


def c_type(t: Attribute) -> str:
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

    def as_dict(self) -> dict:
        return {"name": self.name, "role": self.role, "offset": self.offset, "size": self.size}


@dataclass(frozen=True)
class PlanInfo:
    scratch_size: int
    scratch_alignment: int
    constant_size: int
    lower_bound_bytes: int
    tensors: tuple[TensorPlacement, ...]

    def arenas(self) -> list[dict]:
        return [
            {"role": "scratch", "size": self.scratch_size, "alignment": self.scratch_alignment},
            {"role": "constant", "size": self.constant_size, "alignment": CONSTANT_ALIGNMENT},
        ]

    @property
    def plan_hash(self) -> str:
        return _hash(self.arenas())

    @property
    def tensor_layout_hash(self) -> str:
        return _hash([t.as_dict() for t in self.tensors])


def _hash(payload) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _linear_order(function: func.FuncOp) -> tuple[dict[Operation, int], dict[Operation, int]]:
    """Each op's position in program order, and for each op the last position nested in it."""
    position: dict[Operation, int] = {}
    last: dict[Operation, int] = {}

    def visit(op: Operation):
        position[op] = len(position)
        for region in op.regions:
            for block in region.blocks:
                for child in block.ops:
                    visit(child)
        last[op] = len(position) - 1

    for op in function.body.block.ops:
        visit(op)
    return position, last


def _use_interval(use: Operation, definition: Operation, position, last) -> tuple[int, int]:
    """The span of program order during which a use inside loops may run: a use in a loop that
    does not also contain the definition recurs over the whole loop."""
    start, end = position[use], position[use]
    parent = use.parent_op()
    while parent is not None and isinstance(parent, RangeOp) and not parent.is_ancestor(definition):
        start, end = position[parent], last[parent]
        parent = parent.parent_op()
    return start, end


def _users(value: SSAValue) -> list[Operation]:
    """Ops that touch a buffer, looking through views (which emit no code)."""
    result = []
    for use in value.uses:
        if isinstance(use.operation, ViewOp):
            result.extend(_users(use.operation.result))
        else:
            result.append(use.operation)
    return result


def lower_bound_bytes(function: func.FuncOp) -> int:
    """Max over program order of the bytes of scratch buffers live at once (first use … last
    use, loops counted whole): no plan of this schedule can use less scratch."""
    position, last = _linear_order(function)
    events: list[tuple[int, int]] = []
    for op in function.walk():
        if not isinstance(op, DefineLocalOp):
            continue
        users = _users(op.result)
        if not users:
            continue
        spans = [_use_interval(user, op, position, last) for user in users]
        size = op.result.type.byte_size  # type: ignore[attr-defined]
        events.append((min(s for s, _ in spans), size))
        events.append((max(e for _, e in spans) + 1, -size))
    live = peak = 0
    for _, delta in sorted(events, key=lambda e: (e[0], e[1])):
        live += delta
        peak = max(peak, live)
    return peak


def describe_plan(module: ModuleOp) -> PlanInfo:
    function = main_function(module)
    if SCRATCH_SIZE_ATTR not in function.attributes:
        raise ZantError("the module has no arena plan: run the plan-arenas pass first")
    scratch_size = function.attributes[SCRATCH_SIZE_ATTR].value.data  # type: ignore[attr-defined]
    alignment = function.attributes[ALIGNMENT_ATTR].value.data  # type: ignore[attr-defined]
    tensors: list[TensorPlacement] = []
    constant_cursor = 0
    for role in ("input", "output", "constant"):
        for op in globals_by_role(function, role):
            size = op.result.type.byte_size  # type: ignore[attr-defined]
            offset = None
            if role == "constant":
                offset = align_up(constant_cursor, CONSTANT_ALIGNMENT)
                constant_cursor = offset + size
            tensors.append(TensorPlacement(op.tensor_name.data, role, offset, size))
    for op in function.walk():
        if isinstance(op, DefineLocalOp):
            if op.offset is None:
                raise ZantError(
                    f"scratch buffer '{op.tensor_name.data}' has no offset: run plan-arenas first"
                )
            size = op.result.type.byte_size  # type: ignore[attr-defined]
            tensors.append(TensorPlacement(op.tensor_name.data, "scratch", op.offset.value.data, size))
    return PlanInfo(
        scratch_size=scratch_size,
        scratch_alignment=alignment,
        constant_size=align_up(constant_cursor, CONSTANT_ALIGNMENT),
        lower_bound_bytes=lower_bound_bytes(function),
        tensors=tuple(tensors),
    )


def emit_plan_json(module: ModuleOp, name: str) -> dict:
    """The content of `NAME.plan.json`."""
    validate_prefix(name)
    info = describe_plan(module)
    return {
        "name": name,
        "arenas": info.arenas(),
        "lower_bound_bytes": info.lower_bound_bytes,
        "plan_hash": info.plan_hash,
        "tensor_layout_hash": info.tensor_layout_hash,
        "tensors": [t.as_dict() for t in info.tensors],
    }


def _c_string(text: str) -> str:
    """`text` as a C comment-safe string (for comments only)."""
    return "".join(c if c.isascii() and c.isprintable() and c not in "*/\\" else "?" for c in text)


def emit_header(module: ModuleOp, name: str) -> str:
    """The C header `NAME.h`: the entry point, arena sizes, plan hashes, tensor sizes."""
    validate_prefix(name)
    function = main_function(module)
    info = describe_plan(module)
    from zant.backend.zig_printer import reserved_names

    parameters = parameter_names(function, Namer(reserved_names(name)))
    lines = [
        f"/* {name}.h: generated by zant. Do not edit. */",
        f"#ifndef {name}_H_",
        f"#define {name}_H_",
        "",
        "#include <stdbool.h>",
        "#include <stdint.h>",
        "",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
        f"#define {name}_SCRATCH_BYTES {info.scratch_size}u",
        f"#define {name}_CONSTANT_BYTES {info.constant_size}u",
        f'#define {name}_PLAN_HASH "{info.plan_hash}"',
        f'#define {name}_TENSOR_LAYOUT_HASH "{info.tensor_layout_hash}"',
        "",
    ]
    params = []
    for role in ("input", "output"):
        for op in globals_by_role(function, role):
            count = op.result.type.size.data  # type: ignore[attr-defined]
            element_type = op.result.type.element_type  # type: ignore[attr-defined]
            lines.append(
                f"#define {name}_{role.upper()}_{op.index.value.data}_SIZE {count}u "
                f"/* {_c_string(op.tensor_name.data)} */"
            )
            const = "const " if role == "input" else ""
            note = " /* f16 bits */" if c_type(element_type) == "uint16_t" and isinstance(
                element_type, AnyFloat
            ) else ""
            params.append(f"{const}{c_type(element_type)} *{parameters[op]}{note}")
    lines += [
        "",
        "/* Runs the model; inputs then outputs, dense row-major. Returns 0 on success. */",
        f"int32_t {name}_predict({', '.join(params) or 'void'});",
        "",
        "#ifdef __cplusplus",
        "}",
        "#endif",
        "",
        f"#endif /* {name}_H_ */",
        "",
    ]
    return "\n".join(lines)
