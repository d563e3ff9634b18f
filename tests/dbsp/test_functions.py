"""Every expression form evaluates identically on Spark (as Spark columns: every threshold
at 0) and in Python (the reference), on rows with NULLs and edge values; a few results
are also checked by hand."""
import datetime as dt

import pytest

from dbsp import ZSet
from tests.dbsp.helpers import ALL_SPARK, circuit, run, schema

SCHEMA = schema("a:bigint", "x:double", "s:string", "d:date", "t:timestamp", "b:boolean")
ROWS = [
    {"a": 7, "x": 2.675, "s": " Hello ", "d": "2026-03-04", "t": "2026-03-04T10:00:00.5", "b": True},
    {"a": -3, "x": -2.5, "s": "12", "d": "2024-02-29", "t": "2024-02-29T23:59:59", "b": False},
    {"a": 0, "x": 0.0, "s": "2026-1-5", "d": None, "t": None, "b": None},
    {"a": None, "x": None, "s": None, "d": "1999-12-31", "t": "1999-12-31T00:00:00", "b": True},
    {"a": 12, "x": 1e10, "s": "a%b_c\\", "d": "2000-01-01", "t": "2000-01-01T12:30:00", "b": False},
    {"a": 5, "x": 0.125, "s": "", "d": "2000-01-01", "t": "2000-01-01T12:30:00.000001", "b": True},
    {"a": 99, "x": 3.0, "s": 'q"u\\o\x01te\n/é/ /', "d": "0999-07-08", "t": "0999-07-08T01:02:03", "b": None},
]

EXPRESSIONS = [
    "CASE WHEN a > 5 THEN 'big' WHEN a < 0 THEN 'negative' ELSE 'small' END",
    "CASE a WHEN 7 THEN 1.5 WHEN 12 THEN 2 END",
    "CASE WHEN b THEN x END",
    "s LIKE '%ell%'", "s LIKE '_2'", "s NOT LIKE '%\\%%'", "s ILIKE ' HE%'",
    "CAST(a AS VARCHAR)", "CAST(s AS BIGINT)", "CAST(s AS DOUBLE)", "CAST(s AS DATE)", "CAST(x AS BIGINT)",
    "CAST(a AS DOUBLE)", "CAST(b AS VARCHAR)", "CAST(d AS VARCHAR)", "CAST(t AS VARCHAR)", "CAST(a AS BOOLEAN)",
    "CAST(b AS BIGINT)", "CAST(d AS TIMESTAMP)", "CAST(t AS DATE)", "s::bigint",
    "round(x, 2)", "round(x)", "round(a, 1)", "floor(x)", "ceil(x)", "abs(a)", "abs(x)",
    "lower(s)", "upper(s)", "trim(s)", "length(s)", "substring(s, 2, 3)", "substring(s, -2)", "substring(s, 0, 1)",
    "replace(s, 'l', 'L')", "replace(s, '', 'x')", "s || '!'", "concat(s, s)",
    "year(d)", "month(t)", "day(d)", "coalesce(a, 0)", "coalesce(x, a)", "greatest(a, 3)", "least(x, a, 1)",
    "nullif(a, 7)", "a % 4", "a / 4", "x * a - 1",
    "hour(t)", "minute(t)", "second(t)", "hour(d)", "format_timestamp('%Y-%m-%d %H:%M:%S, 100%%', t)",
    "format_timestamp('%d/%m/%Y at %H', d)", "split(s, 'l')", "split(s, '/')", "split(s, '%')[2]", "split(s, '.')[1]",
    "cardinality(split(s, '/'))", "element_at(split(s, 'l'), -1)", "array_contains(split(s, 'l'), 'o ')",
]


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def test_spark_and_python_agree_on_every_expression(spark):
    columns = [{"name": f"e{i}", "expr": e} for i, e in enumerate(EXPRESSIONS)]
    doc = circuit({"t": SCHEMA}, [("m", "map", {"columns": columns}), ("view", "output", {})], ["t.out->m.in", "m.out->view.in"])
    [out] = run(doc, [{"t": [{"insert": r} for r in ROWS]}], spark, **ALL_SPARK)  # asserts Spark == reference
    assert len(out["view"]) == len(ROWS)
    by_a = {row[EXPRESSIONS.index("CAST(a AS VARCHAR)")]: row for row, _ in out["view"]}
    seven, minus3, zero = by_a["7"], by_a["-3"], by_a["0"]
    col = EXPRESSIONS.index
    assert seven[col("CASE WHEN a > 5 THEN 'big' WHEN a < 0 THEN 'negative' ELSE 'small' END")] == "big"
    assert minus3[col("CASE WHEN a > 5 THEN 'big' WHEN a < 0 THEN 'negative' ELSE 'small' END")] == "negative"
    assert seven[col("round(x, 2)")] == 2.68  # HALF_UP on the decimal value, as Spark
    assert minus3[col("round(x)")] == -3.0
    assert minus3[col("CAST(s AS BIGINT)")] == 12
    assert zero[col("CAST(s AS DATE)")] == dt.date(2026, 1, 5)
    assert seven[col("CAST(t AS VARCHAR)")] == "2026-03-04 10:00:00.5"
    assert seven[col("substring(s, 2, 3)")] == "Hel"
    assert seven[col("nullif(a, 7)")] is None
    assert seven[col("s ILIKE ' HE%'")] is True
    assert seven[col("hour(t)")] == 10 and seven[col("hour(d)")] == 0
    assert by_a["99"][col("format_timestamp('%Y-%m-%d %H:%M:%S, 100%%', t)")] == "0999-07-08 01:02:03, 100%"
    assert by_a["99"][col("format_timestamp('%d/%m/%Y at %H', d)")] == "08/07/0999 at 00"
    assert seven[col("split(s, 'l')")] == (" He", "", "o ")
    assert by_a["12"][col("split(s, '%')[2]")] == "b_c\\" and minus3[col("split(s, '%')[2]")] is None
    assert minus3[col("split(s, '.')[1]")] == "12"
    assert by_a["99"][col("split(s, '/')")] == ('q"u\\o\x01te\n', "é", " ", "")


