"""Explain over circuits that run tick by tick: the sensor demo's windows with `rows`
readings spread over `ticks` ticks (4 sensors, a reading every second), and x → I → view
over the same ticks. Prints the seconds of one explanation (a window row with its late
rows; a row of the integral) — the capture with every top-level node's history included.
Usage: python bench/explain_ticks.py [rows] [ticks]"""
import datetime as dt
import json
import sys
import time
from pathlib import Path

from dbsp import ZSet, compile_plan
from dbsp.explain import explain

ROOT = Path(__file__).resolve().parents[1]


def main(rows=20_000, ticks=100):
    plan = compile_plan(json.loads((ROOT / "examples/circuits/sensor_windows.json").read_text()))
    start, per = dt.datetime(2026, 11, 21, 10), rows // ticks
    changes = []
    for t in range(ticks):
        batch = [((f"s{i % 4}", start + dt.timedelta(seconds=t * per + i - (90 if i % 50 == 0 else 0)), float(i)), 1)
                 for i in range(per)]
        changes.append({"readings": ZSet(batch)})
    row = max(_view(plan, changes, ticks - 1), key=lambda item: item[0][-1])[0]  # the fullest minute
    t0 = time.perf_counter()
    e = explain(plan, changes, ticks - 1, "sensor_averages", row, mode="contents")
    window_s = time.perf_counter() - t0
    late = sum(1 for g in e.contents.groups[0].uses[0].step.groups if g.dropped)
    doc = {"nodes": [{"id": "x", "kind": "input", "params": {"schema": [{"name": "k", "type": "bigint"}]}},
                     {"id": "ix", "kind": "integrate", "params": {}}, {"id": "o", "kind": "output", "params": {}}],
           "edges": [{"from": {"node": "x", "port": "out"}, "to": {"node": "ix", "port": "in"}},
                     {"from": {"node": "ix", "port": "out"}, "to": {"node": "o", "port": "in"}}]}
    literal = compile_plan(doc)
    xs = [{"x": ZSet([((t * per + i,), 1) for i in range(per)])} for t in range(ticks)]
    t0 = time.perf_counter()
    explain(literal, xs, ticks - 1, "o", (0,))
    integral_s = time.perf_counter() - t0
    print(f"rows={rows} ticks={ticks}: window row {window_s:.2f}s ({late} late groups); I(x) row {integral_s:.2f}s")


def _view(plan, changes, tick):
    from dbsp.capture import capture

    return capture(plan, changes, tick)["sensor_averages"].integral


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
