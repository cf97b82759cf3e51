"""Firmware images: generated models, embedded inputs and a thin runtime, run under QEMU.

`write_image(out_dir, name, models, board)` writes the sources of an image holding one or several
models, each an `ImageModel(name, inputs, outputs, feeds)` whose generated `MODEL.zig` sits in
`out_dir` (every exported symbol starts with `MODEL_`, so they link side by side):

* `NAME.firmware.zig`, the root of the image: a vector table (Arm) or `_start` (RISC-V), startup
  (paint the stack, enable the FPU, copy `.data`, zero `.bss`), each model's inputs as
  `@embedFile`s of `MODEL.input<i>.bin`; then, for each model in turn (after `MODEL_init`, for a
  model whose constants are staged or external: `ImageModel.constants`), a call to `MODEL_predict`,
  a line `MODEL_STACK <model> <bytes>` (the stack those calls used: the free stack is painted
  again just before them) and one semihosting line per output `OUTPUT <model> <index> <hex of its little-endian bytes>`
  (of an output compiled at its bound, the valid part only),
  or `ERROR <model> returned <status>` if it returned non-zero (the next model still runs); then
  a line `STACK <bytes>` (the high-water mark of the painted stack) and an exit with status 0,
  or 1 if any model returned non-zero. A panic (such as a ReleaseSafe bounds check) prints
  `PANIC <model> <message>` and exits with 2, a fault `FAULT <model>` and 3: the models after it
  do not run;
* `NAME.ld`, the linker script of the board's memory map.

`write_firmware(out_dir, name, inputs, outputs, feeds, board)` is the image of the one model
`name`. `build_firmware(root, name, board, optimize)` links `NAME.elf` with the pinned Zig.

`run_models(elf, board, models)` runs an image under QEMU and returns an `ImageRun`: each model's
outputs, or why it has none (`errors`, `not_run`); `parse_output(stdout, models)` decodes what an
image printed. `run_firmware(elf, board, outputs)` runs a one-model image and raises `ZantError`
unless it succeeded. `count_instructions` measures the instructions one `MODEL_predict` executes,
exactly, with a TCG plugin (`insn_plugin.zig`, built with the same Zig): the image runs its models
once and then twice (the count is read from the semihosting command line), and the difference is
the cost of one call of each. `measure_cost` measures instructions and cycles the same way, the
cycles from the core's timing model and the board's flash (`zant.backend.timing`).
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from zant.backend import boards
from zant.backend.build import Board, ZigModule, build_zig, default_global_cache, model_modules
from zant.targets import RECORDS
from zant.errors import ZantError
from zant.signature import valid_outputs
from zant.ir.strings import decode, encode, is_string_dtype
from zant.ir.types import PACKED_DTYPES, abi_bytes, pack, unpack

PAINT = 0xDEADBEEF
"""The word the stack is painted with before `NAME_predict` runs."""

EXIT_STATUS = {"ok": 0, "predict": 1, "panic": 2, "fault": 3}

QEMU_INSTALL_HINT = (
    "install QEMU to run firmware images: apt-get install qemu-system-arm qemu-system-misc"
)

# -- the Zig root of an image ----------------------------------------------------------------------

_SEMIHOSTING = {
    "arm": '''\
fn semihost(op: usize, arg: usize) usize {
    return asm volatile ("bkpt #0xab"
        : [ret] "={r0}" (-> usize),
        : [op] "{r0}" (op),
          [arg] "{r1}" (arg),
        : .{ .memory = true });
}''',
    # The magic sequence must stay uncompressed for QEMU to recognise it.
    "riscv": '''\
fn semihost(op: usize, arg: usize) usize {
    return asm volatile (
        \\\\.option push
        \\\\.option norvc
        \\\\slli x0, x0, 0x1f
        \\\\ebreak
        \\\\srai x0, x0, 7
        \\\\.option pop
        : [ret] "={a0}" (-> usize),
        : [op] "{a0}" (op),
          [arg] "{a1}" (arg),
        : .{ .memory = true });
}''',
}

# Paints the free stack below the current stack pointer and returns that pointer: one asm block
# on registers only, so a frame the compiler pushes before or after it is never painted over.
_PAINT_FREE_STACK = {
    "arm": '''\
inline fn paintFreeStack() usize {
    return asm volatile (
        \\\\mov r0, sp
        \\\\mov r3, r1
        \\\\1:
        \\\\cmp r3, r0
        \\\\bhs 2f
        \\\\str r2, [r3]
        \\\\adds r3, #4
        \\\\b 1b
        \\\\2:
        : [sp] "={r0}" (-> usize),
        : [bottom] "{r1}" (@intFromPtr(&__stack_bottom)),
          [paint] "{r2}" (PAINT),
        : .{ .r3 = true, .cpsr = true, .memory = true });
}''',
    "riscv": '''\
inline fn paintFreeStack() usize {
    return asm volatile (
        \\\\mv a0, sp
        \\\\mv t0, a1
        \\\\1:
        \\\\bgeu t0, a0, 2f
        \\\\sw a2, 0(t0)
        \\\\addi t0, t0, 4
        \\\\j 1b
        \\\\2:
        : [sp] "={a0}" (-> usize),
        : [bottom] "{a1}" (@intFromPtr(&__stack_bottom)),
          [paint] "{a2}" (PAINT),
        : .{ .x5 = true, .memory = true });
}''',
}

_ENTRY = {
    "arm": '''\
fn fault() callconv(.c) noreturn {{
    reportFault();
}}

// Initial stack pointer, reset, then NMI, HardFault, MemManage, BusFault and UsageFault.
export const {name}_vectors linksection(".vectors") = [_]*const anyopaque{{
    @ptrCast(&__stack_top), @ptrCast(&{name}_reset), @ptrCast(&fault), @ptrCast(&fault),
    @ptrCast(&fault), @ptrCast(&fault), @ptrCast(&fault),
}};

/// Reset: the whole stack painted while nothing is on it yet, then startup. Naked, registers only:
/// a compiled function may push its frame after reading `sp` (shrink-wrapping, as ReleaseFast
/// does) and so paint over its own return address. Thumb-1 instructions, for the Cortex-M0+ too.
export fn {name}_reset() callconv(.naked) noreturn {{
    asm volatile (
        \\\\ldr r0, =__stack_bottom
        \\\\ldr r1, =__stack_top
        \\\\ldr r2, ={paint}
        \\\\1:
        \\\\cmp r0, r1
        \\\\bhs 2f
        \\\\str r2, [r0]
        \\\\adds r0, #4
        \\\\b 1b
        \\\\2:
        \\\\bl %[startup]
        \\\\.ltorg
        :
        : [startup] "X" (&startup),
    );
}}

/// First once the stack is painted: the FPU on (float code would fault without it) and, on RISC-V, the trap vector.
fn initCore() void {{
    if (!{fpu}) return;
    const cpacr: *volatile u32 = @ptrFromInt(0xE000_ED88);
    cpacr.* |= 0xF << 20; // full access to CP10 and CP11
    asm volatile ("dsb\\nisb" ::: .{{ .memory = true }});
}}''',
    "riscv": '''\
fn fault() align(4) callconv(.c) noreturn {{
    reportFault();
}}

/// Reset: the stack pointer set and the whole stack painted while nothing is on it yet, then
/// startup. Naked, registers only: a compiled function may push its frame after reading `sp` and so
/// paint over its own return address.
export fn _start() linksection(".text.start") callconv(.naked) noreturn {{
    asm volatile (
        \\\\la sp, __stack_top
        \\\\la t0, __stack_bottom
        \\\\li t1, {paint}
        \\\\1:
        \\\\bgeu t0, sp, 2f
        \\\\sw t1, 0(t0)
        \\\\addi t0, t0, 4
        \\\\j 1b
        \\\\2:
        \\\\tail %[startup]
        :
        : [startup] "X" (&startup),
    );
}}

/// First once the stack is painted: the FPU on (float code would fault without it) and, on RISC-V, the trap vector.
fn initCore() void {{
    asm volatile ("csrw mtvec, %[handler]"
        :
        : [handler] "r" (@intFromPtr(&fault)),
    );
    if ({fpu}) asm volatile ("csrs mstatus, %[fs]"
        :
        : [fs] "r" (@as(usize, 0x2000)), // FS = initial: floating-point instructions allowed
    );
}}''',
}

_RUNTIME = '''\
extern var __data_start: u8;
extern var __data_end: u8;
extern const __data_load: u8;
extern var __bss_start: u8;
extern var __bss_end: u8;
extern var __stack_bottom: u8;
extern var __stack_top: u8;

const EXIT_PREDICT = {predict};
const EXIT_PANIC = {panic};
const EXIT_FAULT = {fault};
const PAINT: u32 = 0x{paint:08X};

{semihosting}

{paint_free_stack}

/// Bytes of stack used below `top` since `paintFreeStack` returned it. A model whose calls
/// need no stack (a leaf without a frame) leaves all of it painted, and the words from `top` up
/// are the caller's, which may hold the paint value too: that is 0 bytes, not a wrap-around.
inline fn stackUsedBelow(top: usize) usize {{
    const bottom: [*]volatile u32 = @ptrCast(@alignCast(&__stack_bottom));
    var i: usize = 0;
    while (bottom[i] == PAINT and @intFromPtr(&bottom[i]) < top) i += 1;
    return top - @intFromPtr(&bottom[i]);
}}

fn exit(code: u32) noreturn {{
    const block = [2]usize{{ 0x20026, code }}; // ADP_Stopped_ApplicationExit, status
    _ = semihost(0x20, @intFromPtr(&block)); // SYS_EXIT_EXTENDED
    while (true) {{}}
}}

/// Writes `bytes` through SYS_WRITE0 in NUL-terminated chunks.
fn write(bytes: []const u8) void {{
    var chunk: [129]u8 = undefined;
    var start: usize = 0;
    while (start < bytes.len) {{
        const n: usize = @min(bytes.len - start, chunk.len - 1); // (@min narrows its type)
        @memcpy(chunk[0..n], bytes[start..][0..n]);
        chunk[n] = 0;
        _ = semihost(0x04, @intFromPtr(&chunk));
        start += n;
    }}
}}

fn writeDecimal(value: usize) void {{
    var digits: [20]u8 = undefined;
    var i: usize = digits.len;
    var rest = value;
    while (true) {{
        i -= 1;
        digits[i] = @intCast('0' + rest % 10);
        rest /= 10;
        if (rest == 0) break;
    }}
    write(digits[i..]);
}}

fn writeHex(bytes: []const u8) void {{
    const hex = "0123456789abcdef";
    var line: [128]u8 = undefined;
    var start: usize = 0;
    while (start < bytes.len) : (start += line.len / 2) {{
        const n: usize = @min(bytes.len - start, line.len / 2);
        for (bytes[start..][0..n], 0..) |byte, i| {{
            line[2 * i] = hex[byte >> 4];
            line[2 * i + 1] = hex[byte & 15];
        }}
        write(line[0 .. 2 * n]);
    }}
}}

/// The model whose `MODEL_predict` runs, for the PANIC and FAULT lines.
var running: []const u8 = "(startup)";

pub const panic = std.debug.FullPanic(onPanic);
fn onPanic(message: []const u8, first_trace_address: ?usize) noreturn {{
    _ = first_trace_address;
    write("PANIC ");
    write(running);
    write(" ");
    write(message);
    write("\\n");
    exit(EXIT_PANIC);
}}

fn reportFault() noreturn {{
    write("FAULT ");
    write(running);
    write("\\n");
    exit(EXIT_FAULT);
}}

/// A model's `MODEL_predict` returned non-zero: one line, then the next model.
fn failed(status: i32) u32 {{
    write("ERROR ");
    write(running);
    write(if (status < 0) " returned -" else " returned ");
    writeDecimal(@abs(status));
    write("\\n");
    return EXIT_PREDICT;
}}

/// How many times to run the model: the last word of the semihosting command line, or 1.
fn repeatCount() usize {{
    var text: [64]u8 = undefined;
    var block = [2]usize{{ @intFromPtr(&text), text.len }};
    if (semihost(0x15, @intFromPtr(&block)) != 0) return 1; // SYS_GET_CMDLINE
    var count: usize = 0;
    for (text[0..@min(block[1], text.len)]) |c| {{
        count = if (c >= '0' and c <= '9') count * 10 + (c - '0') else 0;
    }}
    return @max(count, 1);
}}

/// Bytes of stack ever used: from the top down to the lowest word no longer painted.
fn stackHighWater() usize {{
    const bottom: [*]volatile u32 = @ptrCast(@alignCast(&__stack_bottom));
    var i: usize = 0;
    while (bottom[i] == PAINT) i += 1;
    return @intFromPtr(&__stack_top) - @intFromPtr(&bottom[i]);
}}

/// Called by the reset code once the stack is painted.
fn startup() callconv(.c) noreturn {{
    initCore();
    const data_len = @intFromPtr(&__data_end) - @intFromPtr(&__data_start);
    const data: [*]u8 = @ptrCast(&__data_start);
    const load: [*]const u8 = @ptrCast(&__data_load);
    @memcpy(data[0..data_len], load[0..data_len]);
    const bss: [*]u8 = @ptrCast(&__bss_start);
    @memset(bss[0 .. @intFromPtr(&__bss_end) - @intFromPtr(&__bss_start)], 0);
    exit(run());
}}

fn run() u32 {{
    const repeat = repeatCount();
    var status: u32 = 0;
{run_models}    write("STACK ");
    writeDecimal(stackHighWater());
    write("\\n");
    return status;
}}
'''

GUARD_REGION = 32
"""Bytes of each no-access region of a guarded image: the smallest region of a PMSAv7 MPU, the
granule of a PMSAv8 one."""

MPU_REGIONS = 8
"""Guard regions an image's MPU protects: the Cortex-M3/M4/M7's MPU (PMSAv7) has 8 regions as
QEMU's machines have it; the Cortex-M33's and M55's (PMSAv8) 16, two a guard (`_GUARD_MEMORY`)."""

