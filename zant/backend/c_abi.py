"""What a firmware needs to link a generated library: its float ABI, compiler flags, runtime symbols
and arena contract, from the target record (`zant.targets`), stated once here for the
build (`zant.backend.build`), the header (`zant.backend.plan.emit_header`) and the packages.

* `FLOAT_ABIS`, `default_float_abi(target)`, `zig_target_flags(target, float_abi)`: an Arm core
  with an FPU builds `hard` (floats passed in FPU registers: `-target thumb-...-eabihf`, the
  default) or `softfp` (FPU instructions, floats passed in core registers: `-target ...-eabi`,
  the same `-mcpu`); `soft` builds without the FPU (a core without one has only this). Objects
  of different calling conventions do not link: GNU ld says "failed to merge target specific
  data" (`Tag_ABI_VFP_args`). A softfp library also links into a `-mfloat-abi=soft` firmware
  (same calling convention) on a part whose FPU is enabled.
* `gcc_flags(target, float_abi)`: the flags a C file calling the library is compiled with by
  `arm-none-eabi-gcc` (RISC-V: a `riscv*-elf-gcc`), derived from the Zig flags.
* `runtime_symbols(library)`: what the library leaves undefined (a static library carries no
  runtime: `memcpy`, `memset`, `__aeabi_memclr4`, `expf` ...), which newlib and libgcc
  provide, or the firmware does (`-nostdlib`); or none, with Zig's compiler_rt bundled
  (`RUNTIME_MODES`).
* the scratch arena's modes, `ARENA_MODES`: `library` (the library's own `.bss` array, the
  default) or `caller` (`NAME_set_arena(arena, bytes)` hands it memory; `abi.Status.BAD_ARENA`).
"""

from __future__ import annotations

from pathlib import Path

from zant.backend.targets import TARGETS
from zant.dialects.abi import Status
from zant.errors import ZantError
from zant.targets import RECORDS

FLOAT_ABIS = ("hard", "softfp", "soft")
"""Arm float ABIs, as GCC's `-mfloat-abi` spells them."""

RUNTIME_MODES = ("external", "bundled")
"""Where the runtime symbols a library needs come from: the firmware's C library, libm and
libgcc (`external`, listed in the header), or Zig's compiler_rt inside the archive (`bundled`:
`compiler_rt.o`, every symbol weak, so the firmware's own definitions win; link with
`--gc-sections`, or its 400 KB of code stay in the image)."""

ARENA_MODES = ("library", "caller")
"""Who owns the scratch arena: the library (a `.bss` array, `NAME_scratch`) or the caller
(`NAME_set_arena`)."""

_FPU_FEATURES = {"vfp4d16sp": "fpv4-sp-d16", "fp_armv8d16sp": "fpv5-sp-d16", "fp_armv8d16": "fpv5-d16", "mve_fp": "auto"}
"""Zig's (LLVM's) FPU features of the `-mcpu`s in the target records → GCC's `-mfpu`."""
_WITHOUT_FPU = {"mve_fp": "mve"}
"""What a soft-float build keeps of an FPU feature (Helium's integer half)."""


def zig_target_option(target: str, option: str, float_abi: str | None = None) -> str:
    """The value of one of `zig_target_flags` (`-target`, `-mcpu`)."""
    flags = zig_target_flags(target, float_abi)
    return flags[flags.index(option) + 1]


def is_arm(target: str) -> bool:
    return RECORDS[target].arch == "thumb"


def has_fpu(target: str) -> bool:
    return RECORDS[target].fpu is not None


def default_float_abi(target: str) -> str | None:
    """`hard` for an Arm core with an FPU, `soft` for one without; None elsewhere (the host,
    RISC-V: one ABI, `gcc_flags` states it)."""
    if not is_arm(target):
        return None
    return "hard" if has_fpu(target) else "soft"


def check_float_abi(target: str, float_abi: str | None) -> str | None:
    """The float ABI to build `target` with (`float_abi`, or the core's default), or a
    `ZantError` for one it cannot have."""
    if float_abi is None:
        return default_float_abi(target)
    if float_abi not in FLOAT_ABIS:
        raise ZantError(f"unknown float ABI '{float_abi}' (choose from {', '.join(FLOAT_ABIS)})")
    if not is_arm(target):
        raise ZantError(f"--float-abi is for Arm cores; {target} has one ABI (see its header)")
    if float_abi != "soft" and not has_fpu(target):
        raise ZantError(f"{target} has no FPU: its only float ABI is soft, not {float_abi}")
    return float_abi


