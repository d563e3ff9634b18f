"""SQL views -> a circuit document (see docs/sql.md for the dialect).

Each statement is read from sqlglot's tree into the engine's operators; whatever is
not in the whitelist below is refused with its construct and line:column, never
compiled into something with other semantics.
"""
from __future__ import annotations

import re

from dataclasses import dataclass, field, replace

from sqlglot import exp

from .. import budget
from . import connectors as sql_connectors
from .circuit import CircuitBuilder, Level, Ref
from .errors import Span, SqlError, SqlProblem, SqlTooBig
from .naming import engine_name, spark_name
from . import udf
from .script import WINDOW_FUNCTIONS, Script, parse_script

TYPES = {
    exp.DataType.Type.BIGINT: "bigint", exp.DataType.Type.INT: "bigint", exp.DataType.Type.SMALLINT: "bigint",
    exp.DataType.Type.TINYINT: "bigint", exp.DataType.Type.DOUBLE: "double", exp.DataType.Type.FLOAT: "double",
    exp.DataType.Type.VARCHAR: "string", exp.DataType.Type.TEXT: "string", exp.DataType.Type.BOOLEAN: "boolean",
    exp.DataType.Type.DATE: "date", exp.DataType.Type.TIMESTAMP: "timestamp",
}
AGGREGATES = {exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max"}
_UNORDERED = "views are unordered sets of rows; for the first k rows per group use ROW_NUMBER() <= k"
#: SELECT clauses the compiler refuses, as users write them, and what to do instead
CLAUSES = {
    "order": ("ORDER BY", _UNORDERED), "limit": ("LIMIT", _UNORDERED), "offset": ("OFFSET", _UNORDERED),
    "fetch": ("FETCH", _UNORDERED), "laterals": ("LATERAL VIEW", "UNNEST a list column in FROM: FROM t CROSS JOIN UNNEST(t.tags) AS u(tag)"),
    "qualify": ("QUALIFY", "filter on ROW_NUMBER() in an outer query"), "windows": ("WINDOW", ""),
    "sort": ("SORT BY", _UNORDERED), "cluster": ("CLUSTER BY", ""), "distribute": ("DISTRIBUTE BY", ""),
    "pivots": ("PIVOT", ""), "sample": ("TABLESAMPLE", ""), "locks": ("FOR UPDATE", ""), "into": ("SELECT INTO", ""),
    "connect": ("CONNECT BY", "use WITH RECURSIVE"), "match": ("MATCH_RECOGNIZE", ""),
}
SELECT_ARGS = {"expressions", "from_", "joins", "where", "group", "having", "distinct", "with_", "kind"}
SET_OPS = (exp.Union, exp.Intersect, exp.Except)
#: The lateness of a window over a column without LATENESS. SQL counts every row, and an
#: engine window drops rows later than its lateness (default 0), so this is longer than
#: any real span of event times: 999 years for timestamps (the engine reports the
#: waterline, newest time − lateness, as a timestamp, which must stay after year 1),
#: 2^62 for BIGINT times.
NEVER_LATE = {"timestamp": "365000 days", "bigint": 2**62}


@dataclass(frozen=True)
class Col:
    """A column visible to SQL: `qual.name`, kept in the engine column `phys`."""

    qual: str | None
    name: str
    phys: str
    window: bool = False  # window_start / window_end of a window TVF
    spark: str | None = None  # an unnamed expression's name as Spark gives it (`sum(balance)`)
    merged: bool = False  # a USING / NATURAL join column's side copy: reached only qualified, not in *


@dataclass
class Rel:
    """A relation: the port carrying it and the columns SQL sees, in order."""

    ref: Ref
    cols: list[Col]
    lateness: dict[str, str | int] = field(default_factory=dict)  # phys time column -> lateness
    window: dict | None = None  # a TUMBLE/HOP/SESSION source awaiting its GROUP BY
    rownum: dict | None = None  # a ROW_NUMBER() column awaiting `rn <= k`
    splits: list = field(default_factory=list)  # UNNEST(SPLIT(...)) pieces awaiting `x <> ''`


def ident(node) -> str:
    """An identifier as the engine names it: unquoted ones are case-insensitive."""
    if isinstance(node, exp.Identifier):
        return node.this if node.quoted else node.this.lower()
    if isinstance(node, str):
        return node.lower()
    if not isinstance(node, exp.Expression) or node.this is None or isinstance(node, exp.Placeholder):
        # a placeholder (`?`, `$1`) or nothing where a name belongs; the caller's statement is named
        raise SqlError([SqlProblem(f"expected a name, got {node.sql() if isinstance(node, exp.Expression) else 'nothing'!r}")])
    return ident(node.this)


class Compiler:
    def __init__(self, script: Script):
        self.script = script
        self.b = CircuitBuilder()
        self.relations: dict[str, Rel] = {}  # tables and views by name
        self.broken: set[str] = set()  # tables and views whose statement failed
        self.declared: dict[str, tuple[list[dict], Span | None]] = {}  # DECLARE RECURSIVE VIEW columns
        self.view: str = "view"
        self.tables: list[str] = []  # the script's tables, in order
        self.one: Ref | None = None  # the one row SELECT without FROM reads
        self.filter_names: dict[int, str] = {}  # an unnamed agg(x) FILTER (WHERE c) item -> its name
        self.window_names: dict[str, str] = {}  # a window aggregate's column -> its name as Spark gives it
        self.functions: dict[str, udf.SqlFunction] = {}  # CREATE FUNCTION ... AS expression, inlined at calls

    # ---- problems -------------------------------------------------------------------
    def span(self, node) -> Span | None:
        return self.script.span(node)

    def fail(self, message: str, node=None, span: Span | None = None):
        raise SqlError([SqlProblem(message, span or self.span(node))])

    def refuse(self, construct: str, node, why: str = ""):
        self.fail(f"unsupported: {construct}" + (f" ({why})" if why else ""), node)

    # ---- statements -----------------------------------------------------------------
    def run(self) -> dict:
        """Every statement is compiled, so every problem is reported (a statement that
        uses a broken table or view is not reported again)."""
        names = {}
        for st in self.script.statements:  # generated node ids keep clear of every name
            if isinstance(st, exp.Create) and st.this is not None:
                target = st.this.this if isinstance(st.this, exp.Schema) else st.this
                if isinstance(target, exp.Table) and isinstance(target.this, exp.Identifier):
                    names[id(st)] = ident(target.this)
                    self.b.reserved.add(names[id(st)])
        spans = self.script.statement_spans
        problems: list[SqlProblem] = []
        for i, st in enumerate(self.script.statements):
            kind = (st.args.get("kind") or "").upper() if isinstance(st, exp.Create) else ""
            if len(spans) == len(self.script.statements):
                budget.check(f"statement {i + 1} (line {spans[i]})", spans[i].line, spans[i].column)
            else:
                budget.check(f"statement {i + 1}")
            try:
                if kind == "TABLE":
                    self.table(st)
                elif kind == "VIEW":
                    self.create_view(self.inlined(st))
                elif kind == "FUNCTION":
                    self.create_function(st)
                else:
                    what = f"CREATE {kind}" if kind else (st.sql().split()[0].upper() if isinstance(st, exp.Command) else type(st).__name__.upper())
                    span = spans[i] if len(spans) == len(self.script.statements) else self.span(st)
                    self.fail(f"unsupported: statement {what} (only CREATE TABLE, CREATE [MATERIALIZED | LOCAL | RECURSIVE] VIEW and CREATE FUNCTION ... AS expression)", span=span)
            except SqlTooBig:
                raise
            except budget.BudgetExceeded as e:  # (stopped inside the engine's check of a node): name the statement
                where = spans[i] if len(spans) == len(self.script.statements) else self.span(st)
                if e.line is not None or where is None:
                    raise
                raise budget.BudgetExceeded(e.seconds, f"statement {i + 1} (line {where})", where.line, where.column) from None
            except SqlError as e:
                where = spans[i] if len(spans) == len(self.script.statements) else self.span(st)
                problems += [p if p.span is not None else replace(p, span=where) for p in e.problems]  # at least its statement
                if id(st) in names:
                    self.broken.add(names[id(st)])
        for name, (_, span) in self.declared.items():
            problems.append(SqlProblem(f"recursive view {name!r} is declared but never created", span))
        if not problems and not any(n["kind"] == "output" for n in self.b.top.nodes):
            problems.append(SqlProblem("the script defines no view (CREATE VIEW name AS SELECT ...)"))
        if problems:
            raise SqlError(problems)
        return self.b.document()

    def table(self, st: exp.Create):
        schema_node = st.this
        if not isinstance(schema_node, exp.Schema):
            self.refuse("CREATE TABLE without a column list", st)
        if st.args.get("expression"):
            self.refuse("CREATE TABLE ... EXPRESSION", st.args["expression"])
        name = ident(schema_node.this)
        connectors = self.connectors(st, name, table=True)
        columns, key_cols = [], []
        if name in self.script.declared and name not in self.declared:
            self.declared[name] = ([{"name": ident(c.this), "type": self.column_type(c.args.get("kind"), c)}
                                    for c in schema_node.expressions if isinstance(c, exp.ColumnDef)], self.span(schema_node))
            return
        for item in schema_node.expressions:
            if isinstance(item, exp.PrimaryKey):
                key_cols += [ident(c) for c in item.expressions]
                continue
            if not isinstance(item, exp.ColumnDef):
                self.refuse(f"table element {item.sql()!r}", item)
            cname = ident(item.this)
            column = {"name": cname, "type": self.column_type(item.args.get("kind"), item)}
            for c in item.args.get("constraints") or []:
                kind = c.args.get("kind")
                if isinstance(kind, exp.NotNullColumnConstraint) and not kind.args.get("allow_null"):
                    column["nullable"] = False
                elif isinstance(kind, exp.PrimaryKeyColumnConstraint):
                    key_cols.append(cname)
                else:
                    self.refuse(f"column constraint {c.sql()!r}", c)
            columns.append(column)
        params = {"schema": columns}
        if key_cols:
            params["primary_key"] = key_cols
        if connectors:
            params["connectors"] = connectors
        node_id = self.b.reserve(name, self.span(schema_node.this))
        ref = self.b.add(self.b.top, name, "input", params, {}, self.span(st), f"table {name}", node_id=node_id)
        lateness = {}
        for (table, column), (text, span) in self.script.lateness.items():
            if table == name:
                ctype = next((c["type"] for c in columns if c["name"] == column), None)
                if ctype is None:
                    self.fail(f"LATENESS on unknown column {column!r}", span=span)
                import sqlglot

                try:
                    value = sqlglot.parse_one(text) if text.strip() else None
                except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
                    value = None
                if value is None:
                    self.fail("LATENESS needs an interval: LATENESS INTERVAL '30' SECONDS (or a number for BIGINT)", span=span)
                lateness[column] = self.duration(value, ctype, span=span)
        self.relations[name] = Rel(ref, [Col(name, c["name"], c["name"]) for c in columns], lateness)
        self.tables.append(name)

    def connectors(self, st: exp.Create, name: str, table: bool) -> list[dict]:
        """`WITH ('connectors' = '[...]')` (Feldera's spelling: dbsp/sql/connectors.py); a
        view may also be MATERIALIZED; any other property is refused."""
        props = st.args.get("properties")
        found: list[dict] = []
        for p in props.expressions if props else []:
            if isinstance(p, exp.MaterializedProperty) and not table:
                continue
            key = p.this if isinstance(p, exp.Property) else None
            if isinstance(key, exp.Literal) and key.is_string and key.this == "connectors":
                found += sql_connectors.read(self.script, p, name, table)
                continue
            what = f"{'table' if table else 'view'} property {p.sql()!r}"
            self.refuse(what, p, "only WITH ('connectors' = '[...]')" + ("" if table else " and MATERIALIZED"))
        return found

    def column_type(self, dt, where) -> str:
        if not isinstance(dt, exp.DataType):
            self.refuse("a column without a type", where)
        if dt.this == exp.DataType.Type.ARRAY and len(dt.expressions) == 1:
            inner = self.column_type(dt.expressions[0], where)
            if inner not in ("bigint", "double", "string", "boolean"):
                self.refuse(f"type {dt.sql()}", dt, "lists of bigint, double, varchar or boolean only")
            return f"array<{inner}>"
        if dt.this in TYPES and not dt.expressions:
            return TYPES[dt.this]
        self.refuse(f"type {dt.sql()}", dt, "types: BIGINT (INT), DOUBLE, VARCHAR, BOOLEAN, DATE, TIMESTAMP, ARRAY<...>")

    def create_function(self, st: exp.Create):
        try:
            f = udf.declare(st, self.functions)
        except udf.FunctionError as e:
            self.fail(str(e), e.node if e.node is not None else st)
        self.functions[f.name] = f

    def inlined(self, st: exp.Create) -> exp.Create:
        """The statement with each call of a declared SQL function replaced by its body."""
        try:
            return udf.inline(st, self.functions)
        except udf.FunctionError as e:
            self.fail(str(e), e.node if e.node is not None else st)

    def create_view(self, st: exp.Create):
        name = ident(st.this.this if isinstance(st.this, exp.Table) else st.this)
        connectors = self.connectors(st, name, table=False)
        if isinstance(st.this, exp.Schema):
            self.refuse("a column list on CREATE VIEW", st.this, "name the columns with AS in the SELECT")
        self.view = name
        span = self.span(st.this)
        if name in self.b.ids:
            self.fail(f"{name!r} is already defined", span=span)
        query = st.expression
        if not isinstance(query, (exp.Query, exp.Subquery)):
            self.fail(f"CREATE VIEW {name} needs AS and a query (CREATE VIEW {name} AS SELECT ...)", span=span)
        if name in self.script.recursive:
            declared = self.declared.pop(name, None)
            rel = self.recursive(name, [c["name"] for c in declared[0]] if declared else None, query, self.b.top, {})
            if declared:
                got = [(c.name, c.type) for c in self.b.schema(rel.ref).columns]
                want = [(c["name"], c["type"]) for c in declared[0]]
                if got != want:
                    self.fail(f"recursive view {name!r} is declared ({', '.join(f'{n} {t}' for n, t in want)}) "
                              f"but its query gives ({', '.join(f'{n} {t}' for n, t in got)})", span=declared[1])
        else:
            rel = self.query(query, self.b.top, {})
        rel = self.finish(rel, query, self.b.top)
        if name not in self.script.local:
            sql_names = {c.name: c.spark for c in rel.cols if c.spark}  # the names Spark would show
            params = ({"sql_names": sql_names} if sql_names else {}) | ({"connectors": connectors} if connectors else {})
            self.b.add(self.b.top, name, "output", params, {"in": rel.ref}, span, f"view {name}", node_id=self.b.reserve(name, span))
        else:
            if connectors:
                self.fail(f"a LOCAL view has no output: connectors go on a view that is not LOCAL ({name!r})", span=span)
            self.b.ids.add(name)
        self.relations[name] = Rel(rel.ref, [Col(name, c.name, c.phys) for c in rel.cols], rel.lateness)

    def finish(self, rel: Rel, query, level: Level) -> Rel:
        """The relation with exactly its visible columns, named as SQL names them."""
        self.settle(rel, query)
        names = [c.name for c in rel.cols]
        for n in names:
            if names.count(n) > 1:
                self.fail(f"the view has two columns named {n!r}; name them apart with AS", query)
        schema = self.b.schema(rel.ref)
        if [c.phys for c in rel.cols] == schema.names and names == schema.names:
            return rel
        out = self.b.add(level, f"{self.view}_columns", "map", {"columns": [{"name": c.name, "expr": quote(c.phys)} for c in rel.cols]},
                         {"in": rel.ref}, self.span(query), "the view's columns")
        return Rel(out, [Col(None, c.name, c.name, spark=c.spark) for c in rel.cols], {c.name: rel.lateness[c.phys] for c in rel.cols if c.phys in rel.lateness})

    def settle(self, rel: Rel, where):
        if rel.window is not None:
            self.fail("a TUMBLE/HOP/SESSION window needs GROUP BY window_start (windows are aggregated)", span=rel.window["span"])
        if rel.rownum is not None:
            self.fail("ROW_NUMBER() is supported only filtered by `rn <= k` in the enclosing query (top-k)", span=rel.rownum["span"])

    # ---- queries --------------------------------------------------------------------
    def query(self, q, level: Level, env: dict[str, Rel]) -> Rel:
        if isinstance(q, exp.Subquery):
            return self.query(q.this, level, env)
        if isinstance(q, SET_OPS):
            return self.set_op(q, level, env)
        if isinstance(q, exp.Select):
            return self.select(q, level, env)
        self.refuse(f"query form {type(q).__name__.upper()}", q)

    def set_op(self, q, level, env) -> Rel:
        for key in ("order", "limit", "offset"):
            if q.args.get(key):
                self.refuse(f"{key.upper()} on a set operation", q.args[key], "views are unordered sets of rows")
        env = self.with_(q.args.get("with_"), level, env)
        left = self.query(q.this, level, env)
        right = self.query(q.expression, level, env)
        self.settle(left, q.this)
        self.settle(right, q.expression)
        if len(left.cols) != len(right.cols):
            self.fail(f"{type(q).__name__.upper()}: the left side has {len(left.cols)} columns, the right {len(right.cols)}", q)
        names = [c.name for c in left.cols]
        span = self.span(q)
        a = self.project(left, [(n, quote(c.phys)) for n, c in zip(names, left.cols)], level, q, "columns")
        b = self.project(right, [(n, quote(c.phys)) for n, c in zip(names, right.cols)], level, q, "columns")
        distinct = q.args.get("distinct", True)
        op = type(q).__name__.upper()
        if isinstance(q, exp.Union):
            out = self.b.add(level, f"{self.view}_union", "union", {}, {"a": a.ref, "b": b.ref}, span, "UNION")
            if distinct:
                out = self.b.add(level, f"{self.view}_distinct", "distinct", {}, {"in": out}, span, "UNION")
            return Rel(out, [Col(None, n, n) for n in names])
        if not distinct:
            self.refuse(f"{op} ALL", q, f"{op} (distinct) is supported")
        # INTERSECT / EXCEPT with set semantics (NULLs equal): tag each side, group by
        # every column, keep the groups seen on both sides (INTERSECT) or only the left.
        tag = fresh_name("side", names)
        lo, hi = fresh_name("first_side", names + [tag]), fresh_name("last_side", names + [tag])
        ta = self.b.add(level, f"{self.view}_left_side", "map", {"columns": [{"name": n, "expr": quote(n)} for n in names] + [{"name": tag, "expr": "1"}]}, {"in": a.ref}, span, op)
        tb = self.b.add(level, f"{self.view}_right_side", "map", {"columns": [{"name": n, "expr": quote(n)} for n in names] + [{"name": tag, "expr": "2"}]}, {"in": b.ref}, span, op)
        both = self.b.add(level, f"{self.view}_sides", "union", {}, {"a": ta, "b": tb}, span, op)
        groups = self.b.add(level, f"{self.view}_{op.lower()}_groups", "aggregate", {"group_by": names, "aggregates": [
            {"fn": "min", "expr": quote(tag), "as": lo}, {"fn": "max", "expr": quote(tag), "as": hi}]}, {"in": both}, span, op)
        predicate = f"{quote(lo)} = 1 AND {quote(hi)} = 2" if isinstance(q, exp.Intersect) else f"{quote(hi)} = 1"
        kept = self.b.add(level, f"{self.view}_{op.lower()}", "filter", {"predicate": predicate}, {"in": groups}, span, op)
        return self.project(Rel(kept, [Col(None, n, n) for n in names]), [(n, quote(n)) for n in names], level, q, op.lower())

    def project(self, rel: Rel, columns: list[tuple[str, str]], level, where, what: str) -> Rel:
        """A map to `columns` [(name, engine expr)], skipped when it changes nothing."""
        schema = self.b.schema(rel.ref)
        if [c[0] for c in columns] == schema.names and all(e == quote(n) for n, e in columns):
            return Rel(rel.ref, [Col(None, n, n) for n, _ in columns], dict(rel.lateness))
        out = self.b.add(level, f"{self.view}_{what}", "map", {"columns": [{"name": n, "expr": e} for n, e in columns]},
                         {"in": rel.ref}, self.span(where), what.replace("_", " "))
        lateness = {n: rel.lateness[unquote(e)] for n, e in columns if unquote(e) in rel.lateness}
        return Rel(out, [Col(None, n, n) for n, _ in columns], lateness)

    def select(self, sel: exp.Select, level: Level, env: dict[str, Rel]) -> Rel:
        for key, value in sel.args.items():
            if value and key not in SELECT_ARGS:
                name, why = CLAUSES.get(key, (key.upper().rstrip("_"), ""))
                self.refuse(f"{name} in a view", value, why)
        if sel.args.get("kind"):
            self.refuse(f"SELECT {sel.args['kind']}", sel)
        windowed = [w for item in sel.expressions for w in outer(item, exp.Window) if isinstance(w.this, tuple(AGGREGATES))]
        self.filtered_aggregates(sel)
        self.group_window(sel)
        scalars = [q for item in sel.expressions for q in outer(item, exp.Subquery, exp.Exists, exp.Select)]
        env = self.with_(sel.args.get("with_"), level, env)
        keyed: list = []  # WHERE equalities a comma join took as its keys
        rel = self.from_(sel, level, env, keyed)
        rel = self.where(sel.args.get("where"), rel, level, env, sel, keyed)
        if windowed:  # AGG(x) OVER (...): columns before the aggregates take them for a GROUP BY's
            rel = self.window_aggregates(sel, windowed, rel, level)
        grouped = sel.args.get("group") or rel.window is not None or any(
            outer(item, *AGGREGATES) for item in sel.expressions) or sel.args.get("having")
        if scalars and grouped:
            self.refuse("a scalar subquery in the SELECT list of a grouped query", scalars[0], "compute it in an enclosing query")
        for item in sel.expressions if scalars else []:
            rel = self.scalar_subqueries(item, rel, level, env)
        if grouped:
            rel, post = self.aggregate(sel, rel, level)
        else:
            post = None
        rel = self.select_list(sel, rel, level, post)
        if sel.args.get("distinct"):
            d = sel.args["distinct"]
            if d.args.get("on"):
                self.refuse("DISTINCT ON", d)
            self.settle(rel, sel)
            rel = self.finish(rel, sel, level)  # distinct over exactly the selected columns
            out = self.b.add(level, f"{self.view}_distinct", "distinct", {}, {"in": rel.ref}, self.span(d) or self.span(sel), "DISTINCT")
            rel = Rel(out, rel.cols, rel.lateness)
        return rel

    def group_window(self, sel: exp.Select):
        """Calcite's group window, as Feldera's Nexmark texts write it: `FROM t [AS a] ...
        GROUP BY ..., TUMBLE(a.ts, INTERVAL ...)` with TUMBLE_START / TUMBLE_END(a.ts,
        INTERVAL ...) in the SELECT list is `FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts),
        INTERVAL ...)) AS a ... GROUP BY ..., window_start, window_end` reading window_start
        / window_end; rewritten in place."""
        group = sel.args.get("group")
        calls = [g for g in (group.expressions if group else []) if isinstance(g, exp.Anonymous) and g.name.upper() == "TUMBLE"]
        if not calls:
            return
        call = calls[0]
        if len(calls) > 1:
            self.refuse("two TUMBLE(...) in one GROUP BY", calls[1])
        if len(call.expressions) != 2 or not isinstance(call.expressions[0], exp.Column) or not isinstance(call.expressions[1], exp.Interval):
            self.fail("GROUP BY TUMBLE(column, INTERVAL ...) takes a column and an interval", call)
        src = sel.args.get("from_")
        table = src.this if src is not None else None
        if sel.args.get("joins") or not isinstance(table, exp.Table) or not isinstance(table.this, exp.Identifier) or table.args.get("db"):
            self.refuse("GROUP BY TUMBLE(...) over anything but one named table", call,
                        "FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL ...)) GROUP BY window_start, window_end")
        column, interval = call.expressions
        alias = table.alias_or_name
        window = exp.Table(this=exp.Anonymous(this="TUMBLE", expressions=[
            exp.Column(this=table.this.copy()), exp.Anonymous(this="DESCRIPTOR", expressions=[exp.Column(this=column.this.copy())]), interval.copy()]),
            alias=exp.TableAlias(this=exp.to_identifier(alias)))
        same = (column.name.lower(), interval.sql())
        def bound(name):
            return exp.Column(this=exp.to_identifier(name), table=exp.to_identifier(alias))
        for item in list(sel.expressions) + ([sel.args["having"]] if sel.args.get("having") else []):
            for f in list(item.find_all(exp.Anonymous)):
                fname = f.name.upper()
                if fname in ("TUMBLE_START", "TUMBLE_END", "TUMBLE_ROWTIME", "TUMBLE_PROCTIME"):
                    if fname not in ("TUMBLE_START", "TUMBLE_END"):
                        self.refuse(f"{fname}()", f, "TUMBLE_START and TUMBLE_END")
                    args = f.expressions
                    if len(args) != 2 or not isinstance(args[0], exp.Column) or (args[0].name.lower(), args[1].sql()) != same:
                        self.fail(f"{fname} must name the GROUP BY's TUMBLE column and interval: {fname}({call.sql()[7:-1]})", f)
                    if f is item:
                        sel.set("expressions", [bound("window_start" if fname == "TUMBLE_START" else "window_end") if e is f else e for e in sel.expressions])
                    else:
                        f.replace(bound("window_start" if fname == "TUMBLE_START" else "window_end"))
        group.set("expressions", [e for g in group.expressions for e in ([bound("window_start"), bound("window_end")] if g is call else [g])])
        table.replace(window)

    def filtered_aggregates(self, sel: exp.Select):
        """`agg(x) FILTER (WHERE c)` in the SELECT list or HAVING is `agg(CASE WHEN c THEN x
        END)` (aggregates skip NULLs), and `COUNT(*) FILTER (WHERE c)` is `COUNT(CASE WHEN c
        THEN 1 END)`; rewritten in place, keeping the unnamed item's name."""
        items = list(sel.expressions) + ([sel.args["having"]] if sel.args.get("having") else [])
        for item in items:
            for f in outer(item, exp.Filter):
                call, where = f.this, f.expression
                if type(call) not in AGGREGATES or not isinstance(where, exp.Where):
                    continue  # refused as it stands by the aggregate's checks
                name = spark_name(f) if f is item else None
                arg = call.this
                distinct = isinstance(arg, exp.Distinct)
                if distinct:
                    if len(arg.expressions) != 1:
                        continue
                    arg = arg.expressions[0]
                if isinstance(arg, exp.Star) or arg is None:
                    if type(call) is not exp.Count:
                        continue
                    arg = exp.Literal.number(1)
                case = exp.Case(ifs=[exp.If(this=where.this.copy(), true=arg.copy())])
                new = call.copy()
                new.set("this", exp.Distinct(expressions=[case]) if distinct else case)
                f.replace(new)
                if name is not None:
                    self.filter_names[id(new)] = name

    def with_(self, with_node, level, env):
        if not with_node:
            return env
        env = dict(env)
        for cte in with_node.expressions:
            name = ident(cte.args["alias"].this)
            columns = [ident(c) for c in cte.args["alias"].columns] if cte.args["alias"].columns else None
            if with_node.args.get("recursive") and references(cte.this, name):
                rel = self.recursive(name, columns, cte.this, level, env)
            else:
                rel = self.query(cte.this, level, env)
                self.settle(rel, cte.this)
                if columns:
                    if len(columns) != len(rel.cols):
                        self.fail(f"WITH {name}: {len(columns)} column names for {len(rel.cols)} columns", cte.args["alias"])
                    rel = Rel(rel.ref, [replace(c, name=n) for c, n in zip(rel.cols, columns)], rel.lateness)
            env[name] = Rel(rel.ref, [Col(name, c.name, c.phys) for c in rel.cols], rel.lateness)
        return env

    # ---- FROM -----------------------------------------------------------------------
    def from_(self, sel: exp.Select, level, env, keyed: list | None = None) -> Rel:
        """The FROM items joined in order. A comma (or CROSS) join takes the WHERE's
        equalities between its two sides as its keys, as `JOIN ... ON` does (each one
        taken is put in `keyed`, for WHERE to skip): `FROM a, b WHERE a.k = b.k` is a
        keyed join, not the product filtered. With more than two FROM items only
        qualified columns are taken (an unqualified name might be a later item's too),
        and none before a RIGHT or FULL join."""
        src = sel.args.get("from_")
        if src is None:
            return self.one_row(sel, level)
        rel = self.source(src.this, level, env)
        joins = sel.args.get("joins") or []
        where = sel.args.get("where")
        parts = [p for p in conjuncts(where.this)] if where is not None and keyed is not None else []
        if any((j.args.get("side") or "").upper() in ("RIGHT", "FULL") for j in joins):
            parts = []  # WHERE, after a RIGHT / FULL join, also drops its NULL-padded rows
        if len(joins) > 1:
            parts = [p for p in parts if isinstance(p, exp.EQ) and all(c.args.get("table") for c in (p.this, p.expression) if isinstance(c, exp.Column))]
        for join in joins:
            rel = self.join(rel, join, level, env, [p for p in parts if not any(p is k for k in keyed or [])], keyed)
        return rel

    def one_row(self, sel, level) -> Rel:
        """SELECT without FROM reads one row with no columns: the global count of a
        table filtered to nothing (a global aggregate always has one row, here one that
        never changes). Made once per script."""
        if self.one is None:
            table = next(iter(self.tables), None)
            if table is None:
                self.fail("SELECT without FROM needs a table in the script (its one row is made from a table's empty filter)", sel)
            nothing = self.b.add(self.b.top, "one_row_source", "filter", {"predicate": "FALSE"}, {"in": self.relations[table].ref}, self.span(sel), "SELECT without FROM")
            self.one = self.b.add(self.b.top, "one_row", "aggregate", {"group_by": [], "aggregates": [{"fn": "count", "as": "one_row"}]},
                                  {"in": nothing}, self.span(sel), "SELECT without FROM")
        return Rel(self.one, [])

    def source(self, node, level, env) -> Rel:
        named = node.args.get("alias")
        if named is not None and named.this is not None and not isinstance(named.this, (exp.Identifier, str)):
            self.refuse(f"the alias {named.this.sql()!r}", node, "an alias is a name: FROM t AS a")
        alias = ident(named.this) if named is not None and named.this else None
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous) and node.this.name.upper() in WINDOW_FUNCTIONS:
            return self.window_source(node.this, alias, level, env)
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            if node.args.get("db") or node.args.get("catalog"):
                self.refuse(f"qualified table name {node.sql()!r}", node)
            name = ident(node.this)
            rel = env.get(name) or self.relations.get(name)
            if rel is None and name in self.broken:
                raise SqlError([])  # its own statement's problem is reported
            if rel is None:
                self.fail(f"unknown table or view {name!r}", node)
            qual = alias or name
            return Rel(rel.ref, [Col(qual, c.name, c.phys) for c in rel.cols], dict(rel.lateness))
        if isinstance(node, exp.Subquery):
            rel = self.query(node.this, level, env)
            qual = alias
            if node.args.get("alias") and node.args["alias"].columns:
                self.refuse("column names on a derived table alias", node.args["alias"])
            return Rel(rel.ref, [Col(qual, c.name, c.phys) for c in rel.cols], rel.lateness, rel.window, rel.rownum and dict(rel.rownum, qual=qual))
        if isinstance(node, exp.Unnest):
            self.refuse("UNNEST as the first FROM item", node, "write FROM t CROSS JOIN UNNEST(t.list) AS u(x)")
        self.refuse(f"FROM item {node.sql()[:40]!r}", node)

    def window_source(self, call: exp.Anonymous, alias, level, env) -> Rel:
        fn = WINDOW_FUNCTIONS[call.name.upper()]
        args = call.expressions
        want = {"TUMBLE": 3, "HOP": 4, "SESSION": 4}[fn]
        if len(args) != want:
            self.fail(f"{fn}(TABLE t, DESCRIPTOR(time), ...) takes {want} arguments here, got {len(args)}", call)
        if not isinstance(args[0], exp.Column) or args[0].table:
            self.fail(f"{fn}: the first argument must be TABLE name", args[0])
        base = self.source(exp.Table(this=args[0].this), level, env)
        time = self.descriptor(args[1], base, fn)[0]
        tcol = self.b.schema(base.ref).column(time.phys)
        spec = {"fn": fn, "time": time.phys, "span": self.span(call), "base": base}
        if fn == "TUMBLE":
            spec["size"] = self.duration(args[2], tcol.type)
        elif fn == "HOP":
            spec["slide"] = self.duration(args[2], tcol.type)
            spec["size"] = self.duration(args[3], tcol.type)
        else:
            spec["keys"] = [c.phys for c in self.descriptor(args[2], base, fn)]
            spec["gap"] = self.duration(args[3], tcol.type)
        spec["lateness"] = base.lateness.get(time.phys, NEVER_LATE.get(tcol.type))
        qual = alias
        cols = [Col(qual or c.qual, c.name, c.phys) for c in base.cols]
        cols += [Col(qual, "window_start", "window_start", window=True), Col(qual, "window_end", "window_end", window=True)]
        return Rel(base.ref, cols, dict(base.lateness), window=spec)

    def descriptor(self, node, rel: Rel, fn: str) -> list[Col]:
        if not (isinstance(node, exp.Anonymous) and node.name.upper() == "DESCRIPTOR"):
            self.fail(f"{fn}: expected DESCRIPTOR(column)", node)
        return [self.resolve(c, rel.cols) for c in node.expressions]

    def duration(self, node, time_type: str, span: Span | None = None):
        where = span or self.span(node)
        if time_type == "bigint":
            if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
                return int(node.this)
            self.fail("a duration over a BIGINT time column is a whole number", span=where)
        if time_type != "timestamp":
            self.fail(f"window time columns are TIMESTAMP or BIGINT, not {time_type}", span=where)
        if isinstance(node, exp.Interval) and isinstance(node.this, exp.Literal) and node.args.get("unit") is not None:
            value, unit = node.this.this.strip(), node.args["unit"].name.lower()
            parts = value.split()
            if len(parts) == 2 and parts[0].isdigit():  # INTERVAL '30 seconds'
                value, unit = parts
            if value.isdigit() and unit.rstrip("s") in ("millisecond", "second", "minute", "hour", "day"):
                return f"{value} {unit.rstrip('s')}s"
        if isinstance(node, exp.Interval) and isinstance(node.this, exp.Literal) and node.args.get("unit") is None:
            parts = node.this.this.split()
            if len(parts) == 2 and parts[0].isdigit() and parts[1].lower().rstrip("s") in ("millisecond", "second", "minute", "hour", "day"):
                return f"{parts[0]} {parts[1].lower().rstrip('s')}s"
        self.fail("expected INTERVAL 'n' MILLISECOND|SECOND|MINUTE|HOUR|DAY", span=where)

    def join(self, left: Rel, join: exp.Join, level, env, where_parts=(), keyed=None) -> Rel:
        shared: list[tuple[Col, Col]] = []
        rel = self.join_on(left, join, level, env, shared, where_parts, keyed)
        side = (join.args.get("side") or "").upper()
        if not shared:
            return rel
        # one column per shared name where the left's was (as DuckDB): the left's value
        # (inner, LEFT), the right's (RIGHT), COALESCE of both (FULL); the sides' copies
        # stay reachable qualified
        cols = [replace(c, merged=True) if any(c is r for _, r in shared) else c for c in rel.cols]
        if side in ("RIGHT", "FULL"):
            cols = [replace(c, merged=True) if any(c is l for l, _ in shared) else c for c in cols]
            extra = []
            taken = set(self.b.schema(rel.ref).names)
            for l, r in shared:
                if side == "RIGHT":
                    merged = Col(None, l.name, r.phys)
                else:
                    phys = fresh_name(l.name, taken)
                    taken.add(phys)
                    extra.append((phys, f"COALESCE({quote(l.phys)}, {quote(r.phys)})"))
                    merged = Col(None, l.name, phys)
                at = next(i for i, c in enumerate(cols) if c.phys == l.phys and c.merged)
                cols.insert(at, merged)
            if extra:
                schema = self.b.schema(rel.ref)
                ref = self.b.add(level, f"{self.view}_using", "map", {"columns": [{"name": n, "expr": quote(n)} for n in schema.names] + [{"name": n, "expr": e} for n, e in extra]},
                                 {"in": rel.ref}, self.span(join), "FULL JOIN ... USING")
                return Rel(ref, cols, rel.lateness, splits=rel.splits)
        return Rel(rel.ref, cols, rel.lateness, splits=rel.splits)

    def shared_columns(self, left: Rel, right: Rel, join: exp.Join, natural: bool) -> list[tuple[Col, Col]]:
        """The (left, right) column pairs of USING (names) or of NATURAL (every name both
        sides have)."""
        if natural:
            rnames = {c.name for c in right.cols if not c.merged and not c.window}
            names = [c.name for c in left.cols if not c.merged and not c.window and c.name in rnames]
            names = list(dict.fromkeys(names))
        else:
            names = [ident(i) for i in join.args["using"]]
        pairs = []
        for n in names:
            column = exp.Column(this=exp.Identifier(this=n, quoted=True))
            for side, cols in (("left", left.cols), ("right", right.cols)):
                if self.try_resolve(column, cols) is None:
                    found = [c for c in cols if c.name == n and not c.merged]
                    self.fail(f"USING column {n!r} is {'ambiguous' if found else 'not'} on the {side} side" if not natural
                              else f"NATURAL JOIN: column {n!r} is ambiguous on the {side} side", join)
            pairs.append((self.resolve(column, left.cols), self.resolve(column, right.cols)))
        return pairs

    def join_on(self, left: Rel, join: exp.Join, level, env, shared_out: list, where_parts=(), keyed=None) -> Rel:
        """The join; USING / NATURAL put their column pairs in `shared_out`; a comma or
        CROSS join takes `where_parts`' equalities between its sides as keys (into `keyed`)."""
        self.settle(left, join)
        side = (join.args.get("side") or "").upper()
        kind = (join.args.get("kind") or "").upper()
        natural = (join.args.get("method") or "").upper() == "NATURAL"
        if (join.args.get("method") or "").upper() == "ASOF":
            return self.asof_join(left, join, level, env, side, kind)
        if join.args.get("match_condition") is not None:
            self.refuse("MATCH_CONDITION without ASOF", join.args["match_condition"], "FROM a LEFT ASOF JOIN b MATCH_CONDITION (a.t >= b.t) ON a.k = b.k")
        if join.args.get("method") and not natural:
            self.refuse(f"{join.args['method']} JOIN", join)
        if kind not in ("", "INNER", "CROSS", "OUTER") or side not in ("", "LEFT", "RIGHT", "FULL"):
            self.refuse(f"{side} {kind} JOIN".strip(), join)
        if isinstance(join.this, exp.Unnest):
            return self.unnest(left, join, level)
        right = self.source(join.this, level, env)
        self.settle(right, join.this)
        right = self.apart(left, right, level, join)
        on = join.args.get("on")
        shared = None  # USING / NATURAL: the (left, right) columns of each name joined on
        if join.args.get("using") or natural:
            shared = self.shared_columns(left, right, join, natural)
            shared_out += shared
            if not shared:
                kind = "CROSS"  # NATURAL JOIN without a common name (PostgreSQL, Spark: the product)
        if on is None and not shared and not side and not natural and kind in ("", "CROSS") and keyed is not None:
            taken = [p for p in where_parts if self.key_pair(p, left.cols, right.cols)]
            if taken:
                keyed += taken
                on, kind = and_all(taken), ""
        if kind == "CROSS" or (on is None and not shared):
            if side:
                self.refuse(f"{side} JOIN without ON", join)
            out = self.b.add(level, f"{self.view}_product", "join", {"left_keys": [], "right_keys": []}, {"left": left.ref, "right": right.ref}, self.span(join), "CROSS JOIN")
            return Rel(out, left.cols + right.cols, left.lateness | right.lateness, splits=left.splits)
        keys, rest = (list(shared), []) if shared else ([], [])
        for c in conjuncts(on) if not shared else []:
            pair = self.key_pair(c, left.cols, right.cols)
            if pair:
                keys.append(pair)
            else:
                rest.append(c)
        if not keys and side:
            self.refuse(f"a {side} JOIN condition without an equality between the two sides", on, "outer joins are equi-joins (inner joins take any condition)")
        if not keys:  # a theta join (r.t BETWEEN s.lo AND s.hi, r.a < s.a): the product, filtered
            out = self.b.add(level, f"{self.view}_product", "join", {"left_keys": [], "right_keys": []}, {"left": left.ref, "right": right.ref}, self.span(join), "JOIN (no equality: the product)")
            return self.filter(Rel(out, left.cols + right.cols, left.lateness | right.lateness, splits=left.splits), rest, level, on)
        if rest and side:
            self.refuse(f"{side} JOIN condition {rest[0].sql()!r}", rest[0], "outer joins take only equalities between the two sides")
        lk, rk = [k[0].phys for k in keys], [k[1].phys for k in keys]
        span = self.span(join)
        if not side:
            out = self.b.add(level, f"{self.view}_join", "join", {"left_keys": lk, "right_keys": rk}, {"left": left.ref, "right": right.ref}, span, "JOIN")
            rel = Rel(out, left.cols + right.cols, left.lateness | right.lateness, splits=left.splits)
            if rest:
                rel = self.filter(rel, rest, level, on)
            return rel
        if side == "LEFT":
            out = self.b.add(level, f"{self.view}_left_join", "left_join", {"left_keys": lk, "right_keys": rk}, {"left": left.ref, "right": right.ref}, span, "LEFT JOIN")
            return Rel(out, left.cols + right.cols, dict(left.lateness), splits=left.splits)
        if side == "RIGHT":
            out = self.b.add(level, f"{self.view}_right_join", "left_join", {"left_keys": rk, "right_keys": lk}, {"left": right.ref, "right": left.ref}, span, "RIGHT JOIN")
            return Rel(out, left.cols + right.cols, dict(right.lateness), splits=left.splits)
        # FULL: left join + the right rows without a match, padded with NULLs
        lj = self.b.add(level, f"{self.view}_left_join", "left_join", {"left_keys": lk, "right_keys": rk}, {"left": left.ref, "right": right.ref}, span, "FULL JOIN")
        only = self.b.add(level, f"{self.view}_right_only", "antijoin", {"left_keys": rk, "right_keys": lk}, {"left": right.ref, "right": left.ref}, span, "FULL JOIN")
        schema = self.b.schema(lj)
        right_names = set(self.b.schema(right.ref).names)
        pad = [{"name": c.name, "expr": quote(c.name) if c.name in right_names else f"CAST(NULL AS {engine_cast(c.type)})"} for c in schema.columns]
        padded = self.b.add(level, f"{self.view}_right_padded", "map", {"columns": pad}, {"in": only}, span, "FULL JOIN")
        out = self.b.add(level, f"{self.view}_full_join", "union", {}, {"a": lj, "b": padded}, span, "FULL JOIN")
        return Rel(out, left.cols + right.cols, splits=left.splits)

    def asof_join(self, left: Rel, join: exp.Join, level, env, side: str, kind: str) -> Rel:
        """`a [LEFT] ASOF JOIN b MATCH_CONDITION (a.t >= b.t) ON a.k = b.k [AND ...]`:
        an `asof_join` keyed on the ON's equalities, matching by the condition's
        comparison (>=, >, <=, < of a left column with a right one, either way round)."""
        usage = "FROM a [LEFT] ASOF JOIN b MATCH_CONDITION (a.t >= b.t) ON a.k = b.k"
        if side not in ("", "LEFT") or kind not in ("", "INNER", "OUTER"):
            self.refuse(f"{side} {kind} ASOF JOIN".replace("  ", " ").strip(), join, "only ASOF JOIN and LEFT ASOF JOIN")
        cond = join.args.get("match_condition")
        if cond is None:
            self.fail(f"ASOF JOIN needs a MATCH_CONDITION: {usage}", join)
        if join.args.get("using"):
            self.refuse("ASOF JOIN ... USING", join, f"write the keys as ON: {usage}")
        on = join.args.get("on")
        if on is None:
            self.fail(f"ASOF JOIN needs ON with the key equalities: {usage}", join)
        right = self.source(join.this, level, env)
        self.settle(right, join.this)
        right = self.apart(left, right, level, join)
        flipped = {exp.GTE: "<=", exp.GT: "<", exp.LTE: ">=", exp.LT: ">"}
        if type(cond) not in flipped:
            self.fail(f"MATCH_CONDITION must compare a time of each side with >=, >, <= or <, got {cond.sql()!r}", cond)
        if not (isinstance(cond.this, exp.Column) and isinstance(cond.expression, exp.Column)):
            self.fail(f"MATCH_CONDITION compares a column of each side (a.t >= b.t), got {cond.sql()!r}", cond)
        pair = self.key_pair(exp.EQ(this=cond.this, expression=cond.expression), left.cols, right.cols)
        if pair is None:
            self.fail(f"MATCH_CONDITION must compare a column of the left side with one of the right side, got {cond.sql()!r}", cond)
        match = {exp.GTE: ">=", exp.GT: ">", exp.LTE: "<=", exp.LT: "<"}[type(cond)]
        if self.try_resolve(cond.this, left.cols) is None or self.try_resolve(cond.this, right.cols) is not None:
            match = flipped[type(cond)]  # written right-side first: b.t <= a.t is a.t >= b.t
        keys = []
        for c in conjuncts(on):
            found = self.key_pair(c, left.cols, right.cols)
            if found is None:
                self.fail(f"an ASOF JOIN's ON takes only equalities between a column of each side, got {c.sql()!r}", c)
            keys.append(found)
        params = {"left_keys": [k[0].phys for k in keys], "right_keys": [k[1].phys for k in keys],
                  "left_time": pair[0].phys, "right_time": pair[1].phys, "match": match, "outer": side == "LEFT"}
        out = self.b.add(level, f"{self.view}_asof_join", "asof_join", params, {"left": left.ref, "right": right.ref},
                         self.span(join), f"{side + ' ' if side else ''}ASOF JOIN")
        return Rel(out, left.cols + right.cols, dict(left.lateness), splits=left.splits)

    def apart(self, left: Rel, right: Rel, level, where) -> Rel:
        """`right` with its engine columns renamed away from `left`'s (joins keep both)."""
        taken = set(self.b.schema(left.ref).names)
        schema = self.b.schema(right.ref)
        if not taken & set(schema.names):
            return right
        renamed, used = {}, taken | set(schema.names)
        for n in schema.names:
            if n in taken:
                quals = {c.qual for c in right.cols if c.phys == n} - {None}
                renamed[n] = fresh_name(f"{sorted(quals)[0]}_{n}" if quals else n, used)
                used.add(renamed[n])
            else:
                renamed[n] = n
        ref = self.b.add(level, f"{self.view}_renamed", "map", {"columns": [{"name": renamed[n], "expr": quote(n)} for n in schema.names]},
                         {"in": right.ref}, self.span(where), "join (naming the right side's columns apart)")
        return Rel(ref, [replace(c, phys=renamed[c.phys]) for c in right.cols], {renamed[k]: v for k, v in right.lateness.items()}, splits=right.splits)

    def key_pair(self, c, lcols, rcols):
        if not (isinstance(c, exp.EQ) and isinstance(c.this, exp.Column) and isinstance(c.expression, exp.Column)):
            return None
        a, b = c.this, c.expression
        la, rb = self.try_resolve(a, lcols), self.try_resolve(b, rcols)
        if la and rb and not self.try_resolve(a, rcols) and not self.try_resolve(b, lcols):
            return la, rb
        lb, ra = self.try_resolve(b, lcols), self.try_resolve(a, rcols)
        if lb and ra and not self.try_resolve(b, rcols) and not self.try_resolve(a, lcols):
            return lb, ra
        return None

    def unnest(self, left: Rel, join: exp.Join, level) -> Rel:
        node = join.this
        if join.args.get("side") or join.args.get("on"):
            self.refuse("an outer or conditional join with UNNEST", join, "CROSS JOIN UNNEST(...) AS u(x)")
        if node.args.get("offset") or len(node.expressions) != 1:
            self.refuse("UNNEST WITH ORDINALITY or of several lists", node)
        alias = node.args.get("alias")
        if alias is None or len(alias.columns) != 1:
            self.fail("UNNEST needs a name for the element: UNNEST(list) AS u(x)", node)
        qual = ident(alias.this) if alias.this else None
        out_name = ident(alias.columns[0])
        arg = node.expressions[0]
        params = {}
        if isinstance(arg, exp.Split) or (isinstance(arg, exp.Anonymous) and arg.name.upper() == "SPLIT"):
            parts = [arg.this, arg.expression] if isinstance(arg, exp.Split) else arg.expressions
            if len(parts) != 2 or not isinstance(parts[1], exp.Literal) or not parts[1].is_string or not parts[1].this:
                self.fail("SPLIT(text, 'separator') needs a non-empty string literal separator", arg)
            params["separator"] = parts[1].this
            col_node = parts[0]
            split = (out_name, self.span(arg))
        else:
            col_node = arg
            split = None
        if not isinstance(col_node, exp.Column):
            self.refuse("UNNEST of an expression", col_node, "UNNEST a column (or SPLIT(column, 'sep'))")
        col = self.resolve(col_node, left.cols)
        schema = self.b.schema(left.ref)
        taken = set(schema.names)
        # flat_map replaces the column it explodes: keep a copy for SQL to go on seeing it
        source = fresh_name(f"{col.phys}_list", taken)
        keep = [{"name": n, "expr": quote(n)} for n in schema.names] + [{"name": source, "expr": quote(col.phys)}]
        pre = self.b.add(level, f"{self.view}_unnest_source", "map", {"columns": keep}, {"in": left.ref}, self.span(node), "UNNEST")
        phys = fresh_name(out_name, taken | {source})
        out = self.b.add(level, f"{self.view}_unnest", "flat_map", {"column": source, "as": phys} | params, {"in": pre}, self.span(node), "UNNEST")
        return Rel(out, left.cols + [Col(qual, out_name, phys)], dict(left.lateness), splits=left.splits + ([split] if split else []))

    # ---- WHERE ----------------------------------------------------------------------
    def where(self, where, rel: Rel, level, env, sel=None, keyed=()) -> Rel:
        parts = [p for p in conjuncts(where.this) if not any(p is k for k in keyed)] if where is not None else []
        if rel.rownum is not None:
            rel = self.top_k(rel, parts, level, sel)
        if rel.window is not None:
            for p in parts:
                if any(self.try_resolve(c, rel.cols) and self.try_resolve(c, rel.cols).window for c in p.find_all(exp.Column)):
                    self.refuse("a WHERE condition on window_start/window_end", p, "filter in an enclosing query")
        for name, span in rel.splits:
            nonempty = [p for p in parts if isinstance(p, exp.NEQ) and {type(p.this), type(p.expression)} == {exp.Column, exp.Literal}
                        and (p.this if isinstance(p.this, exp.Column) else p.expression).name.lower() == name
                        and (p.expression if isinstance(p.this, exp.Column) else p.this).this == ""]
            if not nonempty:
                self.fail(f"UNNEST(SPLIT(...)) keeps empty pieces in SQL while the engine's split drops them: add WHERE {name} <> ''", span=span)
        rel.splits = []
        plain, subs = [], []
        for p in parts:
            (subs if self.is_subquery_predicate(p) else plain).append(p)
        for p in plain:
            rel = self.scalar_subqueries(p, rel, level, env)
        base = rel.window["base"] if rel.window else None
        if plain:
            target = Rel(base.ref, rel.cols[:-2], base.lateness) if base else rel
            filtered = self.filter(target, plain, level, where)
            rel = Rel(filtered.ref, filtered.cols + rel.cols[len(filtered.cols):], rel.lateness, rel.window and dict(rel.window, base=filtered), rel.rownum) if base else filtered
        for p in subs:
            rel = self.subquery_predicate(p, rel, level, env)
        return rel

    def scalar_subqueries(self, node, rel: Rel, level, env) -> Rel:
        """Each scalar subquery in `node` (uncorrelated, one row: an aggregate without
        GROUP BY, or a SELECT without FROM) joined to `rel` as a column by a `join`
        with no keys, and replaced in `node` by that column. Zero rows cannot happen,
        so no outer row is lost; its changes update every row, as SQL's value would."""
        for sq in outer(node, exp.Subquery, exp.Exists, exp.Select):
            if not isinstance(sq, exp.Subquery) or isinstance(sq.parent, exp.In):
                self.refuse("a subquery inside an expression", sq, "IN (SELECT ...), EXISTS and NOT EXISTS as WHERE conjuncts; "
                            "scalar subqueries giving one row, (SELECT MAX(c) FROM t), anywhere")
            if rel.window is not None:
                self.refuse("a scalar subquery over a TUMBLE/HOP/SESSION source", sq, "filter the table in a subquery and window that")
            q = sq.this
            if not (isinstance(q, exp.Select) and not q.args.get("group") and not q.args.get("having") and not q.args.get("distinct")
                    and (q.args.get("from_") is None or any(outer(e, *AGGREGATES) for e in q.expressions))):
                self.refuse("a scalar subquery that may give other than one row", sq,
                            "here a scalar subquery is an aggregate without GROUP BY or HAVING, (SELECT MAX(c) FROM t), or has no FROM")
            try:
                sub = self.query(q, level, env)
            except SqlError as e:
                inner = [c for c in q.find_all(exp.Column) if self.try_resolve(c, rel.cols) is not None]
                if inner and any(p.message.startswith("unknown column") for p in e.problems):
                    self.refuse("a correlated scalar subquery", inner[0], "only uncorrelated ones: correlate with a join and GROUP BY")
                raise
            self.settle(sub, q)
            if len(sub.cols) != 1:
                self.fail(f"a scalar subquery selects one column, this one {len(sub.cols)}", sq)
            value = fresh_name("scalar", set(self.b.schema(rel.ref).names))
            one = self.project(sub, [(value, quote(sub.cols[0].phys))], level, sq, "scalar")
            out = self.b.add(level, f"{self.view}_scalar", "join", {"left_keys": [], "right_keys": []},
                             {"left": rel.ref, "right": one.ref}, self.span(sq), "scalar subquery")
            rel = Rel(out, rel.cols + [Col(SCALAR, value, value, merged=True)], rel.lateness, rel.window, rel.rownum, rel.splits)
            sq.replace(exp.Column(this=exp.Identifier(this=value, quoted=True), table=exp.Identifier(this=SCALAR, quoted=True)))
        return rel

    def filter(self, rel: Rel, parts: list, level, where) -> Rel:
        text = " AND ".join(f"({self.expression(p, rel.cols)})" for p in parts) if len(parts) > 1 else self.expression(parts[0], rel.cols)
        out = self.b.add(level, f"{self.view}_where", "filter", {"predicate": text}, {"in": rel.ref}, self.span(where), "WHERE")
        return Rel(out, rel.cols, rel.lateness, rel.window, rel.rownum)

    def is_subquery_predicate(self, p) -> bool:
        inner = p.this if isinstance(p, exp.Not) else p
        return isinstance(inner, exp.Exists) or (isinstance(inner, exp.In) and inner.args.get("query") is not None)

    def subquery_predicate(self, p, rel: Rel, level, env) -> Rel:
        negated = isinstance(p, exp.Not)
        inner = p.this if negated else p
        span = self.span(p)
        if rel.window is not None:
            self.refuse("IN / EXISTS over a TUMBLE/HOP/SESSION source", p, "filter the table in a subquery and window that")
        if isinstance(inner, exp.In):
            if not isinstance(inner.this, exp.Column):
                self.refuse("IN with an expression on the left", inner.this, "use a column")
            col = self.resolve(inner.this, rel.cols)
            sub = self.query(inner.args["query"].this if isinstance(inner.args["query"], exp.Subquery) else inner.args["query"], level, env)
            self.settle(sub, inner)
            if len(sub.cols) != 1:
                self.fail(f"IN (SELECT ...) must select one column, it selects {len(sub.cols)}", inner.args["query"])
            if negated:
                return self.not_in(rel, col, sub, level, p)
            out = self.b.add(level, f"{self.view}_in", "semijoin", {"left_keys": [col.phys], "right_keys": [sub.cols[0].phys]},
                             {"left": rel.ref, "right": sub.ref}, span, "IN (SELECT ...)")
            return Rel(out, rel.cols, rel.lateness)
        sel = inner.this
        if isinstance(sel, exp.Subquery):
            sel = sel.this
        if not isinstance(sel, exp.Select):
            self.refuse("EXISTS over a set operation", inner)
        for key in ("group", "having", "with_", "distinct"):
            if sel.args.get(key):
                self.refuse(f"{key.upper().rstrip('_')} inside EXISTS", sel.args[key])
        if any(list(e.find_all(*AGGREGATES)) for e in sel.expressions):
            self.refuse("an aggregate inside EXISTS", sel, "an aggregate always gives a row")
        sub = self.from_(sel, level, env)
        self.settle(sub, sel)
        keys, local = [], []
        for c in conjuncts(sel.args["where"].this) if sel.args.get("where") else []:
            cols = list(c.find_all(exp.Column))
            if all(self.try_resolve(x, sub.cols) for x in cols):
                local.append(c)
                continue
            pair = self.key_pair(c, rel.cols, sub.cols)
            if pair is None:
                self.refuse(f"correlated condition {c.sql()!r}", c, "a subquery is correlated only by inner.column = outer.column")
            keys.append(pair)
        if not keys:
            self.refuse("an uncorrelated EXISTS", inner, "correlate it with inner.column = outer.column")
        sub = self.where(exp.Where(this=and_all(local)) if local else None, sub, level, env)
        kind = "antijoin" if negated else "semijoin"
        out = self.b.add(level, f"{self.view}_{'not_exists' if negated else 'exists'}", kind,
                         {"left_keys": [k[0].phys for k in keys], "right_keys": [k[1].phys for k in keys]},
                         {"left": rel.ref, "right": sub.ref}, span, "NOT EXISTS" if negated else "EXISTS")
        return Rel(out, rel.cols, rel.lateness)

    def not_in(self, rel: Rel, col: Col, sub: Rel, level, p) -> Rel:
        """`x NOT IN (SELECT y ...)` as SQL has it: true for every row when the subquery
        is empty; otherwise true only for a non-NULL x matching no y, and never when a y
        is NULL. The antijoin on x = y, times the subquery's one-row counts (rows,
        non-NULL y), kept where `rows = 0 OR (values = rows AND x IS NOT NULL)`."""
        span = self.span(p)
        what = "NOT IN (SELECT ...)"
        y = sub.cols[0].phys
        anti = self.b.add(level, f"{self.view}_not_in", "antijoin", {"left_keys": [col.phys], "right_keys": [y]},
                          {"left": rel.ref, "right": sub.ref}, span, what)
        names = self.b.schema(rel.ref).names
        rows = fresh_name("not_in_rows", set(names))
        values = fresh_name("not_in_values", set(names) | {rows})
        counts = self.b.add(level, f"{self.view}_not_in_counts", "aggregate", {"group_by": [], "aggregates": [
            {"fn": "count", "as": rows}, {"fn": "count", "expr": quote(y), "as": values}]}, {"in": sub.ref}, span, what)
        both = self.b.add(level, f"{self.view}_not_in_product", "join", {"left_keys": [], "right_keys": []}, {"left": anti, "right": counts}, span, what)
        kept = self.b.add(level, f"{self.view}_not_in_kept", "filter", {
            "predicate": f"{quote(rows)} = 0 OR ({quote(values)} = {quote(rows)} AND {quote(col.phys)} IS NOT NULL)"}, {"in": both}, span, what)
        out = self.b.add(level, f"{self.view}_not_in_columns", "map", {"columns": [{"name": n, "expr": quote(n)} for n in names]}, {"in": kept}, span, what)
        return Rel(out, rel.cols, rel.lateness)

    def top_k(self, rel: Rel, parts: list, level, sel=None) -> Rel:
        """The top-k of `rn <= k`; the row number itself is a column (the top_k's `rank`)
        when the enclosing SELECT can see it (`*`, or its name outside WHERE)."""
        rn = rel.rownum
        found = None
        for p in parts:
            bound = rownum_bound(p, rn["name"], rn.get("qual"))
            if bound is not None:
                if found is not None:
                    self.refuse("two conditions on the row number", p)
                found = (p, bound)
        uses = [p for p in parts if (not found or p is not found[0]) and any(c.name.lower() == rn["name"] for c in p.find_all(exp.Column))]
        if found is None or uses:
            self.fail("ROW_NUMBER() is supported only filtered by `rn <= k` (or `rn < k`) in the enclosing WHERE (top-k)", span=rn["span"])
        parts.remove(found[0])
        if found[1] < 1:
            self.fail("the row number bound must be at least 1", found[0])
        params = {"group_by": rn["partition"], "order_by": rn["order"], "k": found[1]}
        cols = list(rel.cols)
        if sel is None or sees_column(sel, rn["name"]):
            rank = fresh_name(engine_name(rn["name"]), set(self.b.schema(rel.ref).names))
            params["rank"] = rank
            cols.insert(rn["position"], Col(rn.get("qual"), rn["name"], rank))
        out = self.b.add(level, f"{self.view}_top_k", "top_k", params, {"in": rel.ref}, rn["span"], "ROW_NUMBER() OVER (...)")
        rel = Rel(out, cols, rel.lateness)
        hidden = set(rn["hidden"])
        if hidden:
            return Rel(out, [c for c in rel.cols if c.phys not in hidden], rel.lateness)
        return rel

    # ---- GROUP BY -------------------------------------------------------------------
    def aggregate(self, sel: exp.Select, rel: Rel, level):
        group = sel.args.get("group")
        if group and (group.args.get("rollup") or group.args.get("cube") or group.args.get("grouping_sets")):
            self.refuse("ROLLUP / CUBE / GROUPING SETS", group)
        keys: list[Col] = []
        computed: dict[str, str] = {}  # GROUP BY expression (SQL text) -> its engine column
        extra: list[tuple[str, str]] = []
        for g in group.expressions if group else []:
            g = self.group_item(g, sel, rel)
            if isinstance(g, exp.Column):
                key = self.resolve(g, rel.cols)
                if all(k.phys != key.phys for k in keys):  # a column listed twice groups once
                    keys.append(key)
                continue
            if isinstance(g, exp.Literal) or rel.window is not None:
                self.refuse(f"GROUP BY {g.sql()!r}", g, "group by columns or expressions over them (not by a constant, nor expressions over a window source)")
            if g.find(exp.AggFunc):
                self.refuse(f"an aggregate in GROUP BY {g.sql()!r}", g)
            if g.sql() not in computed:
                phys = fresh_name(f"group_{len(extra)}", set(self.b.schema(rel.ref).names) | {e[0] for e in extra})
                extra.append((phys, self.expression(g, rel.cols)))
                computed[g.sql()] = phys
                keys.append(Col(None, phys, phys))
        if extra:  # compute the GROUP BY expressions as columns first
            schema = self.b.schema(rel.ref)
            ref = self.b.add(level, f"{self.view}_group_keys", "map",
                             {"columns": [{"name": n, "expr": quote(n)} for n in schema.names] + [{"name": n, "expr": e} for n, e in extra]},
                             {"in": rel.ref}, self.span(group), "GROUP BY")
            rel = Rel(ref, rel.cols + [Col(None, n, n) for n, _ in extra], rel.lateness)
        window = rel.window
        source_cols = rel.cols
        if window:
            if not any(k.window and k.name == "window_start" for k in keys):
                self.fail(f"GROUP BY over {window['fn']} must include window_start", group or sel)
            group_keys = [k for k in keys if not k.window]
            if window["fn"] == "SESSION" and sorted(k.phys for k in group_keys) != sorted(window["keys"]):
                self.fail("GROUP BY over SESSION must be window_start (window_end) and exactly the DESCRIPTOR key columns", group)
            rel_in = window["base"]
            source_cols = [c for c in rel.cols if not c.window]
        else:
            group_keys = keys
            rel_in = rel
        base_schema = self.b.schema(rel_in.ref)
        # aggregate calls of SELECT and HAVING, each computed once
        calls: dict[str, dict] = {}
        taken = set(base_schema.names) | {"window_start", "window_end"}
        alias_of = {}
        for item in sel.expressions:
            if isinstance(item, exp.Alias) and type(item.this) in AGGREGATES:
                alias_of.setdefault(item.this.sql(), ident(item.args["alias"]))
        items = list(sel.expressions) + ([sel.args["having"].this] if sel.args.get("having") else [])
        is_global = not keys
        for item in items:
            for call in outer(item, *AGGREGATES, exp.AggFunc):  # (a subquery's are its own)
                if isinstance(call.parent, (exp.Filter, exp.WithinGroup, exp.IgnoreNulls, exp.RespectNulls)):
                    self.refuse(f"{call.parent.sql()!r}", call.parent, "aggregates take no WITHIN GROUP / NULLS clause; FILTER (WHERE ...) "
                                "only on COUNT(*) and on COUNT, SUM, AVG, MIN, MAX of one expression")
                if type(call) not in AGGREGATES:
                    self.refuse(f"aggregate {call.sql()!r}", call, "COUNT, SUM, AVG, MIN, MAX and COUNT(DISTINCT)")
                text = call.sql()
                if text in calls:
                    continue
                if any(isinstance(a, exp.AggFunc) for a in call.walk() if a is not call):
                    self.refuse("an aggregate inside an aggregate", call)
                fn, arg = AGGREGATES[type(call)], call.this
                if isinstance(arg, exp.Distinct):
                    if len(arg.expressions) != 1:
                        self.refuse(f"{fn.upper()}(DISTINCT of {len(arg.expressions)} expressions)", call, "one expression: COUNT(DISTINCT x)")
                    # MIN / MAX over the distinct values are MIN / MAX
                    fn, arg = (fn if fn in ("min", "max") else f"{fn}_distinct"), arg.expressions[0]
                name = alias_of.get(text)
                if name is None or name in taken:
                    name = fresh_name(f"{fn}_{len(calls)}", taken)
                taken.add(name)
                expr = None if isinstance(arg, exp.Star) or arg is None else self.expression(arg, source_cols)
                if expr is None and fn != "count":
                    self.fail(f"{fn.upper()}(*) is not an aggregate", call)
                spec = {"fn": fn, "as": name} | ({"expr": expr} if expr is not None else {})
                calls[text] = {"spec": spec, "count": None}
                if fn == "sum" and is_global:  # SQL: the SUM of no values is NULL
                    cname = fresh_name(f"{name}_count", taken)
                    taken.add(cname)
                    calls[text]["count"] = cname
        if not calls:
            calls["__count"] = {"spec": {"fn": "count", "as": fresh_name("count", taken)}, "count": None}  # GROUP BY without aggregates
        aggs = [c["spec"] for c in calls.values()]
        aggs += [{"fn": "count", "expr": c["spec"]["expr"], "as": c["count"]} for c in calls.values() if c["count"]]
        span = self.span(group) if group else self.span(sel)
        params = {"group_by": [k.phys for k in group_keys], "aggregates": aggs}
        if window:
            kind = {"TUMBLE": "tumbling_window", "HOP": "sliding_window", "SESSION": "session_window"}[window["fn"]]
            params = {"time": window["time"]} | {k: window[k] for k in ("size", "slide", "gap", "lateness") if k in window} | params
            out = self.b.add(level, f"{self.view}_{window['fn'].lower()}", kind, params, {"in": rel_in.ref}, window["span"], f"{window['fn']} window")
        else:
            out = self.b.add(level, f"{self.view}_group_by", "aggregate", params, {"in": rel_in.ref}, span, "GROUP BY" if group else "aggregate")
        cols = [Col(k.qual, k.name, k.phys, k.window) for k in group_keys]
        if window:
            wq = next(c.qual for c in rel.cols if c.window)
            cols += [Col(wq, "window_start", "window_start", True), Col(wq, "window_end", "window_end", True)]
        post = {"calls": {t: c for t, c in calls.items()}, "keys": keys, "pre": rel.cols, "computed": computed}
        rel = Rel(out, cols)
        if sel.args.get("having"):
            having = sel.args["having"].this
            text = self.expression(having, cols, post)
            out = self.b.add(level, f"{self.view}_having", "filter", {"predicate": text}, {"in": out}, self.span(having), "HAVING")
            rel = Rel(out, cols)
        return rel, post

    def group_item(self, g, sel: exp.Select, rel: Rel):
        """A GROUP BY item as an expression: `GROUP BY 2` is the SELECT list's second
        item, and a name that is no column but a SELECT alias is that item (as DuckDB
        and Spark read them)."""
        items = sel.expressions
        if isinstance(g, exp.Literal) and not g.is_string and g.this.isdigit():
            n = int(g.this)
            if not 1 <= n <= len(items):
                self.fail(f"GROUP BY {n}: the SELECT list has {len(items)} items", g)
            item = items[n - 1]
            node = item.this if isinstance(item, exp.Alias) else item
            if isinstance(node, exp.Star) or (isinstance(node, exp.Column) and isinstance(node.this, exp.Star)):
                self.refuse(f"GROUP BY {n} naming *", g)
            if node.find(exp.AggFunc, exp.Window):
                self.fail(f"GROUP BY {n} names the aggregate {node.sql()!r}", g)
            return node
        if isinstance(g, exp.Column) and not g.args.get("table") and isinstance(g.this, exp.Identifier) and self.try_resolve(g, rel.cols) is None:
            for item in items:
                if isinstance(item, exp.Alias) and ident(item.args["alias"]) == ident(g.this) and not item.this.find(exp.AggFunc, exp.Window):
                    return item.this
        return g

    # ---- SELECT list ----------------------------------------------------------------
    def select_list(self, sel: exp.Select, rel: Rel, level, post) -> Rel:
        out_cols: list[tuple[str, str]] = []  # (name, engine expression)
        names: list[str] = []
        sparks: dict[int, str] = {}  # position -> Spark's name of an unnamed expression
        rownum = None
        for i, item in enumerate(sel.expressions):
            if isinstance(item, exp.Star) or (isinstance(item, exp.Column) and isinstance(item.this, exp.Star)):
                if post is not None:
                    self.refuse("SELECT * with GROUP BY", item)
                qual = ident(item.args["table"]) if isinstance(item, exp.Column) and item.args.get("table") else None
                chosen = [c for c in rel.cols if (c.qual == qual if qual is not None else not c.merged) and not c.window]
                if qual and not chosen:
                    self.fail(f"unknown table {qual!r} in {item.sql()}", item)
                for c in chosen:
                    out_cols.append((c.name, quote(c.phys)))
                    names.append(c.name)
                continue
            node, name = (item.this, ident(item.args["alias"])) if isinstance(item, exp.Alias) else (item, None)
            if isinstance(node, exp.Window):
                rownum = self.row_number(node, name, rel, item) | {"position": len(names)}
                continue
            if name is None and isinstance(node, exp.Column) and node.table == WINDOWED:
                sparks[len(names)] = self.window_names[node.name]  # as Spark names `avg(x) OVER (...)`
                name = engine_name(sparks[len(names)])
            elif name is None and isinstance(node, exp.Column) and node.table == SCALAR:
                sparks[len(names)] = "scalarsubquery()"  # Spark's name of an unnamed scalar subquery
                name = engine_name(sparks[len(names)])
            elif name is None and isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier):
                name = ident(node.this)
            elif name is None:  # named as Spark names it (`sum(balance)`), as an engine column `sum_balance`
                sparks[len(names)] = self.filter_names.get(id(node)) or spark_name(node)
                name = engine_name(sparks[len(names)])
            out_cols.append((name, self.expression(node, rel.cols, post)))
            names.append(name)
        names = apart_names(names)  # a name given twice: the later ones as DuckDB names them (a, a_1)
        out_cols = [(n, e) for n, (_, e) in zip(names, out_cols[:len(names)])] + out_cols[len(names):]
        if rownum is not None:
            if post is not None or sel.args.get("distinct"):
                self.refuse("ROW_NUMBER() with GROUP BY or DISTINCT", rownum["node"])
            hidden = []
            taken = set(n for n, _ in out_cols)
            for key in rownum["partition_cols"] + rownum["order_cols"]:
                if (key.name, quote(key.phys)) not in out_cols:
                    h = fresh_name(f"{key.name}_key", taken)
                    taken.add(h)
                    out_cols.append((h, quote(key.phys)))
                    hidden.append(h)
            phys = {}
            for key in rownum["partition_cols"] + rownum["order_cols"]:
                phys[key.phys] = next(n for n, e in out_cols if e == quote(key.phys))
        # unique engine names for the map
        engine_names, used = [], set()
        for n in [n for n, _ in out_cols]:
            e = fresh_name(n, used)
            used.add(e)
            engine_names.append(e)
        columns = list(zip(engine_names, [e for _, e in out_cols]))
        projected = self.project(rel, columns, level, sel, "select")
        visible = len(names)
        cols = [Col(None, n, e, spark=sparks.get(i)) for i, (n, e) in enumerate(zip(names, engine_names[:visible]))]
        lateness = projected.lateness
        result = Rel(projected.ref, cols + [Col(None, e, e) for e in engine_names[visible:]], lateness)
        if rownum is not None:
            result.rownum = {"name": rownum["name"], "span": rownum["span"], "node": rownum["node"], "position": rownum["position"],
                             "partition": [phys[k.phys] for k in rownum["partition_cols"]],
                             "order": [{"column": phys[k.phys], "desc": d} for k, d in zip(rownum["order_cols"], rownum["desc"])],
                             "hidden": engine_names[visible:]}
            result.cols = cols + [Col(None, e, e) for e in engine_names[visible:]]
        return result

    def window_aggregates(self, sel: exp.Select, windowed: list, rel: Rel, level) -> Rel:
        """Each `AGG(e) OVER (PARTITION BY ... ORDER BY ... frame)` of the SELECT list as a
        column of a window_aggregate node (one node per window, its calls together),
        replaced in its item by that column; the rest of the SELECT list reads it as any
        column."""
        aggregated = sel.args.get("group") or sel.args.get("having") or any(
            a for item in sel.expressions for a in outer(item, *AGGREGATES) if not a.find_ancestor(exp.Window))
        if aggregated:
            self.refuse("a window aggregate in a query with GROUP BY or aggregates", windowed[0],
                        "aggregate in a subquery, then take the window over its rows")
        if rel.window is not None:
            self.refuse("a window aggregate over a TUMBLE/HOP/SESSION source", windowed[0], "aggregate the window in a subquery")
        windows: dict[tuple, tuple[dict, list]] = {}  # (partition, order, frame) -> (params, [(call node, column)])
        taken = set(self.b.schema(rel.ref).names)
        for w in windowed:
            fn, arg = AGGREGATES[type(w.this)], w.this.this
            if isinstance(arg, exp.Distinct) or isinstance(w.parent, exp.Filter) or not isinstance(w.this, exp.AggFunc):
                self.refuse(f"{w.this.sql()!r} in a window", w.this, "COUNT, SUM, AVG, MIN, MAX of one expression, or COUNT(*)")
            partition = [self.resolve(p, rel.cols).phys if isinstance(p, exp.Column) else self.refuse("PARTITION BY an expression", p)
                         for p in w.args.get("partition_by") or []]
            order = [(c.phys, d) for c, d in self.window_order(w, rel)]
            frame = self.window_frame(w, bool(order))
            key = (tuple(partition), tuple(order), tuple(frame.items()))
            params, calls = windows.setdefault(key, ({"group_by": partition, "order_by": [{"column": c, "desc": d} for c, d in order],
                                                      "frame": frame, "aggregates": []}, []))
            column = fresh_name(f"{fn}_over", taken)
            taken.add(column)
            expr = None if arg is None or isinstance(arg, exp.Star) else self.expression(arg, rel.cols)
            params["aggregates"].append({"fn": fn, "expr": expr, "as": column})
            calls.append((w, column))
        for params, calls in windows.values():
            out = self.b.add(level, f"{self.view}_over", "window_aggregate", params, {"in": rel.ref}, self.span(calls[0][0]),
                             calls[0][0].sql())
            rel = Rel(out, rel.cols + [Col(WINDOWED, c, c, merged=True) for _, c in calls], rel.lateness, rel.window, rel.rownum, rel.splits)
            for w, column in calls:
                self.window_names[column] = spark_name(w)
                w.replace(exp.Column(this=exp.Identifier(this=column, quoted=True), table=exp.Identifier(this=WINDOWED, quoted=True)))
        return rel

    def window_order(self, node: exp.Window, rel: Rel) -> list[tuple[Col, bool]]:
        """A window's ORDER BY: columns, ASC with NULLs first or DESC with NULLs last (Spark's defaults)."""
        order = []
        for o in (node.args.get("order").expressions if node.args.get("order") else []):
            if not isinstance(o.this, exp.Column):
                self.refuse("ORDER BY an expression", o)
            d = bool(o.args.get("desc"))
            nulls_first = o.args.get("nulls_first")
            if bool(nulls_first) != (not d):
                self.refuse(f"{'DESC' if d else 'ASC'} {'NULLS FIRST' if nulls_first else 'NULLS LAST'}", o, "NULLs come first ascending and last descending")
            order.append((self.resolve(o.this, rel.cols), d))
        return order

    def window_frame(self, node: exp.Window, ordered: bool) -> dict:
        """ROWS|RANGE BETWEEN ... AND ... as offsets (negative: preceding; null: unbounded).
        Without a frame: RANGE from the first row to the current row's last peer, or the
        whole partition without ORDER BY (SQL's defaults)."""
        spec = node.args.get("spec")
        if spec is None:
            return {"unit": "range", "start": None, "end": 0 if ordered else None}
        unit = (spec.args.get("kind") or "").lower()
        if unit not in ("rows", "range"):
            self.refuse(f"a {unit.upper()} frame", spec, "ROWS or RANGE")
        if spec.args.get("exclude"):
            self.refuse("EXCLUDE in a window frame", spec)

        def offset(value, side, which):
            if isinstance(value, str) and value.upper() == "UNBOUNDED":
                if (side or "").upper() != ("PRECEDING" if which == "start" else "FOLLOWING"):
                    self.fail(f"the frame cannot {which} at UNBOUNDED {(side or '').upper()}", node)
                return None
            if isinstance(value, str) and value.upper() == "CURRENT ROW":
                return 0
            if not (isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit()):
                self.refuse(f"frame bound {value.sql() if isinstance(value, exp.Expression) else value!r}", spec,
                            "UNBOUNDED, CURRENT ROW or a whole number of rows PRECEDING / FOLLOWING")
            if unit == "range":
                self.refuse(f"RANGE with an offset ({value.sql()} {(side or '').upper()})", spec,
                            "offsets need ROWS; RANGE goes from UNBOUNDED PRECEDING or CURRENT ROW to CURRENT ROW or UNBOUNDED FOLLOWING")
            n = int(value.this)
            return -n if (side or "").upper() == "PRECEDING" else n

        start = offset(spec.args.get("start"), spec.args.get("start_side"), "start")
        end = offset(spec.args.get("end") or "CURRENT ROW", spec.args.get("end_side"), "end")
        if start is not None and end is not None and start > end:
            self.fail("the frame starts after it ends", spec)
        if unit == "rows" and not ordered and (start, end) != (None, None):
            self.refuse("a ROWS frame without ORDER BY", spec, "which rows precede a row is given by ORDER BY")
        return {"unit": unit, "start": start, "end": end}

    def row_number(self, node: exp.Window, name, rel: Rel, item) -> dict:
        if not isinstance(node.this, exp.RowNumber):
            self.refuse(f"window function {node.this.sql()!r}", node, "ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) <= k only")
        if node.args.get("spec"):
            self.refuse("a window frame", node.args["spec"])
        if name is None:
            self.fail("name ROW_NUMBER() with AS", node)
        partition = [self.resolve(p, rel.cols) if isinstance(p, exp.Column) else self.refuse("PARTITION BY an expression", p) for p in node.args.get("partition_by") or []]
        ordered = self.window_order(node, rel)
        order, desc = [c for c, _ in ordered], [d for _, d in ordered]
        if not order:
            self.fail("ROW_NUMBER() needs ORDER BY", node)
        return {"name": name, "partition_cols": partition, "order_cols": order, "desc": desc, "span": self.span(item), "node": node}

    # ---- expressions ----------------------------------------------------------------
    def try_resolve(self, col: exp.Column, cols: list[Col]) -> Col | None:
        try:
            return self.resolve(col, cols)
        except SqlError:
            return None

    def resolve(self, col: exp.Column, cols: list[Col]) -> Col:
        if not isinstance(col, exp.Column) or not isinstance(col.this, exp.Identifier):
            self.refuse(f"{col.sql()!r} where a column is expected", col)
        name = ident(col.this)
        qual = ident(col.args["table"]) if col.args.get("table") else None
        if col.args.get("db"):
            self.refuse(f"column reference {col.sql()!r}", col)
        found = [c for c in cols if c.name == name and (c.qual == qual if qual is not None else not c.merged)]
        if not found:
            label = f"{qual}.{name}" if qual else name
            known = ", ".join(sorted({f"{c.qual}.{c.name}" if c.qual else c.name for c in cols}))
            self.fail(f"unknown column {label!r} (columns: {known})", col)
        if len({c.phys for c in found}) > 1:
            self.fail(f"column {name!r} is ambiguous; qualify it", col)
        return found[0]

    def expression(self, node, cols: list[Col], post: dict | None = None) -> str:
        """A SQL expression -> engine expression text over the engine's column names."""
        for bad in node.find_all(exp.Subquery, exp.Exists, exp.Window, exp.Select):
            self.refuse(f"{type(bad).__name__.lower()} in an expression", bad)
        if post is None:
            for call in node.find_all(exp.AggFunc):
                self.refuse(f"aggregate {call.sql()!r} outside GROUP BY / aggregate query", call)
        def swap(n):
            if post is not None and n.sql() in post["computed"] and not isinstance(n, exp.Column):
                return exp.column(post["computed"][n.sql()], quoted=needs_quote(post["computed"][n.sql()]))
            if post is not None and isinstance(n, exp.AggFunc):
                call = post["calls"][n.sql()]
                name = exp.column(call["spec"]["as"], quoted=needs_quote(call["spec"]["as"]))
                if call["count"]:
                    return exp.Case(ifs=[exp.If(this=exp.EQ(this=exp.column(call["count"], quoted=needs_quote(call["count"])), expression=exp.Literal.number(0)),
                                                 true=exp.Null())], default=name)
                return name
            if isinstance(n, exp.Column):
                if isinstance(n.this, exp.Star):
                    self.refuse("* in an expression", n)
                found = self.try_resolve(n, cols)
                if found is None and post is not None and self.try_resolve(n, post["pre"]) is not None:
                    self.fail(f"column {n.sql()!r} must appear in GROUP BY or inside an aggregate", n)
                found = found or self.resolve(n, cols)
                return exp.column(found.phys, quoted=needs_quote(found.phys))
            return n
        return node.copy().transform(swap).sql()

    # ---- recursion ------------------------------------------------------------------
    def recursive(self, name: str, columns, query, level: Level, env) -> Rel:
        """base UNION step(name) as a fixed point: paths = distinct(base ∪ step(z^-1 paths))."""
        terms = union_terms(query)
        if terms is None:
            self.refuse("a recursive query that is not base UNION recursive-step", query, "recursion uses UNION (distinct); UNION ALL does not terminate the same way")
        base_terms = [t for t in terms if not references(t, name)]
        steps = [t for t in terms if references(t, name)]
        if not base_terms or not steps:
            self.fail(f"recursive {name!r} needs a non-recursive term and a recursive term joined by UNION", query)
        base = self.query(base_terms[0], level, env)
        self.settle(base, base_terms[0])
        for t in base_terms[1:]:
            other = self.query(t, level, env)
            u = self.b.add(level, f"{name}_base", "union", {}, {"a": base.ref, "b": self.aligned(other, base, level, t)}, self.span(t), "UNION")
            base = Rel(u, base.cols)
        names = columns or [c.name for c in base.cols]
        if len(names) != len(base.cols):
            self.fail(f"{name}: {len(names)} column names for {len(base.cols)} columns", query)
        base = self.project(base, [(n, quote(c.phys)) for n, c in zip(names, base.cols)], level, base_terms[0], f"{name}_base")
        for step in steps:
            self.monotone(step, name)
        fp_id = self.b.fresh(f"{name}_fixedpoint")
        sub = Level(parent=level, owner=fp_id)
        seed = self.b.bring(base.ref, sub, self.span(base_terms[0]))
        schema = self.b.schema(base.ref)
        prev_id = self.b.fresh(f"{name}_previous")
        prev = Ref(sub, prev_id)
        self.b.schemas[prev_id] = schema
        inner_env = dict(env) | {name: Rel(prev, [Col(name, n, n) for n in names])}
        total = Rel(seed, [Col(None, n, n) for n in names])
        for step in steps:
            r = self.query(step, sub, inner_env)
            self.settle(r, step)
            u = self.b.add(sub, f"{name}_union", "union", {}, {"a": total.ref, "b": self.aligned(r, total, sub, step)}, self.span(step), "UNION (recursive)")
            total = Rel(u, total.cols)
        paths = self.b.add(sub, f"{name}_distinct", "distinct", {}, {"in": total.ref}, self.span(query), "UNION (recursive)")
        delay = {"id": prev_id, "kind": "delay", "params": {"schema": schema.as_list()}, "position": {}}
        if self.span(query) is not None:
            delay["source"] = self.span(query).as_dict()
        sub.nodes.insert(0, delay)
        sub.edges.append({"from": {"node": paths.node, "port": "out"}, "to": {"node": prev_id, "port": "in"}})
        export = self.b.add(sub, f"{name}_result", "export", {}, {"in": paths}, self.span(query), "recursive view")
        outs = self.b.add_fixedpoint(level, fp_id, sub, [export.node], self.span(query), f"recursive {name}")
        return Rel(outs[export.node], [Col(None, n, n) for n in names])

    def aligned(self, rel: Rel, like: Rel, level, where) -> Ref:
        if len(rel.cols) != len(like.cols):
            self.fail(f"UNION: {len(rel.cols)} columns where {len(like.cols)} are expected", where)
        return self.project(rel, [(c.phys, quote(r.phys)) for c, r in zip(like.cols, rel.cols)], level, where, "columns").ref

    def monotone(self, step, name: str):
        """The recursive reference must appear once, where adding rows can only add rows
        (so the fixed point is SQL's): FROM or an inner join, not under an aggregate,
        DISTINCT, a set operation, an outer join or a subquery expression."""
        refs = [t for t in step.find_all(exp.Table) if isinstance(t.this, exp.Identifier) and ident(t.this) == name]
        if len(refs) != 1:
            self.refuse(f"{len(refs)} references to recursive {name!r} in one term", step, "exactly one (linear recursion)")
        for join in step.find_all(exp.Join):  # (its executor keeps outer-tick state only: not per inner iteration)
            if (join.args.get("method") or "").upper() == "ASOF":
                self.refuse("ASOF JOIN in a recursive view's step", join)
        node = refs[0]
        while node is not step:
            parent = node.parent
            if isinstance(parent, exp.Join) and (parent.args.get("side") or "").upper():
                self.refuse(f"recursive {name!r} inside an outer join", parent)
            if isinstance(parent, exp.Select):
                if parent.args.get("group") or parent.args.get("distinct") or parent.args.get("having") or any(list(e.find_all(exp.AggFunc, exp.Window)) for e in parent.expressions):
                    self.refuse(f"aggregation or DISTINCT over recursive {name!r}", parent)
                if node.arg_key in ("where", "expressions", "having"):
                    self.refuse(f"recursive {name!r} inside a subquery expression", node)
            if isinstance(parent, SET_OPS + (exp.Exists, exp.In, exp.Where)):
                self.refuse(f"recursive {name!r} inside {type(parent).__name__.upper()}", parent)
            node = parent


