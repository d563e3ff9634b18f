"""Windows over event time: semantics by hand, validation, lateness and state release."""
import datetime as dt

import pytest

from dbsp import compile_plan, validate
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from tests.dbsp.helpers import circuit, dele, ins, run, schema, z

READINGS = schema("sensor:string", "ts:bigint", "value:bigint")


def on_r(ticks):
    return [{"r": records} for records in ticks]


def windowed(kind, **params):
    params = {"time": "ts", "group_by": ["sensor"], "aggregates": [{"fn": "sum", "expr": "value", "as": "total"}]} | params
    return circuit({"r": READINGS}, [("w", kind, params), ("v", "output", {})], ["r.out->w.in", "w.out->v.in"])


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def test_tumbling_windows_and_late_rows(spark):
    doc = windowed("tumbling_window", size=10, lateness=5)
    ticks = [
        [ins(sensor="a", ts=3, value=1), ins(sensor="a", ts=12, value=2), ins(sensor="a", ts=-1, value=4)],
        # W = 12 - 5 = 7: [0, 10) is still open (10 > 7), so ts 9 counts; [-10, 0) has closed
        [ins(sensor="a", ts=9, value=10), ins(sensor="a", ts=-2, value=100)],
        # W = 7 still: a delete for the open window applies
        [dele(sensor="a", ts=3, value=1)],
    ]
    out = run(doc, on_r(ticks), spark)
    assert out[0]["v"] == z(("a", -10, 0, 4), ("a", 0, 10, 1), ("a", 10, 20, 2))
    assert out[1]["v"] == z((("a", 0, 10, 1), -1), (("a", 0, 10, 11), 1))
    assert out[2]["v"] == z((("a", 0, 10, 11), -1), (("a", 0, 10, 10), 1))


def test_sliding_window_assigns_every_covering_window_and_drops_closed_ones(spark):
    doc = windowed("sliding_window", size=10, slide=5, group_by=[])
    out = run(doc, on_r([[ins(sensor="a", ts=7, value=1)], [ins(sensor="b", ts=20, value=2)], [ins(sensor="c", ts=12, value=4)]]), spark)
    assert out[0]["v"] == z((0, 10, 1), (5, 15, 1))
    assert out[1]["v"] == z((15, 25, 2), (20, 30, 2))
    # W = 20: ts 12 is in [5, 15) (closed) and [10, 20) (closed at 20 <= 20): late, dropped
    assert out[2]["v"] == z()


def test_sessions_merge_on_insert_and_split_on_delete(spark):
    doc = windowed("session_window", gap=5, lateness=100)
    ticks = [
        [ins(sensor="a", ts=1, value=1), ins(sensor="a", ts=9, value=2)],   # two sessions (8 apart)
        [ins(sensor="a", ts=5, value=4)],                                   # bridges them (4 < 5)
        [dele(sensor="a", ts=5, value=4)],                                  # splits again
    ]
    out = run(doc, on_r(ticks), spark)
    assert out[0]["v"] == z(("a", 1, 6, 1), ("a", 9, 14, 2))
    assert out[1]["v"] == z((("a", 1, 6, 1), -1), (("a", 9, 14, 2), -1), (("a", 1, 14, 7), 1))
    assert out[2]["v"] == z((("a", 1, 14, 7), -1), (("a", 1, 6, 1), 1), (("a", 9, 14, 2), 1))


def test_timestamp_windows_with_duration_strings(spark):
    doc = circuit({"r": schema("ts:timestamp", "value:double")},
                  [("w", "tumbling_window", {"time": "ts", "size": "1 hour", "aggregates": [{"fn": "max", "expr": "value", "as": "peak"}]}),
                   ("v", "output", {})], ["r.out->w.in", "w.out->v.in"])
    out = run(doc, on_r([[ins(ts="2026-11-21T10:59:59", value=1.5), ins(ts="2026-11-21T11:00:00", value=2.5)]]), spark)
    h = dt.datetime(2026, 11, 21, 10)
    assert out[0]["v"] == z((h, h + dt.timedelta(hours=1), 1.5), (h + dt.timedelta(hours=1), h + dt.timedelta(hours=2), 2.5))


@pytest.mark.parametrize("kind,params", [
    ("tumbling_window", {"size": 10, "aggregates": [{"fn": "count", "as": "n"}]}),       # per-window accumulators
    ("tumbling_window", {"size": 10, "aggregates": [{"fn": "max", "expr": "value", "as": "m"}]}),  # rows by window
    ("session_window", {"gap": 3, "aggregates": [{"fn": "count", "as": "n"}]}),
])
@pytest.mark.parametrize("recent_max", [200_000, 1])  # state on the driver; state in Spark levels
def test_state_is_released_once_the_waterline_passes(spark, kind, params, recent_max):
    from dbsp.spark import SparkRuntime

    plan = compile_plan(windowed(kind, **params))
    rt = SparkRuntime(plan, spark, recent_max=recent_max)
    sizes = []
    for t in range(0, 200, 10):  # 5 sensors, one reading each per 10 time units
        change = changes_from_records([ins(sensor=f"s{i}", ts=t + i, value=i) for i in range(5)], plan.inputs["r"])
        rt.step(change and {"r": change})
        sizes.append(rt.executors["w"].state_rows())
    assert max(sizes) <= 10, sizes  # bounded: only the open windows' state is kept
    assert sizes[-1] <= 10 and sum(sizes) < 20 * 10


