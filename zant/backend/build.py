"""Build a generated Zig file with the `ziglang` wheel (its `zig` binary), no system toolchain.

`build_zig(zig_path, out_path, target="host", optimize="ReleaseSafe", kind="shared")` runs
`zig build-lib -dynamic` (kind "shared"), `build-lib` ("static"), `build-obj` ("obj") or
`build-exe` ("exe", with a linker script in `extra`: the firmware images of `firmware.py`);
`start_build` starts one in the background (Zig is one process, mostly on one core: `zant compile`
verifies the module meanwhile) and its `wait` returns the output. A large model's library is
built in parts (`start_build(parts=...)`, the sources `zig_printer.ZigPrinter.units` prints):
an object per part, as many at once as there are cores (`build_jobs`), then the library of the objects. Each build has its own local
cache beside its output; Zig's global cache (compiler_rt and the other
runtime libraries, ~20 s to build per target and mode) is shared between builds, in
`$ZANT_CACHE_DIR` or the user's cache folder (`$XDG_CACHE_HOME/zant/zig`, `~/.cache/zant/zig`).
Zig locks its cache entries, so concurrent builds may share it.

A static library is one a firmware links as it is (`zant.backend.c_abi`): built without unwind
tables (`-fno-unwind-tables`: no `.ARM.extab` entries, no reference to the personality routines
`__aeabi_unwind_cpp_pr0/pr1` a code that never throws has no use for), with the float ABI asked
(`float_abi`: `c_abi.zig_target_flags`), and re-packed with its members under plain names
(`NAME.o`; Zig names them after its cache paths, which `ar x` refuses: `zant.backend.archive`).

Builds are cached: a build whose inputs are those of an earlier one (the Zig, blob and linker
script files of the source's folder, byte for byte, the output's name, the flags and the Zig
version) copies that build's output instead of running Zig (recompiling an unchanged model:
~0.05 s instead of seconds). The outputs live in `zig-builds/` beside Zig's global cache; set
`ZANT_BUILD_CACHE=0` to always run Zig (the benchmarks do).

Every Zig file built here is generated, so a compile error in one (`FILE.zig:L:C: error: …`) is a
Zant bug: `ZigCompileError`, an `InternalError` whose message is its first error line and where
the source is (the tools print `zant: internal error: generated Zig does not compile (this is a
Zant bug): …`, not Zig's output). Other failures (a link that does not fit, a toolchain that
cannot start) stay `ZantError`s with Zig's messages.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import shutil
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from zant.errors import InternalError, ZantError

from zant.backend.targets import TARGETS  # noqa: E402, F401  (the Zig flags of each target)

KINDS: dict[str, tuple[str, ...]] = {
    "shared": ("build-lib", "-dynamic"),
    "static": ("build-lib",),
    "obj": ("build-obj",),
    "exe": ("build-exe",),
}
OPTIMIZE_MODES = ("Debug", "ReleaseSafe", "ReleaseFast", "ReleaseSmall")

HOT_OPTIMIZE = {"ReleaseSmall": "ReleaseFast"}
"""The mode a model's hot module (`NAME.hot.zig`: the kernels `mark-hot-kernels` marked) is
built in, by the build's mode: for speed in a build for size (both have no safety checks, so
the code reads and writes what it did); any other mode builds every module alike."""

PER_MODULE_FLAGS = frozenset(("-fomit-frame-pointer", "-fno-unwind-tables", "-fstrip", "-fno-strip", "-fPIC"))
"""The flags of `extra` Zig takes per module: a build of several modules gives them to each."""


@dataclass(frozen=True)
class ZigModule:
    """A Zig module of a build of several (`start_build(modules=...)`): its import name, root
    source, optimize mode and the modules it imports."""

    name: str
    source: Path
    optimize: str
    deps: tuple[str, ...] = ()


def model_modules(folder: Path, name: str, optimize: str) -> list[ZigModule]:
    """Model `name`'s modules in `folder` when its printed files are two (`NAME.zig` and its hot
    kernels' `NAME.hot.zig`, which import each other; `zig_printer.hot_file_name`), else none."""
    hot = folder / f"{name}.hot.zig"
    if not hot.is_file():
        return []
    return [
        ZigModule(name, (folder / f"{name}.zig").resolve(), optimize, (f"{name}_hot",)),
        ZigModule(f"{name}_hot", hot.resolve(), HOT_OPTIMIZE.get(optimize, optimize), (name,)),
    ]


_COMPILE_ERROR = re.compile(r"^(\S[^:\n]*\.zig):\d+:\d+: error: .*$", re.MULTILINE)


