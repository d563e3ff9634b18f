"""The expression language: SQL-style expressions over a row, never eval'd, never raw SQL.

`parse_expression(text, schema)` parses with sqlglot (a real SQL parser), then walks
its tree, accepting only whitelisted node types into this module's own tree (`Expr`),
type-checking against the input schema as it goes. Anything else (sub-queries, unknown
functions, statements, `;`) is rejected with the character position where it starts.
An `Expr` compiles to a Spark Column (`to_spark`) and to a Python function of a row
tuple with SQL null semantics (`to_python`), the reference evaluator's form.

Supported: column references, number/string/boolean/NULL literals, + - * / %,
unary minus, = <> != < <= > >=, AND OR NOT (three-valued), IS [NOT] NULL,
IS [NOT] DISTINCT FROM (and <=>: NULL-safe, never NULL), IS [NOT] TRUE / FALSE,
[NOT] IN (values...), [NOT] BETWEEN, CASE (searched and simple), [NOT] LIKE / ILIKE
(of a literal pattern, matched in linear time: dbsp.functions),
CAST / :: (NULL when a value does not convert), and the functions of dbsp.functions
(lower, upper, length, trim, abs, floor, ceil, round, substring, replace, concat / ||,
year, month, day, hour, minute, second, coalesce, greatest, least, nullif),
FORMAT_TIMESTAMP('<strftime format>', t) (fields %Y %m %d %H %M %S and %%), SPLIT(s,
'<separator>') (a list of strings; the separator a non-empty literal, matched as text),
and for lists (array<T>) cardinality / array_size, array_contains, element_at (1-based;
negative counts from the end; out of range is NULL) and xs[i] (1-based; below 1 or past
the end is NULL, as Feldera's); lists cannot be compared. Division is always double;
x / 0 and x % 0 are NULL (as Spark's try_divide / try_mod). Dates and timestamps
compare with ISO strings. `ts ± INTERVAL 'n' SECOND` (MICROSECOND .. DAY; months and
years have no fixed length) shifts a timestamp by whole microseconds.

Every argument sqlglot sets on a node is either read into the tree or refused
(`_READS`): `s NOT LIKE p` comes as a Like node with `negate` set, and a builder that
read only `this` and `expression` silently evaluated `s LIKE p`. The same holds for
BETWEEN SYMMETRIC, TRIM(LEADING 'x' FROM s), floor(x, 2), CAST ... FORMAT, and any
argument a later sqlglot adds.
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, replace

import sqlglot
from sqlglot import exp

from . import functions as fns
from . import limits, numeric
from .errors import ExpressionError
from .types import BIGINT_MAX, BIGINT_MIN, NUMERIC, Schema, decode_list, element_type

COMPARISONS = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
ARITHMETIC = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%"}
LOGICAL = {exp.And: "AND", exp.Or: "OR"}


@dataclass(frozen=True)
class Expr:
    """A node of the whitelisted tree: op, operands, and its inferred SQL type."""

    op: str
    args: tuple
    type: str
    value: object = None  # literal value or column name
    where: str | None = None  # on the root: who evaluates it, for runtime errors ("node 'id' (map)")

    # ---- Spark ---------------------------------------------------------------------
    def to_spark(self, where: str | None = None):
        from pyspark.sql import functions as F

        where = where or self.where
        if self.op in _LIST_FUNCTIONS:  # a list made here (SPLIT) is used as Spark's array, not its JSON text
            array = _spark_array(self.args[0], where)
            a = [array] + [x.to_spark(where) for x in self.args[1:]]
        else:
            a = [x.to_spark(where) if isinstance(x, Expr) else x for x in self.args]
        if self.op in ("not", "AND", "OR", "case"):  # a NULL literal where Spark wants a boolean: typed
            conditions = range(len(a)) if self.op != "case" else range(0, len(a) - 1, 2)
            a = [x.cast("boolean") if i in conditions and self.args[i].type == "null" else x for i, x in enumerate(a)]
        match self.op:
            case "col":
                return F.col(self.value)
            case "lit":
                return fns.spark_lit(self.value)
            case "neg":
                if self.type == "bigint":
                    return numeric.spark_checked_bigint(F.try_subtract(F.lit(0), a[0]), [a[0]], where, "neg")
                return numeric.spark_checked(-a[0], self.type, where, "neg")
            case "ts_add":
                return F.timestamp_micros(F.unix_micros(a[0]) + F.lit(self.value))
            case "not":
                return ~a[0]
            case "AND":
                return a[0] & a[1]
            case "OR":
                return a[0] | a[1]
            case "=":
                return a[0] == a[1]
            case "<>":
                return a[0] != a[1]
            case "<":
                return a[0] < a[1]
            case "<=":
                return a[0] <= a[1]
            case ">":
                return a[0] > a[1]
            case ">=":
                return a[0] >= a[1]
            case "+" | "-" | "*" if self.type == "bigint":  # try_*: NULL on overflow, then named
                result = {"+": F.try_add, "-": F.try_subtract, "*": F.try_multiply}[self.op](a[0], a[1])
                return numeric.spark_checked_bigint(result, a, where, self.op)
            case "+":
                return numeric.spark_checked(a[0] + a[1], self.type, where, "+")
            case "-":
                return numeric.spark_checked(a[0] - a[1], self.type, where, "-")
            case "*":
                return numeric.spark_checked(a[0] * a[1], self.type, where, "*")
            case "/":
                return numeric.spark_checked(F.try_divide(a[0].cast("double"), a[1].cast("double")), "double", where, "/")
            case "%":
                return F.try_mod(a[0], a[1])
            case "is_null":
                return a[0].isNull()
            case "not_distinct":
                return a[0].eqNullSafe(a[1])
            case "in":
                return a[0].isin(*a[1:])
            case "between":
                return (a[0] >= a[1]) & (a[0] <= a[2])
            case "case":
                out = None
                for cond, val in zip(a[0:-1:2], a[1:-1:2]):
                    out = F.when(cond, val) if out is None else out.when(cond, val)
                return out.otherwise(a[-1])
            case "like":
                return fns.spark_like(a[0], self.args[1].value, self.value)
            case "cast":
                if element_type(self.type) is not None:  # NULL or the same list type: its physical form
                    return a[0].cast("string")
                return fns.spark_cast(a[0], self.args[0].type, self.type)
            case "cardinality":  # lists are JSON text in Spark (types.encode_list): a[0] is the array
                return F.when(a[0].isNotNull(), F.size(a[0]).cast("bigint"))
            case "array_contains":
                return F.array_contains(a[0], a[1])
            case "element_at":
                index = a[1].try_cast("int")  # Spark's index is an int; beyond it, out of range: NULL
                return F.when(a[1] != 0, F.try_element_at(a[0], index))
            case "subscript":
                return F.when(a[1] >= 1, F.try_element_at(a[0], a[1].try_cast("int")))
            case "split":
                return fns.spark_json_strings(_spark_split(self, where))
            case "format_ts":
                return F.date_format(a[0], fns.spark_timestamp_pattern(self.value))
            case "fn":
                fn = fns.FUNCTIONS[self.value]
                if self.value == "round":
                    return fn.spark(a[0], self.args[1].value if len(a) > 1 else None)
                if self.value in fns.CHECKED:  # may overflow or grow a string: named errors
                    return fns.CHECKED[self.value].spark(a, [x.type for x in self.args], where)
                return fn.spark(*a)
        raise ExpressionError(f"cannot compile {self.op!r}")

    # ---- Python (reference evaluator) ------------------------------------------------
    def to_python(self, schema: Schema):
        """A function row_tuple -> value, with SQL three-valued logic and NULL propagation."""
        index = {c.name: i for i, c in enumerate(schema.columns)}
        return _py(self, index, self.where)


def _spark_split(e: Expr, where):
    from pyspark.sql import functions as F

    return F.split(e.args[0].to_spark(where), fns.java_regex_literal(e.value), -1)


def _spark_array(e: Expr, where):
    """A list expression as a Spark array: SPLIT's own array, else the JSON text read back."""
    from pyspark.sql import functions as F

    if e.op == "split":
        return _spark_split(e, where)
    return F.from_json(e.to_spark(where), e.type)


