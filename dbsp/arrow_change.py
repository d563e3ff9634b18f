"""A pushed change as an Arrow table: the input's columns + `__w` (the weight).

`from_records` validates change records column-wise: one pass over the records to
pick each one's row and weight, then whole columns checked and converted by Arrow
(bigint, double, string, boolean) or, for dates, timestamps and lists, by the same
per-value rule as the row path (dbsp/types.py `coerce_value`). It answers only when
the records are plainly valid and hold no row twice (no key twice, for a keyed input);
otherwise it returns None and the caller takes the row path (`changes_and_items`),
which names each bad record exactly as before. So both paths accept the same pushes
and give the same change, in the same order (record order: the change has no row
twice, so consolidation keeps it as it is).

`from_records_and_items` (the input log's) also takes records of an input without a
key that hold a row twice, with weights 1 and -1 (a change stream's insert and delete
of a row in one push): Arrow sums each row's weights (the row path's Z-set, in the
order rows first appear), and the records' (row, weight) items are read back from the
unconsolidated table for the per-record delete check.

The input log stores the change as Arrow IPC bytes (`to_ipc` / `from_ipc`); the
worker steps it as it is (the Spark backend takes Arrow input) and only the reference
evaluator turns it into a Z-set (`to_zset`).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .types import ARRAY_TYPES, Column, Schema, coerce_value, decode_list, encode_list, to_json_value
from .zset import ZSet

WEIGHT = "__w"  # the weight column, as in dbsp/spark/zsets.py

_ARROW = {
    "bigint": pa.int64(),
    "double": pa.float64(),
    "string": pa.string(),
    "boolean": pa.bool_(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us"),
    **{t: pa.string() for t in ARRAY_TYPES},  # canonical JSON text (types.encode_list)
}
#: Python types a column's values may have on the Arrow path (anything else: row path)
_PLAIN = {
    "bigint": {int, type(None)},
    "double": {float, int, type(None)},
    "string": {str, type(None)},
    "boolean": {bool, type(None)},
}
_NONE = type(None)
_SCHEMAS: dict[Schema, pa.Schema] = {}


def change_schema(schema: Schema) -> pa.Schema:
    """The Arrow schema of a change; each field says its column's type and nullability
    (metadata), so stored bytes read back alone (`input_schema`)."""
    if schema not in _SCHEMAS:
        fields = [pa.field(c.name, _ARROW[c.type], nullable=True,
                           metadata={"type": c.type, "nullable": "1" if c.nullable else "0"}) for c in schema.columns]
        _SCHEMAS[schema] = pa.schema(fields + [pa.field(WEIGHT, pa.int64(), nullable=False)])
    return _SCHEMAS[schema]


def input_schema(arrow: pa.Schema) -> Schema:
    """The input's schema a change table was written with (the inverse of change_schema)."""
    return Schema(tuple(Column(f.name, f.metadata[b"type"].decode(), f.metadata.get(b"nullable") != b"0")
                        for f in arrow if f.name != WEIGHT))


class _NotPlain(Exception):
    """The records need the row path (a problem to name, or a case it handles)."""


def from_records(records: list, schema: Schema, primary_key: list[str] | None = None) -> pa.Table | None:
    """The change the records make, validated column-wise; None when the row path must
    decide (see the module's docstring)."""
    try:
        return _from_records(records, schema, primary_key)[0]
    except (_NotPlain, pa.ArrowException, OverflowError, ValueError, TypeError, UnicodeError):
        return None


def from_columns(arrays: dict, schema: Schema, primary_key: list[str] | None = None) -> pa.Table | None:
    """A change of inserts (weight 1) given column-wise as Arrow arrays (a connector that
    reads typed columns: no record dicts), checked as `from_records` checks records: the
    input's Arrow type for each column (bigint, double, string, boolean only), no unknown
    or missing column, no NULL in a non-null one, doubles finite (-0.0 made 0.0), no NUL
    in a string, no row (or key) twice. None when any of it does not hold: the caller
    takes the record path, which names what is wrong."""
    if set(arrays) != set(schema.names) or any(c.type not in _PLAIN for c in schema.columns):
        return None
    columns, length = [], None
    for c in schema.columns:
        array = arrays[c.name]
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        if array.type != _ARROW[c.type] or (length is not None and len(array) != length):
            return None
        length = len(array)
        if array.null_count and not c.nullable:
            return None
        if c.type == "double":
            if not pc.all(pc.is_finite(array)).as_py() in (True, None):
                return None
            array = pc.add(array, pa.scalar(0.0))
        elif c.type == "string" and array.null_count < len(array) and pc.any(pc.match_substring(array, "\x00")).as_py():
            return None
        columns.append(array)
    length = length or 0
    table = pa.Table.from_arrays([*columns, pa.array(np.ones(length, np.int64))],
                                 schema=change_schema(schema))
    keys = list(primary_key) if primary_key else schema.names
    if table.num_rows > 1 and table.select(keys).group_by(keys, use_threads=False).aggregate([]).num_rows != table.num_rows:
        return None
    return table


