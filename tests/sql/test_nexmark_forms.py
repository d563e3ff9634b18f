"""The SQL forms the Nexmark queries use (issue #28): the ROW_NUMBER() column kept by a
top-k (q19), comma joins whose WHERE equality is the join key (q9), and aggregates
with FILTER (WHERE ...) (q15-q17). Each form's views equal DuckDB's at every tick of
generated change streams with deletes on the reference backend, and one case per new
node shape on Spark's all-Spark path."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbsp.sql import compile_sql
from tests.sql.oracle import check_against_duckdb
from tests.sql.test_forms import FIXED_TICKS
from tests.sql.test_oracle import TABLES, streams

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def _duckdb_order(order: str) -> str:
    """Our top_k's order spelled out for DuckDB: ASC NULLs first, DESC NULLs last, then
    the other columns of r ascending (NULLs first) as the tie-break (docs/sql.md)."""
    keys = [k.strip() for k in order.split(",")]
    named = [k.split()[0] for k in keys]
    spelled = [f"{k} NULLS LAST" if k.upper().endswith("DESC") else f"{k.split()[0]} ASC NULLS FIRST" for k in keys]
    return ", ".join(spelled + [f"{c} ASC NULLS FIRST" for c in ("a", "b", "s") if c not in named])


def _ranked(select: str, part: str, order: str, where: str) -> tuple[str, str]:
    inner = "SELECT *, ROW_NUMBER() OVER ({part}ORDER BY {order}) AS rn FROM r"
    ours = f"{select} FROM ({inner.format(part=part, order=order)}) AS q WHERE {where}"
    theirs = f"{select} FROM ({inner.format(part=part, order=_duckdb_order(order))}) AS q WHERE {where}"
    return ours, theirs


# ---- 1. the ROW_NUMBER() column is the view's (q19: SELECT * keeps rank_number) ---------
RANKED = [
    _ranked("SELECT *", "PARTITION BY a ", "b DESC", "rn <= 3"),
    _ranked("SELECT *", "", "b", "rn <= 2"),
    _ranked("SELECT rn, s, a", "PARTITION BY s ", "b DESC, a", "rn < 3"),
    _ranked("SELECT a, rn * 10 AS place", "PARTITION BY a ", "s", "rn <= 2"),
    _ranked("SELECT a, MAX(rn) AS deepest, COUNT(*) AS n", "PARTITION BY a ", "b", "rn <= 3 GROUP BY a"),
]


def test_select_star_over_a_row_number_keeps_its_column_where_sql_has_it():
    from dbsp import compile_plan

    ours, _ = RANKED[0]
    plan = compile_plan(compile_sql(TABLES + f"CREATE VIEW v AS {ours};"))
    assert plan.schemas["v"].names == ["a", "b", "s", "rn"]
    ours, _ = RANKED[2]
    assert compile_plan(compile_sql(TABLES + f"CREATE VIEW v AS {ours};")).schemas["v"].names == ["rn", "s", "a"]


def test_a_top_k_whose_row_number_is_not_selected_adds_no_rank():
    ours = "SELECT a, s FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY a ORDER BY b) AS rn FROM r) AS q WHERE rn <= 1"
    top = next(n for n in compile_sql(TABLES + f"CREATE VIEW v AS {ours};")["nodes"] if n["kind"] == "top_k")
    assert "rank" not in top["params"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(RANKED), streams())
def test_the_row_number_column_equals_duckdb(pair, ticks):
    ours, theirs = pair
    check_against_duckdb(TABLES + f"CREATE VIEW v AS {ours};", TABLES, {"v": theirs}, ticks)


def test_the_row_number_column_equals_duckdb_on_spark(spark):
    """top_k with its rank column as Spark jobs (a duplicate row takes two ranks)."""
    ours, theirs = RANKED[0]
    check_against_duckdb(TABLES + f"CREATE VIEW v AS {ours};", TABLES, {"v": theirs}, FIXED_TICKS, spark=spark, path="spark")


# ---- 2. a comma join's WHERE equality is its key (q9) -----------------------------------
COMMA = [
    "SELECT r.a, r.b, t.c FROM r, t WHERE r.a = t.a",
    "SELECT r.s, t.c FROM r, t WHERE t.a = r.a AND r.b <= t.c",
    "SELECT r.a, t.c FROM r, t WHERE r.b = t.c AND r.s IS NOT NULL OR r.a = t.a",  # an OR: no key, the product
    "SELECT x.a, y.b, t.c FROM r AS x, r AS y, t WHERE x.a = y.a AND y.b = t.c AND x.s <> y.s",
    "SELECT r.a, t.c, COUNT(*) AS n FROM r CROSS JOIN t WHERE r.a = t.a GROUP BY r.a, t.c",
    "SELECT r.a, t.c, u.a AS ua FROM r, t RIGHT JOIN t AS u ON t.c = u.c WHERE r.a = t.a",
]


def _joins(query: str) -> list[dict]:
    return [n["params"] for n in compile_sql(TABLES + f"CREATE VIEW v AS {query};")["nodes"] if n["kind"] == "join"]


def test_a_comma_join_on_a_where_equality_is_keyed_with_no_product():
    assert _joins(COMMA[0]) == [{"left_keys": ["a"], "right_keys": ["t_a"]}]
    assert _joins(COMMA[1]) == [{"left_keys": ["a"], "right_keys": ["t_a"]}]
    assert all(j["left_keys"] for j in _joins(COMMA[3]))  # both joins of three items keyed
    assert all(j["left_keys"] for j in _joins(COMMA[4]))
    assert _joins(COMMA[2]) == [{"left_keys": [], "right_keys": []}]  # an OR is no key: the product, filtered
    # before a RIGHT JOIN the WHERE keeps its equality (it also drops the padded rows)
    assert [j for j in _joins(COMMA[5]) if j["left_keys"]] == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(COMMA), streams())
def test_comma_joins_equal_duckdb(query, ticks):
    check_against_duckdb(TABLES + f"CREATE VIEW v AS {query};", TABLES, {"v": query}, ticks)


# ---- 3. aggregates with FILTER (WHERE ...) (q15-q17) ------------------------------------
FILTERED = [
    "SELECT a, COUNT(*) AS n, COUNT(*) FILTER (WHERE b > 0) AS pos, COUNT(*) FILTER (WHERE b <= 0 OR b IS NULL) AS rest FROM r GROUP BY a",
    "SELECT s, SUM(b) FILTER (WHERE a = 1) AS s1, MIN(b) FILTER (WHERE a <> 1) AS lo, MAX(a) FILTER (WHERE b > 1) AS hi FROM r GROUP BY s",
    "SELECT a, COUNT(DISTINCT s) FILTER (WHERE b >= 1) AS ds, AVG(b) FILTER (WHERE s IS NOT NULL) AS av FROM r GROUP BY a",
    "SELECT COUNT(*) FILTER (WHERE a IS NULL) AS nulls, SUM(b) FILTER (WHERE b > 100) AS none_such FROM r",
    "SELECT a, COUNT(b) FILTER (WHERE s = 'x') AS xs FROM r GROUP BY a HAVING COUNT(*) FILTER (WHERE b > 0) > 0",
]


def test_count_star_filter_is_a_count_of_a_case():
    document = compile_sql(TABLES + "CREATE VIEW v AS SELECT a, COUNT(*) FILTER (WHERE b > 0) AS pos FROM r GROUP BY a;")
    agg = next(n for n in document["nodes"] if n["kind"] == "aggregate")
    assert [(x["fn"], x["expr"]) for x in agg["params"]["aggregates"]] == [("count", "CASE WHEN b > 0 THEN 1 END")]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FILTERED), streams())
def test_filtered_aggregates_equal_duckdb(query, ticks):
    check_against_duckdb(TABLES + f"CREATE VIEW v AS {query};", TABLES, {"v": query}, ticks)


# ---- 4. timestamp ± INTERVAL (q7) -------------------------------------------------------
EVENTS = "CREATE TABLE e (k BIGINT, ts TIMESTAMP);\nCREATE TABLE w (k BIGINT, lo TIMESTAMP);\n"
MOMENT = st.sampled_from(["2024-01-01T00:00:00", "2024-01-01T00:00:05", "2024-01-01T00:00:10", "2024-01-01T00:01:00",
                          "2023-12-31T23:59:59", "2024-01-02T00:00:03", None])
SHIFTED = [
    "SELECT k, ts + INTERVAL '10' SECOND AS later, ts - INTERVAL '1' DAY AS before FROM e",
    "SELECT e.k, e.ts FROM e, w WHERE e.k = w.k AND e.ts - INTERVAL '5' SECOND >= w.lo",
    "SELECT e.k, e.ts, w.lo FROM e JOIN w ON e.k = w.k WHERE e.ts BETWEEN w.lo - INTERVAL '10' SECOND AND w.lo + INTERVAL '2' MINUTE",
    "SELECT k, MAX(ts) + INTERVAL '3' HOUR AS last_plus FROM e GROUP BY k",
]


@st.composite
def event_ticks(draw, ticks=3):
    rows = {"e": [], "w": []}
    out = []
    for _ in range(draw(st.integers(1, ticks))):
        tick = {}
        for name, col in (("e", "ts"), ("w", "lo")):
            inserts = draw(st.lists(st.fixed_dictionaries({"k": st.sampled_from([0, 1, None]), col: MOMENT}), max_size=4))
            deletes = [rows[name].pop(i) for i in sorted(set(draw(st.lists(st.integers(0, 8), max_size=2))), reverse=True) if i < len(rows[name])]
            rows[name].extend(inserts)
            tick[name] = [{"insert": r} for r in inserts] + [{"delete": r} for r in deletes]
        out.append(tick)
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SHIFTED), event_ticks())
def test_timestamp_plus_interval_equals_duckdb(query, ticks):
    check_against_duckdb(EVENTS + f"CREATE VIEW v AS {query};", EVENTS, {"v": query}, ticks)


def test_timestamp_plus_interval_equals_duckdb_on_spark(spark):
    ticks = [{"e": [{"insert": {"k": 1, "ts": "2024-01-01T00:00:05"}}, {"insert": {"k": 0, "ts": None}}, {"insert": {"k": 1, "ts": "2023-12-31T23:59:59"}}],
              "w": [{"insert": {"k": 1, "lo": "2024-01-01T00:00:00"}}]},
             {"e": [{"delete": {"k": 1, "ts": "2024-01-01T00:00:05"}}, {"insert": {"k": 1, "ts": "2024-01-01T00:01:00"}}], "w": []}]
    script = EVENTS + "".join(f"CREATE VIEW v{i} AS {q};\n" for i, q in enumerate(SHIFTED[:3]))
    check_against_duckdb(script, EVENTS, {f"v{i}": q for i, q in enumerate(SHIFTED[:3])}, ticks, spark=spark, path="spark")


def test_an_interval_of_months_is_refused_with_its_place():
    from dbsp.sql.errors import SqlError

    with pytest.raises(SqlError, match=r"3:\d+.*INTERVAL '1' MONTH: a whole number of"):
        compile_sql(EVENTS + "CREATE VIEW v AS SELECT k, ts + INTERVAL '1' MONTH AS t FROM e;")


# ---- 5. GROUP BY TUMBLE(ts, INTERVAL ...) as Feldera's Nexmark writes it (q7 q8 q12) -----
_BUCKET = "time_bucket(INTERVAL {n} SECOND, ts, TIMESTAMP '1970-01-01')"
GROUP_WINDOWS = [
    ("SELECT k, COUNT(*) AS n, TUMBLE_START(ts, INTERVAL '10' SECOND) AS ws, TUMBLE_END(e.ts, INTERVAL '10' SECOND) AS we "
     "FROM e GROUP BY k, TUMBLE(e.ts, INTERVAL '10' SECOND)",
     f"SELECT k, COUNT(*), {_BUCKET.format(n=10)} AS ws, ws + INTERVAL 10 SECOND FROM e WHERE ts IS NOT NULL GROUP BY k, ws"),
    ("SELECT MAX(x.k) AS top, TUMBLE_END(x.ts, INTERVAL '1' MINUTE) AS we FROM e AS x GROUP BY TUMBLE(x.ts, INTERVAL '1' MINUTE)",
     f"SELECT MAX(k), {_BUCKET.format(n=60)} + INTERVAL 60 SECOND AS we FROM e WHERE ts IS NOT NULL GROUP BY we"),
]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(GROUP_WINDOWS), event_ticks())
def test_group_by_tumble_equals_duckdb(pair, ticks):
    """(a row whose time is NULL is in no window, as with the TUMBLE table function)"""
    ours, theirs = pair
    check_against_duckdb(EVENTS + f"CREATE VIEW v AS {ours};", EVENTS, {"v": theirs}, ticks)


def test_group_by_tumble_is_the_tumbling_window_and_its_misuses_are_refused_with_their_place():
    from dbsp.sql.errors import SqlError

    nodes = compile_sql(EVENTS + f"CREATE VIEW v AS {GROUP_WINDOWS[0][0]};")["nodes"]
    assert [n["params"]["size"] for n in nodes if n["kind"] == "tumbling_window"] == ["10 seconds"]
    with pytest.raises(SqlError, match=r"3:\d+.*TUMBLE_START must name the GROUP BY's TUMBLE column and interval"):
        compile_sql(EVENTS + "CREATE VIEW v AS SELECT TUMBLE_START(ts, INTERVAL '5' SECOND) AS ws, COUNT(*) AS n FROM e GROUP BY TUMBLE(ts, INTERVAL '10' SECOND);")
    with pytest.raises(SqlError, match=r"3:\d+.*GROUP BY TUMBLE\(...\) over anything but one named table"):
        compile_sql(EVENTS + "CREATE VIEW v AS SELECT COUNT(*) AS n FROM e JOIN w ON e.k = w.k GROUP BY TUMBLE(ts, INTERVAL '10' SECOND);")
