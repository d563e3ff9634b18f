import pytest

from dbsp.errors import ExpressionError
from dbsp.expr import parse_expression
from dbsp.types import Schema

SCHEMA = Schema.from_list([
    {"name": "id", "type": "bigint"},
    {"name": "amount", "type": "bigint"},
    {"name": "price", "type": "double"},
    {"name": "name", "type": "string"},
    {"name": "day", "type": "date"},
])


def evaluate(text, row):
    return parse_expression(text, SCHEMA).to_python(SCHEMA)(row)


ROW = (1, 50, 2.5, "ada", None)


@pytest.mark.parametrize("text, expected", [
    ("amount > 10", True),
    ("amount > 10 AND name = 'ada'", True),
    ("amount * 2 + 1", 101),
    ("amount / 4", 12.5),
    ("amount / 0", None),
    ("-7 % 3", -1),
    ("amount IN (1, 50)", True),
    ("amount NOT IN (1, 2)", True),
    ("amount BETWEEN 10 AND 50", True),
    ("day IS NULL", True),
    ("day IS NOT NULL", False),
    ("price >= 2.5", True),
])
def test_values(text, expected):
    assert evaluate(text, ROW) == expected


@pytest.mark.parametrize("text, expected", [
    # SQL three-valued logic: NULL AND FALSE is FALSE, NULL OR TRUE is TRUE, else NULL.
    ("day > '2026-01-01' AND FALSE", False),
    ("day > '2026-01-01' OR TRUE", True),
    ("day > '2026-01-01' AND TRUE", None),
    ("NOT (day > '2026-01-01')", None),
    ("amount IN (1, NULL)", None),
    ("amount IN (50, NULL)", True),
])
def test_null_semantics(text, expected):
    assert evaluate(text, ROW) is expected


@pytest.mark.parametrize("text, message, position", [
    ("amount >", "syntax error", 7),
    ("zz > 1", "unknown column 'zz'", 0),
    ("name > 1", "cannot compare string with bigint", 0),
    ("amount > 1 AND sqrt(amount) = 2", "function SQRT() is not supported", 15),
    ("amount = (SELECT 1)", "SUBQUERY is not allowed", None),
    # The operator as written, never sqlglot's class name (BITWISERIGHTSHIFT).
    ("amount >> 2 > 1", "the operator >> is not allowed", None),
    ("(amount ^ 2) > 1", "the operator ^ is not allowed", None),
    ("~amount > 1", "the operator ~ is not allowed", None),
    ("amount > 1; DROP TABLE x", "exactly one expression", None),
    ("name AND TRUE", "AND needs booleans", None),
    ("day > 'not a date'", "not a valid date", None),
])
def test_rejections_name_the_problem_and_where(text, message, position):
    with pytest.raises(ExpressionError) as err:
        parse_expression(text, SCHEMA)
    assert message in str(err.value)
    if position is not None:
        assert err.value.position == position


def test_types_are_inferred():
    assert parse_expression("amount + 1", SCHEMA).type == "bigint"
    assert parse_expression("amount + price", SCHEMA).type == "double"
    assert parse_expression("amount / 2", SCHEMA).type == "double"
    assert parse_expression("amount > 1 OR name IS NULL", SCHEMA).type == "boolean"