def from_records_and_items(records: list, schema: Schema, primary_key: list[str] | None = None):
    """`from_records`, and for an input without a key also records holding a row more
    than once, each with weight 1 or -1 (a change stream: a row inserted and deleted in
    one push, a row updated twice): (the change consolidated by Arrow, in the order rows
    first appear; the records as the row path's (row, weight) items, item i = record i,
    for the input log's per-record delete check). (table, None) when no row is twice;
    None when the row path must decide."""
    try:
        return _from_records(records, schema, primary_key, consolidate=True)
    except (_NotPlain, pa.ArrowException, OverflowError, ValueError, TypeError, UnicodeError):
        return None


def _split(records: list) -> tuple[list[dict], list[int]]:
    """(each record's row object, its weight). Pushes of inserts only take whole-list
    steps; any other mix one record at a time."""
    if set(map(type, records)) <= {dict} and set(map(len, records)) <= {1}:
        try:
            datas = [rec["insert"] for rec in records]
        except KeyError:
            pass
        else:
            if not set(map(type, datas)) <= {dict}:
                raise _NotPlain
            return datas, [1] * len(datas)
    datas, weights = [], []
    add_data, add_weight = datas.append, weights.append
    for rec in records:
        if type(rec) is not dict:
            raise _NotPlain
        if len(rec) == 1:
            data = rec.get("insert")
            if data is not None:
                add_weight(1)
            else:
                data = rec.get("delete")
                if data is None:
                    raise _NotPlain
                add_weight(-1)
        elif len(rec) == 2 and "data" in rec and "weight" in rec:
            data, w = rec["data"], rec["weight"]
            if type(w) is not int or w == 0:
                raise _NotPlain
            add_weight(w)
        else:
            raise _NotPlain
        if type(data) is not dict:
            raise _NotPlain
        add_data(data)
    return datas, weights


_MISSING = object()


def _column(values: list, column) -> pa.Array:
    t = column.type
    if t in _PLAIN:
        if not set(map(type, values)) <= _PLAIN[t]:
            raise _NotPlain
        array = pa.array(values, _ARROW[t])
        if t == "double":
            if not pc.all(pc.is_finite(array)).as_py() in (True, None):
                raise _NotPlain
            array = pc.add(array, pa.scalar(0.0))  # -0.0 -> 0.0, as coerce_value does
        elif t == "string" and array.null_count < len(array) and pc.any(pc.match_substring(array, "\x00")).as_py():
            raise _NotPlain  # a NUL character: the row path names it
    else:  # dates, timestamps, lists: the row path's own per-value rule
        coerced = [coerce_value(v, column) for v in values]
        if t in ARRAY_TYPES:
            coerced = [encode_list(v) for v in coerced]
            if any(v is not None and "\\u0000" in v for v in coerced):
                raise _NotPlain  # a NUL character in an element
        array = pa.array(coerced, _ARROW[t])
    if array.null_count and not column.nullable:
        raise _NotPlain
    return array


def _from_records(records: list, schema: Schema, primary_key: list[str] | None,
                  consolidate: bool = False) -> tuple[pa.Table, list | None]:
    if not isinstance(records, list):
        raise _NotPlain
    datas, weights = _split(records)
    names = schema.names
    columns, known = [], 0
    for c in schema.columns:
        values = [d.get(c.name, _MISSING) for d in datas]
        missing = values.count(_MISSING)
        if missing:  # an absent column is NULL
            values = [None if v is _MISSING else v for v in values]
        known += len(values) - missing
        columns.append(_column(values, c))
    if sum(map(len, datas)) != known:
        raise _NotPlain  # an unknown column
    w = pa.array(weights, pa.int64())
    if primary_key and not set(weights) <= {1, -1}:
        raise _NotPlain
    table = pa.Table.from_arrays([*columns, w], schema=change_schema(schema))
    keys = list(primary_key) if primary_key else names
    if table.num_rows > 1 and table.select(keys).group_by(keys, use_threads=False).aggregate([]).num_rows != table.num_rows:
        if not consolidate or primary_key or not set(weights) <= {1, -1}:
            raise _NotPlain  # a row (or key) twice: the row path consolidates (or keeps the last record per key)
        return _consolidated(table, schema), list(zip(rows(table, schema), weights))
    return table, None