_INTERVAL_UNITS = {"MICROSECOND": 1, "MILLISECOND": 1_000, "SECOND": 1_000_000, "MINUTE": 60_000_000,
                   "HOUR": 3_600_000_000, "DAY": 86_400_000_000}


def _shift(x, micros: int, where):
    try:
        return x + dt.timedelta(microseconds=micros)
    except OverflowError:
        raise numeric.ValueOutOfRange(where, "timestamp ± INTERVAL gave a time outside years 1-9999") from None


def _py(e: Expr, index: dict[str, int], where: str | None):
    args = [_py(x, index, where) if isinstance(x, Expr) else x for x in e.args]
    op = e.op
    if op == "col":
        i = index[e.value]
        return lambda r: r[i]
    if op == "lit":
        v = e.value
        return lambda r: v
    if op == "ts_add":
        f, micros = args[0], e.value
        return lambda r: None if (x := f(r)) is None else _shift(x, micros, where)
    if op == "neg":
        f, typ = args[0], e.type
        return lambda r: None if (x := f(r)) is None else numeric.check_number(-x, typ, where, "neg")
    if op == "not":
        f = args[0]
        return lambda r: None if (x := f(r)) is None else not x
    if op == "AND":
        f, g = args

        def and_(r):
            x, y = f(r), g(r)
            if x is False or y is False:
                return False
            return None if x is None or y is None else True

        return and_
    if op == "OR":
        f, g = args

        def or_(r):
            x, y = f(r), g(r)
            if x is True or y is True:
                return True
            return None if x is None or y is None else False

        return or_
    if op in ("+", "-", "*", "/"):
        f, g, fn, typ = args[0], args[1], _BINARY[op], e.type

        def arithmetic(r):
            x, y = f(r), g(r)
            return None if x is None or y is None else numeric.check_number(fn(x, y), typ, where, op)

        return arithmetic
    if op in ("=", "<>", "<", "<=", ">", ">=", "%"):
        f, g = args
        fn = _BINARY[op]

        def binary(r):
            x, y = f(r), g(r)
            return None if x is None or y is None else fn(x, y)

        return binary
    if op == "is_null":
        f = args[0]
        return lambda r: f(r) is None
    if op == "not_distinct":  # NULL-safe equality: two NULLs are not distinct, a NULL and a value are
        f, g, eq = args[0], args[1], _BINARY["="]

        def not_distinct(r):
            x, y = f(r), g(r)
            return x is None and y is None if x is None or y is None else eq(x, y)

        return not_distinct
    if op == "in":
        f, items = args[0], args[1:]

        def in_(r):
            x = f(r)
            if x is None:
                return None
            values = [g(r) for g in items]
            if x in [v for v in values if v is not None]:
                return True
            return None if None in values else False

        return in_
    if op == "between":
        f, lo, hi = args
        ge, le = _BINARY[">="], _BINARY["<="]

        def between(r):
            x, a, b = f(r), lo(r), hi(r)
            left = None if x is None or a is None else ge(x, a)
            right = None if x is None or b is None else le(x, b)
            if left is False or right is False:
                return False
            return None if left is None or right is None else True

        return between
    if op == "case":
        pairs, default = list(zip(args[0:-1:2], args[1:-1:2])), args[-1]

        def case(r):
            for cond, val in pairs:
                if cond(r) is True:
                    return val(r)
            return default(r)

        return case
    if op == "like":
        f, pattern, insensitive = args[0], e.args[1].value, e.value
        return lambda r: fns.python_like(f(r), pattern, insensitive)
    if op == "cast":
        f, source, target = args[0], e.args[0].type, e.type
        return lambda r: fns.python_cast(f(r), source, target)
    if op == "split":
        f, separator = args[0], e.value

        def split(r):
            x = f(r)
            return None if x is None else tuple(x.split(separator))

        return split
    if op == "format_ts":
        f, parts = args[0], e.value

        def format_ts(r):
            x = f(r)
            return None if x is None else fns.python_format_timestamp(parts, x)

        return format_ts
    if op in _LIST_FUNCTIONS:
        f, rest, impl = args[0], args[1:], _LIST_FUNCTIONS[op]

        def list_fn(r):
            xs = decode_list(f(r))  # a tuple, or the JSON text a driver-side Arrow row carries
            values = [g(r) for g in rest]
            return None if xs is None or None in values else impl(xs, *values)

        return list_fn
    if op == "fn":
        fn = fns.FUNCTIONS[e.value]
        fs = args
        if e.value in fns.CHECKED:  # may overflow or grow a string: named errors
            checked, types = fns.CHECKED[e.value].python, [x.type for x in e.args]

            def call_checked(r):
                values = [f(r) for f in fs]
                return None if any(v is None for v in values) else checked(values, types, where)

            return call_checked

        def call(r):
            values = [f(r) for f in fs]
            if fn.null_propagates and any(v is None for v in values):
                return None
            return fn.python(*values)

        return call
    raise ExpressionError(f"cannot evaluate {op!r}")