def zig_target_flags(target: str, float_abi: str | None = None) -> tuple[str, ...]:
    """The Zig `-target`/`-mcpu` flags of `target` built with `float_abi` (None: the default)."""
    flags = list(TARGETS[target])
    abi = check_float_abi(target, float_abi)
    if abi is None or abi == default_float_abi(target):
        return tuple(flags)
    triple = flags.index("-target") + 1
    flags[triple] = flags[triple].removesuffix("hf")  # thumb-freestanding-eabi
    if abi == "soft":
        cpu = flags.index("-mcpu") + 1
        name, *features = flags[cpu].split("+")
        kept = [_WITHOUT_FPU.get(f, f) for f in features if f not in _FPU_FEATURES or f in _WITHOUT_FPU]
        flags[cpu] = "+".join([name, *kept])
    return tuple(flags)


def gcc_flags(target: str, float_abi: str | None = None) -> list[str]:
    """The flags a C caller of `target`'s library compiles with (GCC spelling); [] for the host."""
    if target == "host":
        return []
    cpu = zig_target_option(target, "-mcpu")
    name, *features = cpu.split("+")
    if not is_arm(target):  # riscv32: generic_rv32+m+f+c -> rv32imfc, single-float ABI with f
        extensions = "".join(f for f in "imafdc" if f == "i" or f in features)
        return [f"-march=rv32{extensions}", "-mabi=ilp32f" if "f" in features else "-mabi=ilp32"]
    abi = check_float_abi(target, float_abi)
    flags = [f"-mcpu={name.replace('_', '-')}", "-mthumb", f"-mfloat-abi={abi}"]
    fpus = [_FPU_FEATURES[f] for f in features if f in _FPU_FEATURES]
    if abi != "soft" and fpus and fpus[0] != "auto":
        flags.append(f"-mfpu={fpus[0]}")
    return flags


def runtime_symbols(library: str | Path) -> list[str]:
    """The symbols a static library (or object) needs and does not define, sorted: what the
    firmware's C library, libm and libgcc (or its own code) must provide."""
    from zant.backend.archive import MAGIC, read_members
    from zant.backend.elf import linkage_symbols

    data = Path(library).read_bytes()
    members = [body for _, body in read_members(data)] if data.startswith(MAGIC) else [data]
    defined: set[str] = set()
    needed: set[str] = set()
    for body in members:
        if body[:4] != b"\x7fELF":
            continue
        have, want = linkage_symbols(body)
        defined.update(have)
        needed.update(want)
    return sorted(needed - defined)


NOT_IN_LIBGCC = frozenset({
    "__aeabi_h2f", "__aeabi_f2h", "__aeabi_d2h", "__extendhfsf2", "__truncsfhf2", "__truncdfhf2",
    "__mulodi4", "__muloti4", "__udivti3", "__divti3", "__umodti3", "__modti3",
})
"""Compiler runtime symbols LLVM may call that GCC 12's libgcc lacks (it converts halves with
`__gnu_h2f_ieee`): Zig's compiler_rt or the firmware's own code provides them."""


def symbol_source(symbol: str) -> str:
    """Where a GNU Arm toolchain finds a runtime symbol: newlib's libc or libm, libgcc, or
    neither (`NOT_IN_LIBGCC`: "compiler-rt")."""
    if symbol.startswith(("mem", "__aeabi_mem")) or symbol in ("strlen", "abort"):
        return "libc"
    if symbol in NOT_IN_LIBGCC:
        return "compiler-rt"
    if symbol.startswith("__"):
        return "libgcc"
    return "libm"


