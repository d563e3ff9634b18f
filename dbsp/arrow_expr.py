"""Expressions evaluated column-at-a-time with Arrow compute, for changes on the driver.

`compile_arrow(expr)` returns a function `table -> Array` (or None when the expression
uses something this form does not cover: casts, ILIKE, %, functions, dates and
timestamps; the caller then takes the Spark or row-by-row Python form). Same semantics
as `Expr.to_python` (SQL NULL propagation, three-valued AND/OR/NOT, `/` in double with
x / 0 = NULL), checked equal by tests/dbsp/test_arrow_expr.py; bigint overflow and a
double that is not finite raise numeric.ValueOutOfRange naming the node (dbsp.numeric).
"""
from __future__ import annotations

from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc

from .expr import Expr
from .numeric import ValueOutOfRange, check_arrow

_ARROW_TYPES = {"bigint": pa.int64(), "double": pa.float64(), "string": pa.string(), "boolean": pa.bool_()}
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
        raise _NotCovered(e.type)  # dates and timestamps: the row form
    op = e.op
    if op not in ("lit", "is_null", "case", "AND", "OR", "not", "in", "not_distinct") and any(isinstance(a, Expr) and a.type == "null" for a in e.args):
        raise _NotCovered("a NULL operand")  # rare: the row form knows its result is NULL
    args = [_compile(a, where) if isinstance(a, Expr) else a for a in e.args]
    if op == "col":
        name = e.value
        return lambda t: t[name]
    if op == "lit":
        scalar = pa.scalar(e.value, _ARROW_TYPES.get(e.type)) if e.value is not None else pa.scalar(None)
        return lambda t: scalar
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
        if (source, e.type) not in (("bigint", "double"), (e.type, e.type)):
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
        if item_type is None or not all(i.op == "lit" for i in items):
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
