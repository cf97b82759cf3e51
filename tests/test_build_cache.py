"""`build_zig` reuses an earlier build whose inputs are the same, byte for byte, and only then."""

from __future__ import annotations

import subprocess

import pytest

from zant.backend import build
from zant.backend.build import build_zig

SOURCE = """const blob align(4) = @embedFile("k.weights.bin").*;
export fn k_first() callconv(.c) u8 { return blob[0]; }
"""


@pytest.fixture
def zig_runs(monkeypatch):
    """The commands `build_zig` runs Zig with, in order (Zig still runs)."""
    runs = []
    real = subprocess.Popen

    def recording(command, *args, **kwargs):
        runs.append(command)
        return real(command, *args, **kwargs)

    monkeypatch.setattr(build.subprocess, "Popen", recording)
    monkeypatch.delenv("ZANT_BUILD_CACHE", raising=False)
    return runs


def sources(folder, blob: bytes):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "k.zig").write_text(SOURCE)
    (folder / "k.weights.bin").write_bytes(blob)
    return folder / "k.zig"


def test_an_unchanged_build_is_copied_and_a_changed_one_rebuilt(tmp_path, zig_runs, monkeypatch):
    cache = tmp_path / "zig"
    first = build_zig(sources(tmp_path / "a", b"\x01\x02"), tmp_path / "a" / "k.o", kind="obj", cache_dir=cache)
    assert len(zig_runs) == 1
    # The same sources in another folder: no Zig run, the same object.
    again = build_zig(sources(tmp_path / "b", b"\x01\x02"), tmp_path / "b" / "k.o", kind="obj", cache_dir=cache)
    assert len(zig_runs) == 1 and again.read_bytes() == first.read_bytes()
    # A changed byte of the blob, another mode, another target: each builds.
    build_zig(sources(tmp_path / "c", b"\x07\x02"), tmp_path / "c" / "k.o", kind="obj", cache_dir=cache)
    build_zig(sources(tmp_path / "d", b"\x01\x02"), tmp_path / "d" / "k.o", "host", "Debug", "obj", cache_dir=cache)
    build_zig(sources(tmp_path / "e", b"\x01\x02"), tmp_path / "e" / "k.o", "cortex-m4", kind="obj", cache_dir=cache)
    assert len(zig_runs) == 4
    assert (tmp_path / "c" / "k.o").read_bytes() != first.read_bytes()
    # ZANT_BUILD_CACHE=0 always runs Zig.
    monkeypatch.setenv("ZANT_BUILD_CACHE", "0")
    build_zig(sources(tmp_path / "f", b"\x01\x02"), tmp_path / "f" / "k.o", kind="obj", cache_dir=cache)
    assert len(zig_runs) == 5


def test_a_target_whose_zig_flags_change_is_rebuilt(tmp_path, zig_runs, monkeypatch):
    """The key holds the target's Zig flags, not only its name: a Zant release that gives a core
    another CPU feature (the Cortex-M33's DSP extension) must not reuse the old objects."""
    cache = tmp_path / "zig"
    build_zig(sources(tmp_path / "a", b"\x01"), tmp_path / "a" / "k.o", "cortex-m33", kind="obj", cache_dir=cache)
    flags = build.TARGETS["cortex-m33"]
    monkeypatch.setitem(build.TARGETS, "cortex-m33", tuple(f.removesuffix("+dsp") for f in flags))
    build_zig(sources(tmp_path / "b", b"\x01"), tmp_path / "b" / "k.o", "cortex-m33", kind="obj", cache_dir=cache)
    assert len(zig_runs) == 2
