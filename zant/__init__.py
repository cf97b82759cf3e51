"""Zant: ONNX models compiled to dependency-free Zig for microcontrollers.

The Python API is `zant.compile(model, target=..., board=...)`, returning a `zant.Model`
(`zant.api`); it is imported on first use, so `import zant` loads nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zant.api import FirmwareRun, Model, ProfileReport, compile

__all__ = ["compile", "Model", "FirmwareRun", "ProfileReport"]


def __getattr__(name: str):
    if name in __all__:
        from zant import api

        return getattr(api, name)
    raise AttributeError(f"module 'zant' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
