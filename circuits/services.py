"""The circuits service layer: every state change the API makes goes through here.

Views parse and authorise; these functions validate, write and enqueue. Work for
workers is enqueued with `transaction.on_commit`, so a worker never sees a push or a
run before it is committed.
"""
from __future__ import annotations

import json

from functools import lru_cache

from django.conf import settings
from django.db import IntegrityError, transaction

from dbsp import compile_plan
from dbsp.errors import CircuitInvalid, DataInvalid
from dbsp.runtime import changes_from_records
from dbsp.types import row_to_dict
from dbsp.validate import check

from .models import Circuit, CircuitVersion, Push, Run, RunStatus


class ServiceError(Exception):
    """A request that cannot be carried out; `status` is the HTTP status to answer with."""

    def __init__(self, detail: str, status: int = 400, errors: list[dict] | None = None):
        self.detail = detail
        self.status = status
        self.errors = errors or []
        super().__init__(detail)


def validate_document(document) -> list[dict]:
    return [p.as_dict() for p in check(document).problems]


def _require_valid(document) -> None:
    problems = validate_document(document)
    if problems:
        raise ServiceError("The circuit document is invalid.", 400, problems)


@transaction.atomic
def create_circuit(owner, name: str, description: str, visibility: str, document) -> Circuit:
    _require_valid(document)
    circuit = Circuit.objects.create(owner=owner, name=name, description=description, visibility=visibility)
    CircuitVersion.objects.create(circuit=circuit, number=1, document=document)
    return circuit


@transaction.atomic
def add_version(circuit: Circuit, document) -> CircuitVersion:
    _require_valid(document)
    circuit = Circuit.objects.select_for_update().get(pk=circuit.pk)
    latest = circuit.latest_version
    version = CircuitVersion.objects.create(circuit=circuit, number=(latest.number + 1) if latest else 1, document=document)
    circuit.save(update_fields=["updated_at"])
    return version


@lru_cache(maxsize=256)
def _plan_of_version(version_id: int, document_json: str):
    return compile_plan(json.loads(document_json))


def plan_for(version: CircuitVersion):
    """The compiled plan of a (valid, immutable) circuit version, compiled once per process."""
    return _plan_of_version(version.pk, json.dumps(version.document, sort_keys=True))


def run_interface(run: Run) -> dict:
    """The inputs (with schemas) and views of a run's circuit version."""
    plan = plan_for(run.version)
    return {
        "inputs": [{"name": name, "schema": schema.as_list()} for name, schema in plan.inputs.items()],
        "views": list(plan.views),
    }


def start_run(circuit: Circuit, user, version: CircuitVersion | None = None) -> Run:
    from workers.tasks import start_run as start_task

    version = version or circuit.latest_version
    if version is None:
        raise ServiceError("The circuit has no version to run.", 400)
    try:
        compile_plan(version.document)
    except CircuitInvalid as e:
        raise ServiceError("The circuit document is invalid.", 400, [p.as_dict() for p in e.problems]) from None
    with transaction.atomic():
        run = Run.objects.create(circuit=circuit, version=version, created_by=user)
        transaction.on_commit(lambda: start_task.delay(run.pk))
    return run


def stop_run(run: Run) -> Run:
    from workers.tasks import stop_run as stop_task

    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run.pk)
        if run.status in (RunStatus.STOPPED, RunStatus.FAILED):
            return run
        run.status = RunStatus.STOPPED
        run.save(update_fields=["status", "updated_at"])
        transaction.on_commit(lambda: stop_task.delay(run.pk))
    from workers.broadcast import publish_status

    publish_status(run)
    return run


def push(run: Run, input_name: str, records, idempotency_key: str | None = None) -> tuple[Push, bool]:
    """Validate and durably log a push; enqueue its processing. Returns (push, created).

    The whole push is rejected (nothing written) if any record is bad. A repeated
    Idempotency-Key returns the push first logged with it, and logs nothing new.
    """
    from workers.tasks import process_run

    if run.status in (RunStatus.STOPPED, RunStatus.FAILED):
        raise ServiceError(f"Run {run.pk} is {run.status}; start a new run to push data.", 409)
    plan = plan_for(run.version)
    schema = plan.inputs.get(input_name)
    if schema is None:
        names = ", ".join(plan.inputs) or "none"
        raise ServiceError(f"Run {run.pk} has no input {input_name!r} (inputs: {names}).", 404)
    if isinstance(records, dict):
        records = [records]
    if not isinstance(records, list):
        raise ServiceError("A push is a JSON array of change records, e.g. [{\"insert\": {...}}].", 400)
    if len(records) > settings.PUSH_MAX_ROWS:
        raise ServiceError(
            f"A push may hold at most {settings.PUSH_MAX_ROWS} records; this one has {len(records)}. Split it.", 413
        )
    if idempotency_key:
        existing = Push.objects.filter(run=run, idempotency_key=idempotency_key).first()
        if existing:
            return existing, False
    try:
        changes = changes_from_records(records, schema)
    except DataInvalid as e:
        raise ServiceError(f"The push was rejected: {len(e.problems)} problem(s) in its rows; nothing was stored.", 400,
                           [p.as_dict() for p in e.problems]) from None
    stored = [{"data": row_to_dict(row, schema), "weight": w} for row, w in changes]
    try:
        with transaction.atomic():
            locked = Run.objects.select_for_update().get(pk=run.pk)
            locked.last_sequence += 1
            locked.save(update_fields=["last_sequence", "updated_at"])
            entry = Push.objects.create(
                run=locked, sequence=locked.last_sequence, input=input_name, records=stored,
                row_count=len(records), idempotency_key=idempotency_key or None,
            )
            transaction.on_commit(lambda: process_run.delay(run.pk))
    except IntegrityError:
        # A concurrent request with the same Idempotency-Key won the race.
        existing = Push.objects.filter(run=run, idempotency_key=idempotency_key).first()
        if existing is None:
            raise
        return existing, False
    return entry, True


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
    done = entry.applied_tick is not None
    return {"token": token, "status": "complete" if done else "pending", "tick": entry.applied_tick}


def integrated_views(run: Run, upto_tick: int | None = None) -> dict[str, list[dict]]:
    """Each output view's contents (the integral of its deltas) as of a tick."""
    views: dict[str, dict[str, tuple[dict, int]]] = {}
    ticks = run.ticks.all()
    if upto_tick is not None:
        ticks = ticks.filter(tick__lte=upto_tick)
    for view in run_interface(run)["views"]:
        views[view] = {}
    for out in ticks.order_by("tick").only("deltas"):
        for view, rows in out.deltas.items():
            acc = views.setdefault(view, {})
            for r in rows:
                key = json.dumps(r["data"], sort_keys=True)
                data, w = acc.get(key, (r["data"], 0))
                w += r["weight"]
                if w:
                    acc[key] = (data, w)
                else:
                    acc.pop(key, None)
    return {view: [{"data": d, "weight": w} for _, (d, w) in sorted(acc.items())] for view, acc in views.items()}