class ZigCompileError(InternalError):
    """Zig rejected generated source: `first` is its first error line, `source` the file that
    line is in (or the copy the caller keeps: `kept_in`), `output` Zig's whole output."""

    def __init__(self, first: str, source: Path, output: str):
        super().__init__(f"generated Zig does not compile (this is a Zant bug): {first}; the source is {source}")
        self.first, self.source, self.output = first, source, output

    def kept_in(self, folder: Path) -> ZigCompileError:
        """The same error pointing at the source's copy in `folder`."""
        return ZigCompileError(self.first, Path(folder) / self.source.name, self.output)


def zig_failure(zig_path: str | Path, target: str, stderr: str, cwd: Path) -> ZantError | ZigCompileError:
    """The error for a failed build of `zig_path` (Zig run in `cwd`): a `ZigCompileError` if Zig
    names an error in a .zig file, else a `ZantError` with Zig's output."""
    stderr = stderr.strip()
    match = _COMPILE_ERROR.search(stderr)
    if match is None:
        return ZantError(f"zig failed to build {zig_path} for {target}:\n{stderr}")
    file = cwd / match.group(1)
    return ZigCompileError(file.name + match.group(0).strip()[len(match.group(1)) :], file, stderr)


@functools.cache
def zig_command() -> tuple[str, ...]:
    """How to run the wheel's Zig: its binary itself where the wheel has one beside its
    `__main__` (which only `exec`s it: starting a Python for that cost 20-70 ms per build),
    else `python -m ziglang`."""
    spec = importlib.util.find_spec("ziglang")
    if spec is not None and spec.origin is not None:
        binary = Path(spec.origin).parent / ("zig.exe" if os.name == "nt" else "zig")
        if os.access(binary, os.X_OK):
            return (str(binary),)
    return (sys.executable, "-m", "ziglang")


