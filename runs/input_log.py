"""The input log: every push is validated whole, written (and committed) before it is
acknowledged, and then handed to the run's worker (runs/dispatch.py wake). A push's
completion token says when a tick applied it."""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass

import pyarrow as pa

from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction

from circuits.services import NUL, NUL_MESSAGE, ServiceError, nul_paths, plan_for
from dbsp import arrow_change
from dbsp.errors import DataInvalid
from dbsp.runtime import changes_and_items
from dbsp.types import value_problem

from . import dispatch, input_tables
from .broadcast import publish_lag
from .interface import input_schema
from .lag import refuse_when_full, with_push
from .models import Push, Run, RunStatus


def check_batch_size(rows: int) -> None:
    if rows > settings.PUSH_MAX_ROWS:
        raise ServiceError(
            f"A push may hold at most {settings.PUSH_MAX_ROWS} records; this one has {rows}. Split it.", 413,
            [{"field": "records", "message": f"{rows} records; the limit is {settings.PUSH_MAX_ROWS}",
              "row": settings.PUSH_MAX_ROWS}],
        )


IDEMPOTENCY_KEY_MAX = Push._meta.get_field("idempotency_key").max_length


def check_idempotency_key(key: str | None) -> None:
    """400 for a key the input log cannot store (longer than its column, or with a NUL)."""
    if not key:
        return
    if len(key) > IDEMPOTENCY_KEY_MAX:
        raise ServiceError(
            f"The Idempotency-Key header has {len(key)} characters; at most {IDEMPOTENCY_KEY_MAX} are allowed.", 400,
            [{"field": "Idempotency-Key", "message": f"{len(key)} characters; the limit is {IDEMPOTENCY_KEY_MAX}"}],
        )
    if NUL in key:
        raise ServiceError("The Idempotency-Key header contains a NUL character.", 400,
                           [{"field": "Idempotency-Key", "message": NUL_MESSAGE}])


def push_value_problems(records) -> list[dict]:
    """Values of pushed records the input log cannot store in every database: strings
    with a NUL character, and numbers that are not finite (NaN, ±Infinity: not JSON)."""
    problems = []
    if not isinstance(records, list):
        return problems
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            continue
        for key in ("insert", "delete", "data"):
            data = rec.get(key)
            if not isinstance(data, dict):
                continue
            for column, value in data.items():
                if isinstance(column, str) and NUL in column:
                    continue  # an unknown column: reported as such
                if any(True for _ in nul_paths(value)):
                    problems.append({"message": value_problem(i, column, NUL_MESSAGE), "row": i, "field": column})
                else:
                    values = enumerate(value) if isinstance(value, list) else [(None, value)]
                    bad = next(((j, v) for j, v in values if isinstance(v, float) and not math.isfinite(v)), None)
                    if bad is not None:
                        where = f"element {bad[0]}: " if bad[0] is not None else ""
                        problems.append({"message": value_problem(i, column, f"{where}{bad[1]} is not a finite number"),
                                         "row": i, "field": column})
    return problems


def validated(records: list, schema, primary_key: list[str]):
    """(the push's change as an Arrow table, its records as (row, weight) items or None).

    Column-wise first (dbsp/arrow_change.py); records that are not plainly valid (or
    hold a key twice, or a row twice with a weight other than 1 or -1) go the row path,
    which names every bad record and field: 400 with all of them. Items come from the
    row path, or from the column path when it consolidated a row held twice; otherwise
    (None) item i is row i of the table (no row twice)."""
    found = arrow_change.from_records_and_items(records, schema, primary_key)
    if found is not None:
        return found
    problems = push_value_problems(records)
    try:
        changes, items = changes_and_items(records, schema, primary_key)
    except DataInvalid as e:
        found = [p.as_dict() for p in e.problems]
        reported = {(p.get("row"), p.get("field")) for p in found}
        problems = sorted(found + [p for p in problems if (p["row"], p["field"]) not in reported],
                          key=lambda p: p.get("row", -1))
    if problems:
        raise ServiceError(f"The push was rejected: {len(problems)} problem(s) in its rows; nothing was stored.", 400,
                           problems)
    return arrow_change.from_zset(changes, schema), items


