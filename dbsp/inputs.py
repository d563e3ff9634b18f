"""Input tables hold what was pushed: a delete must find the rows it deletes.

The contents of an input table are the integral of its pushed changes. A table without
a primary key is a multiset: a push may delete only rows the table holds, as many
copies as it holds. Its records are taken in order against the table as it will be when
the push applies (what earlier pushes left, then this push's earlier records), so a
delete of a row inserted earlier in the same push is fine, and deleting 2 copies of a
row held once is refused. A push with such a delete is refused whole:
`record 0: orders has no row {...} to delete`.

An input with `"allow_negative": true` is a plain Z-set (DBSP's own semantics): any
weight is accepted and a row's weight may go below zero. Keyed inputs (`primary_key`)
keep their upsert rules: a delete by key of an absent key is a no-op (dbsp/upsert.py).

Both the command line (an `InputTable` per input, in memory) and the server (the run's
input tables in its database, runs/input_tables.py) check with `absent_deletes`.
"""
from __future__ import annotations

import json
from typing import Callable, Iterable

from .errors import DataInvalid, Problem
from .types import Schema, row_to_dict
from .zset import ZSet


def checks_deletes(plan, input_name: str) -> bool:
    """Whether pushes to this input may only delete rows it holds: inputs without a
    primary key, unless they opt into Z-set semantics (`allow_negative`)."""
    op = plan.operators[input_name]
    return not getattr(op, "primary_key", None) and not getattr(op, "allow_negative", False)


def absent_deletes(name: str, schema: Schema, items: list[tuple[tuple, int]],
                   held: Callable[[tuple], int], indexes: list[int] | None = None) -> list[Problem]:
    """The records of a push (item i is record i) that delete more copies of a row than
    the table `name` holds at that point; `held(row)` is the row's weight before the push.
    With `indexes`, `items` are only some of the records, item k being record indexes[k]
    (enough when no row is in two records: only deletes can fail)."""
    running: dict[tuple, int] = {}
    problems = []
    for i, (row, weight) in zip(indexes if indexes is not None else range(len(items)), items):
        before = running[row] if row in running else held(row)
        running[row] = after = before + weight
        if weight < 0 and after < 0:
            shown = json.dumps(row_to_dict(row, schema))
            if before <= 0:
                message = f"record {i}: {name} has no row {shown} to delete"
            else:
                message = f"record {i}: {name} holds {before} of row {shown}; it cannot delete {-weight}"
            problems.append(Problem(message, row=i, node=name))
    return problems


class InputTable:
    """One input table's contents in memory (row -> weight), checking deletes: what the
    command line keeps per input."""

    def __init__(self, name: str, schema: Schema, checked: bool):
        self.name, self.schema, self.checked = name, schema, checked
        self.rows: dict[tuple, int] = {}

    def check(self, items: list[tuple[tuple, int]]) -> None:
        """Raise DataInvalid naming each record that deletes a row the table lacks."""
        if self.checked:
            problems = absent_deletes(self.name, self.schema, items, lambda row: self.rows.get(row, 0))
            if problems:
                raise DataInvalid(problems)

    def apply(self, change: Iterable[tuple[tuple, int]]) -> None:
        for row, weight in change:
            after = self.rows.get(row, 0) + weight
            if after:
                self.rows[row] = after
            else:
                self.rows.pop(row, None)

    def contents(self) -> ZSet:
        return ZSet(self.rows.items())
