"""SQL as people paste it (issue #28): unnamed expressions, SELECT without FROM, GROUP
BY repeats / positions / aliases, repeated output names, aggregates over DISTINCT,
USING / NATURAL joins and NOT IN. Each form's views equal DuckDB's at every tick of
generated change streams with deletes, on the reference backend and on every Spark
path; Spark's own names for unnamed expressions are read from a Spark session."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbsp.sql import compile_sql
from tests.sql.oracle import SPARK_PATHS, check_against_duckdb
from tests.sql.test_oracle import TABLES, streams

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


# ---- the PyDBSP README's four views, as written ----------------------------------------
README_TABLE = "CREATE TABLE transactions (from_account INT, to_account INT, amount INT);\n"
README_VIEWS = """create view credits as select to_account as account, sum(amount) as credits from transactions group by to_account;
create view debits as select from_account as account, sum(amount) as debits from transactions group by from_account;
create view balance as select credits.account, credits - debits as balance from credits inner join debits on credits.account = debits.account;
create materialized view total as select sum(balance) from balance;
"""
TRANSFER = st.fixed_dictionaries({"from_account": st.integers(0, 3), "to_account": st.integers(0, 3), "amount": st.sampled_from([1, 5, 20])})


@st.composite
def transfers(draw, ticks=4):
    rows, out = [], []
    for _ in range(draw(st.integers(1, ticks))):
        inserts = draw(st.lists(TRANSFER, max_size=4))
        deletes = [rows.pop(i) for i in sorted(set(draw(st.lists(st.integers(0, 20), max_size=2))), reverse=True) if i < len(rows)]
        rows.extend(inserts)
        out.append({"transactions": [{"insert": r} for r in inserts] + [{"delete": r} for r in deletes]})
    return out


def _readme_check(ticks, spark=None, path="driver"):
    # DuckDB has no MATERIALIZED VIEW: the same views as plain ones, read back by name
    duck = README_TABLE + README_VIEWS.replace("create materialized view", "create view")
    check_against_duckdb(README_TABLE + README_VIEWS, duck, {v: f"SELECT * FROM {v}" for v in ("credits", "debits", "balance", "total")},
                         ticks, spark=spark, path=path)


def test_the_pydbsp_readme_views_compile_as_written_and_name_the_sum_as_spark():
    document = compile_sql(README_TABLE + README_VIEWS)
    total = next(n for n in document["nodes"] if n["id"] == "total")
    assert total["params"]["sql_names"] == {"sum_balance": "sum(balance)"}


@settings(max_examples=15, deadline=None)
@given(transfers())
def test_the_pydbsp_readme_views_equal_duckdb(ticks):
    _readme_check(ticks)


@pytest.mark.parametrize("path", sorted(SPARK_PATHS))
def test_the_pydbsp_readme_views_equal_duckdb_on_spark(spark, path):
    ticks = [{"transactions": [{"insert": {"from_account": 1, "to_account": 2, "amount": 50}},
                               {"insert": {"from_account": 2, "to_account": 1, "amount": 5}},
                               {"insert": {"from_account": 2, "to_account": 3, "amount": 30}}]},
             {"transactions": [{"delete": {"from_account": 1, "to_account": 2, "amount": 50}},
                               {"insert": {"from_account": 3, "to_account": 1, "amount": 20}}]}]
    _readme_check(ticks, spark, path)


# ---- unnamed expressions: Spark's names --------------------------------------------------
SPARK_NAMED = ["sum(b)", "SUM(B)", "count(*)", "count(distinct b)", "max(b) - min(b)", "a + 1", "(a + 1) * 2", "a + 1 * 2",
               "upper(s)", "UPPER(s) || '!'", "'x'", "1", "1.5", "true", "null", "cast(b as double)", "cast(b as double) / 4",
               "a = 1", "a is null", "a is not null", "not (a = 1)", "a in (1, 2)", "b between 0 and 2", "coalesce(s, 'none')",
               "case when a = 0 then b else 1 end", "s like 'x%'", "-a", "a % 2", "r.a + r.b", "nullif(a, 1)", "a <> 1",
               "sum(distinct b)", "date '2020-01-01'", "a >= 1 or b < 0"]


def test_unnamed_expressions_are_named_as_spark_names_them(spark):
    """Our names against a Spark session's own (analysis only: no job runs)."""
    import sqlglot

    from dbsp.sql.naming import spark_name

    spark.createDataFrame([], "a bigint, b bigint, s string").createOrReplaceTempView("r")
    plain = [t for t in SPARK_NAMED if "(" not in t or not any(f in t.lower() for f in ("sum(", "count(", "max("))]
    aggregated = [t for t in SPARK_NAMED if t not in plain]
    for texts in (plain, aggregated):  # one analysis each (an aggregate query cannot mix in row expressions)
        select = f"SELECT {', '.join(texts)} FROM r"
        ours = [spark_name(e) for e in sqlglot.parse_one(select).expressions]
        assert ours == spark.sql(select).columns
    windows = [f"{call} OVER ({over})" for call, over in [
        ("avg(b)", "PARTITION BY a ORDER BY b ROWS BETWEEN 10 PRECEDING AND CURRENT ROW"), ("sum(b)", "ORDER BY b DESC"),
        ("count(*)", ""), ("min(s)", "PARTITION BY a ORDER BY b RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING"),
        ("max(b)", "PARTITION BY s, a ORDER BY a, b desc ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING"),
        ("SUM(r.b)", "ORDER BY r.a ROWS UNBOUNDED PRECEDING")]]
    select = f"SELECT {', '.join(windows)} FROM r"
    assert [spark_name(e) for e in sqlglot.parse_one(select).expressions] == spark.sql(select).columns


