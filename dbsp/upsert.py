"""Tables with a primary key (upsert semantics), defined once for both backends.

Pushed records apply in order; `last_per_key` turns a push's records into an equivalent
change with one row per key (the last record for a key wins: an insert, or a delete by
key). `apply_change` applies such a change to the current table (key -> row) and
returns the table's change: for each key, −(row before) + (row after). A change given
directly as a Z-set (no order) may hold, per key, at most one insert (+1) and any
deletes (−1); deletes apply first. See dbsp/operators/input.py for the full rules.
"""
from __future__ import annotations

from .errors import DataInvalid, Problem
from .zset import ZSet


def key_of(row: tuple, index: list[int]) -> tuple:
    return tuple(row[i] for i in index)


def last_per_key(items: list[tuple[tuple, int]], index: list[int], first_row: int = 0) -> list[tuple[tuple, int]]:
    """Records (row, weight) in push order -> the last record of each key. A weight
    other than ±1 is rejected, naming the record."""
    problems, last = [], {}
    for i, (row, w) in enumerate(items):
        if w not in (1, -1):
            problems.append(Problem(
                f"row {first_row + i}: weight {w} on a table with a primary key (a record inserts or deletes one row)",
                row=first_row + i, field="weight"))
            continue
        key = key_of(row, index)
        last.pop(key, None)  # keep push order among the survivors
        last[key] = (row, w)
    if problems:
        raise DataInvalid(problems)
    return list(last.values())


def apply_change(table: dict[tuple, tuple], change, index: list[int], name: str) -> ZSet:
    """Apply a keyed change (iterable of (row, weight)) to `table` in place; return the
    table's change. Nothing is applied when the change is rejected."""
    inserts: dict[tuple, tuple] = {}
    deletes: set[tuple] = set()
    problems = []
    for row, w in change:
        key = key_of(row, index)
        if w == 1 and key not in inserts:
            inserts[key] = row
        elif w == -1:
            deletes.add(key)
        else:
            what = "two inserts" if w == 1 else f"weight {w}"
            problems.append(Problem(f"input {name!r}: {what} for primary key {list(key)!r} in one change", node=name))
    if problems:
        raise DataInvalid(problems)
    out = []
    for key in deletes | set(inserts):
        old, new = table.get(key), inserts.get(key)
        if old is not None:
            out.append((old, -1))
        if new is not None:
            out.append((new, 1))
            table[key] = new
        else:
            table.pop(key, None)
    return ZSet(out)


class KeyedTableReference:
    """The reference evaluator's keyed input: the current table by key. Its output is
    the whole table (relational circuits are evaluated as D(Q(I(in)))), or the table's
    change in a literal circuit."""

    def __init__(self, op, literal: bool):
        self.op, self.literal = op, literal
        self.table: dict[tuple, tuple] = {}
        self._index = [op.output_schema.names.index(k) for k in op.primary_key]

    def step(self, inputs):
        change = apply_change(self.table, inputs["in"] if inputs["in"] is not None else ZSet(), self._index, self.op.node_id)
        if self.literal:
            return change
        return ZSet((row, 1) for row in self.table.values())
