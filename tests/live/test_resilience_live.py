"""Crashes and broker restarts, end to end, in real workers against real brokers (issue #27).

- 10^5 records from a Redis stream, the worker holding the run killed with SIGKILL in
  mid-stream: the input log holds every record once, the sinks each tick once, and they
  integrate to the reference evaluator's views of all the records.
- The Delta, webhook and MQTT sinks and an MQTT source, the holder killed with SIGKILL:
  Delta and the webhook receiver (deduplicating by Idempotency-Key) hold each tick once;
  MQTT is at least once: deduplicated by (tick, record index) the sink's subscriber holds
  each tick once, with no gap, and every message of the source is in the input log.
- redis-server, nats-server, mosquitto, the webhook receiver and PostgreSQL stopped and
  started again (same port, same data) while records flow: while one is down its
  connector shows `retrying` with the error (a sink: behind the run's last tick), the run's
  other input (REST pushes) still ticks; afterwards every sink holds exactly the reference
  result, each tick once (MQTT: once after deduplication)."""
from __future__ import annotations

import json
import signal
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
# one_backend below: a broker's restart and the sinks' own guarantees are the subject, not the run's
# database, so once, on SQLite (scripts/test); the 10^5 kill -9, whose exactly once is the database's, runs on both.


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

@pytest.mark.one_backend
def test_kill_9_delta_webhook_and_mqtt_sinks(cluster, redis_server, mqtt_broker, make_user, tmp_path):
    """Also an MQTT source (orders, keyed by id) killed mid-stream: at least once, every
    message in the input log, a repeat only of a message whose acknowledgement the kill
    lost, and the view as if each came once (an insert of the same row replaces it)."""
    api = cluster.client(make_user("sinks9"))
    run_id = start_run(api, three_inputs())
    tag = uuid.uuid4().hex[:8]
    r = redis.Redis.from_url(redis_server.url)
    source, topic, orders_topic = f"tx-{tag}", f"debits/{tag}", f"orders/{tag}"
    receiver = HookReceiver()
    subscriber = MqttSubscriber(mqtt_broker, topic)
    publisher = MqttSubscriber(mqtt_broker, f"unused/{tag}")
    changelog, table = tmp_path / "credits-lake", tmp_path / "balance-lake"
    records = transactions(1500, seed=9)
    try:
        for rec in records[:200]:
            r.xadd(source, {"value": json.dumps(rec)})
        declare(api, run_id,
                {"name": "tx", "kind": "redis_source", "node": "transactions",
                 "config": {"url": redis_server.url, "stream": source, "max_batch": 40}},
                {"name": "balance-hook", "kind": "webhook_sink", "node": "balance", "config": {"url": receiver.url}},
                {"name": "credits-lake", "kind": "delta_sink", "node": "credits", "config": {"path": str(changelog)}},
                {"name": "balance-lake", "kind": "delta_sink", "node": "balance",
                 "config": {"path": str(table), "mode": "table", "key": "account"}},
                {"name": "debits-mqtt", "kind": "mqtt_sink", "node": "debits",
                 "config": {"host": mqtt_broker.host, "port": mqtt_broker.port, "topic": topic}},
                {"name": "orders-in", "kind": "mqtt_source", "node": "orders",
                 "config": {"host": mqtt_broker.host, "port": mqtt_broker.port, "topic": orders_topic, "max_batch": 20}})
        cluster.wait(lambda: Connector.objects.get(run_id=run_id, name="orders-in").position == {"messages": 0}, 120,
                     "the MQTT source to subscribe")  # MQTT drops what is published before
        orders = [{"insert": {"id": i, "customer": f"c{i % 7}", "amount": (i * 37) % 300}} for i in range(1000)]
        infos = [publisher.client.publish(orders_topic, json.dumps(o).encode(), qos=1) for o in orders]
        for info in infos:
            info.wait_for_publish(30)
        for rec in records[200:]:
            r.xadd(source, {"value": json.dumps(rec)})
        cluster.wait(lambda: records_in(run_id, "tx") >= 300 and records_in(run_id, "orders-in") >= 200, 180,
                     "the sources to be mid-stream")
        holder = kill_the_holder(cluster, run_id)
        at_kill = records_in(run_id, "tx"), records_in(run_id, "orders-in")
        assert at_kill[0] < len(records) and at_kill[1] < len(orders), "a stream ended before the kill: make it longer"
        every_order = Counter(json.dumps(o["insert"], sort_keys=True) for o in orders)
        cluster.wait(lambda: caught_up(run_id, lambda: records_in(run_id, "tx") == len(records)
                                       and set(logged_records(run_id, "orders")) == set(every_order)), 300,
                     "the survivor to take the streams over and drain them")
        assert {n: c["state"] for n, c in states(api, run_id).items()} == dict.fromkeys(
            ("tx", "orders-in", "balance-hook", "credits-lake", "balance-lake", "debits-mqtt"), "running")
        from runs.models import Push

        assert sum(Push.objects.filter(run_id=run_id, input="transactions").values_list("row_count", flat=True)) == len(records)
        assert logged_records(run_id, "transactions") == integrated([records_delta(records)])
        # MQTT, at least once: every order logged, some perhaps twice (pushed, then the kill
        # before the broker had the acknowledgement), none other
        logged_orders = logged_records(run_id, "orders")
        assert all(w >= 1 for w in logged_orders.values()) and set(logged_orders) == set(every_order)
        source_repeats = sum(logged_orders.values()) - len(orders)
        assert records_in(run_id, "orders-in") == sum(logged_orders.values())
        expected = reference_views(run_id, {"transactions": records, "orders": orders, "lines": []})
        shown = api.get(f"/api/runs/{run_id}/outputs/").json()["views"]
        for view, rows in shown.items():  # the run's views: each order as if it came once
            assert Counter({json.dumps(x["data"], sort_keys=True): x["weight"] for x in rows}) == expected[view], view
        hook_repeats = check_hook(receiver, run_id, "balance-hook", "balance", expected)
        check_delta(run_id, changelog, table, expected)
        wanted = sum(sum(map(abs, d.values())) for d in tick_deltas(run_id, "debits").values())
        cluster.wait(lambda: len({(m[0], m[1]) for m in subscriber.drain()}) >= wanted, 60,
                     "the MQTT subscriber to receive every tick")
        mqtt_repeats = check_mqtt(subscriber, run_id, "debits", expected)
        print(f"killed {holder} at {at_kill[0]}/{len(records)} records, {at_kill[1]}/{len(orders)} orders; "
              f"webhook repeats {hook_repeats}, MQTT sink repeats {mqtt_repeats}, MQTT source repeats {source_repeats}")
        replace_the_dead(cluster, holder)
    finally:
        receiver.stop()
        subscriber.close()
        publisher.close()