_GUARDED = '''\
/// A buffer of `n` bytes between two {size}-byte regions nothing may touch: `after` begins where
/// `data` ends; `before` ends at most {slack} bytes before it (the padding that aligns the end).
fn Guarded(comptime n: usize) type {{
    return extern struct {{
        before: [{size}]u8 align({size}) = @splat(0),
        pad: [({size} - n % {size}) % {size}]u8 = @splat(0),
        data: [n]u8,
        after: [{size}]u8 = @splat(0),
    }};
}}

extern var __zant_guard_constants_before: u8;
extern var __zant_guard_constants_after: u8;
extern var __zant_guard_scratch_before: u8;
extern var __zant_guard_scratch_after: u8;

{guard_memory}
'''


_GUARD_FRAME = '''\
/// The MPU ({mpu}): the default memory map for privileged code, {guards}
/// After start-up, which zeroes the guards in .bss.
fn guardMemory() void {{{{
    const regions = [_]usize{{{{ {{regions}} }}}};
    const rnr: *volatile u32 = @ptrFromInt(0xE000_ED98);
    const rbar: *volatile u32 = @ptrFromInt(0xE000_ED9C);
{program}
    const shcsr: *volatile u32 = @ptrFromInt(0xE000_ED24);
    shcsr.* |= 1 << 16; // MemManage faults enabled
    const ctrl: *volatile u32 = @ptrFromInt(0xE000_ED94);
    ctrl.* = 0b101; // the default map for privileged code, MPU on
    asm volatile ("dsb\\nisb" ::: .{{{{ .memory = true }}}});
}}}}'''
"""`guardMemory` around one MPU kind's region programming (`_GUARD_MEMORY`): the registers both
kinds share (RNR, RBAR, SHCSR, CTRL at the same addresses) and the MPU's enabling."""

