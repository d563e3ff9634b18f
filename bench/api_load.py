"""Load on the REST API: many concurrent clients list circuits, get one, and push rows,
against a real uvicorn (the ASGI app) on loopback, with the app on SQLite.

    .venv/bin/python -m bench.api_load --clients 1 8 32 64 --seconds 20

Sets up a throwaway SQLite database (migrated) with a user, an API token, `--circuits`
public circuits and one running run, starts uvicorn as a subprocess, drives it with
httpx (async, one connection per client), and prints requests/s and p50/p99 latency per
kind of request and overall. Pushes are logged and enqueued exactly as in production (on
a private Celery queue in Redis, `REDIS_URL`, emptied afterwards); no Spark worker runs:
a stand-in marks logged pushes applied every 0.5 s (one UPDATE, as a worker keeping up
would), so the backpressure check sees a short queue as in production. This measures the
API and its database writes, not ticks. Bounded: it stops after `--seconds` or
`--max-requests`, whichever comes first; loopback only.

Ingest (`--ingest`): pushes only, applied by a real Celery worker (solo pool, Spark
local mode) on the bench's queue, into `big_orders` (orders -> amount > 100). For each
level (`--rows` rows per push x `--clients` concurrent clients; a fresh run each) the
clients push for `--seconds` (at most `--max-pushes` pushes), honouring 429 Retry-After;
then the bench waits until every accepted push is applied. It prints accepted pushes/s
and rows/s, push latency p50/p99, and the same rates over the time until everything was
applied, and the CPU time the web processes (uvicorn and its workers), the Celery
worker (with its JVM) and the clients themselves (this process, which shares the machine)
spent per accepted push: on a shared machine the rates say how
much CPU the bench got, the CPU per push what the code costs. Then it cross-checks: the log holds each accepted push once (sequences 1..n,
rows as sent), every push was applied, and the run's stored outputs (its deltas
integrated) equal the reference evaluator (dbsp/reference.py) over the rows the clients
were told were accepted.

    .venv/bin/python -m bench.api_load --ingest --rows 1 --clients 32 --seconds 20
    .venv/bin/python -m bench.api_load --ingest --rows 10000 --clients 4 --seconds 20
    .venv/bin/python -m bench.api_load --ingest --rows 1 --clients 32 --seconds 20 --idempotency-keys
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIX = (("list", 0.4), ("get", 0.4), ("push", 0.2))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prepare(env: dict, circuits: int) -> dict:
    """Migrate the throwaway database and create the fixtures (in this process)."""
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    os.environ.update(env)
    import django

    django.setup()
    from rest_framework.authtoken.models import Token
    import json

    from circuits import services
    from runs.models import Run
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("bench")
    token = Token.objects.create(user=user).key
    document = json.loads((ROOT / "examples" / "circuits" / "big_orders.json").read_text())
    ids = [services.create_circuit(user, f"circuit {i}", "load test", "public", document, tags=["bench"]).pk
           for i in range(circuits)]
    first = services.Circuit.objects.get(pk=ids[0])
    run = Run.objects.create(circuit=first, version=first.latest_version, created_by=user, status="running")
    return {"token": token, "circuits": ids, "run": run.pk}


async def client_loop(base: str, fixtures: dict, deadline: float, budget: list, results: dict, seed: int):
    import httpx

    rng = random.Random(seed)
    headers = {"Authorization": f"Token {fixtures['token']}"}
    kinds, weights = zip(*MIX)
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as http:
        n = 0
        while time.monotonic() < deadline and budget[0] > 0:
            budget[0] -= 1
            kind = rng.choices(kinds, weights)[0]
            t0 = time.perf_counter()
            if kind == "list":
                r = await http.get("/api/circuits/", params={"page_size": 20, "tag": "bench"})
            elif kind == "get":
                r = await http.get(f"/api/circuits/{rng.choice(fixtures['circuits'])}/")
            else:
                n += 1
                rows = [{"insert": {"id": seed * 1_000_000 + n * 10 + i, "customer": "c", "amount": rng.randint(1, 500)}}
                        for i in range(10)]
                r = await http.post(f"/api/runs/{fixtures['run']}/inputs/orders/push/", json=rows)
            elapsed = time.perf_counter() - t0
            expected = 202 if kind == "push" else 200
            results.setdefault(kind, []).append(elapsed)
            if r.status_code != expected:
                results.setdefault("errors", []).append(f"{kind}: {r.status_code} {r.text[:200]}")


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


async def drive(base: str, fixtures: dict, clients: int, seconds: float, max_requests: int) -> tuple[dict, float]:
    results: dict = {}
    budget = [max_requests]
    start = time.monotonic()
    applier = asyncio.create_task(apply_pushes(fixtures["run"], start + seconds))
    await asyncio.gather(*(client_loop(base, fixtures, start + seconds, budget, results, seed) for seed in range(1, clients + 1)))
    await applier
    return results, time.monotonic() - start


async def apply_pushes(run_id: int, deadline: float) -> None:
    """The worker's stand-in: mark logged pushes applied, twice a second."""
    from asgiref.sync import sync_to_async

    from runs.models import Push

    def mark():
        Push.objects.filter(run_id=run_id, applied_tick__isnull=True).update(applied_tick=0)

    while time.monotonic() < deadline:
        await sync_to_async(mark, thread_sensitive=True)()
        await asyncio.sleep(0.5)


