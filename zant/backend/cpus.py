"""The host CPU as the vector code sees it: how wide a vector register is, how many there are, and
whether a fused multiply-add exists. `zant.pipelines.host_parameters` derives the host's vector
width and register tiles from these facts alone.

`host_cpu()` asks the Zig that builds the host library what its native CPU is (`zig build-obj
--show-builtin` with the host's flags: the CPU model and features the build itself targets), once
per process. If Zig cannot say, it reads /proc/cpuinfo (Linux); if that fails too, it takes the
conservative description of the machine's architecture (`fallback_cpu`: SSE2 on x86-64, NEON on
AArch64, which every such CPU has), warns (`CpuDetectionWarning`) and the compile goes on: a
failed detection costs speed, never a compile. The description's `source` says which it was.

`CPUS` names the descriptions for explicit use (`host_parameters(CPUS["x86-64-avx512"])`):

| name            | vector bytes | vector registers | FMA |
|-----------------|-------------:|-----------------:|-----|
| `x86-64-sse`    | 16           | 16               | no  |
| `x86-64-avx`    | 32           | 16               | no  |
| `x86-64-avx2`   | 32           | 16               | yes |
| `x86-64-avx512` | 64           | 32               | yes |
| `aarch64-neon`  | 16           | 32               | yes |
| `generic`       | 16           | 16               | no  |
"""

from __future__ import annotations

import functools
import os
import platform
import re
import subprocess
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

from zant.backend.build import zig_command
from zant.backend.targets import TARGETS


