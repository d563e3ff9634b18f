"""Small helpers the operator rules share: candidate input rows -> uses with weights, and
a stable order for rows (NULLs first, then by value)."""
from __future__ import annotations

import json

from ..zset import ZSet
from .steps import Use


def row_order(row: tuple):
    return tuple((v is not None, type(v).__name__, json.dumps(v) if isinstance(v, (list, dict)) else v)
                 for v in row)


def rows_of(*values: ZSet | None) -> set[tuple]:
    """The rows present in any of the values."""
    seen = set()
    for z in values:
        if z is not None:
            seen.update(r for r, _ in z)
    return seen


def uses(port: str, rows, after: ZSet, before: ZSet | None) -> list[Use]:
    """Contents (before None): the rows present in `after`. Change: the rows whose weight
    differs between `before` and `after`. In a stable order of rows."""
    out = []
    for r in sorted(rows, key=row_order):
        a = after.weight(r)
        if before is None:
            if a:
                out.append(Use(port, r, a))
        else:
            b = before.weight(r)
            if a != b:
                out.append(Use(port, r, a, b))
    return out


def same_or_changed(port: str, row: tuple, after: ZSet, before: ZSet | None) -> Use | None:
    """One input row as a use, whether it changed or not (the other side of a pair, a
    distinct's input...), or None when it is absent before and after."""
    a = after.weight(row)
    b = None if before is None else before.weight(row)
    if not a and not b:
        return None
    return Use(port, row, a, b)