_GUARD_MEMORY = {
    "pmsav7": _GUARD_FRAME.format(
        mpu="PMSAv7",
        guards="and no access at all to each\n/// guard region (a read or write there is a MemManage fault, which prints FAULT).",
        program='''\
    const rasr: *volatile u32 = @ptrFromInt(0xE000_EDA0);
    for (regions, 0..) |address, i| {{
        rnr.* = @intCast(i);
        rbar.* = @intCast(address);
        rasr.* = (1 << 28) | ({size_field} << 1) | 1; // execute never, AP no access, {size} B, on
    }}''',
    ),
    "pmsav8": _GUARD_FRAME.format(
        mpu="PMSAv8, Armv8-M",
        guards="and each guard region\n/// covered by two enabled regions alike. PMSAv8's permissions have no \"no access\" for privileged\n/// code, but an access that two regions match is a MemManage fault (which prints FAULT), read or\n/// write: two regions a guard, as many guards as MPU_TYPE's regions allow.",
        program='''\
    const mpu_type: *volatile u32 = @ptrFromInt(0xE000_ED90);
    const rlar: *volatile u32 = @ptrFromInt(0xE000_EDA0);
    const count = @min(regions.len, ((mpu_type.* >> 8) & 0xFF) / 2);
    for (regions[0..count], 0..) |address, i| {{
        for (0..2) |copy| {{
            rnr.* = @intCast(2 * i + copy);
            rbar.* = @intCast(address | 1); // base, execute never
            rlar.* = @intCast(address | 1); // limit: the {size}-byte block at the base; on
        }}
    }}''',
    ),
}
"""How a guarded image programs its core's MPU (`Target.mpu`): a Zig `guardMemory` (a format
string of `regions`, the guard regions' addresses, and the region `size`, `size_field`)."""