def check_hook(receiver: HookReceiver, run_id: int, name: str, view: str, expected) -> int:
    """Each tick that changed the view posted under its own key; a repeat only with the same
    key and the same body; one body per key integrates to the reference. Returns the repeats."""
    stored = tick_deltas(run_id, view)
    prefix = f"run-{run_id}-{name}-tick-"
    by_key = {k: bodies for k, bodies in receiver.by_key().items() if k.startswith(prefix)}  # this sink's
    keys = {f"{prefix}{t}" for t in stored}
    assert set(by_key) == keys, f"one key per tick that changed the view: missing {sorted(keys - set(by_key))}, " \
                                f"more {sorted(set(by_key) - keys)}"
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


# ---- broker restarts mid-stream --------------------------------------------------------

def three_inputs() -> dict:
    """transactions, big_orders (its input keyed by id: an MQTT message delivered twice is
    an insert of the same row again, which replaces it) and word_count side by side."""
    doc = {"format": "dbspweb.circuit", "version": 1, "nodes": [], "edges": []}
    for name in ("transactions", "big_orders", "word_count"):
        part = example(name)
        doc["nodes"] += part["nodes"]
        doc["edges"] += part["edges"]
    orders = next(n for n in doc["nodes"] if n["id"] == "orders")
    orders["params"]["primary_key"] = ["id"]
    return doc


