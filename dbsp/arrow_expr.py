"""Expressions evaluated column-at-a-time with Arrow compute, for changes on the driver.

`compile_arrow(expr)` returns a function `table -> Array` (or None when the expression
uses something this form does not cover; the caller then takes the Spark or row-by-row
Python form). Covered: columns and literals of every scalar type (dates and timestamps
too), arithmetic (`%` with the dividend's sign, x % 0 = NULL), comparisons, AND/OR/NOT,
IN, BETWEEN, CASE, LIKE, IS [NOT] DISTINCT FROM, timestamp ± INTERVAL, the casts that
are exact in Arrow (bigint -> double / string, boolean -> string, date <-> timestamp,
date -> string), FORMAT_TIMESTAMP, SPLIT(s, sep)[i] / element_at / cardinality, and the
functions year..second, length, trim, replace, concat, abs, coalesce, greatest, least,
nullif. Not covered (the row form): ILIKE, lower/upper (Arrow's case mapping is not
Python's or Java's), string parsing casts, rounding, substring, lists held as values.
Same semantics as `Expr.to_python` (SQL NULL propagation, three-valued AND/OR/NOT, `/` in
double with x / 0 = NULL), checked equal by tests/dbsp/test_arrow_expr.py and by the
expression fuzzer against DuckDB (tests/dbsp/test_expr_fuzz.py, its Arrow path); bigint
overflow, a double that is not finite, a timestamp outside years 1-9999 and a string
past MAX_STRING_CHARS raise numeric.ValueOutOfRange naming the node, as the row form.
"""
from __future__ import annotations

from typing import Callable

import datetime as dt

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import functions as fns
from .expr import Expr
from .limits import MAX_STRING_CHARS
from .numeric import ValueOutOfRange, check_arrow

_ARROW_TYPES = {"bigint": pa.int64(), "double": pa.float64(), "string": pa.string(), "boolean": pa.bool_(),
                "date": pa.date32(), "timestamp": pa.timestamp("us")}
_TEMPORAL = ("date", "timestamp")
#: Python's datetime range, the row form's: a timestamp ± INTERVAL outside it is an error
_TS_MIN, _TS_MAX = pa.scalar(dt.datetime.min, pa.timestamp("us")), pa.scalar(dt.datetime.max, pa.timestamp("us"))
_FIELDS = {"Y": (pc.year, 4), "m": (pc.month, 2), "d": (pc.day, 2), "H": (pc.hour, 2), "M": (pc.minute, 2), "S": (pc.second, 2)}
_PARTS = {"year": pc.year, "month": pc.month, "day": pc.day, "hour": pc.hour, "minute": pc.minute, "second": pc.second}
#: casts whose Arrow form gives the row form's text / value exactly
_CASTS = {("bigint", "double"), ("bigint", "string"), ("boolean", "string"), ("date", "timestamp"),
          ("timestamp", "date"), ("date", "string")}
_LISTS = ("subscript", "element_at", "cardinality")
_COMPARE = {"=": pc.equal, "<>": pc.not_equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal}
_ARITHMETIC = {"+": pc.add_checked, "-": pc.subtract_checked, "*": pc.multiply_checked}

Value = pa.Array | pa.ChunkedArray | pa.Scalar
Compiled = Callable[[pa.Table], Value]


_NULL_BOOL = pa.scalar(None, pa.bool_())


class _NotCovered(Exception):
    pass


def _bool(value: Value) -> Value:
    """A NULL literal where a boolean is expected."""
    return value.cast(pa.bool_()) if value.type == pa.null() else value


def _column(value: Value, typ: pa.DataType, n: int) -> pa.Array:
    """A value (array, chunked array or scalar) as one array of n values of `typ`."""
    if isinstance(value, pa.Scalar):
        return pa.repeat(value.cast(typ), n) if value.is_valid else pa.nulls(n, typ)
    if isinstance(value, pa.ChunkedArray):
        value = value.combine_chunks()
    return value.cast(typ)


def compile_arrow(expr: Expr) -> Callable[[pa.Table], pa.Array] | None:
    """A vectorised form of `expr`, or None when it is not covered."""
    where = expr.where
    try:
        f = _compile(expr, where)
    except _NotCovered:
        return None
    target = _ARROW_TYPES.get(expr.type, pa.null())

    def evaluate(table: pa.Table) -> pa.Array:
        try:
            return _column(f(table), target, table.num_rows)
        except pa.ArrowInvalid as e:  # the checked integer kernels: bigint overflow
            if "overflow" not in str(e):
                raise
            raise ValueOutOfRange(where, "an arithmetic operator gave a value outside the bigint range (64 bits)") from None

    return evaluate