def test_unnamed_expressions_name_the_engine_columns_and_the_output_keeps_sparks_names():
    document = compile_sql(TABLES + "CREATE VIEW v AS SELECT a, a + 1, SUM(b), COUNT(*), a FROM r GROUP BY a;")
    out = next(n for n in document["nodes"] if n["id"] == "v")
    assert out["params"]["sql_names"] == {"a_1": "(a + 1)", "sum_b": "sum(b)", "count_1": "count(1)"}
    from dbsp import compile_plan

    assert compile_plan(document).schemas["v"].names == ["a", "a_1", "sum_b", "count_1", "a_2"]


def test_an_unnamed_window_aggregate_keeps_sparks_name():
    document = compile_sql(TABLES + "CREATE VIEW v AS SELECT a, AVG(b) OVER (PARTITION BY a ORDER BY b ROWS 2 PRECEDING) FROM r;")
    out = next(n for n in document["nodes"] if n["id"] == "v")
    [(column, name)] = out["params"]["sql_names"].items()
    assert name == "avg(b) OVER (PARTITION BY a ORDER BY b ASC NULLS FIRST ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)"
    assert column.startswith("avg_b_over_partition_by_a")


# ---- generated views using the forms, against DuckDB ------------------------------------
FORMS = {
    "unnamed": ["SELECT a, SUM(b), COUNT(*), b % 2 FROM r WHERE b IS NOT NULL GROUP BY a, b % 2",
                "SELECT a + 1, UPPER(s), COALESCE(b, 0) * 2 FROM r", "SELECT COUNT(*), MIN(s), AVG(b) FROM r"],
    "no_from": ["SELECT 1, 'x', 2 + 3", "SELECT 1 AS one, NULL AS nothing, 2.5 * 2 AS five",
                "SELECT r.a, k.one FROM r CROSS JOIN (SELECT 1 AS one) AS k", "SELECT a FROM r UNION SELECT 7"],
    "group_by": ["SELECT a, a, COUNT(*) FROM r GROUP BY a, a", "SELECT a, SUM(b) AS total FROM r GROUP BY 1",
                 "SELECT s, b % 2, COUNT(*), MAX(b) FROM r GROUP BY 2, 1", "SELECT b % 2 AS k, SUM(a) AS total FROM r GROUP BY k",
                 "SELECT a, s, COUNT(b) AS n FROM r GROUP BY s, 1, s, a"],
    "distinct_aggregates": ["SELECT a, SUM(DISTINCT b), AVG(DISTINCT b), COUNT(*) FROM r GROUP BY a",
                            "SELECT SUM(DISTINCT b) AS sd, MIN(DISTINCT s) AS lo, MAX(DISTINCT b) AS hi, AVG(DISTINCT a) AS ad FROM r",
                            "SELECT s, SUM(DISTINCT a * b) AS x FROM r GROUP BY s HAVING SUM(DISTINCT b) > 0"],
    "using": ["SELECT * FROM r JOIN t USING (a)", "SELECT * FROM r LEFT JOIN t USING (a)", "SELECT * FROM r RIGHT JOIN t USING (a)",
              "SELECT a, r.a, t.a, c, s FROM r FULL JOIN t USING (a)", "SELECT * FROM t NATURAL JOIN r",
              "SELECT * FROM r NATURAL FULL JOIN t", "SELECT a, COUNT(*) AS n FROM r JOIN t USING (a) GROUP BY a"],
    "not_in": ["SELECT a, b, s FROM r WHERE a NOT IN (SELECT a FROM t)", "SELECT a, s FROM r WHERE b NOT IN (SELECT c FROM t WHERE c IS NOT NULL)",
               "SELECT a, s FROM r WHERE b NOT IN (SELECT c FROM t WHERE a > 0) AND s IS NOT NULL",
               "SELECT s, COUNT(*) AS n FROM r WHERE a NOT IN (SELECT c FROM t) GROUP BY s"],
    "scalar_subquery": ["SELECT a, (SELECT MAX(c) FROM t) AS m FROM r", "SELECT a, b FROM r WHERE b > (SELECT AVG(c) FROM t)",
                        "SELECT a, (SELECT COUNT(*) FROM t WHERE t.c > 0) + a AS k FROM r WHERE b >= (SELECT MIN(c) FROM t) OR a IS NULL",
                        "SELECT s, COUNT(*) AS n FROM r WHERE b < (SELECT MAX(c) FROM t) GROUP BY s",
                        "SELECT a, b, s FROM r WHERE b = (SELECT MAX(b) FROM r)", "SELECT (SELECT 1) AS one, a FROM r"],
    "theta_join": ["SELECT r.a, r.b, t.a AS ta, t.c FROM r JOIN t ON r.b < t.c",
                   "SELECT r.a, r.b, t.c FROM r JOIN t ON r.b BETWEEN t.c - 1 AND t.c + 1 AND r.s IS NOT NULL",
                   "SELECT r.s, COUNT(*) AS n FROM r JOIN t ON r.a <> t.a OR t.c IS NULL GROUP BY r.s",
                   "SELECT r.a, t.c FROM r JOIN t ON r.a = t.a AND r.b <= t.c"],
    "same_name": ["SELECT r.a, t.a, t.c FROM r JOIN t ON r.a = t.a", "SELECT a, a, b AS a FROM r",
                  "SELECT DISTINCT a, a FROM r"],
}


