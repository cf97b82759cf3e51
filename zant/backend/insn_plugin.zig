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
//!
//! With `blocks=1` it records what a timing model needs (`zant.backend.timing` turns it into
//! cycles): for each translated block, `BLOCK <start> <end> <runs> <fallthrough> <fetch stall>
//! <load stall>` (hexadecimal addresses; `fallthrough`: the runs after which the next block run
//! began at `end`, so a block ending in a branch fell through that often and branched the rest),
//! then `INSN <address> <size> <disassembly>` for each of its instructions. A block translated
//! twice is printed twice (the reader adds them up).
//!
//! `flash=S-E`, `wait=W`, `prefetch=0|1`, `icache=L` and `dcache=L` (with `blocks=1`) model a
//! part's flash: each 64-bit flash word an instruction fetch or a load reads costs `W` wait
//! cycles unless it is in the instruction (fetches) or data (loads) cache of `L` lines of four
//! words each, least recently used line replaced, a word cached once it was read (STM32's ART
//! accelerator). With prefetch on, a fetch of the word that follows the one fetched last was
//! started while that one's instructions ran: it waits `W` less one cycle per instruction of
//! that word. The stall cycles are the block's `fetch stall` and `load stall`.

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
extern fn qemu_plugin_insn_size(insn: *const Insn) usize;
extern fn qemu_plugin_insn_disas(insn: *const Insn) ?[*:0]u8;
const MemCallback = *const fn (vcpu: c_uint, info: u32, address: u64, data: ?*anyopaque) callconv(.c) void;
extern fn qemu_plugin_register_vcpu_mem_cb(insn: *Insn, cb: MemCallback, flags: c_int, rw: c_int, data: ?*anyopaque) void;
extern fn qemu_plugin_mem_is_store(info: u32) bool;
/// Reads and writes: QEMU 7.2 calls a callback registered for reads only (1) on almost no load, so
/// the callback tells them apart itself.
const MEM_READ_WRITE: c_int = 3;

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
    if (record_blocks) recordBlock(tb);
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

// -- blocks=1: what the timing model reads --------------------------------------------------------

var record_blocks = false;

const Block = struct {
    start: u64,
    end: u64,
    first_insn: usize, // its instructions: insn_addresses[first_insn..][0..insns]
    insns: usize,
    first_word: usize, // instructions starting in each 8-byte word it spans: word_insns[first_word..]
    words: usize,
    runs: u64 = 0,
    fallthrough: u64 = 0,
    fetch_stall: u64 = 0,
    load_stall: u64 = 0,
};

const MAX_BLOCKS = 1 << 20;
const MAX_INSNS = 1 << 22;
var blocks: [MAX_BLOCKS]Block = undefined;
var block_count: usize = 0;
var insn_addresses: [MAX_INSNS]u64 = undefined;
var insn_sizes: [MAX_INSNS]u8 = undefined;
var insn_text: [MAX_INSNS]?[*:0]u8 = undefined;
var insn_count: usize = 0;
var word_insns: [MAX_INSNS]u8 = undefined;
var word_count: usize = 0;
/// Set when a table filled up: the report says so instead of printing a partial record.
var overflowed = false;
/// The block that ran last (index + 1; 0: none yet).
var previous_block: usize = 0;

// The flash model (flash=, wait=, prefetch=, icache=, dcache=).
var flash_start: u64 = 0;
var flash_end: u64 = 0;
var wait_states: u64 = 0;
var prefetch = false;

const MAX_LINES = 256;
const WORDS_PER_LINE = 4;
const LINE_BYTES = 8 * WORDS_PER_LINE;

/// A fully associative cache of `lines` lines, least recently used replaced, a word valid once read.
const Cache = struct {
    lines: usize = 0,
    tags: [MAX_LINES]u64 = @splat(0),
    valid: [MAX_LINES]u8 = @splat(0), // one bit per word
    used: [MAX_LINES]u64 = @splat(0), // when each line was last used
    clock: u64 = 0,

    /// Whether the 8-byte `word` (an address / 8) was cached; it is afterwards.
    fn read(self: *Cache, word: u64) bool {
        const tag = word / WORDS_PER_LINE;
        const bit: u8 = @as(u8, 1) << @intCast(word % WORDS_PER_LINE);
        self.clock += 1;
        var oldest: usize = 0;
        for (0..self.lines) |i| {
            if (self.valid[i] != 0 and self.tags[i] == tag) {
                self.used[i] = self.clock;
                const hit = self.valid[i] & bit != 0;
                self.valid[i] |= bit;
                return hit;
            }
            if (self.used[i] < self.used[oldest]) oldest = i;
        }
        self.tags[oldest] = tag;
        self.valid[oldest] = bit;
        self.used[oldest] = self.clock;
        return false;
    }
};

