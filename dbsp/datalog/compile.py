"""A checked Datalog program -> a circuit document (docs/circuit-format.md).

- Input relation `r`: an `input` node `r` (columns NOT NULL: Datalog has no NULLs),
  then `distinct`: a fact is in the relation while its weight is positive.
- A rule: each positive atom becomes its relation filtered by its constants and
  repeated variables and mapped onto its variables' names; atoms are joined on the
  variables they share (a product when none), comparisons become filters and
  `v = expr` maps as soon as their variables are bound; each negated atom is an
  antijoin against its (lower-stratum) relation; the head is a map.
- A derived relation: the union of its rules, then `distinct` (set semantics).
- A recursive stratum: one `fixedpoint`. Inside, each of its relations is
  distinct(union of its rules), its rules read the relation's previous iteration
  through a `delay`, relations of lower strata come in through `import`s, and each
  relation leaves through an `export`. The engine runs every inner node in its Δ form
  per iteration, which is semi-naive evaluation (and deletes retract exactly).
- `.output r` (or every derived relation when there is no `.output`): an `output` node.

Every node carries `source` (the line:column span of the rule, declaration or
directive it comes from, with `rule`, its 1-based index) and a `label`.
"""
from __future__ import annotations

import re

from .. import budget
from ..limits import MAX_NODES, too_many_nodes
from .check import UNIT, Checked, Relation, sql
from .errors import DatalogTooBig, SourceProblem
from .syntax import Atom, Comparison, Const, Rule, Var, variables

MAX_ID = 63


class _Ids:
    """Node ids, unique across the document (subcircuits included)."""

    def __init__(self, reserved):
        self.used = set(reserved)
        self.following: dict[str, int] = {}  # base -> the next suffix to try (so ids are found in constant time)
        self.nodes = 0  # nodes made, in every scope

    def fresh(self, base: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_]", "_", base)[:MAX_ID - 4]
        if base[0].isdigit():
            base = "n_" + base
        name, i = base, self.following.get(base, 2)
        while name in self.used:
            name, i = f"{base}_{i}", i + 1
        self.following[base] = i
        self.used.add(name)
        return name


class _Scope:
    """One circuit level: the document or a fixed point's subcircuit."""

    def __init__(self, ids: _Ids):
        self.ids, self.nodes, self.edges = ids, [], []

    def node(self, node_id, kind, params, source, label=None) -> str:
        self.ids.nodes += 1
        line, column = source.get("line"), source.get("column")
        if self.ids.nodes > MAX_NODES:
            raise DatalogTooBig([SourceProblem(too_many_nodes(), line, column, source.get("rule"))])
        budget.check(f"node {self.ids.nodes} (line {line}:{column})", line, column)
        item = {"id": node_id, "kind": kind, "params": params, "source": source}
        if label:
            item["label"] = label
        self.nodes.append(item)
        return node_id

    def add(self, base, kind, params, source, label=None) -> str:
        return self.node(self.ids.fresh(base), kind, params, source, label)

    def wire(self, src, dst: str, port: str = "in") -> None:
        node, out = src
        self.edges.append({"from": {"node": node, "port": out}, "to": {"node": dst, "port": port}})


def _source(span, rule: Rule | None = None) -> dict:
    return span.as_dict() | ({"rule": rule.index} if rule is not None else {})


def compile_checked(checked: Checked) -> dict:
    rels = checked.relations
    ids = _Ids([n for n, r in rels.items() if r.input] + checked.outputs)
    top = _Scope(ids)
    where: dict[str, tuple[str, str]] = {}  # relation -> its value at the top level: (node, port)
    for name, rel in rels.items():
        if rel.input:
            schema = [{"name": c, "type": t, "nullable": False} for c, t in rel.columns]
            top.node(name, "input", {"schema": schema}, _source(rel.span), label=f"input {name}")
            facts = top.add(f"{name}_facts", "distinct", {}, _source(rel.span), label=f"{name} (a set: facts with a positive weight)")
            top.wire((name, "out"), facts)
            where[name] = (facts, "out")
    for stratum in checked.strata:
        if stratum.recursive:
            _fixed_point(checked, stratum.relations, top, where)
        else:
            (name,) = stratum.relations
            where[name] = _relation(checked, rels[name], top, where.__getitem__)
    for name in checked.outputs:
        span = checked.program.outputs.get(name, rels[name].span)
        out = ids.fresh(f"{name}_view") if rels[name].input else name  # (an input's node has its name)
        top.node(out, "output", {}, _source(span), label=f"output {name}")
        top.wire(where[name], out)
    return {"format": "dbspweb.circuit", "version": 1, "nodes": _placed(top), "edges": top.edges}