def _same_push(entry: Push, input_name: str, change) -> bool:
    """Whether a logged push holds exactly this (normalised) push: same input, same change."""
    if entry.input != input_name:
        return False
    if entry.change is not None:
        return arrow_change.from_ipc(entry.change).equals(change)
    schema = arrow_change.input_schema(change.schema)
    return entry.records == json.loads(json.dumps(arrow_change.records_json(change, schema)))


def _logged_push(run: Run, idempotency_key: str, input_name: str, stored) -> Push | None:
    """The push logged with this key, if any; 409 when it was a different push."""
    existing = Push.objects.filter(run=run, idempotency_key=idempotency_key).first()
    if existing is not None and not _same_push(existing, input_name, stored):
        raise ServiceError(
            f"This Idempotency-Key was used for a different push (token {existing.token}, input "
            f"{existing.input!r}); use a new key for new data.", 409,
            [{"field": "Idempotency-Key", "message": "this Idempotency-Key was used for a different push"}],
        )
    return existing


@dataclass
class Validated:
    """A push validated and ready to log: its input, its change as an Arrow table, its
    records as (row, weight) items (None on the column path), how many records it had."""

    input_name: str
    change: pa.Table
    items: list | None
    rows: int
    user_id: int | None = None
    idempotency_key: str | None = None


def validate(run: Run, input_name: str, records) -> Validated:
    """A push's records checked whole (400 naming every bad record and field, 413 when
    too many, 404 for an unknown input): nothing is written."""
    schema = input_schema(run, input_name)
    if isinstance(records, dict):
        records = [records]
    if not isinstance(records, list):
        raise ServiceError("A push is a JSON array of change records, e.g. [{\"insert\": {...}}].", 400)
    check_batch_size(len(records))
    stored, items = validated(records, schema, plan_for(run.version).primary_key(input_name))
    return Validated(input_name, stored, items, len(records))


def validate_columns(run: Run, input_name: str, arrays: dict) -> Validated | None:
    """A push of inserts given column-wise (Arrow arrays by column: a connector that reads
    typed columns), checked as `validate` checks records (arrow_change.from_columns); None
    when it must go the record path (which names what is wrong), 413 when too many."""
    schema = input_schema(run, input_name)
    rows = len(next(iter(arrays.values()))) if arrays else 0
    check_batch_size(rows)
    change = arrow_change.from_columns(arrays, schema, plan_for(run.version).primary_key(input_name))
    return None if change is None else Validated(input_name, change, None, rows)


def push(run: Run, input_name: str, records, idempotency_key: str | None = None,
         user_id: int | None = None) -> tuple[Push, bool]:
    """Validate and durably log a push; enqueue its processing. Returns (push, created).

    `records` are JSON change records, or a push `validate` already checked (a CSV's:
    runs/api/csv_push.py checks it to put its lines in the problems; it is not checked
    twice).

    The whole push is rejected (nothing written) if any record is bad, or deletes a row
    the input table will not hold when the push applies (runs/input_tables.py). A repeated
    Idempotency-Key returns the push first logged with it, and logs nothing new, when
    it carries the same input and records (after normalisation; also once the run has
    stopped); with other data it is a 409.
    """
    check_idempotency_key(idempotency_key)
    if run.status in (RunStatus.STOPPED, RunStatus.FAILED) and not (
            idempotency_key and Push.objects.filter(run=run, idempotency_key=idempotency_key).exists()):
        raise ServiceError(f"Run {run.pk} is {run.status}; start a new run to push data.", 409)
    pending = records if isinstance(records, Validated) else validate(run, input_name, records)
    pending.user_id, pending.idempotency_key = user_id, idempotency_key or None
    if idempotency_key:
        existing = _logged_push(run, idempotency_key, input_name, pending.change)
        if existing:
            return existing, False
    try:
        [entry] = log_pushes(run, [pending])
    except IntegrityError:
        # A concurrent request with the same Idempotency-Key won the race.
        existing = _logged_push(run, idempotency_key, input_name, pending.change) if idempotency_key else None
        if existing is None:
            raise
        return existing, False
    if isinstance(entry, ServiceError):
        raise entry
    return entry, True


