"""Crashes and broker restarts, end to end, in real workers against real brokers (issue #27).

- 10^5 records from a Redis stream, the worker holding the run killed with SIGKILL in
  mid-stream: the input log holds every record once, the sinks each tick once, and they
  integrate to the reference evaluator's views of all the records.
- The Delta, webhook and MQTT sinks, the holder killed with SIGKILL: Delta and the webhook
  receiver (deduplicating by Idempotency-Key) hold each tick once; MQTT is at least once:
  deduplicated by (tick, record index) it holds each tick once, with no gap.
- redis-server, nats-server, mosquitto, the webhook receiver and PostgreSQL stopped and
  started again (same port, same data) while records flow: while one is down its
  connector shows `retrying` with the error (a sink: behind the run's last tick), the run's
  other input (REST pushes) still ticks; afterwards every sink holds exactly the reference
  result, each tick once (MQTT: once after deduplication)."""
from __future__ import annotations

import json
import signal
import threading
import time
import uuid
from collections import Counter

import pytest
import redis

from connectors.models import Connector
from runs.models import Run
from tests.conftest import example
from tests.connectors.conftest import mqtt_broker, pushed_rows, redis_server  # noqa: F401 - the brokers
from tests.live.resilience import (HookReceiver, MqttSubscriber, caught_up, integrated, mqtt_ticks, records_delta,
                                   reference_views, tick_deltas)
from tests.live.test_recovery import start_run, transaction_pushes
from workers.models import RunLease

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


