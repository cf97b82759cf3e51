"""Quantization: QuantizeLinear, DequantizeLinear, the QLinear* and *Integer ops (filled in by its owner)."""

from __future__ import annotations

PATTERNS: tuple = ()
