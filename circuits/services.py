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

from .models import Circuit, CircuitGrant, CircuitVersion, Push, Run, RunStatus, Tag, Visibility, new_share_token


class ServiceError(Exception):
    """A request that cannot be carried out; `status` is the HTTP status to answer with."""

    def __init__(self, detail: str, status: int = 400, errors: list[dict] | None = None, headers: dict | None = None):
        self.detail = detail
        self.status = status
        self.errors = errors or []
        self.headers = headers or {}
        super().__init__(detail)


def validate_document(document) -> list[dict]:
    return [p.as_dict() for p in check(document).problems]


def inspect_document(document) -> dict:
    """Every problem, and the output schema inferred for each node that has one
    (what the editor shows on a port; an edge carries its source node's schema)."""
    v = check(document)
    return {
        "valid": not v.problems,
        "errors": [p.as_dict() for p in v.problems],
        "schemas": {node: schema.as_list() for node, schema in v.schemas.items()},
    }


def compiled_plan(document) -> dict:
    """The incremental plan of a document as a circuit document (inserted I, z^-1 and
    state shown as nodes); ServiceError listing every problem when it is invalid."""
    _require_valid(document)
    return compile_plan(document).describe()


def _require_valid(document) -> None:
    problems = validate_document(document)
    if problems:
        raise ServiceError("The circuit document is invalid.", 400, problems)


@transaction.atomic
def create_circuit(owner, name: str, description: str, visibility: str, document, tags: list[str] | None = None,
                   forked_from: Circuit | None = None) -> Circuit:
    _require_valid(document)
    circuit = Circuit.objects.create(owner=owner, name=name, description=description, visibility=visibility,
                                     forked_from=forked_from)
    CircuitVersion.objects.create(circuit=circuit, number=1, document=document)
    if tags:
        set_tags(circuit, tags)
    return circuit


def set_tags(circuit: Circuit, names: list[str]) -> None:
    """Replace a circuit's tags (lower-cased; the API checks they are slugs)."""
    tags = [Tag.objects.get_or_create(name=name)[0] for name in dict.fromkeys(n.strip().lower() for n in names)]
    circuit.tags.set(tags)


def fork_circuit(source: Circuit, user, name: str | None = None) -> Circuit:
    """A private copy owned by `user`: the source's latest document as version 1."""
    latest = source.latest_version
    if latest is None:
        raise ServiceError("The circuit has no version to fork.", 400)
    return create_circuit(
        user, name or f"{source.name} (fork)", source.description, Visibility.PRIVATE, latest.document,
        tags=list(source.tags.values_list("name", flat=True)), forked_from=source,
    )


@transaction.atomic
def update_share(circuit: Circuit, visibility: str | None = None, grants: list[dict] | None = None) -> Circuit:
    """Change visibility and/or replace the grant list ([{"user": User, "can_operate": bool}])."""
    if visibility is not None and visibility != circuit.visibility:
        circuit.visibility = visibility
        circuit.save(update_fields=["visibility", "updated_at"])
    if grants is not None:
        wanted = {g["user"].pk: g["can_operate"] for g in grants}
        if circuit.owner_id in wanted:
            raise ServiceError("The owner needs no grant.", 400, [{"field": "grants", "message": "the owner cannot be granted access"}])
        CircuitGrant.objects.filter(circuit=circuit).exclude(user_id__in=wanted).delete()
        for user_id, can_operate in wanted.items():
            CircuitGrant.objects.update_or_create(circuit=circuit, user_id=user_id, defaults={"can_operate": can_operate})
    return circuit


def delete_circuit(circuit: Circuit) -> None:
    """Delete a circuit with its versions, runs, input log and outputs; workers release
    the engines of its runs once the delete is committed."""
    from workers.tasks import stop_run as stop_task

    with transaction.atomic():
        run_ids = list(circuit.runs.values_list("pk", flat=True))
        active = list(circuit.runs.exclude(status__in=[RunStatus.STOPPED, RunStatus.FAILED]).values_list("pk", flat=True))
        Run.objects.filter(pk__in=run_ids).delete()  # before the versions they protect
        circuit.delete()
        for run_id in active:
            transaction.on_commit(lambda run_id=run_id: stop_task.delay(run_id))


def revoke_share_token(circuit: Circuit) -> Circuit:
    """A new share token; links and headers with the old one stop working at once."""
    circuit.share_token = new_share_token()
    circuit.save(update_fields=["share_token", "updated_at"])
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
    from workers.dispatch import start as start_task

    version = version or circuit.latest_version
    if version is None:
        raise ServiceError("The circuit has no version to run.", 400)
    try:
        compile_plan(version.document)
    except CircuitInvalid as e:
        raise ServiceError("The circuit document is invalid.", 400, [p.as_dict() for p in e.problems]) from None
    with transaction.atomic():
        run = Run.objects.create(circuit=circuit, version=version, created_by=user, queue=settings.CELERY_TASK_DEFAULT_QUEUE)
        transaction.on_commit(lambda: start_task(run.pk))
    return run


