"""Who gets which status code, for every endpoint x every kind of requester x every
visibility. One row per endpoint: adding an endpoint is adding a row.

Requesters: the owner; a user granted read access (`viewer`), `can_operate`
(`operator`) or `can_edit` (`editor`: saves versions, co-edits; not rename/delete/share); another user and an anonymous client, each without and with the
circuit's share token (header X-Share-Token). Each expected entry is a triple for the
circuit being (private, unlisted, public); OK stands for the row's success code.
"""
from dataclasses import dataclass, field

import pytest
from rest_framework.test import APIClient

from circuits import services
from circuits.models import CircuitGrant, Comment, CommentThread
from connectors.models import Connector
from runs.models import Explanation, Push, Run, Verification
from tests.conftest import example

pytestmark = pytest.mark.django_db

OK = "ok"
VISIBILITIES = ("private", "unlisted", "public")
ACTORS = ("owner", "editor", "operator", "viewer", "other", "other+token", "anon", "anon+token")

# Reading: private is invisible to others (404), unlisted needs the token.
READ = {
    "owner": (OK, OK, OK), "editor": (OK, OK, OK), "operator": (OK, OK, OK), "viewer": (OK, OK, OK),
    "other": (404, 404, OK), "other+token": (404, OK, OK),
    "anon": (404, 404, OK), "anon+token": (404, OK, OK),
}
# Owning: renaming, deleting, share settings: the owner only. Anonymous writes are
# refused before the circuit is looked up (403 whatever it is).
EDIT = {
    "owner": (OK, OK, OK), "editor": (403, 403, 403), "operator": (403, 403, 403), "viewer": (403, 403, 403),
    "other": (404, 404, 403), "other+token": (404, 403, 403),
    "anon": (403, 403, 403), "anon+token": (403, 403, 403),
}
# Saving a new version: the owner and users granted can_edit.
SAVE = {**EDIT, "editor": (OK, OK, OK)}
# Starting/stopping runs and pushing: the owner and users granted can_operate.
OPERATE = {**EDIT, "operator": (OK, OK, OK)}
# Share settings are read with GET, so anonymous requests reach the lookup.
SHARE_READ = {**EDIT, "anon": (404, 404, 403), "anon+token": (404, 403, 403)}
# Forking: any logged-in user who can read the circuit.
FORK = {**READ, "anon": (403, 403, 403), "anon+token": (403, 403, 403)}
# Resolving a share link: the token is the credential, whoever asks.
SHARE_LINK = {actor: (404, OK, OK) for actor in ACTORS}
# Commenting (starting a thread, replying): the owner and every grantee, read-only ones
# too (as Figma viewers comment); a reader of a public circuit or a share-link holder
# reads the threads but does not write (circuits/comments/handler.py).
COMMENT = {**EDIT, "editor": (OK, OK, OK), "operator": (OK, OK, OK), "viewer": (OK, OK, OK)}
# Editing or deleting a comment: its author only (the world's comments are the owner's).
AUTHOR = EDIT
# Resolving / reopening a thread: a writer (owner, can_edit) or the thread's author (the owner here).
RESOLVE = SAVE
# Endpoints that do not depend on a circuit.
ANYONE = {actor: (OK, OK, OK) for actor in ACTORS}
LOGGED_IN = {**ANYONE, "anon": (403, 403, 403), "anon+token": (403, 403, 403)}
# Testing a connector's connection: users who can edit some circuit (own one) only; in the
# world below only the owner owns circuits.
OWNS_A_CIRCUIT = {**{actor: (403, 403, 403) for actor in ACTORS}, "owner": (OK, OK, OK)}

ORDER = {"insert": {"id": 1, "customer": "ada", "amount": 250}}


@dataclass
class Endpoint:
    name: str
    method: str
    path: str  # placeholders: {circuit} {run} {token} {verification} {explanation} {thread} {comment}
    success: int
    rule: dict
    body: object = None
    params: dict = field(default_factory=dict)


