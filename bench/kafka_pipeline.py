"""A Kafka source feeding a join plus an aggregate, end to end (issue 27).

Orders are produced to a topic (4 partitions) of librdkafka's mock cluster (the real
protocol over loopback; the cluster in a process of its own, as a broker is) by a
producer process, held back only for the mock's bounded log (at most `--window` records
ahead of what the pump has logged: the mock drops a partition's oldest records past
about 100,000 or 5 MB, so the source would find them gone). The circuit
joins each order with its customer and keeps revenue and order count per region; a
Kafka sink writes each tick's delta of that view in one transaction. In this process,
as in a worker: the connector pump thread (workers/pumps.py, the real Pump, the real
input log) and, in the main thread, the tick loop (workers/ticks.py `drain`, the one a
worker's Celery task runs on a wake-up) on the Spark backend at the real defaults
(local[2], TICK_MAX_PUSHES, MAX_PENDING_PUSHES, the warm-up; the connector's max_batch
is `--batch`, 10,000 by default as for any connector).

The same run again with the orders pushed straight into the input log
(`input_log.validate` + `log_pushes`, REST's path without HTTP, in pushes of the same
size, paced by the run's lag as the pump is) gives the ratio, in one process.

Measured: from the first order produced (pushed) to the sink holding the last tick; and
the wall time inside each stage (the pump thread's and the tick loop's overlap).
Cross-check: the sink topic's committed messages, integrated (weights summed per row),
equal revenue and count per region recomputed in plain Python from the same orders.

    REDIS_URL=redis://127.0.0.1:6379/0 .venv/bin/python -m bench.kafka_pipeline --records 1000000 \
        [--batch 50000 --window 150000]
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import tempfile
import threading
import time
from collections import Counter
from types import SimpleNamespace

REGIONS = ("north", "south", "east", "west", "centre", "coast", "hills", "lakes", "plains", "islands")

CIRCUIT = {
    "format": "dbspweb.circuit", "version": 1,
    "nodes": [
        {"id": "orders", "kind": "input", "position": {"x": 0, "y": 0}, "params": {"schema": [
            {"name": "id", "type": "bigint", "nullable": False}, {"name": "customer", "type": "bigint", "nullable": False},
            {"name": "amount", "type": "bigint", "nullable": False}]}},
        {"id": "customers", "kind": "input", "position": {"x": 0, "y": 200}, "params": {"schema": [
            {"name": "cust_id", "type": "bigint", "nullable": False}, {"name": "region", "type": "string", "nullable": False}]}},
        {"id": "enriched", "kind": "join", "position": {"x": 240, "y": 100},
         "params": {"left_keys": ["customer"], "right_keys": ["cust_id"]}},
        {"id": "per_region", "kind": "aggregate", "position": {"x": 480, "y": 100},
         "params": {"group_by": ["region"], "aggregates": [{"fn": "sum", "expr": "amount", "as": "revenue"},
                                                            {"fn": "count", "as": "orders"}]}},
        {"id": "revenue", "kind": "output", "position": {"x": 720, "y": 100}, "params": {}},
    ],
    "edges": [
        {"from": {"node": "orders", "port": "out"}, "to": {"node": "enriched", "port": "left"}},
        {"from": {"node": "customers", "port": "out"}, "to": {"node": "enriched", "port": "right"}},
        {"from": {"node": "enriched", "port": "out"}, "to": {"node": "per_region", "port": "in"}},
        {"from": {"node": "per_region", "port": "out"}, "to": {"node": "revenue", "port": "in"}},
    ],
}


def order(i: int, customers: int) -> dict:
    return {"id": i, "customer": (i * 7919) % customers, "amount": (i * 37) % 500 + 1}


def customer(c: int) -> dict:
    return {"cust_id": c, "region": REGIONS[c % len(REGIONS)]}


def expected(records: int, customers: int) -> Counter:
    """Revenue and orders per region, recomputed in plain Python: {(region, revenue, orders): 1}."""
    revenue, count = Counter(), Counter()
    for i in range(records):
        o = order(i, customers)
        region = customer(o["customer"])["region"]
        revenue[region] += o["amount"]
        count[region] += 1
    return Counter({(r, revenue[r], count[r]): 1 for r in revenue})


def produce(bootstrap: str, topic: str, records: int, customers: int, window: int, logged, first, last, waited,
            go) -> None:
    """The producer process: every order once, at most `window` ahead of what is logged."""
    import orjson
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.num.messages": 10000,
                         "queue.buffering.max.messages": 1_000_000})
    values = [orjson.dumps({"insert": order(i, customers)}) for i in range(records)]
    go.wait()
    first.value = time.monotonic()
    for i, value in enumerate(values):
        if i - logged.value >= window:
            t = time.monotonic()
            while i - logged.value >= window:
                producer.poll(0.002)
            waited.value += time.monotonic() - t
        while True:
            try:
                producer.produce(topic, value)
                break
            except BufferError:
                producer.poll(0.01)
        if i % 1000 == 999:
            producer.poll(0)
    assert producer.flush(60) == 0
    last.value = time.monotonic()


class Stages:
    """Wall time spent in named calls (their threads overlap: the pump's and the ticks')."""

    def __init__(self):
        self.seconds, self.calls, self._lock = Counter(), Counter(), threading.Lock()

    def wrap(self, owner, attr: str, name: str) -> None:
        inner = getattr(owner, attr)

        def timed(*a, **k):
            t = time.perf_counter()
            try:
                return inner(*a, **k)
            finally:
                with self._lock:
                    self.seconds[name] += time.perf_counter() - t
                    self.calls[name] += 1

        setattr(owner, attr, timed)

    def take(self) -> dict:
        with self._lock:
            out = {k: (self.seconds[k], self.calls[k]) for k in self.seconds}
            self.seconds.clear(), self.calls.clear()
        return out


def broker(address, stop) -> None:
    """The broker process: librdkafka's mock cluster lives as long as this process, away
    from the worker's (as a real broker is)."""
    from tests.kafka_cluster import MockKafka

    kafka = MockKafka()
    address.put(kafka.bootstrap)
    stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--customers", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=10_000, help="the connector's max_batch, and the direct pushes' size")
    parser.add_argument("--window", type=int, default=60_000, help="records produced ahead of the pump at most")
    parser.add_argument("--warm-up", type=int, default=None, help="Spark warm-up ticks (default: a worker's)")
    parser.add_argument("--ways", default="kafka,direct", help="kafka, direct, bare (the broker and producer with a "
                                                                     "consumer that only counts)")
    parser.add_argument("--options", default="{}", help="the source's librdkafka options (JSON), as a user declares them")
    parser.add_argument("--sample", action="store_true", help="print where each thread's wall time went (bench/sampler.py)")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="bench-kafka-pipeline-")
    os.environ.update(SQLITE_PATH=os.path.join(folder, "db.sqlite3"), DATABASE_URL="", DBSPWEB_VAR_DIR=folder,
                      DBSPWEB_SNAPSHOT_DIR=os.path.join(folder, "snapshots"), DJANGO_SETTINGS_MODULE="dbspweb.settings",
                      DBSPWEB_LEASE_TTL="3600", DJANGO_SECRET_KEY="bench-kafka-pipeline", LOG_LEVEL=os.environ.get("LOG_LEVEL", "WARNING"))
    import django
    from confluent_kafka import Producer

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from circuits import services
    from connectors.models import Connector
    from runs import dispatch as runs_dispatch
    from runs import input_log
    from runs.lag import lag_of
    from runs.models import Push, Run
    from tests.kafka_cluster import MockKafka
    from workers import engines, leases, pumps, ticks

    runs_dispatch.wake_pushed = lambda *a, **k: True  # the tick loop below is this "worker"'s wake-up
    started = time.monotonic()
    if set(args.ways.split(",")) != {"bare"}:  # the bare consumer alone needs no Spark
        engines.spark_session()
        warm = engines.warm_up(settings.SPARK_WARM_UP_TICKS if args.warm_up is None else args.warm_up)  # as a worker does
        print(f"spark ready in {time.monotonic() - started:.1f}s (warm-up: {warm})", flush=True)
    user = get_user_model().objects.create_user("bench", password="x")
    circuit = services.create_circuit(user, "orders per region", "", "private", CIRCUIT)
    spawn = multiprocessing.get_context("spawn")
    address, stop_broker = spawn.Queue(), spawn.Event()
    broker_process = spawn.Process(target=broker, args=(address, stop_broker), daemon=True)
    broker_process.start()
    kafka = SimpleNamespace(bootstrap=address.get(timeout=120))
    kafka.producer = Producer({"bootstrap.servers": kafka.bootstrap})  # asks for metadata: the mock creates topics
    kafka.read_committed = lambda topic, **kw: MockKafka.read_committed(kafka, topic, **kw)
    pumps.start()
    truth = expected(args.records, args.customers)
    from connectors import formats
    from connectors.kafka import KafkaSink, KafkaSource
    from connectors.pump import Pump
    from dbsp.spark import SparkRuntime
    from workers import tick_output

    stages = Stages()
    for owner, attr, name in [(KafkaSource, "poll_raw", "source: consume"),
                              (formats, "decode_many", "source: decode"), (input_log, "validate", "log: validate"),
                              (Pump, "_log", "log: write (SQLite)"), (KafkaSink, "write", "sink: write"),
                              (SparkRuntime, "step", "tick: engine step"), (tick_output, "encode", "tick: encode output"),
                              (ticks, "commit", "tick: commit")]:
        stages.wrap(owner, attr, name)

    def bare() -> dict:
        """The mock broker and the producer with a bare consumer (the source's consumer
        settings, `consume` of `--batch` messages, nothing decoded, logged or ticked), held
        to the same window: what this machine's broker and producer deliver at most."""
        from confluent_kafka import Consumer, TopicPartition

        topic = f"orders-bare-{time.monotonic_ns()}"
        while kafka.producer.list_topics(topic, timeout=30).topics[topic].error is not None:
            time.sleep(0.1)
        logged, first, last, go = spawn.Value("q", 0), spawn.Value("d", 0.0), spawn.Value("d", 0.0), spawn.Event()
        waited = spawn.Value("d", 0.0)
        consumer = Consumer({"bootstrap.servers": kafka.bootstrap, "group.id": topic, "enable.auto.commit": False,
                             "enable.auto.offset.store": False, "auto.offset.reset": "error",
                             "isolation.level": "read_committed", **json.loads(args.options)})
        consumer.assign([TopicPartition(topic, p, 0) for p in range(4)])
        feeder = spawn.Process(target=produce, args=(kafka.bootstrap, topic, args.records, args.customers,
                                                     args.window, logged, first, last, waited, go))
        feeder.start()
        go.set()
        got, polls = 0, 0
        while got < args.records:
            messages = consumer.consume(num_messages=args.batch, timeout=0.2)
            polls += 1
            got += sum(1 for m in messages if m.error() is None)
            with logged.get_lock():
                logged.value = got
        took = time.monotonic() - first.value
        feeder.join()
        consumer.close()
        return {"way": "bare", "seconds": took, "rate": args.records / took, "ticks": 0, "tick_ms": 0.0, "pushes": polls,
                "stages": {}, "fed": last.value - first.value, "held": waited.value}

    def one(way: str) -> dict:
        if way == "bare":
            return bare()
        run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=user, status="running")
        epoch = leases.acquire(run.pk)
        input_log.push(run, "customers", [{"insert": customer(c)} for c in range(args.customers)])
        ticks.drain(run.pk, epoch)  # the customers' tick, before the clock
        sink_topic = f"revenue-{way}-{run.pk}"
        sink = Connector.objects.create(run=run, name="revenue-out", kind="kafka_sink", node="revenue",
                                        config={"bootstrap_servers": kafka.bootstrap, "topic": sink_topic})
        logged, first, last, go = spawn.Value("q", 0), spawn.Value("d", 0.0), spawn.Value("d", 0.0), spawn.Event()
        waited = spawn.Value("d", 0.0)  # the producer's time held back by the window
        pumped = Pump._log
        if way == "kafka":
            topic = f"orders-{run.pk}"
            while kafka.producer.list_topics(topic, timeout=30).topics[topic].error is not None:
                time.sleep(0.1)  # the mock creates it (4 partitions) when its metadata is asked for
            source = Connector.objects.create(run=run, name="orders-in", kind="kafka_source", node="orders",
                                              config={"bootstrap_servers": kafka.bootstrap, "topic": topic,
                                                      "max_batch": args.batch, "options": json.loads(args.options)})
            feeder = spawn.Process(target=produce, args=(kafka.bootstrap, topic, args.records, args.customers,
                                                         args.window, logged, first, last, waited, go))
            feeder.start()

            def logged_now() -> int:
                return Connector.objects.filter(pk=source.pk).values_list("records_in", flat=True)[0]

            def tell_the_producer(self, run_, connector, client, checked, *rest, **kw):
                pumped(self, run_, connector, client, checked, *rest, **kw)
                if checked is not None and connector.pk == source.pk:
                    with logged.get_lock():
                        logged.value += checked.rows  # at once, from the pump thread: the window moves on

            Pump._log = tell_the_producer
        else:
            records = [{"insert": order(i, args.customers)} for i in range(args.records)]

            def push_all() -> None:
                first.value = time.monotonic()
                for at in range(0, len(records), args.batch):
                    while lag_of(run.pk)["pushes"] >= max(1, settings.MAX_PENDING_PUSHES // 2):
                        time.sleep(0.005)  # paced by the run's lag, as the pump is
                    checked = input_log.validate(run, "orders", records[at:at + args.batch])
                    [entry] = input_log.log_pushes(run, [checked])
                    assert isinstance(entry, Push), entry
                    logged.value = at + len(checked.change)
                last.value = time.monotonic()

            feeder = threading.Thread(target=push_all, name="direct-pushes")

            def logged_now() -> int:
                return logged.value
        stages.take()  # what came before (the customers' tick, the last run's last poll) is not this way's
        sampler = None
        if args.sample:
            from bench.sampler import Sampler

            sampler = Sampler(threads=("MainThread", "dbspweb-connectors", "direct-pushes")).__enter__()
        go.set()
        if way != "kafka":
            feeder.start()
        n_ticks, tick_ms = 0, 0.0
        while True:
            t = time.perf_counter()
            applied = ticks.drain(run.pk, epoch)
            if applied:
                n_ticks, tick_ms = n_ticks + applied, tick_ms + (time.perf_counter() - t) * 1000
            now = logged_now()
            if now == args.records and not Push.objects.filter(run=run, applied_tick__isnull=True).exists():
                current = Run.objects.get(pk=run.pk).current_tick
                if Connector.objects.get(pk=sink.pk).last_tick >= current:
                    break
            if not applied:
                time.sleep(0.005)
        took = time.monotonic() - first.value
        if sampler is not None:
            sampler.__exit__(None, None, None)
            print(f"--- where the time went ({way}) ---\n{sampler.report()}", flush=True)
        Pump._log = pumped
        spent = stages.take()
        feeder.join()
        Run.objects.filter(pk=run.pk).update(status="stopped")
        ticks.stop(run.pk)
        integrated = Counter()
        for _, value in kafka.read_committed(sink_topic, timeout=60):
            message = json.loads(value)
            [(key, row)] = message.items()
            integrated[(row["region"], row["revenue"], row["orders"])] += 1 if key == "insert" else -1
        integrated = +integrated  # rows whose weights sum to 0 are gone
        assert integrated == truth, (way, integrated, truth)
        pushes = Push.objects.filter(run=run, input="orders").count()
        return {"way": way, "seconds": took, "rate": args.records / took, "ticks": n_ticks, "tick_ms": tick_ms,
                "pushes": pushes, "stages": spent, "fed": last.value - first.value, "held": waited.value}

    results = {way: one(way) for way in args.ways.split(",")}
    pumps.stop()
    stop_broker.set()
    print(f"records={args.records} customers={args.customers} batch={args.batch} window={args.window} "
          f"partitions=4 options={args.options}")
    for r in results.values():
        print(f"{r['way']:>6}: {r['seconds']:.2f} s, {r['rate']:,.0f} records/s; {r['pushes']} pushes in {r['ticks']} ticks "
              f"({r['tick_ms'] / max(r['ticks'], 1):.0f} ms per tick, {r['tick_ms'] / 1000 / r['seconds']:.0%} of the time "
              f"in ticks); all fed in {r['fed']:.2f} s (the producer held back {r['held']:.2f} s); "
              + ("consumed only (no sink)" if r["way"] == "bare" else "sink = recomputation: yes"))
        print("        " + "; ".join(f"{k} {v[0]:.2f} s/{v[1]}" for k, v in sorted(r["stages"].items())))
    if {"kafka", "direct"} <= set(results):
        print(f"kafka/direct: {results['kafka']['seconds'] / results['direct']['seconds']:.2f}x")
    if {"kafka", "bare"} <= set(results):
        print(f"kafka/bare: {results['kafka']['seconds'] / results['bare']['seconds']:.2f}x")


if __name__ == "__main__":
    main()
