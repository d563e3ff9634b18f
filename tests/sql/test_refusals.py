"""What the dialect does not support is refused, naming the construct and its
line:column, and nothing is compiled."""
from __future__ import annotations

import pytest

from dbsp.sql import SqlError, compile_sql

TABLES = "CREATE TABLE r (a BIGINT, b BIGINT, s VARCHAR, ts TIMESTAMP);\nCREATE TABLE t (a BIGINT, c BIGINT);\n"

# (view text on line 3, expected line:column, words the message must contain)
CASES = [
    ("CREATE VIEW v AS SELECT a FROM r ORDER BY a;", "3:43", "ORDER BY in a view"),
    ("CREATE VIEW v AS SELECT a FROM r LIMIT 3;", "3:40", "LIMIT in a view"),
    ("CREATE VIEW v AS SELECT x FROM r;", "3:25", "unknown column 'x'"),
    ("CREATE VIEW v AS SELECT a FROM nope;", "3:32", "unknown table or view 'nope'"),
    ("CREATE VIEW v AS SELECT a FROM r, t;", "3:25", "column 'a' is ambiguous"),
    ("CREATE VIEW v AS SELECT s + 1 AS y FROM r;", "3:25", "'+' needs numbers, got string"),
    ("CREATE VIEW v AS SELECT a FROM r WHERE s;", "3:40", "predicate must be boolean"),
    ("CREATE VIEW v AS SELECT a FROM r WHERE s = 1;", "3:40", "cannot compare string with bigint"),
    ("CREATE VIEW v AS SELECT UPPER(a) AS u FROM r;", "3:25", "upper() argument 1 must be string"),
    ("CREATE VIEW v AS SELECT a, b FROM r GROUP BY a;", "3:28", "'b' must appear in GROUP BY"),
    ("CREATE VIEW v AS SELECT a, STDDEV(b) AS x FROM r GROUP BY a;", "3:28", "aggregate 'STDDEV(b)'"),
    ("CREATE VIEW v AS SELECT a FROM r INTERSECT ALL SELECT a FROM t;", "3:25", "INTERSECT ALL"),
    ("CREATE VIEW v AS SELECT a FROM r EXCEPT ALL SELECT a FROM t;", "3:25", "EXCEPT ALL"),
    ("CREATE VIEW v AS SELECT r.a FROM r LEFT JOIN t ON r.a < t.a;", "3:51", "a LEFT JOIN condition without an equality"),
    ("CREATE VIEW v AS SELECT r.a FROM r LEFT JOIN t ON r.a = t.a AND t.c > 1;", "3:65", "LEFT JOIN condition 't.c > 1'"),
    ("CREATE VIEW v AS SELECT a, RANK() OVER (ORDER BY b) AS rk FROM r;", "3:28", "window function 'RANK()'"),
    ("CREATE VIEW v AS SELECT a, SUM(b) OVER (ORDER BY a) AS m FROM r GROUP BY a;", "3:28", "a window aggregate in a query with GROUP BY"),
    ("CREATE VIEW v AS SELECT a, SUM(b) OVER (ORDER BY b RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) AS m FROM r;", "3:66",
     "RANGE with an offset (2 PRECEDING)"),
    ("CREATE VIEW v AS SELECT a, SUM(b) OVER (ORDER BY b GROUPS BETWEEN 2 PRECEDING AND CURRENT ROW) AS m FROM r;", "3:67", "a GROUPS frame"),
    ("CREATE VIEW v AS SELECT a, SUM(b) OVER (ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS m FROM r;", "3:54", "a ROWS frame without ORDER BY"),
    ("CREATE VIEW v AS SELECT a, COUNT(DISTINCT b) OVER (PARTITION BY a) AS m FROM r;", "3:28", "'COUNT(DISTINCT b)' in a window"),
    ("CREATE VIEW v AS SELECT a, SUM(b) OVER (ORDER BY b ROWS BETWEEN 1 FOLLOWING AND 1 PRECEDING) AS m FROM r;", "3:65",
     "the frame starts after it ends"),
    ("CREATE VIEW v AS SELECT a, SUM(s) OVER (ORDER BY b) AS m FROM r;", "3:28", "needs a number, got string"),
    ("CREATE VIEW v AS SELECT a, SUM(b) OVER (ORDER BY b ROWS BETWEEN b PRECEDING AND CURRENT ROW) AS m FROM r;", "3:65", "frame bound 'b'"),
    ("CREATE VIEW v AS SELECT a, SUM(b) OVER (ORDER BY b ROWS BETWEEN UNBOUNDED FOLLOWING AND CURRENT ROW) AS m FROM r;", "3:28",
     "the frame cannot start at UNBOUNDED FOLLOWING"),
    ("CREATE VIEW v AS SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY b) AS rn FROM r) q;", "3:43", "rn <= k"),
    ("CREATE VIEW v AS SELECT a, b FROM (SELECT a, b, ROW_NUMBER() OVER (ORDER BY b ASC NULLS LAST) AS rn FROM r) q WHERE rn <= 2;", "3:77", "ASC NULLS LAST"),
    ("CREATE VIEW v AS SELECT (SELECT MAX(c) FROM t WHERE t.a = r.a) AS m FROM r;", "3:59", "a correlated scalar subquery"),
    ("CREATE VIEW v AS SELECT a FROM r WHERE (SELECT c FROM t) = 1;", "3:48", "a scalar subquery that may give other than one row"),
    ("CREATE VIEW v AS SELECT a FROM r WHERE a IN (SELECT a FROM t) OR b = 1;", "3:53", "a subquery inside an expression"),
    ("CREATE VIEW v AS SELECT a, COUNT(*) AS n, (SELECT 1) AS one FROM r GROUP BY a;", "3:51", "scalar subquery in the SELECT list of a grouped query"),
    ("CREATE VIEW v AS SELECT a FROM r WHERE EXISTS (SELECT 1 FROM t);", "3:55", "uncorrelated EXISTS"),
    ("CREATE VIEW v AS WITH RECURSIVE p AS (SELECT a, b FROM r UNION ALL SELECT p.a, r.b FROM p JOIN r ON p.b = r.a) SELECT * FROM p;",
     "3:46", "UNION ALL"),
    ("CREATE VIEW v AS WITH RECURSIVE p AS (SELECT a, b FROM r UNION SELECT p.a, COUNT(*) FROM p JOIN r ON p.b = r.a GROUP BY p.a) SELECT * FROM p;",
     "3:71", "aggregation or DISTINCT over recursive 'p'"),
    ("CREATE VIEW v AS WITH RECURSIVE p AS (SELECT a, b FROM r UNION SELECT x.a, y.b FROM p x JOIN p y ON x.b = y.a) SELECT * FROM p;",
     "3:71", "2 references to recursive 'p'"),
    ("CREATE VIEW v AS WITH RECURSIVE p AS (SELECT a, b FROM r UNION SELECT r.a, r.b FROM r WHERE NOT EXISTS (SELECT 1 FROM p WHERE p.a = r.a)) SELECT * FROM p;",
     "3:112", "recursive 'p' inside EXISTS"),
    ("CREATE TABLE x (d DECIMAL(10,2));", "3:27", "type DECIMAL(10, 2)"),
    ("CREATE TABLE x (d VARCHAR(10));", "3:27", "type VARCHAR(10)"),
    ("INSERT INTO r VALUES (1, 2, 'x', NULL);", "3:1", "statement INSERT"),
    ("GRANT SELECT ON r TO bob;", "3:1", "statement GRANT"),
    ("CREATE INDEX i ON r (a);", "3:1", "statement CREATE INDEX"),
    ("CREATE VIEW v AS SELECT a FROM r WHERE a = 1 +;", "3:46", "syntax error"),
    ("CREATE VIEW v AS SELECT s, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY s;",
     "3:116", "must include window_start"),
    ("CREATE VIEW v AS SELECT a FROM r UNION SELECT a, c FROM t;", "3:25", "the left side has 1 columns, the right 2"),
    ("CREATE VIEW v AS SELECT DISTINCT ON (a) a FROM r;", "3:38", "DISTINCT ON"),
    ("CREATE VIEW v AS SELECT a FROM r; CREATE VIEW v AS SELECT a FROM r;", "3:47", "'v' is already defined"),
    ("CREATE VIEW v AS SELECT a, COUNT(*) AS n FROM r GROUP BY 3;", "3:58", "GROUP BY 3: the SELECT list has 2 items"),
    ("CREATE VIEW v AS SELECT a, COUNT(*) AS n FROM r GROUP BY 2;", "3:58", "GROUP BY 2 names the aggregate 'COUNT(*)'"),
    ("CREATE VIEW v AS SELECT r.a FROM r JOIN t USING (c);", "3:41", "USING column 'c' is not on the left side"),
    ("CREATE VIEW v AS SELECT SUM(DISTINCT a, b) AS x FROM r;", "3:25", "SUM(DISTINCT of 2 expressions)"),
    ("CREATE VIEW v AS SELECT lines.word FROM r CROSS JOIN UNNEST(SPLIT(s, ' ')) AS lines(word);", "3:61", "add WHERE word <> ''"),
    ("CREATE TABLE x (v BIGINT, ts TIMESTAMP LATENESS);", "3:40", "LATENESS needs an interval"),
    ("CREATE TABLE x (v BIGINT, ts VARCHAR LATENESS INTERVAL '5' SECONDS);", "3:38", "window time columns are TIMESTAMP or BIGINT"),
    ("CREATE VIEW v AS SELECT a, SUM(*) FILTER (WHERE b > 1) AS n FROM r GROUP BY a;", "3:28", "FILTER (WHERE ...) only on COUNT(*)"),
    ("CREATE VIEW v AS SELECT a, PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY b) AS n FROM r GROUP BY a;", "3:28", "aggregates take no WITHIN GROUP"),
]


