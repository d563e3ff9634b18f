"""A circuit document -> SQL (CREATE TABLE / CREATE [LOCAL] VIEW), for circuits SQL can
express; otherwise NotExpressible names the node that it cannot.

Every top-level node becomes a statement: an input a table, an output a view, any other
node a LOCAL view (no output) named by its id, reading its inputs by their names. A
fixed point of the form compile_sql makes (export = distinct(base ∪ step(z^-1 of
itself))) becomes a recursive view, its body inlined as derived tables. The result is
compiled back before it is returned, so what is returned always compiles.
"""
from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

from .. import budget
from ..errors import CircuitInvalid
from ..operators.window import parse_duration
from ..plan import compile_plan
from ..types import Schema
from . import connectors as sql_connectors
from .compiler import NEVER_LATE, compile_sql, needs_quote
from .errors import NotExpressible, SqlError

SQL_TYPES = {"bigint": "BIGINT", "double": "DOUBLE", "string": "VARCHAR", "boolean": "BOOLEAN", "date": "DATE", "timestamp": "TIMESTAMP"}
UNITS = [(86_400_000_000, "DAY"), (3_600_000_000, "HOUR"), (60_000_000, "MINUTE"), (1_000_000, "SECOND"), (1_000, "MILLISECOND")]


def name(text: str) -> str:
    return f'"{text}"' if needs_quote(text) else text


def sql_type(t: str) -> str:
    m = re.fullmatch(r"array<(\w+)>", t)
    return f"ARRAY<{SQL_TYPES[m.group(1)]}>" if m else SQL_TYPES[t]


def expression(text: str) -> str:
    """An engine expression as SQL text of this dialect (column names quoted as needed)."""
    tree = sqlglot.parse_one(text)
    for col in tree.find_all(exp.Column):
        if isinstance(col.this, exp.Identifier):
            col.this.set("quoted", needs_quote(col.this.this))
    return tree.sql()


def interval(value, time_type: str) -> str:
    if time_type == "bigint":
        return str(value)
    micros = parse_duration(value, time_type)
    for size, unit in UNITS:
        if micros % size == 0:
            return f"INTERVAL '{micros // size}' {unit}"
    raise ValueError(value)


