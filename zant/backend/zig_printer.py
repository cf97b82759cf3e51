"""Print a planned uop module as one self-contained Zig file (the contract is /work/shared/DESIGN.md).

A thin printer: one `singledispatchmethod` case per op, names from `name_hint`, indentation
handled once. Decisions were made by the passes before, and it reads them off the IR:
`plan-arenas` (offsets, arena sizes, live steps, for the header comment), `mark-inbounds` (which
addresses are unchecked), `contract-mulacc` (`@mulAdd` iff `fused`), `expand-float-minmax`
(clamps as compare and select), `linearize-geps` (every gep indexes its flat buffer; a gep
through a view is refused), `dce` (every scratch buffer it is given is printed),
`outline-kernels` (which loop nests are functions of their own: each private `func.func` it
made is a Zig function, each `func.call` a call of it). What it still chooses is spelling: a
single-use index add/sub/mul inside its address, a compare inside the where right after it (`if
(x < c) c else x`, or `@select(f32, x < c, c, x)` lane by lane). Target dialects' ops (`arm_dsp`, `arm_mve`) print through the cases
their own modules register (`zant.backend.zig_cases`): this printer names no target op.

Layout of the generated file:

* `const std = @import("std");`
* the constants as one aligned byte blob `NAME_constants`, each a `const const_<name>: [*]const T`
  pointer into it (little-endian bytes, so every value, NaN payloads, -0.0, inf, f16, is exact).
  `zig_files` writes the blob beside the file as `NAME.weights.bin`, read with `@embedFile`;
  `print_zig` prints its bytes inline (one file, for small tests). Where the arena lives is what
  `plan-arenas{constants=...}` recorded on the constant `abi.arena` (`abi.CONSTANT_MODES`): embedded
  (read-only data), staged (`NAME_init()` copies it into a RAM arena) or external
  (`NAME_init(address)` is told where the firmware put it; each function reading constants then
  declares its pointers from that address);
* `var NAME_scratch: [S]u8 align(A) = undefined;`, the scratch arena (absent when S is 0), or
  after `place-memories` one `NAME_scratch_<memory>` per memory in section `.zant.<memory>`, and
  each `uop.define_local` as a `const scratch_<name>: [*]T` pointer into its arena; with
  `arena="caller"` (`zant compile --arena caller`) the caller's arena instead, `NAME_arena`, set
  by `NAME_set_arena(arena, bytes)` (`abi.Status.BAD_ARENA` for a null, misaligned or small
  one), each function declaring the scratch pointers it reads from it;
* `NAME_plan_hash`, `NAME_layout_hash` (`u64`, exported, as in the header) and
  `NAME_check_plan(expected)`: 0 if `expected` is the plan hash, else 3;
* the helper functions some ops need (`zig_helpers.HELPERS`), only those used: each case that
  prints a helper's call says which (`call_helper`), and the file holds it and those it calls;
* `fn kernel_<tensor>(…) void` for each kernel function of the module (`outline-kernels`: a
  top-level loop nest, named after the tensor it stores last), taking the arguments it prints
  that have no file-scope name (graph buffers, scalars), after a comment naming the ONNX nodes it
  computes, from its call's location: `// nodes: ["conv1", "relu1"]` (for the reader: `zant profile`
  has them from the IR, `PrintedFiles.kernels`);
* `export fn NAME_predict(input_…: [*]const T, …, output_…: [*]T, …) callconv(.c) i32`: the
  top-level scalar code, and a call of each kernel in order (`@call(kernel_call, …)`).

Index values are `isize`, integer arithmetic wraps (`+%`) but index arithmetic does not, and
every declared name is either used or discarded with `_ = name;`. `uop.const` values are printed
inline where used. A `uop.gep inbounds` is unchecked and its address arithmetic wraps (exact:
`mark-inbounds` proved every part of it in range): `&b[@as(usize, @bitCast(i *% 3 +% j))]`; any
other is checked, so ReleaseSafe traps on a negative, out-of-range or overflowing address:
`&b[0..N][@intCast(i * 3 + j)]`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import singledispatchmethod
from typing import IO

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    VectorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import SymbolTable

from zant.backend.names import Namer, reserved_names, sanitize_zig, validate_prefix
from zant.backend.plan import PlanInfo, describe_plan, globals_by_role, main_function, parameter_names
from zant.backend.zig_cases import all_helpers, case_for
from zant.backend.zig_helpers import branch_quota, call_weight, uses
from zant.dialects import abi, uop
from zant.dialects.zant import HOT
from zant.errors import ZantError
from zant.ir.locations import node_names
from zant.ir.resources import attr_to_array
from zant.ir.types import is_packed, is_storage_float, numpy_dtype, pack, storage_float

# ---------------------------------------------------------------------------------------------
# Types and literals
# ---------------------------------------------------------------------------------------------


def zig_type(t: Attribute) -> str:
    """The Zig type of a value: f32, bool (i1), i8, u8 (ui8), isize (index) …, @Vector(8, f32)."""
    if isinstance(t, VectorType):
        return f"@Vector({uop.lanes(t)}, {zig_type(uop.lane_type(t))})"
    if is_storage_float(t):  # bfloat16, float8: its bits (zant_from_small_float reads them)
        return f"u{t.bitwidth}"  # type: ignore[attr-defined]
    if isinstance(t, AnyFloat):
        return f"f{t.bitwidth}"
    if isinstance(t, IndexType):
        return "isize"
    if isinstance(t, IntegerType):
        width = t.width.data
        if width == 1:
            return "bool"
        return f"{'u' if t.signedness.data == Signedness.UNSIGNED else 'i'}{width}"
    raise ZantError(f"no Zig type for {t}")


def memory_type(t: Attribute) -> str:
    """The Zig element type of a buffer's pointer: its values' type, or `u8` for packed types
    (int4, uint4, float4e2m1, int2, uint2: zant_load_packed/zant_store_packed read and write
    them several to a byte)."""
    return "u8" if is_packed(t) else zig_type(t)


_KINDS = {"ieee": "ieee", "fn": "fn_", "fnuz": "fnuz", "finite": "finite"}
"""`STORAGE_FLOATS`' special-value kinds → `ZantFloatKind`'s (`fn` is a Zig keyword)."""


def _is_bool(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


def _is_int(t: Attribute) -> bool:
    return isinstance(t, IntegerType | IndexType) and not _is_bool(t)


def float_literal(value: float, t: AnyFloat) -> str:
    """An exact Zig expression of type `t` for `value` rounded to `t`."""
    dtype = numpy_dtype(t)
    rounded = np.array([value], dtype=np.float64).astype(dtype)[0]
    zt = zig_type(t)
    if is_storage_float(t):  # its bits
        return f"@as({zt}, 0x{int(np.array([rounded]).view(f'<u{dtype.itemsize}')[0]):x})"
    if math.isfinite(rounded) and not (rounded == 0 and math.copysign(1.0, rounded) < 0):
        return f"@as({zt}, {float(rounded).hex()})"
    bits = int(rounded.view(f"<u{dtype.itemsize}"))
    return f"@as({zt}, @bitCast(@as(u{dtype.itemsize * 8}, 0x{bits:x})))"


def int_literal(value: int, t: Attribute) -> str:
    if _is_bool(t):
        return "true" if value else "false"
    if isinstance(t, IntegerType):
        width = t.width.data
        value &= (1 << width) - 1
        if t.signedness.data != Signedness.UNSIGNED and value >= 1 << (width - 1):
            value -= 1 << width
    return f"@as({zig_type(t)}, {value})"


def scalar_literal(attr: IntegerAttr | FloatAttr) -> str:
    if isinstance(attr, FloatAttr):
        return float_literal(attr.value.data, attr.type)  # type: ignore[arg-type]
    return int_literal(attr.value.data, attr.type)


# ---------------------------------------------------------------------------------------------
# ALU tables: op class → Zig expression template by operand kind ({a}, {b}, {T}), written by
# the ops' short names; a template that calls a helper is a `HelperCall`, which names it
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HelperCall:
    """A template that is a call of helper `helper` (`zig_helpers.HELPERS`) on `arguments`."""

    helper: str
    arguments: str

    def format(self, **values: str) -> str:
        return f"{self.helper}({self.arguments.format(**values)})"


Template = str | HelperCall


def _by_class(templates: dict[str, Template]) -> dict[type, Template]:
    return {uop.ALU_OPS[name]: template for name, template in templates.items()}


FLOAT_ALU_BY_NAME: dict[str, Template] = {
    "add": "{a} + {b}",
    "sub": "{a} - {b}",
    "mul": "{a} * {b}",
    "div": "{a} / {b}",
    "rem": "@rem({a}, {b})",
    "max": HelperCall("zant_fmax", "{T}, {a}, {b}"),
    "min": HelperCall("zant_fmin", "{T}, {a}, {b}"),
    "pow": HelperCall("zant_pow", "{T}, {a}, {b}"),
    "neg": "-{a}",
    "abs": "@abs({a})",
    "sign": HelperCall("zant_sign", "{T}, {a}"),
    "sqrt": "@sqrt({a})",
    "recip": "1.0 / {a}",
    "exp": "@exp({a})",
    "log": "@log({a})",
    "tanh": HelperCall("zant_tanh", "{T}, {a}"),
    "erf": HelperCall("zant_erf", "{T}, {a}"),
    "floor": "@floor({a})",
    "ceil": "@ceil({a})",
    "round": HelperCall("zant_round", "{T}, {a}"),
    "sin": "@sin({a})",
    "cos": "@cos({a})",
    "tan": "@tan({a})",
    **{
        f: HelperCall("zant_math", f"{{T}}, std.math.{f}, {{a}}")
        for f in ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")
    },
    "isnan": "@as({T}, if ({a} != {a}) 1.0 else 0.0)",
}
INT_ALU_BY_NAME: dict[str, Template] = {
    "add": "{a} +% {b}",
    "sub": "{a} -% {b}",
    "mul": "{a} *% {b}",
    "div": "@divTrunc({a}, {b})",
    "rem": "@rem({a}, {b})",
    "max": "@max({a}, {b})",
    "min": "@min({a}, {b})",
    "and": "{a} & {b}",
    "or": "{a} | {b}",
    "xor": "{a} ^ {b}",
    "shl": HelperCall("zant_shl", "{T}, {a}, {b}"),
    "shr": HelperCall("zant_shr", "{T}, {a}, {b}"),
    "neg": "-%{a}",
    "abs": "@as({T}, @bitCast(@abs({a})))",
    "sign": HelperCall("zant_sign", "{T}, {a}"),
    "not": "~{a}",
}
INDEX_ALU = _by_class(INT_ALU_BY_NAME | {"add": "{a} + {b}", "sub": "{a} - {b}", "mul": "{a} * {b}", "neg": "-{a}"})
"""Index arithmetic does not wrap: an overflow is a bug that ReleaseSafe should trap."""
BOOL_ALU = _by_class({
    "and": "{a} and {b}",
    "or": "{a} or {b}",
    "xor": "{a} != {b}",
    "not": "!{a}",
    "max": "{a} or {b}",
    "min": "{a} and {b}",
})
COMPARE = _by_class({"cmplt": "<", "cmple": "<=", "cmpeq": "==", "cmpne": "!="})
VECTOR_FLOAT_ALU = _by_class({
    **{k: FLOAT_ALU_BY_NAME[k] for k in ("add", "sub", "mul", "div", "neg", "abs", "sqrt")},
    "max": HelperCall("zant_vfmax", "{T}, {a}, {b}"),
    "min": HelperCall("zant_vfmin", "{T}, {a}, {b}"),
})
VECTOR_INT_ALU = _by_class({k: INT_ALU_BY_NAME[k] for k in uop.VECTOR_ALU_OPS if k in INT_ALU_BY_NAME and k != "div"})
"""Lane-wise forms of `uop.VECTOR_ALU_OPS` ({T} is the vector type)."""
FLOAT_ALU = _by_class(FLOAT_ALU_BY_NAME)
INT_ALU = _by_class(INT_ALU_BY_NAME)
VECTOR_CAST = {"float": "@floatCast({a})", "int": "@floatFromInt({a})"}
"""Lossless lane-wise casts to a float type by source kind; integer widening is `@intCast`."""


KERNEL_CALL = [
    "// Each loop nest is a function. ReleaseSafe keeps them apart: LLVM's passes are superlinear in",
    "// the size of a function, and its checks make every kernel large. Other modes may inline them,",
    "// except in an image built to profile (its root declares `zant_profile_kernels`: `zant profile`).",
    "const kernel_call: std.builtin.CallModifier = if (@import(\"builtin\").mode == .safe or "
    "@hasDecl(@import(\"root\"), \"zant_profile_kernels\")) .never_inline else .auto;",
    "",
]


@dataclass
class Kernel:
    """A kernel function as printed: its Zig name, its parameters (the values passed to it, in
    order) and their declaration, the ONNX nodes it computes and its body's lines."""

    name: str
    parameters: list[SSAValue]
    signature: str
    nodes: list[str]
    body: list[str]

    def lines(self, calling_convention: str = "", visibility: str = "") -> list[str]:
        """The function, after its `// nodes:` comment, and a blank line."""
        comment = "// nodes: " + json.dumps(self.nodes, ensure_ascii=True)
        return [comment, f"{visibility}fn {self.name}({self.signature}){calling_convention} void {{", *self.body, "}", ""]

    @property
    def line_count(self) -> int:
        return len(self.body) + 4