CUSTOMERS = [f"c{i}" for i in range(101)]


def ingest_body(client: int, n: int, rows: int, rng) -> tuple[bytes, list[dict]]:
    """One push: `rows` orders with ids unique to this client and push (and their rows).
    The clients share the machine with the server: drawn with NumPy and encoded with
    orjson (~3 ms per 10^4 rows; `random` + `json.dumps` took ~30 ms, as much CPU as
    the worker spends applying the push)."""
    import orjson

    base = (client * 1_000_000 + n) * rows
    customers = [CUSTOMERS[c] for c in rng.integers(1, 101, rows).tolist()]
    amounts = rng.integers(1, 501, rows).tolist()
    data = [{"id": base + i, "customer": c, "amount": a} for i, c, a in zip(range(rows), customers, amounts)]
    return orjson.dumps([{"insert": d} for d in data]), data


def csv_body(client: int, n: int, rows: int, rng) -> tuple[bytes, list[dict]]:
    """The same rows as a CSV body (`--csv`: Django's view parses it; the lane takes JSON only)."""
    _, data = ingest_body(client, n, rows, rng)
    lines = ["id,customer,amount", *(f"{d['id']},{d['customer']},{d['amount']}" for d in data)]
    return ("\n".join(lines) + "\n").encode(), data


async def ingest_client(base: str, token: str, run_id: int, client: int, rows: int, deadline: float, budget: list,
                        results: dict, keys: bool = False, csv: bool = False) -> None:
    import httpx

    import numpy as np

    rng = np.random.default_rng(client)
    headers = {"Authorization": f"Token {token}", "Content-Type": "text/csv" if csv else "application/json"}
    make_body = csv_body if csv else ingest_body
    bodies = [make_body(client, n, rows, rng) for n in range(max(1, min(budget[0], 200 if rows == 1 else 4)))]
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=120) as http:
        n = 0
        while time.monotonic() < deadline and budget[0] > 0:
            budget[0] -= 1
            body, data = bodies[n % len(bodies)] if n < len(bodies) else make_body(client, n, rows, rng)
            n += 1
            t0 = time.perf_counter()
            while True:
                # with --idempotency-keys each push has its own key, kept on a retry after a 429
                key = {"Idempotency-Key": f"client-{client}-push-{n}"} if keys else None
                r = await http.post(f"/api/runs/{run_id}/inputs/orders/push/", content=body, headers=key)
                if r.status_code != 429:
                    break
                results["refused_429"] = results.get("refused_429", 0) + 1
                await asyncio.sleep(float(r.headers.get("Retry-After", "1")))
            results.setdefault("latency", []).append(time.perf_counter() - t0)
            if r.status_code == 202:
                results.setdefault("accepted", []).append(data)
            else:
                results.setdefault("errors", []).append(f"{r.status_code} {r.text[:200]}")


