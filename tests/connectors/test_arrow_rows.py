"""Arrow tables as an input's records and a delta as an Arrow table, for every column
type (a narrow unit test, no database): the JSON values it makes are the ones the value
check (dbsp.types.coerce_value, the oracle) reads back to the same Python values, and a
column of a type that does not fit is named."""
import datetime as dt

import pyarrow as pa
import pytest

from connectors import arrow_rows
from connectors.errors import RecordError
from dbsp.types import Schema, coerce_row

SCHEMA = Schema.from_list([
    {"name": "n", "type": "bigint", "nullable": False}, {"name": "x", "type": "double"},
    {"name": "s", "type": "string"}, {"name": "b", "type": "boolean"}, {"name": "d", "type": "date"},
    {"name": "t", "type": "timestamp"}, {"name": "l", "type": "array<bigint>"}])
TABLE = pa.table({
    "l": pa.array([[1, None, 3], []], pa.list_(pa.int16())),  # any column order
    "n": pa.array([1, 2], pa.int8()), "x": pa.array([0.5, 2], pa.float32()), "s": ["a", None], "b": [True, False],
    "d": pa.array([dt.date(2026, 1, 2), None], pa.date32()),
    "t": pa.array([dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=2))),
                   dt.datetime(2026, 5, 6, 7, 8, 9)], pa.timestamp("ms", tz="+02:00")),
})


def test_every_type_reads_as_the_value_check_reads_it():
    rows = arrow_rows.rows(TABLE, SCHEMA, "f.parquet")
    assert list(rows[0]) == SCHEMA.names
    values = [coerce_row(row, SCHEMA, i) for i, row in enumerate(rows)]
    assert [problems for _, problems in values] == [[], []]
    assert values[0][0] == (1, 0.5, "a", True, dt.date(2026, 1, 2), dt.datetime(2026, 1, 2, 1, 4, 5), (1, None, 3))
    assert values[1][0] == (2, 2.0, None, False, None, dt.datetime(2026, 5, 6, 7, 8, 9), ())  # (pyarrow took it as UTC)


def test_a_delta_is_typed_by_the_view_s_schema_and_reads_back():
    rows = [(row, w) for row, w in zip(arrow_rows.rows(TABLE, SCHEMA, "f"), (1, -2))]
    table = arrow_rows.delta_table(rows, SCHEMA, {"weight": pa.array([1, -2], pa.int64())})
    assert [str(f.type) for f in table.schema] == ["int64", "double", "string", "bool", "date32[day]", "timestamp[us]",
                                                   "list<item: int64>", "int64"]
    assert arrow_rows.rows(table.drop_columns(["weight"]), SCHEMA, "again") == [row for row, _ in rows]


@pytest.mark.parametrize("column, arrow, message", [
    ("n", pa.array([1.0, 2.0]), "the file's column is double, which does not fit bigint"),
    ("d", pa.array(["2026-01-02", None]), "the file's column is string, which does not fit date"),
    ("l", pa.array([["a"], []]), "the file's column is list<item: string>, which does not fit array<bigint>"),
])
def test_a_column_that_does_not_fit_is_named(column, arrow, message):
    with pytest.raises(RecordError) as e:
        arrow_rows.rows(TABLE.set_column(TABLE.schema.get_field_index(column), column, arrow), SCHEMA, "f.parquet")
    assert str(e.value) == f"at f.parquet, column {column!r}: {message}"