def _unprinted(value: SSAValue) -> bool:
    """Whether no use of `value` shows in the Zig text (Zig rejects unused constants)."""
    return not value.uses


FLUSH_DENORMALS = """\
// flush-denormals: subnormal f32/f64 values are flushed to zero during NAME_predict (x86-64:
// MXCSR's FTZ and DAZ bits; AArch64: FPCR's FZ bit); the caller's control register is restored.
const FpControl = if (@import("builtin").cpu.arch == .aarch64) u64 else u32;
fn flushDenormals() FpControl {
    switch (@import("builtin").cpu.arch) {
        .x86_64, .x86 => {
            var saved: u32 = undefined;
            asm volatile ("stmxcsr (%[p])" : : [p] "r" (&saved) : .{ .memory = true });
            const flushed: u32 = saved | 0x8040; // FTZ (bit 15), DAZ (bit 6)
            asm volatile ("ldmxcsr (%[p])" : : [p] "r" (&flushed) : .{ .memory = true });
            return saved;
        },
        .aarch64 => {
            const saved = asm volatile ("mrs %[r], fpcr" : [r] "=r" (-> u64));
            asm volatile ("msr fpcr, %[v]" : : [v] "r" (saved | (1 << 24)));
            return saved;
        },
        else => @compileError("flush-denormals: no flush-to-zero mode on this architecture"),
    }
}
fn restoreFpControl(saved: FpControl) void {
    switch (@import("builtin").cpu.arch) {
        .x86_64, .x86 => asm volatile ("ldmxcsr (%[p])" : : [p] "r" (&saved) : .{ .memory = true }),
        .aarch64 => asm volatile ("msr fpcr, %[v]" : : [v] "r" (saved)),
        else => unreachable,
    }
}
""".splitlines() + [""]
"""File-scope helpers of an entry function marked `zant.flush_denormals` (passes/flush_denormals.py)."""