@pytest.mark.parametrize("view,where,words", CASES, ids=[c[2] for c in CASES])
def test_refused_with_construct_and_line_column(view, where, words):
    with pytest.raises(SqlError) as caught:
        compile_sql(TABLES + view)
    problem = caught.value.problems[0]
    assert f"{problem.span.line}:{problem.span.column}" == where, str(problem)
    assert words in problem.message


def test_a_problem_names_its_span_as_json():
    with pytest.raises(SqlError) as caught:
        compile_sql("CREATE TABLE t (a BIGINT);\nCREATE VIEW v AS SELECT nope FROM t;")
    assert caught.value.problems[0].as_dict() == {
        "message": "unknown column 'nope' (columns: t.a)", "line": 2, "column": 25,
        "source": {"start": {"line": 2, "column": 25}, "end": {"line": 2, "column": 28}}}


def test_a_script_without_views_is_refused():
    with pytest.raises(SqlError, match="defines no view"):
        compile_sql("CREATE TABLE t (a BIGINT);")


FUZZ_SOURCES = ["transactions", "not_reachable", "sensor_windows", "order_tags", "word_count"]


def test_mangled_sql_is_refused_not_crashed():
    """Tokens dropped, repeated or swapped in the demo scripts: every result either
    compiles or is a SqlError (never another exception)."""
    from pathlib import Path

    from hypothesis import given, settings
    from hypothesis import strategies as st

    texts = [(Path(__file__).resolve().parents[2] / "examples" / "sql" / f"{n}.sql").read_text().split() for n in FUZZ_SOURCES]

    @settings(max_examples=300, deadline=None)
    @given(st.sampled_from(texts), st.lists(st.tuples(st.sampled_from(["drop", "repeat", "swap"]), st.integers(0, 400)), min_size=1, max_size=3))
    def check(words, edits):
        words = list(words)
        for op, at in edits:
            i = at % len(words)
            if op == "drop":
                del words[i]
            elif op == "repeat":
                words.insert(i, words[i])
            else:
                j = (i + 1) % len(words)
                words[i], words[j] = words[j], words[i]
        try:
            compile_sql(" ".join(words))
        except SqlError as e:
            assert e.problems and all(p.message for p in e.problems)

    check()


def test_every_statements_problem_is_reported_once():
    """Each broken statement is reported; a view over a broken one is not reported again."""
    with pytest.raises(SqlError) as caught:
        compile_sql("CREATE TABLE t (a BIGINT, d DECIMAL(5,2));\nCREATE TABLE u (a BIGINT);\n"
                    "CREATE VIEW v AS SELECT a FROM t;\nCREATE VIEW w AS SELECT b FROM u;\n"
                    "CREATE VIEW x AS SELECT a FROM w;\nCREATE VIEW y AS SELECT a FROM u ORDER BY a;\n"
                    "CREATE VIEW ok AS SELECT a FROM u;\n")
    found = [(p.span.line, p.span.column, p.message.split(" (")[0]) for p in caught.value.problems]
    assert found == [(1, 37, "unsupported: type DECIMAL(5, 2)"), (4, 25, "unknown column 'b'"), (6, 43, "unsupported: ORDER BY in a view")]
