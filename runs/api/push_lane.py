"""The push lane: token-authenticated JSON pushes, logged in group commits, ahead of Django.

An ASGI app in front of Django's (dbspweb/asgi.py). A plain push, `POST
/api/runs/<id>/inputs/<input>/push/` with `Authorization: Token ...` and a JSON body, is
parsed on the event loop (orjson) and handed to this process's lane writer: one thread
with its own database connection that takes every push waiting, authenticates and
checks them, and logs each run's pushes in one transaction (runs/input_log.py
`log_pushes`: one lock of the run, one commit, one wake-up). Django's ASGI path costs a
new thread and a new database connection per request, and a thread hop per sync
middleware; a small push spends most of its time there.

The lane only ever says yes. Anything else goes to Django's view with the body as
received, which answers exactly as it always did: a request the lane does not take
(another method or path, session cookies, a share token, a query string, CSV, a body
over the limit, another host, an Idempotency-Key Django would refuse), and a push the
lane cannot log (a bad token, a run the user may not operate, an unknown input, a
record the column check does not take plainly, a full run, a delete of an absent row,
an Idempotency-Key already used in the run or earlier in the batch, a database error).
A push with a new Idempotency-Key is logged with it as Django's view logs it; a repeat
of one (Django answers 200 with the first push, or 409) is always Django's.
Nothing is written for those: they change nothing, so Django starts afresh.

`DBSPWEB_PUSH_LANE=0` turns the lane off (every push through Django).
"""
from __future__ import annotations

import asyncio
import logging
import os
import queue
import re
import threading
from concurrent.futures import Future
from dataclasses import dataclass

import orjson
from django.conf import settings
from django.db import connection
from django.http.request import split_domain_port, validate_host

log = logging.getLogger(__name__)

PUSH_PATH = re.compile(r"^/api/runs/(\d+)/inputs/([^/]+)/push/$")
TOKEN = re.compile(rb"^token +([^\s]+)$", re.IGNORECASE)
#: Most pushes the writer logs in one go (it takes what is waiting, up to this).
BATCH_MAX = 256


@dataclass
class LanePush:
    run_id: int
    input_name: str
    token: str
    records: object
    idempotency_key: str | None = None


@dataclass
class Accepted:
    token: str
    sequence: int


def enabled() -> bool:
    return getattr(settings, "PUSH_LANE", True)


def _takes(scope: dict) -> tuple[int, str, str, str | None] | None:
    """(run id, input, API token, Idempotency-Key) when the lane may take this request,
    else None."""
    if scope["type"] != "http" or scope["method"] != "POST" or scope.get("query_string"):
        return None
    match = PUSH_PATH.match(scope["path"])
    if match is None or not enabled():
        return None
    if settings.SECURE_SSL_REDIRECT and scope.get("scheme") != "https":
        return None
    headers: dict[bytes, bytes] = {}
    for name, value in scope["headers"]:
        if name in headers:  # a header sent twice: Django decides
            return None
        headers[name] = value
    if b"x-share-token" in headers or b"cookie" in headers:
        return None
    key = headers.get(b"idempotency-key")
    key = key.decode("latin-1") or None if key is not None else None  # as Django reads it: empty is none
    if b"transfer-encoding" in headers or b"content-length" not in headers:
        return None
    content_type = headers.get(b"content-type", b"").split(b";")
    if content_type[0].strip().lower() != b"application/json" or any(
            p.strip().lower() not in (b"charset=utf-8", b"") for p in content_type[1:]):
        return None
    token = TOKEN.match(headers.get(b"authorization", b""))
    if token is None or not _host_allowed(headers.get(b"host", b"")):
        return None
    try:
        length = int(headers[b"content-length"])
    except ValueError:
        return None
    if not 0 < length <= settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
        return None
    return int(match.group(1)), match.group(2), token.group(1).decode("latin-1"), key


def _host_allowed(host: bytes) -> bool:
    """Django's own check (HttpRequest.get_host) of the Host header."""
    if settings.USE_X_FORWARDED_HOST:
        return False
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    domain, _port = split_domain_port(host.decode("latin-1"))
    return bool(domain) and validate_host(domain, allowed)


def _response_headers(body: bytes) -> list[tuple[bytes, bytes]]:
    """The headers Django's middleware and DRF put on a push's 202 (tests compare them)."""
    headers = [(b"content-type", b"application/json"), (b"vary", b"Accept, Cookie"), (b"allow", b"POST, OPTIONS"),
               (b"content-length", str(len(body)).encode())]
    if settings.X_FRAME_OPTIONS:
        headers.append((b"x-frame-options", settings.X_FRAME_OPTIONS.encode()))
    if settings.SECURE_CONTENT_TYPE_NOSNIFF:
        headers.append((b"x-content-type-options", b"nosniff"))
    if settings.SECURE_REFERRER_POLICY:
        policy = settings.SECURE_REFERRER_POLICY
        policy = policy if isinstance(policy, str) else ",".join(policy)
        headers.append((b"referrer-policy", policy.encode()))
    if settings.SECURE_CROSS_ORIGIN_OPENER_POLICY:
        headers.append((b"cross-origin-opener-policy", settings.SECURE_CROSS_ORIGIN_OPENER_POLICY.encode()))
    return headers