def _array_contains(xs: tuple, x):
    if x in [v for v in xs if v is not None]:
        return True
    return None if None in xs else False  # as SQL: not found among NULLs is unknown


def _element_at(xs: tuple, i: int):
    if i == 0 or abs(i) > len(xs):
        return None
    return xs[i - 1] if i > 0 else xs[i]


def _subscript(xs: tuple, i: int):
    return xs[i - 1] if 1 <= i <= len(xs) else None


_LIST_FUNCTIONS = {"cardinality": lambda xs: len(xs), "array_contains": _array_contains, "element_at": _element_at,
                   "subscript": _subscript}


def _div(x, y):
    return None if y == 0 else float(x) / float(y)


def _mod(x, y):
    if y == 0:
        return None
    if isinstance(x, float) or isinstance(y, float):
        return math.fmod(x, y)
    return int(math.copysign(abs(x) % abs(y), x))  # sign of the dividend, as SQL


_BINARY = {
    "=": lambda x, y: x == y,
    "<>": lambda x, y: x != y,
    "<": lambda x, y: x < y,
    "<=": lambda x, y: x <= y,
    ">": lambda x, y: x > y,
    ">=": lambda x, y: x >= y,
    "+": lambda x, y: x + y,
    "-": lambda x, y: x - y,
    "*": lambda x, y: x * y,
    "/": _div,
    "%": _mod,
}


# ---- parsing and type checking --------------------------------------------------------
def _position(node: exp.Expression) -> int | None:
    for n in node.walk(bfs=False):
        start = n.meta.get("start") if n.meta else None
        if start is not None:
            return start
    return None


