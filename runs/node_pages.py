"""One page of a node's stored table (runs/inspection_store.py): filtered, sorted and
sliced with Arrow compute, so a 10^6-row state costs the page's rows in Python, not the
state's.

The query comes from the request's parameters (`page_query`), each checked against the
node's schema, with a 400 naming the parameter when it is wrong. User text is only ever
a value: a column name must be one of the schema's, a filter value is converted to the
column's type (dbsp.types.coerce_value) and compared with `pc.equal`, a search text is
matched as a plain substring (`pc.match_substring`, no pattern syntax); nothing reaches
eval or SQL.

Parameters: `page` (from 1), `page_size` (1..MAX_PAGE_SIZE), `sort` (a column, or
SORT_WEIGHT for the weight), `desc` (1/0), `filter` (repeatable `column:value`, all must
hold; `null` is NULL except in string columns), `q` (a text found in any column,
ignoring case), `sign` (`positive`: inserted rows, `negative`: deleted ones).
"""
from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from circuits.services import ServiceError
from dbsp.types import Column, Schema, coerce_value, decode_list, element_type, encode_list, to_json_value

from .inspection_store import WEIGHT, arrow_type

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
MAX_SEARCH_CHARS = 200
MAX_FILTERS = 20
SORT_WEIGHT = "@weight"
SIGNS = ("positive", "negative")


@dataclass(frozen=True)
class PageQuery:
    page: int = 1
    page_size: int = DEFAULT_PAGE_SIZE
    sort: str | None = None
    desc: bool = False
    filters: tuple[tuple[str, str, object], ...] = ()  # (column, the text given, its typed value)
    q: str = ""
    sign: str | None = None

    @property
    def selection(self) -> tuple:
        """What decides the rows and their order (not which page of them)."""
        return (self.sort, self.desc, self.filters, self.q, self.sign)

    def selects(self) -> bool:
        return bool(self.filters or self.q or self.sign or self.sort)

    def as_json(self) -> dict:
        return {"sort": self.sort, "desc": self.desc, "filters": [f"{c}:{text}" for c, text, _ in self.filters],
                "q": self.q or None, "sign": self.sign}


def bad(field: str, message: str) -> ServiceError:
    return ServiceError(f"Query parameter '{field}': {message}.", 400, [{"field": field, "message": message}])


def _int(params, field: str, default: int, low: int, high: int | None = None) -> int:
    text = params.get(field)
    if text in (None, ""):
        return default
    try:
        value = int(text)
    except ValueError:
        raise bad(field, f"expected an integer, got {text!r}") from None
    if value < low or (high is not None and value > high):
        raise bad(field, f"{value} is not between {low} and {high}" if high is not None else f"{value} is below {low}")
    return value


def _column(schema: Schema, field: str, name: str) -> Column:
    column = schema.column(name)
    if column is None:
        raise bad(field, f"no column {name!r} (columns: {', '.join(schema.names) or 'none'})")
    return column


def filter_value(column: Column, text: str):
    """The filter's text as a value of the column's type (ValueError saying why not)."""
    if column.type in ("string", "date", "timestamp"):
        value = text
    else:
        try:
            value = json.loads(text)
        except ValueError:
            raise ValueError(f"expected a {column.type} value, got {text!r}") from None
    value = coerce_value(value, Column(column.name, column.type, True))
    return encode_list(value) if element_type(column.type) else value