#: the qualifier of a scalar subquery's column (no SQL name reaches it)
SCALAR = " scalar"
#: the qualifier of a window aggregate's column
WINDOWED = " window"


def outer(node, *types) -> list:
    """The nodes of `types` in `node` (itself included) outside any subquery in it."""
    stop = (exp.Subquery, exp.Exists, exp.Select)
    if isinstance(node, stop):
        return [node] if isinstance(node, types) else []
    return [n for n in node.walk(bfs=True, prune=lambda n: isinstance(n, stop)) if isinstance(n, types)]


def union_terms(q):
    if isinstance(q, exp.Subquery):
        return union_terms(q.this)
    if isinstance(q, exp.Union):
        if not q.args.get("distinct", True):
            return None
        left, right = union_terms(q.this), union_terms(q.expression)
        return None if left is None or right is None else left + right
    return [q] if isinstance(q, exp.Query) else None


def references(q, name: str) -> bool:
    return any(isinstance(t.this, exp.Identifier) and ident(t.this) == name for t in q.find_all(exp.Table))


def conjuncts(e) -> list:
    if e is None:
        return []
    if isinstance(e, exp.Paren):
        return conjuncts(e.this) if isinstance(e.this, exp.And) else [e]
    if isinstance(e, exp.And):
        return conjuncts(e.this) + conjuncts(e.expression)
    return [e]


