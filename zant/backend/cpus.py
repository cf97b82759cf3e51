"""Which host CPU this is: the description (`zant.targets.CpuDescription`, named in
`zant.targets.CPUS`: vector bytes, vector registers, FMA) that the host's pass parameters
(`zant.targets.host_parameters`) and its `#zant.target<"host", cpu = …>` come from.

`host_cpu()` asks the Zig that builds the host library what its native CPU is (`zig build-obj
--show-builtin` with the host's flags: the CPU model and features the build itself targets), once
per process. If Zig cannot say, it reads /proc/cpuinfo (Linux); if that fails too, it takes the
conservative description of the machine's architecture (`fallback_cpu`: SSE2 on x86-64, NEON on
AArch64, which every such CPU has), warns (`CpuDetectionWarning`) and the compile goes on: a
failed detection costs speed, never a compile. The description's `source` says which it was.
"""

from __future__ import annotations

import functools
import os
import platform
import re
import subprocess
import warnings
from dataclasses import replace
from pathlib import Path

from zant.backend.build import zig_command
from zant.backend.targets import TARGETS
from zant.targets import CPUS, CpuDescription


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
            unit = "avx512"
        elif "avx" in features:
            unit = "avx2" if "avx2" in features and "fma" in features else "avx"
        else:
            unit = "sse"
        # 32-bit x86 reaches only the first 8 vector registers: `x86-…`.
        return _named(f"{'x86-64' if arch == 'x86_64' else 'x86'}-{unit}", source)
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