def _compile(e: Expr, where: str | None) -> Compiled:
    if e.type not in _ARROW_TYPES and e.type != "null":
        raise _NotCovered(e.type)  # a list as a value (JSON text on the driver): the row form
    op = e.op
    if op in _LISTS:
        return _list_function(e, where)
    if op not in ("lit", "is_null", "case", "AND", "OR", "not", "in", "not_distinct") and any(isinstance(a, Expr) and a.type == "null" for a in e.args):
        raise _NotCovered("a NULL operand")  # rare: the row form knows its result is NULL
    args = [_compile(a, where) if isinstance(a, Expr) else a for a in e.args]
    if op == "col":
        name = e.value
        return lambda t: t[name]
    if op == "lit":
        scalar = pa.scalar(e.value, _ARROW_TYPES.get(e.type)) if e.value is not None else pa.scalar(None)
        return lambda t: scalar
    if op == "ts_add":
        f, shift = args[0], pa.scalar(dt.timedelta(microseconds=e.value), pa.duration("us"))

        def ts_add(t):
            x = f(t)
            try:
                out = pc.add_checked(pc.cast(x, pa.timestamp("us")) if e.args[0].type == "date" else x, shift)
            except pa.ArrowInvalid:
                out = None
            if out is None or _outside(out):
                raise ValueOutOfRange(where, "timestamp ± INTERVAL gave a time outside years 1-9999")
            return out

        return ts_add
    if op == "%":
        return _mod(args[0], args[1], e.type)
    if op == "format_ts":
        return _format_timestamp(args[0], e.value, e.args[0].type)
    if op == "fn":
        return _function(e, args, where)
    if op == "neg":
        f = args[0]
        return lambda t: check_arrow(pc.negate_checked(f(t)), e.type, where, "neg")
    if op == "not":
        f = args[0]
        return lambda t: pc.invert(_bool(f(t)))
    if op == "AND":
        f, g = args
        return lambda t: pc.and_kleene(_bool(f(t)), _bool(g(t)))
    if op == "OR":
        f, g = args
        return lambda t: pc.or_kleene(_bool(f(t)), _bool(g(t)))
    if op in _COMPARE:
        if (e.args[0].type in _TEMPORAL or e.args[1].type in _TEMPORAL) and e.args[0].type != e.args[1].type:
            raise _NotCovered("a date against a timestamp")
        f, g, fn = args[0], args[1], _COMPARE[op]
        return lambda t: fn(f(t), g(t))
    if op in _ARITHMETIC:
        f, g, fn = args[0], args[1], _ARITHMETIC[op]
        return lambda t: check_arrow(fn(f(t), g(t)), e.type, where, op)
    if op == "/":
        f, g = args

        def divide(t):
            x, y = pc.cast(f(t), pa.float64()), pc.cast(g(t), pa.float64())
            zero = pc.equal(y, 0.0)
            quotient = pc.if_else(zero, pa.scalar(None, pa.float64()), pc.divide(x, pc.if_else(zero, 1.0, y)))
            return check_arrow(quotient, "double", where, "/")

        return divide
    if op == "cast":
        source = e.args[0].type
        if (source, e.type) not in _CASTS and source != e.type:
            raise _NotCovered(f"CAST {source} AS {e.type}")  # string parsing and rounding: the row form
        f, target = args[0], _ARROW_TYPES[e.type]
        return lambda t: pc.cast(f(t), target)
    if op == "like":
        if e.value:
            raise _NotCovered("ILIKE")  # Arrow's case folding is not Python's / Java's lower()
        f, pattern = args[0], e.args[1].value
        if "\\\\" in pattern:  # Arrow reads an escaped backslash ('%\\\\') otherwise than SQL: the row form
            raise _NotCovered("LIKE with an escaped backslash")
        return lambda t: pc.match_like(f(t), pattern)  # RE2: linear time; '%' and '_' match newlines
    if op == "is_null":
        f = args[0]
        return lambda t: pc.is_null(f(t))
    if op == "not_distinct":  # NULL-safe equality: never NULL
        f, g = args
        typed = [(h, a.type) for h, a in zip(args, e.args) if a.type != "null"]
        if len(typed) < 2:  # against a NULL literal: IS NULL (NULL and NULL: not distinct)
            return (lambda t: pc.is_null(typed[0][0](t))) if typed else (lambda t: pa.scalar(True))

        def not_distinct(t):
            x, y = f(t), g(t)
            x_null, y_null = pc.is_null(x), pc.is_null(y)
            either = pc.or_(x_null, y_null)
            return pc.if_else(either, pc.and_(x_null, y_null), pc.fill_null(pc.equal(x, y), False))

        return not_distinct
    if op == "in":
        items = e.args[1:]
        item_type = _ARROW_TYPES.get(e.args[0].type)
        if item_type is None or not all(i.op == "lit" for i in items) or (
                e.args[0].type in _TEMPORAL and any(i.type not in (e.args[0].type, "null") for i in items)):
            raise _NotCovered("IN over expressions")
        f = args[0]
        value_set = pa.array([i.value for i in items if i.value is not None], item_type)
        has_null = len(value_set) < len(items)

        def in_(t):
            x = f(t)
            found = pc.if_else(pc.is_null(x), _NULL_BOOL, pc.is_in(x, value_set=value_set))
            return pc.if_else(found, True, _NULL_BOOL) if has_null else found  # x IN (.., NULL): TRUE or NULL

        return in_
    if op == "between":
        if len({a.type for a in e.args} & set(_TEMPORAL)) and len({a.type for a in e.args}) > 1:
            raise _NotCovered("a date against a timestamp")
        f, lo, hi = args

        def between(t):
            x = f(t)
            return pc.and_kleene(pc.greater_equal(x, lo(t)), pc.less_equal(x, hi(t)))

        return between
    if op == "case":
        conds, values, default = args[0:-1:2], args[1:-1:2], args[-1]
        target = _ARROW_TYPES.get(e.type)
        if target is None:
            raise _NotCovered("CASE of NULLs")
        names = [f"c{i}" for i in range(len(conds))]

        def case(t):
            whens = [pc.fill_null(_column(c(t), pa.bool_(), t.num_rows), False) for c in conds]
            thens = [_column(v(t), target, t.num_rows) for v in values]
            return pc.case_when(pa.StructArray.from_arrays(whens, names), *thens, _column(default(t), target, t.num_rows))

        return case
    raise _NotCovered(op)


