"""A run's input tables, kept in its database: what every accepted push adds up to.

`InputRow` (run, input, row key, row, weight) holds the input log folded in through
`Run.input_rows_through`; the pushes after it are in the log (as Arrow changes) and
folded in lazily, in bulk: when the table is read (`rows_of`) and, by the workers, when
a run is idle (`catch_up`). A push never folds anything.

A push to an input that checks its deletes (no primary key, no `allow_negative`:
dbsp/inputs.py) is refused whole if a record deletes a row the table will not hold
when the push applies. Inserts cannot make a row absent, so only the rows the push
deletes are looked up: their folded weight (one indexed read per chunk of keys) plus
their weight in the logged pushes not folded yet (their Arrow changes, filtered to
those rows column-wise). The check runs in the push's transaction with the run row
locked (runs/input_log.py), so concurrent pushes to a run see each other.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict

from django.conf import settings
from django.db import connection, transaction

import pyarrow as pa
import pyarrow.compute as pc

from circuits.services import ServiceError, plan_for
from dbsp import arrow_change
from dbsp.inputs import absent_deletes, checks_deletes
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


def check_deletes(run: Run, plan, input_name: str, change, items: list | None) -> None:
    """400 naming each record that deletes a row the input will not hold (nothing is
    written). `change` is the push's Arrow change; `items` its records as (row, weight)
    (item i = record i), or None when every row of `change` is a distinct record, in
    record order (the column path). Call in the push's transaction, run row locked."""
    if not checks_deletes(plan, input_name):
        return
    schema = plan.inputs[input_name]
    if items is None:
        negative = pc.less(change[arrow_change.WEIGHT], 0)
        if not pc.any(negative).as_py():
            return
        indexes = pc.indices_nonzero(negative).to_pylist()
        deleted = change.filter(negative)
        rows = arrow_change.rows(deleted, schema)
        checked = list(zip(rows, deleted[arrow_change.WEIGHT].to_pylist()))
    else:
        rows = list(dict.fromkeys(row for row, w in items if w < 0))
        if not rows:
            return
        deleted = arrow_change.from_zset([(row, -1) for row in rows], schema)
        indexes, checked = None, items
    weights = _held(run, input_name, schema, plan.primary_key(input_name), rows, deleted)
    problems = absent_deletes(input_name, schema, checked, lambda row: weights.get(row, 0), indexes)
    if problems:
        shown = "; ".join(p.message for p in problems[:3]) + ("; ..." if len(problems) > 3 else "")
        raise ServiceError(f"The push was rejected: {shown}. Nothing was stored.", 400,
                           [{"message": p.message, "row": p.row} for p in problems])


def _held(run: Run, input_name: str, schema, primary_key, rows: list[tuple], table) -> dict[tuple, int]:
    """row -> its weight in the input table before this push, for the given rows (also
    given as an Arrow `table`, row i = rows[i]): folded in, plus the unfolded log."""
    if run.input_rows_through > 0:
        folded = _Table(run, input_name, schema, primary_key)
        folded.load(rows)
        held = {row: folded.weight(row) for row in rows}
    else:  # nothing folded yet (catch_up writes the rows and moves input_rows_through at once): no lookup
        held = dict.fromkeys(rows, 0)
    keyed = _unfolded_keys(run, input_name, schema)
    if keyed is not None:
        wanted = arrow_change.row_keys(table, schema)
        keys, weights = keyed
        hits = pa.table({"k": keys, "w": weights}).filter(pc.is_in(keys, value_set=wanted))
        sums = dict(zip(*hits.group_by("k", use_threads=False).aggregate([("w", "sum")]).to_pydict().values()))
        for row, key in zip(rows, wanted.to_pylist()):
            held[row] += sums.get(key, 0)
    return held


#: the row keys and weights of logged pushes (`_unfolded_keys`), by push; a push's change
#: never changes once logged, so they are computed once per process, not once per check.
#: Keyed by the database, the push's id, when it was received and its row count: an id
#: used again (SQLite after a rollback, another test database) is another entry.
_KEYS: OrderedDict[tuple, tuple[pa.Array, pa.Array]] = OrderedDict()
_KEYS_ROWS = [0]
_KEYS_LOCK = threading.Lock()


