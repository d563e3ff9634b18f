"""Generated SQL views and change streams: the compiled circuit (reference backend, and
a smaller sample on Spark) equals DuckDB running the same SELECT over the tables after
every tick."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.sql.oracle import SPARK_PATHS, check_against_duckdb

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TABLES = """
CREATE TABLE r (a BIGINT, b BIGINT, s VARCHAR);
CREATE TABLE t (a BIGINT, c BIGINT);
"""

A = st.sampled_from([0, 1, 2, None])
B = st.sampled_from([-1, 0, 1, 2, 3, None])
S = st.sampled_from(["x", "y", "z", None])
R_ROW = st.fixed_dictionaries({"a": A, "b": B, "s": S})
T_ROW = st.fixed_dictionaries({"a": A, "c": st.sampled_from([0, 1, 2, None])})

PREDICATES = ["b > 1", "a IS NULL", "s = 'x' OR b < 0", "NOT (a = 1)", "a IN (1, 2)", "b BETWEEN 0 AND 2",
              "COALESCE(s, 'none') <> 'y'", "CASE WHEN a = 0 THEN b > 0 ELSE s IS NOT NULL END", "b + a >= 2"]
AGGREGATES = ["COUNT(*) AS n", "COUNT(b) AS nb", "SUM(b) AS total", "MIN(b) AS lo", "MAX(s) AS hi",
              "COUNT(DISTINCT b) AS kinds", "AVG(b) AS mean", "SUM(a * b) AS weighted"]


KINDS = ["filter", "group", "global", "join", "setop", "distinct", "subquery", "topk", "over", "nested", "composed", "asof"]
FRAMES = ["", " ROWS BETWEEN 2 PRECEDING AND CURRENT ROW", " ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING", " ROWS UNBOUNDED PRECEDING",
          " ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING", " ROWS BETWEEN 3 PRECEDING AND 1 PRECEDING",
          " RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING", " RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"]
OVER_CALLS = ["SUM(b)", "COUNT(*)", "AVG(b)", "MIN(s)", "MAX(b)", "COUNT(s)", "SUM(a * b)"]
COMPOSED = [
    "WITH x AS (SELECT a, b FROM r WHERE b IS NOT NULL) SELECT x.a, COUNT(*) AS n, SUM(t.c) AS sc FROM x JOIN t ON x.a = t.a GROUP BY x.a",
    "SELECT q.a, q.n FROM (SELECT a, COUNT(*) AS n FROM r GROUP BY a) AS q WHERE q.n > 1 UNION SELECT a, c FROM t",
    "SELECT r.a, t.c, u.b FROM r RIGHT JOIN t ON r.a = t.a LEFT JOIN r AS u ON t.c = u.b",
    "SELECT t.a, COUNT(r.b) AS n, COUNT(*) AS m FROM r FULL JOIN t ON r.a = t.a GROUP BY t.a",
    "SELECT DISTINCT r.s FROM r WHERE r.a IN (SELECT a FROM t) AND NOT EXISTS (SELECT 1 FROM t WHERE t.c = r.b)",
    "SELECT x.a, y.b AS yb, x.s FROM r x JOIN r y ON x.a = y.b WHERE x.s IS NOT NULL OR y.s = 'x'",
    "SELECT a FROM r EXCEPT SELECT a FROM t",
    "SELECT a, c FROM t INTERSECT SELECT a, b FROM r WHERE s IS NULL",
    "SELECT j.ra, j.c FROM (SELECT r.a AS ra, t.c FROM r JOIN t ON r.a = t.a) AS j WHERE j.c > 0 EXCEPT SELECT a, b FROM r",
    "SELECT s, MAX(b) - MIN(b) AS spread, AVG(b) AS mean FROM r WHERE a IN (SELECT a FROM t WHERE c IS NOT NULL) GROUP BY s HAVING COUNT(b) > 0",
    "SELECT g.a, g.n FROM (SELECT a, COUNT(DISTINCT s) AS n FROM r GROUP BY a) AS g "
    "WHERE EXISTS (SELECT 1 FROM t WHERE t.a = g.a AND t.c > 0)",
    "SELECT COUNT(*) AS n, SUM(b) AS total, MIN(s) AS lo FROM r WHERE NOT EXISTS (SELECT 1 FROM t WHERE t.a = r.a)",
]


#: match condition as written (ours) -> the left time's comparison with the right's (DuckDB's ON)
ASOF_MATCHES = {"r.b >= t.c": ">=", "r.b > t.c": ">", "r.b <= t.c": "<=", "r.b < t.c": "<", "t.c <= r.b": ">=",
                "t.c > r.b": "<"}


@st.composite
def asof_queries(draw):
    """`r [LEFT] ASOF JOIN t MATCH_CONDITION ... ON r.a = t.a` against DuckDB's
    `r ASOF [LEFT] JOIN t ON r.a = t.a AND r.b >= t.c`. t's rows are (a, c): a tie in
    time on the right is two equal rows, so DuckDB's pick among ties is ours."""
    cond = draw(st.sampled_from(sorted(ASOF_MATCHES)))
    left = draw(st.booleans())
    wrapped = f"({cond})" if draw(st.booleans()) else cond
    ours_join = f"{'LEFT ' if left else ''}ASOF JOIN t MATCH_CONDITION {wrapped} ON r.a = t.a"
    theirs_join = f"ASOF {'LEFT ' if left else ''}JOIN t ON r.a = t.a AND r.b {ASOF_MATCHES[cond]} t.c"
    shape = draw(st.sampled_from(["plain", "where", "grouped", "subquery"]))
    if shape == "plain":
        q = "SELECT r.a AS ra, r.b, r.s, t.a AS ta, t.c FROM r {join}"
    elif shape == "where":
        q = "SELECT r.s, t.c, r.b - t.c AS lag FROM r {join} WHERE r.s IS NOT NULL OR t.c IS NULL"
    elif shape == "grouped":
        q = "SELECT r.a, COUNT(*) AS n, COUNT(t.c) AS matched, MAX(t.c) AS latest FROM r {join} GROUP BY r.a"
    else:  # the left side a subquery, as Nexmark q13's
        q = "SELECT q.a, q.b, t.c FROM (SELECT a, b * 2 AS b, s FROM r WHERE s <> 'z') AS q {join}"
        ours_join, theirs_join = (j.replace("r.b", "q.b").replace("r.a", "q.a") for j in (ours_join, theirs_join))
    return q.format(join=ours_join), q.format(join=theirs_join)