class ZigPrinter:
    """Prints one planned uop module as Zig source; `NAME` prefixes every exported symbol."""

    def __init__(
        self, module: ModuleOp, name: str = "model", blob_file: str | None = None, info: PlanInfo | None = None,
        arena: str = "library", hot: bool = False,
    ):
        self.module = module
        # The kernels `mark-hot-kernels` marked go to a module of their own, `NAME_hot`, that a
        # build for size compiles for speed (`hot_file_name`); False: they stay in NAME.zig.
        self.hot = hot
        self.hot_kernel_lines: list[str] = []  # the hot module's kernels
        self.scope_decls: set[str] = set()  # file-scope pointers a hot module reads (made `pub`)
        self.scope_names: list[str] = []  # their names, in order
        self.arena = arena  # the scratch arena's owner: the library (.bss) or the caller (c_abi.ARENA_MODES)
        self.info = info  # the module's describe_plan, if the caller has it
        self.name = validate_prefix(name)
        self.constants = "embedded"  # the plan's, read by print_module
        self.blob_file = blob_file  # None: the constant bytes printed inline
        self.blob = b""
        self.external_views: dict[SSAValue, str] = {}  # external constants: buffer → its declaration
        self.init_parameter: str | None = None  # NAME_init's parameter (external constants)
        self.init_body: list[str] = []  # NAME_init's statements: copy, take the address, zero
        self.persistent = False  # the plan has a persistent arena (NAME_init zeroes it)
        self.namer = Namer(reserved_names(name))
        self.names: dict[SSAValue, str] = {}
        self.aliases = 0  # entries of `names` that are a kernel's arguments, named as their values
        self.inline: dict[SSAValue, str] = {}  # values printed at their one use
        self.address_ops: set[SSAValue] = set()  # index arithmetic printed in its gep's address
        self.views: dict[SSAValue, tuple[str, uop.ViewType | None]] = {}
        self.helpers_used: set[str] = set()  # the helpers the file holds (`call_helper`)
        self.inline_calls = 0  # of the function being printed, for its branch quota (`call_helper`)
        self.packed: dict[SSAValue, tuple[str, str]] = {}  # a gep into a packed buffer: (base, element type)
        self.lines: list[str] = []
        self.level = 0
        self.scratch_lines: list[str] = []  # file scope: a typed pointer per scratch buffer
        self.scratch_symbols: dict[str | None, str] = {}  # scratch arena array by memory
        self.kernel_lines: list[str] = []  # file scope: one function per top-level loop nest
        self.kernels: list[Kernel] = []  # each kernel function, in order
        self.arena_externs: dict[str, str] = {}  # each file-scope arena → how a build unit declares it
        self.view_lines: list[str] = []  # the constants' typed pointers into their arena
        self.pieces: tuple[list[str], list[str], list[str]] | None = None  # header, file scope, helpers
        self.functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}  # kernels by name
        self.calls_of: dict[str, int] = {}  # calls of each kernel: more than one after share-kernels
        for op in module.walk():
            if isinstance(op, func.CallOp):
                self.calls_of[op.callee.string_value()] = self.calls_of.get(op.callee.string_value(), 0) + 1
        self.shared_kernels: dict[str, tuple[str, list[int]]] = {}  # printed: its name, the positions passed

    # -- output -------------------------------------------------------------------------------

    def emit(self, line: str = "") -> None:
        self.lines.append(("    " * self.level + line) if line else "")

    def fresh(self, value: SSAValue, prefix: str) -> str:
        hint = sanitize_zig(value.name_hint) if value.name_hint else str(len(self.names) - self.aliases)
        name = self.namer.fresh(f"{prefix}{hint}")
        self.names[value] = name
        return name

    def expr(self, value: SSAValue) -> str:
        """The Zig expression of a scalar value: its name, a literal for `uop.const`, or the
        expression of a value printed where it is used."""
        owner = value.owner
        if isinstance(owner, uop.ConstOp):
            return scalar_literal(owner.value)
        if value in self.inline:
            return self.inline[value]
        return self.names[value]

    def operand_expr(self, value: SSAValue) -> str:
        """An operand of a declared target op (`zig_cases.print_declared`): `expr`, but a
        pointer into a packed buffer (int4 …) is two arguments, its bytes and its element index."""
        if value in self.packed:
            return f"{self.packed[value][0]}, {self.expr(value)}"
        return self.expr(value)

    def discard_unused(self, op: Operation) -> None:
        for result in op.results:
            if _unprinted(result) and result in self.names:
                self.emit(f"_ = {self.names[result]};")

    def call_helper(self, name: str) -> None:
        """Note a printed call of helper `name`: the file holds it and the helpers it uses, and
        the function being printed counts its inline calls (`zig_helpers.call_weight`, for
        `quota`)."""
        known = all_helpers()
        self.helpers_used |= uses(name, known)
        self.inline_calls += call_weight(name, known)

    def helper_call(self, name: str, *arguments: str) -> str:
        """The call of helper `name` on `arguments`, noted (`call_helper`)."""
        self.call_helper(name)
        return f"{name}({', '.join(arguments)})"

    # -- the file -----------------------------------------------------------------------------

    def scope_decl(self, name: str, line: str) -> str:
        """`line`, the file-scope declaration of `name`, noted: a hot module reads it."""
        self.scope_decls.add(line)
        self.scope_names.append(name)
        return line

    def print_module(self, output: IO[str]) -> None:
        function = main_function(self.module)
        info = self.info or describe_plan(self.module)
        self.constants = info.constants
        header = [
            f"// {self.name}.zig: generated by zant from a uop module. Do not edit.",
            f"// plan {info.plan_hash}, tensor layout {info.tensor_layout_hash}; scratch "
            f"{info.scratch_size} B, constants {info.constant_size} B.",
            'const std = @import("std");',
            "",
            "// Safety checks (ReleaseSafe, Debug) trap: a model has no OS, stderr or stack traces,",
            "// and std's default handler would add seconds of build time and kilobytes of code.",
            "pub const panic = std.debug.FullPanic(trapOnPanic);",
            "fn trapOnPanic(message: []const u8, first_trace_address: ?usize) noreturn {",
            "    _ = message;",
            "    _ = first_trace_address;",
            "    @trap();",
            "}",
            "",
        ]
        file_scope = self.print_constants(function, info) + self.print_persistent_arena(info)
        file_scope += self.print_init() + self.print_scratch_arenas(info) + self.print_plan_hashes(info)
        self.print_function(function)
        if self.scratch_lines:
            file_scope += self.scratch_lines + [""]
        if self.kernel_lines or self.hot_kernel_lines:  # hot_kernel_call defaults to kernel_call
            file_scope += KERNEL_CALL
        if "zant.flush_denormals" in function.attributes:
            file_scope += FLUSH_DENORMALS
        known = all_helpers()
        helpers = [known[h].source + "\n" for h in sorted(self.helpers_used)]
        self.pieces = header, file_scope, helpers
        if self.hot_kernel_lines:  # what the hot module reads is public; it is imported
            file_scope = [f"pub {line}" if line in self.scope_decls else line for line in file_scope]
            file_scope = [f'const {self.name}_hot = @import("{self.name}_hot");', "", *file_scope, *HOT_KERNEL_CALL]
        output.write("\n".join(header + file_scope + helpers + self.kernel_lines + self.lines) + "\n")

    def hot_source(self) -> str | None:
        """The source of module `NAME_hot` (`hot_file_name`): the kernels marked `zant.hot`,
        reading NAME.zig's file-scope pointers through its import, with the helpers; or None
        when they stayed in NAME.zig."""
        if not self.hot_kernel_lines:
            return None
        assert self.pieces is not None, "print_module first"
        header, _, helpers = self.pieces
        lines = [
            f"// {hot_file_name(self.name)}: the kernels of {self.name}.zig built for speed in a build for size",
            f"// (mark-hot-kernels), as the module {self.name}_hot. Generated by zant. Do not edit.",
            header[2],
            f'const {self.name}_model = @import("{self.name}");',
            *(f"const {name} = {self.name}_model.{name};" for name in self.scope_names),
            "",
            *helpers,
            *self.hot_kernel_lines,
        ]
        return "\n".join(lines) + "\n"

    def print_scratch_arenas(self, info: PlanInfo) -> list[str]:
        """One array per scratch region: `NAME_scratch` in `.bss`, or, for each memory
        `place-memories` placed buffers in, `NAME_scratch_<memory>` in section `.zant.<memory>`
        (which the firmware's linker script puts in that memory, not zeroed at startup)."""
        lines = []
        for region in info.scratch_regions:
            memory = None if region.name == "scratch" else region.memory
            symbol = f"{self.name}_scratch" if memory is None else f"{self.name}_scratch_{memory}"
            self.scratch_symbols[memory] = symbol
            if self.arena == "caller":
                if memory is not None:
                    raise ZantError(
                        "the caller's arena (--arena caller) holds the whole scratch arena: it cannot be "
                        f"split over a board's memories ({region.name})"
                    )
                lines += self.print_caller_arena(region.size, region.alignment)
                continue
            if not region.size:
                continue
            section = "" if memory is None else f' linksection(".zant.{memory}")'
            lines.append(f"var {symbol}: [{region.size}]u8 align({region.alignment}){section} = undefined;")
            self.arena_externs[symbol] = f"extern var {symbol}: [{region.size}]u8 align({region.alignment});"
        return lines + [""] if lines else []

    def print_caller_arena(self, size: int, alignment: int) -> list[str]:
        """The caller's scratch arena: `NAME_arena`, set by `NAME_set_arena` once checked."""
        name = self.name
        sizes = [
            f"export const {name}_arena_size: usize = {size};",
            f"export const {name}_arena_align: usize = {alignment};",
        ]
        if not size:
            return sizes + [
                f"// The caller's scratch arena: this model needs none; {name}_set_arena accepts any.",
                f"export fn {name}_set_arena(arena_pointer: ?*anyopaque, arena_bytes: usize) callconv(.c) i32 {{",
                "    _ = arena_pointer;",
                "    _ = arena_bytes;",
                "    return 0;",
                "}",
            ]
        self.arena_externs[f"{name}_arena"] = f"extern var {name}_arena: ?[*]align({alignment}) u8;"
        return sizes + [
            f"// The scratch arena is the caller's: {size} B aligned to {alignment}, set by {name}_set_arena, which",
            f"// returns {abi.Status.BAD_ARENA} (and forgets the last one) for a null, misaligned or smaller one.",
            f"var {name}_arena: ?[*]align({alignment}) u8 = null;",
            f"export fn {name}_set_arena(arena_pointer: ?*anyopaque, arena_bytes: usize) callconv(.c) i32 {{",
            f"    {name}_arena = null;",
            "    const address = @intFromPtr(arena_pointer);",
            f"    if (address == 0 or address % {alignment} != 0 or arena_bytes < {size}) return {abi.Status.BAD_ARENA};",
            f"    {name}_arena = @ptrFromInt(address);",
            "    return 0;",
            "}",
        ]

    def print_plan_hashes(self, info: PlanInfo) -> list[str]:
        """The plan and layout hashes of the header, exported, and `NAME_check_plan`."""
        name = self.name
        return [
            f"export const {name}_plan_hash: u64 = 0x{info.plan_hash};",
            f"export const {name}_layout_hash: u64 = 0x{info.layout_hash};",
            f"export fn {name}_check_plan(expected: u64) callconv(.c) i32 {{",
            f"    return if (expected == {name}_plan_hash) 0 else {abi.Status.PLAN_MISMATCH};",
            "}",
            "",
        ]

    def print_constants(self, function: func.FuncOp, info: PlanInfo) -> list[str]:
        """The constant arena as one aligned byte blob laid out as the plan says (duplicates
        share their bytes; `self.blob`, written beside the file as `NAME.weights.bin` unless it
        is printed inline), and each constant as a typed many-pointer into it, like every other
        buffer (each gep says how it is checked). Where the arena lives is the plan's
        (`self.constants`, from the constant `abi.arena`'s memory and source):

        * embedded: a read-only array in the file (`@embedFile` of the blob, or its bytes);
        * staged: the blob read-only (flash) and a RAM arena `NAME_init` copies it into;
        * external: only a pointer, which `NAME_init(constants)` sets to where the firmware put
          the blob; each function that reads constants declares its pointers from it."""
        constants = globals_by_role(function, uop.BufferRole.CONSTANT)
        blob = bytearray(info.constant_size)
        views = []
        for op in constants:
            buffer_type = op.result.type
            assert isinstance(buffer_type, uop.BufferType) and op.value is not None
            if op.offset is None:
                raise ZantError("constants have no arena offsets: run plan-arenas before printing")
            offset = op.offset.value.data
            values = attr_to_array(op.value).reshape(-1)
            assert values.dtype == numpy_dtype(buffer_type.element_type)
            data = pack(values, buffer_type.element_type)  # int4 …: packed, as ONNX lays them out
            blob[offset : offset + len(data)] = data
            name = self.namer.fresh(f"const_{sanitize_zig(op.tensor_name.data)}")
            self.names[op.result] = name
            element = memory_type(buffer_type.element_type)
            if not data:  # an empty tensor has no bytes to point into
                views += [
                    f"// {_comment(op.tensor_name.data)}",
                    self.scope_decl(name, f"const {name}: [*]const {element} = &[0]{element}{{}};"),
                ]
            elif self.constants == "external":
                self.external_views[op.result] = (
                    f"const {name}: [*]const {element} = @ptrCast(@alignCast({self.name}_constants.? + {offset}));"
                )
            else:
                views.append(f"// {_comment(op.tensor_name.data)}")
                views.append(self.scope_decl(
                    name, f"const {name}: [*]const {element} = @ptrCast(@alignCast(&{self.name}_constants[{offset}]));"
                ))
        self.blob = bytes(blob)
        self.view_lines = views
        if not constants and self.constants == "embedded":
            return []
        section = f' linksection("{info.link_section}")' if info.link_section else ""
        arena = f"[{len(blob)}]u8 align({info.constant_alignment})"
        inline = self.blob_file is None or not blob  # an empty arena has no file
        if inline:
            rows = [
                "    " + ", ".join(f"0x{byte:02x}" for byte in blob[i : i + 16]) + ","
                for i in range(0, len(blob), 16)
            ]
            source = [f": {arena}{section} = .{{", *rows, "};"]
        else:
            # The embedded file's own type ([N:0]u8, one sentinel byte more): coercing it to
            # [N]u8 made Zig's Sema copy it byte by byte (MobileNetV1's 16.9 MB: 11.7 s of CPU
            # against 0.4 s).
            source = [
                f' align({info.constant_alignment}){section} = @embedFile("{self.blob_file}").*;',
                f"comptime {{ std.debug.assert(@sizeOf(@TypeOf({{NAME}})) == {len(blob) + 1}); }}",
            ]
        lines = [
            "// The constant arena: every weight, aligned and deduplicated, in one blob (little-endian,",
            f"// as the plan lays it out{f', in {self.blob_file}' if self.blob_file else ''}).",
            'comptime { std.debug.assert(@import("builtin").cpu.arch.endian() == .little); }',
        ]
        def declare(name: str) -> list[str]:
            return [f"const {name}{source[0]}", *(line.replace("{NAME}", name) for line in source[1:])]

        self.arena_externs[f"{self.name}_constants"] = (
            f"extern var {self.name}_constants: {arena};" if self.constants == "staged"
            else f"extern const {self.name}_constants: [{len(blob) + (0 if inline else 1)}]u8 "
            f"align({info.constant_alignment});"
        )
        if self.constants == "embedded":
            return [*lines, *declare(f"{self.name}_constants"), *views, ""]
        if self.constants == "staged":
            self.init_body += [f"@memcpy(&{self.name}_constants, {self.name}_constants_source[0..{len(blob)}]);"]
            return [
                *lines, *declare(f"{self.name}_constants_source"),
                "// Staged: the arena in RAM, copied from the read-only blob by the init function.",
                f"var {self.name}_constants: {arena} = undefined;",
                *views,
                "",
            ]
        # External: no bytes in the file; the firmware places the blob and passes its address.
        self.arena_externs[f"{self.name}_constants"] = f"extern var {self.name}_constants: ?[*]const u8;"
        self.init_parameter = "constants: ?*const anyopaque"
        self.init_body += (
            [
                "const address = @intFromPtr(constants);",
                f"if (address == 0 or address % {info.constant_alignment} != 0) return {abi.Status.BAD_CONSTANTS};",
                f"{self.name}_constants = @ptrCast(constants);",
            ]
            if blob
            else ["_ = constants; // no constants: any address will do"]
        )
        return [
            "// The constant arena (every weight, aligned and deduplicated, little-endian) is external: the",
            f"// firmware places its {len(blob)} bytes{f' ({self.blob_file})' if self.blob_file else ''} at an address aligned to "
            f"{info.constant_alignment} and passes it to {self.name}_init.",
            lines[2],
            f"var {self.name}_constants: ?[*]const u8 = null;",
            *views,
            "",
        ]

    def print_persistent_arena(self, info: PlanInfo) -> list[str]:
        """The persistent arena (state kept between calls), in `.bss`, zeroed by `NAME_init`."""
        if not info.persistent_size:
            return []
        self.persistent = True
        self.init_body.append(f"@memset(&{self.name}_persistent, 0);")
        self.arena_externs[f"{self.name}_persistent"] = (
            f"extern var {self.name}_persistent: [{info.persistent_size}]u8 align({info.persistent_alignment});"
        )
        return [
            "// The persistent arena: state kept between calls, zeroed by the init function.",
            f"var {self.name}_persistent: [{info.persistent_size}]u8 align({info.persistent_alignment}) = undefined;",
            "",
        ]

    def print_init(self) -> list[str]:
        """`NAME_init`, when the plan needs one (staged or external constants, a persistent
        arena), and the flag `NAME_predict` checks when nothing else says it has run."""
        if self.init_parameter is None and not self.init_body:
            return []
        flag = self.needs_ready_flag
        return [
            *([f"var {self.name}_ready: bool = false;"] if flag else []),
            f"// {self.name}_predict returns {abi.Status.NOT_INITIALIZED} until {self.name}_init has succeeded; "
            f"{self.name}_init returns 0"
            + (f", or {abi.Status.BAD_CONSTANTS} for a null or misaligned address." if self.init_parameter else "."),
            f"export fn {self.name}_init({self.init_parameter or ''}) callconv(.c) i32 {{",
            *("    " + line for line in self.init_body),
            *([f"    {self.name}_ready = true;"] if flag else []),
            "    return 0;",
            "}",
            "",
        ]

    @property
    def needs_ready_flag(self) -> bool:
        """Staged constants or a persistent arena: `NAME_init` sets `NAME_ready` (external
        constants say it by their pointer)."""
        return self.constants == "staged" or self.persistent

    def ready_check(self) -> list[str]:
        """The first statements of `NAME_predict` when the plan needs `NAME_init` first."""
        checks = []
        if self.needs_ready_flag:
            checks.append(f"if (!{self.name}_ready) return {abi.Status.NOT_INITIALIZED};")
        if self.constants == "external" and self.blob:
            checks.append(f"if ({self.name}_constants == null) return {abi.Status.NOT_INITIALIZED};")
        if f"{self.name}_arena" in self.arena_externs:  # the caller's scratch arena
            checks.append(f"if ({self.name}_arena == null) return {abi.Status.BAD_ARENA};")
        return checks

    def constant_prologue(self, read: set[SSAValue], level: int) -> list[str]:
        """External constants (and the caller's scratch buffers): the pointer declarations of
        those a function prints a use of (`read`)."""
        if not self.external_views:
            return []
        indent = "    " * level
        return [indent + line for value, line in self.external_views.items() if value in read]

    def print_function(self, function: func.FuncOp) -> None:
        params = parameter_names(function, self.namer)
        signature, sized, checks, forward = [], [], [], []
        for op, pname in params.items():
            self.names[op.result] = pname
            element = memory_type(op.result.type.element_type)  # type: ignore[attr-defined]
            const = "const " if op.role.data == uop.BufferRole.INPUT else ""
            # Optional at the C boundary (a caller may pass NULL), unwrapped before anything runs.
            argument = self.namer.fresh(f"{pname}_pointer")
            size = self.namer.fresh(f"{pname}_bytes")
            signature.append(f"{argument}: ?[*]{const}{element}")
            sized += [f"{argument}: ?[*]{const}{element}", f"{size}: usize"]
            checks.append(f"if ({size} != {op.result.type.byte_size}) "  # type: ignore[attr-defined]
                          f"return {abi.Status.BAD_BUFFER};")
            forward.append(argument)
        self.print_sized_entry(sized, checks, forward)
        self.emit(
            f"export fn {self.name}_predict({', '.join(signature)}) callconv(.c) i32 {{"
        )
        self.level += 1
        # A tensor of no elements is never read nor written: any pointer does, NULL too (what an
        # empty std::vector's data() gives).
        empty = {op for op in params if op.result.type.byte_size == 0 and not _buffer_is_accessed(op.result)}  # type: ignore[attr-defined]
        for (op, pname), argument in zip(params.items(), forward):
            if op in empty:
                self.emit(f"_ = {argument};")
                continue
            self.emit(f"const {pname} = {argument} orelse return {abi.Status.BAD_BUFFER};")
        for line in self.ready_check():
            self.emit(line)
        if "zant.flush_denormals" in function.attributes:  # the flush-denormals pass
            self.emit("const saved_fp_control = flushDenormals();")
            self.emit("defer restoreFpControl(saved_fp_control);")
        for op, pname in params.items():
            if op not in empty and not _buffer_is_accessed(op.result):
                self.emit(f"_ = {pname};")
        start = len(self.lines)
        read: set[SSAValue] = set()  # the values this function's own ops print
        self.inline_calls = 0
        for op in function.body.block.ops:
            if isinstance(op, func.CallOp):
                read.update(self.print_kernel(op))
                continue
            self.print_op(op)
            read.update(value for inner in op.walk() if _printed_use(inner) for value in inner.operands)
        self.lines[start:start] = self.constant_prologue(read, self.level)
        self.lines[start:start] = self.quota(self.inline_calls, self.level)
        self.emit("return 0;")
        self.level -= 1
        self.emit("}")

    def print_sized_entry(self, parameters: list[str], checks: list[str], forward: list[str]) -> None:
        """`NAME_predict_sized`: each buffer followed by its size in bytes; a size other than the
        tensor's returns `abi.Status.BAD_BUFFER` before anything runs, then it is `NAME_predict`."""
        self.emit(
            f"export fn {self.name}_predict_sized({', '.join(parameters)}) callconv(.c) i32 {{"
        )
        self.level += 1
        for line in checks:
            self.emit(line)
        self.emit(f"return {self.name}_predict({', '.join(forward)});")
        self.level -= 1
        self.emit("}")
        self.emit("")

    # -- kernels ------------------------------------------------------------------------------

    # Each top-level loop nest is a function of its own, kept apart in ReleaseSafe (`kernel_call`):
    # LLVM's GVN and loop passes are superlinear in the size of a function, and one function
    # holding every checked layer took most of a MobileNet's build (Cortex-M4 ReleaseSafe: 11.4 s
    # of CPU, 4.5 s with a function per kernel). The other modes let LLVM inline them, as their
    # code ran a little faster in one piece (KWS on the M4: 1.2% fewer instructions). The
    # scratch pointers are file-scope constants, so LLVM still sees disjoint parts of one arena.

    def print_kernel(self, call: func.CallOp) -> list[SSAValue]:
        """The kernel `call` calls (`outline-kernels`) as `fn kernel_T(parameters…) void`, and
        the call through `kernel_call`. Its parameters are the arguments one of its ops prints
        (Zig rejects an unused parameter; a view prints nothing) that are not visible at file
        scope: graph inputs and outputs and scalars; a scratch or constant buffer is named by
        its file-scope pointer, as in `NAME_predict`."""
        kernel = self.functions.get(call.callee.string_value())
        if kernel is None or not kernel.body.blocks:
            raise ZantError(f"func.call of '{call.callee.string_value()}', which is not a kernel of the module")
        block = kernel.body.block
        inside = set(kernel.walk())
        shared = self.calls_of.get(kernel.sym_name.data, 0) > 1  # share-kernels: each call its buffers
        if kernel.sym_name.data in self.shared_kernels:  # printed at its first call
            name, positions = self.shared_kernels[kernel.sym_name.data]
            arguments = ", ".join(self.expr(call.arguments[i]) for i in positions)
            self.emit(f"@call(kernel_call, {name}, .{{{arguments}}});")
            return [call.arguments[i] for i in positions]
        name = self.namer.fresh(sanitize_zig(kernel.sym_name.data))
        passed, read, parameters = [], set(), []
        for position, (argument, operand) in enumerate(zip(block.args, call.arguments, strict=True)):
            if shared:  # a parameter of its own, typed as what this call passes
                self.names[argument] = self.namer.fresh(f"arg{position}")
            else:
                self.names[argument] = self.names[operand]
                self.aliases += 1
            if _printed_in(argument, inside):
                read.add(operand)
                if shared or not _file_scope(operand):
                    passed.append(operand)
                    parameters.append((position, argument))
        outer_lines, outer_level, outer_calls = self.lines, self.level, self.inline_calls
        self.lines, self.level, self.inline_calls = [], 1, 0
        for op in block.ops:
            self.print_op(op)
        body, calls = self.lines, self.inline_calls
        self.lines, self.level, self.inline_calls = outer_lines, outer_level, outer_calls
        record = Kernel(
            name, passed, ", ".join(
                f"{self.names[argument]}: {self.parameter_type(self.call_operand(call, position))}"
                for position, argument in parameters
            ) if shared else ", ".join(f"{self.names[v]}: {self.parameter_type(v)}" for v in passed),
            node_names(call.location), [*self.quota(calls, 1), *self.constant_prologue(set() if shared else read, 1), *body],
        )
        if shared:
            self.shared_kernels[kernel.sym_name.data] = (name, [position for position, _ in parameters])
        self.kernels.append(record)
        arguments = ", ".join(self.expr(v) for v in passed)
        # A caller's arena or external constants are declared in each function from a pointer
        # of NAME.zig (`constant_prologue`): those kernels stay there.
        if self.hot and HOT in kernel.attributes and self.arena != "caller" and self.constants != "external":
            self.hot_kernel_lines += record.lines(visibility="pub ")
            self.emit(f"@call(hot_kernel_call, {self.name}_hot.{name}, .{{{arguments}}});")
            return passed if shared else []
        self.kernel_lines += record.lines()
        self.emit(f"@call(kernel_call, {name}, .{{{arguments}}});")
        return passed if shared else []  # the caller names what it passes

    def units(self) -> list[str] | None:
        """The printed module as Zig files built apart (as many as `unit_count` says from its
        size, the same on every machine; the build runs them a core each), and linked
        into one library (`zant.backend.build.start_build` of several sources), or None when
        its kernels that can move are too few to pay. The first is the file itself with the
        kernels the others hold declared `extern` instead; each other holds some kernels,
        exported under hidden `NAME__kernel_…` symbols with the C calling convention, and reads
        the arenas the first exports (hidden, under their `NAME_` names). Kernels are dealt by
        size, largest first, to the unit with the fewest lines; the first starts with the lines
        it has besides them.

        Only a kernel whose parameters are all buffers moves: a scalar parameter may be a
        constant of `NAME_predict` that LLVM folds into the kernel inlined there (KWS int8's
        requantisation: 1.5% more instructions on the Cortex-M4 with its kernels moved). Moved
        kernels still cost a little, as calls a part's code cannot be inlined into (ResNet-8 on
        the Cortex-M4, its library linked into an image: +0.16%); a firmware image imports
        NAME.zig whole and is not affected."""
        assert self.pieces is not None, "print_module first"
        if self.hot_kernel_lines:  # one compilation, two modules (`hot_source`)
            return None
        header, file_scope, helpers = self.pieces
        symbol = {kernel.name: f"{self.name}__{kernel.name}" for kernel in self.kernels}
        movable = [
            index for index, kernel in enumerate(self.kernels)
            if symbol[kernel.name] not in self.namer.used
            and all(isinstance(v.type, uop.BufferType) for v in kernel.parameters)
        ]
        count = min(unit_count(sum(self.kernels[i].line_count for i in movable)), len(movable) + 1)
        if count < 2:
            return None
        fixed = sum(kernel.line_count for index, kernel in enumerate(self.kernels) if index not in movable)
        loads = [len(file_scope) + len(self.lines) + fixed] + [0] * (count - 1)
        dealt: list[list[int]] = [[] for _ in range(count)]
        for index in sorted(movable, key=lambda i: -self.kernels[i].line_count):
            unit = min(range(count), key=lambda u: (loads[u], u))
            dealt[unit].append(index)
            loads[unit] += self.kernels[index].line_count
        if any(not kernels for kernels in dealt[1:]):
            return None
        moved = {index for kernels in dealt[1:] for index in kernels}
        root_kernels: list[str] = []
        for index, kernel in enumerate(self.kernels):
            if index in moved:
                root_kernels += [
                    f"extern fn {symbol[kernel.name]}({kernel.signature}) callconv(.c) void;",
                    f"const {kernel.name} = {symbol[kernel.name]};", "",
                ]
            else:
                root_kernels += kernel.lines()
        arenas = list(self.arena_externs)
        exports = [
            "// Built in parts: the arenas the other parts' kernels read, hidden outside the library.",
            "comptime {",
            *(f'    @export(&{a}, .{{ .name = "{a}", .visibility = .hidden }});' for a in arenas),
            "}",
            "",
        ] if arenas else []
        root = "\n".join(header + file_scope + exports + helpers + root_kernels + self.lines) + "\n"
        parts = [root]
        for unit, kernels in enumerate(dealt[1:], start=1):
            lines = [
                f"// {self.name}.zig, part {unit} of a build in {count} parts: generated by zant. Do not edit.",
                *header[2:],
                *self.arena_externs.values(),
                "",
                *self.view_lines,
                "",
                *self.scratch_lines,
                "",
                *helpers,
            ]
            for index in sorted(kernels):
                kernel = self.kernels[index]
                lines += [
                    *kernel.lines(" callconv(.c)")[:-1],
                    f'comptime {{ @export(&{kernel.name}, .{{ .name = "{symbol[kernel.name]}", .visibility = .hidden }}); }}',
                    "",
                ]
            parts.append("\n".join(lines) + "\n")
        return parts

    @staticmethod
    def quota(inline_calls: int, level: int) -> list[str]:
        """`@setEvalBranchQuota` for a function body making more inline helper calls (counted
        as it was printed, `call_helper`) than Zig's default quota allows
        (`zig_helpers.branch_quota`), else nothing."""
        quota = branch_quota(inline_calls)
        return [] if quota is None else ["    " * level + f"@setEvalBranchQuota({quota});"]

    def parameter_type(self, value: SSAValue) -> str:
        owner = value.owner
        if isinstance(owner, uop.DefineGlobalOp):
            read_only = owner.role.data in (uop.BufferRole.INPUT, uop.BufferRole.CONSTANT)
            const = "const " if read_only else ""
            return f"[*]{const}{memory_type(value.type.element_type)}"  # type: ignore[attr-defined]
        if isinstance(owner, uop.DefineLocalOp):  # a scratch buffer passed to a shared kernel
            return f"[*]{memory_type(value.type.element_type)}"  # type: ignore[attr-defined]
        return zig_type(value.type)

    @staticmethod
    def call_operand(call: func.CallOp, position: int) -> SSAValue:
        """What `call` passes at `position`: a shared kernel's parameter is typed as it (every call
        passes the same kind there: `share-kernels`)."""
        return call.arguments[position]

    # -- ops ----------------------------------------------------------------------------------

    def print_op(self, op: Operation) -> None:
        """`self.print(op)`, dispatched on the op's class directly: `singledispatchmethod`
        builds a bound wrapper (`functools.update_wrapper`) on every call in Python 3.11,
        ~9,000 times for ResNet-8."""
        _print_case(type(op))(self, op)

    @singledispatchmethod
    def print(self, op: Operation) -> None:
        # A target dialect's op: the case its own module registered (`zig_cases`).
        case = case_for(type(op))
        if case is None:
            raise ZantError(f"the Zig backend cannot print '{op.name}'")
        case(self, op)

    @print.register
    def _(self, op: func.ReturnOp) -> None:
        if op.operands:
            raise ZantError("@main must not return values: outputs are written to buffers")

    @print.register
    def _(self, op: uop.DefineGlobalOp) -> None:
        pass  # a parameter or a file-scope constant, named in print_module

    @print.register
    def _(self, op: uop.DefineLocalOp) -> None:
        if op.offset is None:
            raise ZantError(f"scratch buffer '{op.tensor_name.data}' has no offset: run plan-arenas")
        name = self.namer.fresh(f"scratch_{sanitize_zig(op.tensor_name.data)}")
        self.names[op.result] = name
        element = memory_type(op.result.type.element_type)  # type: ignore[attr-defined]
        if self.arena == "caller":  # declared in each function reading it (`constant_prologue`)
            self.external_views[op.result] = (
                f"const {name}: [*]{element} = @ptrCast(@alignCast({self.name}_arena.? + {op.offset.value.data}));"
            )
            return
        self.scratch_lines.append(f"// {_comment(op.tensor_name.data)}")
        arena = self.scratch_symbols[None if op.memory is None else op.memory.data]
        self.scratch_lines.append(self.scope_decl(
            name, f"const {name}: [*]{element} = @ptrCast(@alignCast(@as([*]u8, &{arena}) + {op.offset.value.data}));"
        ))

    @print.register
    def _(self, op: uop.ViewOp) -> None:
        pass  # folded into every gep through it

    @print.register
    def _(self, op: abi.ArenaOp) -> None:
        pass  # the arenas are printed at file scope

    @print.register
    def _(self, op: uop.GepOp) -> None:
        if isinstance(op.source.type, uop.ViewType):
            raise ZantError("a uop.gep through a view reached the Zig printer: run the linearize-geps pass first")
        buffer = op.source
        base = self.names[buffer]
        # An `inbounds` address (mark-inbounds proved it) needs no runtime check, and
        # ReleaseSafe's checks on every gep of a large kernel are what made LLVM's loop passes
        # take minutes: it is computed with wrapping arithmetic (exact, as its value and those
        # of its parts are in range) and reinterpreted as usize. Any other address traps in
        # ReleaseSafe if negative, past its buffer or overflowing.
        proven = op.inbounds is not None
        address = self.address(op.indices[0], proven)[0]
        literal = _is_literal_index(op.indices[0])  # printed bare: no cast, no check
        element_type = buffer.type.element_type  # type: ignore[attr-defined]
        if is_packed(element_type):  # an element index: zant_load_packed/zant_store_packed
            name = self.fresh(op.result, "addr_")
            index = address if literal else f"@as(usize, @{'bitCast' if proven else 'intCast'}({address}))"
            self.emit(f"const {name}: usize = {index};")
            if not proven and not literal:
                self.emit(f"std.debug.assert({name} < {buffer.type.size.data});")  # type: ignore[attr-defined]
            self.packed[op.result] = (base, zig_type(element_type))
            self.discard_unused(op)
            return
        if literal:
            index_expr = address
        elif proven and address and set(address) <= _CONSTANT_EXPRESSION:
            # constants alone (a staged plane's border read, `25 +% -1`): a comptime_int, which
            # @bitCast does not take; typed first
            index_expr = f"@as(usize, @bitCast(@as(isize, {address})))"
        elif proven:
            index_expr = f"@as(usize, @bitCast({address}))"
        else:
            index_expr = f"@intCast({address})"
            size = buffer.type.size.data  # type: ignore[attr-defined]
            if size:  # Zig rejects a runtime index into a zero-length array
                base = f"{base}[0..{size}]"
        name = self.fresh(op.result, "addr_")
        self.emit(f"const {name} = &{base}[{index_expr}];")
        self.discard_unused(op)

    def address(self, value: SSAValue, wrapping: bool) -> tuple[str, int]:
        """The Zig expression of a gep's index and its precedence (0 sum, 1 product, 2 atom):
        its address arithmetic (`_is_address_arithmetic`) spelled out, index literals bare."""
        owner = value.owner
        if isinstance(owner, uop.ConstOp):
            return str(owner.value.value.data), 2  # type: ignore[attr-defined]
        if value not in self.address_ops:
            return self.expr(value), 2
        (lhs, lp), (rhs, rp) = (self.address(v, wrapping) for v in owner.operands)  # type: ignore[union-attr]
        if isinstance(owner, uop.MulOp):
            lhs = f"({lhs})" if lp < 1 else lhs
            rhs = f"({rhs})" if rp < 1 or (rp < 2 and not wrapping) else rhs
            return f"{lhs} {'*%' if wrapping else '*'} {rhs}", 1
        if isinstance(owner, uop.SubOp):
            rhs = f"({rhs})" if rp < 1 else rhs
            return f"{lhs} {'-%' if wrapping else '-'} {rhs}", 0
        # Wrapping sums reassociate exactly; a checked one keeps its grouping (and its traps).
        rhs = f"({rhs})" if rp < 1 and not wrapping else rhs
        return f"{lhs} {'+%' if wrapping else '+'} {rhs}", 0

    @print.register
    def _(self, op: uop.LoadOp) -> None:
        name = self.fresh(op.result, "buf_")
        if op.ptr in self.packed:
            base, element = self.packed[op.ptr]
            load = self.helper_call("zant_load_packed", element, base, self.expr(op.ptr))
            self.emit(f"const {name}: {element} = {load};")
        else:
            self.emit(f"const {name}: {zig_type(op.result.type)} = {self.expr(op.ptr)}.*;")
        self.discard_unused(op)

    @print.register
    def _(self, op: abi.CheckOp) -> None:
        self.emit(f"if (!{self.expr(op.condition)}) return {op.status.value.data};")

    @print.register
    def _(self, op: uop.StoreOp) -> None:
        if op.ptr in self.packed:
            base, element = self.packed[op.ptr]
            self.emit(self.helper_call("zant_store_packed", element, base, self.expr(op.ptr), self.expr(op.value)) + ";")
            return
        self.emit(f"{self.expr(op.ptr)}.* = {self.expr(op.value)};")

    @print.register
    def _(self, op: uop.VLoadOp) -> None:
        n, element = uop.lanes(op.result.type), zig_type(uop.lane_type(op.result.type))
        if op.element_stride != 1:
            self.define(op.result, self.helper_call("zant_vgather", str(n), element, str(op.element_stride), self.expr(op.ptr)))
            return
        self.define(op.result, f"@as(*align(1) const [{n}]{element}, @ptrCast({self.expr(op.ptr)})).*")

    @print.register
    def _(self, op: uop.VStoreOp) -> None:
        n, element = uop.lanes(op.value.type), zig_type(uop.lane_type(op.value.type))
        if op.element_stride != 1:
            arguments = (str(n), element, str(op.element_stride), self.expr(op.ptr), self.expr(op.value))
            self.emit(self.helper_call("zant_vscatter", *arguments) + ";")
            return
        self.emit(f"@as(*align(1) [{n}]{element}, @ptrCast({self.expr(op.ptr)})).* = {self.expr(op.value)};")

    @print.register
    def _(self, op: uop.BroadcastOp) -> None:
        self.define(op.result, f"@splat({self.expr(op.input)})")

    @print.register
    def _(self, op: uop.ReduceAddOp) -> None:
        self.define(op.result, f"@reduce(.Add, {self.expr(op.input)})")

    @print.register
    def _(self, op: uop.ConstOp) -> None:
        pass  # printed inline at each use

    @print.register
    def _(self, op: uop.CastOp) -> None:
        if isinstance(op.result.type, VectorType):
            source = uop.lane_type(op.input.type)
            kind = "float" if isinstance(source, AnyFloat) else "int"
            template = VECTOR_CAST[kind] if isinstance(uop.lane_type(op.result.type), AnyFloat) else "@intCast({a})"
            self.define(op.result, template.format(a=self.expr(op.input)))
            return
        source, target = op.input.type, op.result.type
        if is_storage_float(source) or is_storage_float(target):  # the verifier: to or from f32
            self.define(op.result, self.small_float_cast(source, target, self.expr(op.input), saturate=True))
            return
        self.define(op.result, self.helper_call("zant_cast", zig_type(op.result.type), self.expr(op.input)))

    @print.register
    def _(self, op: uop.CastUnsaturatedOp) -> None:
        self.define(op.result, self.small_float_cast(op.input.type, op.result.type, self.expr(op.input), saturate=False))

    def small_float_cast(self, source: Attribute, target: Attribute, x: str, saturate: bool) -> str:
        """A conversion between f32 and a storage float (bfloat16, float8), by its bits."""
        kinds = {row[1] for row in (storage_float(source), storage_float(target)) if row is not None}
        if "e8m0" in kinds:  # float8e8m0: an exponent alone, rounded up
            if is_storage_float(source):
                return self.helper_call("zant_from_e8m0", x)
            return self.helper_call("zant_to_e8m0", "true" if saturate else "false", x)
        if is_storage_float(source):
            _, kind, e, m, bias = storage_float(source)  # type: ignore[misc]
            return self.helper_call("zant_from_small_float", f".{_KINDS[kind]}", str(e), str(m), str(bias), x)
        _, kind, e, m, bias = storage_float(target)  # type: ignore[misc]
        # bfloat16 has no saturate (ONNX: out of range is Inf), float8 saturates by default.
        saturate = saturate and not isinstance(target, BFloat16Type)
        return self.helper_call(
            "zant_to_small_float", zig_type(target), f".{_KINDS[kind]}", str(e), str(m), str(bias),
            "true" if saturate else "false", x,
        )

    @print.register
    def _(self, op: uop.BitcastOp) -> None:
        self.define(op.result, f"@as({zig_type(op.result.type)}, @bitCast({self.expr(op.input)}))")

    @print.register
    def _(self, op: uop.WhereOp) -> None:
        c, a, b = (self.expr(v) for v in op.operands)
        if isinstance(op.condition.type, VectorType):  # lane by lane
            lane = zig_type(uop.lane_type(op.result.type))
            self.define(op.result, f"@select({lane}, {c}, {a}, {b})")
        else:
            self.define(op.result, f"if ({c}) {a} else {b}")

    @print.register
    def _(self, op: uop.FmaOp) -> None:
        a, b, c = (self.expr(v) for v in op.operands)
        self.define(op.result, f"@mulAdd({zig_type(op.result.type)}, {a}, {b}, {c})")

    @print.register
    def _(self, op: uop.RangeOp) -> None:
        name = self.fresh(op.induction_var, "idx_")
        self.emit(f"var {name}: isize = {op.start.data};")
        self.emit(f"while ({name} < {op.end.data}) : ({name} += {op.step.data}) {{")
        self.level += 1
        for child in op.body.block.ops:
            self.print_op(child)
        self.level -= 1
        self.emit("}")

    @print.register
    def _(self, op: uop.EndRangeOp) -> None:
        pass

    @print.register
    def _(self, op: uop.DefineAccOp) -> None:
        name = self.fresh(op.result, "acc_")
        element_type = op.result.type.element_type  # type: ignore[attr-defined]
        mutated = any(isinstance(u.operation, uop.MulAccOp | uop.AccSetOp) for u in op.result.uses)
        keyword = "var" if mutated else "const"
        init = scalar_literal(op.init)
        if isinstance(element_type, VectorType):
            init = f"@splat({init})"
        self.emit(f"{keyword} {name}: {zig_type(element_type)} = {init};")
        self.discard_unused(op)

    @print.register
    def _(self, op: uop.MulAccOp) -> None:
        acc, a, b = self.expr(op.acc), self.expr(op.lhs), self.expr(op.rhs)
        t = uop.lane_type(op.lhs.type)
        if _is_bool(t):
            self.emit(f"{acc} = {acc} or ({a} and {b});")
        elif _is_int(t) and not isinstance(t, IndexType):
            self.emit(f"{acc} +%= {a} *% {b};")
        elif op.fused is not None:
            self.emit(f"{acc} = @mulAdd({zig_type(op.lhs.type)}, {a}, {b}, {acc});")
        else:
            self.emit(f"{acc} += {a} * {b};")

    @print.register
    def _(self, op: uop.AccSetOp) -> None:
        self.emit(f"{self.expr(op.acc)} = {self.expr(op.value)};")

    @print.register
    def _(self, op: uop.AccGetOp) -> None:
        self.define(op.result, self.expr(op.acc))

    def define(self, result: SSAValue, expression: str) -> None:
        prefix = "idx_" if isinstance(result.type, IndexType) else "buf_"
        name = self.fresh(result, prefix)
        self.emit(f"const {name}: {zig_type(result.type)} = {expression};")
        if _unprinted(result):
            self.emit(f"_ = {name};")

    def print_alu(self, op: Operation) -> None:
        if _is_address_arithmetic(op.results[0]):
            self.address_ops.add(op.results[0])
            return
        kind = type(op)
        operand_type = op.operands[0].type
        args = {"T": zig_type(operand_type)}
        for key, value in zip("ab", op.operands):
            args[key] = self.expr(value)
        if kind in COMPARE:
            a, b = args["a"], args["b"]
            if _is_bool(uop.lane_type(operand_type)) and kind in (uop.CmpltOp, uop.CmpleOp):
                if isinstance(operand_type, VectorType):
                    raise ZantError(f"{op.name} is not supported on {operand_type} by the Zig backend")
                a, b = f"@intFromBool({a})", f"@intFromBool({b})"
            if _is_select_condition(op.results[0]):
                self.inline[op.results[0]] = f"{a} {COMPARE[kind]} {b}"
            else:
                self.define(op.results[0], f"{a} {COMPARE[kind]} {b}")
            return
        if isinstance(operand_type, VectorType):
            table = VECTOR_FLOAT_ALU if isinstance(uop.lane_type(operand_type), AnyFloat) else VECTOR_INT_ALU
        elif isinstance(operand_type, AnyFloat):
            table = FLOAT_ALU
        elif isinstance(operand_type, IndexType):
            table = INDEX_ALU
        elif _is_bool(operand_type):
            table = BOOL_ALU
        else:
            table = INT_ALU
        if kind not in table:
            raise ZantError(f"{op.name} is not supported on {operand_type} by the Zig backend")
        template = table[kind]
        if isinstance(template, HelperCall):
            self.call_helper(template.helper)
        self.define(op.results[0], template.format(**args))

