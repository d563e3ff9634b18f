"""A run's input tables, kept in its database: what every accepted push adds up to.

Each accepted push is folded into `InputRow` (run, input, row key, row, weight) in the
transaction that logs it, after the run row is locked (runs/input_log.py): so the table
is the applied state plus every earlier accepted push still pending, in log order, and
concurrent pushes to a run see each other. Before folding, a push to an input that
checks its deletes (no primary key, no `allow_negative`: dbsp/inputs.py) is refused
whole if a record deletes a row the table does not hold then.

Per push: one hash per distinct row, one indexed read of the rows it touches and
bulk writes (chunked), so the work is proportional to the push, not to the table.
Runs from before the tables existed (`Run.input_rows_through` behind the log) are
caught up from the input log on their next push or read.
"""
from __future__ import annotations

import hashlib
import json

from django.db import connection, transaction

from circuits.services import ServiceError, plan_for
from dbsp.inputs import absent_deletes, checks_deletes
from dbsp.runtime import changes_from_records
from dbsp.types import row_to_dict

from .models import InputRow, Push, Run

CHUNK = 500  # rows per IN (...) list and per bulk write


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _hash(value) -> str:
    return _digest(json.dumps(value, separators=(",", ":")))


class _Table:
    """One input's rows touched by a push: key -> (id, weight), read in chunks."""

    def __init__(self, run: Run, input_name: str, schema, primary_key: list[str]):
        self.run, self.input, self.schema = run, input_name, schema
        self.index = [schema.names.index(k) for k in primary_key]
        self.keyed = bool(primary_key)
        self.keys: dict[tuple, tuple[str, str]] = {}
        self.held: dict[str, tuple[int, int]] = {}

    def key(self, row: tuple) -> str:
        return self.entry(row)[0]

    def entry(self, row: tuple) -> tuple[str, str]:
        """(the row's key, the row as JSON), computed once per distinct row."""
        found = self.keys.get(row)
        if found is None:
            data = row_to_dict(row, self.schema)
            text = json.dumps(data, separators=(",", ":"))
            key = _hash([data[self.schema.names[i]] for i in self.index]) if self.keyed else _digest(text)
            found = self.keys[row] = (key, text)
        return found

    def load(self, rows) -> None:
        wanted = list({self.key(row) for row in rows} - set(self.held))
        for i in range(0, len(wanted), CHUNK):
            found = InputRow.objects.filter(run=self.run, input=self.input, key__in=wanted[i:i + CHUNK])
            for pk, key, weight in found.values_list("pk", "key", "weight"):
                self.held[key] = (pk, weight)

    def weight(self, row: tuple) -> int:
        held = self.held.get(self.key(row))
        return held[1] if held else 0

    def fold(self, change) -> None:
        """Apply a change: unkeyed, weights add; keyed, an insert replaces the key's row
        and a delete removes it (dbsp/upsert.py's rules; a change has one record per key)."""
        change = list(change)
        self.load(row for row, _ in change)
        written, gone = [], []
        for row, w in change:
            key, text = self.entry(row)
            pk, old = self.held.get(key, (None, 0))
            after = (1 if w > 0 else 0) if self.keyed else old + w
            if after:
                written.append((self.run.pk, self.input, key, text, after))
            elif pk is not None:
                gone.append(pk)
        for i in range(0, len(gone), CHUNK):
            InputRow.objects.filter(pk__in=gone[i:i + CHUNK])._raw_delete(InputRow.objects.db)
        _upsert(written)
        self.held.clear()


def _upsert(rows: list[tuple]) -> None:
    """Insert (run, input, key, data JSON, weight) rows, or give the held ones their new
    row and weight: one statement run for many parameter sets (the ORM's bulk_create
    spends far more time building SQL than the database spends storing the rows)."""
    if not rows:
        return
    q = connection.ops.quote_name
    table = q(InputRow._meta.db_table)
    data = "CAST(%s AS jsonb)" if connection.vendor == "postgresql" else "%s"
    sql = (f"INSERT INTO {table} ({q('run_id')}, {q('input')}, {q('key')}, {q('data')}, {q('weight')}) "
           f"VALUES (%s, %s, %s, {data}, %s) ON CONFLICT ({q('run_id')}, {q('input')}, {q('key')}) "
           f"DO UPDATE SET {q('data')} = excluded.{q('data')}, {q('weight')} = excluded.{q('weight')}")
    with connection.cursor() as cursor:
        for i in range(0, len(rows), 5000):
            cursor.executemany(sql, rows[i:i + 5000])


def accept(run: Run, input_name: str, items: list, change) -> None:
    """Fold an accepted push (its records as (row, weight) items, item i = record i, and
    its consolidated change) into the run's input tables; 400 naming each record that
    deletes a row the table does not hold (nothing is written). Call inside the push's
    transaction with the run row locked, after `catch_up`."""
    plan = plan_for(run.version)
    schema = plan.inputs[input_name]
    table = _Table(run, input_name, schema, plan.primary_key(input_name))
    if checks_deletes(plan, input_name):
        table.load(row for row, w in items if w < 0)
        problems = absent_deletes(input_name, schema, items, table.weight)
        if problems:
            shown = "; ".join(p.message for p in problems[:3]) + ("; ..." if len(problems) > 3 else "")
            raise ServiceError(f"The push was rejected: {shown}. Nothing was stored.", 400,
                               [{"message": p.message, "row": p.row} for p in problems])
    table.fold(change)


def catch_up(run: Run) -> None:
    """Fold the logged pushes the input tables do not hold yet (runs from before them,
    or pushes written by other means) in log order; call with the run row locked."""
    if run.input_rows_through >= run.last_sequence:
        return
    plan = plan_for(run.version)
    pushes = Push.objects.filter(run=run, sequence__gt=run.input_rows_through).order_by("sequence")
    for entry in pushes.iterator(chunk_size=100):
        if entry.input in plan.inputs:
            table = _Table(run, entry.input, plan.inputs[entry.input], plan.primary_key(entry.input))
            table.fold(changes_from_records(entry.records, plan.inputs[entry.input], plan.primary_key(entry.input)))
    run.input_rows_through = run.last_sequence
    Run.objects.filter(pk=run.pk).update(input_rows_through=run.last_sequence)


def rows_of(run: Run, input_name: str):
    """The input table's rows (a queryset in the order they first appeared), caught up."""
    if run.input_rows_through < run.last_sequence:
        with transaction.atomic():
            catch_up(Run.objects.select_for_update().select_related("version").get(pk=run.pk))
    return InputRow.objects.filter(run=run, input=input_name).order_by("pk")
