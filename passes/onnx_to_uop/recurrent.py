"""Recurrent layers: RNN, GRU, LSTM (filled in by its owner)."""

from __future__ import annotations

PATTERNS: tuple = ()
