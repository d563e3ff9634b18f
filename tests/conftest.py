"""Shared fixtures. `live_stack` starts the real thing: a uvicorn ASGI server and a
Celery worker (solo pool, Spark in local mode) as subprocesses on the test database,
talking through the real Redis the test command provides (REDIS_URL)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[1]
#: The one generous wait of the tests (tests/browser/chromium.py, tests/sockets.py), here
#: for a started web server's first answer: its first request imports the whole app,
#: seconds on a busy machine (60 s ran out at load 32).
WAIT_S = float(os.environ.get("DBSPWEB_TEST_TIMEOUT_S", "90"))
ARTIFACTS = ROOT / "tests" / "artifacts"
EXAMPLES = ROOT / "examples" / "circuits"


def example(name: str) -> dict:
    return json.loads((EXAMPLES / f"{name}.json").read_text())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def database_env() -> dict:
    """Environment that points a subprocess at the test database this session created."""
    from django.db import connection

    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return {"SQLITE_PATH": str(db["NAME"]), "DATABASE_URL": ""}
    user = db.get("USER") or ""
    auth = f"{user}:{db.get('PASSWORD')}@" if db.get("PASSWORD") else (f"{user}@" if user else "")
    return {"DATABASE_URL": f"postgres://{auth}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"}


class LiveStack:
    def __init__(self, base_url: str, log_dir: Path):
        self.base_url = base_url
        self.ws_url = base_url.replace("http://", "ws://")
        self.log_dir = log_dir

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-4000:]}" for p in sorted(self.log_dir.glob("*.log")))


def _wait_for(predicate, timeout: float, what: str, procs, stack):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        for p in procs:
            if p.poll() is not None:
                pytest.fail(f"a live process exited ({p.args[:3]}) while waiting for {what}\n{stack.logs()}")
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}\n{stack.logs()}")


#: The suite sends many requests from one address: throttles are off in it (the live
#: server's too) unless a test sets a rate (tests/circuits/test_api_throttles.py).
UNTHROTTLED_ENV = {f"DBSPWEB_THROTTLE_{scope.upper()}": "off" for scope in ("anon", "share", "login", "register", "validate")}


@pytest.fixture(autouse=True)
def _unthrottled(settings):
    from django.core.cache import cache

    settings.THROTTLE_RATES = {}
    cache.clear()


@pytest.fixture(autouse=True)
def _quick_password_hashing(settings):
    """Users the tests create are hashed with Argon2 at its smallest cost
    (tests/hashers.py); the project's hashers follow, for hashes made with them. The live
    servers keep the project's settings (their sign-ins verify these hashes and rehash
    them at the default cost); tests/circuits/test_api_auth.py checks the default."""
    project = [h for h in settings.PASSWORD_HASHERS if not h.endswith(".Argon2PasswordHasher")]
    settings.PASSWORD_HASHERS = ["tests.hashers.QuickArgon2PasswordHasher", *project]


@pytest.fixture(autouse=True)
def _no_recompute_slots():
    """Each test starts with no explain/inspect/verify slots held (runs/fair_queue.py):
    user ids repeat across tests, and fake dispatches never run the task that frees them."""
    from runs import fair_queue

    fair_queue.clear()


def purge_queues(*names: str) -> None:
    """Drop the task messages that in-process tests sent to these queues with no worker
    consuming them (wake-ups, verifications, inspections of their runs, long gone: ids
    repeat across tests). A worker started later would otherwise take that backlog first,
    ahead of its own test's jobs. Each queue's priority lists go too (kombu's Redis
    transport keeps one list per priority step)."""
    from dbspweb.celery import app

    with app.connection_for_write() as connection:
        for name in names:
            connection.default_channel.queue_purge(name)


@pytest.fixture(scope="session")
def live_stack(django_db_setup, django_db_blocker, tmp_path_factory):
    purge_queues(settings.CELERY_TASK_DEFAULT_QUEUE)
    log_dir = tmp_path_factory.mktemp("live-logs")
    port = free_port()
    # node inspections on disk of this stack's own (the web server reads what the
    # verification worker writes): never a directory another stack or an earlier session
    # wrote for a run with the same id
    os.environ.setdefault("DBSPWEB_INSPECT_DIR", str(tmp_path_factory.mktemp("inspect")))
    env = {**os.environ, **database_env(), "DJANGO_SETTINGS_MODULE": "dbspweb.settings", "PYTHONUNBUFFERED": "1",
           "CELERY_QUEUE": settings.CELERY_TASK_DEFAULT_QUEUE, **UNTHROTTLED_ENV}
    bindir = Path(sys.executable).parent
    worker_log = open(log_dir / "worker.log", "w")
    web_log = open(log_dir / "web.log", "w")
    worker = subprocess.Popen(
        [str(bindir / "celery"), "-A", "dbspweb", "worker", "--pool=solo", "--loglevel=INFO",
         "-Q", settings.CELERY_TASK_DEFAULT_QUEUE, "--without-gossip", "--without-mingle", "-n", f"test-{port}@%h"],
        cwd=ROOT, env=env, stdout=worker_log, stderr=subprocess.STDOUT,
    )
    web = subprocess.Popen(
        [str(bindir / "uvicorn"), "dbspweb.asgi:application", "--host", "127.0.0.1", "--port", str(port), "--log-level", "info"],
        cwd=ROOT, env=env, stdout=web_log, stderr=subprocess.STDOUT,
    )
    stack = LiveStack(f"http://127.0.0.1:{port}", log_dir)
    procs = [worker, web]

    def web_up():
        try:
            return httpx.get(f"{stack.base_url}/api/auth/me/", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        _wait_for(web_up, WAIT_S, "the ASGI server", procs, stack)
        _wait_for(lambda: "Spark session ready" in (log_dir / "worker.log").read_text(), 180, "the Celery worker and Spark", procs, stack)
        yield stack
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        worker_log.close()
        web_log.close()


@pytest.fixture(scope="session")
def verify_worker(live_stack, tmp_path_factory):
    """A Celery worker of its own on the verification queue (settings.VERIFY_QUEUE), as
    deployed: verifications never run in the worker that ticks runs. It recomputes with
    batch Spark jobs at any size (VERIFY_REFERENCE_MAX_ROWS=0), so live tests verify
    real Spark against real Spark's incremental ticks."""
    purge_queues(settings.VERIFY_QUEUE)
    log = tmp_path_factory.mktemp("verify-logs") / "verify-worker.log"
    env = {**os.environ, **database_env(), "DJANGO_SETTINGS_MODULE": "dbspweb.settings", "PYTHONUNBUFFERED": "1",
           "CELERY_QUEUE": settings.CELERY_TASK_DEFAULT_QUEUE, "VERIFY_REFERENCE_MAX_ROWS": "0"}
    with open(log, "w") as out:
        worker = subprocess.Popen(
            [str(Path(sys.executable).parent / "celery"), "-A", "dbspweb", "worker", "--pool=solo", "--loglevel=INFO",
             "-Q", settings.VERIFY_QUEUE, "--without-gossip", "--without-mingle", "-n", f"verify-{os.getpid()}@%h"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    try:
        _wait_for(lambda: "Spark session ready" in log.read_text(), 180, "the verification worker", [worker], live_stack)
        yield log
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()


@pytest.fixture
def make_user(django_user_model):
    def make(username="alice", password="s3cret-pass!"):
        user = django_user_model.objects.create_user(username=username, password=password)
        user.raw_password = password
        return user

    return make


@pytest.fixture
def token_client(live_stack, make_user):
    """An httpx client against the live server, authenticated with a DRF token."""
    from rest_framework.authtoken.models import Token

    def make(username="alice"):
        user = make_user(username)
        token = Token.objects.create(user=user)
        client = httpx.Client(base_url=live_stack.base_url, headers={"Authorization": f"Token {token.key}"}, timeout=30)
        client.token = token.key
        client.user = user
        return client

    return make


#: Session fixtures that start real workers. Their sweepers keep re-driving every running
#: run of the test database until the session ends.
STACK_FIXTURES = frozenset({"live_stack", "verify_worker", "cluster"})


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Live tests use the database (below) even when they do not ask for it: say so at
    collection, where pytest-django decides which test databases to create (a live test
    file run on its own otherwise queries an uncreated database).

    Tests that start a stack of real workers (but the browser's) run last, in their own
    order: once started, a stack's workers live until the session ends and their sweepers
    take over any running run with pending pushes, so a later in-process test of ticks
    (tests/workers) would race them (CI caught test_wake_claims's second wake-up going to a
    live worker's queue, on PostgreSQL, where no browser test runs)."""
    for item in items:
        if item.get_closest_marker("live") is not None and item.get_closest_marker("django_db") is None:
            item.add_marker(pytest.mark.django_db(transaction=True))
    items.sort(key=_stack_order)


def _stack_order(item) -> int:
    """Browser tests first (the order every green run had: the node inspector's browser
    test failed after the API tests when moved behind them, cause not yet found), then the
    tests without a stack, then the other stack tests (tests/live)."""
    if item.get_closest_marker("browser") is not None:
        return 0
    return 2 if not STACK_FIXTURES.isdisjoint(getattr(item, "fixturenames", ())) else 1


@pytest.fixture(autouse=True)
def _quiet_runs_before_flush(request):
    """Live tests share the database with worker processes that keep applying ticks. Before
    the test database is emptied (a TRUNCATE, which deadlocks with a tick's transaction
    on PostgreSQL), stop every run still going and give a tick in flight time to end:
    a worker checks the run's status before each tick and its fence refuses a stopped run."""
    if request.node.get_closest_marker("live") is None:
        yield
        return
    request.getfixturevalue("transactional_db")
    yield
    from runs.models import Run, RunStatus

    if Run.objects.filter(status__in=[RunStatus.CREATED, RunStatus.RUNNING, RunStatus.PAUSED]).update(status=RunStatus.STOPPED):
        time.sleep(0.5)


@pytest.fixture(scope="session", autouse=True)
def _flush_retries_a_deadlock():
    """A transactional test's teardown empties the database with one TRUNCATE of every
    table. On PostgreSQL that can deadlock with the session's live worker, which a push
    in any test may wake to apply a tick (seen once: a concurrency test of the input log).
    PostgreSQL then aborts one side: when it is the TRUNCATE, do it again."""
    from django.core.management.base import CommandError
    from django.core.management.commands import flush

    original = flush.Command.handle

    def handle(self, **options):
        for attempt in range(5):
            try:
                return original(self, **options)
            except CommandError as e:
                if attempt == 4 or "deadlock detected" not in str(e.__cause__ or ""):
                    raise
                time.sleep(0.5)

    flush.Command.handle = handle
    yield
    flush.Command.handle = original


@pytest.fixture(autouse=True)
def live_messages_follow_their_schema(monkeypatch):
    """Every live-protocol message the server sends in a test, as a run websocket's
    consumer sends it (runs/consumers.py) and as a publisher hands it over
    (runs/broadcast.py: worker ticks, pushes' lag, transitions, errors), is checked
    against runs/live_protocol.schema.json: a message that drifted from the schema fails
    the test (at teardown, naming the message and the place in it)."""
    from runs import broadcast, consumers
    from tests.live_protocol import problems

    found: list[str] = []
    send_json, send = consumers.RunConsumer.send_json, broadcast._Sender.send

    async def checked_send_json(self, content, close=False):
        found.extend(f"sent on ws/runs/{getattr(self, 'run_id', '?')}/: {p}" for p in problems(content))
        return await send_json(self, content, close)

    def checked_send(self, group, event):
        if event.get("type") == "run.message":
            found.extend(f"published to {group}: {p}" for p in problems(event["message"]))
        return send(self, group, event)

    monkeypatch.setattr(consumers.RunConsumer, "send_json", checked_send_json)
    monkeypatch.setattr(broadcast._Sender, "send", checked_send)
    yield
    if found:
        pytest.fail("live-protocol messages that do not follow runs/live_protocol.schema.json:\n" + "\n".join(found[:20]))


def caught_up(run_id: int, read_logs, what: str, queue: str | None = None) -> None:
    """Returns once the worker holding the run (or the one consuming `queue`) has taken
    every message queued for it before now: a `process_run` of the run is sent behind them
    on the same queue, and a solo worker takes its queue in order. How a test shows that a
    worker did *not* act on what it was sent (a paused run, a fenced-off holder), without
    sleeping. `read_logs()`: the worker logs' text, where Celery logs the task's success."""
    from dbspweb.celery import app
    from workers import dispatch, leases

    if queue is None:
        queue = dispatch._queue_of(leases.worker_of(run_id)) or settings.CELERY_TASK_DEFAULT_QUEUE
    marker = f"[{app.send_task(dispatch.PROCESS_RUN, (run_id,), queue=queue).id}] succeeded"
    deadline = time.monotonic() + 180
    while marker not in read_logs():
        assert time.monotonic() < deadline, f"the worker on {queue} never took the run's queued messages ({what})"
        time.sleep(0.2)


@pytest.fixture(scope="session")
def kafka():
    """A Kafka cluster (librdkafka's mock, the real wire protocol): tests/kafka_cluster.py."""
    from tests.kafka_cluster import MockKafka

    return MockKafka()


@pytest.fixture
def api_answers_follow_the_schema(monkeypatch):
    """Every answer of the test client under /api/ in a test is checked against the
    operation the OpenAPI schema documents (tests/api_contract.py): an answer that drifted
    from its serializer fails the test (at teardown, naming the request and the place in
    the body). Used by the tests of the answers the browser aliases the generated types of."""
    from django.test import Client

    from tests.api_contract import problems

    found: list[str] = []
    request = Client.request

    def checked(self, **environ):
        response = request(self, **environ)
        path = environ.get("PATH_INFO", "")
        if path.startswith("/api/") and not getattr(response, "streaming", False):
            found.extend(problems(environ.get("REQUEST_METHOD", "GET"), path, response))
        return response

    monkeypatch.setattr(Client, "request", checked)
    yield
    if found:
        pytest.fail("API answers that do not follow the OpenAPI schema (/api/schema/):\n" + "\n".join(found[:20]))


@pytest.fixture(scope="session")
def cdc_postgres():
    """A PostgreSQL with wal_level=logical (TEST_CDC_POSTGRES_URL, else its own cluster,
    stopped at the session's end): tests/postgres_cluster.py."""
    from tests.postgres_cluster import PostgresCluster

    cluster = PostgresCluster()
    yield cluster
    cluster.stop()
