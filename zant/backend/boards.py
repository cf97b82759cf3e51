"""The boards a firmware image is linked for: the built-in QEMU machines and a user's board file.

A board is a core (one of the MCU targets) and a memory map: flash (vectors and code, and the
weights unless the board has a separate weights region), RAM (`.data`, `.bss`, then the stack up
to its end), and the QEMU machine that runs its images, if any.

A board file is a small TOML file (`--board my_board.toml`, see the README):

    name = "stm32f411"                    # optional: the file's stem
    core = "cortex-m4"
    qemu = "mps2-an386"                   # optional: the QEMU machine (-M) that runs its images
    clock_hz = 100_000_000                # optional: the core's clock (cycles -> milliseconds)
    flash = { origin = 0x0800_0000, size = "512 KB" }
    # optional in `flash`, what reading it costs (`zant.backend.timing`): wait_states = 3 (per
    # 64-bit word), icache_lines = 32 and dcache_lines = 8 (an ART-like cache of 32-byte lines),
    # prefetch = true
    ram = { origin = 0x2000_0000, size = "128 KB" }
    weights = { origin = 0x9000_0000, size = "8 MB" }   # optional: where .rodata goes instead

    [[memories]]                          # optional: more memories, for the scratch arena
    name = "dtcm"
    origin = 0x2002_0000
    size = "64 KB"
    speed = 0                             # rank: 0 is the fastest (default 1)
    executable = false                    # whether code may run from it (default false)
    kind = "ram"                          # ram (default) or flash

Every board has a memory map (`Board.memories`): its flash, RAM and weights regions, named, and
the memories a board file lists. When the board lists RAM memories beyond those, the scratch
arena is split over them and its RAM (`scratch_memories`, fastest first, `ram`'s rank is its
optional `speed` key, default 1; `place-memories`): each listed memory's part an array in section
`.zant.<name>` that the linker script places there, RAM's part in `.bss` as without memories.

A mistake in it is one `ZantError` naming the file and the field.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from zant.targets import RECORDS
from zant.errors import ZantError

KB = 1024
MB = 1024 * KB

ADDRESS_SPACE = 1 << 32
"""Every MCU target is a 32-bit part."""

MIN_STACK = 4096
"""Bytes of RAM an image leaves for the stack (its linker script asserts it): what a board's RAM
cannot give to the scratch arena."""


@dataclass(frozen=True)
class Region:
    origin: int
    size: int

    @property
    def end(self) -> int:
        return self.origin + self.size


@dataclass(frozen=True)
class Memory:
    """One memory of a board: where it is, how big, how fast (a rank: 0 is the fastest), whether
    code can run from it, and its kind (`ram`: read-write, or `flash`: read-only at run time)."""

    name: str
    origin: int
    size: int
    speed: int = 1
    executable: bool = False
    kind: str = "ram"

    @property
    def region(self) -> Region:
        return Region(self.origin, self.size)

    def as_dict(self) -> dict:
        return {
            "name": self.name, "origin": self.origin, "size": self.size, "speed": self.speed,
            "executable": self.executable, "kind": self.kind,
        }


MEMORY_KINDS = ("ram", "flash")


@dataclass(frozen=True)
class FlashTiming:
    """What reading the flash costs the core (`zant.backend.timing`): wait states per 64-bit flash
    word, and STM32's ART accelerator (an instruction cache and a data cache of `*_lines` lines
    of four 64-bit words, and the prefetch of the next word)."""

    wait_states: int = 0
    icache_lines: int = 0
    dcache_lines: int = 0
    prefetch: bool = False

    def as_dict(self) -> dict:
        return {"wait_states": self.wait_states, "icache_lines": self.icache_lines,
                "dcache_lines": self.dcache_lines, "prefetch": self.prefetch}


@dataclass(frozen=True)
class Board:
    """A board a firmware image is linked for: its core, memory map, emulator, clock and what its
    flash costs."""

    name: str
    target: str  # a key of `zant.targets.RECORDS`
    flash: Region  # vectors and code; the initial vector table address on Arm
    ram: Region  # .data, .bss, then the stack up to the end
    weights: Region | None = None  # .rodata and .data's load image when flash is too small
    machine: str | None = None  # the QEMU machine (`-M`) that runs its images; None: none does
    source: Path | None = None  # the board file it was read from; None: built in
    extra_memories: tuple[Memory, ...] = ()  # memories besides flash, RAM and weights
    names: tuple[str, str, str] = ("flash", "ram", "weights")  # of the flash, RAM, weights memories
    ram_speed: int = 1  # the speed rank of `ram` among the scratch memories (0: the fastest)
    clock_hz: int | None = None  # the core's clock: cycles to milliseconds; None: not stated
    flash_timing: FlashTiming = FlashTiming()  # zero wait states unless the part has them

    @property
    def memories(self) -> tuple[Memory, ...]:
        """Every memory of the board: flash (code runs there), RAM, the weights region, then the
        others, each named."""
        flash, ram, weights = self.names
        main = [
            Memory(flash, self.flash.origin, self.flash.size, 1, True, "flash"),
            Memory(ram, self.ram.origin, self.ram.size, self.ram_speed, True, "ram"),
        ]
        if self.weights is not None:
            main.append(Memory(weights, self.weights.origin, self.weights.size, 1, False, "flash"))
        return (*main, *self.extra_memories)

    @property
    def scratch_memories(self) -> tuple[Memory, ...]:
        """The RAM memories besides `ram` that hold part of the scratch arena, fastest first
        (listed order among equals); none: the scratch arena is in `.bss`, in RAM."""
        ram = [m for m in self.extra_memories if m.kind == "ram"]
        return tuple(sorted(ram, key=lambda m: m.speed))

    @property
    def place_memories(self) -> tuple[str, ...]:
        """`place-memories`' option for this board (`NAME:BYTES`, fastest first, `ram` as `bss`
        with its bytes but the minimum stack), or () when the scratch memories are `ram` alone."""
        if not self.scratch_memories:
            return ()
        ram = Memory("bss", self.ram.origin, max(self.ram.size - MIN_STACK, 0), self.ram_speed)
        ranked = sorted([ram, *self.scratch_memories], key=lambda m: m.speed)  # ram first among equals
        return tuple(f"{m.name}:{m.size}" for m in ranked if m.size)

    @property
    def arch(self) -> str:
        return "riscv" if self.target.startswith("riscv") else "arm"

    @property
    def fpu(self) -> bool:
        """Whether the target's code uses an FPU that the startup code must switch on."""
        return RECORDS[self.target].float_registers > 0

    @property
    def qemu(self) -> str:
        return "qemu-system-riscv32" if self.arch == "riscv" else "qemu-system-arm"

    @property
    def label(self) -> str:
        """The board's name, and its file for a board file (for messages)."""
        return self.name if self.source is None else f"{self.name} ({self.source})"