for _alu in uop.ALU_OPS.values():
    ZigPrinter.__dict__["print"].register(_alu)(ZigPrinter.print_alu)

_print_case = ZigPrinter.__dict__["print"].dispatcher.dispatch
"""The `print` case of an op class (`ZigPrinter.print_op`)."""


def _is_address_arithmetic(value: SSAValue) -> bool:
    """Index `uop.add` / `uop.sub` / `uop.mul` used once, in its block, as a gep's index or by
    other such arithmetic: printed inside the gep's address (`&b[i *% 3 +% j]`), spelled as the
    gep is checked, rather than named."""
    owner = value.owner
    if not isinstance(owner, uop.AddOp | uop.SubOp | uop.MulOp) or not isinstance(value.type, IndexType):
        return False
    uses = list(value.uses)
    if len(uses) != 1 or uses[0].operation.parent_block() is not owner.parent_block():
        return False
    user = uses[0].operation
    if isinstance(user, uop.GepOp):
        return True
    return bool(user.results) and _is_address_arithmetic(user.results[0])


_CONSTANT_EXPRESSION = frozenset("-+*%() 0123456789")
"""The characters of an address printed from integer constants only."""


def _is_literal_index(value: SSAValue) -> bool:
    """A gep index that is a `uop.const` of at least 0 (`address` prints it as bare digits)."""
    owner = value.owner
    return isinstance(owner, uop.ConstOp) and owner.value.value.data >= 0  # type: ignore[attr-defined]