def _comparable(a: Expr, b: Expr) -> tuple[Expr, Expr]:
    """Check two operands can be compared; turn an ISO string literal into a date/timestamp."""
    for x, y in ((a, b), (b, a)):
        if x.type in ("date", "timestamp") and y.op == "lit" and y.type == "string":
            parse = dt.date.fromisoformat if x.type == "date" else dt.datetime.fromisoformat
            try:
                converted = Expr("lit", (), x.type, parse(y.value))
            except ValueError:
                raise ExpressionError(f"{y.value!r} is not a valid {x.type}") from None
            return (x, converted) if x is a else (converted, x)
    ta, tb = a.type, b.type
    for t in (ta, tb):
        if element_type(t) is not None:
            raise ExpressionError(f"cannot compare lists ({t}); use cardinality(), array_contains() or element_at()")
    if "null" in (ta, tb) or ta == tb or (ta in NUMERIC and tb in NUMERIC):
        return a, b
    raise ExpressionError(f"cannot compare {ta} with {tb}")


# The sqlglot arguments the builder reads, per node class. Any other argument set on a
# node changes what the text means, so the node is refused: `_TOLERATED` lists the
# arguments sqlglot sets to a value that means what the builder already does.
_BINARY_READS = {"this", "expression"}
_READS: dict[type, set[str]] = {
    exp.Paren: {"this"}, exp.Column: {"this"}, exp.Literal: {"this", "is_string"}, exp.Boolean: {"this"},
    exp.Null: set(), exp.Neg: {"this"}, exp.Not: {"this"}, exp.Is: {"this", "expression", "negate"},
    exp.In: {"this", "expressions"}, exp.Between: {"this", "low", "high"}, exp.Case: {"this", "ifs", "default"},
    exp.If: {"this", "true"}, exp.Like: {"this", "expression", "negate"}, exp.ILike: {"this", "expression", "negate"},
    exp.Cast: {"this", "to"}, exp.TryCast: {"this", "to"}, exp.NullSafeEQ: _BINARY_READS, exp.NullSafeNEQ: _BINARY_READS,
    exp.ArraySize: {"this"}, exp.ArrayContains: _BINARY_READS, exp.Anonymous: {"this", "expressions"},
    **{cls: _BINARY_READS for cls in (*COMPARISONS, *ARITHMETIC, *LOGICAL)},
    **{getattr(exp, name): {"this", "expressions"} for name in fns.SQLGLOT_NAMES},
}
_READS[exp.Split] = _BINARY_READS
_READS[exp.Bracket] = {"this", "expressions"}
_READS[exp.Round] = {"this", "decimals"}
_READS[exp.Substring] = {"this", "start", "length"}
_READS[exp.Replace] = {"this", "expression", "replacement"}
_READS[exp.DPipe] = _READS[exp.Nullif] = _BINARY_READS
_TOLERATED: dict[str, object] = {
    "negate": False, "safe": True,  # DPipe, Concat, TryCast: NULL in, NULL out; TRY_CAST is NULL when it fails
    "coalesce": False,  # Concat: NULLs are not skipped
    "ignore_nulls": True,  # GREATEST / LEAST skip NULLs (Spark's, the engine's)
    "is_nvl": True, "is_null": False,  # NVL / IFNULL are COALESCE
    "typed": False,  # Div: the engine's / is double division (and x / 0 is NULL)
    "check_null": False, "ensure_variant": False, "nested": False, "zero_start": False,
}
_ARGUMENT_NAMES = {
    "symmetric": "BETWEEN SYMMETRIC", "position": "LEADING / TRAILING",
    "format": "a FORMAT", "decimals": "a number of decimals", "truncate": "truncation",
    "binary": "a binary length", "encoding": "an encoding", "collation": "a collation",
    "table": "a qualified column", "query": "a subquery", "unnest": "UNNEST", "default": "a DEFAULT",
}


