//! A QEMU TCG plugin that counts executed guest instructions and prints `INSNS <count>` at exit
//! (through `-d plugin`). Built by zant with the pinned Zig as a host shared library; the QEMU
//! binary that loads it provides the `qemu_plugin_*` functions (plugin API version 1).

const Tb = opaque {};
const TbTranslate = *const fn (id: u64, tb: *Tb) callconv(.c) void;
const AtExit = *const fn (id: u64, data: ?*anyopaque) callconv(.c) void;
const INLINE_ADD_U64: c_int = 0;

extern fn qemu_plugin_register_vcpu_tb_trans_cb(id: u64, cb: TbTranslate) void;
extern fn qemu_plugin_register_vcpu_tb_exec_inline(tb: *Tb, op: c_int, ptr: *anyopaque, imm: u64) void;
extern fn qemu_plugin_tb_n_insns(tb: *const Tb) usize;
extern fn qemu_plugin_register_atexit_cb(id: u64, cb: AtExit, data: ?*anyopaque) void;
extern fn qemu_plugin_outs(text: [*:0]const u8) void;

export const qemu_plugin_version: c_int = 1;

/// One counter: the firmware images run on a single vCPU.
var executed: u64 = 0;

/// Each translated block adds its instruction count to `executed` whenever it runs (inline, no call).
fn onTranslate(_: u64, tb: *Tb) callconv(.c) void {
    qemu_plugin_register_vcpu_tb_exec_inline(tb, INLINE_ADD_U64, &executed, qemu_plugin_tb_n_insns(tb));
}

fn onExit(_: u64, _: ?*anyopaque) callconv(.c) void {
    var text: [32]u8 = undefined;
    var i: usize = text.len - 2;
    text[text.len - 2] = '\n';
    text[text.len - 1] = 0;
    var rest = executed;
    while (true) {
        i -= 1;
        text[i] = @intCast('0' + rest % 10);
        rest /= 10;
        if (rest == 0) break;
    }
    const prefix = "INSNS ";
    i -= prefix.len;
    @memcpy(text[i..][0..prefix.len], prefix);
    qemu_plugin_outs(@ptrCast(&text[i]));
}

export fn qemu_plugin_install(id: u64, _: *const anyopaque, _: c_int, _: [*]const [*:0]const u8) c_int {
    qemu_plugin_register_vcpu_tb_trans_cb(id, &onTranslate);
    qemu_plugin_register_atexit_cb(id, &onExit, null);
    return 0;
}