def _is_select_condition(value: SSAValue) -> bool:
    """A compare used once, as the condition of the `uop.where` right after it: printed inside
    it (`if (x < c) c else x`, or `@select(f32, x < c, c, x)` on vectors: an
    `expand-float-minmax` clamp) rather than named."""
    uses = list(value.uses)
    if len(uses) != 1 or uses[0].index != 0 or not isinstance(uses[0].operation, uop.WhereOp):
        return False
    return uses[0].operation is value.owner.next_op  # type: ignore[union-attr]


def _file_scope(value: SSAValue) -> bool:
    """Whether `value` is named at file scope: a scratch or constant buffer's pointer."""
    owner = value.owner
    return isinstance(owner, uop.DefineLocalOp) or (
        isinstance(owner, uop.DefineGlobalOp) and owner.role.data == uop.BufferRole.CONSTANT
    )


def _printed_use(op: Operation) -> bool:
    """Whether `op` prints its operands' names: every op but a view (folded into the geps
    through it)."""
    return not isinstance(op, uop.ViewOp)


def _printed_in(value: SSAValue, inside: set[Operation]) -> bool:
    """Whether one of the ops `inside` prints `value`'s name (directly, or through a view)."""
    for use in value.uses:
        user = use.operation
        if user not in inside:
            continue
        if _printed_use(user) or _printed_in(user.results[0], inside):
            return True
    return False


