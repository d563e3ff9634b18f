"""Executors for operators whose result depends on the order of ticks, not only on the
integrated input: windows with lateness (dbsp/spark/windows.py) and keyed input tables
(dbsp/spark/keyed.py). None for every other operator."""
from __future__ import annotations

from ..operators.window import Window


def ordered_executor(ctx, op, schema, literal: bool):
    if op.kind == "input" and getattr(op, "primary_key", None):
        from .keyed import KeyedTable

        return KeyedTable(ctx, op, schema)
    if isinstance(op, Window) and not literal:
        from .windows import window_executor

        return window_executor(ctx, op, schema)
    return None