def _fixed_point(checked: Checked, members: list[str], top: _Scope, where: dict) -> None:
    rels = checked.relations
    first = min((r for m in members for r in rels[m].rules), key=lambda r: r.index)
    fp_id = top.add(f"{'_'.join(members)}_fixpoint", "fixedpoint", {"max_iterations": 1000}, _source(first.span, first),
                    label=f"recursive stratum: {', '.join(members)}")
    fp_at = len(top.nodes) - 1  # (the fixed point just added)
    inner = _Scope(top.ids)
    previous = {m: inner.add(f"{m}_prev", "delay", {}, _source(rels[m].span), label=f"{m} at the previous iteration")
                for m in members}
    imports: dict[str, str] = {}

    def lookup(name):
        if name in previous:
            return (previous[name], "out")
        if name not in imports:
            imports[name] = inner.add(f"{name}_in", "import", {}, _source(rels[name].span), label=f"import {name}")
            top.wire(where[name], fp_id, imports[name])
        return (imports[name], "out")

    for m in members:
        value = _relation(checked, rels[m], inner, lookup)
        inner.wire(value, previous[m])
        export = inner.add(f"{m}_out", "export", {}, _source(rels[m].span), label=f"export {m}")
        inner.wire(value, export)
        where[m] = (fp_id, export)
    fp = top.nodes[fp_at]
    fp["subcircuit"] = {"nodes": _placed(inner), "edges": inner.edges}


def _relation(checked: Checked, rel: Relation, scope: _Scope, lookup) -> tuple[str, str]:
    """distinct(union of the relation's rules)."""
    heads = [_rule(checked, rule, rel, scope, lookup) for rule in rel.rules]
    value = heads[0]
    for rule, head in zip(rel.rules[1:], heads[1:]):
        u = scope.add(f"{rel.name}_union", "union", {}, _source(rule.span, rule), label=f"{rel.name}: ∪ rule {rule.index}")
        scope.wire(value, u, "a")
        scope.wire(head, u, "b")
        value = (u, "out")
    d = scope.add(f"{rel.name}_set", "distinct", {}, _source(rel.span), label=f"{rel.name} (a set)")
    scope.wire(value, d)
    return (d, "out")


class _Binding:
    """A rule body being built: the value so far, its columns (one per bound variable)."""

    def __init__(self, scope: _Scope, rule: Rule, base: str):
        self.scope, self.rule, self.base = scope, rule, base
        self.source = _source(rule.span, rule)
        self.value: tuple[str, str] | None = None
        self.columns: list[str] = []

    def then(self, what, kind, params, label=None, port="in") -> None:
        node = self.scope.add(f"{self.base}_{what}", kind, params, self.source, label)
        self.scope.wire(self.value, node, port)
        self.value = (node, "out")


def _rule(checked: Checked, rule: Rule, rel: Relation, scope: _Scope, lookup) -> tuple[str, str]:
    """The rule's body joined, filtered and negated, mapped onto its head."""
    b = _Binding(scope, rule, f"r{rule.index}_{rel.name}")
    comparisons = [lit for lit in rule.body if isinstance(lit, Comparison)]
    remaining = [lit for lit in rule.body if isinstance(lit, Atom) and not lit.negated]
    while remaining:  # next: the first atom sharing a variable with what is bound (else a product)
        atom = next((a for a in remaining if {v.name for v in variables(a)} & set(b.columns)), remaining[0])
        remaining.remove(atom)
        value, columns = _atom(checked, atom, b, lookup)
        if b.value is None:
            b.value, b.columns = value, columns
        else:
            keys = [c for c in columns if c in b.columns]
            b.then("join", "join", {"left_keys": keys, "right_keys": keys},
                   f"⋈ {_atom_text(atom)}" + (f" on {', '.join(keys)}" if keys else " (product)"), port="left")
            scope.wire(value, b.value[0], "right")
            b.columns += [c for c in columns if c not in keys]
        _bound_comparisons(comparisons, checked, b)
    for atom in (lit for lit in rule.body if isinstance(lit, Atom) and lit.negated):
        value, columns = _atom(checked, atom, b, lookup)
        if columns == [UNIT] and UNIT not in b.columns:
            b.then("unit", "map", {"columns": _keep(b.columns) + [{"name": UNIT, "expr": "TRUE"}]})
            b.columns = b.columns + [UNIT]
        b.then(f"not_{atom.relation}", "antijoin", {"left_keys": columns, "right_keys": columns}, f"¬{_atom_text(atom)}", port="left")
        scope.wire(value, b.value[0], "right")
    head = [{"name": col, "expr": sql(arg)} for (col, _), arg in zip(rel.columns, rule.head.args)]
    if head != _keep(b.columns):  # (else the body already is the head)
        b.then("head", "map", {"columns": head}, rule.text)
    return b.value