def logged_records(run_id: int, node: str) -> Counter:
    """What the input log holds for one input, integrated: Counter(row json: weight)."""
    from dbsp import arrow_change
    from runs.models import Push

    out = Counter()
    for push in Push.objects.filter(run_id=run_id, input=node).order_by("sequence"):
        table = arrow_change.from_ipc(push.change)
        for r in arrow_change.records_json(table, arrow_change.input_schema(table.schema)):
            out[json.dumps(r["data"], sort_keys=True)] += r["weight"]
    return Counter({k: w for k, w in out.items() if w})


class OtherInput:
    """REST pushes to the `lines` input (no connector): each must be applied in a tick
    while a broker is down, the run's other inputs keep going."""

    def __init__(self, api, run_id: int):
        self.api, self.run_id, self.records = api, run_id, []

    def push_and_see_it_applied(self, cluster, word: str) -> None:
        from runs.models import Push

        record = {"insert": {"id": len(self.records) + 1, "text": f"{word} while"}}
        answer = self.api.post(f"/api/runs/{self.run_id}/inputs/lines/push/", json=[record])
        assert answer.status_code == 202, answer.text
        self.records.append(record)
        cluster.wait(lambda: not Push.objects.filter(run_id=self.run_id, input="lines", applied_tick__isnull=True).exists(),
                     120, f"the push to lines ({word}) to be applied while a broker is down")
        counts = {r["data"]["word"]: r["data"]["n"] for r in
                  self.api.get(f"/api/runs/{self.run_id}/outputs/").json()["views"]["counts"]}
        assert counts.get(word) == 1, counts


def wait_retrying(cluster, api, run_id: int, name: str, says: str, behind: bool) -> dict:
    """The connector shows `retrying` with the error (and, a sink, a last tick behind the run's)."""
    def shown():
        c = states(api, run_id)[name]
        current = api.get(f"/api/runs/{run_id}/").json()["current_tick"]
        ok = c["state"] == "retrying" and says in c["last_error"] and c["error_at"]
        return c if ok and (not behind or c["last_tick"] < current) else None

    return cluster.wait(shown, 120, f"{name} to show retrying with a {says} error" + (" and be behind" if behind else ""))


