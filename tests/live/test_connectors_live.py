"""Connectors for real: a Kafka source (librdkafka's mock cluster, the real protocol)
feeds a run in a Celery worker, a Kafka sink and a file sink receive its views' deltas,
and the worker holding the run is killed with SIGKILL in mid-stream. The survivor takes
the run over and its connectors with it. Afterwards the input log holds every record
exactly once, each sink holds each tick's delta exactly once (what the tick stored), and
the sinks' contents integrate to what the reference evaluator computes from all the
records at once (an oracle sharing no code with the workers' Spark ticks or the pump)."""
import json
import signal
import time
import uuid
from collections import Counter

import pytest

from connectors.models import Connector
from dbsp import compile_plan
from dbsp.reference import recompute
from dbsp.zset import ZSet
from runs.models import Run, TickOutput
from tests.conftest import example
from tests.connectors.conftest import pushed_rows
from tests.live.test_recovery import start_run, transaction_pushes
from workers.models import RunLease

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


def expanded(rows) -> Counter:
    """Sink records of a delta: {"insert"|"delete": row} once per unit of weight, as JSON text."""
    out = Counter()
    for r in rows:
        key = "insert" if r["weight"] > 0 else "delete"
        out[json.dumps({key: r["data"]}, sort_keys=True)] += abs(r["weight"])
    return out


def integral(texts) -> dict[str, int]:
    acc = Counter()
    for text in texts:
        record = json.loads(text)
        [(key, row)] = record.items()
        acc[json.dumps(row, sort_keys=True)] += 1 if key == "insert" else -1
    return {k: w for k, w in acc.items() if w}


def test_kill_9_mid_stream_leaves_the_sinks_exactly_once(cluster, kafka, make_user, tmp_path):
    api = cluster.client(make_user("streams"))
    run_id = start_run(api, example("transactions"))
    tag = uuid.uuid4().hex[:8]
    source_topic, sink_topic, folder = f"tx-{tag}", f"balance-{tag}", tmp_path / "total"
    records = [r for push in transaction_pushes(600, seed=27) for r in push]  # ~1350 records with deletes
    kafka.produce(source_topic, [json.dumps(r) for r in records[:200]], partition=0)  # Kafka orders within a partition
    for body in (
        {"name": "tx", "kind": "kafka_source", "node": "transactions",
         "config": {"bootstrap_servers": kafka.bootstrap, "topic": source_topic, "format": "insert_delete", "max_batch": 40}},
        {"name": "balance-out", "kind": "kafka_sink", "node": "balance",
         "config": {"bootstrap_servers": kafka.bootstrap, "topic": sink_topic}},
        {"name": "total-out", "kind": "file_sink", "node": "total", "config": {"path": str(folder)}},
    ):
        r = api.post(f"/api/runs/{run_id}/connectors/", json=body)
        assert r.status_code == 201, r.text

    def records_in():
        return Connector.objects.get(run_id=run_id, name="tx").records_in

    kafka.produce(source_topic, [json.dumps(r) for r in records[200:]], partition=0)
    cluster.wait(lambda: records_in() >= 300, 120, "the source to be mid-stream")
    holder = cluster.worker_named_by(RunLease.objects.get(run_id=run_id).worker)
    cluster.kill(holder, signal.SIGKILL)
    at_kill = records_in()
    assert at_kill < len(records), "the stream ended before the kill: make it longer"

    def settled():
        run = Run.objects.get(pk=run_id)
        sinks = Connector.objects.filter(run_id=run_id, kind__endswith="_sink")
        return (records_in() == len(records) and run.current_tick >= 0
                and not run.pushes.filter(applied_tick__isnull=True).exists()
                and all(s.last_tick == run.current_tick for s in sinks))

    cluster.wait(settled, 180, "the survivor to take the stream over and drain it")
    status = api.get(f"/api/runs/{run_id}/connectors/").json()
    assert {c["name"]: c["state"] for c in status} == {"balance-out": "running", "total-out": "running", "tx": "running"}
    lease = RunLease.objects.get(run_id=run_id)
    assert cluster.worker_named_by(lease.worker) != holder and lease.epoch >= 2

    # The input log: every record once (a push's change is consolidated, so an insert and
    # its delete in one push cancel: compare the records counted and the rows' weights).
    run = Run.objects.get(pk=run_id)
    assert sum(run.pushes.values_list("row_count", flat=True)) == len(records) == records_in()
    logged = Counter()
    for row, weight in pushed_rows(run):
        logged[json.dumps(row, sort_keys=True)] += weight
    assert {k: w for k, w in logged.items() if w} == integral(json.dumps(r) for r in records)

    # Each sink: each tick's delta exactly once, as the tick stored it.
    ticks = {t.tick: t.deltas for t in TickOutput.objects.filter(run_id=run_id)}
    in_kafka = kafka.read_committed(sink_topic, timeout=30)
    by_tick = {}
    for tick, value in in_kafka:
        by_tick.setdefault(tick, Counter())[json.dumps(json.loads(value), sort_keys=True)] += 1
    assert by_tick == {t: expanded(d["balance"]) for t, d in ticks.items() if d.get("balance")}
    files = {int(p.stem.rsplit("-", 1)[1]): Counter(json.dumps(json.loads(line), sort_keys=True) for line in p.read_text().splitlines())
             for p in folder.iterdir()}
    assert files == {t: expanded(d["total"]) for t, d in ticks.items() if d.get("total")}
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no half-written file

    # The oracle: the reference evaluator over all records at once.
    plan = compile_plan(Run.objects.get(pk=run_id).version.document)
    names = plan.inputs["transactions"].names
    table = ZSet((tuple(r[k][n] for n in names), 1 if k == "insert" else -1) for r in records for k in r)
    expected = recompute(plan, {"transactions": table})

    def as_texts(view):
        cols = plan.views[view].names
        return {json.dumps(dict(zip(cols, row)), sort_keys=True): w for row, w in expected[view]}

    assert integral(v.decode() for _, v in in_kafka) == as_texts("balance")
    assert integral(t for c in files.values() for t in c.elements()) == as_texts("total")
    print(f"killed {holder} at {at_kill}/{len(records)} records; {len(ticks)} ticks; {len(in_kafka)} sink messages")
    cluster.workers.pop(holder, None)  # the dead one is no candidate for the tests after this one
    cluster.start_worker(holder + "b")  # a second worker again for the tests after this one


