"""The node inspector at 10^6 rows, end to end: a transactions run whose applied input
log holds N rows, the REST request that queues its inspection (202), the inspection
itself (workers/inspection.py: the reference evaluator over the log, every node written
as Arrow files; called in this process exactly as the verification queue's Celery task
calls it), then pages of the 10^6-row input contents over REST: the first page, a page
in the middle, sorted by a column (first and next page), filtered, searched.

    .venv/bin/python -m bench.inspect --rows 1000000

Uses a throwaway SQLite database and inspection directory; prints seconds per step and
the peak memory (RSS) of the process.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--push-rows", type=int, default=100_000)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-inspect-"))
    env = {"DJANGO_SETTINGS_MODULE": "dbspweb.settings", "DATABASE_URL": "", "SQLITE_PATH": str(tmp / "db.sqlite3"),
           "DBSPWEB_INSPECT_DIR": str(tmp / "inspect"), "DBSPWEB_THROTTLE_ANON": "off",
           "DJANGO_DEBUG": os.environ.get("DJANGO_DEBUG", "1")}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env={**os.environ, **env}, check=True)
    os.environ.update(env)
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from circuits import services
    from runs.models import Inspection, Push, Run
    from workers.inspection import inspect

    user = get_user_model().objects.create_user("bench")
    document = json.loads((ROOT / "examples" / "circuits" / "transactions.json").read_text())
    circuit = services.create_circuit(user, "transactions", "", "private", document)
    rng = random.Random(1)
    ticks = -(-args.rows // args.push_rows)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=user, status="running",
                             current_tick=ticks - 1, last_sequence=ticks)
    for t in range(ticks):
        ids = range(t * args.push_rows, min(args.rows, (t + 1) * args.push_rows))
        records = [{"data": {"id": i, "from_acct": rng.randrange(1000), "to_acct": rng.randrange(1000),
                             "amount": rng.randrange(1, 10_000)}, "weight": 1} for i in ids]
        Push.objects.create(run=run, sequence=t + 1, input="transactions", records=records, row_count=len(records), applied_tick=t)
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    url = f"/api/runs/{run.pk}/nodes/transactions/"

    def timed(label, params, expect=200):
        started = time.perf_counter()
        response = client.get(url, params)
        seconds = time.perf_counter() - started
        assert response.status_code == expect, response.content[:300]
        body = response.json()
        print(f"{label:<44} {seconds:7.3f} s  (count {body.get('count')}, rows {len(body.get('rows') or [])})")
        return body

    print(f"rows {args.rows}, ticks {ticks}, load {os.getloadavg()[0]:.1f}")
    import runs.dispatch as seam

    queued = []
    seam_inspect = seam.inspect
    seam.inspect = lambda inspection_id: queued.append(inspection_id) or True  # the worker runs below, timed
    timed("GET (queues the inspection: 202)", {"kind": "integral"}, expect=202)
    seam.inspect = seam_inspect
    started = time.perf_counter()
    inspect(queued[0])
    inspection = Inspection.objects.get(pk=queued[0])
    print(f"{'inspection (capture + Arrow files)':<44} {time.perf_counter() - started:7.3f} s  "
          f"({inspection.status}, {inspection.bytes / 1e6:.0f} MB on disk) {inspection.error}")
    timed("first page of the contents", {"kind": "integral"})
    middle = -(-args.rows // 100) // 2
    timed(f"page {middle} (the middle)", {"kind": "integral", "page": middle})
    timed("sorted by amount desc, page 1", {"kind": "integral", "sort": "amount", "desc": 1})
    timed("sorted by amount desc, page 2 (order cached)", {"kind": "integral", "sort": "amount", "desc": 1, "page": 2})
    timed("filter from_acct:7, sorted by id", {"kind": "integral", "filter": "from_acct:7", "sort": "id"})
    timed("search q=4242", {"kind": "integral", "q": "4242"})
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
