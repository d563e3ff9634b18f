"""Record formats of sources: one message (a Kafka message, a line of a file) -> the
change records a JSON push carries (`{"insert": {...}}`, `{"delete": {...}}`,
`{"weight": w, "data": {...}}`). Only the shape is read here; the values go through the
input log's one check (runs/input_log.py `validate`) with every other push's.

- `insert_delete`: Feldera's: `{"insert": row}` or `{"delete": row}` (or an array of them);
- `debezium`: the Debezium JSON envelope (`before`, `after`, `op`), bare or under
  `payload` (with the schema converter on): c and r insert `after`, d deletes `before`,
  u deletes `before` and inserts `after`;
- `json`: a plain row (or an array of rows): inserts;
- `csv`: one CSV line, the fields in the input's column order (or the connector's
  `columns`), converted as a CSV upload's are (dbsp/csv_records.py).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import orjson

from dbsp.types import Schema
from dbsp.csv_records import CSVInvalid, records_from_csv

from .errors import bare

FORMATS = ("insert_delete", "debezium", "json", "csv")


@dataclass
class Batch:
    """A poll's records decoded at once, one per message: record i came from the message
    at `positions[i]` (a sequence of position texts)."""

    records: list[dict]
    positions: Sequence[str]

    def __iter__(self):
        """As a poll's items are read elsewhere (the command line): (position, [record]) each."""
        return ((position, [record]) for position, record in zip(self.positions, self.records))

    def __len__(self) -> int:
        return len(self.records)


@dataclass
class Columns:
    """A poll's records as Arrow arrays by input column (inserts: a client that reads typed
    columns, e.g. a PostgreSQL snapshot), row i from `positions[i]`; `records()` gives the
    same poll as `[(position, [record])]` (what the pump falls back to, naming a bad value)."""

    arrays: dict
    positions: Sequence[str]
    records: Callable[[], list]

    def __iter__(self):
        return iter(self.records())

    def __len__(self) -> int:
        return len(self.positions)