class PushLane:
    """ASGI: plain token pushes through the lane, everything else to `app` (Django)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        taken = _takes(scope)
        if taken is None:
            return await self.app(scope, receive, send)
        chunks, more = [], True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        accepted = await self._log(taken, body)
        if accepted is None:
            return await self.app(scope, _replay(body, receive), send)
        payload = orjson.dumps({"token": accepted.token, "sequence": accepted.sequence, "duplicate": False})
        await send({"type": "http.response.start", "status": 202, "headers": _response_headers(payload)})
        await send({"type": "http.response.body", "body": payload})

    async def _log(self, taken: tuple[int, str, str, str | None], body: bytes) -> Accepted | None:
        try:
            records = orjson.loads(body)
        except orjson.JSONDecodeError:
            return None
        if isinstance(records, dict):
            records = [records]
        if not isinstance(records, list) or not records:
            return None
        run_id, input_name, token, key = taken
        return await asyncio.wrap_future(_writer.submit(LanePush(run_id, input_name, token, records, key)))


def _replay(body: bytes, receive):
    """A `receive` that gives Django the body the lane read, then the client's own."""
    given = False

    async def again():
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


class _Writer:
    """This process's lane writer: a thread that logs waiting pushes in group commits."""

    def __init__(self):
        self._lock = threading.Lock()
        self._pid = None
        self._queue: queue.SimpleQueue | None = None

    def submit(self, push: LanePush) -> Future:
        with self._lock:
            if self._pid != os.getpid():  # first use in this process
                self._queue, self._pid = queue.SimpleQueue(), os.getpid()
                threading.Thread(target=self._run, args=(self._queue,), name="dbspweb-push-lane", daemon=True).start()
            q = self._queue
        future: Future = Future()
        q.put((push, future))
        return future

    def close_connection(self, timeout: float = 10.0) -> None:
        """Close the writer's database connection (it reconnects on its next push); e.g.
        before a test database is dropped."""
        with self._lock:
            q = self._queue if self._pid == os.getpid() else None
        if q is not None:
            done: Future = Future()
            q.put((None, done))
            done.result(timeout)

    def _run(self, q: queue.SimpleQueue) -> None:
        while True:
            batch = [q.get()]
            while len(batch) < BATCH_MAX and batch[-1][0] is not None:
                try:
                    batch.append(q.get_nowait())
                except queue.Empty:
                    break
            if batch[-1][0] is None:  # close_connection(), after the pushes before it
                *batch, (_, closed) = batch
                self._log(batch)
                connection.close()
                closed.set_result(None)
            else:
                self._log(batch)

    @staticmethod
    def _log(batch: list) -> None:
        if not batch:
            return
        try:
            results = log_batch([push for push, _ in batch])
        except Exception:  # noqa: BLE001 - raised before any run's commit: Django answers each
            log.exception("push lane: a batch of %d push(es) failed; Django takes them", len(batch))
            results = [None] * len(batch)
            connection.close()
        for (_, future), result in zip(batch, results):
            future.set_result(result)


_writer = _Writer()
close_connection = _writer.close_connection


def log_batch(pushes: list[LanePush]) -> list[Accepted | None]:
    """Authenticate, check and log a batch of lane pushes (on the writer's thread).
    None for each push the lane leaves to Django; nothing of those is written."""
    from rest_framework.authtoken.models import Token

    from circuits.access import can_operate
    from circuits.models import Circuit
    from circuits.services import ServiceError

    from .. import input_log
    from ..models import Push, Run, RunStatus

    if connection.connection is not None and not connection.is_usable():
        connection.close()
    users = {t.key: t.user for t in Token.objects.select_related("user").filter(key__in={p.token for p in pushes})}
    runs = {r.pk: r for r in Run.objects.select_related("circuit", "version").filter(pk__in={p.run_id for p in pushes})}
    # Idempotency-Keys already used in these runs (a repeat is Django's: 200 or 409), and
    # in this batch (the second of two goes to Django after the first is committed)
    keyed = [p for p in pushes if p.idempotency_key]
    used = set(Push.objects.filter(run_id__in={p.run_id for p in keyed}, idempotency_key__in={p.idempotency_key for p in keyed})
               .values_list("run_id", "idempotency_key")) if keyed else set()
    allowed: dict[tuple[int, int], bool] = {}
    results: list[Accepted | None] = [None] * len(pushes)
    by_run: dict[int, list[tuple[int, input_log.Validated]]] = {}
    for i, push in enumerate(pushes):
        user, run = users.get(push.token), runs.get(push.run_id)
        if user is None or not user.is_active or run is None or run.status in (RunStatus.STOPPED, RunStatus.FAILED):
            continue
        if push.idempotency_key:
            try:  # a key the log cannot store (too long, NUL): Django's 400
                input_log.check_idempotency_key(push.idempotency_key)
            except ServiceError:
                continue
            if (run.pk, push.idempotency_key) in used:
                continue
            used.add((run.pk, push.idempotency_key))
        if (user.pk, run.pk) not in allowed:
            circuit = run.circuit
            # as the view: may operate (owner, or granted) and may see the circuit (owners always do)
            allowed[user.pk, run.pk] = can_operate(user, circuit) and (
                circuit.owner_id == user.pk or Circuit.visible_to(user, None).filter(pk=circuit.pk).exists())
        if not allowed[user.pk, run.pk]:
            continue
        try:
            pending = input_log.validate(run, push.input_name, push.records)
        except ServiceError:
            continue
        pending.user_id, pending.idempotency_key = user.pk, push.idempotency_key
        by_run.setdefault(run.pk, []).append((i, pending))
    for run_id, entries in by_run.items():
        try:  # one run's transaction: committed whole or not at all
            logged = input_log.log_pushes(runs[run_id], [pending for _, pending in entries])
        except Exception:  # noqa: BLE001 - nothing of this run's pushes was committed: Django answers each
            log.exception("push lane: run %s: %d push(es) could not be logged; Django takes them", run_id, len(entries))
            connection.close()
            continue
        for (i, _), entry in zip(entries, logged):
            if not isinstance(entry, ServiceError):
                results[i] = Accepted(entry.token, entry.sequence)
    return results
