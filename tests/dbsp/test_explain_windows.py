"""dbsp.explain on event-time windows: a window's row is explained by the rows of its group
in its window, without the late ones, and each late row (dropped behind the waterline)
is named with the tick it came at. Derivations written out by hand for the sensor demo
(examples/circuits/sensor_windows: a 1-minute tumbling window and 2-minute sessions
per sensor, both with 30 seconds of lateness) and a small sliding window.

The sensor pushes, and the waterline W at the start of each tick (the latest reading so
far less 30 s):
  tick 0 (W none):     s1 10:00:10 (20), s1 10:00:40 (22), s2 10:00:20 (30)
  tick 1 (W 10:00:10): s1 10:01:30 (26), s2 10:03:00 (31)
  tick 2 (W 10:02:30): s1 10:00:50 (100): late for its minute [10:00, 10:01), which ended
                       at 10:01 <= W; not for its session (10:00:50 + 2 min > W);
                       s2 10:03:20 (33)
  tick 3 (W 10:02:50): s1 10:09:00 (24)
  tick 4 (W 10:08:30): delete s2 10:03:20: late (its minute ended at 10:04), so dropped:
                       the windows keep it.
Each tree is one step a line: kind, node, tick, row (times as HH:MM:SS), weight or
before->after; group labels in brackets."""
import datetime as dt
import json
from pathlib import Path

from dbsp import ZSet, compile_plan
from dbsp.capture import capture
from dbsp.explain import explain
from dbsp.runtime import changes_from_records
from tests.dbsp.helpers import circuit, schema

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "circuits"


def _sensor():
    plan = compile_plan(json.loads((EXAMPLES / "sensor_windows.json").read_text()))
    lines = (EXAMPLES / "sensor_windows.pushes.jsonl").read_text().splitlines()
    return plan, [{inp: changes_from_records(recs, plan.schemas[inp]) for inp, recs in json.loads(line).items()}
                  for line in lines if line.strip()]


def at(hms: str) -> dt.datetime:
    return dt.datetime.fromisoformat(f"2026-11-21T{hms}")


def _value(v):
    return v.strftime("%H:%M:%S") if isinstance(v, dt.datetime) else repr(v)


def render(step, depth=0) -> list[str]:
    weight = f"{step.before}->{step.after}" if step.mode == "change" else f"w{step.after}"
    row = "(" + ", ".join(_value(v) for v in step.row) + ")"
    lines = ["  " * depth + f"{step.kind} {step.node} t{step.tick} {row} {weight}"]
    for group in step.groups:
        lines.append("  " * depth + f"  [{group.label}]")
        for use in group.uses:
            if use.step is not None:
                lines += render(use.step, depth + 2)
            else:
                lines.append("  " * (depth + 2) + f"= {use.node} {use.row}")
    return lines


def tree(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if line.strip()]
    indent = min(len(line) - len(line.lstrip()) for line in lines)
    return [line[indent:] for line in lines]


def test_a_minute_of_s1_is_its_two_readings_and_the_late_one_dropped_at_tick_2():
    plan, changes = _sensor()
    e = explain(plan, changes, 2, "sensor_averages", ("s1", at("10:00:00"), at("10:01:00"), 21.0, 2))
    assert (e.weight, e.before, e.change) == (1, 1, None)  # the late reading changed nothing
    assert render(e.contents) == tree("""
        output sensor_averages t2 ('s1', 10:00:00, 10:01:00, 21.0, 2) w1
          [the view of its input]
            tumbling_window per_minute t2 ('s1', 10:00:00, 10:01:00, 21.0, 2) w1
              [window [2026-11-21 10:00:00, 2026-11-21 10:01:00) of group sensor = 's1': 2 rows]
                input readings t2 ('s1', 10:00:10, 20.0) w1
                input readings t2 ('s1', 10:00:40, 22.0) w1
              [1 late row of this group was dropped at tick 2 (behind the waterline 2026-11-21 10:02:30)]
                input readings t2 ('s1', 10:00:50, 100.0) 0->1
    """)


def test_a_late_delete_is_dropped_and_the_window_keeps_the_row_where_it_was_accepted():
    """The reading s2 10:03:20 is deleted at tick 4, behind the waterline: the minute still
    averages it; the row is shown at tick 2, where it came and was accepted, and the
    delete at tick 4 as the late row."""
    plan, changes = _sensor()
    e = explain(plan, changes, 4, "sensor_averages", ("s2", at("10:03:00"), at("10:04:00"), 32.0, 2))
    assert render(e.contents) == tree("""
        output sensor_averages t4 ('s2', 10:03:00, 10:04:00, 32.0, 2) w1
          [the view of its input]
            tumbling_window per_minute t4 ('s2', 10:03:00, 10:04:00, 32.0, 2) w1
              [window [2026-11-21 10:03:00, 2026-11-21 10:04:00) of group sensor = 's2': 2 rows]
                input readings t4 ('s2', 10:03:00, 31.0) w1
                input readings t2 ('s2', 10:03:20, 33.0) w1
              [1 late row of this group was dropped at tick 4 (behind the waterline 2026-11-21 10:08:30)]
                input readings t4 ('s2', 10:03:20, 33.0) 1->0
    """)


