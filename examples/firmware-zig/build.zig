// A minimal Zig firmware for QEMU's mps2-an386 (Cortex-M4) around the digits model compiled by
// zant (`python -m ziglang build` here gives zig-out/bin/firmware.elf).
const std = @import("std");

pub fn build(b: *std.Build) void {
    // The core the model was compiled for (zant compile --target cortex-m4; its header states
    // it): Thumb, the hard float ABI, the Cortex-M4's single-precision FPU and DSP extension.
    const target = b.resolveTargetQuery(std.Target.Query.parse(.{
        .arch_os_abi = "thumb-freestanding-eabihf",
        .cpu_features = "cortex_m4+vfp4d16sp+dsp",
    }) catch unreachable);
    const optimize = b.option(std.builtin.OptimizeMode, "optimize", "The optimize mode (default fast)") orelse .fast;

    // The model's folder is a Zig package: its module `digits` is digits.h translated to Zig and
    // links the library, built from digits.zig for this target and optimize mode.
    const digits = b.dependency("digits", .{ .target = target, .optimize = optimize });

    const firmware = b.addExecutable(.{
        .name = "firmware.elf",
        .root_module = b.createModule(.{
            .root_source_file = b.path("main.zig"),
            .target = target,
            .optimize = optimize,
            .imports = &.{.{ .name = "digits", .module = digits.module("digits") }},
        }),
    });
    firmware.setLinkerScript(b.path("mps2-an386.ld"));
    firmware.entry = .{ .symbol_name = "reset" }; // the core starts from the vector table; ELF readers from here
    b.installArtifact(firmware);
}