def page_query(params, schema: Schema) -> PageQuery:
    page = _int(params, "page", 1, 1)
    page_size = _int(params, "page_size", DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE)
    sort = params.get("sort") or None
    if sort is not None and sort != SORT_WEIGHT:
        _column(schema, "sort", sort)
    desc_text = (params.get("desc") or "0").lower()
    if desc_text not in ("0", "1", "true", "false"):
        raise bad("desc", f"expected 1 or 0, got {params.get('desc')!r}")
    filters = []
    raw = params.getlist("filter") if hasattr(params, "getlist") else params.get("filter", [])
    if len(raw) > MAX_FILTERS:
        raise bad("filter", f"at most {MAX_FILTERS} filters")
    for item in raw:
        name, colon, text = item.partition(":")
        if not colon:
            raise bad("filter", f"expected column:value, got {item!r}")
        column = _column(schema, "filter", name)
        try:
            filters.append((name, text, filter_value(column, text)))
        except ValueError as e:
            raise bad("filter", f"column {name!r}: {e}") from None
    q = params.get("q") or ""
    if len(q) > MAX_SEARCH_CHARS:
        raise bad("q", f"at most {MAX_SEARCH_CHARS} characters")
    sign = params.get("sign") or None
    if sign is not None and sign not in SIGNS:
        raise bad("sign", f"expected positive or negative, got {sign!r}")
    return PageQuery(page, page_size, sort, desc_text in ("1", "true"), tuple(filters), q, sign)


def _mask(table: pa.Table, query: PageQuery, schema: Schema):
    conditions = []
    for name, _, value in query.filters:
        column = table[name]
        conditions.append(pc.is_null(column) if value is None
                          else pc.equal(column, pa.scalar(value, arrow_type(schema.column(name).type))))
    if query.sign:
        conditions.append(pc.greater(table[WEIGHT], 0) if query.sign == "positive" else pc.less(table[WEIGHT], 0))
    if query.q:
        found = None
        for name in schema.names:
            text = table[name] if table.schema.field(name).type == pa.string() else pc.cast(table[name], pa.string())
            hit = pc.fill_null(pc.match_substring(text, query.q, ignore_case=True), False)
            found = hit if found is None else pc.or_(found, hit)
        conditions.append(found if found is not None else pa.repeat(False, table.num_rows))
    mask = None
    for c in conditions:
        mask = c if mask is None else pc.and_(mask, c)
    return mask


class _Orders:
    """The last few (table, query) -> row order computed: scrolling through one sorted
    or filtered state reads page after page without sorting it again."""

    def __init__(self, size: int = 8):
        self.size, self.items, self.lock = size, OrderedDict(), threading.Lock()

    def get(self, key, compute):
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
        value = compute()
        with self.lock:
            self.items[key] = value
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return value


_orders = _Orders()


def _order(table: pa.Table, query: PageQuery, schema: Schema) -> pa.Array:
    """Row numbers of the rows the query selects, in its order."""
    mask = _mask(table, query, schema)
    indices = pa.array(range(table.num_rows), pa.int64()) if mask is None else pc.indices_nonzero(mask).cast(pa.int64())
    if query.sort:
        column = WEIGHT if query.sort == SORT_WEIGHT else query.sort
        keys = pa.table({"key": pc.take(table[column], indices)})
        order = pc.sort_indices(keys, sort_keys=[("key", "descending" if query.desc else "ascending", "at_end")])
        indices = pc.take(indices, order)
    return indices


def page_of(table: pa.Table, query: PageQuery, schema: Schema, cache_key=None) -> tuple[int, list[dict]]:
    """(rows the query selects, the page's records {"data", "weight"})."""
    if query.selects():
        compute = lambda: _order(table, query, schema)  # noqa: E731
        indices = _orders.get((cache_key, query.selection), compute) if cache_key is not None else compute()
        count = len(indices)
        start = (query.page - 1) * query.page_size
        rows = table.take(indices.slice(start, query.page_size)) if start < count else table.slice(0, 0)
    else:
        count = table.num_rows
        rows = table.slice((query.page - 1) * query.page_size, query.page_size)
    lists = [c.name for c in schema.columns if element_type(c.type)]
    records = []
    for row in rows.to_pylist():
        weight = row.pop(WEIGHT)
        for name in lists:
            row[name] = list(decode_list(row[name])) if row[name] is not None else None
        records.append({"data": {k: to_json_value(v) for k, v in row.items()}, "weight": weight})
    return count, records