ENDPOINTS = [
    Endpoint("circuit list", "GET", "/api/circuits/", 200, ANYONE),
    Endpoint("circuit create", "POST", "/api/circuits/", 201, LOGGED_IN, {"name": "n", "document": example("big_orders")}),
    Endpoint("circuit detail", "GET", "/api/circuits/{circuit}/", 200, READ),
    Endpoint("circuit patch", "PATCH", "/api/circuits/{circuit}/", 200, EDIT, {"name": "renamed"}),
    Endpoint("circuit put", "PUT", "/api/circuits/{circuit}/", 200, EDIT, {"name": "renamed", "visibility": "public"}),
    Endpoint("circuit delete", "DELETE", "/api/circuits/{circuit}/", 204, EDIT),
    Endpoint("version list", "GET", "/api/circuits/{circuit}/versions/", 200, READ),
    Endpoint("version create", "POST", "/api/circuits/{circuit}/versions/", 201, SAVE, {"document": example("big_orders")}),
    Endpoint("version detail", "GET", "/api/circuits/{circuit}/versions/1/", 200, READ),
    Endpoint("version diff", "GET", "/api/circuits/{circuit}/versions/1/diff/1/", 200, READ),
    Endpoint("fork", "POST", "/api/circuits/{circuit}/fork/", 201, FORK),
    Endpoint("share settings", "GET", "/api/circuits/{circuit}/share/", 200, SHARE_READ),
    Endpoint("share settings patch", "PATCH", "/api/circuits/{circuit}/share/", 200, EDIT, {"visibility": "public"}),
    Endpoint("share revoke", "POST", "/api/circuits/{circuit}/share/revoke/", 200, EDIT),
    Endpoint("comment threads", "GET", "/api/circuits/{circuit}/threads/", 200, READ),
    Endpoint("comment thread create", "POST", "/api/circuits/{circuit}/threads/", 201, COMMENT, {"node": "orders", "body": "why?"}),
    Endpoint("comment thread", "GET", "/api/circuits/{circuit}/threads/{thread}/", 200, READ),
    Endpoint("comment reply", "POST", "/api/circuits/{circuit}/threads/{thread}/comments/", 201, COMMENT, {"body": "because"}),
    Endpoint("comment edit", "PATCH", "/api/circuits/{circuit}/threads/{thread}/comments/{comment}/", 200, AUTHOR, {"body": "edited"}),
    Endpoint("comment delete", "DELETE", "/api/circuits/{circuit}/threads/{thread}/comments/{comment}/", 204, AUTHOR),
    Endpoint("thread resolve", "POST", "/api/circuits/{circuit}/threads/{thread}/resolve/", 200, RESOLVE),
    # the world's threads are open: an allowed reopen answers 200, nothing to change
    Endpoint("thread reopen", "POST", "/api/circuits/{circuit}/threads/{thread}/reopen/", 200, RESOLVE),
    Endpoint("my mentions", "GET", "/api/mentions/", 200, LOGGED_IN),
    Endpoint("mentions read", "POST", "/api/mentions/read/", 200, LOGGED_IN, {"all": True}),
    Endpoint("share link", "GET", "/api/shared/{token}/", 200, SHARE_LINK),
    Endpoint("run list", "GET", "/api/circuits/{circuit}/runs/", 200, READ),
    Endpoint("run start", "POST", "/api/circuits/{circuit}/runs/", 201, OPERATE),
    Endpoint("run detail", "GET", "/api/runs/{run}/", 200, READ),
    Endpoint("run stop", "POST", "/api/runs/{run}/stop/", 200, OPERATE),
    Endpoint("run connectors", "GET", "/api/runs/{run}/connectors/", 200, READ),
    # each world run has a file source `drop` (its folder is not there: it never runs)
    Endpoint("run connector", "GET", "/api/runs/{run}/connectors/drop/", 200, READ),
    Endpoint("connector restart", "POST", "/api/runs/{run}/connectors/drop/restart/", 200, OPERATE),
    Endpoint("connector pause", "POST", "/api/runs/{run}/connectors/drop/pause/", 200, OPERATE),
    Endpoint("connector start", "POST", "/api/runs/{run}/connectors/drop/start/", 200, OPERATE),
    Endpoint("connector dead letters", "GET", "/api/runs/{run}/connectors/drop/dead-letters/", 200, READ),
    Endpoint("run pause", "POST", "/api/runs/{run}/pause/", 200, OPERATE),
    # the run is running, so an allowed resume gets the 409 naming its status
    Endpoint("run resume", "POST", "/api/runs/{run}/resume/", 409, OPERATE),
    Endpoint("push json", "POST", "/api/runs/{run}/inputs/orders/push/", 202, OPERATE, [ORDER]),
    Endpoint("push csv", "POST", "/api/runs/{run}/inputs/orders/push/", 202, OPERATE, "id,customer,amount\n1,ada,250\n"),
    Endpoint("completion", "GET", "/api/runs/{run}/completion/", 200, READ, params={"token": "{run}:1"}),
    Endpoint("push log", "GET", "/api/runs/{run}/pushes/", 200, READ),
    Endpoint("outputs", "GET", "/api/runs/{run}/outputs/", 200, READ),
    Endpoint("deltas", "GET", "/api/runs/{run}/deltas/", 200, READ),
    Endpoint("stats", "GET", "/api/runs/{run}/stats/", 200, READ),
    Endpoint("input rows", "GET", "/api/runs/{run}/inputs/orders/rows/", 200, READ),
    # the run has no tick yet, so an allowed verify gets the 400 naming `tick`
    Endpoint("verify", "POST", "/api/runs/{run}/verify/", 400, OPERATE),
    Endpoint("verifications", "GET", "/api/runs/{run}/verify/", 200, READ),
    Endpoint("verification", "GET", "/api/runs/{run}/verify/{verification}/", 200, READ),
    # the run has no tick yet: a reader gets the 400 naming `tick` (no inspection is queued)
    Endpoint("node inspector", "GET", "/api/runs/{run}/nodes/orders/", 400, READ),
    # no `view` given: a reader gets the 400 naming it
    Endpoint("explain", "GET", "/api/runs/{run}/explain/", 400, READ),
    Endpoint("explanation", "GET", "/api/runs/{run}/explain/{explanation}/", 200, READ),
    Endpoint("my runs", "GET", "/api/runs/", 200, LOGGED_IN),
    Endpoint("profile", "GET", "/api/runs/{run}/profile/", 200, READ),
    Endpoint("frontier", "GET", "/api/runs/{run}/frontier/", 200, READ),
    Endpoint("validate", "POST", "/api/validate/", 200, ANYONE, {"document": example("big_orders")}),
    Endpoint("plan", "POST", "/api/plan/", 200, ANYONE, {"document": example("big_orders")}),
    Endpoint("sql compile", "POST", "/api/sql/compile/", 200, ANYONE, {"text": "CREATE TABLE t (a BIGINT); CREATE VIEW v AS SELECT a FROM t;"}),
    Endpoint("sql export", "POST", "/api/sql/export/", 200, ANYONE, {"document": example("big_orders")}),
    Endpoint("datalog compile", "POST", "/api/datalog/compile/", 200, ANYONE, {"text": ".decl e(a: bigint)\np(a) :- e(a).\n.output p"}),
    Endpoint("operators", "GET", "/api/operators/", 200, ANYONE),
    Endpoint("connector kinds", "GET", "/api/connector-kinds/", 200, ANYONE),
    # a folder that is not there: an allowed test answers 200 {"ok": false, ...}
    Endpoint("connector test", "POST", "/api/connector-kinds/file_source/test/", 200, OWNS_A_CIRCUIT,
             {"config": {"path": "/nonexistent/dbspweb-matrix"}}),
    Endpoint("circuit format", "GET", "/api/circuit-format/", 200, ANYONE),
    Endpoint("me", "GET", "/api/auth/me/", 200, ANYONE),
    Endpoint("schema", "GET", "/api/schema/", 200, ANYONE),
    Endpoint("docs", "GET", "/api/docs/", 200, ANYONE),
]


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """The users, circuits and runs every row asks about, built once for the module's
    tests (about 600) instead of once each: in a transaction rolled back after the last
    test, each test in a savepoint inside it (pytest-django's `db`, as Django's TestCase
    runs tests over setUpTestData), so what a request changed (a deleted circuit, a new
    version, a grant) is undone before the next test asks."""
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.test import override_settings

    with django_db_blocker.unblock(), override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        outer = transaction.atomic()
        outer.__enter__()
        try:
            users = {n: get_user_model().objects.create_user(username=n, password="s3cret-pass!")
                     for n in ("owner", "editor", "operator", "viewer", "other")}
            yield {"users": users, "circuits": _circuits(users)}
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