def test_lists_spark_makes_are_the_json_text_the_driver_makes(spark):
    """A list SPLIT makes in Spark is stored as JSON text (types.encode_list): the same
    text the driver writes for it, or the same list would be two rows to Spark."""
    from pyspark.sql import functions as F

    from dbsp.functions import spark_json_strings
    from dbsp.types import encode_list

    lists = [["plain", ""], ['q"uote', "back\\slash", "é", "/"], [chr(c) for c in range(0x20)] + ["\x7f", "\u2028"], []]
    frame = spark.createDataFrame([(i, xs) for i, xs in enumerate(lists)], "i int, xs array<string>")
    got = {r.i: r.j for r in frame.select("i", spark_json_strings(F.col("xs")).alias("j")).collect()}
    assert got == {i: encode_list(xs) for i, xs in enumerate(lists)}


@pytest.mark.parametrize("text, message", [
    ("CAST(s AS BOOLEAN)", "cannot cast string to boolean"),
    ("CAST(x AS VARCHAR)", "cannot cast double to string"),
    ("CAST(a AS MONEY)", "cannot cast to"),
    ("lower(a)", "lower() argument 1 must be string, got bigint"),
    ("round(x, a)", "round() digits must be a non-negative integer literal"),
    ("substring(s)", "substring() takes 2 to 3 arguments, got 1"),
    ("coalesce(a, s)", "incompatible types"),
    ("CASE WHEN a THEN 1 END", "CASE WHEN needs a boolean condition"),
    ("CASE WHEN b THEN 1 ELSE 'x' END", "CASE branches have incompatible types"),
    ("a LIKE 'x'", "LIKE needs strings"),
    ("sqrt(x)", "function SQRT() is not supported"),
])
def test_rejected_expressions(text, message):
    from dbsp.errors import ExpressionError
    from dbsp.expr import parse_expression
    from dbsp.types import Schema

    with pytest.raises(ExpressionError) as err:
        parse_expression(text, Schema.from_list(SCHEMA))
    assert message in str(err.value)


def test_filter_with_like_and_case(spark):
    doc = circuit({"t": SCHEMA}, [("f", "filter", {"predicate": "s LIKE '%l%' AND CASE WHEN b THEN TRUE ELSE a > 100 END"}), ("view", "output", {})],
                  ["t.out->f.in", "f.out->view.in"])
    [out] = run(doc, [{"t": [{"insert": r} for r in ROWS]}], spark)
    assert len(out["view"]) == 1 and next(iter(out["view"]))[0][0] == 7
    assert out["view"] != ZSet()


