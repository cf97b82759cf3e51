"""Resampling: Resize, Upsample, GridSample, Col2Im (filled in by its owner)."""

from __future__ import annotations

PATTERNS: tuple = ()
