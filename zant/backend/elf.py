"""Section sizes of ELF objects and static archives, in pure Python (no binutils).

`section_sizes(path) -> dict[str, int]` sums the sizes of the sections named `.text`, `.rodata`,
`.data`, `.bss` and `.zant` (and their `.text.*`-style subsections, as `-ffunction-sections` makes) over
an ELF file or every ELF member of an `ar` archive. `function_symbols(path)` lists the functions
of a linked image's symbol table (`zant profile` counts instructions per function);
`linkage_symbols(data)` the global symbols an object defines and those it needs (an archive's
index, the runtime symbols a library needs: `zant.backend.archive`, `zant.backend.c_abi`).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from zant.errors import ZantError

SECTIONS = (".text", ".rodata", ".data", ".bss", ".zant")
"""`.zant` groups the scratch arenas placed in a board's other memories (`.zant.<memory>`)."""


def _group(section_name: str) -> str | None:
    for group in SECTIONS:
        if section_name == group or section_name.startswith(group + "."):
            return group
    return None


def _sections(data: bytes) -> tuple[str, bool, list[tuple], int]:
    """(byte-order prefix, 64-bit, the section headers as tuples, the section-name table's index)."""
    if data[:4] != b"\x7fELF":
        raise ZantError("not an ELF file")
    is64 = data[4] == 2
    endian = "<" if data[5] == 1 else ">"
    if is64:
        shoff, = struct.unpack_from(endian + "Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(endian + "HHH", data, 0x3A)
        header = endian + "IIQQQQIIQQ"
    else:
        shoff, = struct.unpack_from(endian + "I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(endian + "HHH", data, 0x2E)
        header = endian + "IIIIIIIIII"
    return endian, is64, [struct.unpack_from(header, data, shoff + i * shentsize) for i in range(shnum)], shstrndx


def elf_section_sizes(data: bytes) -> dict[str, int]:
    _endian, _is64, sections, shstrndx = _sections(data)
    strtab_offset = sections[shstrndx][4]
    sizes = dict.fromkeys(SECTIONS, 0)
    for name_offset, _type, _flags, _addr, _offset, size, *_ in sections:
        end = data.index(b"\0", strtab_offset + name_offset)
        group = _group(data[strtab_offset + name_offset : end].decode("latin-1"))
        if group is not None:
            sizes[group] += size
    return sizes


def _archive_members(data: bytes):
    position = 8
    while position + 60 <= len(data):
        header = data[position : position + 60]
        name = header[:16].decode("latin-1").strip()
        size = int(header[48:58].decode("latin-1").strip())
        body = data[position + 60 : position + 60 + size]
        if name not in ("/", "//", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED"):
            if name.startswith("#1/"):  # BSD long name stored before the member data
                body = body[int(name[3:]) :]
            yield body
        position += 60 + size + (size & 1)


def section_sizes(path: str | Path) -> dict[str, int]:
    """`{".text": …, ".rodata": …, ".data": …, ".bss": …}` in bytes for an object or archive."""
    data = Path(path).read_bytes()
    if data.startswith(b"!<arch>\n"):
        total = dict.fromkeys(SECTIONS, 0)
        for member in _archive_members(data):
            if member[:4] == b"\x7fELF":
                for key, value in elf_section_sizes(member).items():
                    total[key] += value
        return total
    return elf_section_sizes(data)


SHT_SYMTAB = 2
STT_OBJECT = 1
STT_FUNC = 2


@dataclass(frozen=True)
class Symbol:
    name: str
    address: int  # without the Thumb bit
    size: int


def function_symbols(path: str | Path) -> list[Symbol]:
    """The functions (`STT_FUNC` symbols of non-zero size) of a linked ELF image, by address;
    a Thumb function's address without its low bit. Raises `ZantError` for a stripped image."""
    return _symbols(path, STT_FUNC)


def object_symbols(path: str | Path) -> list[Symbol]:
    """The data objects (`STT_OBJECT` symbols of non-zero size) of a linked ELF image, by address."""
    return _symbols(path, STT_OBJECT)


def symbol_addresses(path: str | Path) -> dict[str, int]:
    """Every named symbol of a linked ELF image (linker-script symbols too) → its address."""
    return {symbol.name: symbol.address for symbol in _symbols(path, None)}


def _symbols(path: str | Path, kind: int | None) -> list[Symbol]:
    """The symbols of type `kind` and non-zero size, or (None) every named one."""
    data = Path(path).read_bytes()
    endian, is64, sections, _ = _sections(data)
    symtab = next((s for s in sections if s[1] == SHT_SYMTAB), None)
    if symtab is None:
        raise ZantError(f"{Path(path).name} has no symbol table (stripped?)")
    offset, size, link, entsize = symtab[4], symtab[5], symtab[6], symtab[9]
    names_offset = sections[link][4]
    entry = endian + ("IBBHQQ" if is64 else "IIIBBH")
    symbols = []
    for position in range(offset, offset + size, entsize):
        if is64:
            name, info, _other, _shndx, value, length = struct.unpack_from(entry, data, position)
        else:
            name, value, length, info, _other, _shndx = struct.unpack_from(entry, data, position)
        if kind is not None and (info & 0xF != kind or length == 0):
            continue
        end = data.index(b"\0", names_offset + name)
        if kind is None and end == names_offset + name:
            continue
        address = value & ~1 if kind == STT_FUNC else value
        symbols.append(Symbol(data[names_offset + name : end].decode("utf-8", "replace"), address, length))
    return sorted(symbols, key=lambda s: (s.address, s.name))


SHN_UNDEF = 0
STB_LOCAL = 0


def linkage_symbols(data: bytes) -> tuple[list[str], list[str]]:
    """The global (and weak) symbols an ELF object defines and those it leaves undefined, each
    in symbol-table order: what a linker resolves between objects."""
    endian, is64, sections, _ = _sections(data)
    defined: list[str] = []
    undefined: list[str] = []
    for symtab in (s for s in sections if s[1] == SHT_SYMTAB):
        offset, size, link, entsize = symtab[4], symtab[5], symtab[6], symtab[9]
        names_offset = sections[link][4]
        entry = endian + ("IBBHQQ" if is64 else "IIIBBH")
        for position in range(offset + entsize, offset + size, entsize):  # entry 0 is null
            if is64:
                name, info, _other, shndx, _value, _length = struct.unpack_from(entry, data, position)
            else:
                name, _value, _length, info, _other, shndx = struct.unpack_from(entry, data, position)
            end = data.index(b"\0", names_offset + name)
            if info >> 4 == STB_LOCAL or end == names_offset + name:
                continue
            text = data[names_offset + name : end].decode("utf-8", "replace")
            (undefined if shndx == SHN_UNDEF else defined).append(text)
    return defined, undefined
