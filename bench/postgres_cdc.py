"""PostgreSQL change capture end to end (issue 27): a 10^6-row snapshot, then a steady
stream of changes, from a PostgreSQL table to a PostgreSQL sink table through a run.

A PostgreSQL cluster of its own (tests/postgres_cluster.py: initdb, a free port,
wal_level=logical) holds `orders(id, region, amount, seq)` loaded with COPY. The stack
is the product's (bench/live.py's Stack): a uvicorn server and one Celery worker (solo
pool, Spark local mode) on a fresh SQLite database, a queue and prefix of its own. Over
the REST API: a circuit summing `amount` per `region`, a run, a `postgres_source` on the
table and a `postgres_sink` keeping the view in the table `revenue` (key `region`) of
the same cluster. The worker's pump thread reads the source into the input log, the
worker's ticks apply it, the pump writes the ticks to the sink.

Phase 1 (snapshot): from declaring the connectors to the sink table equal to
`SELECT region, sum(amount) FROM orders GROUP BY region`.

Phase 2 (changes): a writer process commits `--rate` changes/s for `--seconds`, in
transactions of `--per-txn` changes (half inserts of new ids, 3/10 updates of amount,
1/5 deletes), each transaction ending with an update of a marker row (`id` 0, region
`~marker`, `amount` = the transaction's number), so the sink row `~marker` holds the
number of the last transaction whose changes are all in the sink. A poller reads that
row every few milliseconds; a transaction's lag is the time from its COMMIT returning
in the writer to the poller first seeing a marker at or past its number (the lag of its
last change; its others were there no later). Reported: p50/p99/max over all
transactions, p50 of the first and last thirds (a growing backlog shows as a rising
lag), the slot's WAL backlog sampled during the run, and the time to drain after the
writer stops. The writer's achieved rate is reported too (it is paced, and says so when
it falls behind).

Cross-check at the end: the sink table equals `SELECT region, sum(amount) ... GROUP BY
region` recomputed in PostgreSQL (rows and values), and the run's input log holds
10^6 + the changes' records.

    REDIS_URL=redis://127.0.0.1:6379/12 .venv/bin/python -m bench.postgres_cdc [--rows 1000000] [--rate 10000] [--seconds 40]
"""
from __future__ import annotations

import argparse
import asyncio
import io
import json
import multiprocessing
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.live import ROOT, Stack, percentile

REGIONS = [f"r{i:02d}" for i in range(50)]
MARKER = "~marker"
CIRCUIT = {
    "format": "dbspweb.circuit", "version": 1,
    "nodes": [
        {"id": "orders", "kind": "input", "position": {"x": 0, "y": 0}, "params": {"schema": [
            {"name": "id", "type": "bigint", "nullable": False}, {"name": "region", "type": "string"},
            {"name": "amount", "type": "bigint"}, {"name": "seq", "type": "bigint"}]}},
        {"id": "by_region", "kind": "aggregate", "position": {"x": 240, "y": 0},
         "params": {"group_by": ["region"], "aggregates": [{"fn": "sum", "expr": "amount", "as": "revenue"}]}},
        {"id": "revenue", "kind": "output", "position": {"x": 480, "y": 0}, "params": {}},
    ],
    "edges": [{"from": {"node": "orders", "port": "out"}, "to": {"node": "by_region", "port": "in"}},
              {"from": {"node": "by_region", "port": "out"}, "to": {"node": "revenue", "port": "in"}}],
}
RECOMPUTED = "SELECT region, sum(amount)::bigint FROM orders GROUP BY region"


def load(url: str, rows: int) -> float:
    """orders with `rows` rows (ids 1..rows) and the marker row (id 0), loaded with COPY."""
    import psycopg

    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE orders (id bigint PRIMARY KEY, region text NOT NULL, amount bigint NOT NULL,"
                     " seq bigint NOT NULL)")
        conn.execute("ALTER TABLE orders REPLICA IDENTITY FULL")
        with conn.cursor().copy("COPY orders (id, region, amount, seq) FROM STDIN") as copy:
            copy.write(f"0\t{MARKER}\t0\t0\n")
            chunk = io.StringIO()
            for i in range(1, rows + 1):
                chunk.write(f"{i}\t{REGIONS[i % len(REGIONS)]}\t{(i * 37) % 1000}\t0\n")
                if i % 100_000 == 0:
                    copy.write(chunk.getvalue())
                    chunk = io.StringIO()
            copy.write(chunk.getvalue())
        conn.execute("VACUUM ANALYZE orders")
    return time.perf_counter() - started