def _outside(ts: Value) -> bool:
    """Any timestamp outside Python's (the row form's) years 1-9999."""
    low, high = pc.min_max(ts).values() if not isinstance(ts, pa.Scalar) else (ts, ts)
    return low.is_valid and (pc.less(low, _TS_MIN).as_py() or pc.greater(high, _TS_MAX).as_py())


def _array(value: Value, n: int) -> pa.Array:
    if isinstance(value, pa.Scalar):
        return pa.repeat(value, n) if value.is_valid else pa.nulls(n, value.type)
    return value.combine_chunks() if isinstance(value, pa.ChunkedArray) else value


def _mod(f: Compiled, g: Compiled, typ: str) -> Compiled:
    """x % y as the row form: the dividend's sign (C's fmod), x % 0 = NULL; in double when
    either side is (math.fmod), else bigint (MIN % -1 = 0)."""
    target = _ARROW_TYPES[typ]
    dtype = np.float64 if typ == "double" else np.int64

    def mod(t):
        n = t.num_rows
        x, y = (_array(pc.cast(h(t), target), n) for h in (f, g))
        valid = pc.and_(pc.and_(pc.is_valid(x), pc.is_valid(y)), pc.fill_null(pc.not_equal(y, 0), False))
        xs = pc.fill_null(x, 0).to_numpy(zero_copy_only=False).astype(dtype, copy=False)
        ys = pc.fill_null(pc.if_else(valid, y, pa.scalar(1, target)), 1).to_numpy(zero_copy_only=False).astype(dtype, copy=False)
        if typ == "bigint":
            ys = np.where(ys == -1, 1, ys)  # x % -1 = 0 (and MIN % -1 would trap)
        out = np.fmod(xs, ys)
        return pc.if_else(valid, pa.array(out, target), pa.scalar(None, target))

    return mod


def _temporal_part(fn, x: Value, source: str) -> Value:
    """year .. second of a date or timestamp (a date's time is midnight), as bigint."""
    if source == "date":
        x = pc.cast(x, pa.timestamp("us"))
    return pc.cast(fn(x), pa.int64())


def _format_timestamp(f: Compiled, parts: tuple, source: str) -> Compiled:
    """FORMAT_TIMESTAMP's whitelisted fields, each zero-padded as the row form's f"{:02d}"."""

    def format_ts(t):
        x = f(t)
        pieces = []
        for p in parts:
            if isinstance(p, tuple):
                fn, width = _FIELDS[p[1]]
                pieces.append(pc.utf8_lpad(pc.cast(_temporal_part(fn, x, source), pa.string()), width=width, padding="0"))
            else:
                pieces.append(pa.scalar(p, pa.string()))
        if not any(not isinstance(p, pa.Scalar) for p in pieces):  # a format of literal text only
            pieces.append(pc.if_else(pc.is_valid(_array(x, t.num_rows)), "", pa.scalar(None, pa.string())))
        return pc.binary_join_element_wise(*pieces, "")

    return format_ts