@pytest.mark.one_backend
def test_broker_restarts_mid_stream(cluster, make_user, tmp_path_factory):
    from tests.brokers import start_mosquitto, start_nats, start_redis
    from tests.connectors import test_nats_pump as nats_peer

    rs = start_redis(tmp_path_factory.mktemp("redis-restarted"), persistent=True)
    ns = start_nats(tmp_path_factory.mktemp("nats-restarted"))
    ms = start_mosquitto(tmp_path_factory.mktemp("mosquitto-restarted"))
    receiver = HookReceiver()
    subscriber = None
    try:
        api = cluster.client(make_user("restarts"))
        run_id = start_run(api, three_inputs())
        tag = uuid.uuid4().hex[:8]
        r = redis.Redis.from_url(rs.url)
        source, balance, subject = f"tx-{tag}", f"balance-{tag}", f"credits.{tag}"
        orders_topic, debits_topic = f"orders/{tag}", f"debits/{tag}"
        nats_stream = nats_peer.new_stream(ns.url, subject)
        subscriber = MqttSubscriber(ms, debits_topic)
        publisher = MqttSubscriber(ms, f"unused/{tag}")  # a client of the test's own that publishes orders
        declare(api, run_id,
                {"name": "tx", "kind": "redis_source", "node": "transactions",
                 "config": {"url": rs.url, "stream": source, "max_batch": 20}},
                {"name": "orders-in", "kind": "mqtt_source", "node": "orders",
                 "config": {"host": ms.host, "port": ms.port, "topic": orders_topic, "max_batch": 20}},
                {"name": "balance-out", "kind": "redis_sink", "node": "balance", "config": {"url": rs.url, "stream": balance}},
                {"name": "credits-out", "kind": "nats_sink", "node": "credits", "config": {"servers": ns.url, "subject": subject}},
                {"name": "debits-out", "kind": "mqtt_sink", "node": "debits",
                 "config": {"host": ms.host, "port": ms.port, "topic": debits_topic}},
                {"name": "balance-hook", "kind": "webhook_sink", "node": "balance", "config": {"url": receiver.url}},
                {"name": "big-hook", "kind": "webhook_sink", "node": "big_orders", "config": {"url": receiver.url}})
        records = transactions(3000, seed=14)
        chunks = [records[i:i + 500] for i in range(0, len(records), 500)]
        orders: list[dict] = []

        def add(chunk):
            with r.pipeline(transaction=False) as p:
                for rec in chunk:
                    p.xadd(source, {"value": json.dumps(rec)})
                p.execute()

        def publish_orders(n):
            start = len(orders)
            batch = [{"insert": {"id": i, "customer": f"c{i % 7}", "amount": (i * 37) % 300}} for i in range(start, start + n)]
            infos = [publisher.client.publish(orders_topic, json.dumps(o).encode(), qos=1) for o in batch]
            for info in infos:
                info.wait_for_publish(30)
                assert info.is_published()
            orders.extend(batch)

        lines = OtherInput(api, run_id)
        # MQTT drops what is published before a subscription: the source's first open
        # subscribes, then stores its start position
        cluster.wait(lambda: Connector.objects.get(run_id=run_id, name="orders-in").position == {"messages": 0}, 120,
                     "the MQTT source to subscribe")
        add(chunks[0] + chunks[1])
        publish_orders(300)

        # Redis (the source's and a sink's) stopped while the source is mid-stream.
        cluster.wait(lambda: records_in(run_id, "tx") >= 200, 180, "the Redis source to be mid-stream")
        rs.stop()
        wait_retrying(cluster, api, run_id, "tx", "Redis", behind=False)
        # counted once the source shows retrying: a step that read before the stop commits
        # its batch after it (steps of a source are sequential: none is in flight now)
        at_stop = records_in(run_id, "tx")
        assert at_stop < 1000, "the stream ended before Redis stopped: make it longer"
        lines.push_and_see_it_applied(cluster, "redis")
        # a push to the source's input through REST: its tick changes balance, which the Redis sink cannot write
        extra = [{"insert": {"id": 10**6, "from_acct": 1, "to_acct": 2, "amount": 5}}]
        assert api.post(f"/api/runs/{run_id}/inputs/transactions/push/", json=extra).status_code == 202
        wait_retrying(cluster, api, run_id, "balance-out", "Redis", behind=True)
        assert records_in(run_id, "tx") == at_stop  # nothing read while Redis is away
        rs.start()
        cluster.wait(lambda: records_in(run_id, "tx") == 1000, 180, "the Redis source to go on after the restart")

        # NATS (a sink) stopped while ticks change its view.
        ns.stop()
        add(chunks[2])
        wait_retrying(cluster, api, run_id, "credits-out", "NATS", behind=True)
        lines.push_and_see_it_applied(cluster, "nats")
        ns.start()

        # mosquitto (the orders source's and the debits sink's broker) stopped; orders published
        # after the restart wait in the source's session until it is back (it retries with backoff).
        cluster.wait(lambda: records_in(run_id, "orders-in") >= 100, 180, "the MQTT source to read orders")
        ms.stop()
        add(chunks[3])
        wait_retrying(cluster, api, run_id, "debits-out", "MQTT", behind=True)
        wait_retrying(cluster, api, run_id, "orders-in", "MQTT", behind=False)
        lines.push_and_see_it_applied(cluster, "mosquitto")
        ms.start()
        cluster.wait(publisher.client.is_connected, 60, "the test's MQTT publisher to reconnect")
        publish_orders(200)  # the publisher and the subscriber reconnect by themselves

        # the webhook receiver away while ticks change its views.
        receiver.stop()
        add(chunks[4])
        wait_retrying(cluster, api, run_id, "balance-hook", "POST", behind=True)
        lines.push_and_see_it_applied(cluster, "webhook")
        receiver.start()
        add(chunks[5])

        every_order = Counter(json.dumps(o["insert"], sort_keys=True) for o in orders)
        cluster.wait(lambda: caught_up(run_id, lambda: records_in(run_id, "tx") == len(records)
                                       and logged_records(run_id, "orders") == every_order), 300,
                     "every connector to catch up after the restarts")
        assert {n: c["state"] for n, c in states(api, run_id).items()} == dict.fromkeys(
            ("tx", "orders-in", "balance-out", "credits-out", "debits-out", "balance-hook", "big-hook"), "running")

        all_tx = records + extra
        assert logged_records(run_id, "transactions") == integrated([records_delta(all_tx)])
        assert records_in(run_id, "tx") == len(records)  # each record of the stream pushed once
        expected = reference_views(run_id, {"transactions": all_tx, "orders": orders, "lines": lines.records})
        written = redis_sink_ticks(r, balance)
        assert written == tick_deltas(run_id, "balance"), "Redis: each tick once, as stored"
        assert integrated(written.values()) == expected["balance"]
        in_nats: dict[int, Counter] = {}
        for headers, value in nats_peer.messages(ns.url, nats_stream):
            in_nats.setdefault(int(headers["Dbspweb-Tick"]), Counter()).update(records_delta([value]))
        assert in_nats == tick_deltas(run_id, "credits"), "NATS: each tick once, as stored"
        assert integrated(in_nats.values()) == expected["credits"]
        wanted = sum(sum(map(abs, d.values())) for d in tick_deltas(run_id, "debits").values())
        cluster.wait(lambda: len({(m[0], m[1]) for m in subscriber.drain()}) >= wanted, 60,
                     "the MQTT subscriber to receive every tick")
        mqtt_repeats = check_mqtt(subscriber, run_id, "debits", expected)
        hook_repeats = check_hook(receiver, run_id, "balance-hook", "balance", expected)
        hook_repeats += check_hook(receiver, run_id, "big-hook", "big_orders", expected)
        shown = api.get(f"/api/runs/{run_id}/outputs/").json()["views"]
        for view, rows in shown.items():  # the run's own views too (REST pushes to lines among them)
            assert Counter({json.dumps(x["data"], sort_keys=True): x["weight"] for x in rows}) == expected[view], view
        print(f"Redis stopped at {at_stop}/{len(records)}; MQTT repeats {mqtt_repeats}, webhook repeats {hook_repeats}; "
              f"{Run.objects.get(pk=run_id).current_tick + 1} ticks")
        publisher.close()
    finally:
        receiver.stop()
        if subscriber is not None:
            subscriber.close()
        for broker in (rs, ns, ms):
            broker.stop()