@dataclass(frozen=True)
class CpuDescription:
    """The facts of a CPU that decide Zant's vector code."""

    name: str
    """`CPUS` key of the same facts (`x86-64-avx2`), for messages."""
    arch: str
    """Zig's architecture name: `x86_64`, `aarch64`, …"""
    vector_bytes: int
    """Bytes of one vector register: 16 (SSE, NEON), 32 (AVX, AVX2), 64 (AVX-512)."""
    vector_registers: int
    """Vector registers the code may use: 16 (x86-64 up to AVX2), 32 (AVX-512, AArch64)."""
    fma: bool
    """A fused multiply-add instruction exists (`vfmadd`, `fmla`)."""
    source: str = ""
    """Where the description came from (`zig: znver3`, `/proc/cpuinfo`, `fallback: …`)."""

    def registers_per_vector(self, lanes: int, element_bytes: int = 4) -> int:
        """Registers one `lanes`-wide vector occupies (at least one)."""
        return max(1, -(-lanes * element_bytes // self.vector_bytes))

    def label(self) -> str:
        """`x86-64-avx2 (zig: znver3)`."""
        return f"{self.name} ({self.source})" if self.source else self.name


CPUS: dict[str, CpuDescription] = {
    c.name: c
    for c in (
        CpuDescription("x86-64-sse", "x86_64", 16, 16, False),
        CpuDescription("x86-64-avx", "x86_64", 32, 16, False),
        CpuDescription("x86-64-avx2", "x86_64", 32, 16, True),
        CpuDescription("x86-64-avx512", "x86_64", 64, 32, True),
        CpuDescription("aarch64-neon", "aarch64", 16, 32, True),
        CpuDescription("generic", "", 16, 16, False),
    )
}
"""The named CPU descriptions (see the module's table)."""


class CpuDetectionWarning(UserWarning):
    """The host CPU could not be detected: its code is tuned for a conservative description."""


def _named(name: str, source: str, arch: str | None = None) -> CpuDescription:
    cpu = CPUS[name]
    return replace(cpu, source=source, arch=arch or cpu.arch)


def describe_features(arch: str, features: set[str], source: str) -> CpuDescription:
    """The description of an `arch` CPU with these features (Zig's names, or /proc/cpuinfo's:
    `avx512f`, `avx2`, `avx`, `fma`; on Arm `neon` or `asimd`)."""
    if arch in ("x86_64", "x86"):
        if "avx512f" in features:
            cpu = _named("x86-64-avx512", source)
        elif "avx" in features:
            cpu = _named("x86-64-avx2" if "avx2" in features and "fma" in features else "x86-64-avx", source)
        else:
            cpu = _named("x86-64-sse", source)
        # 32-bit x86 reaches only the first 8 vector registers.
        return cpu if arch == "x86_64" else replace(cpu, arch=arch, vector_registers=8)
    if arch in ("aarch64", "aarch64_be") and features & {"neon", "asimd"}:
        return _named("aarch64-neon", source, arch)
    return _named("generic", source, arch)


_ARCH = re.compile(r"\.arch = \.(\w+),")
_MODEL = re.compile(r"\.model = &std\.Target\.\w+\.cpu\.(\w+),")
_FEATURES = re.compile(r"featureSet\(&\.\{(.*?)\}\)", re.DOTALL)


def parse_builtin(text: str) -> CpuDescription:
    """The CPU of `zig build-obj --show-builtin`'s output (its `cpu`: arch, model, features);
    ValueError if the output names none."""
    arch, model, features = _ARCH.search(text), _MODEL.search(text), _FEATURES.search(text)
    if arch is None or features is None:
        raise ValueError("Zig's builtin names no CPU")
    names = {f.strip().lstrip(".").strip('@"') for f in features.group(1).split(",")}
    return describe_features(arch.group(1), names - {""}, f"zig: {model.group(1) if model else arch.group(1)}")


def parse_cpuinfo(text: str, machine: str) -> CpuDescription:
    """The CPU of Linux's /proc/cpuinfo (its first `flags` or `Features` line) on `machine`
    (`platform.machine()`); ValueError if it has neither."""
    match = re.search(r"^(?:flags|Features)\s*:(.*)$", text, re.MULTILINE)
    if match is None:
        raise ValueError("/proc/cpuinfo has no flags line")
    return describe_features(zig_arch(machine), set(match.group(1).split()), "/proc/cpuinfo")


def zig_arch(machine: str) -> str:
    """Zig's name of `platform.machine()`'s architecture."""
    m = machine.lower()
    return {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64", "i386": "x86", "i686": "x86"}.get(m, m)


def fallback_cpu(machine: str, why: str) -> CpuDescription:
    """The conservative description of a `machine` whose CPU could not be detected: what every
    CPU of its architecture has (x86-64: SSE2, 16 registers, no FMA; AArch64: NEON)."""
    arch = zig_arch(machine)
    name = {"x86_64": "x86-64-sse", "aarch64": "aarch64-neon"}.get(arch, "generic")
    return _named(name, f"fallback: {why}", arch if arch else None)


ZIG_TIMEOUT = 30.0
"""Seconds Zig may take to print its builtin (it takes ~0.04 s) before detection gives up on it."""


def ask_zig() -> CpuDescription:
    """The native CPU as Zig builds for it (the host target's flags); ValueError, OSError or
    subprocess errors if Zig cannot say."""
    done = subprocess.run(
        [*zig_command(), "build-obj", "--show-builtin", *TARGETS["host"]],
        capture_output=True, text=True, timeout=ZIG_TIMEOUT, check=True,
    )
    return parse_builtin(done.stdout)


def detect_cpu(
    zig=ask_zig, cpuinfo: str | os.PathLike = "/proc/cpuinfo", machine: str | None = None
) -> CpuDescription:
    """The host's description: Zig's (`zig`), else /proc/cpuinfo's, else `fallback_cpu` with a
    `CpuDetectionWarning` naming why. Never raises."""
    machine = platform.machine() if machine is None else machine
    reasons = []
    try:
        return zig()
    except (OSError, ValueError, subprocess.SubprocessError) as error:
        reasons.append(f"Zig: {str(error).strip() or type(error).__name__}")
    try:
        return parse_cpuinfo(Path(cpuinfo).read_text(errors="replace"), machine)
    except (OSError, ValueError) as error:
        reasons.append(f"{cpuinfo}: {getattr(error, 'strerror', None) or error}")
    cpu = fallback_cpu(machine, "; ".join(reasons))
    warnings.warn(
        f"could not detect the host CPU ({'; '.join(reasons)}); tuning the host's vector code for "
        f"{cpu.name}, which may be slower than the CPU allows",
        CpuDetectionWarning, stacklevel=2,
    )
    return cpu


@functools.cache
def host_cpu() -> CpuDescription:
    """`detect_cpu()`, once per process."""
    return detect_cpu()


__all__ = [
    "CPUS", "CpuDescription", "CpuDetectionWarning", "describe_features", "detect_cpu", "fallback_cpu",
    "host_cpu", "parse_builtin", "parse_cpuinfo", "zig_arch",
]
