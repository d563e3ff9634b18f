"""A second oracle sharing no code with the engine: DuckDB runs each view of a circuit
document as SQL text over the integrated input tables, from scratch, after each tick.

The document's expressions are SQL already: sqlglot (the parser, not dbsp.expr) writes
them in DuckDB's dialect and DuckDB evaluates them. Each node becomes a CTE returning
its rows with a weight column `w` (integer, summed per row, zero rows dropped), so
that linear operators are plain relational algebra on weighted rows, while the
non-linear ones are plain SQL over the multiset (each row repeated w times):

    filter      SELECT ... WHERE pred                    (weights kept)
    map         SELECT exprs ..., then rows summed       (as GROUP BY ALL, SUM(w))
    union       UNION ALL, summed;   difference: b's weights negated, summed
    join        JOIN ... ON l = r (CROSS JOIN without keys), weights multiplied
    semijoin    WHERE EXISTS (right rows with the key)   antijoin: NOT EXISTS
    left_join   LEFT JOIN (SQL pads unmatched rows with NULLs)
    asof_join   DuckDB's ASOF [LEFT] JOIN ... ON keys AND l.t >= r.t (or >, <=, <), over
                the right's rows cut to the engine's tie-break (one row per key and time)
    flat_map    unnest(list) or unnest(string_split(s, sep)) minus empty pieces
    distinct    SELECT DISTINCT over the multiset
    aggregate   GROUP BY over the multiset: COUNT(*), COUNT(e), SUM, AVG, MIN, MAX,
                COUNT(DISTINCT e)
    top_k       ROW_NUMBER() OVER (PARTITION BY group ORDER BY order_by, then the
                other columns) <= k over the multiset
    window_aggregate   AGG(e) OVER (PARTITION BY group ORDER BY order_by[, then the
                other columns for a ROWS frame] ROWS|RANGE BETWEEN ...) over the multiset

SQL-vs-Z-set notes (what had to be said to make both mean the same):
- SQL tables are multisets: there are no negative multiplicities. Z-set `difference` is
  a - b, which is not EXCEPT ALL (that clamps at 0): here it is weights negated and
  summed. A non-linear operator (distinct, aggregate, top_k, the right side of a
  semijoin / antijoin / left_join) whose input holds a negative weight has no SQL
  meaning: views downstream of one are not compared (`Oracle.views` returns None for
  them at that tick). Inputs are compared only while their integrals are multisets.
- SUM over no rows is NULL in SQL. The engine's global aggregate (no group_by) says 0
  (the DBSP paper's `total`): COALESCE(SUM(e), 0) there; a group's SUM of only NULLs is
  NULL in both.
- A global aggregate has one row even over no input, as in SQL; a group exists while
  it has rows.
- x / 0 is ±inf in DuckDB (double division) and NULL in the engine (as Spark's
  try_divide): the oracle writes x / NULLIF(y, 0). x % 0 is NULL in both once DuckDB's
  error_on_division_by_zero is off.
- ELEMENT_AT on lists is DuckDB's list_extract (1-based, negative from the end, NULL
  out of range; index 0 is NULL in the engine too).
- NULL keys never match in joins, semijoins and antijoins (SQL's = ); NULLs group
  together in GROUP BY and DISTINCT (the engine's row identity).
- top_k breaks ties by the remaining columns ascending, NULLs first (ASC) / last
  (DESC), a list column by its JSON text ('[1,null]'), as the engine documents.
- Doubles (avg, division) are compared rounded to 9 significant digits: DuckDB and the
  engine sum in different orders.

Keyed inputs (primary_key) are kept here as key -> row, applying records in push
order (insert replaces, delete removes the key): the upsert semantics users read.
"""
from __future__ import annotations

import json
import math
from collections import Counter

import duckdb
import sqlglot
from sqlglot import exp

DUCK_TYPES = {"bigint": "BIGINT", "double": "DOUBLE", "string": "VARCHAR", "boolean": "BOOLEAN",
              "date": "DATE", "timestamp": "TIMESTAMP"}
NON_LINEAR = {"distinct", "aggregate", "top_k"}