def test_kill_9_postgres_cdc_to_postgres_sinks_exactly_once(cluster, cdc_postgres, make_user):
    """A PostgreSQL table's snapshot and changes (inserts, updates, deletes) feed the
    transactions example through postgres_source; postgres_sink keeps `balance` in a
    table by key, `credits` in a table without one and appends `total`'s changes. The
    worker holding the run is killed with SIGKILL in mid-stream. Afterwards the input log
    integrates to the source table's final contents, the changelog holds each tick's
    delta once, and the sink tables equal the reference evaluator's views of the source
    table's final contents (read with SQL: an oracle sharing no code with the connectors)."""
    import random
    import threading

    import psycopg

    url = cdc_postgres.new_database()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE tx (id bigint PRIMARY KEY, from_acct bigint NOT NULL, to_acct bigint NOT NULL,"
                     " amount bigint NOT NULL)")
        conn.execute("ALTER TABLE tx REPLICA IDENTITY FULL")
        conn.execute("INSERT INTO tx SELECT i, 1 + i % 6, 1 + (i * 7) % 6, 1 + i % 100 FROM generate_series(0, 199) i")
    api = cluster.client(make_user("cdc"))
    run_id = start_run(api, example("transactions"))
    for body in (
        {"name": "tx", "kind": "postgres_source", "node": "transactions",
         "config": {"dsn": url, "table": "public.tx", "max_batch": 40}},
        {"name": "balance-out", "kind": "postgres_sink", "node": "balance",
         "config": {"dsn": url, "table": "balance", "key": "account"}},
        {"name": "credits-out", "kind": "postgres_sink", "node": "credits", "config": {"dsn": url, "table": "credits"}},
        {"name": "total-log", "kind": "postgres_sink", "node": "total",
         "config": {"dsn": url, "table": "total_log", "mode": "changelog"}},
    ):
        r = api.post(f"/api/runs/{run_id}/connectors/", json=body)
        assert r.status_code == 201, r.text

    def write():  # 500 transactions: 1-3 inserts, every 3rd an update, every 4th a delete
        rng, next_id = random.Random(27), 200
        with psycopg.connect(url, autocommit=True) as conn:
            for i in range(500):
                with conn.transaction():
                    for _ in range(rng.randint(1, 3)):
                        conn.execute("INSERT INTO tx VALUES (%s, %s, %s, %s)",
                                     (next_id, rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 100)))
                        next_id += 1
                    if i % 3 == 2:
                        conn.execute("UPDATE tx SET amount = amount + 1 WHERE id = %s", (rng.randrange(next_id),))
                    if i % 4 == 3:
                        conn.execute("DELETE FROM tx WHERE id = %s", (rng.randrange(next_id),))

    def records_in():
        return Connector.objects.get(run_id=run_id, name="tx").records_in

    writer = threading.Thread(target=write)
    writer.start()
    cluster.wait(lambda: records_in() >= 400, 120, "the source to be mid-stream")
    holder = cluster.worker_named_by(RunLease.objects.get(run_id=run_id).worker)
    cluster.kill(holder, signal.SIGKILL)
    at_kill = records_in()
    writer.join()
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT id, from_acct, to_acct, amount FROM tx").fetchall()
    final = Counter(json.dumps(dict(zip(("id", "from_acct", "to_acct", "amount"), r)), sort_keys=True) for r in rows)

    def logged():
        out = Counter()
        for row, weight in pushed_rows(Run.objects.get(pk=run_id)):
            out[json.dumps(row, sort_keys=True)] += weight
        return {k: w for k, w in out.items() if w}

    def settled():
        run = Run.objects.get(pk=run_id)
        sinks = Connector.objects.filter(run_id=run_id, kind__endswith="_sink")
        return (run.current_tick >= 0 and not run.pushes.filter(applied_tick__isnull=True).exists()
                and all(s.last_tick == run.current_tick for s in sinks) and logged() == dict(final))

    cluster.wait(settled, 240, "the survivor to take the stream over and drain it")
    assert at_kill < records_in(), "the stream ended before the kill: make it longer"
    status = api.get(f"/api/runs/{run_id}/connectors/").json()
    assert {c["name"]: c["state"] for c in status} == {n: "running" for n in ("balance-out", "credits-out", "total-log", "tx")}
    lease = RunLease.objects.get(run_id=run_id)
    assert cluster.worker_named_by(lease.worker) != holder and lease.epoch >= 2

    ticks = {t.tick: t.deltas for t in TickOutput.objects.filter(run_id=run_id)}
    plan = compile_plan(Run.objects.get(pk=run_id).version.document)
    names = plan.inputs["transactions"].names
    source = [dict(zip(("id", "from_acct", "to_acct", "amount"), r)) for r in rows]
    expected = recompute(plan, {"transactions": ZSet((tuple(r[n] for n in names), 1) for r in source)})

    def view(name):
        cols = plan.views[name].names
        return Counter({json.dumps(dict(zip(cols, row)), sort_keys=True): w for row, w in expected[name]})

    with psycopg.connect(url) as conn:
        balance = Counter(json.dumps({"account": a, "balance": b}, sort_keys=True)
                          for a, b in conn.execute("SELECT account, balance FROM balance"))
        credits = Counter({json.dumps({"to_acct": a, "credits": c}, sort_keys=True): n
                           for a, c, n in conn.execute("SELECT to_acct, credits, dbspweb_count FROM credits")})
        log = conn.execute("SELECT tick, total, weight FROM total_log").fetchall()
    assert balance == view("balance")
    assert credits == view("credits")
    by_tick = {}
    for tick, total, weight in log:
        by_tick.setdefault(tick, Counter())[json.dumps({"total": total}, sort_keys=True)] += weight
    assert by_tick == {t: Counter({json.dumps(r["data"], sort_keys=True): r["weight"] for r in d["total"]})
                       for t, d in ticks.items() if d.get("total")}
    integrated = Counter()
    for delta in by_tick.values():
        integrated.update(delta)  # update adds negative weights too (+ would drop them)
    assert {k: w for k, w in integrated.items() if w} == view("total")
    print(f"killed {holder} at {at_kill}/{records_in()} records; {len(ticks)} ticks")
    cluster.workers.pop(holder, None)
    cluster.start_worker(holder + "b")
