"""Build a generated Zig file with the `ziglang` wheel (`python -m ziglang`), no system toolchain.

`build_zig(zig_path, out_path, target="host", optimize="ReleaseSafe", kind="shared")` runs
`zig build-lib -dynamic` (kind "shared"), `build-lib` ("static"), `build-obj` ("obj") or
`build-exe` ("exe", with a linker script in `extra`: the firmware images of `firmware.py`). Each
build has its own local cache beside its output; Zig's global cache (compiler_rt and the other
runtime libraries, ~20 s to build per target and mode) is shared between builds, in
`$ZANT_CACHE_DIR` or the user's cache folder (`$XDG_CACHE_HOME/zant/zig`, `~/.cache/zant/zig`).
Zig locks its cache entries, so concurrent builds may share it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from zant.errors import ZantError

TARGETS: dict[str, tuple[str, ...]] = {
    "host": (),
    "cortex-m0plus": ("-target", "thumb-freestanding-eabi", "-mcpu", "cortex_m0plus"),
    "cortex-m3": ("-target", "thumb-freestanding-eabi", "-mcpu", "cortex_m3"),
    "cortex-m4": ("-target", "thumb-freestanding-eabihf", "-mcpu", "cortex_m4+vfp4d16sp"),
    "cortex-m7": ("-target", "thumb-freestanding-eabihf", "-mcpu", "cortex_m7+fp_armv8d16"),
    "cortex-m33": ("-target", "thumb-freestanding-eabihf", "-mcpu", "cortex_m33+fp_armv8d16sp"),
    "cortex-m55": ("-target", "thumb-freestanding-eabihf", "-mcpu", "cortex_m55+mve_fp+fp_armv8d16"),
    "riscv32": ("-target", "riscv32-freestanding-none", "-mcpu", "generic_rv32+m+f+c"),
}
"""Target name → Zig target flags (`host` builds for the machine running Zant). Zig's Cortex-M CPU
models leave the optional FPU out, so the FPU each core is usually built with is named explicitly
(without it, every float operation is a soft-float call)."""

KINDS: dict[str, tuple[str, ...]] = {
    "shared": ("build-lib", "-dynamic"),
    "static": ("build-lib",),
    "obj": ("build-obj",),
    "exe": ("build-exe",),
}
OPTIMIZE_MODES = ("Debug", "ReleaseSafe", "ReleaseFast", "ReleaseSmall")


def default_global_cache() -> Path:
    """Where Zig's global cache lives unless a build names one."""
    if os.environ.get("ZANT_CACHE_DIR"):
        return Path(os.environ["ZANT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "zant" / "zig"


def build_zig(
    zig_path: str | Path,
    out_path: str | Path,
    target: str = "host",
    optimize: str = "ReleaseSafe",
    kind: str = "shared",
    cache_dir: str | Path | None = None,
    extra: Sequence[str] = (),
) -> Path:
    """Compile `zig_path` into `out_path`; raise `ZantError` with Zig's messages on failure."""
    if target not in TARGETS:
        raise ZantError(f"unknown target '{target}' (choose from {', '.join(TARGETS)})")
    if kind not in KINDS:
        raise ZantError(f"unknown build kind '{kind}' (choose from {', '.join(KINDS)})")
    if optimize not in OPTIMIZE_MODES:
        raise ZantError(f"unknown optimize mode '{optimize}' (choose from {', '.join(OPTIMIZE_MODES)})")
    out_path = Path(out_path).resolve()
    out_path.parent.mkdir(parents=True, exist_ok=True)
    local_cache = out_path.parent / ".zig-cache"
    global_cache = Path(cache_dir) if cache_dir is not None else default_global_cache()
    command = [
        sys.executable, "-m", "ziglang", *KINDS[kind], str(Path(zig_path).resolve()),
        f"-O{optimize}", *TARGETS[target], f"-femit-bin={out_path}",
        "--cache-dir", str(local_cache), "--global-cache-dir", str(global_cache),
        *(() if kind == "exe" else ("-fno-emit-h",)), *extra,
    ]
    result = subprocess.run(command, capture_output=True, text=True, cwd=out_path.parent)
    if result.returncode != 0:
        raise ZantError(f"zig failed to build {zig_path} for {target}:\n{result.stderr.strip()}")
    return out_path


@dataclass(frozen=True)
class Region:
    origin: int
    size: int


@dataclass(frozen=True)
class Board:
    """A QEMU machine a firmware image runs on: its core, memory map and emulator."""

    name: str  # the QEMU machine (`-M`)
    target: str  # a key of TARGETS
    flash: Region  # vectors and code; the initial vector table address on Arm
    ram: Region  # .data, .bss, then the stack up to the end
    weights: Region | None = None  # .rodata and .data's load image when flash is too small

    @property
    def arch(self) -> str:
        return "riscv" if self.target.startswith("riscv") else "arm"

    @property
    def fpu(self) -> bool:
        """Whether the target's code uses an FPU that the startup code must switch on."""
        flags = " ".join(TARGETS[self.target])
        return "eabihf" in flags or "+f" in flags

    @property
    def qemu(self) -> str:
        return "qemu-system-riscv32" if self.arch == "riscv" else "qemu-system-arm"


KB = 1024
MB = 1024 * KB
_MPS2_FLASH, _MPS2_RAM = Region(0x0000_0000, 4 * MB), Region(0x2000_0000, 4 * MB)
BOARDS: dict[str, Board] = {
    b.name: b
    for b in (
        # nRF51: a Cortex-M0 runs the v6-M code of the M0+ target; 256 KB flash, 16 KB RAM.
        Board("microbit", "cortex-m0plus", Region(0x0000_0000, 256 * KB), Region(0x2000_0000, 16 * KB)),
        Board("mps2-an385", "cortex-m3", _MPS2_FLASH, _MPS2_RAM),
        Board("mps2-an386", "cortex-m4", _MPS2_FLASH, _MPS2_RAM),
        Board("mps2-an500", "cortex-m7", _MPS2_FLASH, _MPS2_RAM),
        # Secure aliases: the M33 boots secure with its vector table at 0x10000000 (SSRAM1).
        Board("mps2-an505", "cortex-m33", Region(0x1000_0000, 4 * MB), Region(0x3800_0000, 4 * MB)),
        # SSE-300: code in the 512 KB ITCM (the boot vector table), weights in the 2 MB SRAM,
        # data in the 4 MB internal SRAM (all secure aliases).
        Board(
            "mps3-an547", "cortex-m55", Region(0x1000_0000, 512 * KB), Region(0x3100_0000, 4 * MB),
            weights=Region(0x1100_0000, 2 * MB),
        ),
        # QEMU's virt machine without firmware (-bios none) starts at the base of its RAM.
        Board("virt", "riscv32", Region(0x8000_0000, 4 * MB), Region(0x8040_0000, 4 * MB)),
    )
}
"""QEMU machine → board; `DEFAULT_BOARDS` picks one per target."""

DEFAULT_BOARDS: dict[str, str] = {
    "cortex-m0plus": "microbit",
    "cortex-m3": "mps2-an385",
    "cortex-m4": "mps2-an386",
    "cortex-m7": "mps2-an500",
    "cortex-m33": "mps2-an505",
    "cortex-m55": "mps3-an547",
    "riscv32": "virt",
}


def board_for(target: str, board: str | None = None) -> Board:
    """The named board (which must have `target`'s core), or the target's default board."""
    if board is None:
        if target not in DEFAULT_BOARDS:
            raise ZantError(f"a firmware image needs an MCU target, not '{target}' (choose from {', '.join(DEFAULT_BOARDS)})")
        board = DEFAULT_BOARDS[target]
    if board not in BOARDS:
        raise ZantError(f"unknown board '{board}' (choose from {', '.join(BOARDS)})")
    if BOARDS[board].target != target:
        raise ZantError(f"board '{board}' has a {BOARDS[board].target} core, not {target}")
    return BOARDS[board]