class _Builder:
    def __init__(self, text: str, schema: Schema):
        self.text = text
        self.schema = schema

    def fail(self, message: str, node: exp.Expression):
        raise ExpressionError(message, _position(node))

    def check_arguments(self, node: exp.Expression) -> None:
        """Refuse a node carrying an argument the builder does not read (see `_READS`)."""
        reads = _READS.get(type(node))
        if reads is None:
            return  # not an accepted node: refused below, naming it
        unread = []
        for key, value in node.args.items():
            if key in reads or key.startswith("_") or value is None or value is False or value == []:
                continue
            if key in _TOLERATED and value == _TOLERATED[key]:
                continue
            if isinstance(node, exp.Column) and key == "table":
                continue  # refused below with its own hint
            what = _ARGUMENT_NAMES.get(key)
            if isinstance(node, exp.Trim) and key == "expression":
                what = "characters to trim"
            unread.append(what or f"{key} {value.sql() if isinstance(value, exp.Expression) else value!r}")
        if unread:
            name = node.sql_name() if isinstance(node, exp.Func) and not isinstance(node, exp.Anonymous) else _sql_name(node)
            self.fail(f"{name} with {' and '.join(sorted(unread))} is not supported", node)

    def build(self, node: exp.Expression) -> Expr:
        self.check_arguments(node)
        if isinstance(node, exp.Paren):
            return self.build(node.this)
        if isinstance(node, exp.Column):
            if node.table:
                self.fail(f"qualified column {node.sql()!r} is not supported; use the column name", node)
            name = node.name
            col = self.schema.column(name)
            if col is None:
                self.fail(f"unknown column {name!r} (columns: {', '.join(self.schema.names)})", node)
            return Expr("col", (), col.type, name)
        if isinstance(node, exp.Literal):
            if node.is_string:
                return Expr("lit", (), "string", node.this)
            text = node.this
            if text.isdigit():  # sqlglot gives digits; a sign is a unary minus around them
                if len(text.lstrip("0")) > 19 or int(text) > BIGINT_MAX + 1:
                    hint = f"; write it as a double, e.g. {text}.0" if len(text) < 300 else ""
                    self.fail(f"the number {_abridged(text)} is outside the bigint range (64 bits){hint}", node)
                value = int(text)
                if value == BIGINT_MAX + 1 and not isinstance(node.parent, exp.Neg):
                    self.fail(f"the number {text} is outside the bigint range (64 bits)", node)
                return Expr("lit", (), "bigint", value)
            value = float(text)
            if not math.isfinite(value):
                self.fail(f"the number {_abridged(text)} is outside the double range (about ±1.8e308)", node)
            return Expr("lit", (), "double", value)
        if isinstance(node, exp.Boolean):
            return Expr("lit", (), "boolean", bool(node.this))
        if isinstance(node, exp.Null):
            return Expr("lit", (), "null", None)
        if isinstance(node, exp.Neg):
            inner = self.build(node.this)
            if inner.type not in NUMERIC + ("null",):
                self.fail(f"unary minus needs a number, got {inner.type}", node)
            if inner.op == "lit" and inner.value == BIGINT_MAX + 1:  # -9223372036854775808
                return Expr("lit", (), "bigint", BIGINT_MIN)
            return Expr("neg", (inner,), inner.type)
        if isinstance(node, exp.Not):
            inner = self.build(node.this)
            if inner.type not in ("boolean", "null"):
                self.fail(f"NOT needs a boolean, got {inner.type}", node)
            return Expr("not", (inner,), "boolean")
        if type(node) in LOGICAL:
            a, b = self.build(node.this), self.build(node.expression)
            for side in (a, b):
                if side.type not in ("boolean", "null"):
                    self.fail(f"{LOGICAL[type(node)]} needs booleans, got {side.type}", node)
            return Expr(LOGICAL[type(node)], (a, b), "boolean")
        if type(node) in COMPARISONS:
            try:
                a, b = _comparable(self.build(node.this), self.build(node.expression))
            except ExpressionError as e:
                raise ExpressionError(str(e), e.position if e.position is not None else _position(node)) from None
            return Expr(COMPARISONS[type(node)], (a, b), "boolean")
        if isinstance(node, (exp.Add, exp.Sub)) and (isinstance(node.expression, exp.Interval) or
                                                     (isinstance(node, exp.Add) and isinstance(node.this, exp.Interval))):
            moment, interval = (node.this, node.expression) if isinstance(node.expression, exp.Interval) else (node.expression, node.this)
            ts = self.build(moment)
            if ts.type not in ("timestamp", "null"):
                self.fail(f"'{ARITHMETIC[type(node)]} INTERVAL' needs a timestamp, got {ts.type}", node)
            micros = self.interval(interval)
            return Expr("ts_add", (ts,), "timestamp", -micros if isinstance(node, exp.Sub) else micros)
        if type(node) in ARITHMETIC:
            op = ARITHMETIC[type(node)]
            a, b = self.build(node.this), self.build(node.expression)
            for side in (a, b):
                if side.type not in NUMERIC + ("null",):
                    self.fail(f"'{op}' needs numbers, got {side.type}", node)
            if op == "/" or "double" in (a.type, b.type):
                result = "double"
            else:
                result = "bigint"
            return Expr(op, (a, b), result)
        if isinstance(node, exp.Is):
            subject = self.build(node.this)
            if isinstance(node.expression, exp.Null):
                test = Expr("is_null", (subject,), "boolean")
            elif isinstance(node.expression, exp.Boolean):  # x IS TRUE: x IS NOT DISTINCT FROM TRUE
                if subject.type not in ("boolean", "null"):
                    self.fail(f"IS {'TRUE' if node.expression.this else 'FALSE'} needs a boolean, got {subject.type}", node)
                test = Expr("not_distinct", (subject, Expr("lit", (), "boolean", bool(node.expression.this))), "boolean")
            else:
                self.fail("IS takes NULL, TRUE, FALSE or DISTINCT FROM (x IS NOT NULL, x IS TRUE, x IS DISTINCT FROM y)", node)
            return Expr("not", (test,), "boolean") if node.args.get("negate") else test
        if isinstance(node, (exp.NullSafeEQ, exp.NullSafeNEQ)):
            word = "IS NOT DISTINCT FROM" if isinstance(node, exp.NullSafeEQ) else "IS DISTINCT FROM"
            try:
                a, b = _comparable(self.build(node.this), self.build(node.expression))
            except ExpressionError as e:
                raise ExpressionError(f"{word}: {e}", e.position if e.position is not None else _position(node)) from None
            same = Expr("not_distinct", (a, b), "boolean")
            return same if isinstance(node, exp.NullSafeEQ) else Expr("not", (same,), "boolean")
        if isinstance(node, exp.In):
            if node.args.get("query") or not node.expressions:
                self.fail("IN takes a list of values, e.g. x IN (1, 2, 3)", node)
            target = self.build(node.this)
            items = []
            for item in node.expressions:
                try:
                    items.append(_comparable(target, self.build(item))[1])
                except ExpressionError as e:
                    raise ExpressionError(f"IN: {e}", _position(item)) from None
            return Expr("in", (target, *items), "boolean")
        if isinstance(node, exp.Between):
            target = self.build(node.this)
            try:
                lo = _comparable(target, self.build(node.args["low"]))[1]
                hi = _comparable(target, self.build(node.args["high"]))[1]
            except ExpressionError as e:
                raise ExpressionError(f"BETWEEN: {e}", _position(node)) from None
            return Expr("between", (target, lo, hi), "boolean")
        if isinstance(node, exp.Case):
            return self.case(node)
        if isinstance(node, (exp.Like, exp.ILike)):
            a, b = self.build(node.this), self.build(node.expression)
            for side in (a, b):
                if side.type not in ("string", "null"):
                    self.fail(f"LIKE needs strings, got {side.type}", node)
            if node.args.get("escape"):
                self.fail("LIKE ... ESCAPE is not supported; use a backslash to escape % and _", node)
            if b.op != "lit":
                self.fail("the LIKE pattern must be a string literal, e.g. s LIKE 'a%'", node.expression)
            if b.value is not None:
                try:
                    fns.like_segments(b.value)
                except fns.LikePatternError as e:
                    start = _position(node.expression)
                    raise ExpressionError(str(e), None if start is None else start + 1 + e.offset) from None
            like = Expr("like", (a, b), "boolean", isinstance(node, exp.ILike))
            return Expr("not", (like,), "boolean") if node.args.get("negate") else like
        if isinstance(node, (exp.Cast, exp.TryCast)):
            inner = self.build(node.this)
            target = fns.CAST_NAMES.get(node.to.this.name)
            if node.to.this.name == "ARRAY" and len(node.to.expressions) == 1:
                element = fns.CAST_NAMES.get(node.to.expressions[0].this.name)
                target = f"array<{element}>" if element in ("bigint", "double", "string", "boolean") else None
                if target is not None and inner.type not in ("null", target):
                    self.fail(f"cannot cast {inner.type} to {target} (only NULL casts to a list type)", node)
            if target is None:
                self.fail(f"cannot cast to {node.to.sql()} (types: bigint, double, varchar, boolean, date, timestamp)", node)
            if node.to.this.name != "ARRAY" and node.to.expressions:  # VARCHAR(10) truncates, DECIMAL(10, 2) rounds
                self.fail(f"cannot cast to {node.to.sql()}: type parameters are not supported "
                          f"(cast to {node.to.this.name}{'; round() rounds' if target == 'double' else ''})", node)
            if inner.type != "null" and (inner.type, target) not in fns.ALLOWED_CASTS and inner.type != target:
                self.fail(f"cannot cast {inner.type} to {target}", node)
            return Expr("cast", (inner,), target)
        if (list_fn := _list_function(node)) is not None:
            return self.list_function(list_fn, node)
        if isinstance(node, exp.Split):
            return self.split(node)
        if isinstance(node, exp.Bracket):
            return self.subscript(node)
        if isinstance(node, exp.Anonymous) and node.name.upper() == "FORMAT_TIMESTAMP":
            return self.format_timestamp(node)
        if type(node).__name__ in fns.SQLGLOT_NAMES:
            return self.function(fns.SQLGLOT_NAMES[type(node).__name__], node)
        if isinstance(node, (exp.Anonymous, exp.Func)):
            name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
            known = sorted([*fns.FUNCTIONS, *(f for f in _LIST_FUNCTIONS if f != "subscript"), "array_size", "format_timestamp", "split"])
            self.fail(f"function {name}() is not supported (functions: {', '.join(known)})", node)
        self.fail(f"{_sql_name(node)} is not allowed in an expression", node)


    _ARG_KEYS = {
        "Round": ["this", "decimals"], "Substring": ["this", "start", "length"],
        "Replace": ["this", "expression", "replacement"], "DPipe": ["this", "expression"], "Nullif": ["this", "expression"],
    }

    def interval(self, node: exp.Interval) -> int:
        """INTERVAL '10' SECOND (or '10 seconds') -> microseconds: a whole number of
        microseconds, milliseconds, seconds, minutes, hours or days (months and years have
        no fixed length)."""
        value = node.this
        text = value.this if isinstance(value, exp.Literal) else None
        unit = node.args.get("unit")
        unit = unit.name if unit is not None else None
        if text is not None and unit is None and len(text.split()) == 2:
            text, unit = text.split()
        number = text.strip() if isinstance(text, str) else ""
        size = _INTERVAL_UNITS.get((unit or "").upper().rstrip("S"))
        if size is None or not number.lstrip("-").isdigit():
            self.fail(f"{node.sql()}: a whole number of MICROSECONDS, MILLISECONDS, SECONDS, MINUTES, HOURS or DAYS", node)
        return int(number) * size

    def function(self, name: str, node: exp.Expression) -> Expr:
        fn = fns.FUNCTIONS[name]
        keys = self._ARG_KEYS.get(type(node).__name__)
        if keys is not None:
            raw = [node.args.get(k) for k in keys]
            while raw and raw[-1] is None:
                raw.pop()
        else:
            raw = ([node.this] if node.args.get("this") is not None else []) + list(node.expressions)
        lo, hi = fn.arity
        if not lo <= len(raw) <= hi or any(r is None for r in raw):
            self.fail(f"{name}() takes {lo}{'' if lo == hi else f' to {hi}'} arguments, got {len(raw)}", node)
        args = [self.build(r) for r in raw]
        if fn.arg_types is None:  # polymorphic: one common type
            result = _common_type([a.type for a in args])
            if result is None:
                self.fail(f"{name}() arguments have incompatible types: {', '.join(a.type for a in args)}", node)
            if element_type(result) is not None and name != "coalesce":
                self.fail(f"{name}() compares its arguments; lists ({result}) cannot be compared", node)
            if result in NUMERIC:
                args = [a if a.type in (result, "null") else Expr("cast", (a,), result) for a in args]
            return Expr("fn", tuple(args), result, name)
        for i, a in enumerate(args):
            allowed = fn.arg_types[min(i, len(fn.arg_types) - 1)]
            if a.type not in allowed + ("null",):
                self.fail(f"{name}() argument {i + 1} must be {' or '.join(allowed)}, got {a.type}", raw[i])
        if name == "round" and len(args) > 1 and not (args[1].op == "lit" and args[1].value is not None and 0 <= args[1].value <= limits.MAX_ROUND_DIGITS):
            self.fail(f"round() digits must be a non-negative integer literal, at most {limits.MAX_ROUND_DIGITS} (limit MAX_ROUND_DIGITS)", raw[1])
        return Expr("fn", tuple(args), fn.result([a.type for a in args]), name)

    def list_function(self, name: str, node: exp.Expression) -> Expr:
        if isinstance(node, exp.Anonymous):
            raw = list(node.expressions)
        else:
            raw = [node.this] + ([node.expression] if isinstance(node, exp.ArrayContains) else [])
        want = 1 if name == "cardinality" else 2
        if len(raw) != want or any(r is None for r in raw):
            self.fail(f"{name}() takes {want} argument{'s' if want > 1 else ''}, got {len(raw)}", node)
        args = [self.build(r) for r in raw]
        element = element_type(args[0].type)
        if element is None:
            self.fail(f"{name}() argument 1 must be a list (array<...>), got {args[0].type}", raw[0])
        if name == "cardinality":
            return Expr("cardinality", tuple(args), "bigint")
        if name == "element_at":
            if args[1].type not in ("bigint", "null"):
                self.fail(f"element_at() argument 2 must be bigint (1-based position), got {args[1].type}", raw[1])
            return Expr("element_at", tuple(args), element)
        value = args[1]
        if value.type == "bigint" and element == "double":
            value = Expr("cast", (value,), "double")
        elif value.type not in (element, "null"):
            self.fail(f"array_contains() argument 2 must be {element} (the list's element type), got {value.type}", raw[1])
        return Expr("array_contains", (args[0], value), "boolean")

    def split(self, node: exp.Split) -> Expr:
        if node.args.get("expression") is None:
            self.fail("split() takes 2 arguments (a string and a separator), got 1", node)
        value = self.build(node.this)
        if value.type not in ("string", "null"):
            self.fail(f"split() argument 1 must be string, got {value.type}", node.this)
        separator = self.build(node.expression)
        while separator.op == "cast" and separator.type == "string" and separator.args[0].type == "string":
            separator = separator.args[0]  # CAST('/' AS VARCHAR): the literal
        if separator.op != "lit" or separator.type != "string" or separator.value == "":
            self.fail("split() separator must be a non-empty string literal", node.expression)
        return Expr("split", (value,), "array<string>", separator.value)

    def subscript(self, node: exp.Bracket) -> Expr:
        if len(node.expressions) != 1:
            self.fail(f"a list takes one index in [], got {len(node.expressions)}", node)
        xs, index = self.build(node.this), self.build(node.expressions[0])
        element = element_type(xs.type)
        if element is None:
            self.fail(f"[] indexes a list (array<...>), got {xs.type}", node.this)
        if index.type not in ("bigint", "null"):
            self.fail(f"a list's index must be bigint (1-based), got {index.type}", node.expressions[0])
        return Expr("subscript", (xs, index), element)

    def format_timestamp(self, node: exp.Anonymous) -> Expr:
        if len(node.expressions) != 2:
            self.fail(f"format_timestamp() takes 2 arguments (a format and a timestamp), got {len(node.expressions)}", node)
        fmt, value = node.expressions
        if not (isinstance(fmt, exp.Literal) and fmt.is_string):
            self.fail("format_timestamp() format must be a string literal (strftime fields %Y %m %d %H %M %S)", fmt)
        try:
            parts = fns.timestamp_format(fmt.this)
        except fns.TimestampFormatError as e:
            start = _position(fmt)
            raise ExpressionError(str(e), None if start is None else start + 1 + e.offset) from None
        ts = self.build(value)
        if ts.type not in ("date", "timestamp", "null"):
            self.fail(f"format_timestamp() argument 2 must be date or timestamp, got {ts.type}", value)
        return Expr("format_ts", (ts,), "string", parts)

    def case(self, node: exp.Case) -> Expr:
        subject = self.build(node.this) if node.args.get("this") is not None else None
        parts, values = [], []
        for branch in node.args.get("ifs") or []:
            when = self.build(branch.this)
            if subject is not None:
                a, b = _comparable(subject, when)
                when = Expr("=", (a, b), "boolean")
            elif when.type not in ("boolean", "null"):
                self.fail(f"CASE WHEN needs a boolean condition, got {when.type}", branch)
            value = self.build(branch.args["true"])
            parts += [when, value]
            values.append(value)
        default = self.build(node.args["default"]) if node.args.get("default") is not None else Expr("lit", (), "null", None)
        values.append(default)
        result = _common_type([v.type for v in values])
        if result is None:
            self.fail(f"CASE branches have incompatible types: {', '.join(v.type for v in values)}", node)
        if result in NUMERIC:
            parts = [p if i % 2 == 0 or p.type in (result, "null") else Expr("cast", (p,), result) for i, p in enumerate(parts)]
            default = default if default.type in (result, "null") else Expr("cast", (default,), result)
        return Expr("case", tuple(parts) + (default,), result)