@st.composite
def queries(draw, kinds=tuple(KINDS)):
    """(our dialect's SELECT, DuckDB's SELECT): the same query, DuckDB's with the
    tie-break our top-k defines spelled out."""
    kind = draw(st.sampled_from(kinds))
    where = draw(st.sampled_from([""] + [f" WHERE {p}" for p in PREDICATES]))
    if kind == "filter":
        extra = draw(st.sampled_from(["b / 2 AS half", "b % 2 AS parity", "UPPER(s) || '!' AS shout", "LENGTH(s) AS len",
                                      "NULLIF(a, 1) AS not_one", "GREATEST(a, b) AS hi", "a * b - 1 AS product",
                                      "CAST(b AS DOUBLE) / 4 AS quarter", "s LIKE 'x%' AS starts_x"]))
        q = f"SELECT a, b + 1 AS b1, s, CASE WHEN b IS NULL THEN 'none' ELSE s END AS label, {extra} FROM r{where}"
    elif kind == "group":
        keys = draw(st.sampled_from([["a"], ["s"], ["a", "s"], ["b % 2"], ["s", "COALESCE(a, -1) + 1"]]))
        aggs = draw(st.lists(st.sampled_from(AGGREGATES), min_size=1, max_size=3, unique=True))
        having = draw(st.sampled_from(["", " HAVING COUNT(*) > 1", " HAVING SUM(b) >= 1"]))
        selected = [k if k in ("a", "s") else f"{k} AS key_{i}" for i, k in enumerate(keys)]
        q = f"SELECT {', '.join(selected)}, {', '.join(aggs)} FROM r{where} GROUP BY {', '.join(keys)}{having}"
    elif kind == "global":
        aggs = draw(st.lists(st.sampled_from(AGGREGATES), min_size=1, max_size=3, unique=True))
        q = f"SELECT {', '.join(aggs)} FROM r{where}"
    elif kind == "join":
        join = draw(st.sampled_from(["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN"]))
        on = "" if join == "CROSS JOIN" else " ON " + draw(st.sampled_from(["r.a = t.a", "r.a = t.a AND r.b = t.c", "t.c = r.b"]))
        q = f"SELECT r.a AS ra, r.b, r.s, t.a AS ta, t.c FROM r {join} t{on}{where.replace('a ', 'r.a ').replace('(a', '(r.a').replace('b ', 'r.b ') if where else ''}"
    elif kind == "setop":
        op = draw(st.sampled_from(["UNION", "UNION ALL", "INTERSECT", "EXCEPT"]))
        q = f"SELECT a, b FROM r{where} {op} SELECT a, c FROM t"
    elif kind == "distinct":
        q = f"SELECT DISTINCT a, s FROM r{where}"
    elif kind == "subquery":
        sub = draw(st.sampled_from(["a IN (SELECT a FROM t WHERE c > 0)", "EXISTS (SELECT 1 FROM t WHERE t.a = r.a)",
                                    "NOT EXISTS (SELECT 1 FROM t WHERE t.a = r.a AND t.c = r.b)",
                                    "EXISTS (SELECT 1 FROM t WHERE t.c = r.b AND t.a > 0)"]))
        q = f"SELECT a, b, s FROM r WHERE {sub}" + (f" AND ({where[7:]})" if where else "")
    elif kind == "topk":
        k = draw(st.integers(1, 3))
        desc = draw(st.booleans())
        part = draw(st.sampled_from(["PARTITION BY a ", "PARTITION BY s ", ""]))
        order = "b DESC" if desc else "b"
        # our top_k breaks ties by the other columns ascending (NULLs first): say so to DuckDB
        others = [c for c in ("a", "b", "s") if c != "b"]
        full = ("b DESC NULLS LAST" if desc else "b ASC NULLS FIRST") + "".join(f", {c} ASC NULLS FIRST" for c in others)
        ours = f"SELECT a, b, s FROM (SELECT *, ROW_NUMBER() OVER ({part}ORDER BY {order}) AS rn FROM r) AS q WHERE rn <= {k}"
        theirs = f"SELECT a, b, s FROM (SELECT *, ROW_NUMBER() OVER ({part}ORDER BY {full}) AS rn FROM r) AS q WHERE rn <= {k}"
        return ours, theirs
    elif kind == "over":
        # AGG(x) OVER (...): our ROWS frames order ties by the other columns ascending (NULLs first): say so to DuckDB
        part = draw(st.sampled_from(["PARTITION BY a ", "PARTITION BY s ", "PARTITION BY a, s ", ""]))
        order = draw(st.sampled_from([[("b", False)], [("b", True)], [("a", False), ("b", True)], []]))
        frame = draw(st.sampled_from(FRAMES if order else ["", FRAMES[-1]]))
        ordered = {c for c, _ in order}
        spelled = [f"{c} {'DESC NULLS LAST' if d else 'ASC NULLS FIRST'}" for c, d in order]
        if frame.startswith(" ROWS"):
            spelled += [f"{c} ASC NULLS FIRST" for c in ("a", "b", "s") if c not in ordered]
        calls = draw(st.lists(st.sampled_from(OVER_CALLS), min_size=1, max_size=2, unique=True))
        ours_order = ("ORDER BY " + ", ".join(c + (" DESC" if d else "") for c, d in order)) if order else ""
        theirs_order = ("ORDER BY " + ", ".join(spelled)) if spelled else ""
        ours = ", ".join(f"{c} OVER ({part}{ours_order}{frame}) AS w{i}" for i, c in enumerate(calls))
        theirs = ", ".join(f"{c} OVER ({part}{theirs_order}{frame}) AS w{i}" for i, c in enumerate(calls))
        shape = draw(st.sampled_from(["plain", "expression", "filtered"]))
        if shape == "expression":  # a window aggregate inside an expression, and unnamed
            number = draw(st.sampled_from([c for c in OVER_CALLS if "(s)" not in c]))
            ours += f", b - {number} OVER ({part}{ours_order}{frame})"
            theirs += f", b - {number} OVER ({part}{theirs_order}{frame})"
        inner = "r" if shape != "filtered" else "(SELECT * FROM r WHERE b IS NOT NULL OR s = 'x') AS f"
        return f"SELECT a, b, s, {ours} FROM {inner}{where if shape == 'plain' else ''}", f"SELECT a, b, s, {theirs} FROM {inner}{where if shape == 'plain' else ''}"
    elif kind == "asof":
        return draw(asof_queries())
    elif kind == "composed":
        q = draw(st.sampled_from(COMPOSED))
    else:
        q = ("SELECT g.a, g.total, t.c FROM (SELECT a, SUM(b) AS total FROM r GROUP BY a) AS g "
             "JOIN t ON g.a = t.a" + draw(st.sampled_from(["", " WHERE g.total > 0", " WHERE t.c IS NULL OR g.total IS NULL"])))
    return q, q


