"""Issue 31's flood: anonymous clients hammer explain, inspect and verify on a public run
while its owner works; does the owner still get answers? (runs/fair_queue.py)

    .venv/bin/python -m bench.fair_flood --anonymous 20 --seconds 60 --ticks 10 --rows 2000

Sets up a throwaway SQLite database with an owner, a public `big_orders` run whose log
holds `--ticks` applied pushes of `--rows` orders each (pushed through the REST API,
then marked applied as a worker would), starts uvicorn and `--verify-workers` Celery
workers on the verification queue only (solo pool, Spark local mode; no tick worker:
the log is already applied); from 2 workers the first takes only the owner's jobs
(the operators' lane, workers/lanes.py) unless `--no-owners-lane`. Every explanation is queued (EXPLAIN_SYNC_MAX_ROWS=0), as
the large runs of the issue are.

- `--anonymous` clients, each its own address (X-Forwarded-For, DBSPWEB_NUM_PROXIES=1;
  DRF's throttles off, to measure the queue's fairness alone), loop without pause: the
  25 pages of one explanation, explanations of random rows at random ticks, inspections
  of random ticks, and POST verify; a 202 is polled until done; a 429 is counted and
  retried after 0.2 s (a flooder ignores Retry-After).
- The owner (token) loops: explain a random big order at a random tick, or inspect
  `big_orders` (integral) at a tick not inspected yet, each polled until done; its
  latency is from the first request to the finished answer.

It prints the owner's p50/p99/max, the anonymous clients' answers by status (429s
included), how many replays of the log the explanations took against how many were
asked (the pages' sharing), and cross-checks every answer the owner got: an explained
row is in `big_orders` with weight 1 and its input row with the push that brought it;
an inspection's `total` is the count of generated orders over 100 through that tick.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = 25


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] if values else float("nan")


def orders(ticks: int, rows: int, seed: int = 7) -> list[list[dict]]:
    rng = random.Random(seed)
    return [[{"id": t * rows + i, "customer": f"c{rng.randint(0, 99)}", "amount": rng.randint(1, 500)}
             for i in range(rows)] for t in range(ticks)]


def prepare(env: dict) -> dict:
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    os.environ.update(env)
    import django

    django.setup()
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request otherwise
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from circuits import services
    from runs.models import Run

    owner = get_user_model().objects.create_user("owner")
    document = json.loads((ROOT / "examples" / "circuits" / "big_orders.json").read_text())
    circuit = services.create_circuit(owner, "Big orders", "flood", "public", document)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=owner, status="running")
    return {"token": Token.objects.create(user=owner).key, "run": run.pk}


async def until_done(http, response, stats: Counter | None = None):
    """Poll a 202 until the job is done (or failed); the final response."""
    body = response.json()
    url = body.get("url") or str(response.request.url)
    params = None if body.get("url") else dict(response.request.url.params)
    while response.status_code == 202 or (response.status_code == 200 and body.get("status") in ("queued", "running")):
        await asyncio.sleep(0.05)
        response = await http.get(url, params=params)
        body = response.json()
        if stats is not None:
            stats["polls"] += 1
    return response


async def anonymous_client(base: str, fx: dict, n: int, deadline: float, stats: Counter) -> None:
    import httpx

    rng = random.Random(n)
    headers = {"X-Forwarded-For": f"10.1.{n // 250}.{n % 250 + 1}"}
    run, ticks, data = fx["run"], fx["ticks"], fx["orders"]
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=120) as http:
        while time.monotonic() < deadline:
            what = rng.choice(["pages", "explain", "inspect", "verify"])
            if what == "pages":  # the 25 pages of one explanation
                asks = [("explain", {"view": "big_orders", "row": json.dumps(fx["famous"]), "tick": ticks - 1, "page": p})
                        for p in range(1, PAGES + 1)]
            elif what == "explain":
                t = rng.randrange(ticks)
                row = rng.choice([o for o in data[rng.randrange(t + 1)] if o["amount"] > 100])
                asks = [("explain", {"view": "big_orders", "row": json.dumps(row), "tick": t})]
            elif what == "inspect":
                asks = [("inspect", {"tick": rng.randrange(ticks), "kind": "integral"})]
            else:
                asks = [("verify", {"tick": rng.randrange(ticks)})]
            for kind, params in asks:
                while time.monotonic() < deadline:
                    if kind == "explain":
                        r = await http.get(f"/api/runs/{run}/explain/", params=params)
                    elif kind == "inspect":
                        r = await http.get(f"/api/runs/{run}/nodes/big_orders/", params=params)
                    else:
                        r = await http.post(f"/api/runs/{run}/verify/", params=params)
                    stats[f"{kind} {r.status_code}"] += 1
                    if r.status_code != 429:
                        break
                    await asyncio.sleep(0.2)
                else:
                    return
                if r.status_code == 202:
                    await until_done(http, r)


async def owner_client(base: str, fx: dict, deadline: float, latencies: dict, answers: list) -> None:
    import httpx

    rng = random.Random(0)
    run, ticks, data = fx["run"], fx["ticks"], fx["orders"]
    inspected: set[int] = set()
    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Token {fx['token']}"}, timeout=300) as http:
        while time.monotonic() < deadline:
            t = rng.randrange(ticks)
            t0 = time.perf_counter()
            if t not in inspected and rng.random() < 0.3:
                inspected.add(t)
                kind = "inspect"
                r = await http.get(f"/api/runs/{run}/nodes/big_orders/", params={"tick": t, "kind": "integral"})
                r = await until_done(http, r)
                answers.append(("inspect", t, None, r.status_code, r.json()))
            else:
                kind = "explain"
                pushed = rng.randrange(t + 1)
                row = rng.choice([o for o in data[pushed] if o["amount"] > 100])
                r = await http.get(f"/api/runs/{run}/explain/", params={"view": "big_orders", "row": json.dumps(row), "tick": t})
                r = await until_done(http, r)
                answers.append(("explain", t, (row, pushed), r.status_code, r.json()))
            latencies.setdefault(kind, []).append(time.perf_counter() - t0)


def cross_check(fx: dict, answers: list) -> list[str]:
    wrong = []
    for kind, tick, what, status, body in answers:
        if status != 200 or body.get("status") not in (None, "done"):
            wrong.append(f"{kind} at tick {tick}: {status} {str(body)[:200]}")
        elif kind == "inspect":
            expected = sum(1 for t in range(tick + 1) for o in fx["orders"][t] if o["amount"] > 100)
            if body["total"] != expected:
                wrong.append(f"inspect at tick {tick}: total {body['total']}, expected {expected}")
        else:
            row, pushed = what
            inputs = [(i["input"], i["row"], [p["tick"] for p in i["pushes"]]) for i in body["inputs"]]
            if body["weight"] != 1 or inputs != [("orders", row, [pushed])]:
                wrong.append(f"explain {row} at tick {tick}: weight {body['weight']}, inputs {inputs}")
    return wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--anonymous", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--ticks", type=int, default=10)
    parser.add_argument("--rows", type=int, default=2000, help="orders per tick")
    parser.add_argument("--verify-workers", type=int, default=1)
    parser.add_argument("--no-owners-lane", action="store_true",
                        help="every verify worker takes every job (the operators' lane is on by default from 2 workers)")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="fair-flood-"))
    queue = f"bench-fair-{os.getpid()}"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "dbspweb.settings", "DATABASE_URL": "",
           "SQLITE_PATH": str(tmp / "db.sqlite3"), "DBSPWEB_VAR_DIR": str(tmp), "DBSPWEB_INSPECT_DIR": str(tmp / "inspect"),
           "DBSPWEB_SNAPSHOT_DIR": str(tmp / "snapshots"),
           "CELERY_QUEUE": queue, "CHANNELS_PREFIX": queue, "PYTHONUNBUFFERED": "1", "EXPLAIN_SYNC_MAX_ROWS": "0",
           "DJANGO_SECRET_KEY": secrets.token_hex(32),  # debug off, as deployed (the settings' default)
           "DBSPWEB_NUM_PROXIES": "1", "DBSPWEB_VERIFY_WORKERS": str(args.verify_workers),
           "DBSPWEB_VERIFY_OWNERS_LANE": "0" if args.no_owners_lane else "1", "SPARK_DRIVER_MEMORY": "1g", "DBSPWEB_SPARK_WARM_UP_TICKS": "0",
           **{f"DBSPWEB_THROTTLE_{s.upper()}": "off" for s in ("anon", "share", "login", "register", "validate")}}
    fx = prepare(env)
    fx["ticks"], fx["orders"] = args.ticks, orders(args.ticks, args.rows)
    fx["famous"] = next(o for o in fx["orders"][0] if o["amount"] > 100)
    bin_dir = Path(sys.executable).parent
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    procs = [subprocess.Popen([str(bin_dir / "uvicorn"), "dbspweb.asgi:application", "--host", "127.0.0.1", "--port",
                               str(port), "--workers", "2", "--log-level", "warning"], cwd=ROOT, env=env,
                              stdout=open(tmp / "uvicorn.log", "w"), stderr=subprocess.STDOUT)]
    from workers.lanes import worker_queues

    for w in range(args.verify_workers):  # as `manage.py run_workers --verify` starts them (workers/lanes.py)
        queues = ",".join(worker_queues(w + 1, args.verify_workers))
        procs.append(subprocess.Popen(
            [str(bin_dir / "celery"), "-A", "dbspweb", "worker", "--pool=solo", "--loglevel=INFO", "-Q", queues,
             "--without-gossip", "--without-mingle", "-n", f"verify{w}-{queue}@%h"], cwd=ROOT, env=env,
            stdout=open(tmp / f"verify-{w}.log", "w"), stderr=subprocess.STDOUT))
    try:
        import httpx

        for _ in range(600):
            try:
                if httpx.get(f"{base}/api/auth/me/", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        with httpx.Client(base_url=base, headers={"Authorization": f"Token {fx['token']}"}, timeout=120) as http:
            for tick, rows in enumerate(fx["orders"]):
                r = http.post(f"/api/runs/{fx['run']}/inputs/orders/push/", json=[{"insert": o} for o in rows])
                assert r.status_code == 202, r.text
        from runs.models import Explanation, Push, Run

        for tick, push in enumerate(Push.objects.filter(run_id=fx["run"]).order_by("sequence")):
            Push.objects.filter(pk=push.pk).update(applied_tick=tick)
        Run.objects.filter(pk=fx["run"]).update(current_tick=args.ticks - 1)
        for w in range(args.verify_workers):
            while "Spark session ready" not in (tmp / f"verify-{w}.log").read_text():
                if procs[w + 1].poll() is not None:
                    raise SystemExit(f"verify worker {w} exited; see {tmp}")
                time.sleep(0.5)

        latencies: dict = {}
        answers: list = []
        stats: Counter = Counter()
        load_before = os.getloadavg()

        async def flood():
            deadline = time.monotonic() + args.seconds
            await asyncio.gather(owner_client(base, fx, deadline, latencies, answers),
                                 *(anonymous_client(base, fx, n, deadline, stats) for n in range(args.anonymous)))

        started = time.monotonic()
        asyncio.run(flood())
        elapsed = time.monotonic() - started
        load_after = os.getloadavg()
        replays = sum(log.read_text().count("event=explain_replay") for log in tmp.glob("verify-*.log"))
        explained = Explanation.objects.filter(run_id=fx["run"]).count()
        owner = [s for v in latencies.values() for s in v]
        from django.conf import settings

        lane = "with the operators' lane" if settings.VERIFY_OWNERS_LANE else "no operators' lane"
        print(f"Fair flood: uvicorn (2 processes) + {args.verify_workers} verify worker(s), {lane} + SQLite; big_orders, "
              f"{args.ticks} ticks x {args.rows} orders; {args.anonymous} anonymous clients + the owner, {elapsed:.0f} s; "
              f"loadavg 1-min {load_before[0]:.1f} before, {load_after[0]:.1f} after")
        print(f"  owner: {len(owner)} answers, p50 {percentile(owner, 50):.2f} s, p99 {percentile(owner, 99):.2f} s, "
              f"max {max(owner, default=float('nan')):.2f} s")
        for kind, values in sorted(latencies.items()):
            print(f"    {kind}: {len(values)}, p50 {percentile(values, 50):.2f} s, p99 {percentile(values, 99):.2f} s")
        print("  anonymous answers: " + ", ".join(f"{k}: {v}" for k, v in sorted(stats.items()) if k != "polls"))
        refused = sum(v for k, v in stats.items() if k.endswith(" 429"))
        print(f"  429s: {refused}; explanations queued: {explained}, replays of the log: {replays}")
        jobs = [(tmp / f"verify-{w}.log").read_text().count(" succeeded in ") for w in range(args.verify_workers)]
        print(f"  jobs carried out per verify worker: {jobs}")
        wrong = cross_check(fx, answers)
        print(f"  cross-check of the owner's {len(answers)} answers: " + ("ok" if not wrong else f"{len(wrong)} WRONG"))
        for w in wrong[:10]:
            print("    " + w)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        try:
            import redis

            client = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
            for key in client.scan_iter(match=f"{queue}*"):
                client.delete(key)
        except Exception:  # noqa: BLE001 - best effort
            pass
        print(f"  logs: {tmp}")


if __name__ == "__main__":
    main()
