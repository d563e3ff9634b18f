"""The windowed sensor example through `python -m dbsp run --stats`, on both backends,
against results worked out by hand (examples/circuits/sensor_windows.*):

tumbling 1 minute, lateness 30 s; sessions with a 2-minute gap, lateness 30 s.
tick 0: s1 10:00:10 (20), s1 10:00:40 (22), s2 10:00:20 (30)     W = 10:00:40 − 30 s = 10:00:10
tick 1: s1 10:01:30 (26), s2 10:03:00 (31)                       W = 10:02:30
  s1's reading 50 s after its last one extends its session; s2's 2:40 after starts one.
tick 2: s1 10:00:50 (100), s2 10:03:20 (33)                      W = 10:02:50
  10:00:50 is late for the 1-minute window [10:00, 10:01) (it ended at 10:01 <= 10:02:30)
  but not for sessions (10:00:50 + 2 min = 10:02:50 > 10:02:30): s1's session counts 4.
tick 3: s1 10:09:00 (24)                                         W = 10:08:30
tick 4: delete s2 10:03:20: its minute ended at 10:04 and its session's own window at
  10:05:20, both <= 10:08:30: dropped by both, counted, and no output changes.
"""
import json

import pytest

from dbsp import ZSet
from tests.dbsp.test_cli import EXAMPLES, cli, in_process

T = "2026-11-21T"


def views(lines, view):
    """Per tick: the delta and the integrated view, rows as tuples of values."""
    total, out = ZSet(), []
    for line in lines:
        delta = ZSet((tuple(r["data"].values()), r["weight"]) for r in json.loads(line)["outputs"][view])
        total = total + delta
        out.append((delta, total))
    return out


@pytest.mark.parametrize("backend", ["spark", "reference"])
def test_sensor_windows_example(backend):
    # Spark in this process's session (a subprocess would start a JVM of its own)
    out = (in_process if backend == "spark" else cli)("run", str(EXAMPLES / "sensor_windows.json"), str(EXAMPLES / "sensor_windows.pushes.jsonl"),
              "--backend", backend, "--stats")
    lines = out.stdout.strip().splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["tick"] for r in records] == [0, 1, 2, 3, 4]

    averages = views(lines, "sensor_averages")
    assert averages[-1][1] == ZSet([
        (("s1", T + "10:00:00", T + "10:01:00", 21.0, 2), 1),
        (("s2", T + "10:00:00", T + "10:01:00", 30.0, 1), 1),
        (("s1", T + "10:01:00", T + "10:02:00", 26.0, 1), 1),
        (("s2", T + "10:03:00", T + "10:04:00", 32.0, 2), 1),
        (("s1", T + "10:09:00", T + "10:10:00", 24.0, 1), 1),
    ])
    # tick 2: only s2's minute changes; the late 100.0 reaches no average
    assert averages[2][0] == ZSet([(("s2", T + "10:03:00", T + "10:04:00", 31.0, 1), -1),
                                   (("s2", T + "10:03:00", T + "10:04:00", 32.0, 2), 1)])
    assert averages[4][0] == ZSet()

    sessions = views(lines, "sensor_sessions")
    assert sessions[1][0] == ZSet([  # s1's session grows (retract, insert); s2 starts a second one
        (("s1", T + "10:00:10", T + "10:02:40", 2), -1), (("s1", T + "10:00:10", T + "10:03:30", 3), 1),
        (("s2", T + "10:03:00", T + "10:05:00", 1), 1)])
    assert sessions[-1][1] == ZSet([
        (("s1", T + "10:00:10", T + "10:03:30", 4), 1),
        (("s2", T + "10:00:20", T + "10:02:20", 1), 1),
        (("s2", T + "10:03:00", T + "10:05:20", 2), 1),
        (("s1", T + "10:09:00", T + "10:11:00", 1), 1),
    ])
    assert sessions[4][0] == ZSet()

    waterlines = [T + "10:00:10", T + "10:02:30", T + "10:02:50", T + "10:08:30", T + "10:08:30"]
    for node in ("per_minute", "sessions"):
        assert [r["frontier"][node]["waterline"] for r in records] == waterlines
    assert [r["stats"]["per_minute"]["late_rows"] for r in records] == [0, 0, 1, 1, 2]
    assert [r["stats"]["sessions"]["late_rows"] for r in records] == [0, 0, 0, 0, 1]