def _machine(
    name: str, target: str, flash: Region, ram: Region, weights: Region | None = None,
    names: tuple[str, str, str] = ("flash", "ram", "weights"), clock_hz: int | None = None,
) -> Board:
    """A built-in board: a QEMU machine of the same name; `names`: its memories' real names;
    `clock_hz`: the clock of the real board's core."""
    return Board(name, target, flash, ram, weights, machine=name, names=names, clock_hz=clock_hz)


MHZ = 1_000_000


_MPS2 = ("ssram1", "ssram23", "weights")  # QEMU's mps2.c: ZBT SSRAM1 at 0, SSRAM2&3 at 0x20000000


_MPS2_FLASH, _MPS2_RAM = Region(0x0000_0000, 4 * MB), Region(0x2000_0000, 4 * MB)
BOARDS: dict[str, Board] = {
    b.name: b
    for b in (
        # nRF51: a Cortex-M0 runs the v6-M code of the M0+ target; 256 KB flash, 16 KB RAM.
        _machine("microbit", "cortex-m0plus", Region(0x0000_0000, 256 * KB), Region(0x2000_0000, 16 * KB), clock_hz=16 * MHZ),
        # The MPS2 and MPS3 FPGA images clock their cores at 25, 20 and 32 MHz (Arm's AN385,
        # AN386, AN500, AN505 and AN547 application notes).
        _machine("mps2-an385", "cortex-m3", _MPS2_FLASH, _MPS2_RAM, names=_MPS2, clock_hz=25 * MHZ),
        _machine("mps2-an386", "cortex-m4", _MPS2_FLASH, _MPS2_RAM, names=_MPS2, clock_hz=25 * MHZ),
        _machine("mps2-an500", "cortex-m7", _MPS2_FLASH, _MPS2_RAM, names=_MPS2, clock_hz=25 * MHZ),
        # Secure aliases: the M33 boots secure with its vector table at 0x10000000 (SSRAM1).
        _machine(
            "mps2-an505", "cortex-m33", Region(0x1000_0000, 4 * MB), Region(0x3800_0000, 4 * MB),
            names=("ssram1", "ssram23", "weights"), clock_hz=20 * MHZ,
        ),
        # SSE-300: code in the 512 KB ITCM (the boot vector table), weights in the 2 MB SRAM,
        # data in the 4 MB internal SRAM, the scratch arena's hottest buffers in the 512 KB DTCM
        # (all secure aliases).
        replace(
            _machine(
                "mps3-an547", "cortex-m55", Region(0x1000_0000, 512 * KB), Region(0x3100_0000, 4 * MB),
                weights=Region(0x1100_0000, 2 * MB), names=("itcm", "isram", "sram"), clock_hz=32 * MHZ,
            ),
            extra_memories=(Memory("dtcm", 0x3000_0000, 512 * KB, speed=0),),
        ),
        # QEMU's virt machine without firmware (-bios none) starts at the base of its RAM.
        _machine("virt", "riscv32", Region(0x8000_0000, 4 * MB), Region(0x8040_0000, 4 * MB)),
        # MLPerf Tiny's reference part: an STM32L4R5ZI (Cortex-M4F at 120 MHz, 2 MB flash, 640 KB
        # SRAM), run on QEMU's Cortex-M4 machine with its memory map (flash at 0, SRAM1-3 as
        # one 640 KB block at 0x20000000, as on the part). ST's RM0432 Table 12: 5 wait states at
        # 120 MHz (range 1 boost); 3.3.4: the ART accelerator, a 1 KB instruction cache (32 lines
        # of 4 x 64 bits), a 256 B data cache (8 lines) and the prefetch, all on.
        Board(
            "nucleo-l4r5zi", "cortex-m4", Region(0x0000_0000, 2 * MB), Region(0x2000_0000, 640 * KB),
            machine="mps2-an386", clock_hz=120 * MHZ,
            flash_timing=FlashTiming(wait_states=5, icache_lines=32, dcache_lines=8, prefetch=True),
        ),
    )
}
"""Board name → board (a QEMU machine's name, or a real part's run on one); `DEFAULT_BOARDS`
picks one per target."""

