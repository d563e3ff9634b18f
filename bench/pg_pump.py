"""The postgres_source's pump alone (no worker, no ticks): a `--rows` snapshot of
postgres_cdc's `orders`, then `--changes` changes in transactions of 100 (as the CDC
bench's writer makes them, written before the pump reads them), pumped into the input
log (SQLite) by the real Pump: the snapshot's pushes alternately as Arrow columns and
as a dict a row (`PostgresSource.columns_at_once`: a ratio from one run), the changes
under cProfile (where a push's time goes). Cross-check:
the input log holds rows + the changes' records (an update is two).

    DJANGO_DEBUG=1 .venv/bin/python -m bench.pg_pump --rows 200000 --changes 50000
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--changes", type=int, default=50_000)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-pg-pump-"))
    os.environ.update(SQLITE_PATH=str(folder / "db.sqlite3"), DATABASE_URL="",
                      DJANGO_SETTINGS_MODULE="dbspweb.settings", DBSPWEB_MAX_PENDING_PUSHES="1000000")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from bench.postgres_cdc import CIRCUIT, load, write
    from circuits import services
    from connectors.models import Connector
    from connectors.postgres import PostgresSource
    from connectors.pump import Pump
    from runs import dispatch as runs_dispatch
    from runs.models import Push, Run
    from tests.postgres_cluster import PostgresCluster
    from workers import leases

    runs_dispatch.wake_pushed = lambda *a, **k: None  # nobody ticks
    pg = PostgresCluster()
    try:
        url = pg.new_database()
        load(url, args.rows)
        user = get_user_model().objects.create_user("bench", password="x")
        circuit = services.create_circuit(user, "bench", "", "private", CIRCUIT)
        run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=user, status="running")
        epoch = leases.acquire(run.pk)
        source = Connector.objects.create(run=run, name="orders-in", kind="postgres_source", node="orders",
                                          config={"dsn": url, "table": "public.orders"}, created_by=user)
        pump = Pump()
        fence = lambda: leases.fence(run.pk, epoch)  # noqa: E731

        pump.pump_run(run, epoch, fence)  # opens the source (the slot, the snapshot's cursor)
        # the snapshot's pushes alternately as Arrow columns and a dict a row (the same pump, the same cursor)
        spent, rows_by = {True: 0.0, False: 0.0}, {True: 0, False: 0}
        at_once, t0 = True, time.perf_counter()
        while (done := Connector.objects.get(pk=source.pk).records_in) < args.rows + 1:
            PostgresSource.columns_at_once = at_once
            t = time.perf_counter()
            pump.pump_run(run, epoch, fence)
            spent[at_once] += time.perf_counter() - t
            rows_by[at_once] += Connector.objects.get(pk=source.pk).records_in - done
            at_once = not at_once
        PostgresSource.columns_at_once = True
        took = time.perf_counter() - t0
        print(f"snapshot: {args.rows + 1:,} rows in {took:.2f} s ({(args.rows + 1) / took:,.0f} rows/s), pushes alternating:")
        for mode, label in ((True, "columns (Arrow)"), (False, "a dict a row")):
            print(f"  {label}: {rows_by[mode]:,} rows in {spent[mode]:.2f} s ({rows_by[mode] / spent[mode]:,.0f} rows/s)")
        print(f"  dicts/columns: {(spent[False] / rows_by[False]) / (spent[True] / rows_by[True]):.2f}x per row")
        if args.changes:
            out = folder / "commits.json"
            write(url, args.rows, 10 ** 9, args.changes / 10 ** 9, 100, str(out))  # as fast as it goes (changes/101 transactions)
            records = sum(c for _, _, c in json.loads(out.read_text())["commits"])
            before = Connector.objects.get(pk=source.pk).records_in
            profile = cProfile.Profile()
            t = time.perf_counter()
            profile.enable()
            idle = 0
            while idle < 2:
                idle = 0 if pump.pump_run(run, epoch, fence) else idle + 1
            profile.disable()
            took = time.perf_counter() - t
            got = Connector.objects.get(pk=source.pk).records_in - before
            print(f"changes: {records:,} changes, {got:,} input-log records in {took:.2f} s ({got / took:,.0f} records/s)")
            pstats.Stats(profile).sort_stats("cumulative").print_stats(args.top)
        total = sum(Push.objects.filter(run=run).values_list("row_count", flat=True))
        print(f"cross-check: input log rows {total:,} == records_in {Connector.objects.get(pk=source.pk).records_in:,}")
    finally:
        pump.close_all_but(set())
        pg.stop()


if __name__ == "__main__":
    main()