def pending_pushes(run_id: int) -> tuple[int, str]:
    from runs.models import Push, Run

    return (Push.objects.filter(run_id=run_id, applied_tick__isnull=True).count(),
            Run.objects.filter(pk=run_id).values_list("status", flat=True).first())


def cross_check(run_id: int, accepted: list[list[dict]]) -> list[str]:
    """What is wrong with the run's log and outputs, against what the clients were told."""
    from dbsp import ZSet, compile_plan
    from dbsp.reference import recompute
    from dbsp.verify import differences, zset_json
    from runs.models import Push, Run
    from runs.outputs import integrated_views

    run = Run.objects.select_related("version").get(pk=run_id)
    wrong = []
    logged = list(Push.objects.filter(run=run).order_by("sequence").values_list("sequence", "row_count", "applied_tick"))
    if [s for s, _, _ in logged] != list(range(1, len(accepted) + 1)):
        wrong.append(f"the log holds {len(logged)} pushes, sequences {logged[0][0] if logged else '-'}.., "
                     f"for {len(accepted)} accepted")
    if sorted(r for _, r, _ in logged) != sorted(len(a) for a in accepted):
        wrong.append("the logged row counts differ from the accepted pushes'")
    if any(t is None for _, _, t in logged):
        wrong.append("some pushes were never applied")
    plan = compile_plan(run.version.document)
    schema = plan.inputs["orders"]
    rows = ZSet((tuple(d[c] for c in schema.names), 1) for data in accepted for d in data)
    expected = {view: zset_json(z, plan.views[view]) for view, z in recompute(plan, {"orders": rows}).items()
                if view in plan.views}
    if found := differences(expected, integrated_views(run)):
        wrong.append(f"stored outputs differ from the reference evaluator: "
                     f"{ {v: {k: len(x) for k, x in d.items()} for v, d in found.items()} }")
    return wrong


def tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) used so far by a process and its descendants (/proc):
    the web's uvicorn workers, the Celery worker's JVM."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
    total, stack = 0.0, [pid]
    while stack:
        p = stack.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except OSError:
            pass
        stack.extend(children.get(p, []))
    return total