def _list_function(node: exp.Expression) -> str | None:
    """The list function a sqlglot node calls, if it is one."""
    if isinstance(node, exp.ArraySize):
        return "cardinality"
    if isinstance(node, exp.ArrayContains):
        return "array_contains"
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("cardinality", "element_at"):
        return node.name.lower()
    return None


def _common_type(types: list[str]) -> str | None:
    known = {t for t in types if t != "null"}
    if not known:
        return "null"
    if known <= set(NUMERIC):
        return "double" if "double" in known else "bigint"
    return known.pop() if len(known) == 1 else None


def _abridged(digits: str) -> str:
    return digits if len(digits) <= 24 else f"{digits[:10]}...{digits[-6:]} ({len(digits)} digits)"


def parse_expression(text: str, schema: Schema, where: str | None = None) -> Expr:
    """Parse and type-check `text` against `schema`; raise ExpressionError with a position.
    `where` names who evaluates it in runtime errors (numeric.ValueOutOfRange)."""
    if len(text) > limits.MAX_EXPRESSION_CHARS:
        raise ExpressionError(f"expression is longer than {limits.MAX_EXPRESSION_CHARS} characters "
                              f"(limit MAX_EXPRESSION_CHARS = {limits.MAX_EXPRESSION_CHARS})")
    if (nested := limits.expression_nesting_problem(text)) is not None:
        raise ExpressionError(*nested)
    try:
        trees = sqlglot.parse(text)
    except RecursionError:  # not expected below MAX_EXPRESSION_NESTING; never a 500
        raise ExpressionError(f"the expression is nested too deeply (limit MAX_EXPRESSION_NESTING = {limits.MAX_EXPRESSION_NESTING})") from None
    except sqlglot.errors.ParseError as e:
        err = e.errors[0] if e.errors else {}
        line, col = err.get("line", 1), err.get("col", 0)
        offset = sum(len(line_text) + 1 for line_text in text.split("\n")[: line - 1]) + max(col - 1, 0)
        description = err.get("description", str(e))
        if description.startswith("Required keyword"):
            description = f"incomplete expression after {err.get('highlight', '')!r}"
        raise ExpressionError(f"syntax error at position {offset}: {description}", offset) from None
    except sqlglot.errors.TokenError as e:
        raise ExpressionError(f"syntax error: {e}", None) from None
    trees = [t for t in trees if t is not None]
    if len(trees) != 1:
        raise ExpressionError("expected exactly one expression", None)
    if limits.tree_depth(trees[0], lambda n: n.iter_expressions()) > limits.MAX_EXPRESSION_DEPTH:
        raise ExpressionError(f"the expression nests operators more than {limits.MAX_EXPRESSION_DEPTH} deep "
                              f"(limit MAX_EXPRESSION_DEPTH = {limits.MAX_EXPRESSION_DEPTH})", 0)
    root = _Builder(text, schema).build(trees[0])
    return replace(root, where=where) if where is not None else root


def _sql_name(node: exp.Expression) -> str:
    """What a user wrote, not sqlglot's class: "the operator >>" for a BitwiseRightShift,
    "SUBQUERY" for a subquery (a clause keyword)."""
    a, b = exp.column("a"), exp.column("b")
    try:
        if isinstance(node, exp.Binary):
            return f"the operator {type(node)(this=a, expression=b).sql().removeprefix('a ').removesuffix(' b')}"
        if isinstance(node, exp.Unary):
            return f"the operator {type(node)(this=a).sql().removesuffix('a').strip()}"
    except Exception:  # noqa: BLE001 - an odd node: fall back to its keyword
        pass
    return node.key.upper()