def write(url: str, rows: int, rate: int, seconds: float, per_txn: int, out_path: str) -> None:
    """The writer process: `rate` changes/s in transactions of `per_txn` changes, paced
    against the clock; each transaction's number and the wall time its COMMIT returned."""
    import psycopg

    rng = random.Random(27)
    live = list(range(1, rows + 1))  # ids present (a swap-remove list)
    next_id = rows + 1
    inserts, updates = per_txn // 2, per_txn * 3 // 10
    deletes = per_txn - inserts - updates
    txns = int(rate * seconds / (per_txn + 1))
    commits = []
    behind = 0.0
    with psycopg.connect(url, autocommit=True) as conn:
        start = time.time()
        for n in range(1, txns + 1):
            due = start + (n - 1) * (per_txn + 1) / rate
            wait = due - time.time()
            if wait > 0:
                time.sleep(wait)
            else:
                behind = max(behind, -wait)
            new = list(range(next_id, next_id + inserts))
            next_id += inserts
            changed = [live[rng.randrange(len(live))] for _ in range(updates)]
            gone = []
            for _ in range(deletes):
                at = rng.randrange(len(live))
                gone.append(live[at])
                live[at] = live[-1]
                live.pop()
            changed = [i for i in set(changed) if i not in set(gone)]
            with conn.transaction():
                conn.execute("INSERT INTO orders SELECT i, 'r' || lpad((i %% 50)::text, 2, '0'), i %% 997, %s"
                             " FROM unnest(%s::bigint[]) i", (n, new))
                conn.execute("UPDATE orders SET amount = amount + 1, seq = %s WHERE id = ANY(%s)", (n, changed))
                conn.execute("DELETE FROM orders WHERE id = ANY(%s)", (gone,))
                conn.execute("UPDATE orders SET amount = %s, seq = %s WHERE id = 0", (n, n))
            commits.append((n, time.time(), len(new) + len(changed) + len(gone) + 1))
            live.extend(new)
    Path(out_path).write_text(json.dumps({"commits": commits, "behind": behind, "start": start}))


class Poller(threading.Thread):
    """Reads the sink's marker row every `every` seconds: the first time each value shows."""

    def __init__(self, url: str, every: float = 0.002):
        super().__init__(daemon=True)
        self.url, self.every = url, every
        self.seen: list[tuple[int, float]] = []  # (marker, first seen)
        self.stop = threading.Event()

    def run(self):
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            last = -1
            while not self.stop.is_set():
                row = conn.execute("SELECT revenue FROM revenue WHERE region = %s", (MARKER,)).fetchone()
                now = time.time()
                if row is not None and row[0] != last:
                    last = row[0]
                    self.seen.append((row[0], now))
                time.sleep(self.every)


def sink_equals_recomputed(url: str) -> tuple[bool, int]:
    import psycopg

    with psycopg.connect(url) as conn:
        try:
            sink = dict(conn.execute("SELECT region, revenue FROM revenue").fetchall())
        except psycopg.errors.UndefinedTable:
            return False, 0
        expected = dict(conn.execute(RECOMPUTED).fetchall())
    return sink == expected, len(expected)


def slot_backlog(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT max(pg_current_wal_lsn() - confirmed_flush_lsn) FROM pg_replication_slots"
                           " WHERE NOT temporary").fetchone()
    return int(row[0] or 0)