def guard_regions(models: Sequence[ImageModel]) -> list[str]:
    """The guard regions a guarded image's MPU protects, most telling first, as many as the MPU
    has: after and before the scratch and constant arenas, then after each output and input,
    then before each."""
    after = ["&__zant_guard_scratch_after", "&__zant_guard_constants_after"]
    before = ["&__zant_guard_scratch_before", "&__zant_guard_constants_before"]
    for m in models:
        for kind, tensors in (("output", m.outputs), ("input", m.inputs)):
            for i in range(len(tensors)):
                after.append(f"&{m.name}_{kind}{i}_guarded.after")
                before.append(f"&{m.name}_{kind}{i}_guarded.before")
    return (after + before)[:MPU_REGIONS]


_RUN_MODEL = '''\
fn run_{model}(repeat: usize) u32 {{
    running = "{model}";
    const top = paintFreeStack();
{init}    for (0..repeat) |_| {{
        const status = {model}_predict({arguments});
        if (status != 0) return failed(status);
    }}
    const used = stackUsedBelow(top); // before any write: the model's own stack
    write("MODEL_STACK {model} ");
    writeDecimal(used);
    write("\\n");
{print_outputs}    return 0;
}}
'''


class Tensor(Protocol):
    """A graph input or output as the driver describes it (`TensorSignature`)."""

    name: str
    shape: list[int]
    dtype: str


def nbytes(tensor: Tensor) -> int:
    """Its bytes in the C ABI (int4 …: packed, rounded up to a whole byte)."""
    return abi_bytes(math.prod(tensor.shape), tensor.dtype)


def input_file(name: str, index: int) -> str:
    return f"{name}.input{index}.bin"


@dataclass(frozen=True)
class ImageModel:
    """One model of an image: its generated `NAME.zig` beside the image's root, its signature
    and the inputs embedded for it (`feeds`, in input order; only `write_image` reads them)."""

    name: str
    inputs: Sequence[Tensor]
    outputs: Sequence[Tensor]
    feeds: Sequence[np.ndarray] = ()
    constants: str = "embedded"  # external, staged: the image calls MODEL_init first
    arena: tuple[int, int] | None = None  # the caller's scratch arena (--arena caller): its size
    # and alignment; the image hands every such model one arena, `zant_arena`, as large as the largest
    hot: bool = False  # printed as two modules, its hot kernels apart (`write_image` sees MODEL.hot.zig)


def _print_output(name: str, outputs: Sequence[Tensor], index: int, ref: str = "&") -> str:
    """The statements printing output `index` in hex: all of it, or for an output compiled at
    its bound (`bounded_dim`) its valid part only, the extent its entry of the extents array
    (the last output) gives, clamped to the capacity: per index of the dimensions before the
    bounded one, the first `extent` rows of it."""
    tensor = outputs[index]
    dim = getattr(tensor, "bounded_dim", None)
    if dim is None:
        return f"    writeHex({ref}{name}_output{index});\n"
    entry = sum(getattr(t, "bounded_dim", None) is not None for t in outputs[:index])
    outer = math.prod(tensor.shape[:dim])
    row = tensor.shape[dim]
    inner = math.prod(tensor.shape[dim + 1 :]) * np.dtype(tensor.dtype).itemsize
    extents = f"{name}_output{len(outputs) - 1}"
    return (
        f"    const {name}_extent{index}: usize = @intCast(std.math.clamp("
        f"std.mem.readInt(i32, {extents}[{4 * entry}..][0..4], .little), 0, {row}));\n"
        f"    for (0..{outer}) |o| writeHex({name}_output{index}[o * {row * inner} ..][0 .. {name}_extent{index} * {inner}]);\n"
    )


def _model_source(model: ImageModel, guard: bool = False) -> str:
    """A model's declarations and the function that runs it and prints its outputs (`guard`: each
    input and output between two no-access regions, `GUARDED`)."""
    name, inputs, outputs = model.name, model.inputs, model.outputs
    if guard:
        buffers = [
            line
            for i, t in enumerate(inputs)
            for line in (
                f"const {name}_input{i}_guarded = Guarded({nbytes(t)}){{ .data = @embedFile(\"{input_file(name, i)}\").* }};",
                f"const {name}_input{i}: *const [{nbytes(t)}]u8 = &{name}_input{i}_guarded.data;",
            )
        ] + [
            line
            for i, t in enumerate(outputs)
            for line in (
                f"var {name}_output{i}_guarded: Guarded({nbytes(t)}) = .{{ .data = undefined }};",
                f"const {name}_output{i}: *[{nbytes(t)}]u8 = &{name}_output{i}_guarded.data;",
            )
        ]
        ref = ""
    else:
        buffers = [
            f'const {name}_input{i}: [{nbytes(t)}]u8 align(16) = @embedFile("{input_file(name, i)}").*;'
            for i, t in enumerate(inputs)
        ] + [f"var {name}_output{i}: [{nbytes(t)}]u8 align(16) = undefined;" for i, t in enumerate(outputs)]
        ref = "&"
    arguments = ", ".join(
        [f"{ref}{name}_input{i}" for i in range(len(inputs))] + [f"{ref}{name}_output{i}" for i in range(len(outputs))]
    )
    parameters = ", ".join(["*const anyopaque"] * len(inputs) + ["*anyopaque"] * len(outputs))
    init, declarations = _constants_source(model)
    if model.arena is not None:  # the image's one arena, shared by the models (they run in turn)
        init += (
            f"    const arena_status = {name}_set_arena(&zant_arena, zant_arena.len);\n"
            "    if (arena_status != 0) return failed(arena_status);\n"
        )
        declarations = [*declarations, f"extern fn {name}_set_arena(arena: *anyopaque, bytes: usize) callconv(.c) i32;"]
    print_outputs = "".join(
        f'    write("OUTPUT {name} {i} ");\n{_print_output(name, outputs, i, ref)}    write("\\n");\n'
        for i in range(len(outputs))
    )
    return "\n".join(
        [
            "// Through its C ABI entry point (analysing the file exports it).",
            f'comptime {{ _ = @import("{name if model.hot else f"{name}.zig"}"); }}',
            f"extern fn {name}_predict({parameters}) callconv(.c) i32;",
            *declarations,
            *buffers,
            _RUN_MODEL.format(model=name, arguments=arguments, print_outputs=print_outputs, init=init),
        ]
    )