def test_a_session_grows_by_the_reading_of_the_tick_and_keeps_the_others():
    plan, changes = _sensor()
    e = explain(plan, changes, 2, "sensor_sessions", ("s1", at("10:00:10"), at("10:03:30"), 4))
    assert render(e.change) == tree("""
        output sensor_sessions t2 ('s1', 10:00:10, 10:03:30, 4) 0->1
          [the view of its input]
            session_window sessions t2 ('s1', 10:00:10, 10:03:30, 4) 0->1
              [session [2026-11-21 10:00:10, 2026-11-21 10:03:30) of group sensor = 's1': 3 rows before, 4 after; the rows that changed]
                input readings t2 ('s1', 10:00:50, 100.0) 0->1
              [the session's rows that did not change]
                input readings t2 ('s1', 10:00:10, 20.0) w1
                input readings t2 ('s1', 10:00:40, 22.0) w1
                input readings t2 ('s1', 10:01:30, 26.0) w1
    """)
    assert [(s.node, s.row, before, after) for s, before, after in e.causes] == [
        ("readings", ("s1", at("10:00:50"), 100.0), 0, 1)]
    # the old count of the same session goes, for the same reason
    old = explain(plan, changes, 2, "sensor_sessions", ("s1", at("10:00:10"), at("10:03:30"), 3))
    assert (old.weight, old.before, old.contents) == (0, 1, None)
    assert [(s.row, before, after) for s, before, after in old.causes] == [(("s1", at("10:00:50"), 100.0), 0, 1)]


def test_a_session_that_ends_when_a_reading_extends_it():
    """s2's session [10:03:00, 10:05:00) of one reading goes at tick 2: 10:03:20 comes,
    and the session is [10:03:00, 10:05:20) now."""
    plan, changes = _sensor()
    e = explain(plan, changes, 2, "sensor_sessions", ("s2", at("10:03:00"), at("10:05:00"), 1))
    assert e.contents is None
    assert render(e.change) == tree("""
        output sensor_sessions t2 ('s2', 10:03:00, 10:05:00, 1) 1->0
          [the view of its input]
            session_window sessions t2 ('s2', 10:03:00, 10:05:00, 1) 1->0
              [session [2026-11-21 10:03:00, 2026-11-21 10:05:00) of group sensor = 's2': 1 row before, 0 after; the rows that changed]
                input readings t2 ('s2', 10:03:20, 33.0) 0->1
              [the session's rows that did not change]
                input readings t2 ('s2', 10:03:00, 31.0) w1
    """)


def test_the_late_delete_of_a_session_row_is_dropped():
    plan, changes = _sensor()
    e = explain(plan, changes, 4, "sensor_sessions", ("s2", at("10:03:00"), at("10:05:20"), 2))
    groups = e.contents.groups[0].uses[0].step.groups
    assert [g.label for g in groups] == [
        "session [2026-11-21 10:03:00, 2026-11-21 10:05:20) of group sensor = 's2': 2 rows",
        "1 late row of this group was dropped at tick 4 (behind the waterline 2026-11-21 10:08:30)"]
    assert [(u.row[1], u.tick) for u in groups[0].uses] == [(at("10:03:00"), None), (at("10:03:20"), 2)]
    assert [g.dropped for g in groups] == [False, True]


def test_every_window_row_at_every_tick_counts_and_averages_the_rows_its_explanation_names():
    """Against the view itself: the rows of a window's first group are as many as its
    count column says (and average to its avg), every step's weight is the node's in the
    capture, and every late row named is in the input's change at its tick."""
    plan, changes = _sensor()
    for t in range(len(changes)):
        now = capture(plan, changes, t)
        for view in plan.views:
            for row, weight in now[view].integral:
                e = explain(plan, changes, t, view, row, mode="contents")
                assert e.weight == weight
                window = e.contents.groups[0].uses[0].step
                members = window.groups[0].uses
                assert sum(u.after for u in members) == row[-1], (view, t, row)
                if view == "sensor_averages":
                    assert sum(u.row[2] for u in members) / len(members) == row[3]
                for group in window.groups[1:]:
                    for u in group.uses:
                        assert capture(plan, changes, u.tick)["readings"].delta.weight(u.row) != 0


