"""CSV text -> change records for one input, every bad row and field reported.

The header row names the columns (any order, any subset of the input's schema); an
optional `_weight` column holds each row's nonzero int64 weight (default 1, so a plain
CSV inserts its rows; -1 deletes). An empty field is NULL. Values are converted by the
column's type: bigint, double, boolean (true/false, t/f, 1/0, yes/no), string as is,
date and timestamp in ISO form, a list (array<T>) as JSON array text (`"[1, 2]"`).
Problems name the data row (0-based, as in JSON pushes), the file line (1-based, the
header is line 1) and the field.
"""
from __future__ import annotations

import csv
import io
import json

from django.conf import settings

from dbsp.types import BIGINT_MAX, BIGINT_MIN, Column, Schema, coerce_value, element_type

WEIGHT = "_weight"
TRUE = {"true", "t", "1", "yes", "y"}
FALSE = {"false", "f", "0", "no", "n"}


class CSVInvalid(ValueError):
    def __init__(self, detail: str, problems: list[dict], status: int = 400):
        self.detail, self.problems, self.status = detail, problems, status
        super().__init__(detail)


def _convert(text: str, column: Column):
    """One CSV field -> the JSON value coerce_value expects; ValueError with a reason."""
    if text == "":
        return None
    t = column.type
    if element_type(t) is not None:
        try:
            value = json.loads(text)
        except ValueError:
            raise ValueError(f"expected a list ({t}) as a JSON array such as [1, 2], got {text!r}") from None
        if not isinstance(value, list):
            raise ValueError(f"expected a list ({t}) as a JSON array such as [1, 2], got {text!r}")
        return value  # coerce_value checks the elements
    if t == "bigint":
        try:
            return int(text.strip())
        except ValueError:
            raise ValueError(f"expected an integer (bigint), got {text!r}") from None
    if t == "double":
        try:
            return float(text.strip())
        except ValueError:
            raise ValueError(f"expected a number (double), got {text!r}") from None
    if t == "boolean":
        low = text.strip().lower()
        if low in TRUE:
            return True
        if low in FALSE:
            return False
        raise ValueError(f"expected true or false, got {text!r}")
    return text  # string, date, timestamp: coerce_value checks the form


def _problem(row: int, message: str, field: str | None = None) -> dict:
    problem = {"message": f"line {row + 2} (row {row}): {message}", "row": row, "line": row + 2}
    if field is not None:
        problem["field"] = field
    return problem


def records_from_csv(text: str, schema: Schema) -> list[dict]:
    """The rows of a CSV as `{"weight": w, "data": {...}}` records; CSVInvalid lists every problem."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
    except csv.Error as e:
        raise CSVInvalid(f"The CSV header cannot be read: {e}.", [{"message": str(e), "line": 1, "field": "header"}]) from None
    if not header or all(h.strip() == "" for h in header):
        raise CSVInvalid("The CSV is empty: its first line must name the columns.", [{"message": "no header row", "line": 1, "field": "header"}])
    names = [h.strip() for h in header]
    problems = []
    for name in names:
        if name != WEIGHT and schema.column(name) is None:
            problems.append({"message": f"line 1: unknown column {name!r} (columns: {', '.join(schema.names)})", "line": 1, "field": name})
    duplicates = sorted({n for n in names if names.count(n) > 1})
    for name in duplicates:
        problems.append({"message": f"line 1: column {name!r} appears more than once", "line": 1, "field": name})
    if problems:
        raise CSVInvalid(f"The CSV header has {len(problems)} problem(s); nothing was stored.", problems)

    records: list[dict] = []
    row = -1
    try:
        for row, fields in enumerate(reader):
            if not fields:
                problems.append(_problem(row, "empty line"))
                continue
            if len(records) + 1 > settings.PUSH_MAX_ROWS:
                raise CSVInvalid(
                    f"A push may hold at most {settings.PUSH_MAX_ROWS} records; this CSV has more. Split it.",
                    [{"message": f"more than {settings.PUSH_MAX_ROWS} rows", "field": "records", "row": row, "line": row + 2}],
                    413,
                )
            if len(fields) != len(names):
                problems.append(_problem(row, f"{len(fields)} fields, the header has {len(names)}"))
                continue
            data, weight, bad = {}, 1, False
            for name, text in zip(names, fields):
                if name == WEIGHT:
                    try:
                        weight = int(text.strip()) if text.strip() else 1
                    except ValueError:
                        weight = None
                    if weight in (None, 0):
                        problems.append(_problem(row, f"weight must be a nonzero integer, got {text!r}", WEIGHT))
                        bad = True
                    elif not BIGINT_MIN <= weight <= BIGINT_MAX:
                        problems.append(_problem(row, f"weight {weight} does not fit in a signed 64-bit integer", WEIGHT))
                        bad = True
                    continue
                column = schema.column(name)
                try:
                    data[name] = coerce_value(_convert(text, column), column)
                except ValueError as e:
                    problems.append(_problem(row, f"column {name!r}: {e}", name))
                    bad = True
            for column in schema.columns:  # columns the CSV leaves out are NULL
                if column.name not in names and not column.nullable:
                    problems.append(_problem(row, f"column {column.name!r}: null in a non-null column (the CSV has no such column)", column.name))
                    bad = True
            if not bad:
                records.append({"weight": weight, "data": {k: _json(v) for k, v in data.items()}})
    except csv.Error as e:
        problems.append(_problem(row + 1, f"malformed CSV: {e}"))
    if problems:
        raise CSVInvalid(f"The push was rejected: {len(problems)} problem(s) in its rows; nothing was stored.", problems)
    return records


def _json(value):
    from dbsp.types import to_json_value

    return to_json_value(value)


def decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise CSVInvalid(f"The CSV is not UTF-8 text (byte {e.start}).", [{"message": str(e), "field": "body"}]) from None