EXTERNAL_ALIGNMENT = 64
"""Where an image puts an external constant blob: aligned to this (at least any plan's)."""


def _constants_source(model: ImageModel) -> tuple[str, list[str]]:
    """The call of `MODEL_init` (external or staged constants) and what it needs: for external
    ones, the blob `MODEL.weights.bin` placed by the image in its own read-only data (where the
    board has room for weights; a real firmware may load it anywhere), its address passed to
    `MODEL_init`."""
    name = model.name
    failed = "if (init_status != 0) return failed(init_status);\n"
    if model.constants == "staged":
        return f"    const init_status = {name}_init();\n    {failed}", [
            f"extern fn {name}_init() callconv(.c) i32;"
        ]
    if model.constants == "external":
        return f"    const init_status = {name}_init(&{name}_weights);\n    {failed}", [
            f"extern fn {name}_init(constants: *const anyopaque) callconv(.c) i32;",
            "// The external constant arena, placed by the image and handed to the model.",
            f'const {name}_weights align({EXTERNAL_ALIGNMENT}) = @embedFile("{name}.weights.bin").*;',
        ]
    return "", []


GUARD_TARGETS = tuple(name for name, t in RECORDS.items() if t.mpu in _GUARD_MEMORY)
"""The cores whose MPU (PMSAv7 or PMSAv8) a guarded image programs (`Target.mpu`)."""


def firmware_source(name: str, models: Sequence[ImageModel], board: Board, guard: bool = False) -> str:
    """The Zig root of image `name`, which runs `models` in turn; with `guard` (a core with an
    MPU: `GUARD_TARGETS`), each input and output, the scratch arena and the constant arena between
    regions the MPU lets nothing touch (`guard_regions`: as many as it has)."""
    if guard and board.target not in GUARD_TARGETS:
        raise ZantError(f"a guarded image needs a core with an MPU ({', '.join(GUARD_TARGETS)}), not {board.target}")
    fpu = "true" if board.fpu else "false"
    run_models = "".join(f"    if (run_{m.name}(repeat) != 0) status = EXIT_PREDICT;\n" for m in models)
    guarded = [
        _GUARDED.format(
            size=GUARD_REGION, slack=GUARD_REGION - 1,
            guard_memory=_GUARD_MEMORY[RECORDS[board.target].mpu].format(  # type: ignore[index]
                size=GUARD_REGION, size_field=GUARD_REGION.bit_length() - 2,
                regions=", ".join(f"@intFromPtr({r})" for r in guard_regions(models)),
            ),
        ),
        "",
    ] if guard else []
    if guard:
        run_models = "    guardMemory();\n" + run_models
    arenas = [m.arena for m in models if m.arena is not None]
    shared = [
        "// The scratch arena of the models compiled with the caller's (--arena caller), one for all.",
        f"var zant_arena: [{max(1, *(size for size, _ in arenas))}]u8 align({max(a for _, a in arenas)}) = undefined;",
        "",
    ] if arenas else []
    return "\n".join(
        [
            f"// {name}.firmware.zig: generated by zant for {board.name} ({board.target}). Do not edit.",
            'const std = @import("std");',
            "",
            *guarded,
            *shared,
            *(_model_source(m, guard) for m in models),
            _RUNTIME.format(
                name=name, run_models=run_models, paint=PAINT, semihosting=_SEMIHOSTING[board.arch],
                paint_free_stack=_PAINT_FREE_STACK[board.arch], **EXIT_STATUS
            ),
            _ENTRY[board.arch].format(name=name, fpu=fpu, paint=f"0x{PAINT:08X}"),
            "",
        ]
    )


MIN_STACK = boards.MIN_STACK
"""Bytes of RAM the linker script requires to be left for the stack (`boards.MIN_STACK`)."""


def entry_symbol(name: str, board: Board) -> str:
    return "_start" if board.arch == "riscv" else f"{name}_reset"


def linker_script(name: str, board: Board, guard: bool = False) -> str:
    """The linker script of `board`: code in flash, weights in flash (or their own region),
    `.data` and `.bss` at the start of RAM and the stack above them up to its end; each other
    memory of the board a MEMORY entry, and each scratch memory's section `.zant.<memory>` (the
    scratch arena `place-memories` put there) placed in it, NOLOAD: nothing copies or zeroes it."""
    weights = "WEIGHTS" if board.weights else "FLASH"
    regions = [("FLASH", "rx", board.flash), ("RAM", "rwx", board.ram)]
    if board.weights:
        regions.insert(1, ("WEIGHTS", "r", board.weights))
    for m in board.extra_memories:
        mode = ("rw" if m.kind == "ram" else "r") + ("x" if m.executable else "")
        regions.append((m.name, mode, m.region))
    memory = "\n".join(
        f"  {region} ({mode}) : ORIGIN = 0x{r.origin:08x}, LENGTH = 0x{r.size:x}" for region, mode, r in regions
    )
    scratch = "".join(
        f"  .zant.{m.name} (NOLOAD) : ALIGN(16) {{ *(.zant.{m.name} .zant.{m.name}.*) }} > {m.name}\n"
        for m in board.scratch_memories
    )
    entry = entry_symbol(name, board)
    # A guarded image: the constant and scratch arenas (`MODEL_constants`, `MODEL_scratch`, each
    # its own input section) first in .rodata and .bss, each between two guard regions.
    region = GUARD_REGION
    constants = (
        f"__zant_guard_constants_before = ALIGN({region}); . = __zant_guard_constants_before + {region}; "
        f"KEEP(*(.rodata.*_constants)) __zant_guard_constants_after = ALIGN({region}); "
        f". = __zant_guard_constants_after + {region}; "
    ) if guard else ""
    guarded_scratch = (
        f"    __zant_guard_scratch_before = ALIGN({region});\n    . = __zant_guard_scratch_before + {region};\n"
        f"    *(.bss.*_scratch)\n    __zant_guard_scratch_after = ALIGN({region});\n"
        f"    . = __zant_guard_scratch_after + {region};\n"
    ) if guard else ""
    return f"""\
/* {name}.ld: generated by zant for {board.name} ({board.target}). Do not edit. */
MEMORY {{
{memory}
}}
ENTRY({entry})
SECTIONS {{
  .text : {{ KEEP(*(.vectors)) KEEP(*(.text.start)) *(.text .text.*) }} > FLASH
  .rodata : ALIGN({region if guard else 16}) {{ {constants}*(.rodata .rodata.* .srodata .srodata.*) }} > {weights}
  .data : ALIGN(16) {{
    __data_start = .;
    *(.data .data.* .sdata .sdata.*)
    . = ALIGN(16);
    __data_end = .;
  }} > RAM AT > {weights}
  __data_load = LOADADDR(.data);
  .bss (NOLOAD) : ALIGN(16) {{
    __bss_start = .;
{guarded_scratch}    *(.bss .bss.* .sbss .sbss.* COMMON)
    . = ALIGN(16);
    __bss_end = .;
  }} > RAM
{scratch}  __stack_bottom = __bss_end;
  __stack_top = ORIGIN(RAM) + LENGTH(RAM);
  ASSERT(__stack_top - __stack_bottom >= {MIN_STACK}, "{name}: .data and .bss leave less than {MIN_STACK} bytes of stack on {board.name}")
}}
"""