def ingest(args) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="dbspweb-ingest-"))
    queue = f"dbspweb-ingest-{os.getpid()}"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "dbspweb.settings", "DATABASE_URL": "",
           "SQLITE_PATH": str(tmp / "db.sqlite3"), "DBSPWEB_VAR_DIR": str(tmp), "CELERY_QUEUE": queue,
           "CHANNELS_PREFIX": queue, "DJANGO_DEBUG": "0", "DJANGO_SECRET_KEY": "bench-only", "LOG_LEVEL": "INFO",
           "DBSPWEB_SNAPSHOT_DIR": str(tmp / "snapshots"), "SPARK_DRIVER_MEMORY": "2g", "PYTHONUNBUFFERED": "1"}
    levels = [(rows, clients) for rows in args.rows for clients in args.clients]
    fixtures = prepare(env, 1)
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    from circuits import services
    from runs.models import Run

    circuit = services.Circuit.objects.get(pk=fixtures["circuits"][0])
    user = circuit.owner
    run_ids = [Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=user, status="running").pk
               for _ in levels]
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    bin_dir = Path(sys.executable).parent
    logs = {name: open(tmp / f"{name}.log", "w") for name in ("uvicorn", "worker")}
    procs = [
        subprocess.Popen([str(bin_dir / "uvicorn"), "dbspweb.asgi:application", "--host", "127.0.0.1", "--port", str(port),
                          "--log-level", "warning", "--no-access-log", "--workers", str(args.workers)],
                         cwd=ROOT, env=env, stdout=logs["uvicorn"], stderr=subprocess.STDOUT),
        subprocess.Popen([str(bin_dir / "celery"), "-A", "dbspweb", "worker", "--pool=solo", "--loglevel=INFO", "-Q", queue,
                          "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", f"ingest-{os.getpid()}@%h"],
                         cwd=ROOT, env=env, stdout=logs["worker"], stderr=subprocess.STDOUT),
    ]
    report = []
    try:
        import httpx

        deadline = time.monotonic() + 240
        while "Spark session ready" not in (tmp / "worker.log").read_text():
            if time.monotonic() > deadline or procs[1].poll() is not None:
                raise SystemExit(f"the worker did not start; see {tmp / 'worker.log'}")
            time.sleep(0.3)
        for _ in range(300):
            try:
                if httpx.get(f"{base}/api/auth/me/", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        for (rows, clients), run_id in zip(levels, run_ids):
            load = os.getloadavg()[0]
            results: dict = {}
            budget = [args.max_pushes]
            cpu0 = [tree_cpu_s(p.pid) for p in procs]
            clients_cpu0 = time.process_time()
            start = time.monotonic()

            async def drive_level():
                await asyncio.gather(*(ingest_client(base, fixtures["token"], run_id, c, rows, start + args.seconds, budget,
                                                     results, args.idempotency_keys, args.csv) for c in range(1, clients + 1)))

            asyncio.run(drive_level())
            results["clients_cpu"] = time.process_time() - clients_cpu0
            sent = time.monotonic() - start
            while True:
                waiting, status = pending_pushes(run_id)
                if not waiting or status == "failed":
                    break
                if time.monotonic() - start > args.seconds + 600:
                    raise SystemExit(f"pushes still waiting after 600 s; see {tmp / 'worker.log'}")
                time.sleep(0.05)
            applied = time.monotonic() - start
            results["cpu"] = [tree_cpu_s(p.pid) - c for p, c in zip(procs, cpu0)]
            accepted = results.get("accepted", [])
            wrong = cross_check(run_id, accepted) if status != "failed" else [f"the run failed; see {tmp / 'worker.log'}"]
            report.append((rows, clients, accepted, results, sent, applied, load, os.getloadavg()[0], wrong))
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
        for f in logs.values():
            f.close()
        try:
            import redis

            redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")).delete(queue)
        except Exception as e:  # the bench result stands; say what was left behind
            print(f"note: could not empty the Celery queue {queue}: {e}")

    print(f"Ingest: uvicorn ({args.workers} process(es)) + 1 Celery worker (Spark local) + SQLite; big_orders; {'CSV' if args.csv else 'JSON'} pushes; "
          f"{args.seconds:g} s of pushes per level, then until all applied")
    print(f"{'rows/push':>9} {'clients':>7} {'pushes':>7} {'acc push/s':>10} {'acc rows/s':>11} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'applied s':>9} {'appl push/s':>11} {'appl rows/s':>11} {'web ms/push':>11} {'wrk ms/push':>11} "
          f"{'clients ms/push':>15} {'429s':>5} {'errors':>6} {'load':>9}  cross-check")
    for rows, clients, accepted, results, sent, applied, load0, load1, wrong in report:
        latency = results.get("latency", [0.0])
        n_rows = sum(len(a) for a in accepted)
        errors = results.get("errors", [])
        print(f"{rows:>9} {clients:>7} {len(accepted):>7} {len(accepted) / sent:>10.1f} {n_rows / sent:>11,.0f} "
              f"{statistics.median(latency) * 1000:>8.1f} {percentile(latency, 99) * 1000:>8.1f} {applied:>9.2f} "
              f"{len(accepted) / applied:>11.1f} {n_rows / applied:>11,.0f} "
              f"{results['cpu'][0] * 1000 / max(len(accepted), 1):>11.2f} {results['cpu'][1] * 1000 / max(len(accepted), 1):>11.2f} "
              f"{results['clients_cpu'] * 1000 / max(len(accepted), 1):>15.2f} {results.get('refused_429', 0):>5} "
              f"{len(errors):>6} {load0:>4.1f}→{load1:<4.1f}  {'ok' if not wrong else '; '.join(wrong)}")
        if errors:
            print(f"  first error: {errors[0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32, 64], help="one measurement per level, same server")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--max-requests", type=int, default=50_000)
    parser.add_argument("--circuits", type=int, default=100)
    parser.add_argument("--warmup", type=float, default=3)
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    parser.add_argument("--ingest", action="store_true", help="pushes only, applied by a real worker, cross-checked")
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 10_000], help="--ingest: rows per push (levels)")
    parser.add_argument("--max-pushes", type=int, default=100_000, help="--ingest: at most this many pushes per level")
    parser.add_argument("--csv", action="store_true", help="--ingest: push CSV bodies (text/csv) instead of JSON")
    parser.add_argument("--idempotency-keys", action="store_true", help="--ingest: every push with its own Idempotency-Key")
    args = parser.parse_args()
    if args.ingest:
        return ingest(args)

    tmp = Path(tempfile.mkdtemp(prefix="dbspweb-api-load-"))
    queue = f"dbspweb-bench-{os.getpid()}"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "dbspweb.settings", "DATABASE_URL": "",
           "SQLITE_PATH": str(tmp / "db.sqlite3"), "DBSPWEB_VAR_DIR": str(tmp), "CELERY_QUEUE": queue,
           "CHANNELS_PREFIX": queue, "DJANGO_DEBUG": "0", "DJANGO_SECRET_KEY": "bench-only", "LOG_LEVEL": "WARNING"}
    fixtures = prepare(env, args.circuits)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = open(tmp / "uvicorn.log", "w")
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "uvicorn"), "dbspweb.asgi:application", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning", "--no-access-log", "--workers", str(args.workers)],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        import httpx

        for _ in range(300):
            try:
                if httpx.get(f"{base}/api/auth/me/", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            raise SystemExit(f"uvicorn did not start; see {tmp / 'uvicorn.log'}")
        asyncio.run(drive(base, fixtures, 8, args.warmup, 2_000))  # warm up
        runs = [(clients, *asyncio.run(drive(base, fixtures, clients, args.seconds, args.max_requests)))
                for clients in args.clients]
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
        try:
            import redis

            redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")).delete(queue)
        except Exception as e:  # the bench result stands; say what was left behind
            print(f"note: could not empty the Celery queue {queue}: {e}")

    print(f"API load: uvicorn ({args.workers} process(es)) + SQLite, {args.circuits} public circuits; list = 20 per page, "
          f"push = 10 rows; mix {', '.join(f'{k} {int(w * 100)}%' for k, w in MIX)}; {args.seconds:g} s per level")
    print(f"{'clients':>7} {'request':<8} {'count':>7} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
    for clients, results, wall in runs:
        errors = results.pop("errors", [])
        for kind, _ in MIX:
            values = results.get(kind, [])
            if values:
                print(f"{clients:>7} {kind:<8} {len(values):>7} {len(values) / wall:>8.1f} "
                      f"{statistics.median(values) * 1000:>8.1f} {percentile(values, 99) * 1000:>8.1f}")
        every = [v for values in results.values() for v in values]
        print(f"{clients:>7} {'all':<8} {len(every):>7} {len(every) / wall:>8.1f} "
              f"{statistics.median(every) * 1000:>8.1f} {percentile(every, 99) * 1000:>8.1f}")
        print(f"{clients:>7} errors: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))


if __name__ == "__main__":
    main()