def _atom(checked: Checked, atom: Atom, b: _Binding, lookup) -> tuple[tuple[str, str], list[str]]:
    """The atom's relation filtered by its constants and repeated variables, its columns
    renamed to its variables (one column no__vars = TRUE when it has none)."""
    names = checked.relations[atom.relation].names
    conditions, mapping = [], {}
    for arg, col in zip(atom.args, names):
        if isinstance(arg, Const):
            conditions.append(f'"{col}" = {sql(arg)}')
        elif isinstance(arg, Var) and arg.name != "_":
            if arg.name in mapping:
                conditions.append(f'"{col}" = "{mapping[arg.name]}"')
            else:
                mapping[arg.name] = col
    value = lookup(atom.relation)
    sub = _Binding(b.scope, b.rule, f"{b.base}_{atom.relation}")
    sub.value = value
    if conditions:
        sub.then("match", "filter", {"predicate": " AND ".join(conditions)}, f"σ {_atom_text(atom)}")
    columns = [{"name": v, "expr": f'"{c}"'} for v, c in mapping.items()] or [{"name": UNIT, "expr": "TRUE"}]
    if [c["name"] for c in columns] != names:
        sub.then("vars", "map", {"columns": columns}, _atom_text(atom))
    return sub.value, [c["name"] for c in columns]


def _bound_comparisons(comparisons: list[Comparison], checked: Checked, b: _Binding) -> None:
    """Apply, in order, every `v = expr` and comparison whose variables are now bound."""
    assigned = checked.assigned[b.rule.index]
    progress = True
    while progress:
        progress = False
        for c in list(comparisons):
            names = {v.name for v in variables(c)}
            lone = next((side for side, other in ((c.left, c.right), (c.right, c.left))
                         if c.op == "=" and isinstance(side, Var) and side.name in assigned and side.name not in b.columns
                         and {v.name for v in variables(other)} <= set(b.columns)), None)
            if lone is not None:
                other = c.right if lone is c.left else c.left
                b.then(f"let_{lone.name}", "map", {"columns": _keep(b.columns) + [{"name": lone.name, "expr": sql(other)}]},
                       f"{lone.name} = {sql(other)}")
                b.columns = b.columns + [lone.name]
            elif names <= set(b.columns):
                b.then("where", "filter", {"predicate": sql(c)}, sql(c))
            else:
                continue
            comparisons.remove(c)
            progress = True


def _keep(columns: list[str]) -> list[dict]:
    return [{"name": c, "expr": f'"{c}"'} for c in columns]


def _atom_text(atom: Atom) -> str:
    def term(t):
        if isinstance(t, Var):
            return t.name
        return sql(t)
    return f"{atom.relation}({', '.join(term(a) for a in atom.args)})"


def _placed(scope: _Scope) -> list[dict]:
    """Positions for the editor: a column per depth (longest path from a source,
    feedback edges into delays left out), nodes of one depth stacked."""
    preds: dict[str, list[str]] = {n["id"]: [] for n in scope.nodes}
    kinds = {n["id"]: n["kind"] for n in scope.nodes}
    for e in scope.edges:
        if e["to"]["node"] in preds and e["from"]["node"] in preds and kinds[e["to"]["node"]] != "delay":
            preds[e["to"]["node"]].append(e["from"]["node"])
    depth: dict[str, int] = {}
    for root in preds:  # longest paths by an iterative depth-first walk (a chain of thousands of unions is fine)
        if root in depth:
            continue
        on_path, work = {root}, [(root, iter(preds[root]))]
        while work:
            n, rest = work[-1]
            p = next((p for p in rest if p not in depth and p not in on_path), None)
            if p is not None:
                on_path.add(p)
                work.append((p, iter(preds[p])))
                continue
            depth[n] = 1 + max((depth[p] for p in preds[n] if p in depth), default=-1)
            on_path.discard(n)
            work.pop()

    rows: dict[int, int] = {}
    for n in scope.nodes:
        d = depth[n["id"]]
        n["position"] = {"x": 240 * d, "y": 120 * rows.get(d, 0)}
        rows[d] = rows.get(d, 0) + 1
    return scope.nodes
