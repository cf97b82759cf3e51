"""Cycles from an emulated run: each core's instruction timings as data, applied to what QEMU ran.

QEMU does not model time. The TCG plugin (`insn_plugin.zig`, `blocks=1`) records each translated
block's instructions (their disassembly), how often it ran, how often the next block began right
after it (its branch fell through), and, on a board with flash wait states, the cycles its
instruction fetches and flash loads waited (`Board.flash_timing`: STM32's ART accelerator
modelled as a small instruction cache and data cache of 64-bit flash words). This module turns
that into cycles with the timing table of the core:

* every instruction costs its class's cycles (`CoreTiming.table`, one row per class, each with
  the document it comes from);
* the dynamic effects that table rows alone do not give are rules of the core, each with its
  source (`CoreTiming.rules`): a taken branch costs the pipeline refill P that a fall-through
  does not, a load or store single right after a load single pipelines (one cycle less) unless
  its address uses the loaded register, a load or store whose address the preceding
  data-processing instruction computed waits a cycle, LDM/STM/PUSH/POP cost 1 + N, a VDIV's or
  VSQRT's 14 cycles overlap the integer instructions that follow it;
* what a board adds (flash wait states through the cache) comes from the plugin as stall cycles.

Stated approximations, where the documents give a range or nothing: P is 2 cycles (the TRMs: 1
to 3, by the target's alignment and width); SDIV/UDIV take 7 cycles (2 to 12 by the operands'
leading zeros, which the plugin does not see); the pairing rules apply within a translated block
only (the first instruction of a block pays its full cost); a conditional instruction that fails
its condition costs what it would executed. The Cortex-M33's TRM publishes no timings: it takes
the Cortex-M4's table. The Cortex-M7 (dual issue) and the Cortex-M55 (Helium beats) are stated
approximations on top of it. `riscv32` is a generic in-order RV32 (QEMU's virt board has no real
part behind it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from zant.errors import ZantError

M4_TRM = "Cortex-M4 TRM (DDI 0439B) Table 3-1"
M4_TRM_LS = "Cortex-M4 TRM (DDI 0439B) 3.3.2 Load/store timings"
M4_FPU = "Cortex-M4 TRM (DDI 0439B) Table 7-1 FPU instruction set"
M3_TRM = "Cortex-M3 TRM (DDI 0337I) Table 18-1"
M0P_TRM = "Cortex-M0+ TRM (DDI 0484C) Table 3-1"


@dataclass(frozen=True)
class Row:
    """One instruction class of a core: its cycles (without the rules' effects) and where that
    figure comes from."""

    cycles: int
    source: str


@dataclass(frozen=True)
class CoreTiming:
    """A core's timing model: a cycle count per instruction class, the branch refill, and which
    dynamic rules apply (each rule's value and source)."""

    name: str
    table: dict[str, Row]
    refill: Row  # P: added to a taken branch
    rules: dict[str, Row] = field(default_factory=dict)

    def cycles(self, cls: str) -> int:
        return self.table[cls].cycles


# -- instruction classes ----------------------------------------------------------------------------

_CLASSES: dict[str, tuple[str, ...]] = {
    "alu": (
        "mov", "mvn", "movw", "movt", "add", "addw", "adc", "adr", "sub", "subw", "sbc", "rsb", "neg",
        "and", "orr", "orn", "eor", "bic", "lsl", "lsr", "asr", "ror", "rrx", "cmp", "cmn", "tst",
        "teq", "clz", "rbit", "rev", "rev16", "revsh", "sxtb", "sxth", "uxtb", "uxth", "sxtab",
        "sxtah", "uxtab", "uxtah", "sxtb16", "uxtb16", "sxtab16", "uxtab16", "ubfx", "sbfx", "bfi",
        "bfc", "ssat", "usat", "ssat16", "usat16", "pkhbt", "pkhtb", "sel", "qadd", "qsub", "qdadd",
        "qdsub", "sadd8", "sadd16", "ssub8", "ssub16", "uadd8", "uadd16", "usub8", "usub16", "qadd8",
        "qadd16", "qsub8", "qsub16", "uqadd8", "uqadd16", "uqsub8", "uqsub16", "shadd8", "shadd16",
        "uhadd8", "uhadd16", "sasx", "ssax", "qasx", "qsax", "usad8", "usada8", "cpy", "nop", "yield",
        "mrs", "msr", "cpsid", "cpsie", "sev", "wfe", "wfi", "bkpt", "svc", "udf",
    ),
    "mul": (
        "mul", "mla", "mls", "smulbb", "smulbt", "smultb", "smultt", "smulwb", "smulwt", "smlabb",
        "smlabt", "smlatb", "smlatt", "smlawb", "smlawt", "smlad", "smladx", "smlsd", "smlsdx",
        "smuad", "smuadx", "smusd", "smusdx", "smmul", "smmulr", "smmla", "smmlar", "smmls", "smmlsr",
    ),
    "mul_long": ("umull", "smull", "umlal", "smlal", "umaal", "smlalbb", "smlalbt", "smlaltb",
                 "smlaltt", "smlald", "smlaldx", "smlsld", "smlsldx"),
    "div": ("sdiv", "udiv"),
    "load": ("ldr", "ldrb", "ldrh", "ldrsb", "ldrsh", "ldrt", "ldrbt", "ldrht", "ldrsbt", "ldrsht",
             "ldrex", "ldrexb", "ldrexh", "lda", "ldab", "ldah"),
    "load_double": ("ldrd",),
    "store": ("str", "strb", "strh", "strt", "strbt", "strht", "strex", "strexb", "strexh", "stl",
              "stlb", "stlh"),
    "store_double": ("strd",),
    "load_multiple": ("ldm", "ldmia", "ldmfd", "ldmdb", "ldmea", "pop"),
    "store_multiple": ("stm", "stmia", "stmea", "stmdb", "stmfd", "push"),
    "branch": ("b", "bl", "bx", "blx", "cbz", "cbnz"),
    "table_branch": ("tbb", "tbh"),
    "it": ("it", "itt", "ite", "ittt", "itte", "itet", "itee", "itttt", "ittte", "ittet", "ittee",
           "itett", "itete", "iteet", "iteee"),
    "barrier": ("dmb", "dsb", "isb"),
    # FPU (single precision, FPv4-SP)
    "fp_alu": ("vadd", "vsub", "vmul", "vnmul", "vabs", "vneg", "vcmp", "vcmpe", "vcvt", "vcvtr",
               "vcvta", "vcvtn", "vcvtp", "vcvtm", "vrinta", "vrintn", "vrintp", "vrintm", "vrintz",
               "vrintr", "vrintx", "vsel", "vmaxnm", "vminnm", "vcvtb", "vcvtt"),
    "fp_move": ("vmov", "vmrs"),
    "fp_move_pair": (),  # VMOV of two core registers to or from two S registers (decode)
    "fp_msr": ("vmsr",),
    "fp_mac": ("vmla", "vmls", "vnmla", "vnmls"),
    "fp_fma": ("vfma", "vfms", "vfnma", "vfnms"),
    "fp_div": ("vdiv", "vsqrt"),
    "fp_load": ("vldr",),
    "fp_store": ("vstr",),
    "fp_load_double": (),  # VLDR/VSTR of a D register (decode)
    "fp_store_double": (),
    "fp_load_multiple": ("vldm", "vldmia", "vldmdb", "vpop"),
    "fp_store_multiple": ("vstm", "vstmia", "vstmdb", "vpush"),
}
_CLASS_OF = {mnemonic: cls for cls, mnemonics in _CLASSES.items() for mnemonic in mnemonics}
_CONDITIONS = ("eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le", "al")

_MVE_PREFIXES = ("vld2", "vld4", "vst2", "vst4", "vldrb", "vldrh", "vldrw", "vldrd", "vstrb", "vstrh",
                 "vstrw", "vstrd", "vmlav", "vmladav", "vmlaldav", "vaddv", "vaddlv", "vctp", "vpst",
                 "vpt", "vdup", "vrmlaldavh", "vqdmulh", "vqrdmulh", "vrshl", "vqmovn", "vmovl", "vmovn",
                 "vshl", "vshr", "vmax", "vmin", "vcmp", "vand", "vorr", "veor", "vbic", "vmul", "vmla",
                 "vadd", "vsub", "vabs", "vneg", "vsel", "vpsel", "vrev", "vcvt", "vfma", "vmov", "vqadd",
                 "vqsub", "vhadd", "vhsub", "vrhadd", "vqshrn", "vqrshrn", "vshrn", "vrshrn", "vmull",
                 "vddup", "vidup", "vabd", "vclz", "vcls", "vmvn", "vqabs", "vqneg", "vbrsr", "vadc",
                 "vsbc", "vshlc", "vsli", "vsri", "vmaxv", "vminv", "vmaxav", "vminav", "vmaxa", "vmina",
                 "letp", "wls", "dls", "le", "wlstp", "dlstp", "lctp")


@dataclass(frozen=True)
class Insn:
    """One instruction as the plugin printed it, decoded as far as the timing rules need."""

    address: int
    size: int
    text: str
    cls: str
    base: str  # the mnemonic without condition, flag-setting suffix, width or data type
    conditional: bool  # a conditional branch (or any instruction in an IT block)
    writes: frozenset[str]  # registers it writes (core registers r0-r15 as rN, s/d registers)
    address_regs: frozenset[str]  # registers in its address ([...])
    list_count: int  # registers in its {...} list, in words (a D register is two)
    writes_pc: bool
    vector: bool  # an MVE (Helium) instruction operating on Q registers


_REG_ALIASES = {"sb": "r9", "sl": "r10", "fp": "r11", "ip": "r12", "sp": "r13", "lr": "r14", "pc": "r15"}
_REGISTER = re.compile(r"\b(r1[0-5]|r[0-9]|sb|sl|fp|ip|sp|lr|pc|[sdq][0-9]{1,2})\b")


def _registers(text: str) -> list[str]:
    return [_REG_ALIASES.get(r, r) for r in _REGISTER.findall(text)]


def _base(mnemonic: str) -> tuple[str, bool]:
    """The mnemonic's class key and whether it carries a condition (`bne` -> (`b`, True))."""
    stem = mnemonic.split(".")[0]
    if stem in _CLASS_OF:
        return stem, False
    if stem[-2:] in _CONDITIONS and stem[:-2] in _CLASS_OF:
        return stem[:-2], True
    if stem.endswith("s") and stem[:-1] in _CLASS_OF:
        return stem[:-1], False
    if stem[-2:] in _CONDITIONS and stem[:-2].endswith("s") and stem[:-3] in _CLASS_OF:
        return stem[:-3], True
    return stem, False


def decode(address: int, size: int, text: str) -> Insn:
    """Classify one instruction from its disassembly (capstone's, through QEMU)."""
    mnemonic, _, operands = text.strip().partition(" ")
    base, conditional = _base(mnemonic.lower())
    operands = operands.lower()
    vector = bool(re.search(r"\bq[0-7]\b", operands)) and (base.startswith("v") or base in _MVE_PREFIXES)
    if vector or (base in _MVE_PREFIXES and base not in _CLASS_OF):
        cls = "mve"
    else:
        cls = _CLASS_OF.get(base, "alu")
    regs = _registers(operands)
    if cls == "fp_move" and base == "vmov" and len(regs) == 4:
        cls = "fp_move_pair"
    elif cls in ("fp_load", "fp_store") and any(r.startswith("d") for r in regs):
        cls += "_double"
    listed = re.search(r"\{([^}]*)\}", operands)
    address_part = re.search(r"\[([^\]]*)\]", operands)
    list_regs = _registers(listed.group(1)) if listed else []
    list_count = sum(2 if r.startswith("d") else 1 for r in list_regs)
    writes: set[str] = set()
    if cls in ("load_multiple", "fp_load_multiple"):
        writes = set(list_regs)
    elif cls in ("mul_long", "load_double"):
        writes = set(regs[:2])
    elif cls not in ("store", "store_double", "store_multiple", "fp_store", "fp_store_double", "fp_store_multiple", "branch",
                     "table_branch", "it", "barrier") and base not in ("cmp", "cmn", "tst", "teq", "vcmp", "vcmpe"):
        writes = set(regs[:1])
    if cls == "branch" and base in ("bl", "blx"):
        writes = {"r14"}
    writes_pc = "r15" in writes and cls != "branch"
    if cls in ("load", "store", "fp_load", "fp_store", "fp_load_double", "fp_store_double", "load_double",
               "store_double", "mve") and address_part:
        address_regs = frozenset(_registers(address_part.group(1)))
    elif cls in ("load_multiple", "store_multiple", "fp_load_multiple", "fp_store_multiple"):
        address_regs = frozenset(regs[:1]) if base not in ("push", "pop", "vpush", "vpop") else frozenset({"r13"})
    else:
        address_regs = frozenset()
    return Insn(address, size, text, cls, base, conditional or base in ("cbz", "cbnz"),
                frozenset(writes), address_regs, list_count, writes_pc, vector or cls == "mve")


# -- the cores ---------------------------------------------------------------------------------------

def _m4_table() -> dict[str, Row]:
    return {
        "alu": Row(1, f"{M4_TRM}: MOV, ADD, logical, shift, compare, extend, bit field, saturate, DSP SIMD: 1"),
        "mul": Row(1, f"{M4_TRM}: MUL, MLA, MLS, SMLAxy, SMLAD, SMUAD, SMMLA: 1"),
        "mul_long": Row(1, f"{M4_TRM}: UMULL, SMULL, UMLAL, SMLAL, SMLALD: 1"),
        "div": Row(7, f"{M4_TRM}: SDIV, UDIV 2-12 (early termination on the operands): 7 assumed"),
        "load": Row(2, f"{M4_TRM}: LDR, LDRB, LDRH, LDRSB, LDRSH: 2"),
        "load_double": Row(3, f"{M4_TRM}: LDRD 1 + N, N = 2"),
        "store": Row(1, f"{M4_TRM_LS}: STR Rx,[Ry,#imm] is always one cycle (the data phase overlaps the next instruction)"),
        "store_double": Row(3, f"{M4_TRM}: STRD 1 + N, N = 2"),
        "load_multiple": Row(1, f"{M4_TRM}: LDM, POP 1 + N (N registers; + P with PC)"),
        "store_multiple": Row(1, f"{M4_TRM}: STM, PUSH 1 + N"),
        "branch": Row(1, f"{M4_TRM}: B, BL, BX, BLX, CBZ 1 + P taken, 1 not taken"),
        "table_branch": Row(2, f"{M4_TRM}: TBB, TBH 2 + P"),
        "it": Row(1, f"{M4_TRM}: IT 1"),
        "barrier": Row(1, f"{M4_TRM}: DMB, DSB 1 + B (B: 0 at least), ISB 1 + B (B: a refill)"),
        "fp_alu": Row(1, f"{M4_FPU}: VADD, VSUB, VMUL, VNMUL, VABS, VNEG, VCMP, VCVT: 1"),
        "fp_move": Row(1, f"{M4_FPU}: VMOV (one register), VMRS: 1"),
        "fp_move_pair": Row(2, f"{M4_FPU}: VMOV of two core registers to or from two S registers: 2"),
        "fp_msr": Row(2, f"{M4_FPU}: VMSR 2"),
        "fp_mac": Row(3, f"{M4_FPU}: VMLA, VMLS, VNMLA, VNMLS 3"),
        "fp_fma": Row(3, f"{M4_FPU}: VFMA, VFMS, VFNMA, VFNMS 3"),
        "fp_div": Row(14, f"{M4_FPU}: VDIV, VSQRT 14"),
        "fp_load": Row(2, f"{M4_FPU}: VLDR.32 2"),
        "fp_store": Row(2, f"{M4_FPU}: VSTR.32 2"),
        "fp_load_double": Row(3, f"{M4_FPU}: VLDR.64 3"),
        "fp_store_double": Row(3, f"{M4_FPU}: VSTR.64 3"),
        "fp_load_multiple": Row(1, f"{M4_FPU}: VLDM, VPOP 1 + N (N words)"),
        "fp_store_multiple": Row(1, f"{M4_FPU}: VSTM, VPUSH 1 + N (N words)"),
        "mve": Row(1, "no Helium on this core"),
    }


_M4_RULES = {
    "pipelined_load": Row(1, f"{M4_TRM_LS}: a load or store single after a load single, whose address does not use the loaded register, takes one cycle less"),
    "address_interlock": Row(1, f"{M4_TRM_LS}: a load or store whose address the preceding data-processing instruction computed stalls one cycle (no forwarding path)"),
    "fp_div_overlap": Row(13, f"{M4_FPU}, note: integer-only instructions after VDIV/VSQRT complete out of order, overlapping its cycles after the first"),
    "store_register_offset": Row(2, f"{M4_TRM}: STR Rd,[Rn,Rm] 2 (only the immediate form is always 1: {M4_TRM_LS})"),
    "isb_refill": Row(0, f"{M4_TRM}: ISB 1 + B, B at least a pipeline refill: P is added"),
}

_P = Row(2, "the TRMs' P, the pipeline refill of a taken branch: 1 to 3 by the target's alignment and width; 2 assumed")

CORTEX_M4 = CoreTiming("cortex-m4", _m4_table(), _P, _M4_RULES)

CORTEX_M33 = CoreTiming(
    "cortex-m33",
    {cls: Row(row.cycles, f"{row.source} (the Cortex-M33 TRM publishes no instruction timings: the M4's, a stated approximation)")
     for cls, row in _m4_table().items()},
    _P, _M4_RULES,
)

CORTEX_M7 = CoreTiming(
    "cortex-m7", _m4_table(), Row(1, "Cortex-M7: branch prediction hides most refills; 1 assumed (a stated approximation)"),
    {**_M4_RULES, "dual_issue": Row(1, "Cortex-M7 dual issue, a stated approximation: an ALU or multiply instruction right after another ALU instruction independent of it issues with it, costing 0")},
)

CORTEX_M55 = CoreTiming(
    "cortex-m55",
    {**_m4_table(), "mve": Row(2, "Cortex-M55: a 128-bit Helium instruction is 4 beats at 2 beats a cycle (dual-beat), a stated approximation")},
    _P,
    {**_M4_RULES, "beat_overlap": Row(1, "Cortex-M55: a Helium instruction overlaps the previous one when one is a load or store and the other is not (a stated approximation): one cycle less")},
)

CORTEX_M3 = CoreTiming(
    "cortex-m3",
    {
        **{cls: Row(row.cycles, row.source.replace(M4_TRM, M3_TRM).replace(M4_TRM_LS, "Cortex-M3 TRM (DDI 0337I) 18.3 Load/store timings"))
           for cls, row in _m4_table().items() if not cls.startswith("fp_")},
        "mul": Row(1, f"{M3_TRM}: MUL 1 (MLA, MLS: 2)"),
        "mul_long": Row(4, f"{M3_TRM}: UMULL, SMULL 3-5, UMLAL, SMLAL 4-7 (early termination): 4 assumed"),
    },
    _P, {k: v for k, v in _M4_RULES.items() if k != "fp_div_overlap"},
)

CORTEX_M0PLUS = CoreTiming(
    "cortex-m0plus",
    {
        "alu": Row(1, f"{M0P_TRM}: data processing 1"),
        "mul": Row(1, f"{M0P_TRM}: MULS 1 (the fast multiplier; 32 with the small one)"),
        "mul_long": Row(1, "not in ARMv6-M"), "div": Row(1, "not in ARMv6-M"),
        "load": Row(2, f"{M0P_TRM}: LDR, LDRB, LDRH, LDRSB, LDRSH 2"),
        "load_double": Row(2, "not in ARMv6-M"),
        "store": Row(2, f"{M0P_TRM}: STR, STRB, STRH 2"),
        "store_double": Row(2, "not in ARMv6-M"),
        "load_multiple": Row(1, f"{M0P_TRM}: LDM, POP 1 + N (POP with PC: 3 + N)"),
        "store_multiple": Row(1, f"{M0P_TRM}: STM, PUSH 1 + N"),
        "branch": Row(1, f"{M0P_TRM}: B<cond> 1 not taken, 2 taken; B 2; BL 3; BX, BLX 2"),
        "table_branch": Row(2, "not in ARMv6-M"), "it": Row(1, "not in ARMv6-M"),
        "barrier": Row(3, f"{M0P_TRM}: DMB, DSB, ISB 3"),
        **{cls: Row(1, "no FPU on this core") for cls in _CLASSES if cls.startswith("fp_")},
        "mve": Row(1, "no Helium on this core"),
    },
    Row(1, f"{M0P_TRM}: a taken branch 2 (1 + 1: the two-stage pipeline's refill)"),
    {"bl_extra": Row(1, f"{M0P_TRM}: BL 3 (one more than B)"), "pop_pc_extra": Row(1, f"{M0P_TRM}: POP with PC 3 + N")},
)

RISCV32 = CoreTiming(
    "riscv32",
    {**{cls: Row(1, "generic in-order RV32IMFC, a stated approximation: 1 per instruction") for cls in _CLASSES},
     "mve": Row(1, "-")},
    Row(2, "generic in-order RV32: a taken branch or jump 3 (a two-cycle refill), a stated approximation"),
    {"riscv_load": Row(1, "generic in-order RV32: a load 2 (one extra cycle), a stated approximation")},
)

CORES: dict[str, CoreTiming] = {
    c.name: c for c in (CORTEX_M0PLUS, CORTEX_M3, CORTEX_M4, CORTEX_M7, CORTEX_M33, CORTEX_M55, RISCV32)
}
"""The timing model of each MCU target, by `zant.targets.Target.timing`."""


# -- RISC-V classes ---------------------------------------------------------------------------------

_RV_BRANCHES = ("beq", "bne", "blt", "bge", "bltu", "bgeu", "beqz", "bnez", "blez", "bgez", "bltz", "bgtz",
                "bgt", "ble", "bgtu", "bleu", "j", "jal", "jalr", "jr", "ret", "call", "tail")
_RV_LOADS = ("lb", "lh", "lw", "lbu", "lhu", "flw", "fld", "c.lw", "c.lwsp", "c.flw", "c.flwsp")


def decode_riscv(address: int, size: int, text: str) -> Insn:
    """A RISC-V instruction from QEMU's own disassembly (`00000297   auipc t0,0`: its encoding in
    hex first, then the mnemonic)."""
    words = text.split()
    if words and len(words) > 1 and re.fullmatch(r"[0-9a-f]{4,8}", words[0]):
        words = words[1:]
    mnemonic = words[0].lower() if words else ""
    mnemonic = mnemonic.removeprefix("c.")
    if mnemonic in _RV_BRANCHES:
        cls = "branch"
    elif mnemonic in _RV_LOADS or mnemonic in ("lwsp", "flwsp"):
        cls = "load"
    else:
        cls = "alu"
    # a jump always branches; a conditional branch falls through when the next block follows
    conditional = mnemonic.startswith("b")
    return Insn(address, size, text, cls, mnemonic, conditional, frozenset(), frozenset(), 0, False, False)


# -- a run's cycles ----------------------------------------------------------------------------------

@dataclass
class Block:
    """A translated block as the plugin reported it (the runs of identical translations added)."""

    start: int
    end: int
    runs: int
    fallthrough: int
    fetch_stall: int
    load_stall: int
    insns: list[Insn]


def parse_blocks(stderr: str, core: str) -> list[Block]:
    """The blocks the plugin printed (`blocks=1`), decoded for `core`."""
    if "BLOCKS_OVERFLOW" in stderr:
        raise ZantError("the timing plugin's tables filled up: the image ran too much distinct code to time")
    riscv = core == "riscv32"
    merged: dict[tuple[int, int], Block] = {}
    current: Block | None = None
    texts: list[tuple[int, int, str]] = []

    def close() -> None:
        if current is None:
            return
        key = (current.start, current.end)
        if key in merged:
            other = merged[key]
            other.runs += current.runs
            other.fallthrough += current.fallthrough
            other.fetch_stall += current.fetch_stall
            other.load_stall += current.load_stall
        else:
            current.insns = [(decode_riscv if riscv else decode)(a, s, t) for a, s, t in texts]
            merged[key] = current

    for line in stderr.splitlines():
        if line.startswith("BLOCK "):
            close()
            _, start, end, runs, fallthrough, fetch, load = line.split()
            current = Block(int(start, 16), int(end, 16), int(runs), int(fallthrough), int(fetch), int(load), [])
            texts = []
        elif line.startswith("INSN "):
            _, address, size, *rest = line.split(" ", 3)
            texts.append((int(address, 16), int(size), rest[0] if rest else ""))
    close()
    return list(merged.values())


def insn_cycles(core: CoreTiming, insns: Sequence[Insn]) -> list[int]:
    """Each instruction's cycles in a straight run of `insns` (one block), without the branch at
    its end being taken (`block_costs` adds that)."""
    rules = core.rules
    costs = []
    fp_div_shadow = 0  # cycles of a VDIV/VSQRT still to overlap with integer instructions
    fp_div = 0  # that VDIV's index
    for i, insn in enumerate(insns):
        previous = insns[i - 1] if i else None
        cycles = core.cycles(insn.cls)
        if insn.cls in ("load_multiple", "store_multiple", "fp_load_multiple", "fp_store_multiple"):
            cycles += insn.list_count
            if insn.writes_pc:
                cycles += core.refill.cycles + rules.get("pop_pc_extra", Row(0, "")).cycles
        elif insn.cls == "load" and insn.writes_pc:
            cycles += core.refill.cycles
        elif insn.cls == "table_branch":
            cycles += core.refill.cycles
        elif insn.cls == "store" and "store_register_offset" in rules and len(insn.address_regs) > 1:
            cycles = rules["store_register_offset"].cycles
        elif insn.cls == "barrier" and insn.base == "isb" and "isb_refill" in rules:
            cycles += core.refill.cycles
        if insn.cls == "load" and "riscv_load" in rules:
            cycles += rules["riscv_load"].cycles
        if previous is not None:
            if ("pipelined_load" in rules and insn.cls in ("load", "store") and previous.cls == "load"
                    and not (previous.writes & insn.address_regs) and cycles > 1):
                cycles -= rules["pipelined_load"].cycles
            if ("address_interlock" in rules and insn.address_regs and previous.cls in ("alu", "mul", "mul_long")
                    and previous.writes & insn.address_regs):
                cycles += rules["address_interlock"].cycles
            if ("dual_issue" in rules and insn.cls in ("alu", "mul") and previous.cls == "alu"
                    and not (previous.writes & set(_registers(insn.text.partition(" ")[2])))
                    and costs and costs[-1] > 0):
                cycles = 0  # issued beside the previous one (which keeps its cycle)
            if ("beat_overlap" in rules and insn.cls == "mve" and previous.cls == "mve"
                    and _mve_memory(insn) != _mve_memory(previous)):
                cycles -= rules["beat_overlap"].cycles
        if "fp_div_overlap" in rules:
            if insn.cls == "fp_div":
                fp_div_shadow, fp_div = rules["fp_div_overlap"].cycles, i
            elif fp_div_shadow and not insn.cls.startswith("fp_") and insn.cls != "mve":
                hidden = min(cycles, fp_div_shadow)
                fp_div_shadow -= hidden
                costs[fp_div] -= hidden
            else:
                fp_div_shadow = 0
        costs.append(cycles)
    return costs


def _mve_memory(insn: Insn) -> bool:
    return insn.base.startswith(("vldr", "vstr", "vld2", "vld4", "vst2", "vst4"))


def _ends_in_branch(insn: Insn) -> bool:
    return insn.cls in ("branch", "table_branch") or insn.writes_pc


def taken_branch_cycles(core: CoreTiming, insn: Insn) -> int:
    """What a branch costs beyond its not-taken cycles when taken (table branches and loads of the
    PC always branch: their refill is in `insn_cycles`)."""
    if insn.cls != "branch":
        return 0
    extra = core.refill.cycles
    if insn.base == "bl" and "bl_extra" in core.rules:
        extra += core.rules["bl_extra"].cycles
    return extra


@dataclass(frozen=True)
class BlockCost:
    block: Block
    per_insn: tuple[int, ...]  # each instruction's cycles over all the block's runs
    stall: int  # flash stalls over all its runs

    @property
    def cycles(self) -> int:
        return sum(self.per_insn) + self.stall


def block_costs(blocks: Iterable[Block], core: CoreTiming) -> list[BlockCost]:
    costs = []
    for block in blocks:
        static = insn_cycles(core, block.insns)
        per_insn = [c * block.runs for c in static]
        if block.insns and _ends_in_branch(block.insns[-1]):
            # a conditional branch fell through when the next block began at the block's end; an
            # unconditional one is taken even when its target is the next instruction
            taken = block.runs - block.fallthrough if block.insns[-1].conditional else block.runs
            per_insn[-1] += taken * taken_branch_cycles(core, block.insns[-1])
        costs.append(BlockCost(block, tuple(per_insn), block.fetch_stall + block.load_stall))
    return costs


def total_cycles(blocks: Iterable[Block], core: CoreTiming) -> int:
    return sum(cost.cycles for cost in block_costs(blocks, core))


def cycles_by_range(blocks: Iterable[Block], core: CoreTiming, starts: Sequence[int], ends: Sequence[int]) -> list[int]:
    """Cycles per address range [starts[i], ends[i]) (sorted, disjoint), the last entry those in
    none; a block's stalls go to the range of its first instruction."""
    import bisect

    totals = [0] * (len(starts) + 1)

    def index(address: int) -> int:
        i = bisect.bisect_right(starts, address) - 1
        return i if i >= 0 and address < ends[i] else len(starts)

    for cost in block_costs(blocks, core):
        for insn, cycles in zip(cost.block.insns, cost.per_insn):
            totals[index(insn.address)] += cycles
        if cost.block.insns:
            totals[index(cost.block.insns[0].address)] += cost.stall
    return totals
