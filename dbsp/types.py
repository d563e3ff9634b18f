"""Column types, schemas, and coercion of JSON values into typed Python values."""
from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass

from .errors import DataInvalid, Problem

SCALAR_TYPES = ("bigint", "double", "string", "boolean", "date", "timestamp")
#: lists of one scalar type: a JSON array (elements may be NULL) in pushes and outputs,
#: a tuple in the reference evaluator, canonical JSON text inside Arrow and Spark
#: (`encode_list`), so lists group, join and compare by value on every path
ELEMENT_TYPES = ("bigint", "double", "string", "boolean")
ARRAY_TYPES = tuple(f"array<{t}>" for t in ELEMENT_TYPES)
TYPES = SCALAR_TYPES + ARRAY_TYPES
NUMERIC = ("bigint", "double")
BIGINT_MIN, BIGINT_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    nullable: bool = True

    def as_dict(self) -> dict:
        return {"name": self.name, "type": self.type, "nullable": self.nullable}


@dataclass(frozen=True)
class Schema:
    columns: tuple[Column, ...]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column | None:
        for c in self.columns:
            if c.name == name:
                return c
        return None

    def as_list(self) -> list[dict]:
        return [c.as_dict() for c in self.columns]

    @classmethod
    def from_list(cls, items: list[dict]) -> "Schema":
        return cls(tuple(Column(i["name"], i["type"], bool(i.get("nullable", True))) for i in items))


def element_type(type_: str) -> str | None:
    """'bigint' for 'array<bigint>'; None for a scalar type."""
    return type_[6:-1] if type_.startswith("array<") and type_.endswith(">") else None


def encode_list(value):
    """A list value's physical form in Arrow and Spark: canonical JSON text (None stays
    None; text already encoded is returned as it is)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(list(value), separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def decode_list(value):
    """The inverse of encode_list: a tuple (also accepts a tuple or list)."""
    if value is None or isinstance(value, tuple):
        return value
    return tuple(json.loads(value) if isinstance(value, str) else value)


#: the largest integer every double up to which is exact (2^53): an integral double past
#: it may stand for many integers (orjson reads -9223372036854775809 as -2^63 as a double)
EXACT_FLOAT_INT = 2 ** 53


def coerce_value(value, column: Column):
    """Convert one JSON value to the column's Python type; raise ValueError with a reason."""
    if value is None:
        if not column.nullable:
            raise ValueError("null in a non-null column")
        return None
    t = column.type
    if (element := element_type(t)) is not None:
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"expected a list ({t}, a JSON array), got {value!r}")
        item = Column(column.name, element, True)
        out = []
        for i, v in enumerate(value):
            try:
                out.append(coerce_value(v, item))
            except ValueError as e:
                raise ValueError(f"element {i}: {e}") from None
        return tuple(out)
    if t == "bigint":
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer() and abs(value) <= EXACT_FLOAT_INT:
                value = int(value)
            elif isinstance(value, float) and value.is_integer():  # 1e19, or an integer a parser read as a double
                raise ValueError(f"{value!r} is not an exact integer (a number past ±2^53 written with a fraction or "
                                 f"exponent, or outside the bigint range, has lost digits)")
            else:
                raise ValueError(f"expected an integer (bigint), got {value!r}")
        if not BIGINT_MIN <= value <= BIGINT_MAX:
            raise ValueError(f"{value} is out of the bigint range")
        return value
    if t == "double":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"expected a number (double), got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"{value} is not a finite number")
        return float(value) + 0.0  # -0.0 -> 0.0: equal values have one form
    if t == "string":
        if not isinstance(value, str):
            raise ValueError(f"expected a string, got {value!r}")
        return value
    if t == "boolean":
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, got {value!r}")
        return value
    if t == "date":
        if not isinstance(value, str):
            raise ValueError(f"expected a date 'YYYY-MM-DD', got {value!r}")
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"expected a date 'YYYY-MM-DD', got {value!r}") from None
    if t == "timestamp":
        if not isinstance(value, str):
            raise ValueError(f"expected a timestamp 'YYYY-MM-DDTHH:MM:SS', got {value!r}")
        try:
            ts = dt.datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"expected a timestamp 'YYYY-MM-DDTHH:MM:SS', got {value!r}") from None
        # Timestamps are kept as naive UTC.
        if ts.tzinfo is not None:
            ts = ts.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return ts
    raise ValueError(f"unknown column type {t!r}")


def value_problem(row: int, column: str, reason: str) -> str:
    """The one shape of a bad value's message on every way in: `row 1, column 'id': reason`
    (a CSV puts its line in front)."""
    return f"row {row}, column {column!r}: {reason}"


def coerce_row(data, schema: Schema, row: int) -> tuple[tuple | None, list[Problem]]:
    """A JSON object -> a row tuple in schema order, or the problems naming row and field."""
    if not isinstance(data, dict):
        return None, [Problem(f"row {row}: expected an object of column values", row=row)]
    problems = []
    for key in data:
        if schema.column(key) is None:
            problems.append(Problem(f"row {row}: unknown column {key!r} (columns: {', '.join(schema.names)})", row=row, field=key))
    values = []
    for col in schema.columns:
        try:
            values.append(coerce_value(data.get(col.name), col))
        except ValueError as e:
            problems.append(Problem(value_problem(row, col.name, str(e)), row=row, field=col.name))
    return (None if problems else tuple(values)), problems


def to_json_value(value):
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, tuple):
        return list(value)
    return value


def row_to_dict(row: tuple, schema: Schema) -> dict:
    return {c.name: to_json_value(v) for c, v in zip(schema.columns, row)}


def raise_if(problems: list[Problem]) -> None:
    if problems:
        raise DataInvalid(problems)