def transactions(count: int, seed: int) -> list[dict]:
    """`count` insert/delete records of the transactions example (every 4th push deletes an earlier row)."""
    records: list[dict] = []
    for push in transaction_pushes(count // 2 + 10, seed=seed):
        records += push
    assert len(records) >= count
    return records[:count]


def declare(api, run_id: int, *bodies: dict) -> None:
    for body in bodies:
        answer = api.post(f"/api/runs/{run_id}/connectors/", json=body)
        assert answer.status_code == 201, answer.text


def states(api, run_id: int) -> dict[str, dict]:
    return {c["name"]: c for c in api.get(f"/api/runs/{run_id}/connectors/").json()}


def records_in(run_id: int, name: str) -> int:
    return Connector.objects.get(run_id=run_id, name=name).records_in


def kill_the_holder(cluster, run_id: int) -> str:
    holder = cluster.worker_named_by(RunLease.objects.get(run_id=run_id).worker)
    cluster.kill(holder, signal.SIGKILL)
    return holder


def replace_the_dead(cluster, holder: str) -> None:
    cluster.workers.pop(holder, None)  # the dead one is no candidate for the tests after this one
    cluster.start_worker(holder + "b")  # a second worker again for the tests after this one


def assert_logged_once(run_id: int, records: list[dict]) -> None:
    """The input log: every record once (a push is consolidated: compare counts and weights)."""
    run = Run.objects.get(pk=run_id)
    assert sum(run.pushes.values_list("row_count", flat=True)) == len(records)
    logged = Counter()
    for row, weight in pushed_rows(run):
        logged[json.dumps(row, sort_keys=True)] += weight
    assert Counter({k: w for k, w in logged.items() if w}) == integrated([records_delta(records)])


def redis_sink_ticks(r, stream: str) -> dict[int, Counter]:
    """A Redis sink's stream: tick -> its records as a delta. A tick written twice would
    show doubled weights (or cancelled ones) and differ from the stored tick."""
    out: dict[int, Counter] = {}
    for _, fields in r.xrange(stream):
        out.setdefault(int(fields[b"tick"]), Counter()).update(records_delta([fields[b"value"]]))
    return out


# ---- 10^5 records, kill -9 ------------------------------------------------------------

def test_kill_9_in_the_middle_of_100_000_records(cluster, redis_server, make_user):
    """10^5 records of the transactions example in a Redis stream, read in pushes of
    5,000 (large ticks: the test is about the records, not the tick count)."""
    api = cluster.client(make_user("hundred-k"))
    run_id = start_run(api, example("transactions"))
    tag = uuid.uuid4().hex[:8]
    r = redis.Redis.from_url(redis_server.url)
    source, balance, credits = f"tx-{tag}", f"balance-{tag}", f"credits-{tag}"
    records = transactions(100_000, seed=100)
    for start in range(0, len(records), 5000):
        with r.pipeline(transaction=False) as p:
            for rec in records[start:start + 5000]:
                p.xadd(source, {"value": json.dumps(rec)})
            p.execute()
    started = time.monotonic()
    declare(api, run_id,
            {"name": "tx", "kind": "redis_source", "node": "transactions",
             "config": {"url": redis_server.url, "stream": source, "max_batch": 5000}},
            {"name": "balance-out", "kind": "redis_sink", "node": "balance", "config": {"url": redis_server.url, "stream": balance}},
            {"name": "credits-out", "kind": "redis_sink", "node": "credits", "config": {"url": redis_server.url, "stream": credits}})
    cluster.wait(lambda: records_in(run_id, "tx") >= 30_000, 300, "the source to be mid-stream")
    holder = kill_the_holder(cluster, run_id)
    at_kill = records_in(run_id, "tx")
    assert at_kill < len(records), "the stream ended before the kill: make it longer"
    cluster.wait(lambda: caught_up(run_id, lambda: records_in(run_id, "tx") == len(records)), 600,
                 "the survivor to take the stream over and drain it")
    took = time.monotonic() - started
    assert {n: c["state"] for n, c in states(api, run_id).items()} == {"tx": "running", "balance-out": "running",
                                                                        "credits-out": "running"}
    assert cluster.worker_named_by(RunLease.objects.get(run_id=run_id).worker) != holder

    assert_logged_once(run_id, records)
    expected = reference_views(run_id, {"transactions": records})
    for view, stream in (("balance", balance), ("credits", credits)):
        written = redis_sink_ticks(r, stream)
        assert written == tick_deltas(run_id, view), f"{view}: each tick once, as stored"
        assert integrated(written.values()) == expected[view], view
    ticks = Run.objects.get(pk=run_id).current_tick + 1
    print(f"10^5 records: killed {holder} at {at_kill}; {ticks} ticks; {took:.0f} s from the declaration to caught up")
    replace_the_dead(cluster, holder)


# ---- the Delta, webhook and MQTT sinks, kill -9 -----------------------------------------

def test_kill_9_delta_webhook_and_mqtt_sinks(cluster, redis_server, mqtt_broker, make_user, tmp_path):
    api = cluster.client(make_user("sinks9"))
    run_id = start_run(api, example("transactions"))
    tag = uuid.uuid4().hex[:8]
    r = redis.Redis.from_url(redis_server.url)
    source, topic = f"tx-{tag}", f"debits/{tag}"
    receiver = HookReceiver()
    subscriber = MqttSubscriber(mqtt_broker, topic)
    changelog, table = tmp_path / "credits-lake", tmp_path / "balance-lake"
    records = transactions(1500, seed=9)
    try:
        for rec in records[:200]:
            r.xadd(source, {"value": json.dumps(rec)})
        declare(api, run_id,
                {"name": "tx", "kind": "redis_source", "node": "transactions",
                 "config": {"url": redis_server.url, "stream": source, "max_batch": 40}},
                {"name": "total-hook", "kind": "webhook_sink", "node": "total", "config": {"url": receiver.url}},
                {"name": "credits-lake", "kind": "delta_sink", "node": "credits", "config": {"path": str(changelog)}},
                {"name": "balance-lake", "kind": "delta_sink", "node": "balance",
                 "config": {"path": str(table), "mode": "table", "key": "account"}},
                {"name": "debits-mqtt", "kind": "mqtt_sink", "node": "debits",
                 "config": {"host": mqtt_broker.host, "port": mqtt_broker.port, "topic": topic}})
        for rec in records[200:]:
            r.xadd(source, {"value": json.dumps(rec)})
        cluster.wait(lambda: records_in(run_id, "tx") >= 300, 180, "the source to be mid-stream")
        holder = kill_the_holder(cluster, run_id)
        at_kill = records_in(run_id, "tx")
        assert at_kill < len(records), "the stream ended before the kill: make it longer"
        cluster.wait(lambda: caught_up(run_id, lambda: records_in(run_id, "tx") == len(records)), 300,
                     "the survivor to take the stream over and drain it")
        assert {n: c["state"] for n, c in states(api, run_id).items()} == dict.fromkeys(
            ("tx", "total-hook", "credits-lake", "balance-lake", "debits-mqtt"), "running")
        assert_logged_once(run_id, records)
        expected = reference_views(run_id, {"transactions": records})
        hook_repeats = check_hook(receiver, run_id, "total-hook", "total", expected)
        check_delta(run_id, changelog, table, expected)
        wanted = sum(sum(map(abs, d.values())) for d in tick_deltas(run_id, "debits").values())
        cluster.wait(lambda: len({(m[0], m[1]) for m in subscriber.drain()}) >= wanted, 60,
                     "the MQTT subscriber to receive every tick")
        mqtt_repeats = check_mqtt(subscriber, run_id, "debits", expected)
        print(f"killed {holder} at {at_kill}/{len(records)}; webhook repeats {hook_repeats}, MQTT repeats {mqtt_repeats}")
        replace_the_dead(cluster, holder)
    finally:
        receiver.stop()
        subscriber.close()


def check_hook(receiver: HookReceiver, run_id: int, name: str, view: str, expected) -> int:
    """Each tick that changed the view posted under its own key; a repeat only with the same
    key and the same body; one body per key integrates to the reference. Returns the repeats."""
    stored = tick_deltas(run_id, view)
    by_key = receiver.by_key()
    assert set(by_key) == {f"run-{run_id}-{name}-tick-{t}" for t in stored}, "one key per tick that changed the view"
    repeats = 0
    for key, bodies in by_key.items():
        assert all(b == bodies[0] for b in bodies), f"{key} posted again with another body"
        repeats += len(bodies) - 1
        tick = bodies[0]["tick"]
        assert key.endswith(f"-tick-{tick}")
        assert records_delta(bodies[0]["records"]) == stored[tick], key
    assert integrated(records_delta(b[0]["records"]) for b in by_key.values()) == expected[view]
    return repeats


def check_delta(run_id: int, changelog, table, expected) -> None:
    from deltalake import DeltaTable

    lake = DeltaTable(str(changelog))
    rows = lake.to_pyarrow_table().to_pylist()
    by_tick: dict[int, Counter] = {}
    for row in rows:
        tick, weight = row.pop("tick"), row.pop("weight")
        by_tick.setdefault(tick, Counter())[json.dumps(row, sort_keys=True)] += weight
    assert by_tick == tick_deltas(run_id, "credits"), "the changelog: each tick once, as stored"
    commits = Counter(int(c["dbspweb.tick"]) for c in lake.history() if "dbspweb.tick" in c)
    assert commits == Counter(set(tick_deltas(run_id, "credits"))), "one Delta commit per tick"
    assert integrated(by_tick.values()) == expected["credits"]
    kept = Counter(json.dumps(row, sort_keys=True) for row in DeltaTable(str(table)).to_pyarrow_table().to_pylist())
    assert kept == expected["balance"], "mode table: the view's contents by key"


def check_mqtt(subscriber: MqttSubscriber, run_id: int, view: str, expected) -> int:
    """At least once: deduplicated by (tick, record index), each tick that changed the view
    whole (no gap); a repeat is the same record. Returns the repeats."""
    ticks, repeats = mqtt_ticks(subscriber.drain())
    assert ticks == tick_deltas(run_id, view)
    assert integrated(ticks.values()) == expected[view]
    return repeats
