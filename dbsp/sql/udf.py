"""SQL functions a script declares: `CREATE FUNCTION name(p TYPE, ...) RETURNS TYPE AS
expression;` (Feldera's spelling, as Nexmark q14 and q22 use it). A function is a macro:
each call `name(a, ...)` is replaced, before its query compiles, by
`CAST(<body with each p replaced by CAST(a AS TYPE)> AS <RETURNS TYPE>)`, so the body is
type-checked, evaluated and explained as if written at the call. The body may use its
parameters and the language's functions (also functions declared before it), never a
column, a subquery or an aggregate. A function without a body (Feldera's Rust UDFs) is
refused: there is nothing to run.
"""
from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp

#: inlining depth: a function calling functions (declared before it, so no recursion)
MAX_DEPTH = 16
#: names the expression language reads as calls of its own (expr.py): not to be shadowed
_RESERVED = {"cardinality", "element_at", "format_timestamp", "tumble", "hop", "session", "tumble_start",
             "tumble_end", "row_number", "rank", "dense_rank"}


@dataclass(frozen=True)
class SqlFunction:
    name: str  # lower case
    params: tuple[tuple[str, exp.DataType], ...]  # (lower-case name, type)
    returns: exp.DataType
    body: exp.Expression


class FunctionError(Exception):
    def __init__(self, message: str, node: exp.Expression | None):
        super().__init__(message)
        self.node = node


def declare(st: exp.Create, known: dict[str, SqlFunction]) -> SqlFunction:
    """The function a CREATE FUNCTION statement declares (FunctionError names what is wrong)."""
    udf = st.this
    if not isinstance(udf, exp.UserDefinedFunction) or not isinstance(udf.this, exp.Table):
        raise FunctionError("CREATE FUNCTION needs a name and parameters: CREATE FUNCTION f(x INT) RETURNS INT AS x + 1", st)
    name = udf.this.name.lower()
    if name in known:
        raise FunctionError(f"function {name!r} is already declared", udf.this)
    if name in _RESERVED or not isinstance(sqlglot.parse_one(f"{name}(1)"), exp.Anonymous):
        raise FunctionError(f"function {name!r} would shadow a built-in function of the same name", udf.this)
    params = []
    for p in udf.expressions:
        if not isinstance(p, exp.ColumnDef) or not isinstance(p.args.get("kind"), exp.DataType) or p.args.get("constraints"):
            raise FunctionError(f"a parameter is a name and a type, got {p.sql()!r}", p)
        pname = p.name.lower()
        if pname in (q for q, _ in params):
            raise FunctionError(f"parameter {pname!r} appears twice", p)
        params.append((pname, p.args["kind"]))
    props = st.args.get("properties")
    returns = next((q.this for q in (props.expressions if props else []) if isinstance(q, exp.ReturnsProperty)), None)
    others = [q for q in (props.expressions if props else []) if not isinstance(q, exp.ReturnsProperty)]
    if others:
        raise FunctionError(f"unsupported: function property {others[0].sql()!r}", others[0])
    if not isinstance(returns, exp.DataType):
        raise FunctionError(f"function {name!r} needs RETURNS and a type", udf)
    body = st.expression
    if body is None:
        raise FunctionError(f"function {name!r} has no body: only SQL functions (RETURNS type AS expression) run here; "
                            f"a function implemented outside SQL (Feldera's Rust UDFs) cannot", udf.this)
    if not isinstance(body, exp.Expression) or isinstance(body, (exp.Query, exp.Subquery)) or any(
            isinstance(n, (exp.Subquery, exp.Select, exp.AggFunc, exp.Window, exp.Star)) for n in body.walk()):
        raise FunctionError(f"function {name!r}: the body must be one expression over the parameters "
                            f"(no query, aggregate or window)", udf.this)
    names = {q for q, _ in params}
    for col in body.find_all(exp.Column):
        if col.table or col.name.lower() not in names:
            raise FunctionError(f"function {name!r} uses {col.sql()!r}, which is not one of its parameters "
                                f"({', '.join(q for q, _ in params) or 'none'})", col)
    return SqlFunction(name, tuple(params), returns, body)


def inline(node: exp.Expression, functions: dict[str, SqlFunction], depth: int = 0) -> exp.Expression:
    """`node` with every call of a declared function replaced by its body."""
    if not functions:
        return node

    def replace(n):
        if not (isinstance(n, exp.Anonymous) and n.name.lower() in functions):
            return n
        f = functions[n.name.lower()]
        args = list(n.expressions)
        if len(args) != len(f.params):
            raise FunctionError(f"{f.name}() takes {len(f.params)} argument{'s' if len(f.params) != 1 else ''}, got {len(args)}", n)
        if depth >= MAX_DEPTH:
            raise FunctionError(f"{f.name}(): functions calling functions nest deeper than {MAX_DEPTH}", n)
        bound = {pname: exp.Cast(this=exp.Paren(this=inline(arg, functions, depth + 1)), to=ptype.copy())
                 for (pname, ptype), arg in zip(f.params, args)}

        def bind(m):
            if isinstance(m, exp.Column) and m.name.lower() in bound:
                return bound[m.name.lower()].copy()
            return m

        body = inline(f.body.copy().transform(bind), functions, depth + 1)
        return exp.Cast(this=exp.Paren(this=body), to=f.returns.copy())

    return node.transform(replace)