var icache: Cache = .{};
var dcache: Cache = .{};
/// The flash word fetched last (+1; 0: none) and how many instructions start in it.
var last_fetched: u64 = 0;
var last_fetched_insns: u64 = 0;

fn inFlash(address: u64) bool {
    return address >= flash_start and address < flash_end;
}

/// The stall of fetching `block`'s instruction words from flash through the instruction cache.
fn fetchStall(block: *const Block) u64 {
    var stall: u64 = 0;
    const first_word = block.start / 8;
    for (0..block.words) |i| {
        const word = first_word + i;
        const insns: u64 = word_insns[block.first_word + i];
        if (!icache.read(word)) {
            if (prefetch and last_fetched == word) { // word == the last fetched + 1
                stall += wait_states -| last_fetched_insns;
            } else {
                stall += wait_states;
            }
        }
        last_fetched = word + 1;
        last_fetched_insns = insns;
    }
    return stall;
}

fn runBlock(_: c_uint, data: ?*anyopaque) callconv(.c) void {
    const index = @intFromPtr(data) - 1;
    const block = &blocks[index];
    block.runs += 1;
    if (previous_block != 0 and blocks[previous_block - 1].end == block.start) blocks[previous_block - 1].fallthrough += 1;
    previous_block = index + 1;
    if (wait_states != 0 and inFlash(block.start)) block.fetch_stall += fetchStall(block);
}

fn loadFromFlash(_: c_uint, info: u32, address: u64, data: ?*anyopaque) callconv(.c) void {
    if (qemu_plugin_mem_is_store(info) or !inFlash(address)) return;
    if (!dcache.read(address / 8)) blocks[@intFromPtr(data) - 1].load_stall += wait_states;
}

fn recordBlock(tb: *Tb) void {
    const n = qemu_plugin_tb_n_insns(tb);
    if (n == 0) return;
    const first = qemu_plugin_tb_get_insn(tb, 0);
    const last = qemu_plugin_tb_get_insn(tb, n - 1);
    const start = qemu_plugin_insn_vaddr(first);
    const end = qemu_plugin_insn_vaddr(last) + qemu_plugin_insn_size(last);
    const words: usize = @intCast((end + 7) / 8 - start / 8);
    if (block_count == MAX_BLOCKS or insn_count + n > MAX_INSNS or word_count + words > MAX_INSNS) {
        overflowed = true;
        return;
    }
    const index = block_count;
    blocks[index] = .{
        .start = start, .end = end, .first_insn = insn_count, .insns = n,
        .first_word = word_count, .words = words,
    };
    @memset(word_insns[word_count..][0..words], 0);
    for (0..n) |i| {
        const insn = qemu_plugin_tb_get_insn(tb, i);
        const address = qemu_plugin_insn_vaddr(insn);
        insn_addresses[insn_count + i] = address;
        insn_sizes[insn_count + i] = @intCast(qemu_plugin_insn_size(insn));
        insn_text[insn_count + i] = qemu_plugin_insn_disas(insn);
        word_insns[word_count + @as(usize, @intCast(address / 8 - start / 8))] +|= 1;
        if (wait_states != 0) {
            qemu_plugin_register_vcpu_mem_cb(insn, &loadFromFlash, CB_NO_REGS, MEM_READ_WRITE, @ptrFromInt(index + 1));
        }
    }
    insn_count += n;
    word_count += words;
    block_count += 1;
    qemu_plugin_register_vcpu_tb_exec_cb(tb, &runBlock, CB_NO_REGS, @ptrFromInt(index + 1));
}

fn writeHexNumber(text: []u8, length: *usize, value: u64) void {
    const hex = "0123456789abcdef";
    var digits: [16]u8 = undefined;
    var i: usize = digits.len;
    var rest = value;
    while (true) {
        i -= 1;
        digits[i] = hex[@intCast(rest & 15)];
        rest >>= 4;
        if (rest == 0) break;
    }
    for (digits[i..]) |c| {
        text[length.*] = c;
        length.* += 1;
    }
}

