"""The expression language: SQL-style expressions over a row, never eval'd, never raw SQL.

`parse_expression(text, schema)` parses with sqlglot (a real SQL parser), then walks
its tree, accepting only whitelisted node types into this module's own tree (`Expr`),
type-checking against the input schema as it goes. Anything else (sub-queries, unknown
functions, statements, `;`) is rejected with the character position where it starts.
An `Expr` compiles to a Spark Column (`to_spark`) and to a Python function of a row
tuple with SQL null semantics (`to_python`), the reference evaluator's form.

Supported now: column references, number/string/boolean/NULL literals, + - * / %,
unary minus, = <> != < <= > >=, AND OR NOT (three-valued), IS [NOT] NULL,
[NOT] IN (literals...), [NOT] BETWEEN. Division is always double; x / 0 and x % 0 are
NULL (as Spark's try_divide / try_mod). Dates and timestamps compare with ISO strings.
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from .errors import ExpressionError
from .types import NUMERIC, Schema

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

    # ---- Spark ---------------------------------------------------------------------
    def to_spark(self):
        from pyspark.sql import functions as F

        a = [x.to_spark() if isinstance(x, Expr) else x for x in self.args]
        match self.op:
            case "col":
                return F.col(self.value)
            case "lit":
                return F.lit(self.value)
            case "neg":
                return -a[0]
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
            case "+":
                return a[0] + a[1]
            case "-":
                return a[0] - a[1]
            case "*":
                return a[0] * a[1]
            case "/":
                return F.try_divide(a[0].cast("double"), a[1].cast("double"))
            case "%":
                return F.try_mod(a[0], a[1])
            case "is_null":
                return a[0].isNull()
            case "in":
                return a[0].isin(*a[1:])
            case "between":
                return (a[0] >= a[1]) & (a[0] <= a[2])
        raise ExpressionError(f"cannot compile {self.op!r}")

    # ---- Python (reference evaluator) ------------------------------------------------
    def to_python(self, schema: Schema):
        """A function row_tuple -> value, with SQL three-valued logic and NULL propagation."""
        index = {c.name: i for i, c in enumerate(schema.columns)}
        return _py(self, index)


def _py(e: Expr, index: dict[str, int]):
    args = [_py(x, index) if isinstance(x, Expr) else x for x in e.args]
    op = e.op
    if op == "col":
        i = index[e.value]
        return lambda r: r[i]
    if op == "lit":
        v = e.value
        return lambda r: v
    if op == "neg":
        f = args[0]
        return lambda r: None if (x := f(r)) is None else -x
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
    if op in ("=", "<>", "<", "<=", ">", ">=", "+", "-", "*", "/", "%"):
        f, g = args
        fn = _BINARY[op]

        def binary(r):
            x, y = f(r), g(r)
            return None if x is None or y is None else fn(x, y)

        return binary
    if op == "is_null":
        f = args[0]
        return lambda r: f(r) is None
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
    raise ExpressionError(f"cannot evaluate {op!r}")


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
    if "null" in (ta, tb) or ta == tb or (ta in NUMERIC and tb in NUMERIC):
        return a, b
    raise ExpressionError(f"cannot compare {ta} with {tb}")


class _Builder:
    def __init__(self, text: str, schema: Schema):
        self.text = text
        self.schema = schema

    def fail(self, message: str, node: exp.Expression):
        raise ExpressionError(message, _position(node))

    def build(self, node: exp.Expression) -> Expr:
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
            try:
                value = int(text)
                return Expr("lit", (), "bigint", value)
            except ValueError:
                return Expr("lit", (), "double", float(text))
        if isinstance(node, exp.Boolean):
            return Expr("lit", (), "boolean", bool(node.this))
        if isinstance(node, exp.Null):
            return Expr("lit", (), "null", None)
        if isinstance(node, exp.Neg):
            inner = self.build(node.this)
            if inner.type not in NUMERIC + ("null",):
                self.fail(f"unary minus needs a number, got {inner.type}", node)
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
            if not isinstance(node.expression, exp.Null):
                self.fail("only IS NULL / IS NOT NULL are supported", node)
            return Expr("is_null", (self.build(node.this),), "boolean")
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
        if isinstance(node, (exp.Anonymous, exp.Func)):
            name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
            self.fail(f"function {name}() is not supported", node)
        self.fail(f"{node.key.upper()} is not allowed in an expression", node)


def parse_expression(text: str, schema: Schema) -> Expr:
    """Parse and type-check `text` against `schema`; raise ExpressionError with a position."""
    if len(text) > 10_000:
        raise ExpressionError("expression is longer than 10000 characters")
    try:
        trees = sqlglot.parse(text)
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
    return _Builder(text, schema).build(trees[0])