class _Exporter:
    def __init__(self, data: dict):
        self.data = data
        try:
            self.plan = compile_plan(data)
        except CircuitInvalid:
            raise
        if self.plan.literal:
            prim = next(n for n in self.plan.order if self.plan.operators[n].stream)
            raise NotExpressible(prim, f"a {self.plan.operators[prim].kind} (DBSP stream primitive) has no SQL form; SQL views are relational")
        self.raw = {n["id"]: n for n in data["nodes"]}
        self.lateness: dict[tuple[str, str], object] = {}

    def run(self) -> str:
        doc = self.plan.document
        statements = []
        for node_id in self.plan.order:
            budget.check(f"node {node_id!r}")
            node = doc.nodes[node_id]
            if node.kind == "input":
                continue
            sources = {port: self.source_name(ref) for port, ref in doc.inputs_of(node_id).items()}
            schemas = {port: self.plan.schemas[doc.key_of(ref)] for port, ref in doc.inputs_of(node_id).items()}
            if node.kind == "output":
                connectors = node.params.get("connectors")
                with_ = f" WITH ({sql_connectors.write(connectors)})" if connectors else ""
                statements.append(f"CREATE VIEW {name(node_id)}{with_} AS SELECT * FROM {sources['in']};")
            elif node.kind == "fixedpoint":
                statements.append(self.fixedpoint(node_id, node, sources, schemas))
            else:
                query = self.query(node_id, node.kind, node.params, sources, schemas, self.plan.schemas[node_id])
                statements.append(f"CREATE LOCAL VIEW {name(node_id)} AS\n{query};")
        tables = [self.table(n) for n in self.plan.order if doc.nodes[n].kind == "input"]
        return "\n\n".join(tables + statements) + "\n"

    def source_name(self, ref) -> str:
        node = self.plan.document.nodes[ref.node]
        return name(ref.node)

    def table(self, node_id: str) -> str:
        node = self.plan.document.nodes[node_id]
        cols = []
        for c in self.plan.schemas[node_id].columns:
            text = f"    {name(c.name)} {sql_type(c.type)}" + ("" if c.nullable else " NOT NULL")
            if (node_id, c.name) in self.lateness:
                text += f" LATENESS {interval(self.lateness[(node_id, c.name)], c.type)}"
            cols.append(text)
        key = node.params.get("primary_key")
        if key:
            cols.append(f"    PRIMARY KEY ({', '.join(name(k) for k in key)})")
        connectors = node.params.get("connectors")
        with_ = f" WITH ({sql_connectors.write(connectors)})" if connectors else ""
        return f"CREATE TABLE {name(node_id)} (\n" + ",\n".join(cols) + f"\n){with_};"

    # one node -> a query over its sources (names or parenthesised derived tables)
    def query(self, node_id, kind, p, src, schemas, out: Schema) -> str:
        s = src.get("in")
        if kind == "filter":
            return f"SELECT * FROM {s} AS t WHERE {expression(p['predicate'])}"
        if kind == "map":
            return "SELECT " + ", ".join(f"{expression(c['expr'])} AS {name(c['name'])}" for c in p["columns"]) + f" FROM {s} AS t"
        if kind == "flat_map":
            column, piece = p["column"], p.get("as") or p["column"]
            others = [c for c in schemas["in"].names if c != column]
            listed = [f"t.{name(c)}" for c in others] + [f"u.{name(piece)}"]
            if "separator" in p or schemas["in"].column(column).type == "string":
                sep = p.get("separator", " ").replace("'", "''")
                return (f"SELECT {', '.join(listed)} FROM {s} AS t CROSS JOIN UNNEST(SPLIT(t.{name(column)}, '{sep}')) AS u({name(piece)})"
                        f" WHERE u.{name(piece)} <> ''")
            return f"SELECT {', '.join(listed)} FROM {s} AS t CROSS JOIN UNNEST(t.{name(column)}) AS u({name(piece)})"
        if kind == "union":
            return f"SELECT * FROM {src['a']} AS a UNION ALL SELECT * FROM {src['b']} AS b"
        if kind == "distinct":
            return f"SELECT DISTINCT * FROM {s} AS t"
        if kind in ("join", "left_join"):
            lk, rk = p["left_keys"], p["right_keys"]
            dropped = {r for l, r in zip(lk, rk) if l == r}
            listed = [f"l.{name(c)}" for c in schemas["left"].names] + [f"r.{name(c)}" for c in schemas["right"].names if c not in dropped]
            if not lk:
                return f"SELECT {', '.join(listed)} FROM {src['left']} AS l CROSS JOIN {src['right']} AS r"
            on = " AND ".join(f"l.{name(a)} = r.{name(b)}" for a, b in zip(lk, rk))
            join = "LEFT JOIN" if kind == "left_join" else "JOIN"
            return f"SELECT {', '.join(listed)} FROM {src['left']} AS l {join} {src['right']} AS r ON {on}"
        if kind == "asof_join":
            lk, rk = p["left_keys"], p["right_keys"]
            dropped = {r for l, r in zip(lk, rk) if l == r}
            listed = [f"l.{name(c)}" for c in schemas["left"].names] + [f"r.{name(c)}" for c in schemas["right"].names if c not in dropped]
            on = " AND ".join(f"l.{name(a)} = r.{name(b)}" for a, b in zip(lk, rk))
            join = "LEFT ASOF JOIN" if p.get("outer", True) else "ASOF JOIN"
            match = f"l.{name(p['left_time'])} {p.get('match', '>=')} r.{name(p['right_time'])}"
            return f"SELECT {', '.join(listed)} FROM {src['left']} AS l {join} {src['right']} AS r MATCH_CONDITION ({match}) ON {on}"
        if kind in ("semijoin", "antijoin"):
            on = " AND ".join(f"r.{name(b)} = l.{name(a)}" for a, b in zip(p["left_keys"], p["right_keys"]))
            neg = "NOT " if kind == "antijoin" else ""
            return f"SELECT l.* FROM {src['left']} AS l WHERE {neg}EXISTS (SELECT 1 FROM {src['right']} AS r WHERE {on})"
        if kind == "aggregate":
            group = p.get("group_by") or []
            items = [name(g) for g in group] + [self.aggregate(a, global_=not group) for a in p["aggregates"]]
            return f"SELECT {', '.join(items)} FROM {s} AS t" + (f" GROUP BY {', '.join(name(g) for g in group)}" if group else "")
        if kind == "top_k":
            rn = "row_number"
            while rn in out.names:
                rn += "_"
            part = f"PARTITION BY {', '.join(name(g) for g in p['group_by'])} " if p.get("group_by") else ""
            order = ", ".join(f"{name(o['column'])} {'DESC NULLS LAST' if o.get('desc') else 'ASC NULLS FIRST'}" for o in p["order_by"])
            cols = ", ".join(name(c) for c in out.names)
            return (f"SELECT {cols} FROM (SELECT *, ROW_NUMBER() OVER ({part}ORDER BY {order}) AS {rn} FROM {s} AS t) AS ranked"
                    f" WHERE {rn} <= {int(p['k'])}")
        if kind == "window_aggregate":
            return f"SELECT {', '.join([name(c) for c in schemas['in'].names] + [self.over(a, p) for a in p['aggregates']])} FROM {s} AS t"
        if kind in ("tumbling_window", "sliding_window", "session_window"):
            return self.window(node_id, kind, p, s, schemas["in"])
        if kind == "difference":
            raise NotExpressible(node_id, "difference (a − b of Z-sets) can give negative rows; SQL's EXCEPT is a set operation (compile EXCEPT from SQL instead)")
        raise NotExpressible(node_id, f"{kind} has no SQL form")

    def aggregate(self, a: dict, global_: bool) -> str:
        fn, e = a["fn"], a.get("expr")
        arg = expression(e) if e not in (None, "") else "*"
        if fn in ("count_distinct", "sum_distinct", "avg_distinct"):
            text = f"{fn.split('_')[0].upper()}(DISTINCT {arg})"
        elif fn == "sum" and global_:  # the engine's global sum of no values is 0
            text = f"COALESCE(SUM({arg}), 0)"
        else:
            text = f"{fn.upper()}({arg})"
        return f"{text} AS {name(a['as'])}"

    def over(self, a: dict, p: dict) -> str:
        """One window aggregate call: AGG(e) OVER (PARTITION BY ... ORDER BY ... frame) AS name."""
        e = a.get("expr")
        parts = []
        if p.get("group_by"):
            parts.append("PARTITION BY " + ", ".join(name(g) for g in p["group_by"]))
        if p.get("order_by"):
            parts.append("ORDER BY " + ", ".join(name(o["column"]) + (" DESC" if o.get("desc") else "") for o in p["order_by"]))
        frame = p.get("frame") or {"unit": "range", "start": None, "end": 0 if p.get("order_by") else None}

        def bound(offset, unbounded: str) -> str:
            if offset is None:
                return f"UNBOUNDED {unbounded}"
            return "CURRENT ROW" if offset == 0 else f"{abs(offset)} {'PRECEDING' if offset < 0 else 'FOLLOWING'}"

        if p.get("order_by"):
            parts.append(f"{frame['unit'].upper()} BETWEEN {bound(frame['start'], 'PRECEDING')} AND {bound(frame['end'], 'FOLLOWING')}")
        call = f"{a['fn'].upper()}({expression(e) if e not in (None, '') else '*'})"
        return f"{call} OVER ({' '.join(parts)}) AS {name(a['as'])}"

    def window(self, node_id, kind, p, s, schema: Schema) -> str:
        time = p["time"]
        ttype = schema.column(time).type
        lateness = p.get("lateness", 0)  # the engine's default
        if parse_duration(lateness, ttype) != parse_duration(NEVER_LATE[ttype], ttype):  # SQL without LATENESS: no row is late
            src = self.plan.document.inputs_of(node_id)["in"].node
            if self.plan.document.nodes[src].kind != "input":
                raise NotExpressible(node_id, "a window's lateness is SQL's LATENESS on a table column; this window does not read a table")
            if parse_duration(self.lateness.get((src, time), lateness), ttype) != parse_duration(lateness, ttype):
                raise NotExpressible(node_id, f"two windows over {src}.{time} with different lateness")
            self.lateness[(src, time)] = lateness
        group = p.get("group_by") or []
        if kind == "tumbling_window":
            call = f"TUMBLE(TABLE {s}, DESCRIPTOR({name(time)}), {interval(p['size'], ttype)})"
        elif kind == "sliding_window":
            call = f"HOP(TABLE {s}, DESCRIPTOR({name(time)}), {interval(p['slide'], ttype)}, {interval(p['size'], ttype)})"
        else:
            call = f"SESSION(TABLE {s}, DESCRIPTOR({name(time)}), DESCRIPTOR({', '.join(name(g) for g in group)}), {interval(p['gap'], ttype)})"
        keys = [name(g) for g in group] + ["window_start", "window_end"]
        items = keys + [self.aggregate(a, global_=False) for a in p["aggregates"]]
        if s.startswith("("):
            raise NotExpressible(node_id, "a window inside a recursive view")
        return f"SELECT {', '.join(items)} FROM TABLE({call}) GROUP BY {', '.join(keys)}"

    def fixedpoint(self, node_id, node, sources, schemas) -> str:
        """export = distinct(u1 ∪ ... ∪ un) where the z^-1 feeding back is the distinct."""
        sub = node.subcircuit
        exports = [n for n in sub.nodes.values() if n.kind == "export"]
        delays = [n for n in sub.nodes.values() if n.kind == "delay"]
        shape = "its subcircuit is not distinct(base ∪ step(z⁻¹ of the result)) with one export and one delay"
        if len(exports) != 1 or len(delays) != 1 or any(n.kind in ("delta0", "integrate", "differentiate", "fixedpoint") for n in sub.nodes.values()):
            raise NotExpressible(node_id, shape)
        result = sub.inputs_of(exports[0].id)["in"].node
        if sub.nodes[result].kind != "distinct" or sub.inputs_of(delays[0].id)["in"].node != result or exports[0].params.get("mode", "value") != "value":
            raise NotExpressible(node_id, shape)
        inner_schemas = self.inner_schemas(node_id, sub, schemas, self.plan.schemas[exports[0].id])
        view = node_id

        def render(ref_node: str) -> str:
            n = sub.nodes[ref_node]
            if n.kind == "import":
                return sources[n.id]
            if n.kind == "delay":
                return name(view)
            ins = sub.inputs_of(ref_node)
            src = {port: render(r.node) if sub.nodes[r.node].kind in ("import", "delay") else f"({render(r.node)})" for port, r in ins.items()}
            sch = {port: inner_schemas[r.node] for port, r in ins.items()}
            return self.query(ref_node, n.kind, n.params, src, sch, inner_schemas[ref_node])

        terms, stack = [], [sub.inputs_of(result)["in"].node]
        while stack:
            t = stack.pop()
            if sub.nodes[t].kind == "union":
                ins = sub.inputs_of(t)
                stack += [ins["b"].node, ins["a"].node]
            else:
                terms.append(t)
        names = inner_schemas[result]
        cols = ", ".join(name(c) for c in names.names)
        body = "\nUNION\n".join(f"SELECT {cols} FROM {render(t) if sub.nodes[t].kind in ('import', 'delay') else '(' + render(t) + ')'} AS term" for t in terms)
        declared = ", ".join(f"{name(c.name)} {sql_type(c.type)}" for c in names.columns)
        return f"DECLARE RECURSIVE VIEW {name(view)} ({declared});\nCREATE LOCAL VIEW {name(view)} AS\n{body};"

    def inner_schemas(self, node_id, sub, schemas, result: Schema) -> dict[str, Schema]:
        """The subcircuit's schemas: the body as a top-level circuit (imports and the
        delay become inputs), checked by the engine."""
        nodes, edges = [], []
        for n in sub.nodes.values():
            if n.kind == "import":
                nodes.append({"id": n.id, "kind": "input", "params": {"schema": schemas[n.id].as_list()}})
            elif n.kind == "delay":
                nodes.append({"id": n.id, "kind": "input", "params": {"schema": n.params.get("schema") or result.as_list()}})
            else:
                nodes.append({"id": n.id, "kind": "output" if n.kind == "export" else n.kind, "params": n.params})
        for e in sub.edges:
            if sub.nodes[e.target.node].kind != "delay":
                edges.append({"from": {"node": e.source.node, "port": e.source.port}, "to": {"node": e.target.node, "port": e.target.port}})
        try:
            return compile_plan({"nodes": nodes, "edges": edges}).schemas
        except CircuitInvalid as e:
            raise NotExpressible(node_id, f"its subcircuit: {e}") from None


def export_sql(data: dict) -> str:
    """The SQL of a relational circuit; NotExpressible names the node SQL cannot express."""
    text = _Exporter(data).run()
    try:
        compile_sql(text)
    except SqlError as e:  # what was written must compile: name the statement's node
        line = e.problems[0].span.line if e.problems and e.problems[0].span else None
        node = _statement_node(text, line) if line else "?"
        raise NotExpressible(node, f"its SQL does not compile back: {e}") from None
    return text


def _statement_node(text: str, line: int) -> str:
    current = "?"
    for i, row in enumerate(text.split("\n"), 1):
        m = re.match(r'(?:CREATE (?:LOCAL )?VIEW|CREATE TABLE|DECLARE RECURSIVE VIEW) "?(\w+)', row)
        if m:
            current = m.group(1)
        if i == line:
            return current
    return current
