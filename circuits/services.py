"""The circuits service layer: every change to circuits, versions and sharing the API
makes goes through here. Views parse and authorise; these functions validate and write.
Runs, their input log and their control are one layer up (runs/)."""
from __future__ import annotations

import json
import re
from contextlib import contextmanager
from functools import lru_cache

from django.conf import settings
from django.db import transaction

from dbsp import budget, compile_plan
from dbsp.limits import document_problems
from dbsp.validate import check

from .authorship import attribute
from .models import Circuit, CircuitGrant, CircuitVersion, Tag, Visibility, new_share_token
from .signals import circuit_access_changed, circuit_deleting


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


#: expression problems that are bounds on the work of parsing it (not on its meaning)
_LIMIT = re.compile(r"\(limit MAX_EXPRESSION_(NESTING|DEPTH|CHARS)\b")


def refuse_beyond_limits(document) -> None:
    """A document beyond a bound of dbsp/limits.py (size, nesting, nodes, edges, fixed
    points) is refused (400 naming the limit) before anything else walks it."""
    problems = document_problems(document)
    if problems:
        raise ServiceError(f"The circuit document is refused: {problems[0].message}.", 400, [p.as_dict() for p in problems])


def refuse_expressions_beyond_limits(problems: list[dict]) -> None:
    """Problems that are bounds on the work of parsing an expression refuse the whole
    document (400 naming the limit), as a document beyond a bound does."""
    over = [p for p in problems if _LIMIT.search(p["message"])]
    if over:
        raise ServiceError(f"The circuit document is refused: {over[0]['message']}.", 400, over)


@contextmanager
def within_budget(work: str):
    """Run a request's `work` (compile, validate, plan, export) within
    DBSPWEB_COMPILE_SECONDS of wall-clock time; past it, ServiceError (400) naming the
    budget and where the work stopped (a line:column, or a node)."""
    seconds = settings.COMPILE_SECONDS
    try:
        with budget.deadline(seconds):
            yield
    except budget.BudgetExceeded as e:
        problem = {"field": "budget", "limit": "DBSPWEB_COMPILE_SECONDS", "message": str(e)}
        if e.line is not None:
            problem |= {"line": e.line, "column": e.column}
        raise ServiceError(f"The {work} took longer than its budget of {seconds:g} s (DBSPWEB_COMPILE_SECONDS)"
                           + (f"; it stopped at {e.where}" if e.where else "") + ".", 400, [problem]) from None


def validate_document(document) -> list[dict]:
    refuse_beyond_limits(document)
    return document_nul_problems(document) + [p.as_dict() for p in check(document).problems]


def inspect_document(document) -> dict:
    """Every problem, and the output schema inferred for each node that has one
    (what the editor shows on a port; an edge carries its source node's schema).
    A document beyond a limit, or with an expression beyond one (nesting, length), is
    refused with ServiceError (400) naming it: such a document is not inspected."""
    refuse_beyond_limits(document)
    v = check(document)
    problems = document_nul_problems(document) + [p.as_dict() for p in v.problems]
    refuse_expressions_beyond_limits(problems)
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
    """Change visibility and/or replace the grant list ([{"user": User, "can_operate": bool, "can_edit": bool}])."""
    if visibility is not None and visibility != circuit.visibility:
        circuit.visibility = visibility
        circuit.save(update_fields=["visibility", "updated_at"])
        notify_access_changed(circuit)
    if grants is not None:
        notify_access_changed(circuit)
        wanted = {g["user"].pk: {"can_operate": g["can_operate"], "can_edit": g.get("can_edit", False)} for g in grants}
        if circuit.owner_id in wanted:
            raise ServiceError("The owner needs no grant.", 400, [{"field": "grants", "message": "the owner cannot be granted access"}])
        CircuitGrant.objects.filter(circuit=circuit).exclude(user_id__in=wanted).delete()
        for user_id, rights in wanted.items():
            CircuitGrant.objects.update_or_create(circuit=circuit, user_id=user_id, defaults=rights)
    return circuit


def notify_access_changed(circuit: Circuit) -> None:
    """After the commit: who may read the circuit may have narrowed (signals.py)."""
    circuit_id = circuit.pk
    transaction.on_commit(lambda: circuit_access_changed.send(sender=Circuit, circuit_id=circuit_id))


def delete_circuit(circuit: Circuit) -> None:
    """Delete a circuit with its versions, runs, input log and outputs. The layers above
    delete their rows first (runs protect versions) and act once the delete commits
    (runs/lifecycle.py: workers release the engines of its active runs)."""
    with transaction.atomic():
        circuit_deleting.send(sender=Circuit, circuit=circuit)
        circuit.delete()


def revoke_share_token(circuit: Circuit) -> Circuit:
    """A new share token; links and headers with the old one stop working at once."""
    with transaction.atomic():
        circuit.share_token = new_share_token()
        circuit.save(update_fields=["share_token", "updated_at"])
        notify_access_changed(circuit)
    return circuit


@transaction.atomic
def add_version(circuit: Circuit, document, message: str = "", saver=None) -> CircuitVersion:
    """A new version holding `document`, naming who changed each item of its diff from the
    latest (circuits/authorship.py: the co-editors recorded for it, else `saver`)."""
    _require_valid(document)
    circuit = Circuit.objects.select_for_update().get(pk=circuit.pk)
    latest = circuit.latest_version
    authors = attribute(circuit, latest.document if latest else None, document, saver)
    version = CircuitVersion.objects.create(circuit=circuit, number=(latest.number + 1) if latest else 1, document=document,
                                            message=message, authors=authors)
    circuit.save(update_fields=["updated_at"])
    return version


@lru_cache(maxsize=256)
def _plan_of_version(version_id: int, document_json: str):
    return compile_plan(json.loads(document_json))


def plan_for(version: CircuitVersion):
    """The compiled plan of a (valid, immutable) circuit version, compiled once per process
    (and looked up once per instance: the lookup key is the document's JSON text)."""
    plan = version.__dict__.get("_plan")
    if plan is None:
        plan = version.__dict__["_plan"] = _plan_of_version(version.pk, json.dumps(version.document, sort_keys=True))
    return plan