async def main_async(args) -> dict:
    import httpx

    from bench.live import start_and_log_in, start_run
    from tests.postgres_cluster import PostgresCluster

    pg = PostgresCluster()
    url = pg.new_database()
    print(f"PostgreSQL {url}", flush=True)
    loaded = load(url, args.rows)
    print(f"loaded {args.rows:,} rows with COPY in {loaded:.1f} s", flush=True)
    workdir = Path(tempfile.mkdtemp(prefix="dbspweb-bench-pgcdc-"))
    stack = OneWorkerStack(workdir, lease_ttl=15.0)
    results = {}
    try:
        token = await start_and_log_in(stack)
        async with httpx.AsyncClient(base_url=stack.base, headers={"Authorization": f"Token {token}"}, timeout=120) as api:
            run_id = await start_run(api, "pg-cdc", CIRCUIT)
            started = time.perf_counter()
            for body in ({"name": "orders-in", "kind": "postgres_source", "node": "orders",
                          "config": {"dsn": url, "table": "public.orders", "max_batch": args.batch}},
                         {"name": "revenue-out", "kind": "postgres_sink", "node": "revenue",
                          "config": {"dsn": url, "table": "revenue", "key": "region"}}):
                r = await api.post(f"/api/runs/{run_id}/connectors/", json=body)
                assert r.status_code == 201, r.text
            while not sink_equals_recomputed(url)[0]:
                await asyncio.sleep(0.05)
            snapshot_s = time.perf_counter() - started
            results["snapshot_s"] = snapshot_s
            print(f"phase 1: snapshot of {args.rows:,} rows in the sink after {snapshot_s:.1f} s "
                  f"({args.rows / snapshot_s:,.0f} rows/s)", flush=True)

            poller = Poller(url)
            poller.start()
            commits_path = workdir / "commits.json"
            writer = multiprocessing.get_context("spawn").Process(
                target=write, args=(url, args.rows, args.rate, args.seconds, args.per_txn, str(commits_path)))
            writer.start()
            backlog = []
            while writer.is_alive():
                backlog.append((time.time(), slot_backlog(url)))
                await asyncio.sleep(1.0)
            writer.join()
            assert writer.exitcode == 0, "the writer failed"
            written = json.loads(commits_path.read_text())
            commits = written["commits"]
            last = commits[-1][0]
            stopped = time.time()
            while not poller.seen or poller.seen[-1][0] < last:
                await asyncio.sleep(0.01)
            drain_s = time.time() - stopped
            poller.stop.set()
            poller.join()
            same, regions = sink_equals_recomputed(url)
            assert same, "the sink table differs from the recomputation in PostgreSQL"
            runs = (await api.get(f"/api/runs/{run_id}/connectors/")).json()
            records_in = next(c["records_in"] for c in runs if c["name"] == "orders-in")
    finally:
        stack.stop()
        pg.stop()

    seen = poller.seen
    lags, j = [], 0
    for n, committed, _ in commits:  # the first sighting of a marker >= n (markers only grow)
        while seen[j][0] < n:
            j += 1
        lags.append((seen[j][1] - committed) * 1000)
    changes = sum(c for _, _, c in commits)
    span = commits[-1][1] - written["start"]
    third = len(lags) // 3
    results.update(
        changes=changes, rate=changes / span, lag_p50=percentile(lags, 0.5), lag_p99=percentile(lags, 0.99),
        lag_max=max(lags), first_third_p50=percentile(lags[:third], 0.5), last_third_p50=percentile(lags[-third:], 0.5),
        backlog_mb=[round(b / 2 ** 20, 1) for _, b in backlog], drain_s=drain_s, records_in=records_in, regions=regions)
    print(f"phase 2: {changes:,} changes in {len(commits):,} transactions over {span:.1f} s "
          f"({changes / span:,.0f} changes/s; writer at most {written['behind'] * 1000:.0f} ms behind its pace)")
    print(f"lag commit -> sink: p50 {results['lag_p50']:.0f} ms, p99 {results['lag_p99']:.0f} ms, "
          f"max {results['lag_max']:.0f} ms; p50 first third {results['first_third_p50']:.0f} ms, "
          f"last third {results['last_third_p50']:.0f} ms; drained {drain_s:.1f} s after the writer stopped")
    print(f"slot WAL backlog (MB, each second): {results['backlog_mb']}")
    print(f"cross-check: sink == recomputed ({regions} regions); records in the input log: {records_in:,}")
    print(f"logs and database: {workdir}")
    return results


class OneWorkerStack(Stack):
    """bench/live.py's stack with one worker (2 cores, shared)."""

    def start(self):
        import subprocess

        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=self.env, check=True)
        from bench.live import BIN

        self._spawn("web", [str(BIN / "uvicorn"), "dbspweb.asgi:application", "--host", "127.0.0.1", "--port",
                            str(self.port), "--log-level", "warning"])
        self.start_worker("w1")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rate", type=int, default=10_000, help="changes per second")
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--per-txn", type=int, default=100, help="changes per transaction (the marker update is one more)")
    parser.add_argument("--batch", type=int, default=10_000, help="the source's max_batch")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dbspweb.settings")
    os.environ.setdefault("DJANGO_DEBUG", "1")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