def write_image(out_dir: Path, name: str, models: Sequence[ImageModel], board: Board, guard: bool = False) -> Path:
    """Write the sources of image `name`, which runs `models` (each `MODEL.zig` already in
    `out_dir`), and their inputs; return the Zig root."""
    from zant.backend.names import validate_prefix

    validate_prefix(name)
    names = [validate_prefix(m.name) for m in models]
    if not models or len(set(names)) != len(names):
        raise ZantError(f"an image needs models of distinct names, not {names}")
    missing = [f"{n}.zig" for n in names if not (out_dir / f"{n}.zig").is_file()]
    if missing:
        raise ZantError(f"image '{name}': no {', '.join(missing)} in {out_dir}")
    # A model printed with its hot kernels apart is a module of the image (`build_firmware`).
    models = [replace(m, hot=(out_dir / f"{m.name}.hot.zig").is_file()) for m in models]
    for model in models:
        for index, (tensor, array) in enumerate(zip(model.inputs, model.feeds, strict=True)):
            if is_string_dtype(tensor.dtype):  # UTF-8 in NUL-padded fields (zant.ir.strings)
                dense = encode(array, tensor.shape, np.dtype(tensor.dtype).itemsize, tensor.name)
            else:
                dense = np.array(array, dtype=np.dtype(tensor.dtype).newbyteorder("<"), order="C")  # keeps 0-d shapes
            if list(dense.shape) != list(tensor.shape):
                raise ZantError(
                    f"{model.name}: input '{tensor.name}' has shape {list(dense.shape)}, expected {tensor.shape}"
                )
            (out_dir / input_file(model.name, index)).write_bytes(pack(dense))  # int4 …: packed
    (out_dir / f"{name}.ld").write_text(linker_script(name, board, guard), encoding="utf-8")
    root = out_dir / f"{name}.firmware.zig"
    root.write_text(firmware_source(name, models, board, guard), encoding="utf-8")
    return root


def write_firmware(
    out_dir: Path,
    name: str,
    inputs: Sequence[Tensor],
    outputs: Sequence[Tensor],
    feeds: Sequence[np.ndarray],
    board: Board,
    constants: str = "embedded",
    arena: tuple[int, int] | None = None,
) -> Path:
    """Write the sources of the image of the one model `name` beside `out_dir/NAME.zig`
    (`constants`: how its constant arena is reached, `ImageModel.constants`; `arena`: the size
    and alignment of the caller's scratch arena it takes, `ImageModel.arena`)."""
    return write_image(out_dir, name, [ImageModel(name, inputs, outputs, feeds, constants, arena)], board)


def build_firmware(root: Path, name: str, board: Board, optimize: str, guard: bool = False) -> Path:
    """Link `NAME.firmware.zig` (and the model it imports) into `NAME.elf` (`guard`: an image
    `write_image(..., guard=True)` wrote, whose arenas the linker script finds by their sections)."""
    # The script absolute: Zig links with the output folder as its working directory. The entry
    # named again: Zig's default (`_start`) overrides the script's. Debug fits the micro:bit's
    # 256 KB only without UBSan's runtime (std.fmt, for C code the image does not have) and
    # with unused sections dropped (all of compiler_rt otherwise): digits' .text 314 KB → 139 KB.
    script = (root.parent / f"{name}.ld").resolve()
    extra = ("-T", str(script), f"-fentry={entry_symbol(name, board)}", "--gc-sections", "-fno-ubsan-rt")
    if guard:
        extra += ("-fdata-sections",)
    # A model printed as two modules (its hot kernels apart: `build.model_modules`) is imported
    # by its module name, and each module built in its own mode.
    models = [m for hot in sorted(root.parent.glob("*.hot.zig"))
              for m in model_modules(root.parent, hot.name.removesuffix(".hot.zig"), optimize)]
    modules = [ZigModule("root", root.resolve(), optimize, tuple(m.name for m in models[::2])), *models] if models else []
    return build_zig(root, root.parent / f"{name}.elf", board.target, optimize, "exe", extra=extra, modules=modules)


def image_sizes(elf: Path) -> dict[str, int]:
    """`.text`/`.rodata`/`.data`/`.bss`/`.zant` of a linked image and its flash and static RAM
    (`.data`, `.bss` and the scratch arenas in the board's other memories, `.zant.*`)."""
    from zant.backend.elf import section_sizes

    sizes = section_sizes(elf)
    sizes["flash"] = sizes[".text"] + sizes[".rodata"] + sizes[".data"]
    sizes["static_ram"] = sizes[".data"] + sizes[".bss"] + sizes[".zant"]  # with other memories' scratch
    return sizes


