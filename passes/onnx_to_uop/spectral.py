"""Signal processing: DFT, STFT, window functions (filled in by its owner)."""

from __future__ import annotations

PATTERNS: tuple = ()