def _bounded(out: Value, where, name: str) -> Value:
    """A string result, or the row form's error when one is past MAX_STRING_CHARS."""
    longest = pc.max(pc.utf8_length(out)) if not isinstance(out, pa.Scalar) else pc.utf8_length(out)
    if longest.is_valid and longest.as_py() > MAX_STRING_CHARS:
        raise fns._too_long(where, name, longest.as_py())
    return out


def _literal(e: Expr) -> Expr:
    """A literal under casts to its own type (a UDF's CHAR parameter: CAST('c' AS VARCHAR))."""
    while e.op == "cast" and e.type == e.args[0].type:
        e = e.args[0]
    return e


def _function(e: Expr, args: list, where) -> Compiled:
    name, types = e.value, [a.type for a in e.args]
    if name in _PARTS:
        f, fn = args[0], _PARTS[name]
        return lambda t: _temporal_part(fn, f(t), types[0])
    if name == "length":
        f = args[0]
        return lambda t: pc.cast(pc.utf8_length(f(t)), pa.int64())
    if name == "trim":
        f = args[0]
        return lambda t: pc.utf8_trim(f(t), characters=" ")
    if name == "replace":
        literals = [_literal(a) for a in e.args[1:]]
        if any(a.op != "lit" for a in literals):
            raise _NotCovered("replace() of a pattern that is not a literal")
        f, pattern, replacement = args[0], literals[0].value, literals[1].value
        if pattern == "":
            return f  # as the row form: nothing to replace
        return lambda t: _bounded(pc.replace_substring(f(t), pattern=pattern, replacement=replacement), where, "replace")
    if name == "concat":
        return lambda t: _bounded(pc.binary_join_element_wise(*[h(t) for h in args], ""), where, "concat")
    if name == "abs":
        f = args[0]
        return lambda t: check_arrow(pc.abs_checked(f(t)), e.type, where, "abs")
    if name in ("coalesce", "greatest", "least", "nullif"):
        target = _ARROW_TYPES.get(e.type)
        if target is None or any(a.type not in (e.type, "null") and (a.type, e.type) != ("bigint", "double") for a in e.args):
            raise _NotCovered(f"{name}() of mixed types")
        fs = args

        def typed(t):
            return [_array(pc.cast(h(t), target), t.num_rows) for h in fs]

        if name == "coalesce":
            return lambda t: pc.coalesce(*typed(t))
        if name in ("greatest", "least"):
            fn = pc.max_element_wise if name == "greatest" else pc.min_element_wise
            return lambda t: fn(*typed(t), skip_nulls=True)

        def nullif(t):
            a, b = typed(t)
            return pc.if_else(pc.fill_null(pc.equal(a, b), False), pa.scalar(None, target), a)

        return nullif
    raise _NotCovered(f"{name}()")


def _list_function(e: Expr, where) -> Compiled:
    """SPLIT(s, sep)[i], element_at(SPLIT(s, sep), i) and cardinality(SPLIT(s, sep)): the
    list is split by Arrow and indexed through its offsets, never made a value (a list
    held as a value is JSON text on the driver: the row form)."""
    xs = e.args[0]
    if xs.op != "split":
        raise _NotCovered("a list that is not SPLIT(...)")
    s, separator = _compile(xs.args[0], where), xs.value

    def lists(t) -> pa.ListArray:
        out = pc.split_pattern(_array(pa.scalar(None, pa.string()) if xs.args[0].type == "null" else s(t), t.num_rows),
                               pattern=separator)
        return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out

    if e.op == "cardinality":
        return lambda t: pc.cast(pc.list_value_length(lists(t)), pa.int64())
    if e.args[1].type != "bigint":
        raise _NotCovered("a NULL index")
    index, from_end = _compile(e.args[1], where), e.op == "element_at"

    def element(t):
        ls = lists(t)
        if ls.offset:
            ls = pa.concat_arrays([ls])  # offsets from 0
        n = len(ls)
        i = _array(pc.cast(index(t), pa.int64()), n)
        offsets = ls.offsets.to_numpy()
        lengths = np.diff(offsets).astype(np.int64)
        k = pc.fill_null(i, 0).to_numpy(zero_copy_only=False)
        position = np.where(k > 0, k - 1, lengths + k) if from_end else k - 1  # element_at(xs, -1): the last
        ok = (position >= 0) & (position < lengths) & (k != 0)
        valid = pc.and_(pc.and_(pc.is_valid(ls), pc.is_valid(i)), pa.array(ok))
        at = np.where(ok, offsets[:-1] + np.where(ok, position, 0), 0)
        values = ls.values
        taken = values.take(pa.array(at)) if len(values) else pa.nulls(n, pa.string())
        return pc.if_else(valid, taken, pa.scalar(None, pa.string()))

    return element
