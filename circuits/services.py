"""The circuits service layer: every state change the API makes goes through here.

Views parse and authorise; these functions validate, write and enqueue. Work for
workers is enqueued with `transaction.on_commit`, so a worker never sees a push or a
run before it is committed.
"""
from __future__ import annotations

import json
import math
import time

from functools import lru_cache

from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction

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


NUL = "\x00"


def nul_paths(value, path: tuple = ()):
    """The paths (tuples of keys/indexes) in a JSON value of each string or object key
    holding a NUL character (U+0000): PostgreSQL's text and jsonb columns cannot store
    one (SQLite can), so every value the API stores is checked with this."""
    if isinstance(value, str):
        if NUL in value:
            yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and NUL in key:
                yield (*path, key)
            else:
                yield from nul_paths(item, (*path, key))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from nul_paths(item, (*path, i))


def _shown(part) -> str:
    return str(part).replace(NUL, "\\u0000")


NUL_MESSAGE = "contains a NUL character (\\u0000), which cannot be stored"


def document_nul_problems(document) -> list[dict]:
    """One problem per NUL character in a circuit document, `field` its dotted path
    (`document.nodes.1.params.predicate`) and `node` the node it is in."""
    problems = []
    nodes = document.get("nodes") if isinstance(document, dict) else None
    for path in nul_paths(document):
        dotted = ".".join(_shown(p) for p in ("document", *path))
        problem = {"message": f"{dotted}: {NUL_MESSAGE}", "field": dotted}
        if len(path) > 1 and path[0] == "nodes" and isinstance(nodes, list) and isinstance(path[1], int):
            node_id = nodes[path[1]].get("id") if isinstance(nodes[path[1]], dict) else None
            if isinstance(node_id, str) and NUL not in node_id:
                problem["node"] = node_id
        problems.append(problem)
    return problems


def validate_document(document) -> list[dict]:
    return document_nul_problems(document) + [p.as_dict() for p in check(document).problems]


def inspect_document(document) -> dict:
    """Every problem, and the output schema inferred for each node that has one
    (what the editor shows on a port; an edge carries its source node's schema)."""
    v = check(document)
    problems = document_nul_problems(document) + [p.as_dict() for p in v.problems]
    return {
        "valid": not problems,
        "errors": problems,
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
def add_version(circuit: Circuit, document, message: str = "") -> CircuitVersion:
    _require_valid(document)
    circuit = Circuit.objects.select_for_update().get(pk=circuit.pk)
    latest = circuit.latest_version
    version = CircuitVersion.objects.create(circuit=circuit, number=(latest.number + 1) if latest else 1, document=document,
                                            message=message)
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
                    problems.append({"message": f"row {i}, column {column!r}: {NUL_MESSAGE}", "row": i, "field": column})
                else:
                    values = enumerate(value) if isinstance(value, list) else [(None, value)]
                    bad = next(((j, v) for j, v in values if isinstance(v, float) and not math.isfinite(v)), None)
                    if bad is not None:
                        where = f" element {bad[0]}:" if bad[0] is not None else ""
                        problems.append({"message": f"row {i}, column {column!r}:{where} {bad[1]} is not a finite number",
                                         "row": i, "field": column})
    return problems


def _same_push(entry: Push, input_name: str, stored: list[dict]) -> bool:
    """Whether a logged push holds exactly this (normalised) push: same input, same records."""
    return entry.input == input_name and entry.records == json.loads(json.dumps(stored))


def _logged_push(run: Run, idempotency_key: str, input_name: str, stored: list[dict]) -> Push | None:
    """The push logged with this key, if any; 409 when it was a different push."""
    existing = Push.objects.filter(run=run, idempotency_key=idempotency_key).first()
    if existing is not None and not _same_push(existing, input_name, stored):
        raise ServiceError(
            f"This Idempotency-Key was used for a different push (token {existing.token}, input "
            f"{existing.input!r}); use a new key for new data.", 409,
            [{"field": "Idempotency-Key", "message": "this Idempotency-Key was used for a different push"}],
        )
    return existing


def push(run: Run, input_name: str, records, idempotency_key: str | None = None) -> tuple[Push, bool]:
    """Validate and durably log a push; enqueue its processing. Returns (push, created).

    The whole push is rejected (nothing written) if any record is bad. A repeated
    Idempotency-Key returns the push first logged with it, and logs nothing new, when
    it carries the same input and records (after normalisation; also once the run has
    stopped); with other data it is a 409.
    """
    from workers.broadcast import publish_lag
    from workers.dispatch import wake

    from .run_control import refuse_when_full

    check_idempotency_key(idempotency_key)
    if run.status in (RunStatus.STOPPED, RunStatus.FAILED) and not (
            idempotency_key and Push.objects.filter(run=run, idempotency_key=idempotency_key).exists()):
        raise ServiceError(f"Run {run.pk} is {run.status}; start a new run to push data.", 409)
    schema = input_schema(run, input_name)
    if isinstance(records, dict):
        records = [records]
    if not isinstance(records, list):
        raise ServiceError("A push is a JSON array of change records, e.g. [{\"insert\": {...}}].", 400)
    check_batch_size(len(records))
    problems = push_value_problems(records)
    try:
        changes = changes_from_records(records, schema, plan_for(run.version).primary_key(input_name))
    except DataInvalid as e:
        found = [p.as_dict() for p in e.problems]
        reported = {(p.get("row"), p.get("field")) for p in found}
        problems = sorted(found + [p for p in problems if (p["row"], p["field"]) not in reported],
                          key=lambda p: p.get("row", -1))
    if problems:
        raise ServiceError(f"The push was rejected: {len(problems)} problem(s) in its rows; nothing was stored.", 400,
                           problems)
    stored = [{"data": row_to_dict(row, schema), "weight": w} for row, w in changes]
    if idempotency_key:
        existing = _logged_push(run, idempotency_key, input_name, stored)
        if existing:
            return existing, False
    def log_it() -> Push:
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
            transaction.on_commit(lambda: publish_lag(run.pk))  # watchers see the new lag at once
        return entry

    try:
        entry = retry_on_deadlock(log_it)
    except IntegrityError:
        # A concurrent request with the same Idempotency-Key won the race.
        existing = _logged_push(run, idempotency_key, input_name, stored) if idempotency_key else None
        if existing is None:
            raise
        return existing, False
    return entry, True


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
