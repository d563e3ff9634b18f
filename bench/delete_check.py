"""The delete check of a push behind a large unfolded log (issue 27, postgres_cdc's
phase 2): an input without a primary key (each delete is checked against the rows the
input holds), N snapshot rows logged in pushes of `--batch` and NOT folded, then pushes
of changes (half inserts of new rows, half deletes of held rows), each validated and
logged as the pump does (`input_log.validate` + `log_pushes`). Alternately in one
process: `cold` forgets the delete check's per-process keys before each push (what every
push cost before: the whole unfolded log read, decoded and hashed), `warm` keeps them
(only the pushes it has not seen are read). Cross-check: every push of changes is
accepted in both modes, a push deleting a row that is not there is refused in both, and
the log ends holding exactly snapshot + changes rows.

    DJANGO_DEBUG=1 .venv/bin/python -m bench.delete_check --rows 1000000 --pushes 6
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

CIRCUIT = {
    "format": "dbspweb.circuit", "version": 1,
    "nodes": [
        {"id": "orders", "kind": "input", "position": {"x": 0, "y": 0}, "params": {"schema": [
            {"name": "id", "type": "bigint", "nullable": False}, {"name": "region", "type": "string"},
            {"name": "amount", "type": "bigint"}, {"name": "seq", "type": "bigint"}]}},
        {"id": "out", "kind": "output", "position": {"x": 240, "y": 0}, "params": {}},
    ],
    "edges": [{"from": {"node": "orders", "port": "out"}, "to": {"node": "out", "port": "in"}}],
}


def row(i: int, seq: int = 0) -> dict:
    return {"id": i, "region": f"r{i % 50:02d}", "amount": (i * 37) % 1000, "seq": seq}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--pushes", type=int, default=6, help="pushes of changes per mode")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-delete-check-"))
    os.environ.update(SQLITE_PATH=str(folder / "db.sqlite3"), DATABASE_URL="",
                      DJANGO_SETTINGS_MODULE="dbspweb.settings", DBSPWEB_MAX_PENDING_PUSHES="1000000")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from circuits import services
    from runs import dispatch as runs_dispatch
    from runs import input_log, input_tables
    from runs.models import Push, Run

    runs_dispatch.wake_pushed = lambda *a, **k: None  # nobody ticks: the log stays unfolded
    user = get_user_model().objects.create_user("bench", password="x")
    circuit = services.create_circuit(user, "bench", "", "private", CIRCUIT)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=user, status="running")
    t = time.perf_counter()
    for at in range(0, args.rows, args.batch):
        checked = input_log.validate(run, "orders", [{"insert": row(i)} for i in range(at, min(args.rows, at + args.batch))])
        [entry] = input_log.log_pushes(run, [checked])
        assert isinstance(entry, Push), entry
    print(f"snapshot: {args.rows:,} rows logged in {time.perf_counter() - t:.1f} s (not folded)", flush=True)

    next_id, next_gone = args.rows, 0
    times = {"cold": [], "warm": []}
    for n in range(args.pushes * 2):
        mode = ("cold", "warm")[n % 2]
        half = args.batch // 2
        records = [{"insert": row(i, n + 1)} for i in range(next_id, next_id + half)]
        records += [{"delete": row(i)} for i in range(next_gone, next_gone + half)]
        next_id, next_gone = next_id + half, next_gone + half
        if mode == "cold":
            input_tables._KEYS.clear()
            input_tables._KEYS_ROWS[0] = 0
        t = time.perf_counter()
        checked = input_log.validate(run, "orders", records)
        [entry] = input_log.log_pushes(run, [checked])
        times[mode].append(time.perf_counter() - t)
        assert isinstance(entry, Push), (mode, entry)
    for mode in ("cold", "warm"):
        if mode == "cold":
            input_tables._KEYS.clear()
            input_tables._KEYS_ROWS[0] = 0
        bad = input_log.validate(run, "orders", [{"delete": row(0)}])  # deleted above: not held any more
        [entry] = input_log.log_pushes(run, [bad])
        assert not isinstance(entry, Push) and entry.status == 400, (mode, entry)
    run.refresh_from_db()
    total = sum(Push.objects.filter(run=run).values_list("row_count", flat=True))
    assert total == args.rows + args.pushes * 2 * args.batch, total
    assert run.input_rows_through == 0, "the log was folded: the bench measures an unfolded one"
    print(f"rows={args.rows:,} batch={args.batch:,} pushes of changes={args.pushes} per mode (alternating)")
    cold, warm = statistics.median(times["cold"]), statistics.median(times["warm"])
    for mode, med in (("cold", cold), ("warm", warm)):
        print(f"{mode}: median {med * 1000:.0f} ms per push of {args.batch:,} changes ({args.batch / med:,.0f} records/s); "
              f"all: {', '.join(f'{x * 1000:.0f}' for x in times[mode])} ms")
    print(f"cold/warm: {cold / warm:.1f}x; cross-check: every push accepted, a delete of an absent row refused in both, "
          f"log rows = {total:,}")


if __name__ == "__main__":
    main()
