"""The timing model itself (`zant.backend.timing`, the plugin's `blocks=1` and flash model): small
firmware images, one instruction class (or a small mix) each, run under QEMU; each test's expected
cycles are worked out by hand below from the tables of the core's technical reference manual, so
a change of the model's figures or rules fails here.

Each image's `bench` function holds the sequence and ends with `bx lr` (a taken branch: 1 + P).
P, the pipeline refill, is 2 in the model (the TRMs: 1 to 3). The Cortex-M4's figures are from
its TRM (DDI 0439B): Table 3-1 (the instruction set summary), 3.3.2 (load/store timings) and
Table 7-1 (the FPU's instructions)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from zant.backend.boards import BOARDS, FlashTiming
from zant.backend.elf import function_symbols
from zant.backend.firmware import build_firmware, linker_script, qemu_missing, timed_run
from zant.backend.timing import CORES, CORTEX_M4, cycles_by_range, decode

P = 2  # the model's pipeline refill
RETURN = 1 + P  # bx lr, taken (M4 Table 3-1: BX 1 + P)


def _image(tmp_path: Path, body: str, board) -> Path:
    """An image whose reset code switches the FPU on (where there is one), calls `bench` and exits
    through semihosting; `bench` runs `body`. A 512-byte table in flash, `table`, is there to load."""
    name = "timing"
    fpu = board.fpu
    lines = "\n".join(f"        \\\\{line.strip()}" for line in body.strip().splitlines() if line.strip())
    enable_fpu = (
        "        \\\\ldr r0, =0xE000ED88\n        \\\\ldr r1, [r0]\n        \\\\orr r1, r1, #0xF00000\n"
        "        \\\\str r1, [r0]\n        \\\\dsb\n        \\\\isb\n"
    ) if fpu else ""
    source = f"""