def _circuits(users):
    owner, editor, operator, viewer = users["owner"], users["editor"], users["operator"], users["viewer"]
    circuits = {}
    for visibility in VISIBILITIES:
        circuit = services.create_circuit(owner, f"{visibility} circuit", "", visibility, example("big_orders"))
        CircuitGrant.objects.create(circuit=circuit, user=operator, can_operate=True)
        CircuitGrant.objects.create(circuit=circuit, user=viewer, can_operate=False)
        CircuitGrant.objects.create(circuit=circuit, user=editor, can_edit=True)
        run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=owner, status="running", last_sequence=1)
        Push.objects.create(run=run, sequence=1, input="orders", records=[], row_count=0)
        Connector.objects.create(run=run, name="drop", kind="file_source", node="orders",
                                 config={"path": "/nonexistent/dbspweb-matrix", "on_error": "dead_letter"})
        Verification.objects.create(run=run, tick=0)
        Explanation.objects.create(run=run, params={"view": "big_orders", "tick": 0})
        thread = CommentThread.objects.create(circuit=circuit, node="orders", created_by=owner)
        Comment.objects.create(thread=thread, author=owner, body="first")
        circuits[visibility] = (circuit, run)
    return circuits


def client(world, actor: str, circuit) -> APIClient:
    api = APIClient()
    user = world["users"].get(actor.split("+")[0])
    if user is not None:
        api.force_authenticate(user)
    if actor.endswith("+token"):
        api.credentials(HTTP_X_SHARE_TOKEN=circuit.share_token)
    return api