def test_json_rendering_is_the_same_from_arrow_and_from_zsets(spark):
    from dbsp import compile_plan
    from dbsp.reference import ReferenceRuntime
    from dbsp.runtime import changes_from_records
    from dbsp.spark import SparkRuntime

    doc = circuit({"t": SCHEMA}, [("f", "filter", {"predicate": "TRUE"}), ("view", "output", {})], ["t.out->f.in", "f.out->view.in"])
    plan = compile_plan(doc)
    changes = {"t": changes_from_records([{"insert": r} for r in ROWS], plan.inputs["t"])}
    fast, oracle = SparkRuntime(plan, spark).step(changes), ReferenceRuntime(plan).step(changes)
    assert fast.outputs_json() == oracle.outputs_json()
    assert any(r["data"]["t"] == "2026-03-04T10:00:00.500000" for r in fast.outputs_json()["view"])


#: Strings around the edges of a date: years of 5 to 7 digits, signs and year 0 (Spark
#: reads them as dates Python cannot hold), a year or year-month followed by junk (Spark:
#: NULL), junk after a full date (Spark: the date), whitespace and newlines.
DATE_STRINGS = [
    "2024-01-31", "12024-01-31", "123456-01-01", "1234567-01-01", "99999-12-31", "+2024-01-01", "-2024-01-01",
    "0000-01-01", "0001-01-01", "9999-12-31", "2024", "2024-1", "2024-01", "2024-1-5", " 2024-01-31 ", "\t2024-01-01\n",
    "2024-01-31 junk", "2024-01-31Tjunk", "2024-01-31T10:00:00", "2024-01-01 a\nb", "2024-01-01 a\rb", "2024 junk",
    "2024-01 junk", "2024T", "2024-02-30", "2024-13-01", "024-01-01", "2024-001-01", "2024-01-001", "", " ",
]


def test_spark_and_python_agree_on_strings_cast_to_dates(spark):
    doc = circuit({"t": schema("i:bigint", "s:string")},
                  [("m", "map", {"columns": [{"name": "i", "expr": "i"}, {"name": "d", "expr": "CAST(s AS DATE)"}]}),
                   ("view", "output", {})], ["t.out->m.in", "m.out->view.in"])
    [out] = run(doc, [{"t": [{"insert": {"i": i, "s": s}} for i, s in enumerate(DATE_STRINGS)]}], spark, **ALL_SPARK)
    got = {DATE_STRINGS[i]: d for (i, d), _ in out["view"]}
    assert got["2024-01-31 junk"] == got["2024-01-31Tjunk"] == got[" 2024-01-31 "] == dt.date(2024, 1, 31)
    assert got["2024-01-01 a\nb"] == got["2024"] == got["2024-01"] == dt.date(2024, 1, 1)
    assert got["0001-01-01"] == dt.date(1, 1, 1) and got["9999-12-31"] == dt.date(9999, 12, 31)
    for refused in ("12024-01-31", "99999-12-31", "+2024-01-01", "-2024-01-01", "0000-01-01", "2024 junk",
                    "2024-01 junk", "2024T", "2024-02-30", "024-01-01", "", " "):
        assert got[refused] is None, refused


def test_dates_before_year_1000_reach_spark_as_literals(spark):
    """A date or timestamp the driver hands Spark as a literal (a filter's keys when a
    trace spills, an ISO literal compared with a column) keeps its value before year
    1000: PySpark's own converter writes '999-07-08', which Java refuses."""
    import datetime as dt

    from pyspark.sql import functions as F

    from dbsp.functions import spark_lit

    values = [dt.date(999, 7, 8), dt.date(1, 1, 1), dt.datetime(999, 7, 8, 1, 2, 3, 4), dt.datetime(2026, 3, 4, 10, 0, 0, 500000)]
    row = spark.range(1).select(*[spark_lit(v).alias(f"c{i}") for i, v in enumerate(values)]).collect()[0]
    assert list(row) == values
    assert spark.range(1).select(spark_lit(values[0]) == F.lit("0999-07-08").cast("date")).collect()[0][0] is True