# -- running under QEMU ----------------------------------------------------------------------------


def qemu_missing(board: Board) -> str | None:
    """Why `board`'s emulator cannot run here (a message with the install command), or None."""
    if board.machine is None:
        return f"board '{board.name}' names no QEMU machine to run its images on (a board file's `qemu` key)"
    if shutil.which(board.qemu) is None:
        return f"{board.qemu} not found; {QEMU_INSTALL_HINT}"
    return None


def qemu_command(
    board: Board, elf: Path, repeat: int = 1, plugin: Path | None = None, plugin_args: Sequence[str] = ()
) -> list[str]:
    # The last semihosting argument is how many times the image runs the model.
    # Semihosting writes to stdout (through a chardev), QEMU's own log (the plugin) to stderr.
    command = [
        board.qemu, "-M", board.machine, "-display", "none", "-monitor", "none", "-serial", "none",
        "-chardev", "stdio,id=semihosting",
        "-semihosting-config", f"enable=on,target=native,chardev=semihosting,arg={elf.stem},arg={repeat}",
        "-kernel", str(elf),
    ]
    if board.arch == "riscv":
        command[3:3] = ["-bios", "none"]
    if plugin is not None:
        # key=value arguments after the file; a comma inside a value is doubled (QEMU's escape)
        spec = ",".join(part.replace(",", ",,") for part in [f"file={plugin}", *plugin_args])
        command += ["-plugin", spec, "-d", "plugin"]
    return command


@dataclass
class FirmwareRun:
    """What the image of one model printed."""

    outputs: list[np.ndarray]
    stack_bytes: int  # the whole image's high-water mark (start-up, the harness's printing)
    stdout: str
    model_stack_bytes: int | None = None  # the stack its calls of NAME_init/NAME_predict used
    names: list[str] = field(default_factory=list)  # each output's (a run-time-length sequence: its valid slots)


@dataclass
class ImageRun:
    """What an image of several models printed: each model's outputs, or why it has none."""

    outputs: dict[str, list[np.ndarray]]  # the models that returned 0
    errors: dict[str, str]  # the models that failed: "returned 7", "panic: <message>" or "fault"
    not_run: list[str]  # the models after a panic or a fault
    stack_bytes: int | None  # None after a panic or a fault
    stdout: str
    model_stack: dict[str, int] = field(default_factory=dict)  # per model: its own calls' stack
    names: dict[str, list[str]] = field(default_factory=dict)  # per model: its outputs' names