def _unfolded_keys(run: Run, input_name: str, schema) -> tuple[pa.ChunkedArray, pa.ChunkedArray] | None:
    """(row keys, weights) of the pushes to `input_name` not folded into the input table
    yet, in log order; None when there are none. Each push's are computed from its change
    once and kept (up to DBSPWEB_DELETE_CHECK_CACHE_ROWS rows, least recently used out):
    a delete check of a busy run no longer decodes and hashes its whole unfolded log
    (a 10^6-row snapshot not folded yet cost each push of changes ~1 s)."""
    limit = settings.DELETE_CHECK_CACHE_ROWS
    pending = list(Push.objects.filter(run=run, input=input_name, sequence__gt=run.input_rows_through)
                   .order_by("sequence").values_list("pk", "received_at", "row_count"))
    if not pending:
        return None
    db = connection.settings_dict["NAME"]
    ids = [(db, pk, received.isoformat() if received else "", rows) for pk, received, rows in pending]
    with _KEYS_LOCK:
        found = {i: _KEYS[i] for i in ids if i in _KEYS}
        for i in found:
            _KEYS.move_to_end(i)
    missing = [i for i in ids if i not in found]
    if missing:
        by_pk = {i[1]: i for i in missing}
        for push in Push.objects.filter(pk__in=list(by_pk)).only("change", "records_json"):
            change = push.change_table(schema)
            keys = arrow_change.row_keys(change, schema)
            keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
            found[by_pk[push.pk]] = (keys, change[arrow_change.WEIGHT].combine_chunks())
        with _KEYS_LOCK:
            for i in missing:
                if i in found and i[3] <= limit:
                    _KEYS[i] = found[i]
                    _KEYS_ROWS[0] += i[3]
            while _KEYS_ROWS[0] > limit and _KEYS:
                gone, _ = _KEYS.popitem(last=False)
                _KEYS_ROWS[0] -= gone[3]
    parts = [found[i] for i in ids if i in found]
    if not parts:
        return None
    return pa.chunked_array([k for k, _ in parts]), pa.chunked_array([w for _, w in parts])


def catch_up(run: Run, max_rows: int | None = None) -> int:
    """Fold the logged pushes the input tables do not hold yet, in log order: all of
    them, or (max_rows) pushes up to about that many rows, at least one. Call with the
    run row locked. Returns the number of pushes folded."""
    if run.input_rows_through >= run.last_sequence:
        return 0
    plan = plan_for(run.version)
    pushes = Push.objects.filter(run=run, sequence__gt=run.input_rows_through).order_by("sequence")
    folded, rows, through = 0, 0, run.input_rows_through
    for entry in pushes.iterator(chunk_size=100):
        if max_rows is not None and folded and rows + entry.row_count > max_rows:
            break
        if entry.input in plan.inputs:
            schema = plan.inputs[entry.input]
            table = _Table(run, entry.input, schema, plan.primary_key(entry.input))
            table.fold(arrow_change.to_zset(entry.change_table(schema), schema))
        folded, rows, through = folded + 1, rows + entry.row_count, entry.sequence
    if max_rows is None:
        through = run.last_sequence
    run.input_rows_through = through
    Run.objects.filter(pk=run.pk).update(input_rows_through=through)
    return folded


#: rows folded per transaction by `fold_idle` (each holds the run row meanwhile)
FOLD_CHUNK_ROWS = 5_000


def fold_idle(run_id: int, seconds: float = 1.0) -> int:
    """Fold some of the log into the input tables while the run is idle (no push
    waiting to be applied), so that a push's delete check reads few unfolded pushes:
    chunks of about FOLD_CHUNK_ROWS rows, one transaction each, for at most `seconds`.
    The workers call it when they have drained a run. Returns the pushes folded."""
    started, folded = time.monotonic(), 0
    while time.monotonic() - started < seconds:
        if Push.objects.filter(run_id=run_id, applied_tick__isnull=True).exists():
            break  # ticks first
        with transaction.atomic():
            run = Run.objects.select_for_update().select_related("version").filter(pk=run_id).first()
            done = catch_up(run, FOLD_CHUNK_ROWS) if run is not None else 0
        if not done:
            break
        folded += done
    return folded


def rows_of(run: Run, input_name: str):
    """The input table's rows (a queryset in the order they first appeared), caught up."""
    if run.input_rows_through < run.last_sequence:
        with transaction.atomic():
            catch_up(Run.objects.select_for_update().select_related("version").get(pk=run.pk))
    return InputRow.objects.filter(run=run, input=input_name).order_by("pk")