def call(api, endpoint: Endpoint, circuit, run):
    verification = run.verifications.values_list("pk", flat=True).first()
    explanation = run.explanations.values_list("pk", flat=True).first()
    thread = circuit.comment_threads.first()
    comment = thread.comments.first()
    fill = lambda s: s.format(circuit=circuit.pk, run=run.pk, token=circuit.share_token,  # noqa: E731
                              verification=verification, explanation=explanation, thread=thread.pk, comment=comment.pk)
    path = fill(endpoint.path)
    if endpoint.params:
        from urllib.parse import urlencode

        path += "?" + urlencode({k: fill(v) for k, v in endpoint.params.items()})
    if isinstance(endpoint.body, str):
        return api.generic(endpoint.method, path, endpoint.body.encode(), content_type="text/csv")
    return api.generic(endpoint.method, path, *([] if endpoint.body is None else [__import__("json").dumps(endpoint.body)]),
                       content_type="application/json")


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.name)
def test_permission_matrix(db, world, endpoint, actor):
    expected = tuple(endpoint.success if code == OK else code for code in endpoint.rule[actor])
    actual = []
    for visibility in VISIBILITIES:
        circuit, run = world["circuits"][visibility]
        circuit.refresh_from_db()
        actual.append(call(client(world, actor, circuit), endpoint, circuit, run).status_code)
    assert tuple(actual) == expected, f"{endpoint.method} {endpoint.path} as {actor} (private, unlisted, public)"


# Routes that hold no circuit data: the router's index and the credential endpoints
# (tests/circuits/test_api_auth.py and test_api_register.py cover them).
# The health check holds none either (its code says whether workers are alive):
# tests/workers/test_api_health.py.
NOT_IN_MATRIX = {"api-root", "auth-login", "auth-logout", "auth-token", "auth-register", "health", "api-not-found"}


def test_every_api_route_has_a_row():
    """A new /api/ route without a matrix row fails here (run views added by others too)."""
    from django.urls import URLPattern, URLResolver, get_resolver, resolve

    def names(resolver, prefix=""):
        for p in resolver.url_patterns:
            if isinstance(p, URLResolver):
                yield from names(p, prefix + str(p.pattern))
            elif isinstance(p, URLPattern) and prefix.startswith("api/") and p.name:
                yield p.name

    routes = set(names(get_resolver())) - NOT_IN_MATRIX
    assert {"circuit-detail", "run-push", "circuit-share"} <= routes
    covered = {resolve(e.path.format(circuit=1, run=1, token="t", verification=1, explanation=1, thread=1, comment=1)).url_name for e in ENDPOINTS}
    assert not routes - covered, f"add rows to ENDPOINTS for: {sorted(routes - covered)}"