fn writeBlocks() void {
    if (overflowed) {
        qemu_plugin_outs("BLOCKS_OVERFLOW\n");
        return;
    }
    var text: [512]u8 = undefined;
    for (blocks[0..block_count]) |block| {
        if (block.runs == 0) continue;
        var length: usize = 0;
        for ("BLOCK ") |c| {
            text[length] = c;
            length += 1;
        }
        writeHexNumber(&text, &length, block.start);
        text[length] = ' ';
        length += 1;
        writeHexNumber(&text, &length, block.end);
        text[length] = 0;
        qemu_plugin_outs(@ptrCast(&text));
        writeLine("", &.{ block.runs, block.fallthrough, block.fetch_stall, block.load_stall });
        for (block.first_insn..block.first_insn + block.insns) |i| {
            length = 0;
            for ("INSN ") |c| {
                text[length] = c;
                length += 1;
            }
            writeHexNumber(&text, &length, insn_addresses[i]);
            text[length] = ' ';
            text[length + 1] = '0' + insn_sizes[i];
            text[length + 2] = ' ';
            length += 3;
            if (insn_text[i]) |disassembly| {
                var j: usize = 0;
                while (disassembly[j] != 0 and length < text.len - 2) : (j += 1) {
                    // one line per instruction whatever the disassembler printed
                    text[length] = if (disassembly[j] == '\n') ' ' else disassembly[j];
                    length += 1;
                }
            } else {
                for ("?") |c| {
                    text[length] = c;
                    length += 1;
                }
            }
            text[length] = '\n';
            text[length + 1] = 0;
            qemu_plugin_outs(@ptrCast(&text));
        }
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
    if (record_blocks) writeBlocks();
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

/// Reads one hexadecimal range `S-E` at `text[i.*]` and the `:` after it (or the end); null
/// unless well formed with S < E.
fn parseRange(text: [*:0]const u8, i: *usize) ?[2]u64 {
    var bounds: [2]u64 = .{ 0, 0 };
    for (&bounds, 0..) |*bound, which| {
        const digits_start = i.*;
        while (hexDigit(text[i.*])) |digit| : (i.* += 1) bound.* = bound.* * 16 + digit;
        if (i.* == digits_start) return null;
        const separator: u8 = if (which == 0) '-' else ':';
        if (text[i.*] == separator) {
            i.* += 1;
        } else if (which == 0 or text[i.*] != 0) {
            return null;
        }
    }
    return if (bounds[0] < bounds[1]) bounds else null;
}

/// Reads `S-E:S-E:…`; false (and no ranges) unless it is well formed, sorted and disjoint.
fn parseRanges(text: [*:0]const u8) bool {
    var i: usize = 0;
    var count: usize = 0;
    while (text[i] != 0) {
        if (count == MAX_RANGES) return false;
        const bounds = parseRange(text, &i) orelse return false;
        if (count > 0 and bounds[0] < ends[count - 1]) return false;
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

/// A decimal number, or null unless `text` is one (and at most `limit`).
fn parseDecimal(text: [*:0]const u8, limit: u64) ?u64 {
    var value: u64 = 0;
    var i: usize = 0;
    while (text[i] >= '0' and text[i] <= '9') : (i += 1) {
        value = value * 10 + (text[i] - '0');
        if (value > limit) return null;
    }
    return if (i == 0 or text[i] != 0) null else value;
}

/// Reads the flash model's and `blocks=` arguments; false unless `argument` is one, well formed.
fn parseTiming(argument: [*:0]const u8) bool {
    if (valueOf(argument, "blocks")) |text| {
        const on = parseDecimal(text, 1) orelse return false;
        record_blocks = on == 1;
    } else if (valueOf(argument, "flash")) |text| {
        var i: usize = 0;
        const bounds = parseRange(text, &i) orelse return false;
        if (text[i] != 0) return false; // one range
        flash_start = bounds[0];
        flash_end = bounds[1];
    } else if (valueOf(argument, "wait")) |text| {
        wait_states = parseDecimal(text, 64) orelse return false;
    } else if (valueOf(argument, "prefetch")) |text| {
        prefetch = (parseDecimal(text, 1) orelse return false) == 1;
    } else if (valueOf(argument, "icache")) |text| {
        icache.lines = parseDecimal(text, MAX_LINES) orelse return false;
    } else if (valueOf(argument, "dcache")) |text| {
        dcache.lines = parseDecimal(text, MAX_LINES) orelse return false;
    } else {
        return false;
    }
    return true;
}

export fn qemu_plugin_install(id: u64, _: *const anyopaque, argc: c_int, argv: [*]const [*:0]const u8) c_int {
    const arguments = argv[0..@intCast(argc)];
    for (arguments) |argument| {
        if (valueOf(argument, "ranges") != null or valueOf(argument, "kernels") != null or valueOf(argument, "callers") != null) continue;
        if (!parseTiming(argument)) {
            qemu_plugin_outs("zant insn plugin: unknown or malformed argument (expected ranges=, kernels=, callers=, blocks=0|1, flash=S-E, wait=N, prefetch=0|1, icache=LINES, dcache=LINES)\n");
            return -1;
        }
    }
    // ranges next: the kinds name ranges by index
    for (arguments) |argument| {
        if (valueOf(argument, "ranges")) |text| {
            if (!parseRanges(text)) {
                qemu_plugin_outs("zant insn plugin: ranges must be S-E:S-E:... in hex, sorted and disjoint\n");
                return -1;
            }
        }
    }
    for (arguments) |argument| {
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