def duck_type(t: str) -> str:
    if t.startswith("array<"):
        return DUCK_TYPES[t[6:-1]] + "[]"
    return DUCK_TYPES[t]


def q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def sql_expr(text: str) -> str:
    """An expression of the document in DuckDB's dialect, with the engine's x / 0 = NULL."""
    tree = sqlglot.parse_one(text)

    def rewrite(node):
        if isinstance(node, exp.Div):
            return exp.Div(this=node.this, expression=exp.Nullif(this=node.expression, expression=exp.Literal.number(0)))
        if isinstance(node, exp.Anonymous) and node.name.lower() == "element_at":
            return exp.Anonymous(this="list_extract", expressions=node.expressions)
        if isinstance(node, exp.Column):
            return exp.column(node.name, quoted=True)
        return node

    return tree.transform(rewrite).sql(dialect="duckdb")


class Unsupported(Exception):
    """A node kind this oracle has no SQL for (windows, DBSP primitives, fixed points)."""


class Oracle:
    """Build once per document; `views(tables)` -> {view: Counter(row -> weight) or None}."""

    def __init__(self, document: dict):
        self.nodes = {n["id"]: n for n in document["nodes"]}
        self.sources: dict[str, dict[str, str]] = {}
        for e in document["edges"]:
            self.sources.setdefault(e["to"]["node"], {})[e["to"].get("port", "in")] = e["from"]["node"]
        self.inputs = {i: n["params"]["schema"] for i, n in self.nodes.items() if n["kind"] == "input"}
        self.keys = {i: n["params"].get("primary_key") for i, n in self.nodes.items() if n["kind"] == "input"}
        self.cols: dict[str, list[str]] = {}
        self.ctes: dict[str, str] = {}
        self.order: list[str] = []
        for node_id in self.nodes:
            self._visit(node_id)
        self.outputs = {i: self.sources[i]["in"] for i, n in self.nodes.items() if n["kind"] == "output"}
        self.con = duckdb.connect()
        self.con.execute("SET error_on_division_by_zero = false")
        self.con.execute("SET threads = 1")
        self.tables = {name: Counter() for name in self.inputs}
        self.keyed = {name: {} for name, key in self.keys.items() if key}

    # ---- the inputs, as users change them -----------------------------------------------
    def push(self, tick: dict) -> None:
        """Apply one tick's records ({input: [records]}) to the integrated tables."""
        for name, records in tick.items():
            names = [c["name"] for c in self.inputs[name]]
            key = self.keys[name]
            for rec in records:
                if "insert" in rec:
                    data, w = rec["insert"], 1
                elif "delete" in rec:
                    data, w = rec["delete"], -1
                else:
                    data, w = rec["data"], rec["weight"]
                row = tuple(tuple(v) if isinstance(v, list) else v for v in (data.get(n) for n in names))
                if key:
                    k = tuple(data.get(c) for c in key)
                    if w > 0:
                        self.keyed[name][k] = row
                    else:
                        self.keyed[name].pop(k, None)
                else:
                    self.tables[name][row] += w
        for name, table in self.keyed.items():
            self.tables[name] = Counter({row: 1 for row in table.values()})

    def multisets(self) -> bool:
        """Whether every input's integral is a multiset (no negative weight)."""
        return all(w >= 0 for t in self.tables.values() for w in (t.values() if isinstance(t, Counter) else t["w"].to_pylist()))

    # ---- documents -> SQL ---------------------------------------------------------------
    def _visit(self, node_id):
        if node_id in self.cols:
            return
        node = self.nodes[node_id]
        src = self.sources.get(node_id, {})
        for s in src.values():
            self._visit(s)
        kind, p = node["kind"], node.get("params") or {}
        builder = getattr(self, f"_{kind}", None)
        if builder is None:
            raise Unsupported(kind)
        self.ctes[node_id], self.cols[node_id] = builder(p, {port: q(s) for port, s in src.items()},
                                                        {port: self.cols[s] for port, s in src.items()}, node_id)
        self.order.append(node_id)

    @staticmethod
    def _summed(select: str, cols: list[str]) -> str:
        listed = ", ".join(q(c) for c in cols)
        group = f"GROUP BY {listed} " if cols else ""
        return f"SELECT {listed}{', ' if cols else ''}SUM(w)::BIGINT AS w FROM ({select}) {group}HAVING SUM(w) <> 0"

    @staticmethod
    def _bag(rel: str, cols: list[str]) -> str:
        """The multiset: each row repeated w times."""
        listed = ", ".join(q(c) for c in cols)
        return f"(SELECT {listed} FROM (SELECT *, unnest(range(w)) AS __copy FROM {rel}))"

    def _input(self, p, rel, cols, node_id):
        names = [c["name"] for c in p["schema"]]
        return f"SELECT * FROM {q('__table_' + node_id)}", names

    def _output(self, p, rel, cols, node_id):
        return f"SELECT * FROM {rel['in']}", cols["in"]

    def _filter(self, p, rel, cols, node_id):
        return f"SELECT * FROM {rel['in']} WHERE {sql_expr(p['predicate'])}", cols["in"]

    def _map(self, p, rel, cols, node_id):
        out = [c["name"] for c in p["columns"]]
        exprs = ", ".join(f"{sql_expr(c['expr'])} AS {q(c['name'])}" for c in p["columns"])
        return self._summed(f"SELECT {exprs}, w FROM {rel['in']}", out), out

    def _union(self, p, rel, cols, node_id):
        c = ", ".join(q(x) for x in cols["a"])
        return self._summed(f"SELECT {c}, w FROM {rel['a']} UNION ALL SELECT {c}, w FROM {rel['b']}", cols["a"]), cols["a"]

    def _difference(self, p, rel, cols, node_id):
        c = ", ".join(q(x) for x in cols["a"])
        return self._summed(f"SELECT {c}, w FROM {rel['a']} UNION ALL SELECT {c}, -w FROM {rel['b']}", cols["a"]), cols["a"]

    def _on(self, p):
        return " AND ".join(f"l.{q(a)} = r.{q(b)}" for a, b in zip(p["left_keys"], p["right_keys"]))

    def _join(self, p, rel, cols, node_id):
        same = {r for l, r in zip(p["left_keys"], p["right_keys"]) if l == r}  # a right key named like its left key
        kept = [c for c in cols["right"] if c not in same]
        out = cols["left"] + kept
        assert len(set(out)) == len(out), "the oracle needs join sides with distinct column names"
        picked = ", ".join([f"l.{q(c)}" for c in cols["left"]] + [f"r.{q(c)}" for c in kept])
        on = f"JOIN {rel['right']} r ON {self._on(p)}" if p["left_keys"] else f"CROSS JOIN {rel['right']} r"
        return self._summed(f"SELECT {picked}, l.w * r.w AS w FROM {rel['left']} l {on}", out), out

    def _exists(self, p, rel, cols, negated):
        picked = ", ".join(f"l.{q(c)}" for c in cols["left"])
        right = self._bag(rel["right"], cols["right"])
        return (f"SELECT {picked}, l.w FROM {rel['left']} l WHERE {'NOT ' if negated else ''}"
                f"EXISTS (SELECT 1 FROM {right} r WHERE {self._on(p)})"), cols["left"]

    def _semijoin(self, p, rel, cols, node_id):
        return self._exists(p, rel, cols, False)

    def _antijoin(self, p, rel, cols, node_id):
        return self._exists(p, rel, cols, True)

    def _left_join(self, p, rel, cols, node_id):
        same = {r for l, r in zip(p["left_keys"], p["right_keys"]) if l == r}  # a right key named like its left key
        kept = [c for c in cols["right"] if c not in same]
        out = cols["left"] + kept
        assert len(set(out)) == len(out), "the oracle needs left_join sides with distinct column names"
        left = self._bag(rel["left"], cols["left"])
        picked = ", ".join([f"l.{q(c)}" for c in cols["left"]] + [f"r.{q(c)}" for c in kept])
        return self._summed(f"SELECT {picked}, 1 AS w FROM {left} l LEFT JOIN {self._bag(rel['right'], cols['right'])} r "
                            f"ON {self._on(p)}", out), out

    def _asof_join(self, p, rel, cols, node_id):
        """DuckDB's own ASOF [LEFT] JOIN (ON keys AND l.t op r.t). DuckDB picks any one of
        several right rows with the nearest time; the engine the greatest row (its columns
        DESC, NULLs last): the right side is first cut to that row per (key, time)."""
        same = {r for l, r in zip(p["left_keys"], p["right_keys"]) if l == r}
        kept = [c for c in cols["right"] if c not in same]
        out = cols["left"] + kept
        assert len(set(out)) == len(out), "the oracle needs asof_join sides with distinct column names"
        keys, rt = [q(k) for k in p["right_keys"]], q(p["right_time"])
        ties = ", ".join(f"{q(c)} DESC NULLS LAST" for c in cols["right"])
        right = (f"(SELECT * FROM {self._bag(rel['right'], cols['right'])} "
                 f"QUALIFY ROW_NUMBER() OVER (PARTITION BY {', '.join(keys + [rt])} ORDER BY {ties}) = 1)")
        left = self._bag(rel["left"], cols["left"])
        picked = ", ".join([f"l.{q(c)}" for c in cols["left"]] + [f"r.{q(c)}" for c in kept])
        on = self._on(p) + f" AND l.{q(p['left_time'])} {p.get('match', '>=')} r.{rt}"
        join = "ASOF LEFT JOIN" if p.get("outer", True) else "ASOF JOIN"
        return self._summed(f"SELECT {picked}, 1 AS w FROM {left} l {join} {right} r ON {on}", out), out

    def _flat_map(self, p, rel, cols, node_id):
        c = p["column"]
        name = p.get("as") or c
        others = [x for x in cols["in"] if x != c]
        listed = "".join(f"{q(x)}, " for x in others)
        column_type = next(t for t in self._types(node_id, "in") if t[0] == c)[1]
        if column_type.startswith("array<"):
            inner = f"SELECT {listed}unnest({q(c)}) AS {q(name)}, w FROM {rel['in']}"
            return self._summed(inner, others + [name]), others + [name]
        sep = p.get("separator", " ").replace("'", "''")
        inner = f"SELECT {listed}unnest(string_split({q(c)}, '{sep}')) AS {q(name)}, w FROM {rel['in']}"
        return self._summed(f"SELECT * FROM ({inner}) WHERE {q(name)} <> ''", others + [name]), others + [name]

    def _types(self, node_id, port):
        """(column, type) of what flows into a node's port, followed back to the inputs
        (flat_map and top_k need to know which columns are lists)."""
        src = self.sources[node_id][port]
        node = self.nodes[src]
        if node["kind"] == "input":
            return [(c["name"], c["type"]) for c in node["params"]["schema"]]
        if node["kind"] == "window_aggregate":  # (only whether a column is a list matters here)
            return self._types(src, "in") + [(a["as"], "bigint") for a in node["params"]["aggregates"]]
        if node["kind"] in ("filter", "distinct", "top_k", "union", "difference", "semijoin", "antijoin", "output"):
            return self._types(src, "a" if node["kind"] in ("union", "difference") else "left" if "left" in self.sources[src] else "in")
        if node["kind"] == "map":
            types = dict(self._types(src, "in"))
            return [(c["name"], types.get(c["expr"], "bigint")) for c in node["params"]["columns"]]
        if node["kind"] in ("join", "left_join", "asof_join"):
            same = {r for l, r in zip(node["params"]["left_keys"], node["params"]["right_keys"]) if l == r}
            return self._types(src, "left") + [t for t in self._types(src, "right") if t[0] not in same]
        if node["kind"] == "aggregate":  # (only whether a column is a list matters here)
            types = dict(self._types(src, "in"))
            return [(g, types[g]) for g in node["params"].get("group_by") or []] + [
                (a["as"], "bigint") for a in node["params"]["aggregates"]]
        if node["kind"] == "flat_map":
            types = self._types(src, "in")
            c = node["params"]["column"]
            t = dict(types)[c]
            return [x for x in types if x[0] != c] + [(node["params"].get("as") or c, t[6:-1] if t.startswith("array<") else "string")]
        return []

    def _distinct(self, p, rel, cols, node_id):
        c = ", ".join(q(x) for x in cols["in"])
        return f"SELECT DISTINCT {c}, 1::BIGINT AS w FROM {self._bag(rel['in'], cols['in'])}", cols["in"]

    def _aggregate(self, p, rel, cols, node_id):
        group = p.get("group_by") or []
        parts = []
        for a in p["aggregates"]:
            fn, e = a["fn"], sql_expr(a["expr"]) if a.get("expr") not in (None, "") else None
            text = {"count": f"COUNT({e or '*'})", "sum": f"SUM({e})", "avg": f"AVG({e})", "min": f"MIN({e})",
                    "max": f"MAX({e})", "count_distinct": f"COUNT(DISTINCT {e})",
                    "sum_distinct": f"SUM(DISTINCT {e})", "avg_distinct": f"AVG(DISTINCT {e})"}[fn]
            if fn == "sum" and not group:
                text = f"COALESCE({text}, 0)"
            parts.append(f"{text} AS {q(a['as'])}")
        keys = ", ".join(q(g) for g in group)
        select = f"SELECT {keys}{', ' if group else ''}{', '.join(parts)}, 1::BIGINT AS w FROM {self._bag(rel['in'], cols['in'])}"
        return select + (f" GROUP BY {keys}" if group else ""), group + [a["as"] for a in p["aggregates"]]

    def _top_k(self, p, rel, cols, node_id):
        types = dict(self._types(node_id, "in"))
        ordered = [o["column"] for o in p["order_by"]]
        order = [f"{q(o['column'])} {'DESC NULLS LAST' if o.get('desc') else 'ASC NULLS FIRST'}" for o in p["order_by"]]
        order += [f"{'to_json(' + q(c) + ')::VARCHAR' if types.get(c, '').startswith('array<') else q(c)} ASC NULLS FIRST"
                  for c in cols["in"] if c not in ordered]
        group = p.get("group_by") or []
        window = f"ROW_NUMBER() OVER ({'PARTITION BY ' + ', '.join(q(g) for g in group) + ' ' if group else ''}ORDER BY {', '.join(order)})"
        c = ", ".join(q(x) for x in cols["in"])
        ranked = f"SELECT {c}, {window} AS __rank FROM {self._bag(rel['in'], cols['in'])}"
        return self._summed(f"SELECT {c}, 1 AS w FROM ({ranked}) WHERE __rank <= {int(p['k'])}", cols["in"]), cols["in"]

    # ---- a tick --------------------------------------------------------------------------
    def _window_aggregate(self, p, rel, cols, node_id):
        types = dict(self._types(node_id, "in"))
        frame = p.get("frame") or {"unit": "range", "start": None, "end": 0 if p.get("order_by") else None}
        ordered = [o["column"] for o in p.get("order_by") or []]
        order = [f"{q(o['column'])} {'DESC NULLS LAST' if o.get('desc') else 'ASC NULLS FIRST'}" for o in p.get("order_by") or []]
        if frame["unit"] == "rows":  # the engine's tie-break makes a ROWS frame's rows certain
            order += [f"{'to_json(' + q(c) + ')::VARCHAR' if types.get(c, '').startswith('array<') else q(c)} ASC NULLS FIRST"
                      for c in cols["in"] if c not in ordered]

        def bound(offset, unbounded):
            if offset is None:
                return f"UNBOUNDED {unbounded}"
            return "CURRENT ROW" if offset == 0 else f"{abs(offset)} {'PRECEDING' if offset < 0 else 'FOLLOWING'}"

        group = p.get("group_by") or []
        over = (("PARTITION BY " + ", ".join(q(g) for g in group) + " ") if group else "") + (
            f"ORDER BY {', '.join(order)} " if order else "") + (
            f"{frame['unit'].upper()} BETWEEN {bound(frame['start'], 'PRECEDING')} AND {bound(frame['end'], 'FOLLOWING')}")
        parts = []
        for a in p["aggregates"]:
            e = sql_expr(a["expr"]) if a.get("expr") not in (None, "") else "*"
            parts.append(f"{a['fn'].upper()}({e}) OVER ({over}) AS {q(a['as'])}")
        c = ", ".join(q(x) for x in cols["in"])
        out = cols["in"] + [a["as"] for a in p["aggregates"]]
        return self._summed(f"SELECT {c}, {', '.join(parts)}, 1 AS w FROM {self._bag(rel['in'], cols['in'])}", out), out

    def _load(self):
        for name, schema in self.inputs.items():
            table = q("__table_" + name)
            columns = ", ".join(f"{q(c['name'])} {duck_type(c['type'])}" for c in schema)
            self.con.execute(f"CREATE OR REPLACE TABLE {table} ({columns}, w BIGINT)")
            if not isinstance(self.tables[name], Counter):  # an Arrow table of the columns and `w` (bulk tests)
                self.con.register("__arrow", self.tables[name])
                self.con.execute(f"INSERT INTO {table} SELECT * FROM __arrow WHERE w <> 0")
                self.con.unregister("__arrow")
                continue
            rows = [[list(v) if isinstance(v, tuple) else v for v in row] + [w] for row, w in self.tables[name].items() if w]
            if rows:
                self.con.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * (len(schema) + 1))})", rows)

    def _with(self, upto: str) -> str:
        needed, stack = set(), [upto]
        while stack:
            n = stack.pop()
            if n not in needed:
                needed.add(n)
                stack.extend(self.sources.get(n, {}).values())
        return "WITH " + ", ".join(f"{q(n)} AS ({self.ctes[n]})" for n in self.order if n in needed)

    def relation(self, node_id: str) -> Counter:
        rows = self.con.execute(f"{self._with(node_id)} SELECT * FROM {q(node_id)}").fetchall()
        return Counter({tuple(_value(v) for v in r[:-1]): r[-1] for r in rows})

    def views(self) -> dict[str, Counter | None]:
        """Each view's rows now, or None when a non-linear operator upstream of it reads a
        relation with a negative weight (no SQL meaning)."""
        self._load()
        negative = {n: any(w < 0 for w in self.relation(n).values()) for n in self.order
                    if any(self.nodes[m]["kind"] in NON_LINEAR | {"semijoin", "antijoin", "left_join", "asof_join"}
                           and n in self.sources.get(m, {}).values() for m in self.nodes)}
        undefined: dict[str, bool] = {}
        for n in self.order:
            kind, srcs = self.nodes[n]["kind"], self.sources.get(n, {})
            reads_negative = any(negative.get(s) for port, s in srcs.items()
                                 if kind in NON_LINEAR or (kind in ("semijoin", "antijoin", "left_join") and port == "right")
                                 or (kind in ("left_join", "asof_join")))
            undefined[n] = reads_negative or any(undefined[s] for s in srcs.values())
        return {view: None if undefined[view] else self.relation(view) for view in self.outputs}


def _value(v):
    if isinstance(v, list):
        return tuple(_value(x) for x in v)
    if isinstance(v, float):
        return float(f"{v:.9g}") if math.isfinite(v) else v
    return v


def rounded(z) -> Counter:
    """An engine Z-set (rows -> weight) in the oracle's form (doubles rounded)."""
    return Counter({tuple(_value(list(v)) if isinstance(v, tuple) else _value(v) for v in row): w for row, w in z})


def assert_matches(oracle: Oracle, engine_outputs: dict, where: str) -> int:
    """Each view the oracle can say something about equals the engine's integrated
    output; returns how many views were compared."""
    compared = 0
    for view, want in oracle.views().items():
        if want is None:
            continue
        got, want = dict(rounded(engine_outputs[view])), {row: w for row, w in want.items() if w}
        assert got == want, f"{where}, view {view}: engine {got} != DuckDB {want}\n{json.dumps(oracle.ctes, indent=1)}"
        compared += 1
    return compared
