"""A large model's library is built in parts (`zig_printer.ZigPrinter.units`, as many as its size
says, `build.start_build(parts=...)`, one Zig process per core at a time): the same outputs, the
same public symbols, every symbol a part adds prefixed with the model's name and hidden, the same
files for the user, and the same parts on every machine."""

from __future__ import annotations

import ctypes
import struct
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import onnx
import pytest

from zant.backend import build, zig_printer
from zant.backend.build import start_build
from zant.backend.elf import SHT_SYMTAB, _archive_members, _sections
from zant.driver import CompileOptions, compile_model
from zant.errors import ZantError
from zant.runtime import load_compiled

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from models import mlp  # noqa: E402

STB_LOCAL, STV_HIDDEN, SHN_UNDEF = 0, 2, 0


def defined_globals(archive: Path) -> dict[str, bool]:
    """The global symbols the objects of a static library define → whether each is hidden."""
    symbols: dict[str, bool] = {}
    for member in _archive_members(archive.read_bytes()):
        endian, is64, sections, _ = _sections(member)
        for section in sections:
            if section[1] != SHT_SYMTAB:
                continue
            offset, size, link, entsize = section[4], section[5], section[6], section[9]
            names = sections[link][4]
            for position in range(offset + entsize, offset + size, entsize):
                if is64:
                    name, info, other, shndx, _, _ = struct.unpack_from(endian + "IBBHQQ", member, position)
                else:
                    name, _, _, info, other, shndx = struct.unpack_from(endian + "IIIBBH", member, position)
                if info >> 4 == STB_LOCAL or shndx == SHN_UNDEF:
                    continue
                text = member[names + name : member.index(b"\0", names + name)].decode()
                symbols[text] = other & 3 == STV_HIDDEN
    return symbols


def compile_both(tmp_path, monkeypatch, target: str):
    """The MLP compiled whole, then with even its small kernels (~100 lines) split in two."""
    onnx.save(mlp(), tmp_path / "mlp.onnx")
    whole = compile_model(tmp_path / "mlp.onnx", tmp_path / "whole", CompileOptions(name="mlp", target=target))
    monkeypatch.setattr(zig_printer, "unit_count", lambda lines: 2)
    split = compile_model(tmp_path / "mlp.onnx", tmp_path / "split", CompileOptions(name="mlp", target=target))
    return whole, split