def _theirs(q: str) -> str:
    """DuckDB runs the same text."""
    return q


@pytest.mark.parametrize("form", sorted(FORMS))
def test_forms_equal_duckdb_on_the_reference_backend(form):
    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.sampled_from(FORMS[form]), streams())
    def check(query, ticks):
        check_against_duckdb(TABLES + f"CREATE VIEW v AS {query};", TABLES, {"v": _theirs(query)}, ticks)

    check()


#: NULLs, a duplicate row, two rows of a group with one value, and deletes on both
#: tables (the subquery's NULL comes and goes)
FIXED_TICKS = [
    {"r": [{"insert": {"a": 1, "b": 2, "s": "x"}}, {"insert": {"a": 2, "b": 3, "s": "y"}}, {"insert": {"a": None, "b": 1, "s": "z"}},
           {"insert": {"a": 1, "b": -1, "s": None}}, {"insert": {"a": 2, "b": 3, "s": "y"}}, {"insert": {"a": 1, "b": 2, "s": "w"}}],
     "t": [{"insert": {"a": 1, "c": 5}}, {"insert": {"a": 3, "c": 2}}, {"insert": {"a": None, "c": 0}}]},
    {"r": [{"delete": {"a": 2, "b": 3, "s": "y"}}, {"insert": {"a": 0, "b": 2, "s": "x"}}],
     "t": [{"delete": {"a": None, "c": 0}}, {"insert": {"a": 2, "c": None}}]},
    {"r": [{"delete": {"a": 1, "b": 2, "s": "x"}}], "t": [{"delete": {"a": 1, "c": 5}}, {"delete": {"a": 2, "c": None}}]},
]


#: each form's Spark path: all-Spark jobs where the form adds Spark code of its own
#: (the distinct aggregates' Spark functions) or new node shapes (NOT IN's counts and
#: product, the scalar subquery's product); Arrow and driver rows for the others
SPARK_PATH_OF = {"distinct_aggregates": "spark", "not_in": "spark", "scalar_subquery": "spark",
                 "unnamed": "arrow", "using": "arrow", "no_from": "arrow", "group_by": "driver", "same_name": "driver", "theta_join": "arrow"}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_forms_equal_duckdb_on_spark(spark, form):
    """Every form on Spark: its first query over changes with NULLs and deletes, on
    the form's path (the README views run on all three)."""
    queries = [FORMS[form][0]]
    path = SPARK_PATH_OF[form]
    script = TABLES + "".join(f"CREATE VIEW v{i} AS {q};\n" for i, q in enumerate(queries))
    check_against_duckdb(script, TABLES, {f"v{i}": _theirs(q) for i, q in enumerate(queries)}, FIXED_TICKS, spark=spark, path=path)
