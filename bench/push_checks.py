"""The web's CPU to turn a push body into its checked change (issue 30), per push size,
JSON and CSV, in one process: this tree's code against another tree's CSV reader
(`--before DIR`, e.g. a `git archive` of the commit before) alternately, so load hits
both alike. JSON: orjson parse + `input_log.validated` (the lane's and the view's
check). CSV: `dbsp/csv_records.records_from_csv` + the check (before: the reader coerced
every value and the check ran again on the records).

    .venv/bin/python -m bench.push_checks --before /tmp/push-before
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", help="a tree holding the earlier runs/csv_records.py")
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 10, 100, 1000, 10_000])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dbspweb.settings")
    import django

    django.setup()
    import orjson

    from dbsp.types import Schema
    from dbsp import csv_records
    from runs.input_log import validated

    old = None
    if args.before:
        spec = importlib.util.spec_from_file_location("old_csv_records", os.path.join(args.before, "runs", "csv_records.py"))
        old = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(old)
    schema = Schema.from_list([{"name": "id", "type": "bigint", "nullable": False}, {"name": "customer", "type": "string"},
                               {"name": "amount", "type": "bigint"}])

    def after_csv(text):
        parsed = csv_records.records_from_csv(text, schema)
        assert not parsed.problems
        return validated(parsed.records, schema, [])[0]

    def before_csv(text):
        return validated(old.records_from_csv(text, schema), schema, [])[0]

    def json_push(body):
        return validated(orjson.loads(body), schema, [])[0]

    print(f"{'rows':>6} {'JSON ms':>9} {'CSV before ms':>14} {'CSV after ms':>13} {'before/after':>12}  (CPU per push, median of {args.repeats})")
    for rows in args.rows:
        data = [{"id": i, "customer": f"c{i % 100}", "amount": i % 500} for i in range(rows)]
        body = orjson.dumps([{"insert": d} for d in data])
        text = "id,customer,amount\n" + "".join(f"{d['id']},{d['customer']},{d['amount']}\n" for d in data)
        reps = max(args.repeats, 2000 // rows)
        times = {"json": [], "before": [], "after": []}
        for _ in range(reps):
            for name, fn, arg in (("json", json_push, body), ("after", after_csv, text)) + ((("before", before_csv, text),) if old else ()):
                t0 = time.process_time()
                table = fn(arg)
                times[name].append(time.process_time() - t0)
                assert table.num_rows == rows
        if old:  # the same change either way
            assert before_csv(text).equals(after_csv(text)) and after_csv(text).equals(json_push(body))
        med = {k: statistics.median(v) * 1000 if v else float("nan") for k, v in times.items()}
        print(f"{rows:>6} {med['json']:>9.3f} {med['before']:>14.3f} {med['after']:>13.3f} {med['before'] / med['after']:>11.2f}x")


if __name__ == "__main__":
    sys.exit(main())
