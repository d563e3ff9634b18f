"""The vectorised (Arrow) form of expressions gives what the row form (the reference)
gives, value for value, on rows with NULLs, zeros and negative numbers; what it does not
cover it declines (None), and callers fall back to the row or Spark form."""
import pyarrow as pa
import pytest

from dbsp.arrow_expr import compile_arrow
from dbsp.expr import parse_expression
from dbsp.types import Schema

SCHEMA = Schema.from_list([
    {"name": "a", "type": "bigint"}, {"name": "b", "type": "bigint"}, {"name": "x", "type": "double"},
    {"name": "s", "type": "string"}, {"name": "f", "type": "boolean"}, {"name": "d", "type": "date"},
])
ROWS = [
    (7, 2, 2.5, "ada", True, None), (-3, 0, -0.5, "", False, None), (0, -4, 0.0, "bob", None, None),
    (None, 5, None, None, True, None), (12, None, 1e10, "Zed", False, None), (5, 5, 0.125, "ada", None, None),
]
TABLE = pa.table({
    "a": pa.array([r[0] for r in ROWS], pa.int64()), "b": pa.array([r[1] for r in ROWS], pa.int64()),
    "x": pa.array([r[2] for r in ROWS], pa.float64()), "s": pa.array([r[3] for r in ROWS], pa.string()),
    "f": pa.array([r[4] for r in ROWS], pa.bool_()), "d": pa.array([r[5] for r in ROWS], pa.date32()),
})

COVERED = [
    "a", "x", "s", "f", "1", "2.5", "'lit'", "TRUE", "NULL",
    "a + b", "a - b * 2", "-a", "a * x", "a / b", "x / 0", "a / 0.0", "(a + 1) / (b - 5)",
    "a = b", "a <> b", "a < b", "a <= x", "x > 0.1", "a >= 5", "s = 'ada'", "s < 'b'", "f = TRUE",
    "a > 0 AND b > 0", "a > 0 OR b > 0", "NOT f", "NOT (a > b)", "f AND a > 0", "f OR NULL", "f AND NULL",
    "a IS NULL", "s IS NOT NULL", "x IS NULL OR a > 3",
    "a IN (7, 5)", "a NOT IN (7, 5)", "a IN (1, NULL)", "a IN (7, NULL)", "s IN ('ada', 'Zed')",
    "a BETWEEN -3 AND 5", "x NOT BETWEEN 0 AND 1",
    "CASE WHEN a > 5 THEN 'big' WHEN a < 0 THEN 'negative' ELSE 'small' END",
    "CASE a WHEN 7 THEN 1.5 WHEN 12 THEN 2 END", "CASE WHEN f THEN x END", "CASE WHEN a IS NULL THEN b ELSE a + b END",
    "s LIKE 'a%'", "s LIKE '%d_'", "s NOT LIKE '%\\%%'", "s LIKE ''",
]
NOT_COVERED = ["a % 4", "lower(s)", "CAST(a AS VARCHAR)", "s ILIKE 'a%'", "d IS NULL", "coalesce(a, 0)", "a + NULL"]


@pytest.mark.parametrize("text", COVERED)
def test_arrow_form_equals_the_row_form(text):
    expr = parse_expression(text, SCHEMA)
    f = compile_arrow(expr)
    assert f is not None, f"{text} should be covered"
    python = expr.to_python(SCHEMA)
    got = f(TABLE).to_pylist()
    assert got == [python(r) for r in ROWS], text
    assert len(got) == TABLE.num_rows


@pytest.mark.parametrize("text", NOT_COVERED)
def test_what_is_not_covered_is_declined(text):
    assert compile_arrow(parse_expression(text, SCHEMA)) is None


def test_integer_overflow_raises_rather_than_wrapping():
    table = pa.table({"a": pa.array([2**62], pa.int64()), "b": pa.array([4], pa.int64())})
    schema = Schema.from_list([{"name": "a", "type": "bigint"}, {"name": "b", "type": "bigint"}])
    from dbsp.numeric import ValueOutOfRange

    with pytest.raises(ValueOutOfRange, match="outside the bigint range"):
        compile_arrow(parse_expression("a * b", schema))(table)
