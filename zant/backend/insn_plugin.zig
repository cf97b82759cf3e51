//! A QEMU TCG plugin that counts executed guest instructions and prints `INSNS <count>` at exit
//! (through `-d plugin`). Built by zant with the pinned Zig as a host shared library; the QEMU
//! binary that loads it provides the `qemu_plugin_*` functions (plugin API version 1).
//!
//! With the argument `ranges=S-E:S-E:…` (hexadecimal guest addresses, each range [S, E), sorted
//! and disjoint: the functions of the image's symbol table) it also counts the instructions
//! executed in each range and prints `RANGE <index> <count>` for each range that ran and
//! `OUTSIDE <count>` for the instructions in none of them (`zant profile`).
//!
//! `kernels=I:J:…` and `callers=I:J:…` (decimal range indexes) say which ranges are kernels and
//! which call them (the model's entry point, the firmware's loop); the others are library code
//! (memcpy, expf, …). Library code run after a kernel was entered and before a caller runs again
//! is the kernel's: it prints `CALLED <kernel> <count>` per kernel and `INKERNELS <index> <count>`
//! per library range (index = the number of ranges: code in none), so a kernel's cost includes the
//! library functions it calls, and the library's own rows keep only the rest.

const Tb = opaque {};
const Insn = opaque {};
const TbTranslate = *const fn (id: u64, tb: *Tb) callconv(.c) void;
const AtExit = *const fn (id: u64, data: ?*anyopaque) callconv(.c) void;
const ExecCallback = *const fn (vcpu: c_uint, data: ?*anyopaque) callconv(.c) void;
const INLINE_ADD_U64: c_int = 0;
const CB_NO_REGS: c_int = 0;

extern fn qemu_plugin_register_vcpu_tb_trans_cb(id: u64, cb: TbTranslate) void;
extern fn qemu_plugin_register_vcpu_tb_exec_inline(tb: *Tb, op: c_int, ptr: *anyopaque, imm: u64) void;
extern fn qemu_plugin_register_vcpu_tb_exec_cb(tb: *Tb, cb: ExecCallback, flags: c_int, data: ?*anyopaque) void;
extern fn qemu_plugin_tb_n_insns(tb: *const Tb) usize;
extern fn qemu_plugin_tb_get_insn(tb: *const Tb, index: usize) *Insn;
extern fn qemu_plugin_insn_vaddr(insn: *const Insn) u64;
extern fn qemu_plugin_register_atexit_cb(id: u64, cb: AtExit, data: ?*anyopaque) void;
extern fn qemu_plugin_outs(text: [*:0]const u8) void;

export const qemu_plugin_version: c_int = 1;

/// One counter: the firmware images run on a single vCPU.
var executed: u64 = 0;

const MAX_RANGES = 8192;
var starts: [MAX_RANGES]u64 = undefined;
var ends: [MAX_RANGES]u64 = undefined;
var range_count: usize = 0;
/// Instructions executed per range; the last used slot (`range_count`) counts those in none.
var counts: [MAX_RANGES + 1]u64 = @splat(0);

const Kind = enum(u8) { library, kernel, caller };
var kinds: [MAX_RANGES + 1]Kind = @splat(.library);
/// The kernel entered last, until a caller runs again; NONE: none.
const NONE = MAX_RANGES + 1;
var current: usize = NONE;
/// Library instructions run while each kernel was current, and per library range.
var called: [MAX_RANGES + 1]u64 = @splat(0);
var in_kernels: [MAX_RANGES + 1]u64 = @splat(0);

fn enterKernel(_: c_uint, data: ?*anyopaque) callconv(.c) void {
    current = @intFromPtr(data) - 1;
}

fn runCaller(_: c_uint, _: ?*anyopaque) callconv(.c) void {
    current = NONE;
}

/// A run of library instructions: `data` packs their range (high half) and their number (low).
fn runLibrary(_: c_uint, data: ?*anyopaque) callconv(.c) void {
    if (current == NONE) return;
    const packed_data: u64 = @intFromPtr(data);
    const n = packed_data & 0xFFFF_FFFF;
    called[current] += n;
    in_kernels[@intCast(packed_data >> 32)] += n;
}

/// The index of the range holding `address`, or `range_count` if none does.
fn rangeOf(address: u64) usize {
    var low: usize = 0;
    var high: usize = range_count;
    while (low < high) {
        const middle = low + (high - low) / 2;
        if (address < starts[middle]) {
            high = middle;
        } else if (address >= ends[middle]) {
            low = middle + 1;
        } else {
            return middle;
        }
    }
    return range_count;
}

/// Each translated block adds its instruction count to `executed` whenever it runs (inline, no
/// call); with ranges, each run of its instructions in one range adds to that range's counter.
fn onTranslate(_: u64, tb: *Tb) callconv(.c) void {
    const n = qemu_plugin_tb_n_insns(tb);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, INLINE_ADD_U64, &executed, n);
    if (range_count == 0) return;
    var first: usize = 0;
    while (first < n) {
        const range = rangeOf(qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, first)));
        var last = first + 1;
        while (last < n and rangeOf(qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, last))) == range) last += 1;
        qemu_plugin_register_vcpu_tb_exec_inline(tb, INLINE_ADD_U64, &counts[range], last - first);
        switch (kinds[range]) {
            // entered at its start (a call lands there); a library call returns into it later
            .kernel => if (qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, first)) == starts[range]) {
                qemu_plugin_register_vcpu_tb_exec_cb(tb, &enterKernel, CB_NO_REGS, @ptrFromInt(range + 1));
            },
            .caller => qemu_plugin_register_vcpu_tb_exec_cb(tb, &runCaller, CB_NO_REGS, null),
            .library => {
                const data: usize = @intCast((@as(u64, range) << 32) | (last - first));
                qemu_plugin_register_vcpu_tb_exec_cb(tb, &runLibrary, CB_NO_REGS, @ptrFromInt(data));
            },
        }
        first = last;
    }
}