@pytest.mark.one_backend
def test_postgres_restart_mid_stream(cluster, make_user):
    """A PostgreSQL cluster of the test's own (CDC source and sinks in one database) shut
    down and started again while changes flow: the source and the sinks show `retrying`
    with the error, a sink behind the run's last tick; REST pushes to the run's other input
    still tick; afterwards the sinks hold the reference evaluator's views of the table's
    final contents (plus the REST pushes), each changelog tick once."""
    import random

    import psycopg

    from tests.postgres_cluster import PostgresCluster

    pg = PostgresCluster()
    try:
        if not pg.own:
            pytest.skip("TEST_CDC_POSTGRES_URL's server is not the tests' to stop")
        url = pg.new_database()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE tx (id bigint PRIMARY KEY, from_acct bigint NOT NULL, to_acct bigint NOT NULL,"
                         " amount bigint NOT NULL)")
            conn.execute("ALTER TABLE tx REPLICA IDENTITY FULL")
            conn.execute("INSERT INTO tx SELECT i, 1 + i % 6, 1 + (i * 7) % 6, 1 + i % 100 FROM generate_series(0, 199) i")
        api = cluster.client(make_user("pg-restart"))
        run_id = start_run(api, three_inputs())
        declare(api, run_id,
                {"name": "tx", "kind": "postgres_source", "node": "transactions",
                 "config": {"dsn": url, "table": "public.tx", "max_batch": 40}},
                {"name": "balance-out", "kind": "postgres_sink", "node": "balance",
                 "config": {"dsn": url, "table": "balance", "key": "account"}},
                {"name": "total-log", "kind": "postgres_sink", "node": "total",
                 "config": {"dsn": url, "table": "total_log", "mode": "changelog"}})
        rng, next_id = random.Random(41), 200

        def write(count):  # transactions of 1-3 inserts, every 3rd an update, every 4th a delete
            nonlocal next_id
            with psycopg.connect(url, autocommit=True) as conn:
                for i in range(count):
                    with conn.transaction():
                        for _ in range(rng.randint(1, 3)):
                            conn.execute("INSERT INTO tx VALUES (%s, %s, %s, %s)",
                                         (next_id, rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 100)))
                            next_id += 1
                        if i % 3 == 2:
                            conn.execute("UPDATE tx SET amount = amount + 1 WHERE id = %s", (rng.randrange(next_id),))
                        if i % 4 == 3:
                            conn.execute("DELETE FROM tx WHERE id = %s", (rng.randrange(next_id),))

        write(300)
        cluster.wait(lambda: records_in(run_id, "tx") >= 300, 180, "the CDC source to be mid-stream")
        pg.shut_down()
        wait_retrying(cluster, api, run_id, "tx", "PostgreSQL", behind=False)
        at_stop = records_in(run_id, "tx")  # once retrying shows (as for Redis above)
        lines = OtherInput(api, run_id)
        lines.push_and_see_it_applied(cluster, "postgres")
        extra = [{"insert": {"id": 10**6, "from_acct": 1, "to_acct": 2, "amount": 5}}]
        assert api.post(f"/api/runs/{run_id}/inputs/transactions/push/", json=extra).status_code == 202
        wait_retrying(cluster, api, run_id, "balance-out", "PostgreSQL", behind=True)
        assert records_in(run_id, "tx") == at_stop
        pg.start()
        write(200)
        with psycopg.connect(url) as conn:
            rows = conn.execute("SELECT id, from_acct, to_acct, amount FROM tx").fetchall()
        table = [{"insert": dict(zip(("id", "from_acct", "to_acct", "amount"), r))} for r in rows]
        wanted = integrated([records_delta(table + extra)])
        cluster.wait(lambda: caught_up(run_id, lambda: logged_records(run_id, "transactions") == wanted), 300,
                     "the CDC source and the sinks to catch up after the restart")
        assert at_stop < records_in(run_id, "tx"), "the stream ended before the shutdown: make it longer"
        assert {n: c["state"] for n, c in states(api, run_id).items()} == dict.fromkeys(("tx", "balance-out", "total-log"),
                                                                                        "running")
        expected = reference_views(run_id, {"transactions": table + extra, "orders": [], "lines": lines.records})
        with psycopg.connect(url) as conn:
            balance = Counter(json.dumps({"account": a, "balance": b}, sort_keys=True)
                              for a, b in conn.execute("SELECT account, balance FROM balance"))
            log = conn.execute("SELECT tick, total, weight FROM total_log").fetchall()
        assert balance == expected["balance"]
        by_tick: dict[int, Counter] = {}
        for tick, total, weight in log:
            by_tick.setdefault(tick, Counter())[json.dumps({"total": total}, sort_keys=True)] += weight
        assert by_tick == tick_deltas(run_id, "total"), "the changelog: each tick once, as stored"
        assert integrated(by_tick.values()) == expected["total"]
        print(f"PostgreSQL shut down at {at_stop}/{records_in(run_id, 'tx')} records; "
              f"{Run.objects.get(pk=run_id).current_tick + 1} ticks")
    finally:
        pg.stop()
