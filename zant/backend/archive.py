"""Static archives (`ar`) any toolchain can read, in pure Python.

Zig names each member of a library after the path of its object in Zig's cache
(`.zig-cache/tmp/<hash>/NAME_zcu.o`, or an absolute path for a build in parts): GNU `ar x`
refuses to write such a path, and the name says nothing. `repack(path)` rewrites the archive
with the same objects under plain names (`NAME.o`, `NAME.unit1.o`, `compiler_rt.o`), in the
System V / GNU format binutils, LLVM and Zig all read:

* the magic `!<arch>\\n`, then members, each a 60-byte header (name ended by `/`, date,
  uid, gid, octal mode, decimal size, the two bytes `` `\\n ``) and its data, padded to an even
  offset with `\\n`;
* first the symbol index `/` (a linker finds the member defining a symbol with it: GNU ld
  refuses an archive without one): the symbol count and each symbol's member offset as
  big-endian 32-bit words, then the names, each ended by a NUL;
* names longer than 15 bytes in a `//` member (each `name/\\n`), referred to as `/<offset>`.

Dates, owners and modes are fixed (0, 0, 0, 644), so the same objects give the same bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from pathlib import Path

from zant.backend.elf import linkage_symbols
from zant.errors import ZantError

MAGIC = b"!<arch>\n"
_SPECIAL = ("/", "//", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED")


def read_members(data: bytes) -> list[tuple[str, bytes]]:
    """The members of an archive (GNU or BSD names) as (name, bytes), index and name table left out."""
    if not data.startswith(MAGIC):
        raise ZantError("not an ar archive")
    members: list[tuple[str, bytes]] = []
    long_names = b""
    position = len(MAGIC)
    while position + 60 <= len(data):
        header = data[position : position + 60]
        if header[58:60] != b"`\n":
            raise ZantError(f"malformed ar member header at offset {position}")
        raw = header[:16].decode("latin-1").rstrip(" ")
        size = int(header[48:58].decode("latin-1").strip())
        body = data[position + 60 : position + 60 + size]
        position += 60 + size + (size & 1)
        if raw == "//":
            long_names = body
            continue
        if raw in _SPECIAL:
            continue
        if raw.startswith("#1/"):  # BSD: the name's bytes before the data
            length = int(raw[3:])
            name, body = body[:length].rstrip(b"\0").decode("utf-8", "replace"), body[length:]
        elif raw.startswith("/") and raw[1:].isdigit():  # GNU: an offset into the name table
            start = int(raw[1:])
            end = long_names.index(b"/\n", start)
            name = long_names[start:end].decode("utf-8", "replace")
        else:
            name = raw.removesuffix("/")
        members.append((name, body))
    return members


def _header(name: str, size: int) -> bytes:
    header = f"{name:<16}{0:<12}{0:<6}{0:<6}{644:<8}{size:<10}`\n".encode("latin-1")
    assert len(header) == 60, name
    return header


def _padded(body: bytes) -> bytes:
    return body + (b"\n" if len(body) & 1 else b"")


def write_archive(members: Sequence[tuple[str, bytes]]) -> bytes:
    """An archive of `members` (name, bytes), with a symbol index of the global symbols each
    ELF member defines (in member order, as `ar rcs` writes it)."""
    names = [name for name, _ in members]
    if len(set(names)) != len(names):
        raise ZantError(f"an archive's members need distinct names: {names}")
    table = b""
    header_names = []
    for name in names:
        if len(name) <= 15 and "/" not in name:
            header_names.append(f"{name}/")
        else:
            header_names.append(f"/{len(table)}")
            table += name.encode("utf-8") + b"/\n"
    symbols = [
        [symbol for symbol in dict.fromkeys(linkage_symbols(body)[0])] if body[:4] == b"\x7fELF" else []
        for _, body in members
    ]
    count = sum(len(s) for s in symbols)
    strings = b"".join(symbol.encode("utf-8") + b"\0" for group in symbols for symbol in group)
    index_size = 4 + 4 * count + len(strings)
    offset = len(MAGIC) + 60 + index_size + (index_size & 1)
    if table:
        offset += 60 + len(table) + (len(table) & 1)
    offsets = []
    for (_, body), group in zip(members, symbols):
        offsets += [offset] * len(group)
        offset += 60 + len(body) + (len(body) & 1)
    index = struct.pack(f">I{count}I", count, *offsets) + strings
    out = [MAGIC, _header("/", len(index)), _padded(index)]
    if table:
        out += [_header("//", len(table)), _padded(table)]
    for header_name, (_, body) in zip(header_names, members):
        out += [_header(header_name, len(body)), _padded(body)]
    return b"".join(out)


def plain_name(member: str) -> str:
    """A member's file name without its folders and Zig's `_zcu` suffix: `NAME.o`."""
    base = member.replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, suffix = base.rpartition(".")
    if dot and stem.endswith("_zcu"):
        base = f"{stem.removesuffix('_zcu')}.{suffix}"
    return base


def repack(path: str | Path) -> list[str]:
    """Rewrite the archive at `path` with its members under `plain_name`s (and a fresh index);
    returns the names."""
    path = Path(path)
    members = [(plain_name(name), body) for name, body in read_members(path.read_bytes())]
    path.write_bytes(write_archive(members))
    return [name for name, _ in members]