/// Writes `prefix`, then the decimal numbers of `values`, space-separated, and a newline.
fn writeLine(prefix: []const u8, values: []const u64) void {
    var text: [128]u8 = undefined;
    var length: usize = 0;
    for (prefix) |c| {
        text[length] = c;
        length += 1;
    }
    for (values) |value| {
        text[length] = ' ';
        length += 1;
        var digits: [20]u8 = undefined;
        var i: usize = digits.len;
        var rest = value;
        while (true) {
            i -= 1;
            digits[i] = @intCast('0' + rest % 10);
            rest /= 10;
            if (rest == 0) break;
        }
        for (digits[i..]) |c| {
            text[length] = c;
            length += 1;
        }
    }
    text[length] = '\n';
    text[length + 1] = 0;
    qemu_plugin_outs(@ptrCast(&text));
}

fn onExit(_: u64, _: ?*anyopaque) callconv(.c) void {
    writeLine("INSNS", &.{executed});
    if (range_count == 0) return;
    for (counts[0..range_count], 0..) |count, index| {
        if (count != 0) writeLine("RANGE", &.{ index, count });
    }
    writeLine("OUTSIDE", &.{counts[range_count]});
    for (0..range_count + 1) |index| {
        if (called[index] != 0) writeLine("CALLED", &.{ index, called[index] });
        if (in_kernels[index] != 0) writeLine("INKERNELS", &.{ index, in_kernels[index] });
    }
}

fn hexDigit(c: u8) ?u64 {
    return switch (c) {
        '0'...'9' => c - '0',
        'a'...'f' => c - 'a' + 10,
        'A'...'F' => c - 'A' + 10,
        else => null,
    };
}

/// Reads `S-E:S-E:…`; false (and no ranges) unless it is well formed, sorted and disjoint.
fn parseRanges(text: [*:0]const u8) bool {
    var i: usize = 0;
    var count: usize = 0;
    while (text[i] != 0) {
        if (count == MAX_RANGES) return false;
        var bounds: [2]u64 = .{ 0, 0 };
        for (&bounds, 0..) |*bound, which| {
            const digits_start = i;
            while (hexDigit(text[i])) |digit| : (i += 1) bound.* = bound.* * 16 + digit;
            if (i == digits_start) return false;
            const separator: u8 = if (which == 0) '-' else ':';
            if (text[i] == separator) {
                i += 1;
            } else if (which == 0 or text[i] != 0) {
                return false;
            }
        }
        if (bounds[0] >= bounds[1] or (count > 0 and bounds[0] < ends[count - 1])) return false;
        starts[count] = bounds[0];
        ends[count] = bounds[1];
        count += 1;
    }
    range_count = count;
    return true;
}

/// Marks the ranges `I:J:…` (decimal indexes below `range_count`) as `kind`; false unless well formed.
fn parseKinds(text: [*:0]const u8, kind: Kind) bool {
    var i: usize = 0;
    while (text[i] != 0) {
        var index: usize = 0;
        const digits_start = i;
        while (text[i] >= '0' and text[i] <= '9') : (i += 1) index = index * 10 + (text[i] - '0');
        if (i == digits_start or index >= range_count) return false;
        if (text[i] == ':') {
            i += 1;
        } else if (text[i] != 0) {
            return false;
        }
        kinds[index] = kind;
    }
    return true;
}

/// The rest of `argument` after `key=`, or null.
fn valueOf(argument: [*:0]const u8, key: []const u8) ?[*:0]const u8 {
    for (key, 0..) |c, i| {
        if (argument[i] != c) return null;
    }
    return if (argument[key.len] == '=') argument + key.len + 1 else null;
}

export fn qemu_plugin_install(id: u64, _: *const anyopaque, argc: c_int, argv: [*]const [*:0]const u8) c_int {
    // ranges first: the kinds name ranges by index
    for (argv[0..@intCast(argc)]) |argument| {
        if (valueOf(argument, "ranges")) |text| {
            if (!parseRanges(text)) {
                qemu_plugin_outs("zant insn plugin: ranges must be S-E:S-E:... in hex, sorted and disjoint\n");
                return -1;
            }
        } else if (valueOf(argument, "kernels") == null and valueOf(argument, "callers") == null) {
            qemu_plugin_outs("zant insn plugin: unknown argument (expected ranges=, kernels=, callers=)\n");
            return -1;
        }
    }
    for (argv[0..@intCast(argc)]) |argument| {
        const kernels_ok = if (valueOf(argument, "kernels")) |text| parseKinds(text, .kernel) else true;
        const callers_ok = if (valueOf(argument, "callers")) |text| parseKinds(text, .caller) else true;
        if (!kernels_ok or !callers_ok) {
            qemu_plugin_outs("zant insn plugin: kernels= and callers= must be I:J:... range indexes\n");
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, &onTranslate);
    qemu_plugin_register_atexit_cb(id, &onExit, null);
    return 0;
}