def test_a_host_build_in_parts_computes_the_same_and_hides_its_symbols(tmp_path, monkeypatch):
    monkeypatch.setenv("ZANT_BUILD_CACHE", "0")
    whole, split = compile_both(tmp_path, monkeypatch, "host")
    # The user gets the same files: the units were for the build only.
    assert sorted(p.name for p in (tmp_path / "split").iterdir()) == sorted(p.name for p in (tmp_path / "whole").iterdir())
    for name in ("mlp.zig", "mlp.h", "mlp.plan.json", "mlp.weights.bin"):
        assert (tmp_path / "split" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
    feed = np.random.default_rng(0).standard_normal(whole.inputs[0].shape).astype(np.float32)
    expected, got = load_compiled(whole)(feed), load_compiled(split)(feed)
    for a, b in zip(expected, got, strict=True):
        np.testing.assert_array_equal(a, b)
    # Hidden: the library exports what the unsplit one does, not its parts' kernels or arenas.
    library = ctypes.CDLL(str(split.library_path))
    for symbol in ("mlp_predict", "mlp_check_plan", "mlp_plan_hash"):
        assert hasattr(library, symbol)
    for symbol in ("mlp_scratch", "mlp_constants", "mlp__kernel_fc"):
        assert not hasattr(library, symbol), symbol


def test_a_static_library_in_parts_has_the_same_public_symbols_and_prefixes_the_rest(tmp_path, monkeypatch):
    monkeypatch.setenv("ZANT_BUILD_CACHE", "0")
    whole, split = compile_both(tmp_path, monkeypatch, "cortex-m4")
    members = list(_archive_members(split.library_path.read_bytes()))
    assert len(members) == 2 and len(list(_archive_members(whole.library_path.read_bytes()))) == 1
    before, after = defined_globals(whole.library_path), defined_globals(split.library_path)
    public = {s for s, hidden in after.items() if not hidden}
    assert public == {s for s, hidden in before.items() if not hidden} >= {"mlp_predict", "mlp_check_plan"}
    added = set(after) - set(before)
    assert added and all(after[s] for s in added), after  # the kernels and arenas parts share: hidden
    assert any(s.startswith("mlp__kernel_") for s in added) and "mlp_constants" in added
    assert all(s.startswith("mlp_") for s in after), after  # two models link into one image
    assert split.sizes[".rodata"] == whole.sizes[".rodata"] and split.sizes[".bss"] == whole.sizes[".bss"]


def test_a_small_model_is_one_unit_and_a_large_one_is_split_by_its_size(tmp_path, monkeypatch):
    onnx.save(mlp(), tmp_path / "mlp.onnx")
    from zant.driver import compile_to_module

    module = compile_to_module(tmp_path / "mlp.onnx", "host").module
    assert list(zig_printer.zig_files(module, "mlp", units=True)) == ["mlp.zig", "mlp.weights.bin"]
    monkeypatch.setattr(zig_printer, "unit_count", lambda lines: 3)
    assert list(zig_printer.zig_files(module, "mlp")) == ["mlp.zig", "mlp.weights.bin"]  # no build, no units
    files = zig_printer.zig_files(module, "mlp", units=True)
    assert [f for f in files if ".unit" in f] == ["mlp.unit0.zig", "mlp.unit1.zig", "mlp.unit2.zig"]
    monkeypatch.undo()
    count = zig_printer.unit_count
    assert count(zig_printer.SPLIT_LINES - 1) == 1 and count(zig_printer.SPLIT_LINES) == 2
    assert count(2 * zig_printer.UNIT_LINES + 1) == 3 and count(10**6) == zig_printer.MAX_UNITS


def test_the_parts_are_the_same_on_one_core_and_on_eight(tmp_path, monkeypatch):
    """The printed parts depend on the module alone; only the build's parallelism follows the
    cores (`build.build_jobs`), and it never runs more Zig processes at once than that."""
    monkeypatch.setenv("ZANT_BUILD_CACHE", "0")
    onnx.save(mlp(), tmp_path / "mlp.onnx")
    monkeypatch.setattr(zig_printer, "UNIT_LINES", 1)  # even the MLP's kernels: every part it can have
    monkeypatch.setattr(zig_printer, "SPLIT_LINES", 1)
    built: dict[int, dict[str, bytes]] = {}
    peaks: dict[int, int] = {}
    real_start = build.start_build
    real_popen = subprocess.Popen
    for cores in (1, 8):
        monkeypatch.setattr("os.sched_getaffinity", lambda pid, n=cores: set(range(n)), raising=False)
        running: list = []
        peaks[cores] = 0

        def popen(command, *args, **kwargs):
            running[:] = [p for p in running if p.poll() is None]
            process = real_popen(command, *args, **kwargs)
            running.append(process)
            peaks[cores] = max(peaks[cores], len(running))
            return process

        def start(zig_path, out_path, *args, parts=(), **kwargs):
            built[cores] = {Path(p).name: Path(p).read_bytes() for p in [zig_path, *parts]}
            return real_start(zig_path, out_path, *args, parts=parts, **kwargs)

        monkeypatch.setattr(build.subprocess, "Popen", popen)
        monkeypatch.setattr(build, "start_build", start)
        compile_model(tmp_path / "mlp.onnx", tmp_path / f"cores{cores}", CompileOptions(name="mlp", target="cortex-m4"))
    assert len([f for f in built[1] if ".unit" in f]) >= 3
    assert built[1] == built[8]
    assert peaks[1] == 1 and peaks[8] > 1


# Each part is a root module of its own, so each says how it panics: as the generated parts do,
# without std's default handler, whose stack-trace code took ~17 s of CPU per object built.
NO_PANIC = 'pub const panic = @import("std").debug.no_panic;\n'
ROOT = NO_PANIC + """extern fn p__kernel_twice(x: u8) callconv(.c) u8;
export fn p_predict(x: u8) callconv(.c) u8 { return p__kernel_twice(x) + BASE; }
"""
PART = NO_PANIC + """fn twice(x: u8) callconv(.c) u8 { return x *% FACTOR; }
comptime { @export(&twice, .{ .name = "p__kernel_twice", .visibility = .hidden }); }
"""


def parts(folder: Path, factor: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "p.zig").write_text("// the whole model\n")
    (folder / "p.unit0.zig").write_text(ROOT.replace("BASE", "1"))
    (folder / "p.unit1.zig").write_text(PART.replace("FACTOR", str(factor)))
    return [folder / "p.unit0.zig", folder / "p.unit1.zig"]


def test_the_build_cache_covers_every_part(tmp_path, monkeypatch):
    monkeypatch.delenv("ZANT_BUILD_CACHE", raising=False)
    runs = []
    real = subprocess.Popen
    monkeypatch.setattr(build.subprocess, "Popen", lambda command, *a, **k: runs.append(command) or real(command, *a, **k))
    # Keys of this run only, in the usual cache: a fresh Zig global cache would rebuild compiler_rt.
    salt = uuid.uuid4().hex
    monkeypatch.setattr(build, "build_key", lambda *args, key=build.build_key: key(*args) + salt)

    def library(folder: str, factor: int) -> Path:
        sources = parts(tmp_path / folder, factor)
        return start_build(tmp_path / folder / "p.zig", tmp_path / folder / "libp.so", parts=sources).wait()

    first = library("a", 2)
    assert len(runs) == 3  # two objects, then the library
    assert ctypes.CDLL(str(first)).p_predict(5) == 11
    assert library("b", 2).read_bytes() == first.read_bytes() and len(runs) == 3  # the same parts: copied
    assert ctypes.CDLL(str(library("c", 3))).p_predict(5) == 16 and len(runs) == 6  # a changed part: rebuilt


def test_a_part_that_does_not_compile_is_named(tmp_path):
    sources = parts(tmp_path, 2)
    sources[1].write_text("fn broken( callconv(.c) void {}\n")
    with pytest.raises(build.ZigCompileError, match=r"p\.unit1\.zig:1:\d+: error"):
        start_build(tmp_path / "p.zig", tmp_path / "libp.so", parts=sources).wait()
    with pytest.raises(ZantError, match="two or more sources"):
        start_build(tmp_path / "p.zig", tmp_path / "libp.a", kind="static", parts=sources[:1])
    with pytest.raises(ZantError, match="not an exe"):
        start_build(tmp_path / "p.zig", tmp_path / "p.elf", kind="exe", parts=sources)
