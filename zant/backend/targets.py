"""The targets as the backend builds for them: each record's Zig flags by target name
(`TARGETS`, the builder's table), derived from the records of `zant.targets` (which live below
the passes, so that they can read a module's `#zant.target`).
"""

from __future__ import annotations

from zant.targets import RECORDS

TARGETS: dict[str, tuple[str, ...]] = {name: t.zig_flags for name, t in RECORDS.items()}
"""Target name → its Zig flags (`Target.zig_flags`)."""