def and_all(parts):
    out = parts[0]
    for p in parts[1:]:
        out = exp.And(this=out, expression=p)
    return out


def sees_column(sel: exp.Select, name: str) -> bool:
    """Whether a SELECT's list, GROUP BY or HAVING names the column `name` (or has `*`)."""
    for key in ("expressions", "group", "having"):
        value = sel.args.get(key)
        for node in (value if isinstance(value, list) else [value] if value is not None else []):
            for n in node.walk():
                if isinstance(n, exp.Star):
                    return True
                if isinstance(n, exp.Column) and isinstance(n.this, exp.Identifier) and ident(n.this) == name:
                    return True
    return False


def rownum_bound(p, name: str, qual) -> int | None:
    """k for `rn <= k`, `rn < k+1`, `k >= rn`, `k+1 > rn`."""
    def is_rn(x):
        return isinstance(x, exp.Column) and ident(x.this) == name and (not x.args.get("table") or ident(x.args["table"]) == qual)

    def number(x):
        return int(x.this) if isinstance(x, exp.Literal) and not x.is_string and x.this.isdigit() else None

    if isinstance(p, exp.LTE) and is_rn(p.this) and number(p.expression) is not None:
        return number(p.expression)
    if isinstance(p, exp.LT) and is_rn(p.this) and number(p.expression) is not None:
        return number(p.expression) - 1
    if isinstance(p, exp.GTE) and is_rn(p.expression) and number(p.this) is not None:
        return number(p.this)
    if isinstance(p, exp.GT) and is_rn(p.expression) and number(p.this) is not None:
        return number(p.this) - 1
    return None


