//! A minimal firmware around the digits model compiled by zant: one fixed 8x8 image in, the ten
//! class probabilities out, printed over semihosting (QEMU's console) as the bits of each float,
//! then the most likely class; the run ends with status 0, or 1 if the model returned an error.
const std = @import("std");
const digits = @import("digits");

extern var __data_start: u8;
extern var __data_end: u8;
extern const __data_load: u8;
extern var __bss_start: u8;
extern var __bss_end: u8;
extern const __stack_top: u8;

/// Initial stack pointer, reset, then NMI, HardFault, MemManage, BusFault and UsageFault.
export const vectors linksection(".vectors") = [_]*const anyopaque{
    @ptrCast(&__stack_top), @ptrCast(&reset), @ptrCast(&fault), @ptrCast(&fault),
    @ptrCast(&fault),       @ptrCast(&fault), @ptrCast(&fault),
};

fn fault() callconv(.c) noreturn {
    write("fault\n");
    exit(3);
}

/// The FPU on, .data copied from flash, .bss zeroed, the console opened, then main.
export fn reset() callconv(.c) noreturn {
    const cpacr: *volatile u32 = @ptrFromInt(0xE000_ED88);
    cpacr.* |= 0xF << 20; // full access to coprocessors 10 and 11: float code faults without it
    asm volatile ("dsb\nisb" ::: .{ .memory = true });
    const data_len = @intFromPtr(&__data_end) - @intFromPtr(&__data_start);
    @memcpy(@as([*]u8, @ptrCast(&__data_start))[0..data_len], @as([*]const u8, @ptrCast(&__data_load))[0..data_len]);
    const bss_len = @intFromPtr(&__bss_end) - @intFromPtr(&__bss_start);
    @memset(@as([*]u8, @ptrCast(&__bss_start))[0..bss_len], 0);
    openConsole();
    exit(main());
}

fn semihost(op: usize, arg: usize) usize {
    return asm volatile ("bkpt #0xab"
        : [ret] "={r0}" (-> usize),
        : [op] "{r0}" (op),
          [arg] "{r1}" (arg),
        : .{ .memory = true });
}

/// The console's semihosting handle: ":tt" opened for writing, as newlib does for stdout (QEMU
/// writes it to its standard output; SYS_WRITE0 would go to its standard error).
var console: usize = 0;

fn openConsole() void {
    const name = ":tt";
    const block = [3]usize{ @intFromPtr(name.ptr), 4, name.len }; // mode 4: "w"
    console = semihost(0x01, @intFromPtr(&block)); // SYS_OPEN
}

/// Writes `text` to QEMU's console.
fn write(text: []const u8) void {
    const block = [3]usize{ console, @intFromPtr(text.ptr), text.len };
    _ = semihost(0x05, @intFromPtr(&block)); // SYS_WRITE
}

fn exit(status: u32) noreturn {
    const block = [2]usize{ 0x20026, status }; // ADP_Stopped_ApplicationExit
    _ = semihost(0x20, @intFromPtr(&block)); // SYS_EXIT_EXTENDED: QEMU exits with `status`
    while (true) {}
}

pub const panic = std.debug.FullPanic(onPanic);
fn onPanic(message: []const u8, _: ?usize) noreturn {
    write("panic: ");
    write(message);
    write("\n");
    exit(2);
}

var image: [digits.digits_INPUT_0_SIZE]f32 = undefined;
var probabilities: [digits.digits_OUTPUT_0_SIZE]f32 = undefined;

fn main() u32 {
    for (&image, 0..) |*pixel, i| pixel.* = @as(f32, @floatFromInt(i * 7 % 17)) / 16.0; // exact
    var line: [64]u8 = undefined;
    const status = digits.digits_predict(&image, &probabilities);
    if (status != 0) {
        write(std.fmt.bufPrint(&line, "digits_predict returned {d}\n", .{status}) catch unreachable);
        return 1;
    }
    var best: usize = 0;
    for (probabilities, 0..) |p, i| {
        const bits: u32 = @bitCast(p);
        write(std.fmt.bufPrint(&line, "probabilities[{d}] = 0x{x:0>8}\n", .{ i, bits }) catch unreachable);
        if (p > probabilities[best]) best = i;
    }
    write(std.fmt.bufPrint(&line, "class {d}\n", .{best}) catch unreachable);
    return 0;
}