def _consolidated(table: pa.Table, schema: Schema) -> pa.Table:
    """Each row once with the sum of its weights, rows whose weights cancel left out.
    (Weights of 1 and -1: the sums fit in int64.)"""
    names = schema.names
    summed = table.group_by(names, use_threads=False).aggregate([(WEIGHT, "sum")])
    summed = summed.filter(pc.not_equal(summed[f"{WEIGHT}_sum"], 0))
    return pa.Table.from_arrays([*(summed[n] for n in names), summed[f"{WEIGHT}_sum"]], schema=change_schema(schema))


def from_zset(z, schema: Schema) -> pa.Table:
    """A Z-set (or (row, weight) items) as a change table, in its order."""
    items = list(z)
    columns = []
    for i, c in enumerate(schema.columns):
        values = [row[i] for row, _ in items]
        if c.type in ARRAY_TYPES:
            values = [encode_list(v) for v in values]
        columns.append(pa.array(values, _ARROW[c.type]))
    return pa.Table.from_arrays([*columns, pa.array([w for _, w in items], pa.int64())], schema=change_schema(schema))


def from_records_json(records: list[dict], schema: Schema) -> pa.Table:
    """The input log's JSON form ([{"data": {...}, "weight": w}], validated) as a table."""
    from .runtime import changes_from_records

    return from_zset(changes_from_records(records, schema), schema)


def rows(table: pa.Table, schema: Schema) -> list[tuple]:
    """The table's rows as the row path's tuples (dates, datetimes, lists as tuples)."""
    columns = []
    for c in schema.columns:
        values = table[c.name].to_pylist()
        if c.type in ARRAY_TYPES:
            values = [decode_list(v) for v in values]
        columns.append(values)
    return list(zip(*columns)) if columns else [()] * table.num_rows


def to_zset(table: pa.Table, schema: Schema) -> ZSet:
    return ZSet(zip(rows(table, schema), table[WEIGHT].to_pylist()))


def records_json(table: pa.Table, schema: Schema) -> list[dict]:
    """[{"data": {...}, "weight": w}]: the change as the input log's JSON form."""
    names = schema.names
    columns = []
    for c in schema.columns:
        values = table[c.name].to_pylist()
        if c.type in ARRAY_TYPES:
            values = [None if v is None else list(decode_list(v)) for v in values]
        elif c.type in ("date", "timestamp"):
            values = [to_json_value(v) for v in values]
        columns.append(values)
    weights = table[WEIGHT].to_pylist()
    return [{"data": dict(zip(names, values)), "weight": w} for *values, w in zip(*columns, weights)]


#: changes of at least this many rows are stored LZ4-compressed (smaller ones: setting
#: up the codec costs more than it saves)
COMPRESS_MIN_ROWS = 1000


def to_ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression="lz4" if table.num_rows >= COMPRESS_MIN_ROWS else None)
    with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def from_ipc(data: bytes) -> pa.Table:
    with pa.ipc.open_stream(pa.py_buffer(bytes(data))) as reader:
        return reader.read_all()


def row_keys(table: pa.Table, schema: Schema) -> pa.Array:
    """One string per row that equals another row's only when the rows are equal
    (NULLs included): each value as text behind a marker, joined by NUL (a character
    no stored string holds)."""
    parts = []
    for c in schema.columns:
        text = pc.cast(table[c.name], pa.string())
        parts.append(pc.if_else(pc.is_null(text), pa.scalar("n"), pc.binary_join_element_wise(pa.scalar("v"), text, "")))
    if not parts:
        return pa.array([""] * table.num_rows, pa.string())
    return pc.binary_join_element_wise(*parts, "\x00")


def last_per_key(table: pa.Table, primary_key: list[str]) -> pa.Table:
    """The last row of each key, in order (records of a keyed input applied in order)."""
    if table.num_rows < 2:
        return table
    numbered = table.select(primary_key).append_column("__i", pa.array(range(table.num_rows), pa.int64()))
    last = numbered.group_by(primary_key, use_threads=False).aggregate([("__i", "max")])["__i_max"]
    if len(last) == table.num_rows:
        return table
    return table.take(pc.take(last, pc.sort_indices(last)))  # those rows, in push order


def concat(tables: list[pa.Table], schema: Schema) -> pa.Table:
    tables = [t for t in tables if t.num_rows]
    if not tables:
        return change_schema(schema).empty_table()
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables)


def weights_may_overflow(table: pa.Table) -> bool:
    """Whether summing the table's weights per row could leave int64 (Arrow's sums wrap)."""
    if not table.num_rows:
        return False
    try:
        largest = pc.max(pc.abs_checked(table[WEIGHT])).as_py()
    except pa.ArrowInvalid:  # -2^63
        return True
    return largest * table.num_rows >= 2**63