# Sliding windows of size 10 every 5, lateness 3: a reading at t is in [s, s + 10) for
# s in {5·floor(t/5) - 5, 5·floor(t/5)}; after a tick the waterline W is the latest t - 3,
# and a window's state goes once W >= its end, i.e. once a reading at end + 3 arrived.
SLIDING_TICKS = [
    [ins(sensor="a", ts=7, value=1), ins(sensor="a", ts=12, value=2), ins(sensor="b", ts=8, value=4)],  # W = 9
    [ins(sensor="a", ts=14, value=8)],   # W = 11: [0, 10) goes (for a and b)
    [ins(sensor="a", ts=17, value=16)],  # W = 14: [5, 15) stays (15 > 14)
    [ins(sensor="a", ts=18, value=32)],  # W = 15: [5, 15) goes, b's too (W is per node)
    [],                                  # nothing moves
    [ins(sensor="a", ts=100, value=64)],  # W = 97: everything before goes
]
# State per tick: accumulators keyed by (group, window) for sum; for max, the rows kept
# per window (a reading counts once per window it is in).
SLIDING_STATE = {
    "sum": [
        5,  # a[0,10) a[5,15) a[10,20) b[0,10) b[5,15)
        3,  # a[5,15) a[10,20) b[5,15)
        4,  # + a[15,25)
        2,  # a[10,20) a[15,25)
        2,
        2,  # a[95,105) a[100,110)
    ],
    "max": [
        6,  # a7 ×2, a12 ×2, b8 ×2
        6,  # + a14 ×2, - a7 and b8 in [0,10)
        8,  # + a17 ×2
        6,  # + a18 ×2, - [5,15): a7 a12 a14 b8
        6,
        2,  # a100 ×2
    ],
}


@pytest.mark.parametrize("fn", list(SLIDING_STATE))
@pytest.mark.parametrize("recent_max", [200_000, 1])  # state on the driver; state in Spark levels
def test_sliding_window_state_is_released_once_the_waterline_passes_end_plus_lateness(spark, fn, recent_max):
    from dbsp.spark import SparkRuntime

    plan = compile_plan(windowed("sliding_window", size=10, slide=5, lateness=3,
                                 aggregates=[{"fn": fn, "expr": "value", "as": "agg"}]))
    rt, ref = SparkRuntime(plan, spark, recent_max=recent_max), ReferenceRuntime(plan)
    sizes, waterlines, view = [], [], z()
    for records in SLIDING_TICKS:
        change = changes_from_records(records, plan.inputs["r"])
        result = rt.step({"r": change})
        assert result.outputs == ref.step({"r": change}).outputs  # releasing state changes no output
        assert result.stats["w"]["late_rows"] == 0
        assert result.stats["w"].get("state_rows", 0) == rt.executors["w"].state_rows()
        view = view + result.outputs["v"]
        sizes.append(rt.executors["w"].state_rows())
        waterlines.append(result.frontier["w"]["waterline"])
    assert waterlines == [9, 11, 14, 15, 15, 97]
    assert sizes == SLIDING_STATE[fn], sizes
    # the closed windows' rows stay in the view: a's [5, 15) holds 7, 12 and 14
    assert ("a", 5, 15, 1 + 2 + 8 if fn == "sum" else 8) in {row for row, w in view if w > 0}


def test_frontier_and_stats_report_waterline_and_late_rows():
    plan = compile_plan(windowed("tumbling_window", size=10, lateness=2))
    rt = ReferenceRuntime(plan)
    first = rt.step({"r": changes_from_records([ins(sensor="a", ts=30, value=1)], plan.inputs["r"])})
    second = rt.step({"r": changes_from_records([ins(sensor="a", ts=5, value=1), {"weight": 3, "data": {"sensor": "b", "ts": 1, "value": 1}}],
                                                plan.inputs["r"])})
    assert first.frontier["w"] == {"tick": 0, "waterline": 28, "windows_closed": 0} and first.stats["w"]["late_rows"] == 0
    assert second.frontier["w"]["waterline"] == 28 and second.stats["w"]["late_rows"] == 4
    assert second.stats["w"]["late_rows_tick"] == 4 and second.frontier["w"]["windows_closed"] == 0
    assert second.outputs["v"] == z()