def quote(name: str) -> str:
    """A column name as engine expression text (quoted only when it must be)."""
    return name if not needs_quote(name) else '"' + name.replace('"', '""') + '"'


def needs_quote(name: str) -> bool:
    from sqlglot.tokens import Tokenizer, TokenType

    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        return True
    tokens = Tokenizer().tokenize(name)
    return len(tokens) != 1 or tokens[0].token_type != TokenType.VAR


def unquote(text: str) -> str | None:
    if not needs_quote(text) and re.fullmatch(r"[a-z_][a-z0-9_]*", text):
        return text
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"' and '"' not in text[1:-1].replace('""', ''):
        return text[1:-1].replace('""', '"')
    return None


def apart_names(names: list[str]) -> list[str]:
    """Output names made distinct as DuckDB makes a view's: the second `a` is `a_1`,
    the third `a_2` (skipping a name already in the list)."""
    out, seen = [], set(names)
    for i, n in enumerate(names):
        if n in names[:i]:
            k = 1
            while f"{n}_{k}" in seen:
                k += 1
            n = f"{n}_{k}"
            seen.add(n)
        out.append(n)
    return out


def fresh_name(base: str, taken) -> str:
    name, i = base, 1
    while name in taken:
        i += 1
        name = f"{base}_{i}"
    return name


def engine_cast(type_: str) -> str:
    return {"string": "VARCHAR"}.get(type_, type_.upper())


def compile_sql(text: str) -> dict:
    """SQL tables and views -> a circuit document; SqlError names each problem's line:column."""
    return Compiler(parse_script(text)).run()