extern var __stack_top: u8;
export const table: [128]u32 align(32) linksection(".rodata") = blk: {{
    var words: [128]u32 = undefined;
    for (&words, 0..) |*w, i| w.* = @intCast(i);
    break :blk words;
}};
export const {name}_vectors linksection(".vectors") = [_]*const anyopaque{{ @ptrCast(&__stack_top), @ptrCast(&{name}_reset) }};
export fn {name}_reset() callconv(.naked) noreturn {{
    asm volatile (
{enable_fpu}        \\\\bl bench
        \\\\movs r0, #0x18
        \\\\ldr r1, =0x20026
        \\\\bkpt #0xab
        \\\\b .
        \\\\.ltorg
    );
}}
export fn bench() align(8) callconv(.naked) void {{
    asm volatile (
{lines}
        \\\\bx lr
    );
}}
"""
    folder = tmp_path / board.name
    folder.mkdir(exist_ok=True)
    root = folder / f"{name}.firmware.zig"
    root.write_text(source, encoding="utf-8")
    (folder / f"{name}.ld").write_text(linker_script(name, board), encoding="utf-8")
    return build_firmware(root, name, board, "ReleaseFast")


def _bench(tmp_path: Path, body: str, board_name: str = "mps2-an386", board=None):
    """Cycles of `bench` (its range's, `cycles_by_range`) and its blocks."""
    board = board or BOARDS[board_name]
    missing = qemu_missing(board)
    if missing:
        pytest.skip(missing)
    elf = _image(tmp_path, body, board)
    symbol = next(s for s in function_symbols(elf) if s.name == "bench")
    _, blocks, _ = timed_run(board, elf, 1)
    ours = [b for b in blocks if symbol.address <= b.start < symbol.address + symbol.size]
    cycles = cycles_by_range(blocks, CORES[board.target], [symbol.address], [symbol.address + symbol.size])[0]
    return cycles, ours


@pytest.mark.parametrize(
    "body, expected, how",
    [
        ("adds r0, #1\n" * 8, 8 + RETURN, "Table 3-1: ADD 1, eight of them"),
        ("smlad r0, r1, r2, r0\n" * 4, 4 + RETURN, "Table 3-1: SMLAD 1 (two MACs a cycle)"),
        ("mul r0, r1, r2\numull r3, r4, r1, r2\nmla r0, r1, r2, r0", 3 + RETURN, "Table 3-1: MUL, UMULL, MLA 1"),
        ("sdiv r0, r1, r2", 7 + RETURN, "Table 3-1: SDIV 2-12, the model assumes 7"),
        ("sub r0, sp, #64\nldr r1, [r0]\nldr r2, [r0, #4]\nldr r3, [r0, #8]\nldr r4, [r0, #12]", 1 + (2 + 1) + 1 + 1 + 1 + RETURN,
         "3.3.2: LDR 2, then each LDR after a load pipelines (1); the first one waits a cycle for its "
         "address (mov computed r0: no forwarding path)"),
        ("sub r0, sp, #64\nnop\nldr r0, [r0]\nldr r0, [r0]\nldr r0, [r0]", 1 + 1 + 2 + 2 + 2 + RETURN,
         "a load-use chain: each address is the loaded register, so nothing pipelines: 2 each"),
        ("sub r0, sp, #64\nnop\nldr r1, [r0]\nstr r1, [r0, r2]\nstr r1, [r0, #4]", 1 + 1 + 2 + 1 + 1 + RETURN,
         "3.3.2: STR register offset 2 (Table 3-1) but 1 after a load (pipelined); STR immediate always 1"),
        ("sub r0, sp, #64\nnop\nstr r1, [r0, r2]\nnop", 1 + 1 + 2 + 1 + RETURN, "Table 3-1: STR register offset 2"),
        ("push {r4, r5, r6, r7}\npop {r4, r5, r6, r7}", 5 + 5 + RETURN, "Table 3-1: PUSH, POP 1 + N, N = 4"),
        ("sub r0, sp, #64\nnop\nldm r0, {r1, r2, r3}\nstrd r1, r2, [r0]", 1 + 1 + 4 + 3 + RETURN,
         "Table 3-1: LDM 1 + N (N = 3), STRD 1 + N (N = 2)"),
        ("vfma.f32 s0, s1, s2\n" * 4, 4 * 3 + RETURN, "Table 7-1: VFMA 3, a dependent chain of four"),
        ("vadd.f32 s0, s1, s2\nvmul.f32 s3, s0, s2\nvmov r0, s3", 3 + RETURN, "Table 7-1: VADD, VMUL, VMOV 1"),
        ("sub r0, sp, #64\nnop\nvldr s0, [r0]\nvstr s0, [r0, #4]", 1 + 1 + 2 + 2 + RETURN, "Table 7-1: VLDR, VSTR 2"),
        ("vdiv.f32 s0, s1, s2\nadds r0, #1\nadds r1, #1\nadds r2, #1\nvadd.f32 s3, s0, s1",
         14 + 1 + RETURN, "Table 7-1: VDIV 14; its note: integer instructions after it complete out of order "
         "(the three ADDs hide in its cycles), the VADD waits"),
    ],
)
def test_cortex_m4_sequences(tmp_path, body, expected, how):
    cycles, _ = _bench(tmp_path, body)
    assert cycles == expected, how


def test_taken_branch_loop(tmp_path):
    """A loop of ten: the backward BNE is taken nine times (1 + P), not taken once (1)."""
    body = """
    sub r1, sp, #64
    movs r3, #10
    1:
    ldr r0, [r1]
    ldr r2, [r1, #4]
    subs r3, #1
    bne 1b
    """
    cycles, blocks = _bench(tmp_path, body)
    # mov 1, movs 1; per iteration LDR 2 (after the mov's block: no pairing across blocks), the
    # second pipelined 1, SUBS 1, BNE; 9 taken (3), 1 not taken (1); then BX LR
    assert cycles == 1 + 1 + 10 * (2 + 1 + 1) + 9 * (1 + P) + 1 + RETURN
    loop = [b for b in blocks if b.insns[-1].base == "b" and b.insns[-1].conditional]
    assert sum(b.runs for b in loop) == 10 and sum(b.runs - b.fallthrough for b in loop) == 9


def test_instruction_classes_of_the_disassembly():
    """The decoder sees what the rules need: conditions, written and address registers, lists."""
    bne = decode(0, 2, "bne #0x100")
    assert (bne.cls, bne.base, bne.conditional) == ("branch", "b", True)
    assert decode(0, 2, "bls #0x100").base == "b"  # not "bl" + s
    assert decode(0, 2, "bl #0x100").conditional is False
    adds = decode(0, 2, "adds r0, #1")
    assert (adds.cls, adds.writes) == ("alu", frozenset({"r0"}))
    load = decode(0, 4, "ldr.w r2, [r1, r3, lsl #2]")
    assert (load.cls, load.writes, load.address_regs) == ("load", frozenset({"r2"}), frozenset({"r1", "r3"}))
    pop = decode(0, 2, "pop {r4, r5, r7, pc}")
    assert (pop.cls, pop.list_count, pop.writes_pc) == ("load_multiple", 4, True)
    vpush = decode(0, 4, "vpush {d8, d9}")
    assert (vpush.cls, vpush.list_count) == ("fp_store_multiple", 4)
    assert decode(0, 4, "vfma.f32 s0, s1, s2").cls == "fp_fma"
    assert decode(0, 4, "movseq r0, #1").conditional
    assert CORTEX_M4.table["fp_div"].source.startswith("Cortex-M4 TRM")


def test_every_row_names_its_source():
    for core in CORES.values():
        for cls, row in [*core.table.items(), *core.rules.items(), ("refill", core.refill)]:
            assert row.source and row.cycles >= 0, (core.name, cls)


def test_cortex_m0plus_branches_and_loads(tmp_path):
    """Cortex-M0+ TRM Table 3-1: LDR, STR 2; a taken branch 2; BX 2."""
    body = "sub sp, #16\nmov r0, sp\nldr r1, [r0]\nstr r1, [r0]\nldr r2, [r0]\nb 1f\n1:\nadd sp, #16"
    cycles, _ = _bench(tmp_path, body, "microbit")
    # SUB, MOV 1; LDR, STR, LDR 2 (no pipelining on the two-stage core); B taken 2; ADD 1; BX 2
    assert cycles == 1 + 1 + 2 + 2 + 2 + 2 + 1 + 2


# -- the board's flash ------------------------------------------------------------------------------

L4R5 = BOARDS["nucleo-l4r5zi"]
WAIT = L4R5.flash_timing.wait_states


def test_flash_loads_through_the_data_cache(tmp_path):
    """Loads of 128 B of constants in flash: every 64-bit word read the first time waits W = 5
    cycles (RM0432 Table 12 at 120 MHz); the data cache's 8 lines of 32 B hold them (and the
    literal pool's line), so a second pass waits nothing."""
    body = """
    ldr r0, =table
    movs r3, #32
    1:
    ldr r1, [r0], #4
    subs r3, #1
    bne 1b
    ldr r0, =table
    movs r3, #32
    2:
    ldr r1, [r0], #4
    subs r3, #1
    bne 2b
    b 3f
    .ltorg
    3:
    """
    _, blocks = _bench(tmp_path, body, board=L4R5)
    # the literal pool's word (`ldr r0, =table`, twice: one miss) and 16 words of 8 B once each;
    # the second pass all hits
    assert sum(b.load_stall for b in blocks) == (1 + 16) * WAIT
    second = [b for b in blocks if b.insns[-1].text.startswith("bne") and b.runs == 31]
    assert len(second) == 2 and min(b.load_stall for b in second) == 0


def test_flash_fetches_through_the_instruction_cache(tmp_path):
    """A loop from flash waits for its instruction words the first time round only (the ART's 1 KB
    instruction cache keeps them); straight-line code fetched word after word is prefetched: a
    word waits W less one cycle per instruction of the word before it (four 16-bit NOPs)."""
    body = "movs r3, #100\n1:\nsubs r3, #1\nbne 1b\nb 2f\n.space 16\n.p2align 3\n2:\n" + "adds r0, #1\n" * 64
    _, blocks = _bench(tmp_path, body, board=L4R5)
    loop = next(b for b in blocks if b.runs >= 99)
    assert loop.fetch_stall <= 2 * WAIT  # on its first run only (its one or two words)
    straight = next(b for b in blocks if len(b.insns) >= 64)
    assert straight.start % 8 == 0 and straight.runs == 1
    # 16 words of four 16-bit ADDs: the first (a branch away) waits W, the others W - 4
    assert straight.fetch_stall == WAIT + 15 * (WAIT - 4)


def test_no_flash_timing_no_stalls(tmp_path):
    """A board without wait states (the MPS2 machines) records no stall."""
    body = "ldr r0, =table\nldr r1, [r0]\nb 1f\n.ltorg\n1:"
    _, blocks = _bench(tmp_path, body, board=replace(L4R5, flash_timing=FlashTiming()))
    assert all(b.fetch_stall == 0 and b.load_stall == 0 for b in blocks)


def test_riscv_disassembly_as_qemu_prints_it():
    """QEMU's RISC-V disassembler prints the encoding first: the class is read after it."""
    from zant.backend.timing import decode_riscv

    assert decode_riscv(0, 4, "0182a283          lw                      t0,24(t0)").cls == "load"
    taken = decode_riscv(0, 4, "fe0718e3          bnez                    a4,-16")
    assert (taken.cls, taken.conditional) == ("branch", True)
    jump = decode_riscv(0, 4, "00028067          jr                      t0")
    assert (jump.cls, jump.conditional) == ("branch", False)
    assert decode_riscv(0, 4, "02828613          addi                    a2,t0,40").cls == "alu"