def test_a_sliding_window_drops_a_row_for_the_window_that_closed_and_keeps_it_for_the_open_one():
    """Windows of 10 sliding by 5, no lateness, on a bigint time. Tick 0: t=3 (windows
    [-5,5), [0,10)) and t=12 ([5,15), [10,20)): the waterline goes to 12. Tick 1: t=7
    falls in [0,10), closed (10 <= 12): dropped there, and in [5,15): kept."""
    doc = circuit({"e": schema("t:bigint", "v:bigint")},
                  [("w", "sliding_window", {"time": "t", "size": 10, "slide": 5, "group_by": [],
                                            "aggregates": [{"fn": "count", "as": "n"}]}), ("o", "output", {})],
                  ["e.out->w.in", "w.out->o.in"])
    plan = compile_plan(doc)
    changes = [{"e": ZSet([((3, 1), 1), ((12, 2), 1)])}, {"e": ZSet([((7, 3), 1)])}]
    closed = explain(plan, changes, 1, "o", (0, 10, 1))
    assert closed.change is None
    assert render(closed.contents) == tree("""
        output o t1 (0, 10, 1) w1
          [the view of its input]
            sliding_window w t1 (0, 10, 1) w1
              [window [0, 10) of group all rows: 1 row]
                input e t1 (3, 1) w1
              [1 late row of this group was dropped at tick 1 (behind the waterline 12)]
                input e t1 (7, 3) 0->1
    """)
    opened = explain(plan, changes, 1, "o", (5, 15, 2))
    assert render(opened.change) == tree("""
        output o t1 (5, 15, 2) 0->1
          [the view of its input]
            sliding_window w t1 (5, 15, 2) 0->1
              [window [5, 15) of group all rows: 1 row before, 2 after; the rows that changed]
                input e t1 (7, 3) 0->1
              [the window's rows that did not change]
                input e t1 (12, 2) w1
    """)


def test_a_late_row_is_followed_through_the_filter_before_the_window_at_its_tick():
    """e → filter v > 0 → tumbling window of 10 (no lateness) → filter n >= 1 → view. Tick 0:
    (3, 4) in [0, 10) and (12, 1) in [10, 20): the waterline goes to 12. Tick 1: (5, 2)
    falls in [0, 10), closed: late; (15, 3) joins [10, 20)."""
    doc = circuit({"e": schema("t:bigint", "v:bigint")},
                  [("pos", "filter", {"predicate": "v > 0"}),
                   ("w", "tumbling_window", {"time": "t", "size": 10, "group_by": [],
                                             "aggregates": [{"fn": "count", "as": "n"}]}),
                   ("some", "filter", {"predicate": "n >= 1"}), ("o", "output", {})],
                  ["e.out->pos.in", "pos.out->w.in", "w.out->some.in", "some.out->o.in"])
    plan = compile_plan(doc)
    changes = [{"e": ZSet([((3, 4), 1), ((12, 1), 1)])}, {"e": ZSet([((5, 2), 1), ((15, 3), 1)])}]
    closed = explain(plan, changes, 1, "o", (0, 10, 1))
    assert render(closed.contents) == tree("""
        output o t1 (0, 10, 1) w1
          [the view of its input]
            filter some t1 (0, 10, 1) w1
              [passes n >= 1]
                tumbling_window w t1 (0, 10, 1) w1
                  [window [0, 10) of group all rows: 1 row]
                    filter pos t1 (3, 4) w1
                      [passes v > 0]
                        input e t1 (3, 4) w1
                  [1 late row of this group was dropped at tick 1 (behind the waterline 12)]
                    filter pos t1 (5, 2) 0->1
                      [passes v > 0]
                        input e t1 (5, 2) 0->1
    """)
    grown = explain(plan, changes, 1, "o", (10, 20, 2))
    assert render(grown.change) == tree("""
        output o t1 (10, 20, 2) 0->1
          [the view of its input]
            filter some t1 (10, 20, 2) 0->1
              [passes n >= 1]
                tumbling_window w t1 (10, 20, 2) 0->1
                  [window [10, 20) of group all rows: 1 row before, 2 after; the rows that changed]
                    filter pos t1 (15, 3) 0->1
                      [passes v > 0]
                        input e t1 (15, 3) 0->1
                  [the window's rows that did not change]
                    filter pos t1 (12, 1) w1
                      [passes v > 0]
                        input e t1 (12, 1) w1
    """)
    assert [(s.row, before, after) for s, before, after in grown.causes] == [((15, 3), 0, 1)]