@pytest.mark.parametrize("params,param,message", [
    ({"time": "sensor", "size": 10}, "time", "must name a timestamp or bigint column"),
    ({"time": "nope", "size": 10}, "time", "must name a timestamp or bigint column"),
    ({"time": "ts", "size": 0}, "size", "must be positive"),
    ({"time": "ts", "size": "10 minutes"}, "size", "must be an integer for a bigint time column"),
    ({"time": "ts", "size": 10, "lateness": -1}, "lateness", "must be >= 0"),
    ({"time": "ts", "size": 10, "group_by": ["colour"]}, "group_by", "unknown column 'colour'"),
    ({"time": "ts", "size": 10, "aggregates": [{"fn": "median", "expr": "value", "as": "m"}]}, "aggregates", "unknown function"),
])
def test_bad_window_parameters_are_named(params, param, message):
    doc = windowed("tumbling_window", **params)
    problems = [p for p in validate(doc) if p.node == "w"]
    assert problems and problems[0].param == param and message in problems[0].message, problems


def test_bad_durations_and_shapes():
    ts_doc = circuit({"r": schema("ts:timestamp", "window_end:bigint")},
                     [("w", "sliding_window", {"time": "ts", "size": "5 fortnights", "slide": "1 minute", "aggregates": [{"fn": "count", "as": "n"}]}),
                      ("v", "output", {})], ["r.out->w.in", "w.out->v.in"])
    messages = [p.message for p in validate(ts_doc)]
    assert any("'size' must be a duration like '10 seconds'" in m for m in messages)
    assert any("already has a column 'window_end'" in m for m in messages)
    slide = windowed("sliding_window", size=5, slide=10)
    assert any(p.param == "slide" and "must not exceed 'size'" in p.message for p in validate(slide))


def test_a_change_that_cancels_all_state_on_the_spark_path(spark):
    """Insert then delete every row of a min/max window with changes forced onto Spark
    (regression: the grouped aggregate's Spark path met an empty state)."""
    from dbsp.spark import SparkRuntime

    plan = compile_plan(windowed("tumbling_window", size=10, lateness=100, aggregates=[{"fn": "max", "expr": "value", "as": "m"}]))
    rt = SparkRuntime(plan, spark, driver_max_rows=0, arrow_max_rows=0)
    ref = ReferenceRuntime(plan)
    for records in ([ins(sensor="a", ts=1, value=5)], [dele(sensor="a", ts=1, value=5)]):
        change = {"r": changes_from_records(records, plan.inputs["r"])}
        assert rt.step(change).outputs == ref.step(change).outputs
    assert ref.step({}).outputs["v"] == z()


@pytest.mark.parametrize("driver_max_rows", [10_000, 0])  # the driver path; the Spark path
def test_a_lateness_reaching_before_year_one_keeps_every_row(spark, driver_max_rows):
    """A lateness longer than the time since year 1 used to fail the tick with a bare
    OverflowError (the waterline fell outside the timestamps). The waterline stops at
    the first representable time: no row is late, and both backends agree."""
    from dbsp.spark import SparkRuntime

    doc = circuit({"r": schema("ts:timestamp", "value:double")},
                  [("w", "tumbling_window", {"time": "ts", "size": "1 hour", "lateness": "3000000 days",
                                             "aggregates": [{"fn": "sum", "expr": "value", "as": "total"}]}),
                   ("v", "output", {})], ["r.out->w.in", "w.out->v.in"])
    plan = compile_plan(doc)
    rt, ref = SparkRuntime(plan, spark, driver_max_rows=driver_max_rows, arrow_max_rows=driver_max_rows), ReferenceRuntime(plan)
    for records in ([ins(ts="2026-11-21T10:30:00", value=1.0)], [ins(ts="1000-01-01T00:00:00", value=2.0)]):
        change = {"r": changes_from_records(records, plan.inputs["r"])}
        got, want = rt.step(change), ref.step(change)
        assert got.outputs == want.outputs and got.stats["w"]["late_rows"] == 0
    assert got.outputs["v"] == z((dt.datetime(1000, 1, 1), dt.datetime(1000, 1, 1, 1), 2.0))
    assert got.frontier["w"]["waterline"] == want.frontier["w"]["waterline"]


@pytest.mark.parametrize("time_type,value", [("timestamp", "5000000 days"), ("bigint", 2**63)])
def test_a_duration_beyond_the_time_type_is_refused_at_validation(time_type, value):
    doc = circuit({"r": schema(f"ts:{time_type}", "value:bigint")},
                  [("w", "tumbling_window", {"time": "ts", "size": 10 if time_type == "bigint" else "1 hour",
                                             "lateness": value, "aggregates": [{"fn": "count", "as": "n"}]}),
                   ("v", "output", {})], ["r.out->w.in", "w.out->v.in"])
    problems = [p for p in validate(doc) if p.node == "w"]
    assert problems and problems[0].param == "lateness" and "too long" in problems[0].message, problems
