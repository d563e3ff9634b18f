"""Why a row comes out of a grouped operator (aggregate, top_k, window_aggregate): the rows of its group.
Contents: the group's rows present at the tick; change: the group's rows that changed
at the tick (the aggregate retracts the group's old row and inserts its new one)."""
from __future__ import annotations

from .rows import rows_of, uses
from .steps import Group


def _group(op, key, after, before):
    rows = [x for x in rows_of(after["in"], before and before["in"]) if tuple(x[i] for i in op._keys) == key]
    return rows


def _label(op, key, count_after, count_before=None) -> str:
    name = ", ".join(f"{c} = {v!r}" for c, v in zip(op.group_by, key)) if op.group_by else "all rows"
    if count_before is None:
        return f"group {name}: {count_after} row{'s' if count_after != 1 else ''}"
    return f"group {name}: {count_before} row{'s' if count_before != 1 else ''} before, {count_after} after; the rows that changed"


def why_aggregate(op, row, after, before):
    key = tuple(row[: len(op.group_by)])
    rows = _group(op, key, after, before)
    present = uses("in", rows, after["in"], None)
    if before is None:
        return [Group(_label(op, key, len(present)), present)]
    previous = uses("in", rows, before["in"], None)
    return [Group(_label(op, key, len(present), len(previous)), uses("in", rows, after["in"], before["in"])),
            *_unchanged(rows, after, before)]


def _unchanged(rows, after, before) -> list[Group]:
    """The group's rows that did not change at the tick (the rest of what it aggregates)."""
    same = [u for u in uses("in", rows, after["in"], None) if before["in"].weight(u.row) == u.after]
    for u in same:
        u.before = u.after
    return [Group("the group's rows that did not change", same)] if same else []


def why_top_k(op, row, after, before):
    order = ", ".join(f"{c}{' desc' if d else ''}" for c, d in op.order)
    return _ordered(op, row, after, before, f"the first {op.k} by {order}")


def why_window_aggregate(op, row, after, before):
    """The row's partition: its frame is a run of those rows in the window's order."""
    order = ", ".join(f"{c}{' desc' if d else ''}" for c, d in op.order)
    return _ordered(op, row, after, before, f"in order of {order}" if order else "no order: the frame is the whole partition")


def _ordered(op, row, after, before, how: str):
    """The rows of the row's group, taken in an order (`how`): top_k, window_aggregate."""
    key = tuple(row[i] for i in op._keys)
    rows = _group(op, key, after, before)
    present = uses("in", rows, after["in"], None)
    if before is None:
        return [Group(f"{_label(op, key, len(present))}, {how}", present)]
    previous = uses("in", rows, before["in"], None)
    return [Group(f"{_label(op, key, len(present), len(previous))} ({how})",
                  uses("in", rows, after["in"], before["in"])), *_unchanged(rows, after, before)]


RULES = {"aggregate": why_aggregate, "top_k": why_top_k, "window_aggregate": why_window_aggregate}
