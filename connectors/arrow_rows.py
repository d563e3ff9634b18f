"""Arrow tables (a Parquet file, a Delta table's file) as an input's change records:
columns matched by name to the input's schema, each column's Arrow type checked against
the column's type (a file of doubles is not read into a bigint column), values turned
into the JSON values a push carries, so they go through the input log's one value check
(runs/input_log.py) like every other push's. A problem is a RecordError naming the file,
the row (1-based) and the column."""
from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.types as at

from dbsp.types import Column, Schema, coerce_value, element_type

from .errors import RecordError

_FITS = {
    "bigint": at.is_integer,
    "double": lambda t: at.is_floating(t) or at.is_integer(t),
    "string": lambda t: at.is_string(t) or at.is_large_string(t) or at.is_string_view(t),
    "boolean": at.is_boolean,
    "date": at.is_date,
    "timestamp": at.is_timestamp,
}


def fits(arrow_type: pa.DataType, column_type: str) -> bool:
    element = element_type(column_type)
    if element is not None:
        return (at.is_list(arrow_type) or at.is_large_list(arrow_type)) and fits(arrow_type.value_type, element)
    return _FITS.get(column_type, lambda t: False)(arrow_type)


def check_columns(table: pa.Schema, schema: Schema, where: str) -> None:
    """Every column of the file is one of the input's, of a type that fits; every column
    of the input is in the file. RecordError naming `where` and the column otherwise."""
    for field in table:
        column = schema.column(field.name)
        if column is None:
            raise RecordError("", where, f"unknown column {field.name!r} (columns: {', '.join(schema.names)})", field.name)
        if not fits(field.type, column.type):
            raise RecordError("", where, f"the file's column is {field.type}, which does not fit {column.type}", field.name)
    missing = [name for name in schema.names if name not in table.names]
    if missing:
        raise RecordError("", where, f"the file has no column {missing[0]!r} (the input's columns: "
                                     f"{', '.join(schema.names)})", missing[0])


def _json_value(value):
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:  # kept as naive UTC, as the value check does
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    return value


def rows(table: pa.Table, schema: Schema, where: str) -> list[dict]:
    """The table's rows as JSON row objects, in the input's column order (columns checked first)."""
    check_columns(table.schema, schema, where)
    ordered = table.select(schema.names)
    return [{k: _json_value(v) for k, v in row.items()} for row in ordered.to_pylist()]


def items(table: pa.Table, schema: Schema, where: str, change: str = "insert", first_row: int = 1) -> list:
    """[(position, [record])], one per row: position `<where> row <n>` (1-based)."""
    return [(f"{where} row {n}", [{change: row}]) for n, row in enumerate(rows(table, schema, where), start=first_row)]


_ARROW = {"bigint": pa.int64(), "double": pa.float64(), "string": pa.string(), "boolean": pa.bool_(),
          "date": pa.date32(), "timestamp": pa.timestamp("us")}


def arrow_type(column_type: str) -> pa.DataType:
    element = element_type(column_type)
    return pa.list_(_ARROW[element]) if element is not None else _ARROW[column_type]


def delta_table(rows: list[tuple[dict, int]], schema: Schema | None, extra: dict[str, pa.Array]) -> pa.Table:
    """A sink's delta as an Arrow table: the view's columns typed by its schema (a date is
    a date32, a timestamp microseconds) and the `extra` columns (weight, tick) after them.
    Without a schema (a connection test), Arrow infers the types from the values."""
    if schema is None:
        names = list(rows[0][0]) if rows else []
        columns = {c: pa.array([data.get(c) for data, _ in rows]) for c in names}
    else:
        columns = {}
        for column in schema.columns:
            values = [coerce_value(data.get(column.name), Column(column.name, column.type, True)) for data, _ in rows]
            values = [list(v) if isinstance(v, tuple) else v for v in values]
            columns[column.name] = pa.array(values, arrow_type(column.type))
    return pa.table({**columns, **extra})


def sink_schema(opening) -> Schema | None:
    """A sink's view schema: the one its opener gave (the command line's plan), else the run's."""
    return opening.schema if opening.schema is not None else view_schema(opening.run_id, opening.node)


def view_schema(run_id: int, view: str) -> Schema | None:
    """The output view's schema in the run's circuit version (None for a connection test)."""
    from circuits.services import plan_for
    from runs.models import Run

    run = Run.objects.filter(pk=run_id).select_related("version").first()
    return plan_for(run.version).views.get(view) if run is not None else None