DEFAULT_BOARDS: dict[str, str] = {name: t.default_board for name, t in RECORDS.items() if t.default_board}
"""The MCU targets (every core a board may have) and the board each links for by default
(`Target.default_board`)."""


def find_board(spec: str | os.PathLike | Board) -> Board:
    """A built-in board by name, or the board a file describes (a path, or any name ending in
    `.toml`)."""
    if isinstance(spec, Board):
        return spec
    if isinstance(spec, str) and spec in BOARDS:
        return BOARDS[spec]
    path = Path(spec)
    if path.suffix == ".toml" or path.exists():
        return load_board_file(path)
    raise ZantError(f"unknown board '{spec}' (choose from {', '.join(BOARDS)}, or give a board file NAME.toml)")


def board_for(target: str, board: str | os.PathLike | Board | None = None) -> Board:
    """The given board (a name, a board file or a `Board`, which must have `target`'s core), or
    the target's default board."""
    if board is None:
        if target not in DEFAULT_BOARDS:
            raise ZantError(f"a firmware image needs an MCU target, not '{target}' (choose from {', '.join(DEFAULT_BOARDS)})")
        return BOARDS[DEFAULT_BOARDS[target]]
    found = find_board(board)
    if found.target != target:
        raise ZantError(f"board '{found.label}' has a {found.target} core, not {target}")
    return found


# -- board files -------------------------------------------------------------------------------