def run_image(
    board: Board,
    elf: Path,
    repeat: int = 1,
    plugin: Path | None = None,
    timeout: float = 600,
    statuses: Collection[int] = (0,),
    plugin_args: Sequence[str] = (),
) -> subprocess.CompletedProcess:
    """Run an image under QEMU; raise `ZantError` with its output unless it exits with one of
    `statuses`. `plugin_args` (`key=value`) go to the plugin."""
    missing = qemu_missing(board)
    if missing:
        raise ZantError(missing)
    try:
        result = subprocess.run(
            qemu_command(board, elf, repeat, plugin, plugin_args), capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as error:
        raise ZantError(f"{elf.name} did not finish within {timeout:.0f} s on {board.name}") from error
    if result.returncode not in statuses:
        meaning = {v: k for k, v in EXIT_STATUS.items()}.get(result.returncode, "qemu")
        if "Lockup" in result.stderr:  # the fault handler's own push faulted
            meaning = "locked up: a fault while entering the fault handler, as when the stack overflows RAM"
        raise ZantError(
            f"{elf.name} on {board.name} exited with status {result.returncode} ({meaning}):\n"
            f"{(result.stdout + result.stderr).strip()[-2000:]}"
        )
    return result


_OUTPUT_LINE = re.compile(r"^OUTPUT (\w+) (\d+) ([0-9a-f]*)$", re.MULTILINE)
_ERROR_LINE = re.compile(r"^ERROR (\w+) returned (-?\d+)$", re.MULTILINE)
_STOP_LINE = re.compile(r"^(PANIC|FAULT) (\S+) ?(.*)$", re.MULTILINE)
_STACK_LINE = re.compile(r"^STACK (\d+)$", re.MULTILINE)
_MODEL_STACK_LINE = re.compile(r"^MODEL_STACK (\w+) (\d+)$", re.MULTILINE)


def _incomplete(what: str, stdout: str) -> ZantError:
    return ZantError(f"the image printed no complete result {what}:\n{stdout.strip()[-2000:]}")


def _printed_shape(tensor: Tensor) -> list[int]:
    """The shape of what the image printed of `tensor`: a bounded output's valid part only."""
    dim = getattr(tensor, "bounded_dim", None)
    if dim is None or math.prod(tensor.shape[:dim] + tensor.shape[dim + 1 :]) == 0:
        return list(tensor.shape)
    return [*tensor.shape[:dim], -1, *tensor.shape[dim + 1 :]]


def parse_output(stdout: str, models: Sequence[ImageModel]) -> ImageRun:
    """Each model's outputs (or why it has none) and the stack high-water mark an image printed."""
    printed: dict[str, dict[int, bytes]] = {m.name: {} for m in models}
    for model, index, data in _OUTPUT_LINE.findall(stdout):
        printed.setdefault(model, {})[int(index)] = bytes.fromhex(data)
    errors = {model: f"returned {status}" for model, status in _ERROR_LINE.findall(stdout)}
    stop = _STOP_LINE.search(stdout)
    if stop is not None:
        errors[stop[2]] = f"panic: {stop[3]}" if stop[1] == "PANIC" else "fault"
    outputs: dict[str, list[np.ndarray]] = {}
    names: dict[str, list[str]] = {}
    not_run = []
    for model in models:
        found = printed[model.name]
        if model.name in errors:
            continue
        if sorted(found) == list(range(len(model.outputs))):
            kept = valid_outputs(model.outputs, [  # the extents array dropped
                (unpack(found[i], t.dtype, math.prod(t.shape)) if t.dtype in PACKED_DTYPES  # int4 …
                 else decode(np.frombuffer(found[i], dtype=t.dtype)) if is_string_dtype(t.dtype)  # str objects
                 else np.frombuffer(found[i], dtype=np.dtype(t.dtype).newbyteorder("<")).astype(t.dtype)
                 ).reshape(_printed_shape(t))
                for i, t in enumerate(model.outputs)
            ])
            outputs[model.name] = [array for _, array in kept]
            names[model.name] = [t.name for t, _ in kept]
        elif stop is not None and not found:
            not_run.append(model.name)
        else:
            raise _incomplete(f"for {model.name}", stdout)
    stack = _STACK_LINE.search(stdout)
    if stack is None and stop is None:
        raise _incomplete("(no STACK line)", stdout)
    model_stack = {model: int(used) for model, used in _MODEL_STACK_LINE.findall(stdout)}
    return ImageRun(outputs, errors, not_run, None if stack is None else int(stack[1]), stdout, model_stack, names)


def run_models(elf: Path, board: Board, models: Sequence[ImageModel], timeout: float = 600) -> ImageRun:
    """Run an image of several models once under QEMU: a model that fails is in the result's
    `errors`; only QEMU's own failures (a lockup, a timeout) raise `ZantError`."""
    result = run_image(board, elf, timeout=timeout, statuses=tuple(EXIT_STATUS.values()))
    return parse_output(result.stdout, models)


def run_firmware(elf: Path, board: Board, outputs: Sequence[Tensor], timeout: float = 600) -> FirmwareRun:
    """Run the image of one model (`NAME.elf` of model NAME) once under QEMU and decode its
    outputs; raise `ZantError` unless it succeeded."""
    run = parse_output(run_image(board, elf, timeout=timeout).stdout, [ImageModel(elf.stem, (), outputs)])
    assert run.stack_bytes is not None  # status 0: no panic, no fault
    return FirmwareRun(run.outputs[elf.stem], run.stack_bytes, run.stdout, run.model_stack.get(elf.stem), run.names[elf.stem])


# -- exact instruction counts ----------------------------------------------------------------------

PLUGIN_SOURCE = Path(__file__).with_name("insn_plugin.zig")


def insn_plugin() -> Path:
    """The instruction-counting TCG plugin, built once per source version into Zig's cache."""
    import hashlib

    digest = hashlib.sha256(PLUGIN_SOURCE.read_bytes()).hexdigest()[:16]
    path = default_global_cache().parent / "qemu-plugins" / f"libzant-insn-{digest}.so"
    if not path.exists():
        built = build_zig(PLUGIN_SOURCE, path.with_suffix(".tmp.so"), "host", "ReleaseFast", "shared")
        built.replace(path)  # atomic: concurrent builders never load a half-written plugin
    return path


def executed_instructions(board: Board, elf: Path, repeat: int) -> int:
    result = run_image(board, elf, repeat, insn_plugin())
    return _instructions(result.stderr)


def _instructions(stderr: str) -> int:
    found = re.search(r"^INSNS (\d+)$", stderr, re.MULTILINE)
    if found is None:
        raise ZantError(f"the instruction-counting plugin reported nothing:\n{stderr.strip()[-2000:]}")
    return int(found.group(1))


def count_instructions(board: Board, elf: Path) -> int:
    """Instructions one call of each model's `MODEL_predict` executes (the image run twice minus
    run once)."""
    return executed_instructions(board, elf, 2) - executed_instructions(board, elf, 1)


def timing_arguments(board: Board) -> list[str]:
    """The plugin's arguments that record blocks for `zant.backend.timing` and model the board's
    flash (`Board.flash_timing`)."""
    arguments = ["blocks=1"]
    flash = board.flash_timing
    if flash.wait_states:
        arguments += [
            f"flash={board.flash.origin:x}-{board.flash.end:x}", f"wait={flash.wait_states}",
            f"prefetch={int(flash.prefetch)}", f"icache={flash.icache_lines}", f"dcache={flash.dcache_lines}",
        ]
    return arguments


@dataclass(frozen=True)
class Cost:
    """What one inference costs on a board: instructions (exact) and cycles (the core's timing
    model and the board's flash, `zant.backend.timing`), and milliseconds at the board's clock."""

    instructions: int
    cycles: int
    clock_hz: int | None

    @property
    def milliseconds(self) -> float | None:
        return None if self.clock_hz is None else self.cycles * 1000 / self.clock_hz

    def describe(self) -> str:
        """`5,006,594 instructions, 6,120,311 cycles, 51.00 ms at 120 MHz`."""
        text = f"{self.instructions:,} instructions, {self.cycles:,} cycles"
        if self.clock_hz is not None:
            text += f", {self.milliseconds:.2f} ms at {self.clock_hz / 1e6:g} MHz"
        return text


def timed_run(board: Board, elf: Path, repeat: int, plugin_args: Sequence[str] = ()):
    """Run the image `repeat` times with the blocks recorded: (instructions, blocks, stderr)."""
    from zant.backend.timing import parse_blocks

    result = run_image(board, elf, repeat, insn_plugin(), plugin_args=[*timing_arguments(board), *plugin_args])
    return _instructions(result.stderr), parse_blocks(result.stderr, board.target), result.stderr


def run_cycles(board: Board, elf: Path, repeat: int) -> tuple[int, int]:
    """Instructions and cycles of the whole image run `repeat` times."""
    from zant.backend.timing import CORES, total_cycles

    instructions, blocks, _ = timed_run(board, elf, repeat)
    return instructions, total_cycles(blocks, CORES[RECORDS[board.target].timing])


def measure_cost(board: Board, elf: Path) -> Cost:
    """Instructions and cycles one call of each model's `MODEL_predict` costs (the image run twice
    minus run once: the second call runs with the caches the first one left, as a deployed
    model's calls do)."""
    once = run_cycles(board, elf, 1)
    twice = run_cycles(board, elf, 2)
    return Cost(twice[0] - once[0], twice[1] - once[1], board.clock_hz)
