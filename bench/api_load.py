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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32, 64], help="one measurement per level, same server")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--max-requests", type=int, default=50_000)
    parser.add_argument("--circuits", type=int, default=100)
    parser.add_argument("--warmup", type=float, default=3)
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    args = parser.parse_args()

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