def default_global_cache() -> Path:
    """Where Zig's global cache lives unless a build names one."""
    if os.environ.get("ZANT_CACHE_DIR"):
        return Path(os.environ["ZANT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "zant" / "zig"


BUILD_INPUTS = (".zig", ".bin", ".ld")
"""The files of a source's folder a build may read (imports, `@embedFile`s, linker scripts)."""


def build_key(source: Path, out_path: Path, flags: Sequence[str]) -> str:
    """The cache key of a build: the output's name, the flags (paths by their file name), the
    Zig version and every file of the source's folder the build may read, by content."""
    from importlib.metadata import version

    digest = hashlib.sha256()
    for part in (version("ziglang"), source.name, out_path.name, *(Path(f).name if os.sep in f else f for f in flags)):
        digest.update(part.encode() + b"\0")
    for path in sorted(source.parent.iterdir()):
        if path.suffix in BUILD_INPUTS and path.is_file() and path != out_path:
            digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def cached_output(cache: Path, key: str, out_path: Path) -> bool:
    """Copy a cached build of `key` to `out_path`; False if there is none."""
    entry = cache / key[:2] / key
    try:
        shutil.copyfile(entry, out_path)
    except FileNotFoundError:
        return False
    shutil.copymode(entry, out_path)
    return True


def store_output(cache: Path, key: str, out_path: Path) -> None:
    """Keep a copy of a build's output under `key` (written whole, then renamed: concurrent
    builds see it complete or not at all)."""
    entry = cache / key[:2] / key
    entry.parent.mkdir(parents=True, exist_ok=True)
    partial = entry.with_name(f"{key}.{os.getpid()}.tmp")
    shutil.copy2(out_path, partial)
    os.replace(partial, entry)


def build_zig(
    zig_path: str | Path,
    out_path: str | Path,
    target: str = "host",
    optimize: str = "ReleaseSafe",
    kind: str = "shared",
    cache_dir: str | Path | None = None,
    extra: Sequence[str] = (),
    float_abi: str | None = None,
    modules: Sequence[ZigModule] = (),
) -> Path:
    """Compile `zig_path` into `out_path` (or `modules`, as `start_build`); on failure raise
    `ZigCompileError` (Zig names an error in a .zig file: a Zant bug) or `ZantError` with Zig's
    messages (see `zig_failure`)."""
    return start_build(zig_path, out_path, target, optimize, kind, cache_dir, extra, float_abi=float_abi, modules=modules).wait()


class ZigBuild:
    """A build `start_build` started: Zig runs in its own process (one per part of a build in
    parts, at most `jobs` at once, the others `queued`) while the caller does other work (`zant
    compile` verifies the module meanwhile); `wait` returns the output or raises as `build_zig`
    does, `cancel` stops it. A build in parts links its objects (`link`, the command, run once
    every part is built) when waited."""

    def __init__(self, process: subprocess.Popen | None, zig_path: str | Path, out_path: Path, target: str,
                 store: tuple[Path, str] | None, parts: Sequence[tuple[subprocess.Popen, Path]] = (),
                 link: Sequence[str] | None = None, archive: bool = False, jobs: int = 1):
        self.process, self.zig_path, self.out_path, self.target, self.store = process, zig_path, out_path, target, store
        self.parts, self.link, self.archive = list(parts), link, archive
        self.queued: list[tuple[list[str], Path]] = []  # parts not started yet: command, source
        self.jobs = max(1, jobs)

    def start_queued(self) -> None:
        """Start queued parts while fewer than `jobs` run."""
        while self.queued and len(self.parts) < self.jobs:
            command, source = self.queued.pop(0)
            process = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=self.out_path.parent
            )
            self.parts.append((process, source))

    def wait(self) -> Path:
        if self.parts or self.queued:
            try:
                self.start_queued()
                while self.parts:
                    process, source = self.parts.pop(0)
                    _, stderr = process.communicate()
                    if process.returncode != 0:
                        raise zig_failure(source, self.target, stderr, self.out_path.parent)
                    self.start_queued()
            except BaseException:
                self.cancel()
                raise
            assert self.link is not None
            self.process = subprocess.Popen(
                self.link, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=self.out_path.parent
            )
        if self.process is not None:
            _, stderr = self.process.communicate()
            if self.process.returncode != 0:
                raise zig_failure(self.zig_path, self.target, stderr, self.out_path.parent)
            self.process = None
            if self.archive:  # members named NAME.o, not after Zig's cache paths
                from zant.backend.archive import repack

                repack(self.out_path)
            if self.store is not None:
                store_output(*self.store, self.out_path)
        return self.out_path

    def cancel(self) -> None:
        for process in [p for p, _ in self.parts] + ([self.process] if self.process is not None else []):
            process.kill()
            process.communicate()
        self.parts, self.queued, self.process = [], [], None


def library_file(name: str, target: str) -> str:
    """The file of model NAME's library for `target`: a shared library on the host, else an archive."""
    return f"lib{name}.so" if target == "host" else f"lib{name}.a"


def library_name(out_path: Path) -> str:
    """`libNAME.so` / `libNAME.a` (`library_file`) → NAME."""
    return out_path.name.removeprefix("lib").split(".")[0]


def start_build(
    zig_path: str | Path,
    out_path: str | Path,
    target: str = "host",
    optimize: str = "ReleaseSafe",
    kind: str = "shared",
    cache_dir: str | Path | None = None,
    extra: Sequence[str] = (),
    parts: Sequence[str | Path] = (),
    float_abi: str | None = None,
    bundle_runtime: bool = False,
    modules: Sequence[ZigModule] = (),
) -> ZigBuild:
    """`build_zig`, started: Zig runs in the background until `wait` (a cached build is done).

    `float_abi` (an Arm core: `hard`, `softfp`, `soft`; None: the core's default,
    `c_abi.default_float_abi`) chooses the calling convention of a library; `bundle_runtime`
    puts Zig's compiler_rt into a static library (`compiler_rt.o`, `c_abi.RUNTIME_MODES`).

    `parts` (two or more sources beside `zig_path`, `zig_printer.ZigPrinter.units`): build the
    library `zig_path` would give from them instead, each an object, all at once, then link them
    (a shared or static library only); its cache entry covers them too (they are in the folder).

    `modules`: build these Zig modules (`ZigModule`; the first is the root, in place of
    `zig_path`) in one compilation, each in its own optimize mode (`model_modules`: a model's hot
    kernels for speed in a build for size), with `extra`'s per-module flags each."""
    if target not in TARGETS:
        raise ZantError(f"unknown target '{target}' (choose from {', '.join(TARGETS)})")
    if kind not in KINDS:
        raise ZantError(f"unknown build kind '{kind}' (choose from {', '.join(KINDS)})")
    if parts and modules:
        raise ZantError("a build is in parts or of several modules, not both")
    if parts and (kind not in ("shared", "static") or len(parts) < 2):
        raise ZantError(
            f"a build in parts makes a shared or static library from two or more sources, "
            f"not {'an' if kind == 'exe' else 'a'} {kind} from {len(parts)}"
        )
    if optimize not in OPTIMIZE_MODES:
        raise ZantError(f"unknown optimize mode '{optimize}' (choose from {', '.join(OPTIMIZE_MODES)})")
    if kind == "exe" and optimize == "ReleaseSmall":
        # An image keeps its symbol table in every mode (ReleaseSmall strips it by default):
        # `zant profile` finds its kernels by name. Not loaded: flash and RAM are unchanged.
        extra = (*extra, "-fno-strip")
    if kind == "static" and optimize in ("ReleaseFast", "ReleaseSmall") and "-fno-strip" not in extra:
        # A microcontroller library in a release mode carries no DWARF (the code and the global
        # symbols are the same): generating it was ~15% of Zig's time for ResNet-8 on the M4.
        # Debug and ReleaseSafe keep it for stepping through the model.
        extra = (*extra, "-fstrip")
    if target != "host" and optimize in ("ReleaseFast", "ReleaseSmall"):
        # Zig keeps r7 (Thumb) as a frame pointer in every mode: one register fewer for the
        # kernels' accumulators and a push/pop per call. Release images give it back; Debug and
        # ReleaseSafe keep it for debuggers' backtraces.
        extra = (*extra, "-fomit-frame-pointer")
    if kind == "static" and target != "host":
        # A library for a firmware's link: code that never throws needs no unwind tables, and
        # with them every object referenced __aeabi_unwind_cpp_pr0/pr1 (not in a -nostdlib link).
        extra = (*extra, "-fno-unwind-tables")
    from zant.backend.c_abi import zig_target_flags

    target_flags = zig_target_flags(target, float_abi)
    bundle = ("-fcompiler-rt",) if bundle_runtime and kind == "static" else ()  # the library's link only
    out_path = Path(out_path).resolve()
    out_path.parent.mkdir(parents=True, exist_ok=True)
    local_cache = out_path.parent / ".zig-cache"
    # Resolved here: Zig runs in the output folder, where a relative path would mean another place.
    global_cache = (Path(cache_dir) if cache_dir is not None else default_global_cache()).resolve()
    def command(kind_flags: Sequence[str], inputs: Sequence[str], out: Path, more: Sequence[str] = ()) -> list[str]:
        if modules:  # each module's deps, mode and flags before its -M; the rest for the build
            per_module = [f for f in extra if f in PER_MODULE_FLAGS]
            sources = [
                arg for m in modules for arg in (
                    *(a for dep in m.deps for a in ("--dep", dep)), f"-O{m.optimize}", *target_flags, *per_module,
                    f"-M{m.name}={m.source}",
                )
            ]
            return [
                *zig_command(), *kind_flags, *sources, f"-femit-bin={out}",
                "--cache-dir", str(local_cache), "--global-cache-dir", str(global_cache),
                *(() if kind == "exe" else ("-fno-emit-h",)), *(f for f in extra if f not in PER_MODULE_FLAGS), *more,
            ]
        return [
            *zig_command(), *kind_flags, *inputs,
            f"-O{optimize}", *target_flags, f"-femit-bin={out}",
            "--cache-dir", str(local_cache), "--global-cache-dir", str(global_cache),
            *(() if kind == "exe" else ("-fno-emit-h",)), *extra, *more,
        ]

    store = None
    if os.environ.get("ZANT_BUILD_CACHE", "1") != "0":
        builds = global_cache.parent / f"{global_cache.name}-builds"
        # A build in parts is linked under the library's own name (see below): in the key so a
        # library linked before under its first part's name is built again.
        split = [f"parts:{Path(part).name}" for part in parts] + ([f"name:{library_name(out_path)}"] if parts else [])
        split += [f"module:{m.name}:{m.source.name}:{m.optimize}:{','.join(m.deps)}" for m in modules]
        key = build_key(Path(zig_path).resolve(), out_path, [*KINDS[kind], optimize, *target_flags, *extra, *split, *bundle])
        store = builds, key
        if cached_output(*store, out_path):
            return ZigBuild(None, zig_path, out_path, target, None)
    if not parts:
        process = subprocess.Popen(
            command(KINDS[kind], [str(Path(zig_path).resolve())], out_path, bundle),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=out_path.parent,
        )
        return ZigBuild(process, zig_path, out_path, target, store, archive=kind == "static")
    # Each part an object, `build_jobs()` at a time (with the library's flags; position-independent for a
    # shared one), then the library of the objects (an archive, or a link: ~0.01 s).
    pic = ("-fPIC",) if kind == "shared" else ()
    objects_dir = local_cache / "parts"
    objects_dir.mkdir(parents=True, exist_ok=True)
    building = ZigBuild(None, zig_path, out_path, target, store, archive=kind == "static", jobs=build_jobs())
    objects = []
    for part in parts:
        source = Path(part).resolve()
        obj = objects_dir / (source.name.removesuffix(".zig") + ".o")
        objects.append(str(obj))
        building.queued.append((command(KINDS["obj"], [str(source)], obj, pic), source))
    try:
        building.start_queued()
    except BaseException:
        building.cancel()
        raise
    # The library's own name (`libNAME.so` → NAME), not its first part's: Zig names a link of
    # objects after the first, and a shared library's SONAME is what the loader looks for.
    building.link = command(KINDS[kind], objects, out_path, (*bundle, "--name", library_name(out_path)))
    return building


def build_jobs() -> int:
    """How many Zig processes a build in parts runs at once: one per core this process may use
    (the printed parts do not depend on it: `zig_printer.unit_count`)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


# The boards live in boards.py; other modules import them from here too.
from zant.backend.boards import BOARDS, DEFAULT_BOARDS, Board, Region, board_for  # noqa: E402, F401
