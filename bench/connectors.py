"""The Kafka source's cost over the input log's own (issue 27): N records of the
big_orders input, read by the connector pump from a topic of librdkafka's mock cluster
(the real protocol, over loopback) and logged with their position, against the same
records checked and logged straight (`input_log.validate` + `log_pushes`, the REST
push's path without HTTP) in pushes of the same size, alternately, in one process on a
throwaway SQLite database. No ticks run (no worker): this is the source's side only.
Cross-check: each side's input log holds exactly the N records.

    DJANGO_DEBUG=1 .venv/bin/python -m bench.connectors --records 20000 --batch 2000
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=2_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="bench-connectors-")
    os.environ.update(SQLITE_PATH=os.path.join(folder, "db.sqlite3"), DATABASE_URL="",
                      DJANGO_SETTINGS_MODULE="dbspweb.settings", DBSPWEB_MAX_PENDING_PUSHES="1000000")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from circuits import services
    from connectors.models import Connector
    from connectors.pump import Pump
    from runs import dispatch as runs_dispatch
    from runs import input_log
    from runs.models import Push, Run
    from tests.conftest import example
    from tests.kafka_cluster import MockKafka
    from workers import leases

    runs_dispatch.wake_pushed = lambda *a, **k: None  # no broker here: nobody ticks
    user = get_user_model().objects.create_user("bench", password="x")
    circuit = services.create_circuit(user, "bench", "", "private", example("big_orders"))
    kafka = MockKafka()
    records = [{"insert": {"id": i, "customer": f"c{i % 100}", "amount": i % 500}} for i in range(args.records)]

    def new_run():
        run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=user, status="running")
        epoch = leases.acquire(run.pk)
        return run, (lambda: leases.fence(run.pk, epoch)), epoch

    def via_kafka(i):
        topic = f"orders-{i}"
        kafka.produce(topic, [json.dumps(r) for r in records], partition=0)
        run, fence, epoch = new_run()
        Connector.objects.create(run=run, name="in", kind="kafka_source", node="orders",
                                 config={"bootstrap_servers": kafka.bootstrap, "topic": topic, "max_batch": args.batch})
        pump = Pump()
        pump.pump_run(run, epoch, fence)  # opens the consumer (metadata, offsets): not timed
        started = time.perf_counter()
        while Connector.objects.get(run=run).records_in < args.records:
            pump.pump_run(run, epoch, fence)
        took = time.perf_counter() - started
        pump.close_all_but(set())
        return run, took

    def direct(i):
        run, fence, epoch = new_run()
        started = time.perf_counter()
        for at in range(0, len(records), args.batch):
            checked = input_log.validate(run, "orders", records[at:at + args.batch])
            [entry] = input_log.log_pushes(run, [checked])
            assert isinstance(entry, Push), entry
        return run, time.perf_counter() - started

    times = {"kafka": [], "direct": []}
    for i in range(args.repeats):
        for name, way in (("kafka", via_kafka), ("direct", direct)):
            run, took = way(i)
            logged = sum(Push.objects.filter(run=run).values_list("row_count", flat=True))
            assert logged == args.records, (name, logged)  # every record once
            times[name].append(took)
    k, d = statistics.median(times["kafka"]), statistics.median(times["direct"])
    print(f"records={args.records} batch={args.batch} repeats={args.repeats}")
    print(f"kafka source: {k * 1000:.0f} ms ({args.records / k:,.0f} records/s)")
    print(f"direct log:   {d * 1000:.0f} ms ({args.records / d:,.0f} records/s)")
    print(f"kafka/direct: {k / d:.2f}x")


if __name__ == "__main__":
    main()