def _buffer_is_accessed(value: SSAValue) -> bool:
    """True if some gep reads or writes the buffer, directly or through views, or in a kernel
    it is passed to (`outline-kernels`)."""
    for use in value.uses:
        user = use.operation
        if isinstance(user, uop.ViewOp):
            if _buffer_is_accessed(user.result):
                return True
        elif isinstance(user, uop.GepOp):
            return True
        elif isinstance(user, func.CallOp):
            kernel = SymbolTable.lookup_symbol(user, user.callee)
            if isinstance(kernel, func.FuncOp) and kernel.body.blocks:
                if _buffer_is_accessed(kernel.body.block.args[use.index]):
                    return True
    return False


def _comment(text: str) -> str:
    """`text` made safe for a one-line Zig comment."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def blob_file_name(name: str) -> str:
    """The sidecar file of the constant arena of model `name`."""
    return f"{name}.weights.bin"


def print_zig(module: ModuleOp, name: str = "model", arena: str = "library") -> str:
    """The Zig source of a planned uop module, in one file: the constant bytes printed inline
    (`zig_files` writes them as a sidecar blob instead, as `zant compile` does)."""
    import io

    stream = io.StringIO()
    ZigPrinter(module, name, arena=arena).print_module(stream)
    return stream.getvalue()


HOT_KERNEL_CALL = [
    "// The kernels built for speed (NAME_hot) stay functions of their own in a build for size: LLVM",
    "// optimises inlined code as its caller's, for size.",
    "const hot_kernel_call: std.builtin.CallModifier = if (@import(\"builtin\").mode == .small) .never_inline else kernel_call;",
    "",
]


SPLIT_LINES = 1000
"""A module whose kernels that can move (`ZigPrinter.units`) have at least this many lines is
built in parts (`unit_count`), which the build compiles in parallel (`zant.backend.build`, one
Zig process per core): Zig's LLVM optimises one compilation unit on one core. On two cores,
`zant compile`'s build stage (which verifies the module meanwhile), two parts: ResNet-8 for the
Cortex-M4 (3,900 lines of kernels) 1.41 -> 0.93 s, for the host (2,300) 1.6 -> 0.9 s, KWS for
the Cortex-M4 (2,300) 0.58 -> 0.47 s. Smaller ones are one unit: a part saves less there, and
its kernels are calls `NAME_predict` cannot inline."""
UNIT_LINES = 4000
"""Lines of movable kernels per part beyond two parts: a module is split by its size alone, so
the same files come out on every machine (the build, not the printer, knows the cores)."""
MAX_UNITS = 4


def hot_file_name(name: str) -> str:
    """The source of module `NAME_hot`, the kernels built for speed in a build for size
    (`zig_files(hot=True)`), beside NAME.zig; the build names it (`zant.backend.build.hot_modules`)."""
    return f"{name}.hot.zig"


def unit_file_name(name: str, unit: int) -> str:
    """The source of build unit `unit` of model `name` (`zig_files(units=…)`), beside NAME.zig."""
    return f"{name}.unit{unit}.zig"


def unit_count(kernel_lines: int) -> int:
    """How many parts to build a module in, from its lines of kernels that can move
    (`ZigPrinter.units`) alone: one below `SPLIT_LINES`, else one per `UNIT_LINES` begun, at
    least two and at most `MAX_UNITS`."""
    if kernel_lines < SPLIT_LINES:
        return 1
    return min(MAX_UNITS, max(2, -(-kernel_lines // UNIT_LINES)))


@dataclass
class PrintedFiles:
    """What `print_files` wrote: the files by name, and each kernel function of `NAME.zig` →
    the ONNX nodes it computes (from the IR's locations; `zant profile` reads it)."""

    files: dict[str, str | bytes]
    kernels: dict[str, list[str]]


def zig_files(
    module: ModuleOp, name: str = "model", info: PlanInfo | None = None, units: bool = False, arena: str = "library",
    hot: bool = False,
) -> dict[str, str | bytes]:
    """`print_files(...).files`."""
    return print_files(module, name, info, units, arena, hot).files


def print_files(
    module: ModuleOp, name: str = "model", info: PlanInfo | None = None, units: bool = False, arena: str = "library",
    hot: bool = False,
) -> PrintedFiles:
    """The files of a planned uop module by name: `NAME.zig`, and beside it the constant arena's
    bytes `NAME.weights.bin` (when the model has constants), which it reads with `@embedFile`
    (embedded, staged) or the firmware places (external). `info`: the module's `describe_plan`,
    if known; `arena`: the scratch arena's owner (`c_abi.ARENA_MODES`). With `units` and a large module (`unit_count`), also the sources of a build in
    parts (`ZigPrinter.units`), `NAME.unit0.zig` …, which build the same library as NAME.zig:
    the build reads them, users get NAME.zig. With `hot` (a build for size) and kernels marked
    `zant.hot` (`mark-hot-kernels`), those are `NAME.hot.zig`, the module `NAME_hot` NAME.zig
    imports, which the build compiles for speed (`zant.backend.build`); no units then."""
    import io

    stream = io.StringIO()
    printer = ZigPrinter(module, name, blob_file_name(name), info, arena, hot)
    printer.print_module(stream)
    files: dict[str, str | bytes] = {f"{name}.zig": stream.getvalue()}
    hot_source = printer.hot_source()
    if hot_source is not None:
        files[hot_file_name(name)] = hot_source
    if printer.blob or printer.constants == "external":  # the firmware places even an empty one
        files[blob_file_name(name)] = printer.blob
    for unit, source in enumerate((printer.units() if units else None) or ()):
        files[unit_file_name(name, unit)] = source
    return PrintedFiles(files, {kernel.name: kernel.nodes for kernel in printer.kernels})
