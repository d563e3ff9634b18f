"""Websocket delivery under push load, and the soak.

N clients, each with a run of `big_orders` of its own and a websocket watching it,
push 1-row inserts at a total rate (default 20 clients, 46 pushes/s, as in issue 17).
For every push: the time from sending the POST to the watcher receiving the delta that
carries its row (p50/p99/max), and whether it arrived at all. Starts its own stack on a
fresh SQLite database: `--web-workers` uvicorn processes and `manage.py run_workers`
(2 Celery workers), against the Redis in REDIS_URL, on a queue and channel-layer prefix
of its own.

`--seconds 600 --rss-every 10` is the soak: RSS of the web and worker processes is
sampled over time, and at the end every acknowledged push must be applied exactly once
and every run's stored outputs must equal the reference evaluator's recomputation from
its input log.

    REDIS_URL=redis://127.0.0.1:6379/0 .venv/bin/python -m bench.delivery [--clients 20] [--rate 46] [--seconds 60] [--web-workers 2]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.live import BIN, EXAMPLES, ROOT, Stack, percentile, start_and_log_in


class DeliveryStack(Stack):
    def __init__(self, workdir: Path, web_workers: int, workers: int):
        super().__init__(workdir, lease_ttl=5.0)
        self.web_workers, self.workers = web_workers, workers

    def start(self):
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=self.env, check=True)
        web = [str(BIN / "uvicorn"), "dbspweb.asgi:application", "--host", "127.0.0.1", "--port", str(self.port),
               "--log-level", "warning"]
        self._spawn("web", web + (["--workers", str(self.web_workers)] if self.web_workers > 1 else []))
        self._spawn("workers", [sys.executable, "manage.py", "run_workers", "--count", str(self.workers), "--log-dir",
                                str(self.workdir), "--name", f"bench{os.getpid()}-", "--",
                                "--without-gossip", "--without-mingle", "--without-heartbeat"])
        for i in range(1, self.workers + 1):
            self.wait(lambda i=i: "Spark session ready" in self.log(f"worker-{i}"), 300, f"worker {i}")
        self.wait(lambda: self._web_up(), 60, "the web server")

    def _web_up(self):
        import httpx

        try:
            return httpx.get(f"{self.base}/api/auth/me/", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def rss_mb(self) -> dict[str, float]:
        """Resident memory of the web server and the workers, each with its children (MB)."""
        out = {}
        for name in ("web", "workers"):
            pids = _tree(self.procs[name].pid)
            out[name] = sum(_rss_kb(p) for p in pids) / 1024
        return out


def _tree(pid: int) -> list[int]:
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return [pid] + [p for c in children for p in _tree(int(c))]


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class Client:
    def __init__(self, index, api, run_id):
        self.index, self.api, self.run_id = index, api, run_id
        self.sent: dict[int, float] = {}
        self.arrived: dict[int, float] = {}
        self.acked: set[int] = set()
        self.acked_at: dict[int, float] = {}
        self.duplicates = self.retries = self.refused = 0

    async def watch(self, port, token, base):
        from websockets.asyncio.client import connect

        self.ws = await connect(f"ws://127.0.0.1:{port}/ws/runs/{self.run_id}/?token={token}", origin=base,
                                open_timeout=60, max_size=None)
        self.reader = asyncio.create_task(self._read())

    async def _read(self):
        async for raw in self.ws:
            message = json.loads(raw)
            if message["type"] != "delta":
                continue
            now = time.time()
            for r in message["views"].get("big_orders", []):
                if r["weight"] > 0:
                    row_id = r["data"]["id"]
                    if row_id in self.arrived:
                        self.duplicates += 1
                    self.arrived.setdefault(row_id, now)

    async def push(self, row_id):
        self.sent[row_id] = time.time()
        import httpx

        while True:
            try:  # the same Idempotency-Key: a retried push is logged once
                r = await self.api.post(f"/api/runs/{self.run_id}/inputs/orders/push/",
                                        json=[{"insert": {"id": row_id, "customer": f"c{self.index}", "amount": 500}}],
                                        headers={"Idempotency-Key": f"{self.run_id}-{row_id}"})
            except httpx.TransportError:  # a kept-alive connection the server closed
                self.retries += 1
                await asyncio.sleep(0.1)
                continue
            if r.status_code != 429:
                break
            self.refused += 1
            await asyncio.sleep(int(r.headers.get("Retry-After", "1")))
        assert r.status_code == 202, r.text
        self.acked.add(row_id)
        self.acked_at[row_id] = time.time()


async def start_run(api, name):
    document = json.loads((EXAMPLES / "big_orders.json").read_text())
    circuit = (await api.post("/api/circuits/", json={"name": name, "document": document})).json()
    run = (await api.post(f"/api/circuits/{circuit['id']}/runs/")).json()
    while (await api.get(f"/api/runs/{run['id']}/")).json()["status"] != "running":
        await asyncio.sleep(0.2)
    return run["id"]


def _row(record: dict) -> dict:
    return record.get("data") or record.get("insert")


def commit_times(run_ids) -> dict[tuple[int, int], float]:
    """(run, row id) -> the wall-clock time the tick that applied it was written (TickOutput.created_at)."""
    from runs.models import Push, TickOutput

    written = {(t.run_id, t.tick): t.created_at.timestamp() for t in TickOutput.objects.filter(run_id__in=run_ids)}
    return {(p.run_id, _row(rec)["id"]): written[p.run_id, p.applied_tick]
            for p in Push.objects.filter(run_id__in=run_ids, applied_tick__isnull=False) for rec in p.records
            if (p.run_id, p.applied_tick) in written}


def check_outputs(run_ids) -> list[str]:
    """Exactly once, and outputs equal the reference recomputed from the input log."""
    from dbsp import compile_plan
    from dbsp.reference import ReferenceRuntime
    from runs.models import Push, Run, TickOutput
    from workers.engines import changes_of

    problems = []
    for run_id in run_ids:
        run = Run.objects.select_related("version").get(pk=run_id)
        pushes = list(Push.objects.filter(run=run).order_by("sequence"))
        if any(p.applied_tick is None for p in pushes):
            problems.append(f"run {run_id}: {sum(p.applied_tick is None for p in pushes)} pushes not applied")
        ticks = list(TickOutput.objects.filter(run=run).order_by("tick").values_list("tick", flat=True))
        if ticks != list(range(run.current_tick + 1)):
            problems.append(f"run {run_id}: ticks not contiguous")
        stored: dict[str, int] = {}
        for t in TickOutput.objects.filter(run=run):
            for r in t.deltas.get("big_orders", []):
                key = json.dumps(r["data"], sort_keys=True)
                stored[key] = stored.get(key, 0) + r["weight"]
        plan = compile_plan(run.version.document)
        reference = ReferenceRuntime(plan)
        expected: dict[str, int] = {}
        for r in reference.step(changes_of([p for p in pushes if p.applied_tick is not None], plan)).outputs_json()["big_orders"]:
            expected[json.dumps(r["data"], sort_keys=True)] = r["weight"]
        if {k: v for k, v in stored.items() if v} != expected:
            problems.append(f"run {run_id}: stored outputs differ from the reference")
        ids = [_row(rec)["id"] for p in pushes for rec in p.records]
        if len(ids) != len(set(ids)):
            problems.append(f"run {run_id}: a push was logged twice")
    return problems


async def main_async(args):
    import httpx

    workdir = Path(tempfile.mkdtemp(prefix="dbspweb-delivery-"))
    stack = DeliveryStack(workdir, args.web_workers, args.workers)
    token = await start_and_log_in(stack)
    from asgiref.sync import sync_to_async
    load = os.getloadavg()
    rss, loads = [], []
    try:
        limits = httpx.Limits(max_connections=args.clients * 2)
        async with httpx.AsyncClient(base_url=stack.base, headers={"Authorization": f"Token {token}"}, timeout=120,
                                     limits=limits) as api:
            run_ids = [await start_run(api, f"delivery-{i}") for i in range(args.clients)]
            clients = [Client(i, api, run_id) for i, run_id in enumerate(run_ids)]
            for c in clients:
                await c.watch(stack.port, token, stack.base)
            await asyncio.sleep(1)
            interval = args.clients / args.rate  # each client pushes every `interval` s
            started = time.time()
            rss.append((0.0, stack.rss_mb()))

            async def drive(c: Client):
                n = 0
                await asyncio.sleep(interval * c.index / args.clients)
                pending = set()
                while time.time() - started < args.seconds:
                    pending.add(asyncio.create_task(c.push(n)))
                    n += 1
                    await asyncio.sleep(max(0.0, started + c.index * interval / args.clients + n * interval - time.time()))
                await asyncio.gather(*pending)

            async def sample():
                while time.time() - started < args.seconds:
                    await asyncio.sleep(args.rss_every)
                    rss.append((time.time() - started, stack.rss_mb()))
                    loads.append((rss[-1][0], os.getloadavg()[0]))
                    print(f"t={rss[-1][0]:.0f}s rss web {rss[-1][1]['web']:.0f} MB workers {rss[-1][1]['workers']:.0f} MB "
                          f"load {loads[-1][1]:.1f}", flush=True)

            sampler = asyncio.create_task(sample())
            await asyncio.gather(*(drive(c) for c in clients))
            sampler.cancel()
            elapsed = time.time() - started
            deadline = time.monotonic() + 120
            while any(len(c.arrived) < len(c.acked) for c in clients) and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            for c in clients:
                await c.ws.close()
                c.reader.cancel()
            rss.append((time.time() - started, stack.rss_mb()))
        samples = [(c.arrived[i] - c.sent[i]) * 1000 for c in clients for i in c.acked if i in c.arrived]
        acked = sum(len(c.acked) for c in clients)
        missing = acked - len(samples)
        print(f"clients {args.clients}, target {args.rate} pushes/s, web workers {args.web_workers}, "
              f"load average at start {load[0]:.1f}, at end {os.getloadavg()[0]:.1f}")
        print(f"acknowledged pushes: {acked} in {elapsed:.1f} s ({acked / elapsed:.1f}/s); not delivered: {missing}; "
              f"duplicates: {sum(c.duplicates for c in clients)}; 429s: {sum(c.refused for c in clients)}; "
              f"retried after a transport error: {sum(c.retries for c in clients)}")
        accept = [(c.acked_at[i] - c.sent[i]) * 1000 for c in clients for i in c.acked]
        committed = await sync_to_async(commit_times)(run_ids)  # (run, row id) -> when its tick was written
        to_commit = [(committed[c.run_id, i] - c.acked_at[i]) * 1000 for c in clients for i in c.acked if (c.run_id, i) in committed]
        commit_to_ws = [(c.arrived[i] - committed[c.run_id, i]) * 1000 for c in clients for i in c.acked
                        if i in c.arrived and (c.run_id, i) in committed]
        after_ack = [(c.arrived[i] - c.acked_at[i]) * 1000 for c in clients for i in c.acked if i in c.arrived]
        for what, values in (("push sent to websocket delivery", samples), ("push sent to 202", accept),
                             ("202 to websocket delivery", after_ack), ("202 to tick written", to_commit),
                             ("tick written to websocket delivery", commit_to_ws)):
            if values:
                print(f"{what}: p50 {percentile(values, 0.5):.0f} ms, p99 {percentile(values, 0.99):.0f} ms, "
                      f"max {max(values):.0f} ms")
        windows(clients, started, args.window, loads)
        print("rss MB (t, web, workers): " + ", ".join(f"({t:.0f}, {m['web']:.0f}, {m['workers']:.0f})" for t, m in rss))
        problems = await sync_to_async(check_outputs)(run_ids)
        print("exactly once and equal to the reference: " + ("yes" if not problems else "; ".join(problems)))
    finally:
        stack.stop()
    print(f"logs and database: {workdir}")


def windows(clients, started: float, width: float, loads: list[tuple[float, float]]) -> None:
    """sent→delivered per window of send time, with the machine's load then: a soak is
    live when every window's p99 is under 1 s, and this says which windows were not and
    how loaded the machine was in them."""
    by_window: dict[int, list[float]] = {}
    for c in clients:
        for i in c.acked:
            if i in c.arrived:
                by_window.setdefault(int((c.sent[i] - started) // width), []).append((c.arrived[i] - c.sent[i]) * 1000)
    print(f"per {width:.0f} s window of send time: start s, pushes, sent->delivered p50 / p99 / max ms, load average")
    for w in sorted(by_window):
        values = by_window[w]
        seen = [load for t, load in loads if w * width <= t < (w + 1) * width + width]
        print(f"  {w * width:5.0f}  {len(values):6d}  {percentile(values, 0.5):7.0f} / {percentile(values, 0.99):7.0f} / "
              f"{max(values):7.0f}  {max(seen) if seen else float('nan'):.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--rate", type=float, default=46.0, help="pushes per second, all clients together")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--web-workers", type=int, default=1, help="uvicorn worker processes")
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes")
    parser.add_argument("--rss-every", type=float, default=10.0, help="seconds between memory samples")
    parser.add_argument("--window", type=float, default=60.0, help="seconds per latency window in the report")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dbspweb.settings")
    os.environ.setdefault("DJANGO_DEBUG", "1")  # as ./scripts/run (the settings default is off)
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