_KEYS = ("name", "core", "qemu", "clock_hz", "flash", "ram", "weights", "memories")
_FLASH_TIMING_KEYS = ("wait_states", "icache_lines", "dcache_lines", "prefetch")
_MEMORY_KEYS = ("name", "origin", "size", "speed", "executable", "kind")
_REGION_KEYS = ("origin", "size")
_NAME = re.compile(r"[A-Za-z0-9_.+-]+")  # it appears in the linker script and generated comments
_MEMORY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # in Zig names, sections, the linker script
_BYTES = re.compile(r"(0[xX][0-9a-fA-F][0-9a-fA-F_]*|[0-9][0-9_]*)\s*(B|K|KB|KiB|M|MB|MiB)?")
_UNITS = {None: 1, "B": 1, "K": KB, "KB": KB, "KiB": KB, "M": MB, "MB": MB, "MiB": MB}
_ALIGNMENT = 8  # the stack starts at the end of RAM, and Arm's and RISC-V's ABIs align it to 8


def load_board_file(path: str | os.PathLike) -> Board:
    """The board a TOML board file describes (see the module docstring)."""
    path = Path(path)
    try:
        with path.open("rb") as file:
            table = tomllib.load(file)
    except OSError as error:
        raise ZantError(f"cannot read board file {path}: {error.strerror or error}") from error
    except tomllib.TOMLDecodeError as error:
        raise ZantError(f"board file {path}: not valid TOML: {error}") from error

    def fail(field: str, problem: str) -> ZantError:
        return ZantError(f"board file {path}: {field}: {problem}")

    for key in table:
        if key not in _KEYS:
            raise fail(key, f"unknown key (expected {', '.join(_KEYS)})")
    name = table.get("name", path.stem)
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise fail("name", f"{name!r} is not a board name (letters, digits, '_', '.', '+', '-')")
    core = table.get("core")
    if core is None:
        raise fail("core", f"missing (one of {', '.join(DEFAULT_BOARDS)})")
    if not isinstance(core, str) or core not in DEFAULT_BOARDS:
        raise fail("core", f"unknown core {core!r} (choose from {', '.join(DEFAULT_BOARDS)})")
    machine = table.get("qemu")
    if machine is not None and (not isinstance(machine, str) or not _NAME.fullmatch(machine)):
        raise fail("qemu", f"{machine!r} is not a QEMU machine name (`qemu-system-arm -M help` lists them)")

    def region(key: str, required: bool) -> Region | None:
        keys = (*_REGION_KEYS, "speed") if key == "ram" else (*_REGION_KEYS, *_FLASH_TIMING_KEYS) if key == "flash" else _REGION_KEYS
        entry = table.get(key)
        if entry is None:
            if required:
                raise fail(key, "missing region (a table with origin and size)")
            return None
        if not isinstance(entry, dict):
            raise fail(key, "expected a table with origin and size")
        for field in entry:
            if field not in keys:
                raise fail(f"{key}.{field}", f"unknown key (expected {', '.join(keys)})")
        for field in _REGION_KEYS:
            if field not in entry:
                raise fail(f"{key}.{field}", "missing")
        return extent(key, entry)

    def extent(key: str, entry: dict) -> Region:
        origin, size = (_byte_count(entry[f], lambda problem, f=f: fail(f"{key}.{f}", problem)) for f in _REGION_KEYS)
        if size == 0:
            raise fail(f"{key}.size", "must be more than 0")
        for field, value in (("origin", origin), ("size", size)):
            if value % _ALIGNMENT:
                raise fail(f"{key}.{field}", f"0x{value:x} is not a multiple of {_ALIGNMENT}")
        if origin + size > ADDRESS_SPACE:
            raise fail(key, f"0x{origin:x} + {size:,} B ends beyond the 32-bit address space")
        return Region(origin, size)

    def memory(index: int, entry: object) -> Memory:
        where = f"memories[{index}]"
        if not isinstance(entry, dict):
            raise fail(where, "expected a table with name, origin and size ([[memories]])")
        for field in entry:
            if field not in _MEMORY_KEYS:
                raise fail(f"{where}.{field}", f"unknown key (expected {', '.join(_MEMORY_KEYS)})")
        for field in ("name", "origin", "size"):
            if field not in entry:
                raise fail(f"{where}.{field}", "missing")
        name = entry["name"]
        if not isinstance(name, str) or not _MEMORY_NAME.fullmatch(name):
            raise fail(f"{where}.name", f"{name!r} is not a memory name (a letter or '_', then letters, digits, '_')")
        if name.lower() in ("flash", "ram", "weights", "bss"):
            raise fail(f"{where}.name", f"'{name}' is reserved (flash, ram, weights: the board's own; bss: the scratch in ram)")
        where = f"memories.{name}"
        r = extent(where, entry)
        speed = entry.get("speed", 1)
        if isinstance(speed, bool) or not isinstance(speed, int) or speed < 0:
            raise fail(f"{where}.speed", f"{speed!r} is not a speed rank (0 is the fastest, 1, 2, …)")
        executable = entry.get("executable", False)
        if not isinstance(executable, bool):
            raise fail(f"{where}.executable", f"{executable!r} is not true or false")
        kind = entry.get("kind", "ram")
        if kind not in MEMORY_KINDS:
            raise fail(f"{where}.kind", f"{kind!r} is not a memory kind ({', '.join(MEMORY_KINDS)})")
        return Memory(name, r.origin, r.size, speed, executable, kind)

    regions = {key: region(key, key != "weights") for key in ("flash", "ram", "weights")}
    listed = table.get("memories", [])
    if not isinstance(listed, list):
        raise fail("memories", "expected an array of tables ([[memories]] entries)")
    memories = tuple(memory(i, entry) for i, entry in enumerate(listed))
    for i, m in enumerate(memories):
        if any(other.name == m.name for other in memories[:i]):
            raise fail(f"memories.{m.name}", "listed twice")
    ram_speed = table["ram"].get("speed", 1)
    if isinstance(ram_speed, bool) or not isinstance(ram_speed, int) or ram_speed < 0:
        raise fail("ram.speed", f"{ram_speed!r} is not a speed rank (0 is the fastest, 1, 2, …)")
    placed = [(key, r) for key, r in regions.items() if r is not None]
    placed += [(f"memories.{m.name}", m.region) for m in memories]
    for i, (key, r) in enumerate(placed):
        for other, s in placed[:i]:
            if r.origin < s.end and s.origin < r.end:
                raise fail(key, f"overlaps {other} (0x{r.origin:x}..0x{r.end:x} and 0x{s.origin:x}..0x{s.end:x})")
    flash, ram = regions["flash"], regions["ram"]
    assert flash is not None and ram is not None
    clock_hz = table.get("clock_hz")
    if clock_hz is not None and (isinstance(clock_hz, bool) or not isinstance(clock_hz, int) or clock_hz <= 0):
        raise fail("clock_hz", f"{clock_hz!r} is not a clock in Hz (a positive integer such as 120_000_000)")
    timing = {}
    for field in _FLASH_TIMING_KEYS:
        value = table["flash"].get(field)
        if value is None:
            continue
        if field == "prefetch":
            if not isinstance(value, bool):
                raise fail(f"flash.{field}", f"{value!r} is not true or false")
        elif isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _FLASH_TIMING_LIMITS[field]:
            raise fail(f"flash.{field}", f"{value!r} is not a count from 0 to {_FLASH_TIMING_LIMITS[field]}")
        timing[field] = value
    return Board(
        name, core, flash, ram, regions["weights"], machine=machine, source=path, extra_memories=memories,
        ram_speed=ram_speed, clock_hz=clock_hz, flash_timing=FlashTiming(**timing),
    )


_FLASH_TIMING_LIMITS = {"wait_states": 64, "icache_lines": 256, "dcache_lines": 256}
"""The largest values the timing plugin takes."""


def _byte_count(value: object, fail) -> int:
    """An address or size: a TOML integer (0x… too) or a string such as "512 KB" or "0x800"."""
    if isinstance(value, bool):
        raise fail(f"{value!r} is not a byte count")
    if isinstance(value, int):
        if value < 0:
            raise fail(f"{value} is negative")
        return value
    if isinstance(value, str):
        found = _BYTES.fullmatch(value.strip())
        if found:
            digits = found.group(1).replace("_", "")
            number = int(digits, 16) if digits[:2] in ("0x", "0X") else int(digits)
            return number * _UNITS[found.group(2)]
    raise fail(f"{value!r} is not a byte count (an integer such as 0x2000_0000, or a string such as \"128 KB\")")


def format_bytes(size: int) -> str:
    """A region size as a datasheet writes it: 16 KB, 4 MB, or bytes."""
    for unit, scale in (("MB", MB), ("KB", KB)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size:,} B"