def abi_lines(
    name: str, target: str, float_abi: str | None, optimize: str | None, symbols: list[str] | None,
    runtime: str = "external",
) -> list[str]:
    """The header's comment on how to link the library: core, float ABI, flags, symbols."""
    if target == "host":
        return [
            f"/* ABI: a shared library (lib{name}.so) for the machine that compiled it; C calling",
            "   convention, no runtime symbols besides the C library's. */",
            "",
        ]
    abi = check_float_abi(target, float_abi)
    zig = " ".join(zig_target_flags(target, float_abi))
    lines = [
        f"/* ABI of lib{name}.a: {target}"
        + (f", float ABI {abi}" if abi else "") + (f", built {optimize}" if optimize else "") + f" (zig {zig}).",
        f"   Compile the callers with: {' '.join(gcc_flags(target, float_abi))}",
        *([
            "   Objects of another float ABI do not link with it (GNU ld: \"failed to merge target specific",
            "   data\"). No unwind tables, no exceptions, no heap, no threads, no system calls.",
        ] if abi else [
            "   Objects of another -mabi do not link with it. No unwind tables, no exceptions, no heap,",
            "   no threads, no system calls.",
        ]),
    ]
    if runtime == "bundled":
        lines.append("   Runtime: Zig's compiler_rt is in the archive (compiler_rt.o: memcpy, memset, expf ..., all weak,")
        lines.append("   so the firmware's own definitions win); link with -Wl,--gc-sections. */")
    elif symbols is None:
        lines.append("   Runtime symbols: the build states them (compiled with --no-build). */")
    elif not symbols:
        lines.append("   Runtime symbols: none. */")
    else:
        lines.append("   Runtime symbols it needs (from newlib's libc and libm and from libgcc, or with -nostdlib")
        lines.append(
            "   the firmware's own; compiler-rt: not in libgcc, Zig's compiler_rt has them, --runtime bundled):"
            if any(symbol_source(s) == "compiler-rt" for s in symbols) else "   the firmware's own; or --runtime bundled):"
        )
        by_source: dict[str, list[str]] = {}
        for symbol in symbols:
            by_source.setdefault(symbol_source(symbol), []).append(symbol)
        rows = [f"     {source}: {', '.join(found)}" for source, found in by_source.items()]
        lines += rows[:-1] + [rows[-1] + " */"]
    if abi is not None:  # the compiler knows its float ABI: a mismatch stops the caller's build here
        hard = abi == "hard"
        lines += [
            f"#if defined(__arm__) && {'!' if hard else ''}defined(__ARM_PCS_VFP)",
            f'#error "lib{name}.a uses the {abi} float ABI: compile with {" ".join(gcc_flags(target, float_abi))}"',
            "#endif",
        ]
    return lines + [""]


def arena_lines(name: str, size: int, alignment: int, mode: str) -> list[str]:
    """The header's scratch-arena macros, and `NAME_set_arena` for a caller's arena."""
    if mode not in ARENA_MODES:
        raise ZantError(f"unknown arena mode '{mode}' (choose from {', '.join(ARENA_MODES)})")
    if mode == "library":
        lines = [f"/* The scratch arena: the library's own .bss array ({name}_scratch). */"]
    else:
        lines = [
            f"/* The scratch arena is the caller's ({name}_set_arena). It holds nothing between calls: one",
            "   arena as large as the largest model's serves several models that never run at once. */",
        ]
    lines += [
        f"#define {name}_ARENA_SIZE {size}u",
        f"#define {name}_ARENA_ALIGN {alignment}u",
        f"#define {name}_ARENA_CALLER {1 if mode == 'caller' else 0}",
    ]
    if mode == "caller":
        lines += [
            Status.BAD_ARENA.define(name),
            f"/* Hands the model its scratch arena: at least {name}_ARENA_SIZE bytes at a multiple of",
            f"   {name}_ARENA_ALIGN, used by every later {name}_predict. Returns 0, or {name}_STATUS_BAD_ARENA",
            f"   (the model then has no arena, and {name}_predict returns {name}_STATUS_BAD_ARENA until one is",
            f"   set; a model whose {name}_ARENA_SIZE is 0 needs none). */",
            f"int32_t {name}_set_arena(void *arena, size_t arena_bytes);",
            f"extern const size_t {name}_arena_size; /* {name}_ARENA_SIZE, as linked */",
            f"extern const size_t {name}_arena_align; /* {name}_ARENA_ALIGN, as linked */",
        ]
    return lines + [""]
