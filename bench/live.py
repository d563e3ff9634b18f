"""Live runs end to end: push-to-websocket latency, push throughput, recovery time.

Starts its own stack on a fresh SQLite database: a uvicorn server and two Celery
workers (solo pool, Spark local mode), on a queue and channel-layer prefix of its own,
against the Redis in REDIS_URL. Then, in one run:

- latency: one push at a time to `big_orders`; for each, the time from sending the
  POST to each watcher receiving that tick's delta, with 1, 10 and 100 watchers
  (p50/p99 over all watchers × pushes);
- throughput: pushes of 1, 100 and 10,000 rows to `transactions` (aggregates + join),
  sent back to back (honouring 429 Retry-After), until all are applied: rows/s;
- recovery: the worker holding a `transactions` run with some state is killed with
  SIGKILL; the time from the kill to a watcher receiving the delta of a push made
  right after it (lease expiry + sweep + state rebuild + the tick).

    .venv/bin/python -m bench.live [--pushes 30] [--lease-ttl 5]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
EXAMPLES = ROOT / "examples" / "circuits"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values, q):
    values = sorted(values)
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


class Stack:
    def __init__(self, workdir: Path, lease_ttl: float):
        self.workdir = workdir
        tag = f"bench-{os.getpid()}"
        self.env = {
            **os.environ, "DJANGO_SETTINGS_MODULE": "dbspweb.settings", "PYTHONUNBUFFERED": "1",
            "SQLITE_PATH": str(workdir / "bench.sqlite3"), "DATABASE_URL": "", "DBSPWEB_VAR_DIR": str(workdir),
            "CELERY_QUEUE": f"dbspweb-{tag}", "CHANNELS_PREFIX": f"dbspweb-{tag}",
            "DBSPWEB_LEASE_TTL": str(lease_ttl), "DBSPWEB_HEARTBEAT_EVERY": str(max(lease_ttl / 5, 0.2)),
            "DBSPWEB_SWEEP_EVERY": "1", "DBSPWEB_SWEEP_STALE": "5", "DBSPWEB_SNAPSHOT_DIR": str(workdir / "snapshots"),
            "SPARK_DRIVER_MEMORY": "2g", "LOG_LEVEL": "INFO",
        }
        self.procs: dict[str, subprocess.Popen] = {}
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"

    def log(self, name) -> str:
        path = self.workdir / f"{name}.log"
        return path.read_text() if path.exists() else ""

    def _spawn(self, name, args):
        out = open(self.workdir / f"{name}.log", "w")
        self.procs[name] = subprocess.Popen(args, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT)

    def start(self):
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=self.env, check=True)
        self._spawn("web", [str(BIN / "uvicorn"), "dbspweb.asgi:application", "--host", "127.0.0.1", "--port", str(self.port),
                            "--log-level", "warning"])
        for name in ("w1", "w2"):
            self.start_worker(name, wait=False)
        for name in ("w1", "w2"):
            self.wait(lambda n=name: "Spark session ready" in self.log(n), 240, f"worker {name}")

    def start_worker(self, name, wait=True):
        self._spawn(name, [str(BIN / "celery"), "-A", "dbspweb", "worker", "--pool=solo", "--loglevel=INFO",
                           "-Q", self.env["CELERY_QUEUE"], "--without-gossip", "--without-mingle", "--without-heartbeat",
                           "-n", f"{name}-bench@%h"])
        if wait:
            self.wait(lambda: "Spark session ready" in self.log(name), 240, f"worker {name}")

    def wait(self, predicate, timeout, what):
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise SystemExit(f"timed out waiting for {what}")
            time.sleep(0.2)

    def stop(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.terminate()
        for p in self.procs.values():
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


class Watcher:
    def __init__(self, ws):
        self.ws = ws
        self.arrivals: dict[int, float] = {}
        self.task = asyncio.create_task(self._read())

    async def _read(self):
        async for raw in self.ws:
            message = json.loads(raw)
            if message["type"] == "delta":
                self.arrivals[message["seq"]] = time.perf_counter()


async def open_watchers(stack, run_id, token, n):
    from websockets.asyncio.client import connect

    url = f"ws://127.0.0.1:{stack.port}/ws/runs/{run_id}/?token={token}"
    sockets = await asyncio.gather(*[connect(url, origin=stack.base, open_timeout=60, max_size=None) for _ in range(n)])
    return [Watcher(ws) for ws in sockets]


async def close_watchers(watchers):
    for w in watchers:
        await w.ws.close()
        w.task.cancel()


async def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        await asyncio.sleep(0.002)


async def start_run(api, name, document):
    circuit = (await api.post("/api/circuits/", json={"name": name, "document": document})).json()
    run = (await api.post(f"/api/circuits/{circuit['id']}/runs/")).json()
    while (await api.get(f"/api/runs/{run['id']}/")).json()["status"] != "running":
        await asyncio.sleep(0.1)
    return run["id"]


async def push(api, run_id, input_name, records):
    while True:
        r = await api.post(f"/api/runs/{run_id}/inputs/{input_name}/push/", json=records)
        if r.status_code != 429:
            assert r.status_code == 202, r.text
            return r.json()
        await asyncio.sleep(int(r.headers["Retry-After"]))


def transactions(n, start, rng):
    return [{"insert": {"id": start + i, "from_acct": rng.randint(1, 1000), "to_acct": rng.randint(1, 1000),
                        "amount": rng.randint(1, 500)}} for i in range(n)]


async def latency(stack, api, token, watchers_n, pushes):
    run_id = await start_run(api, f"latency-{watchers_n}", json.loads((EXAMPLES / "big_orders.json").read_text()))
    watchers = await open_watchers(stack, run_id, token, watchers_n)
    await asyncio.sleep(0.5)
    samples = []
    for i in range(pushes + 3):  # the first 3 warm up
        sent = time.perf_counter()
        await push(api, run_id, "orders", [{"insert": {"id": i, "customer": "c", "amount": 500}}])
        await wait_until(lambda: all(i in w.arrivals for w in watchers), 60, f"tick {i} on every watcher")
        if i >= 3:
            samples.extend((w.arrivals[i] - sent) * 1000 for w in watchers)
    await close_watchers(watchers)
    await api.post(f"/api/runs/{run_id}/stop/")
    return samples


async def throughput(api, run_id, rows_per_push, pushes, next_id, rng):
    from runs.models import Push
    from asgiref.sync import sync_to_async

    bodies = [transactions(rows_per_push, next_id + i * rows_per_push, rng) for i in range(pushes)]
    started = time.perf_counter()
    for body in bodies:
        await push(api, run_id, "transactions", body)
    accepted = time.perf_counter()
    count = sync_to_async(lambda: Push.objects.filter(run_id=run_id, applied_tick__isnull=True).count())
    while await count():
        await asyncio.sleep(0.01)
    done = time.perf_counter()
    return rows_per_push * pushes / (done - started), (accepted - started), (done - started)


async def recovery(stack, api, token, run_id, rng, next_id):
    from asgiref.sync import sync_to_async
    from workers.models import RunLease

    lease = await sync_to_async(lambda: RunLease.objects.get(run_id=run_id))()
    pid = int(lease.worker.rsplit(":", 1)[1])
    holder = next(name for name, p in stack.procs.items() if p.pid == pid)
    [watcher] = await open_watchers(stack, run_id, token, 1)
    await asyncio.sleep(0.5)
    tick_before = (await api.get(f"/api/runs/{run_id}/")).json()["current_tick"]
    killed = time.perf_counter()
    stack.procs[holder].send_signal(signal.SIGKILL)
    stack.procs[holder].wait()
    await push(api, run_id, "transactions", transactions(10, next_id, rng))
    await wait_until(lambda: tick_before + 1 in watcher.arrivals, 300, "the tick after the kill")
    took = watcher.arrivals[tick_before + 1] - killed
    await close_watchers([watcher])
    survivor = next(n for n in ("w1", "w2") if n != holder)
    rebuilt = [line for line in stack.log(survivor).splitlines() if f"event=recovered run={run_id}" in line]
    return took, holder, rebuilt[-1].split("event=", 1)[1] if rebuilt else "?"


async def start_and_log_in(stack) -> str:
    """Start the stack, point this process's Django at its database, and return an API
    token of a fresh user."""
    import django

    os.environ.update({k: v for k, v in stack.env.items() if k not in os.environ or k in (
        "SQLITE_PATH", "DATABASE_URL", "DBSPWEB_VAR_DIR", "CELERY_QUEUE", "CHANNELS_PREFIX")})
    stack.start()
    django.setup()
    from asgiref.sync import sync_to_async
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    def make_token():
        user = User.objects.create_user("bench", password="bench-pass-1")
        return Token.objects.create(user=user).key

    return await sync_to_async(make_token)()


async def main_async(args):
    import httpx

    workdir = Path(tempfile.mkdtemp(prefix="dbspweb-bench-"))
    stack = Stack(workdir, args.lease_ttl)
    token = await start_and_log_in(stack)
    results = {}
    try:
        async with httpx.AsyncClient(base_url=stack.base, headers={"Authorization": f"Token {token}"}, timeout=120) as api:
            for n in (1, 10, 100):
                samples = await latency(stack, api, token, n, args.pushes)
                results[f"latency_{n}"] = (percentile(samples, 0.5), percentile(samples, 0.99), len(samples))
                print(f"latency, {n} watchers: p50 {results[f'latency_{n}'][0]:.1f} ms, p99 {results[f'latency_{n}'][1]:.1f} ms "
                      f"({len(samples)} samples)", flush=True)
            rng = random.Random(7)
            run_id = await start_run(api, "throughput", json.loads((EXAMPLES / "transactions.json").read_text()))
            next_id = 0
            for rows, pushes in ((1, args.small_pushes), (100, 100), (10_000, 10)):
                rate, accept_s, total_s = await throughput(api, run_id, rows, pushes, next_id, rng)
                next_id += rows * pushes
                results[f"throughput_{rows}"] = (rate, pushes, accept_s, total_s)
                print(f"throughput, {rows} rows/push x {pushes}: {rate:,.0f} rows/s "
                      f"(all accepted after {accept_s:.2f} s, all applied after {total_s:.2f} s)", flush=True)
            ticks = (await api.get(f"/api/runs/{run_id}/")).json()["current_tick"]
            took, holder, rebuilt = await recovery(stack, api, token, run_id, rng, next_id)
            results["recovery"] = (took, ticks, rebuilt)
            print(f"recovery: {took:.2f} s from SIGKILL of {holder} to the next tick on the websocket "
                  f"(run at tick {ticks}, lease TTL {args.lease_ttl:g} s; survivor: {rebuilt})", flush=True)
    finally:
        stack.stop()
    print(f"logs and database: {workdir}")
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pushes", type=int, default=30, help="pushes per latency measurement")
    parser.add_argument("--small-pushes", type=int, default=300, help="1-row pushes in the throughput run")
    parser.add_argument("--lease-ttl", type=float, default=5.0, help="DBSPWEB_LEASE_TTL for the workers")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dbspweb.settings")
    os.environ.setdefault("DJANGO_DEBUG", "1")  # as ./scripts/run (the settings default is off)
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
