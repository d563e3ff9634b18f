"""Changes above every threshold at the runtime's REAL defaults (driver_max_rows
10,000, arrow_max_rows 1,000,000; the driver state budget in bytes, set to 16 MB here
so that 2M rows spill as they would past a real budget), against DuckDB
(tests/dbsp/sql_oracle.py). Issue 11's reproduction: `group_by g: min(v), max(v),
count()` over 2,000,001 rows (the state spills to a Spark level), then a tick deleting
the 10,001 smallest v (above driver_max_rows: the touched groups are recomputed on
Spark over the level and the driver part together) kept every group's deleted minimum.
A third tick deletes the next 5,000 (past vector_min_rows, within driver_max_rows): the
touched groups are recomputed column-wise by Arrow from rows fetched off the level.
The same ticks go through a filter (2,000,001 rows: on Spark, above arrow_max_rows)
and a count/sum/count_distinct aggregate after it.

Slow by design (minutes on a loaded 2-core machine, most of it building and spilling
2M rows): the one test at real sizes; every other test reaches these paths with the
thresholds set low."""
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from dbsp import ZSet, compile_plan
from tests.dbsp.helpers import circuit, schema
from tests.dbsp.sql_oracle import Oracle, assert_matches

ROWS = 2_000_001
DELETED = 10_001
NEXT = 5_000


def document():
    return circuit(
        {"t": schema("g:bigint", "v:bigint")},
        [("extremes", "aggregate", {"group_by": ["g"], "aggregates": [
            {"fn": "min", "expr": "v", "as": "lo"}, {"fn": "max", "expr": "v", "as": "hi"}, {"fn": "count", "as": "n"}]}),
         ("thirds", "filter", {"predicate": "v % 3 = 0"}),
         ("per_g", "aggregate", {"group_by": ["g"], "aggregates": [
             {"fn": "count", "as": "n"}, {"fn": "sum", "expr": "v", "as": "total"},
             {"fn": "count_distinct", "expr": "v % 1000", "as": "tails"}]}),
         ("by_g", "output", {}), ("thirds_by_g", "output", {})],
        ["t.out->extremes.in", "extremes.out->by_g.in", "t.out->thirds.in", "thirds.out->per_g.in",
         "per_g.out->thirds_by_g.in"])


def table(g, v, w):
    return pa.table({"g": pa.array(g, pa.int64()), "v": pa.array(v, pa.int64()), "w": pa.array(w, pa.int64())})


@pytest.mark.timeout(900)  # (see the docstring: the one test at real sizes)
def test_two_million_rows_then_deleting_the_smallest_at_real_defaults():
    from dbsp.spark import SparkRuntime, get_session

    doc = document()
    plan = compile_plan(doc)
    rt = SparkRuntime(plan, get_session(), state_bytes=16 * 2**20)  # the real defaults, a small byte budget
    assert (rt.driver_max_rows, rt.arrow_max_rows, rt.recent_max) == (10_000, 1_000_000, None)
    oracle = Oracle(doc)
    v = pa.array(range(ROWS), pa.int64())
    g = pc.bit_wise_and(pc.multiply(v, 7), 127)  # 128 groups, each holding small and large v
    rows = table(g, v, [1] * ROWS)
    ticks = [
        ({"t": rows.rename_columns(["g", "v", "__w"])}, rows),
        ({"t": table(g[:DELETED], v[:DELETED], [-1] * DELETED).rename_columns(["g", "v", "__w"])}, rows.slice(DELETED)),
        # 5,000 more of the smallest (between vector_min_rows and driver_max_rows): the
        # touched groups' old and new rows computed column-wise, their state on a Spark level
        ({"t": table(g[DELETED:DELETED + NEXT], v[DELETED:DELETED + NEXT], [-1] * NEXT).rename_columns(["g", "v", "__w"])},
         rows.slice(DELETED + NEXT)),
    ]
    totals = {view: ZSet() for view in plan.views}
    for t, (changes, integral) in enumerate(ticks):
        result = rt.step(changes)
        out = result.outputs
        if t == 2:
            assert result.stats["extremes"]["path"] == "arrow", result.stats["extremes"]
        totals = {view: totals[view] + out[view] for view in plan.views}
        oracle.tables["t"] = integral
        assert assert_matches(oracle, totals, f"tick {t}") == 2
    assert rt.executors["extremes"].inputs.levels  # the state did spill to Spark
    lows = sorted(row[1] for row, _ in totals["by_g"])
    assert lows[0] >= DELETED + NEXT  # no deleted minimum left: what the issue saw
