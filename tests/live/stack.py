"""Private process stacks for tests that kill things: a uvicorn server and any number
of Celery workers (solo pool, Spark local mode) on the test database, on a queue and a
channel-layer prefix of their own, optionally against a Redis of their own. Unlike the
session-wide `live_stack`, a test may kill -9 these processes and start new ones."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from tests.conftest import ROOT, UNTHROTTLED_ENV, WAIT_S, database_env, free_port
from tests.live_protocol import problems

BIN = Path(sys.executable).parent


class Stack:
    def __init__(self, log_dir: Path, name: str, env: dict | None = None):
        self.log_dir, self.name = log_dir, name
        self.queue = f"{os.environ.get('CELERY_QUEUE', 'dbspweb')}-{name}"
        self.env = {
            **os.environ, **database_env(), "DJANGO_SETTINGS_MODULE": "dbspweb.settings", "PYTHONUNBUFFERED": "1",
            "CELERY_QUEUE": self.queue, "CHANNELS_PREFIX": f"{os.environ.get('CHANNELS_PREFIX', 'dbspweb')}-{name}",
            "SPARK_DRIVER_MEMORY": "1g", **UNTHROTTLED_ENV,
            "DBSPWEB_INSPECT_DIR": str(log_dir / "inspect"),  # its own: never another stack's files for a repeated run id
            **(env or {}),
        }
        self.web: subprocess.Popen | None = None
        self.workers: dict[str, subprocess.Popen] = {}
        self.base_url = self.ws_url = ""
        self._logs: list = []

    # ---- processes ---------------------------------------------------------------
    def _popen(self, args, log_name):
        log = open(self.log_dir / f"{log_name}.log", "a")
        self._logs.append(log)
        return subprocess.Popen(args, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)

    def start_web(self) -> None:
        port = free_port()
        self.web = self._popen([str(BIN / "uvicorn"), "dbspweb.asgi:application", "--host", "127.0.0.1", "--port", str(port)], f"{self.name}-web")
        self.base_url = f"http://127.0.0.1:{port}"
        self.ws_url = f"ws://127.0.0.1:{port}"

        def up():
            try:
                return httpx.get(f"{self.base_url}/api/auth/me/", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        self.wait(up, WAIT_S, "the ASGI server")

    def start_worker(self, name: str, wait: bool = True) -> subprocess.Popen:
        log_name = f"{self.name}-{name}"
        proc = self._popen(
            [str(BIN / "celery"), "-A", "dbspweb", "worker", "--pool=solo", "--loglevel=INFO", "-Q", self.queue,
             "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", f"{name}-{self.name}@%h"],
            log_name,
        )
        self.workers[name] = proc
        if wait:
            self.wait(lambda: "Spark session ready" in self.log(log_name), 180, f"worker {name} and Spark")
        return proc

    def worker_named_by(self, worker_id: str) -> str:
        """The name of the worker whose id (node:pid) is given."""
        pid = int(worker_id.rsplit(":", 1)[1])
        return next(name for name, p in self.workers.items() if p.pid == pid)

    def kill(self, name: str, sig=signal.SIGKILL) -> None:
        proc = self.workers[name]
        proc.send_signal(sig)
        if sig == signal.SIGKILL:
            proc.wait(timeout=30)

    def freeze(self, name: str) -> None:
        """SIGSTOP a worker at a moment it holds no database lock.

        A process frozen inside a transaction blocks every writer on SQLite (one write
        lock) and the rows it locked on PostgreSQL, for as long as it stays frozen:
        the tests are about frozen *workers*, not about a stuck database, so freeze
        again until the database answers a write without waiting.
        """
        proc = self.workers[name]
        for _ in range(100):
            proc.send_signal(signal.SIGSTOP)
            if _database_writable():
                return
            proc.send_signal(signal.SIGCONT)
            time.sleep(0.05)
        pytest.fail(f"could not freeze worker {name} outside a database transaction")

    def thaw(self, name: str) -> None:
        self.workers[name].send_signal(signal.SIGCONT)

    def log(self, log_name: str) -> str:
        path = self.log_dir / f"{log_name}.log"
        return path.read_text() if path.exists() else ""

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-5000:]}" for p in sorted(self.log_dir.glob(f"{self.name}-*.log")))

    def wait(self, predicate, timeout: float, what: str):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.2)
        pytest.fail(f"timed out waiting for {what}\n{self.logs()}")

    def close(self) -> None:
        procs = [p for p in [self.web, *self.workers.values()] if p is not None and p.poll() is None]
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=30)
        for log in self._logs:
            log.close()

    # ---- clients -------------------------------------------------------------------
    def client(self, user) -> httpx.Client:
        from rest_framework.authtoken.models import Token

        token, _ = Token.objects.get_or_create(user=user)
        client = httpx.Client(base_url=self.base_url, headers={"Authorization": f"Token {token.key}"}, timeout=30)
        client.token = token.key
        return client

    def watch(self, run_id: int, token: str, since: int | None = None) -> "Watcher":
        query = f"?token={token}" + (f"&since={since}" if since is not None else "")
        return Watcher(f"{self.ws_url}/ws/runs/{run_id}/{query}", self.base_url)


def _database_writable() -> bool:
    """Can a write transaction lock the run and lease tables within half a second?"""
    from django.db import connection

    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        import sqlite3

        conn = sqlite3.connect(db["NAME"], timeout=0.5, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("ROLLBACK")
            return True
        except sqlite3.OperationalError:
            return False
        finally:
            conn.close()
    from django.db import OperationalError, transaction

    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '500ms'")
            for table in ("circuits_run", "workers_runlease", "workers_workerheartbeat", "circuits_push"):
                cursor.execute(f"SELECT 1 FROM {table} FOR UPDATE")  # noqa: S608 - fixed table names
        return True
    except OperationalError:
        return False


class Watcher:
    """A websocket client reading every message on a thread."""

    def __init__(self, url: str, origin: str):
        self.ws = connect(url, origin=origin, open_timeout=15).__enter__()
        self.messages: list[dict] = []
        self.problems: list[str] = []  # received messages that drifted from the live schema
        self.closed = False
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        try:
            while True:
                message = json.loads(self.ws.recv())
                self.problems.extend(problems(message))
                self.messages.append(message)
        except Exception:  # noqa: BLE001 - closed
            self.closed = True

    def deltas(self) -> list[dict]:
        return [m for m in self.messages if m["type"] == "delta"]

    def of(self, kind: str) -> list[dict]:
        return [m for m in self.messages if m["type"] == kind]

    def wait_for(self, predicate, timeout: float = 60, what: str = "a message"):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.assert_follow_schema()
            if predicate(self.messages):
                return
            time.sleep(0.05)
        pytest.fail(f"websocket: timed out waiting for {what}; got {[(m['type'], m.get('seq'), m.get('status')) for m in self.messages]}")

    def assert_follow_schema(self):
        """Every message received so far follows runs/live_protocol.schema.json (a message
        a real worker or server sent that drifted from it fails the test, named)."""
        if self.problems:
            pytest.fail("websocket messages that do not follow runs/live_protocol.schema.json:\n" + "\n".join(self.problems[:20]))

    def close(self):
        self.ws.close()
        self._thread.join(timeout=5)
        self.assert_follow_schema()


def integrate(messages: list[dict]) -> dict[str, dict[str, int]]:
    """A watcher's view: the snapshot plus every delta after it, as view -> {row json: weight}."""
    views: dict[str, dict[str, int]] = {}
    for m in messages:
        if m["type"] == "snapshot":
            views = {v: {} for v in m["views"]}
            rows_by_view = m["views"]
        elif m["type"] == "delta":
            rows_by_view = m["views"]
        else:
            continue
        for view, rows in rows_by_view.items():
            acc = views.setdefault(view, {})
            for r in rows:
                key = json.dumps(r["data"], sort_keys=True)
                acc[key] = acc.get(key, 0) + r["weight"]
                if acc[key] == 0:
                    del acc[key]
    return views


def as_weights(view_rows: dict[str, list[dict]]) -> dict[str, dict[str, int]]:
    return {v: {json.dumps(r["data"], sort_keys=True): r["weight"] for r in rows} for v, rows in view_rows.items()}