class FormatError(ValueError):
    """A message that is not a record of its format: `field` names the column or key at fault."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def decode(fmt: str, payload: bytes | str, schema: Schema, columns: list[str] | None = None) -> list[dict]:
    """The change records of one message; FormatError when it is not one of `fmt`."""
    if fmt == "csv":
        return _csv(_text(payload), schema, columns)
    value = _json(payload)
    if fmt == "insert_delete":
        return [_insert_delete(v) for v in (value if isinstance(value, list) else [value])]
    if fmt == "debezium":
        return _debezium(value)
    if fmt == "json":
        rows = value if isinstance(value, list) else [value]
        for row in rows:
            if not isinstance(row, dict):
                raise FormatError(f"expected a JSON object (a row), got {_kind(row)}")
        return [{"insert": row} for row in rows]
    raise FormatError(f"unknown format {fmt!r} (formats: {', '.join(FORMATS)})", "format")


def decode_many(fmt: str, payloads: list, schema: Schema, columns: list[str] | None = None) -> list[dict] | None:
    """The change records of many messages at once, one record per message (record i is
    message i's), exactly as `decode` gives them one by one; None when some message is
    not plainly one record of `fmt` (not JSON, an array, another shape, a CSV line with a
    problem, ...): the caller then decodes message by message, which names the culprit.
    Debezium messages are always read one by one."""
    if fmt in ("insert_delete", "json"):
        try:
            values = list(map(orjson.loads, payloads))  # one C call per message, no Python frame
        except (orjson.JSONDecodeError, TypeError):
            return None
        if fmt == "json":
            if set(map(type, values)) <= {dict}:
                return [{"insert": row} for row in values]
            return None
        if all(type(v) is dict and len(v) == 1 and type(v.get("insert", v.get("delete"))) is dict for v in values):
            return values  # _insert_delete's usual record, each
        return None
    if fmt == "csv":
        return _csv_many(payloads, schema, columns)
    return None


def _csv_many(payloads: list, schema: Schema, columns: list[str] | None) -> list[dict] | None:
    try:
        lines = [p if isinstance(p, str) else p.decode("utf-8") for p in payloads]
    except (UnicodeDecodeError, AttributeError):
        return None
    lines = [line.rstrip("\r\n") for line in lines]
    text = "\n".join(lines)
    # a line break or quote inside a message, or a blank message: one by one (a quoted
    # field may span lines, so the batch's records would not be its messages)
    if "\r" in text or '"' in text or text.count("\n") != len(lines) - 1 or not all(map(str.strip, lines)):
        return None
    try:
        parsed = records_from_csv(f"{','.join(columns or schema.names)}\n{text}\n", schema)
    except CSVInvalid:
        return None
    if parsed.problems or len(parsed.records) != len(lines):
        return None
    return parsed.records


def _text(payload: bytes | str) -> str:
    if isinstance(payload, str):
        return payload
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(f"not UTF-8 text: byte {e.start}") from None


def _json(payload: bytes | str):
    if payload is None:
        raise FormatError("an empty message (no value)")
    try:
        return orjson.loads(payload)  # the fast path (2-3x json's); refuses what json reads below
    except orjson.JSONDecodeError:
        pass
    try:  # NaN and Infinity read as numbers, for the value check to refuse naming the column (as REST does)
        return json.loads(_text(payload))
    except json.JSONDecodeError as e:
        raise FormatError(f"not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None


def _kind(value) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def _insert_delete(value) -> dict:
    if type(value) is dict and len(value) == 1 and type(value.get("insert", value.get("delete"))) is dict:
        return value  # the usual record, checked at once
    if not isinstance(value, dict):
        raise FormatError(f"expected {{\"insert\": {{...}}}} or {{\"delete\": {{...}}}}, got {_kind(value)}")
    keys = set(value)
    if keys not in ({"insert"}, {"delete"}):
        raise FormatError(f"expected exactly one key, insert or delete; got {sorted(keys) or 'none'}",
                          next(iter(sorted(keys - {"insert", "delete"})), None))
    [key] = keys
    if not isinstance(value[key], dict):
        raise FormatError(f"{key}: expected a JSON object (a row), got {_kind(value[key])}", key)
    return value


def _debezium(value) -> list[dict]:
    if not isinstance(value, dict):
        raise FormatError(f"expected a Debezium envelope (an object with op, before, after), got {_kind(value)}")
    if "payload" in value and isinstance(value["payload"], dict) and "op" not in value:
        value = value["payload"]
    op = value.get("op")
    needs = {"c": ["after"], "r": ["after"], "u": ["before", "after"], "d": ["before"]}
    if op not in needs:
        raise FormatError(f"op must be one of c, r, u, d; got {op!r}", "op")
    for key in needs[op]:
        if not isinstance(value.get(key), dict):
            raise FormatError(f"op {op!r} needs {key} to be a row object, got {_kind(value.get(key))}", key)
    out = []
    if op in ("u", "d"):
        out.append({"delete": value["before"]})
    if op in ("c", "r", "u"):
        out.append({"insert": value["after"]})
    return out


def _csv(line: str, schema: Schema, columns: list[str] | None) -> list[dict]:
    line = line.rstrip("\r\n")
    if not line.strip():
        raise FormatError("an empty CSV line")
    header = ",".join(columns or schema.names)
    parsed = records_from_csv(f"{header}\n{line}\n", schema)
    if len(parsed.records) != 1:
        raise FormatError(f"expected one CSV line, got {len(parsed.records)} records (a newline inside?)")
    if parsed.problems:
        first = parsed.problems[0]
        message, field = bare(first["message"]), first.get("field")
        raise FormatError(message, field)
    return parsed.records


def encode(data: dict, weight: int) -> list[bytes]:
    """A sink's records of one row of a delta: `{"insert": row}` (or delete) once per unit
    of weight, in Feldera's insert_delete format."""
    key = "insert" if weight > 0 else "delete"
    text = json.dumps({key: data}, separators=(",", ":"), sort_keys=True).encode()
    return [text] * abs(weight)
