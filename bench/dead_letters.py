"""The cost of `on_error: dead_letter` (issue 27): a file source of N JSON lines of the
big_orders input, pumped until the file is applied, (a) clean in the default mode, (b)
clean with dead letters on (the raw payloads kept per batch: the mode's cost when nothing
is bad), (c) with 1% bad lines (half not JSON, half an amount that does not fit) and
dead letters on (the batch split: bad records out, the rest validated again). Alternately,
in one process on a throwaway SQLite database; no ticks. Cross-check: the input log holds
exactly the good lines' ids (recomputed here from the file's lines), and (c) stores one
dead letter per bad line.

    DJANGO_DEBUG=1 .venv/bin/python -m bench.dead_letters --records 20000 --batch 2000
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=2_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-dead-letters-"))
    os.environ.update(SQLITE_PATH=str(folder / "db.sqlite3"), DATABASE_URL="",
                      DJANGO_SETTINGS_MODULE="dbspweb.settings", DBSPWEB_MAX_PENDING_PUSHES="1000000")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from circuits import services
    from connectors.models import Connector, DeadLetter
    from connectors.pump import Pump
    from dbsp import arrow_change
    from runs import dispatch as runs_dispatch
    from runs.models import Push, Run
    from tests.conftest import example
    from workers import leases

    runs_dispatch.wake_pushed = lambda *a, **k: None  # no broker here: nobody ticks
    user = get_user_model().objects.create_user("bench", password="x")
    circuit = services.create_circuit(user, "bench", "", "private", example("big_orders"))

    def line(i, bad):
        if bad and i % 200 == 0:
            return '{"insert": {"id": %d' % i  # not JSON
        if bad and i % 200 == 100:
            return json.dumps({"insert": {"id": i, "customer": "c", "amount": "lots"}})
        return json.dumps({"insert": {"id": i, "customer": f"c{i % 100}", "amount": i % 500}})

    def files(bad):
        where = Path(tempfile.mkdtemp(dir=folder))
        (where / "orders.jsonl").write_text("\n".join(line(i, bad) for i in range(args.records)) + "\n")
        return where

    def pushed_ids(run):
        ids = []
        for push in Push.objects.filter(run=run).order_by("sequence"):
            table = arrow_change.from_ipc(push.change)
            ids += [r["data"]["id"] for r in arrow_change.records_json(table, arrow_change.input_schema(table.schema))]
        return ids

    def case(bad, dead_letter):
        path = files(bad)
        run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=user, status="running")
        epoch = leases.acquire(run.pk)
        fence = lambda: leases.fence(run.pk, epoch)  # noqa: E731
        config = {"path": str(path), "format": "insert_delete", "max_batch": args.batch}
        if dead_letter:
            config["on_error"] = "dead_letter"
        connector = Connector.objects.create(run=run, name="in", kind="file_source", node="orders", config=config)
        pump = Pump()
        started = time.perf_counter()
        while Connector.objects.get(pk=connector.pk).position != {"after": "orders.jsonl"}:
            pump.pump_run(run, epoch, fence)
        took = time.perf_counter() - started
        good = [i for i in range(args.records) if not (bad and i % 200 in (0, 100))]
        assert pushed_ids(run) == good, "the input log is not the good lines"
        letters = DeadLetter.objects.filter(connector=connector).count()
        assert letters == args.records - len(good) == Connector.objects.get(pk=connector.pk).dead_letters
        return took

    cases = {"clean, fail": (False, False), "clean, dead_letter": (False, True), "1% bad, dead_letter": (True, True)}
    times = {name: [] for name in cases}
    for _ in range(args.repeats):
        for name, (bad, dead_letter) in cases.items():
            times[name].append(case(bad, dead_letter))
    base = statistics.median(times["clean, fail"])
    print(f"records={args.records} batch={args.batch} repeats={args.repeats}")
    for name, took in times.items():
        median = statistics.median(took)
        print(f"{name:22s} {median * 1000:8.0f} ms  {args.records / median:10,.0f} records/s  {median / base:5.2f}x")


if __name__ == "__main__":
    main()
