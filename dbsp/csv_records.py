"""CSV text -> change records for one input: the text of each field turned into the JSON
value a JSON push would carry, every problem of the text reported.

The header row names the columns (any order, any subset of the input's schema); an
optional `_weight` column holds each row's nonzero int64 weight (default 1, so a plain
CSV inserts its rows; -1 deletes). An empty field is NULL. A field becomes the JSON
value of its column's type: bigint and double numbers (a bigint field may be written as
a JSON number may: `1.0`, `1e3`), boolean (true/false, t/f, 1/0, yes/no), string as is,
date and timestamp in ISO form, a list (array<T>) as JSON array text (`"[1, 2]"`). The
values are then checked by the one check every push shares (runs/input_log.py
`validate`: range, exactness, finiteness, NUL, NULL in a non-null column, ...), so a
value is refused in a CSV exactly when it is refused in JSON, with the same message
after the line: `line 3: row 1, column 'amount': ...`. Problems name the data row
(0-based, as in JSON pushes), the file line (1-based, the header is line 1) and the
field. A quote inside an unquoted field (`1,ab"c"d`) is refused: RFC 4180 quotes the
whole field and doubles the quote (`"ab""c""d"`).

Pure (no web framework): the REST CSV push (runs/api/csv_push.py), the connectors' CSV
format and file source, and the command line's connectors all read CSV here.
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field as dataclass_field

from dbsp.types import BIGINT_MAX, BIGINT_MIN, Column, Schema, element_type, value_problem

WEIGHT = "_weight"
TRUE = {"true", "t", "1", "yes", "y"}
FALSE = {"false", "f", "0", "no", "n"}
#: one field of a raw CSV record: a quoted field (quotes doubled inside), or an unquoted one
_QUOTED = re.compile(r'"(?:[^"]|"")*"')
_UNQUOTED = re.compile(r'[^,\r\n]*')


class CSVInvalid(ValueError):
    def __init__(self, detail: str, problems: list[dict], status: int = 400):
        self.detail, self.problems, self.status = detail, problems, status
        super().__init__(detail)


def _convert(text: str, column: Column):
    """One CSV field -> the JSON value a JSON push would carry; ValueError with a reason
    (the same reason a JSON push's value of the wrong kind gets)."""
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
        return value
    if t == "bigint":
        try:
            return int(text.strip())
        except ValueError:
            pass
        try:  # 1.0, 1e3, NaN: as a JSON number, decided by the shared check
            return float(text.strip())
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
    return text  # string, date, timestamp: the shared check checks the form


def line_problem(row: int, message: str, field: str | None = None) -> dict:
    """A problem of data row `row` (0-based), its file line in front: `line 3: row 1, ...`."""
    problem = {"message": f"line {row + 2}: {message}", "row": row, "line": row + 2}
    if field is not None:
        problem["field"] = field
    return problem


def with_line(problem: dict) -> dict:
    """A shared check's problem (`row 1, column 'x': ...`) with its CSV line (a record's
    weight is the CSV's `_weight` column)."""
    field = problem.get("field")
    return line_problem(problem["row"], problem["message"], WEIGHT if field == "weight" else field)


def _unquoted_quote(raw: str) -> int | None:
    """The 0-based field of a raw record that has a quote inside an unquoted field, if any."""
    pos, index = 0, 0
    while True:
        if raw.startswith('"', pos):
            match = _QUOTED.match(raw, pos)
            if match is None:
                return None  # unterminated: the csv module reports it
        else:
            match = _UNQUOTED.match(raw, pos)
            if '"' in match.group():
                return index
        pos = match.end()
        if not raw.startswith(",", pos):
            return None
        pos, index = pos + 1, index + 1


@dataclass
class CSVRecords:
    """Every data row's change record (record i is row i; a row with a problem of its own
    keeps a stand-in record, so the shared check's row numbers are the CSV's), the
    problems of the text, and which rows' shared-check problems to leave out (a row
    that is not a record at all; a field whose text was already refused)."""

    records: list[dict]
    problems: list[dict] = dataclass_field(default_factory=list)
    bad_rows: set[int] = dataclass_field(default_factory=set)
    bad_fields: set[tuple[int, str]] = dataclass_field(default_factory=set)

    def merged(self, checked: list[dict]) -> list[dict]:
        """The text's problems and the shared check's (with lines), in row order."""
        kept = [with_line(p) for p in checked
                if p.get("row") not in self.bad_rows and (p.get("row"), p.get("field")) not in self.bad_fields]
        return sorted(self.problems + kept, key=lambda p: (p.get("row", -1), p.get("line", 0)))


def records_from_csv(text: str, schema: Schema, max_rows: int | None = None) -> CSVRecords:
    """The rows of a CSV as `{"weight": w, "data": {...}}` records, unchecked values
    (the caller runs the shared check); CSVInvalid for a bad header or more than
    `max_rows` rows (one push's limit, when the CSV is one push)."""
    lines = list(io.StringIO(text, newline=""))  # the physical lines, as the reader reads them
    reader = csv.reader(lines, strict=True)
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
    raw = "".join(lines[:reader.line_num])
    if '"' in raw and (index := _unquoted_quote(raw.rstrip("\r\n"))) is not None:
        raise CSVInvalid("The CSV header has 1 problem(s); nothing was stored.", [{
            "message": f"line 1: column {index}: a quote inside an unquoted field (quote the whole field and double "
                       f"the quote inside: \"a\"\"b\")", "line": 1, "field": "header"}])

    out = CSVRecords([])
    columns = [None if n == WEIGHT else schema.column(n) for n in names]
    absent = [c for c in schema.columns if c.name not in names and not c.nullable]
    row, start = -1, reader.line_num
    try:
        for row, fields in enumerate(reader):
            raw, start = "".join(lines[start:reader.line_num]), reader.line_num
            if not fields:
                out.problems.append(line_problem(row, f"row {row}: empty line"))
                out.bad_rows.add(row)
                out.records.append({"insert": {}})
                continue
            if max_rows is not None and len(out.records) + 1 > max_rows:
                raise CSVInvalid(
                    f"A push may hold at most {max_rows} records; this CSV has more. Split it.",
                    [{"message": f"more than {max_rows} rows", "field": "records", "row": row, "line": row + 2}],
                    413,
                )
            if len(fields) != len(names):
                out.problems.append(line_problem(row, f"row {row}: {len(fields)} fields, the header has {len(names)}"))
                out.bad_rows.add(row)
                out.records.append({"insert": {}})
                continue
            if '"' in raw and (index := _unquoted_quote(raw.rstrip("\r\n"))) is not None:
                out.problems.append(line_problem(row, value_problem(row, names[index], (
                    f"a quote inside an unquoted field, {fields[index]!r} (quote the whole field and double the "
                    f"quote inside: \"a\"\"b\")")), names[index]))
                out.bad_rows.add(row)
                out.records.append({"insert": {}})
                continue
            data, weight = {}, 1
            for name, column, text in zip(names, columns, fields):
                if column is None:  # the weight
                    try:
                        weight = int(text.strip()) if text.strip() else 1
                    except ValueError:
                        weight = None
                    if weight in (None, 0):
                        out.problems.append(line_problem(row, value_problem(row, WEIGHT, f"weight must be a nonzero integer, got {text!r}"), WEIGHT))
                    elif not BIGINT_MIN <= weight <= BIGINT_MAX:
                        out.problems.append(line_problem(row, value_problem(row, WEIGHT, f"weight {weight} does not fit in a signed 64-bit integer"), WEIGHT))
                        weight = None
                    if weight is None or weight == 0:
                        out.bad_fields.add((row, "weight"))
                        weight = 1
                    continue
                try:
                    data[name] = _convert(text, column)
                except ValueError as e:
                    out.problems.append(line_problem(row, value_problem(row, name, str(e)), name))
                    out.bad_fields.add((row, name))
            for column in absent:  # columns the CSV leaves out are NULL
                out.problems.append(line_problem(row, value_problem(row, column.name, "null in a non-null column (the CSV has no such column)"), column.name))
                out.bad_fields.add((row, column.name))
            out.records.append({"weight": weight, "data": data})
    except csv.Error as e:
        out.problems.append(line_problem(row + 1, f"row {row + 1}: malformed CSV: {e}"))
        out.bad_rows.add(row + 1)
    return out


def decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise CSVInvalid(f"The CSV is not UTF-8 text (byte {e.start}).", [{"message": str(e), "field": "body"}]) from None
