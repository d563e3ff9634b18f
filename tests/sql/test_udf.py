"""SQL functions (`CREATE FUNCTION f(p TYPE) RETURNS TYPE AS expression`, Feldera's
spelling): inlined at each call, compared with DuckDB's macros (`CREATE MACRO`, written
apart) at every tick with deletes; and the refusals, each at its line:column."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from dbsp.sql import compile_sql
from dbsp.sql.errors import SqlError
from tests.sql.oracle import check_against_duckdb
from tests.sql.test_forms import FIXED_TICKS, spark  # noqa: F401 - the module's Spark session
from tests.sql.test_oracle import TABLES, streams

OURS = """
CREATE FUNCTION count_char(s VARCHAR, c CHAR) RETURNS INT AS LENGTH(s) - LENGTH(REPLACE(s, c, ''));
CREATE FUNCTION part(s VARCHAR, sep CHAR, idx INT) RETURNS VARCHAR AS SPLIT(s, CAST(sep AS VARCHAR))[idx + 1];
CREATE FUNCTION twice(x BIGINT) RETURNS BIGINT AS x * 2;
CREATE FUNCTION clamp(x BIGINT, lo BIGINT, hi BIGINT) RETURNS BIGINT AS GREATEST(lo, LEAST(hi, x));
CREATE FUNCTION twice_clamped(x BIGINT) RETURNS BIGINT AS clamp(twice(x), 0, 5);
"""
THEIRS = """
CREATE MACRO count_char(s, c) AS CAST(length(s) - length(replace(s, c, '')) AS BIGINT);
CREATE MACRO part(s, sep, idx) AS CASE WHEN idx + 1 >= 1 THEN string_split(s, sep)[idx + 1] END;
CREATE MACRO twice(x) AS x * 2;
CREATE MACRO twice_clamped(x) AS greatest(0, least(5, x * 2));
"""
VIEWS = {
    "v_count": "SELECT a, s, count_char(s, 'x') AS n FROM r",
    "v_part": "SELECT a, part(s, 'x', b) AS p FROM r",
    "v_nested": "SELECT a, twice_clamped(b) AS k, twice(a) + 1 AS t FROM r WHERE twice(b) > 0",
    "v_group": "SELECT twice(a) AS ta, SUM(count_char(s, 'y')) AS total FROM r GROUP BY twice(a)",
}


def _script() -> str:
    return TABLES + OURS + "".join(f"CREATE VIEW {name} AS {q};\n" for name, q in VIEWS.items())


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(streams())
def test_functions_equal_duckdb_macros_at_every_tick(ticks):
    check_against_duckdb(_script(), TABLES + THEIRS, VIEWS, ticks)


@pytest.mark.parametrize("path", ["driver", "spark"])
def test_functions_equal_duckdb_macros_on_spark(spark, path):  # noqa: F811 - the fixture
    ticks = [{"r": [{"insert": {"a": 1, "b": 1, "s": "axbxc"}}, {"insert": {"a": 2, "b": 0, "s": "xx"}}, *FIXED_TICKS[0]["r"]]},
             *FIXED_TICKS[1:]]
    check_against_duckdb(_script(), TABLES + THEIRS, VIEWS, ticks, spark=spark, path=path)


def test_a_call_is_the_body_at_the_call():
    """What the view runs is the body, its parameters bound to the arguments (cast to their types)."""
    doc = compile_sql(TABLES + OURS + "CREATE VIEW v AS SELECT count_char(s, 'x') AS n FROM r;")
    exprs = [c["expr"] for n in doc["nodes"] if n["kind"] == "map" for c in n["params"]["columns"]]
    assert any("REPLACE" in e.upper() and "LENGTH" in e.upper() for e in exprs), exprs


@pytest.mark.parametrize("text, position, message", [
    ("CREATE FUNCTION re_extract(s VARCHAR, p VARCHAR) RETURNS VARCHAR;", (4, 17), "has no body"),
    ("CREATE FUNCTION lower(s VARCHAR) RETURNS VARCHAR AS s;", (4, 17), "shadow a built-in"),
    ("CREATE FUNCTION f(x BIGINT) RETURNS BIGINT AS x + a;", (4, 51), "'a', which is not one of its parameters (x)"),
    ("CREATE FUNCTION f(x BIGINT) RETURNS BIGINT AS (SELECT 1);", (4, 17), "must be one expression"),
    ("CREATE FUNCTION f(x BIGINT, x BIGINT) RETURNS BIGINT AS x;", (4, 29), "parameter 'x' appears twice"),
    ("CREATE FUNCTION f(x BIGINT) RETURNS BIGINT AS x;\nCREATE VIEW v AS SELECT f(a, b) AS k FROM r;", (5, 25), "f() takes 1 argument, got 2"),
    ("CREATE FUNCTION f(x BIGINT) RETURNS BIGINT AS x;\nCREATE FUNCTION F(y BIGINT) RETURNS BIGINT AS y;", (5, 17), "already declared"),
])
def test_refusals_name_their_line_and_column(text, position, message):
    with pytest.raises(SqlError) as caught:
        compile_sql(TABLES + text)
    [problem] = caught.value.problems
    assert message in problem.message
    assert (problem.span.line, problem.span.column) == position, problem
