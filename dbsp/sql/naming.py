"""The name Spark gives a SELECT item written without `AS`.

Spark names such a column by the expression's "pretty" SQL: function names in lower
case, every operator in parentheses, columns without their table, string literals
without quotes, `COUNT(*)` as `count(1)` (`df.selectExpr("sum(balance)").columns` is
`['sum(balance)']`; `a + 1` is `(a + 1)`). tests/sql/test_naming.py checks these
rules against a real Spark session.

The engine's column names are identifiers, so the column itself is `engine_name` of
Spark's name (`sum(balance)` -> `sum_balance`); the view's output node keeps Spark's
names in `params.sql_names` (engine column -> Spark's name).
"""
from __future__ import annotations

import re

from sqlglot import exp

#: the engine's column names are identifiers (letters, digits, _; at most 63)
MAX_NAME = 63

#: binary operators as Spark prints them
OPERATORS = {
    exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%", exp.EQ: "=",
    exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=", exp.And: "AND", exp.Or: "OR",
    exp.NullSafeEQ: "<=>",
}


def spark_name(node: exp.Expression) -> str:
    """`node`'s column name as Spark gives it (identifiers as written, as Spark keeps
    them; a CAST at the top is named after what it casts, as Spark does)."""
    if isinstance(node, exp.Cast) and not _is_typed_literal(node):
        return spark_name(node.this)
    return _pretty(node)


def engine_name(spark: str) -> str:
    """Spark's name as an engine column name: every run of other characters becomes
    `_`, lower case as the dialect's unquoted identifiers (`sum(balance)` is
    `sum_balance`, `(credits - debits)` is `credits_debits`, `count(1)` is `count_1`)."""
    name = re.sub(r"[^a-z0-9_]+", "_", spark.lower()).strip("_")
    if not name or name[0].isdigit():
        name = "expr_" + name if name else "expr"
    return name[:MAX_NAME].rstrip("_") or "expr"


def _is_typed_literal(n) -> bool:
    return isinstance(n, exp.Cast) and isinstance(n.this, exp.Literal) and n.this.is_string and n.to.this in (exp.DataType.Type.DATE, exp.DataType.Type.TIMESTAMP)


def _pretty(n: exp.Expression) -> str:
    if isinstance(n, exp.Paren):
        return _pretty(n.this)
    if isinstance(n, exp.Column):
        return n.this.this if isinstance(n.this, exp.Identifier) else n.sql(dialect="spark")
    if isinstance(n, exp.Literal):
        return n.this
    if _is_typed_literal(n):
        return f"{n.to.sql(dialect='spark')} '{n.this.this}'"
    if isinstance(n, exp.Boolean):
        return "true" if n.this else "false"
    if isinstance(n, exp.Null):
        return "NULL"
    if type(n) in OPERATORS:
        return f"({_pretty(n.this)} {OPERATORS[type(n)]} {_pretty(n.expression)})"
    if isinstance(n, exp.NEQ):
        return f"(NOT ({_pretty(n.this)} = {_pretty(n.expression)}))"
    if isinstance(n, exp.DPipe):
        return f"concat({_pretty(n.this)}, {_pretty(n.expression)})"
    if isinstance(n, exp.Not):
        inner = n.this.this if isinstance(n.this, exp.Paren) else n.this
        if isinstance(inner, exp.Is):
            return f"({_pretty(inner.this)} IS NOT {_pretty(inner.expression)})"
        return f"(NOT {_pretty(n.this)})"
    if isinstance(n, exp.Is):
        return f"({_pretty(n.this)} IS {_pretty(n.expression)})"
    if isinstance(n, exp.Neg):
        return f"(- {_pretty(n.this)})"
    if isinstance(n, exp.In) and not n.args.get("query"):
        return f"({_pretty(n.this)} IN ({', '.join(_pretty(e) for e in n.expressions)}))"
    if isinstance(n, exp.Between):
        low, high = n.args.get("low"), n.args.get("high")
        x = _pretty(n.this)
        return f"between({x}, {_pretty(low)}, {_pretty(high)})"
    if isinstance(n, exp.Like) and not n.args.get("escape"):
        return f"{_pretty(n.this)} LIKE {_pretty(n.expression)}"
    if isinstance(n, exp.Cast):
        return f"CAST({_pretty(n.this)} AS {n.to.sql(dialect='spark')})"
    if isinstance(n, exp.Case):
        parts = ["CASE"]
        if n.this is not None:
            parts.append(_pretty(n.this))
        for branch in n.args.get("ifs") or []:
            parts += ["WHEN", _pretty(branch.this), "THEN", _pretty(branch.args["true"])]
        if n.args.get("default") is not None:
            parts += ["ELSE", _pretty(n.args["default"])]
        return " ".join(parts + ["END"])
    if isinstance(n, exp.Count):
        arg = n.this
        if arg is None or isinstance(arg, exp.Star):
            return "count(1)"
    if isinstance(n, exp.Window):
        return _pretty_window(n)
    if isinstance(n, exp.Distinct):
        return "DISTINCT " + ", ".join(_pretty(e) for e in n.expressions)
    if isinstance(n, exp.Func):
        name = n.name if isinstance(n, exp.Anonymous) else n.sql_name()
        args = []
        for key in n.arg_types:
            value = n.args.get(key)
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, exp.Expression):
                    args.append(_pretty(v))
        return f"{name.lower()}({', '.join(args)})"
    return n.sql(dialect="spark")


def _pretty_window(w: exp.Window) -> str:
    """Spark's name of `f(...) OVER (...)`: the orders written out with their NULLs, the
    frame Spark chose when none is given."""
    parts = []
    if w.args.get("partition_by"):
        parts.append("PARTITION BY " + ", ".join(_pretty(p) for p in w.args["partition_by"]))
    order = w.args["order"].expressions if w.args.get("order") else []
    if order:
        parts.append("ORDER BY " + ", ".join(
            f"{_pretty(o.this)} {'DESC NULLS LAST' if o.args.get('desc') else 'ASC NULLS FIRST'}" for o in order))
    spec = w.args.get("spec")
    if spec is not None:
        def bound(value, side):
            text = value if isinstance(value, str) else _pretty(value)
            return text if text.upper() == "CURRENT ROW" else f"{text} {side.upper()}"
        start = bound(spec.args.get("start"), spec.args.get("start_side") or "PRECEDING")
        end = bound(spec.args.get("end") or "CURRENT ROW", spec.args.get("end_side") or "FOLLOWING")
        parts.append(f"{spec.args.get('kind', 'ROWS').upper()} BETWEEN {start} AND {end}")
    elif order:
        parts.append("RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW")
    else:
        parts.append("ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING")
    return f"{_pretty(w.this)} OVER ({' '.join(parts)})"