def stop_run(run: Run) -> Run:
    from workers.dispatch import stop as stop_task

    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run.pk)
        if run.status in (RunStatus.STOPPED, RunStatus.FAILED):
            return run
        run.status = RunStatus.STOPPED
        run.save(update_fields=["status", "updated_at"])
        transaction.on_commit(lambda: stop_task(run.pk))
    from workers.broadcast import publish_status

    publish_status(run)
    return run


def input_schema(run: Run, input_name: str):
    """The schema of one input of a run's circuit version; 404 naming the inputs if none."""
    plan = plan_for(run.version)
    schema = plan.inputs.get(input_name)
    if schema is None:
        names = ", ".join(plan.inputs) or "none"
        raise ServiceError(f"Run {run.pk} has no input {input_name!r} (inputs: {names}).", 404)
    return schema


def check_batch_size(rows: int) -> None:
    if rows > settings.PUSH_MAX_ROWS:
        raise ServiceError(
            f"A push may hold at most {settings.PUSH_MAX_ROWS} records; this one has {rows}. Split it.", 413,
            [{"field": "records", "message": f"{rows} records; the limit is {settings.PUSH_MAX_ROWS}",
              "row": settings.PUSH_MAX_ROWS}],
        )


def push(run: Run, input_name: str, records, idempotency_key: str | None = None) -> tuple[Push, bool]:
    """Validate and durably log a push; enqueue its processing. Returns (push, created).

    The whole push is rejected (nothing written) if any record is bad. A repeated
    Idempotency-Key returns the push first logged with it, and logs nothing new.
    """
    from workers.dispatch import wake

    from .run_control import refuse_when_full

    if run.status in (RunStatus.STOPPED, RunStatus.FAILED):
        raise ServiceError(f"Run {run.pk} is {run.status}; start a new run to push data.", 409)
    schema = input_schema(run, input_name)
    if isinstance(records, dict):
        records = [records]
    if not isinstance(records, list):
        raise ServiceError("A push is a JSON array of change records, e.g. [{\"insert\": {...}}].", 400)
    check_batch_size(len(records))
    if idempotency_key:
        existing = Push.objects.filter(run=run, idempotency_key=idempotency_key).first()
        if existing:
            return existing, False
    try:
        changes = changes_from_records(records, schema, plan_for(run.version).primary_key(input_name))
    except DataInvalid as e:
        raise ServiceError(f"The push was rejected: {len(e.problems)} problem(s) in its rows; nothing was stored.", 400,
                           [p.as_dict() for p in e.problems]) from None
    stored = [{"data": row_to_dict(row, schema), "weight": w} for row, w in changes]
    try:
        with transaction.atomic():
            locked = Run.objects.select_for_update().get(pk=run.pk)
            refuse_when_full(locked)  # backpressure: 429 + Retry-After, nothing stored
            locked.last_sequence += 1
            locked.save(update_fields=["last_sequence", "updated_at"])
            entry = Push.objects.create(
                run=locked, sequence=locked.last_sequence, input=input_name, records=stored,
                row_count=len(records), idempotency_key=idempotency_key or None,
            )
            transaction.on_commit(lambda: wake(run.pk))
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



def run_stats(run: Run, tick: int | None = None) -> dict:
    """Per-node frontier and stats (rows in/out, state rows, ms) of one tick of a run."""
    tick = run.current_tick if tick is None else tick
    out = run.ticks.filter(tick=tick).first()
    if out is None:
        if tick == run.current_tick == -1:
            return {"tick": -1, "ms": 0.0, "nodes": []}
        raise ServiceError(f"Run {run.pk} has no tick {tick} (current tick: {run.current_tick}).", 404)
    # Circuit order (JSON objects stored in PostgreSQL's jsonb lose their key order).
    order = {n: i for i, n in enumerate(_node_order(run.version.document))}
    node_ids = sorted(dict.fromkeys([*out.frontier, *out.stats]), key=lambda n: order.get(n, len(order)))
    nodes = [{"node": n, "frontier": out.frontier.get(n), **(out.stats.get(n) or {})} for n in node_ids]
    return {"tick": out.tick, "ms": out.ms, "nodes": nodes}


def _node_order(document: dict) -> list[str]:
    """Node ids in document order, each fixed point followed by its subcircuit's nodes."""
    ids = []
    for node in document.get("nodes", []):
        ids.append(node.get("id"))
        if isinstance(node.get("subcircuit"), dict):
            ids.extend(_node_order(node["subcircuit"]))
    return ids