def log_pushes(run: Run, pushes: list[Validated]) -> list[Push | ServiceError]:
    """Log validated pushes to one run, in order, in one transaction (a group commit:
    one lock of the run, one lag read, one commit and one wake-up for all of them).
    Each is logged exactly as it would be alone; one the run refuses gets its error
    (429 when DBSPWEB_MAX_PENDING_PUSHES are waiting, 400 for a delete of a row the
    input will not hold) and nothing of it is stored, while the others go in."""
    plan = plan_for(run.version)

    def log_them() -> list[Push | ServiceError]:
        results: list[Push | ServiceError] = []
        with transaction.atomic():
            locked = Run.objects.select_for_update().get(pk=run.pk)
            lag = None
            for pending in pushes:
                try:
                    # backpressure: 429 + Retry-After, nothing stored
                    lag = with_push(refuse_when_full(locked) if lag is None else _room(locked, lag), pending.rows)
                    # 400 for a delete of a row the input will not hold (nothing stored)
                    input_tables.check_deletes(locked, plan, pending.input_name, pending.change, pending.items)
                except ServiceError as e:
                    results.append(e)
                    if lag is not None and e.status == 400:
                        lag = _unpush(lag, pending.rows)
                    continue
                locked.last_sequence += 1
                results.append(Push.objects.create(
                    run=locked, sequence=locked.last_sequence, input=pending.input_name,
                    change=arrow_change.to_ipc(pending.change), row_count=pending.rows,
                    idempotency_key=pending.idempotency_key, user_id=pending.user_id,
                ))
            if any(isinstance(r, Push) for r in results):
                locked.save(update_fields=["last_sequence", "updated_at"])
                since, tick, last_lag = locked.created_at.isoformat(), locked.current_tick, lag
                # best effort once committed (robust: a failure to send is logged, never raised
                # as if the pushes were not logged; the sweeper re-drives a lost wake-up)
                transaction.on_commit(lambda: dispatch.wake_pushed(run.pk, since), robust=True)
                transaction.on_commit(lambda: publish_lag(run.pk, tick, last_lag), robust=True)  # watchers see the new lag at once
        return results

    return retry_on_deadlock(log_them)


def _room(run: Run, lag: dict) -> dict:
    """The lag before one more push of a batch, or the 429 refuse_when_full would give
    (the lag counted so far in the batch instead of read again)."""
    if lag["pushes"] < settings.MAX_PENDING_PUSHES:
        return lag
    return refuse_when_full(run)


def _unpush(lag: dict, rows: int) -> dict:
    """The lag without a push counted in it that was then refused."""
    pushes = lag["pushes"] - 1
    return {"pushes": pushes, "rows": lag["rows"] - rows, "ticks": math.ceil(pushes / max(settings.TICK_MAX_PUSHES, 1))}


#: PostgreSQL's SQLSTATEs for a transaction it aborted to break a deadlock or a
#: serialization conflict: the transaction changed nothing and may simply run again.
RETRYABLE_SQLSTATES = {"40P01", "40001"}


def retry_on_deadlock(write, attempts: int = 4):
    """Run a write transaction, again if the database aborted it as a deadlock victim
    (nothing was written). Any other error, or the last attempt's, propagates."""
    for attempt in range(attempts):
        try:
            return write()
        except OperationalError as e:
            if getattr(e.__cause__, "sqlstate", None) not in RETRYABLE_SQLSTATES or attempt == attempts - 1:
                raise
            time.sleep(0.02 * (attempt + 1))


def completion(run: Run, token: str) -> dict:
    try:
        run_id, sequence = (int(x) for x in token.split(":"))
    except ValueError:
        raise ServiceError(f"Malformed completion token {token!r} (expected 'run:sequence').", 400) from None
    if run_id != run.pk:
        raise ServiceError(f"Token {token!r} belongs to another run.", 400)
    entry = Push.objects.filter(run=run, sequence=sequence).first()
    if entry is None:
        raise ServiceError(f"No push with token {token!r}.", 404)
    if entry.applied_tick is not None:
        return {"token": token, "status": "complete", "tick": entry.applied_tick}
    if run.status in (RunStatus.STOPPED, RunStatus.FAILED):  # it never will be applied
        error = run.error if run.status == RunStatus.FAILED and run.error else (
            f"Run {run.pk} {'failed' if run.status == RunStatus.FAILED else 'was stopped'} before this push was applied.")
        return {"token": token, "status": "failed", "tick": None, "error": error}
    return {"token": token, "status": "pending", "tick": None}