@st.composite
def streams(draw, ticks=4):
    r_rows, t_rows, out = [], [], []
    for _ in range(draw(st.integers(1, ticks))):
        tick = {}
        for name, rows, gen in (("r", r_rows, R_ROW), ("t", t_rows, T_ROW)):
            inserts = draw(st.lists(gen, max_size=4))
            deletes = []
            if rows:
                for i in sorted(set(draw(st.lists(st.integers(0, len(rows) - 1), max_size=2))), reverse=True):
                    deletes.append(rows.pop(i))
            rows.extend(inserts)
            records = [{"insert": row} for row in inserts] + [{"delete": row} for row in deletes]
            if records:
                tick[name] = records
        out.append(tick)
    return out


def _script(query: str) -> str:
    return TABLES + f"CREATE VIEW v AS {query};"


@pytest.mark.parametrize("kind", KINDS)
def test_generated_views_equal_duckdb_on_the_reference_backend(kind):
    @settings(max_examples=80 if kind == "composed" else 40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(queries(kinds=(kind,)), streams())
    def check(query, ticks):
        ours, theirs = query
        check_against_duckdb(_script(ours), TABLES, {"v": theirs}, ticks)

    check()


RECURSIVE = """
CREATE TABLE edges (src BIGINT, dst BIGINT);
CREATE VIEW reach AS
WITH RECURSIVE paths (src, dst) AS (
    SELECT src, dst FROM edges
    UNION
    SELECT p.src, e.dst FROM paths p JOIN edges e ON p.dst = e.src
)
SELECT src, dst FROM paths;
"""
EDGE = st.fixed_dictionaries({"src": st.integers(0, 4), "dst": st.integers(0, 4)})


@st.composite
def edge_streams(draw):
    rows, out = [], []
    for _ in range(draw(st.integers(1, 4))):
        inserts = draw(st.lists(EDGE, max_size=4))
        deletes = [rows.pop(i) for i in sorted(set(draw(st.lists(st.integers(0, max(len(rows) - 1, 0)), max_size=2))), reverse=True) if rows and i < len(rows)]
        rows.extend(inserts)
        out.append({"edges": [{"insert": r} for r in inserts] + [{"delete": r} for r in deletes]})
    return out


@settings(max_examples=25, deadline=None)
@given(edge_streams())
def test_recursive_view_equals_duckdb(ticks):
    check_against_duckdb(RECURSIVE, "CREATE TABLE edges (src BIGINT, dst BIGINT);", {
        "reach": "WITH RECURSIVE paths (src, dst) AS (SELECT src, dst FROM edges UNION "
                 "SELECT p.src, e.dst FROM paths p JOIN edges e ON p.dst = e.src) SELECT src, dst FROM paths"}, ticks)


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(queries(), streams(ticks=3), st.sampled_from(sorted(SPARK_PATHS)))
def test_generated_views_equal_duckdb_on_spark(spark, query, ticks, path):
    """A smaller sample with every tick also run on Spark (local mode), on one of its
    execution paths (driver rows, Arrow, all-Spark jobs). Up to a minute: 12 generated
    views, each a few ticks through Spark jobs, is the point."""
    ours, theirs = query
    check_against_duckdb(_script(ours), TABLES, {"v": theirs}, ticks, spark=spark, path=path)


EQUAL_TIMES = [  # a right time equal to the left's, then a nearer one, then both deleted: >= and > differ at once
    {"r": [{"insert": {"a": 0, "b": 1, "s": "x"}}, {"insert": {"a": 1, "b": 2, "s": None}}],
     "t": [{"insert": {"a": 0, "c": 1}}, {"insert": {"a": 0, "c": 0}}, {"insert": {"a": 1, "c": 2}}]},
    {"t": [{"delete": {"a": 0, "c": 1}}, {"insert": {"a": 1, "c": 1}}]},
    {"r": [{"delete": {"a": 1, "b": 2, "s": None}}], "t": [{"delete": {"a": 0, "c": 0}}]},
]
PLAIN = "SELECT r.a AS ra, r.b, r.s, t.a AS ta, t.c FROM r {}"


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(asof_queries(), streams(ticks=3))
@example((PLAIN.format("LEFT ASOF JOIN t MATCH_CONDITION (r.b >= t.c) ON r.a = t.a"),
          PLAIN.format("ASOF LEFT JOIN t ON r.a = t.a AND r.b >= t.c")), EQUAL_TIMES)
@example((PLAIN.format("ASOF JOIN t MATCH_CONDITION t.c > r.b ON r.a = t.a"),
          PLAIN.format("ASOF JOIN t ON r.a = t.a AND r.b < t.c")), EQUAL_TIMES)
def test_asof_views_equal_duckdb_on_spark_with_every_threshold_at_0(spark, query, ticks):
    """ASOF joins with every tick's change as Spark jobs (tests.dbsp.helpers.ALL_SPARK:
    the asof executor's Spark path, never the driver's), deletes on both sides."""
    from tests.dbsp.helpers import ALL_SPARK

    ours, theirs = query
    check_against_duckdb(_script(ours), TABLES, {"v": theirs}, ticks, spark=spark, path=ALL_SPARK)


EVENTS = """
CREATE TABLE events (k VARCHAR, t BIGINT, v BIGINT);
"""
EVENT = st.fixed_dictionaries({"k": st.sampled_from(["a", "b", None]), "t": st.one_of(st.integers(0, 40), st.none()),
                               "v": st.sampled_from([1, 2, 5, None])})


@st.composite
def event_streams(draw):
    """Times in any order across ticks: without LATENESS no row is ever late."""
    rows, out = [], []
    for _ in range(draw(st.integers(1, 4))):
        inserts = draw(st.lists(EVENT, max_size=5))
        deletes = [rows.pop(i) for i in sorted(set(draw(st.lists(st.integers(0, 30), max_size=2))), reverse=True) if i < len(rows)]
        rows.extend(inserts)
        out.append({"events": [{"insert": r} for r in inserts] + [{"delete": r} for r in deletes]})
    return out


WINDOWS = {
    "TUMBLE": ("SELECT k, window_start, window_end, COUNT(*) AS n, SUM(v) AS total, MAX(v) AS top "
               "FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(t), 10)) GROUP BY k, window_start, window_end",
               "SELECT k, CAST(floor(t / 10) AS BIGINT) * 10 AS ws, CAST(floor(t / 10) AS BIGINT) * 10 + 10 AS we, "
               "COUNT(*), SUM(v), MAX(v) FROM events WHERE t IS NOT NULL GROUP BY k, ws, we"),
    "HOP": ("SELECT window_start, window_end, COUNT(v) AS n, MIN(k) AS first_key "
            "FROM TABLE(HOP(TABLE events, DESCRIPTOR(t), 4, 10)) WHERE v > 1 GROUP BY window_start, window_end",
            "SELECT s, s + 10, COUNT(v), MIN(k) FROM events CROSS JOIN (SELECT i * 4 AS s FROM range(-5, 15) AS g(i)) AS w "
            "WHERE t IS NOT NULL AND s <= t AND t < s + 10 AND v > 1 GROUP BY s"),
}


@pytest.mark.parametrize("fn", sorted(WINDOWS))
def test_window_views_equal_duckdb(fn):
    ours, theirs = WINDOWS[fn]

    @settings(max_examples=30, deadline=None)
    @given(event_streams())
    def check(ticks):
        check_against_duckdb(EVENTS + f"CREATE VIEW w AS {ours};", EVENTS, {"w": theirs}, ticks)

    check()


TAGGED = "CREATE TABLE orders (id BIGINT NOT NULL, tags VARCHAR[], note VARCHAR);\n"
ORDER = st.fixed_dictionaries({"id": st.integers(0, 5), "tags": st.one_of(st.none(), st.lists(st.sampled_from(["a", "b", None]), max_size=3)),
                               "note": st.sampled_from(["x  y", " x", "y", "", None])})


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(ORDER, max_size=4), min_size=1, max_size=3))
def test_unnest_views_equal_duckdb(inserts):
    ticks = [{"orders": [{"insert": r} for r in tick]} for tick in inserts]
    script = TAGGED.replace("VARCHAR[]", "ARRAY<VARCHAR>") + """
        CREATE VIEW tag_counts AS SELECT u.tag, COUNT(*) AS n, COUNT(DISTINCT o.id) AS ids
            FROM orders o CROSS JOIN UNNEST(o.tags) AS u(tag) GROUP BY u.tag;
        CREATE VIEW words AS SELECT o.id, o.note, w.word FROM orders o CROSS JOIN UNNEST(SPLIT(o.note, ' ')) AS w(word)
            WHERE w.word <> '';
    """
    check_against_duckdb(script, TAGGED, {
        "tag_counts": "SELECT u.tag, COUNT(*), COUNT(DISTINCT o.id) FROM orders o CROSS JOIN UNNEST(o.tags) AS u(tag) GROUP BY u.tag",
        "words": "SELECT o.id, o.note, w.word FROM orders o CROSS JOIN UNNEST(string_split(o.note, ' ')) AS w(word) WHERE w.word <> ''",
    }, ticks)
