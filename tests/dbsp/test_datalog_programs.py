"""Datalog programs compiled to circuits, run under streams of inserts and deletes
(of edges, and of nodes: a node and every edge touching it leave in one tick) on the
reference and the Spark backends. Every tick's output delta is compared with the
difference of two from-scratch recomputations written here in plain Python (sets and
loops, sharing nothing with the engine), and the integrated views with the
recomputation itself. PyDBSP 2.1.0's stratified Datalog (IncrementalDatalogStratified,
given the same rules) is cross-checked at every tick where it is right; its known
disagreement is pinned by its own test."""
from __future__ import annotations

import random

import pytest

from dbsp import ZSet, compile_plan
from dbsp.datalog import compile_program
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

NODES = range(6)

# ---- the programs -------------------------------------------------------------------------
CLOSURE = """
.decl edge(src: number, dst: number)
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).
"""

SAME_GENERATION = """
.decl parent(child: number, parent: number)
sg(x, y) :- parent(x, p), parent(y, p), x != y.
sg(x, y) :- parent(x, a), sg(a, b), parent(y, b).
"""

COMPLEMENT = """
.decl node(id: number)
.decl edge(src: number, dst: number)
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).
unreachable(x, y) :- node(x), node(y), !reach(x, y).
.output unreachable
"""

SQUARES = """
.decl edge(src: number, dst: number)
cycle4(a, b, c, d) :- edge(a, b), edge(b, c), edge(c, d), edge(d, a),
                      a != b, a != c, a != d, b != c, b != d, c != d.
triangle_edge(x, y) :- edge(x, y), edge(y, z), edge(z, x), x != y, y != z, x != z.
square(a, b, c, d) :- cycle4(a, b, c, d),
                      !triangle_edge(a, b), !triangle_edge(b, c), not triangle_edge(c, d), !triangle_edge(d, a).
.output square
"""


# ---- from-scratch recomputations (plain Python) ----------------------------------------------
def closure(edges) -> set:
    paths = set(edges)
    while True:
        longer = {(a, d) for (a, b) in paths for (c, d) in edges if b == c} - paths
        if not longer:
            return paths
        paths |= longer


def same_generation(parents) -> set:
    sg = {(x, y) for (x, p) in parents for (y, q) in parents if p == q and x != y}
    while True:
        more = {(x, y) for (x, a) in parents for (a2, b) in sg if a2 == a for (y, b2) in parents if b2 == b} - sg
        if not more:
            return sg
        sg |= more


def complement(nodes, edges) -> set:
    reach = closure(edges)
    return {(x, y) for x in nodes for y in nodes if (x, y) not in reach}


def squares(edges) -> set:
    succ = {}
    for a, b in edges:
        succ.setdefault(a, set()).add(b)
    on_triangle = {(x, y) for (x, y) in edges for z in succ.get(y, ()) if x in succ.get(z, ()) and len({x, y, z}) == 3}
    out = set()
    for a, b in edges:
        for c in succ.get(b, ()):
            for d in succ.get(c, ()):
                if a in succ.get(d, ()) and len({a, b, c, d}) == 4 and \
                        not {(a, b), (b, c), (c, d), (d, a)} & on_triangle:
                    out.add((a, b, c, d))
    return out


# ---- streams of changes ------------------------------------------------------------------------
# two 4-cycles sharing the edge 2->3, and a triangle 1->2->5->1 on an edge of one of them
SQUARE_EDGES = [(0, 1), (1, 2), (2, 3), (3, 0), (2, 5), (5, 1), (2, 4), (4, 5), (5, 3), (3, 2)]


def graph_stream(seed: int, ticks: int, edge_name="edge", with_nodes=False, pool=None):
    """Per tick: {relation: [change records]} and the tables after it. Ticks insert and
    delete random edges; every third tick deletes a node with every edge touching it (and
    its `node` fact), a later tick brings it back."""
    rnd = random.Random(seed)
    pool = pool or [(a, b) for a in NODES for b in NODES if a != b]
    edges, nodes = set(), set(NODES) if with_nodes else set()
    out = []
    for t in range(ticks):
        records = {edge_name: [], "node": []}
        if t == 0 and with_nodes:
            records["node"] = [{"insert": {"id": n}} for n in sorted(nodes)]
        if t % 3 == 2 and edges:
            gone = rnd.choice(sorted({n for e in edges for n in e}))
            for e in sorted(e for e in edges if gone in e):
                records[edge_name].append({"delete": dict(zip(_cols(edge_name), e))})
                edges.discard(e)
            if with_nodes and gone in nodes:
                records["node"].append({"delete": {"id": gone}})
                nodes.discard(gone)
        else:
            for _ in range(rnd.randint(2, 7) if t else 9):
                e = rnd.choice(pool)
                if e not in edges:
                    edges.add(e)
                    records[edge_name].append({"insert": dict(zip(_cols(edge_name), e))})
            for e in rnd.sample(sorted(edges), k=min(len(edges), rnd.randint(0, 2))) if t else []:
                records[edge_name].append({"delete": dict(zip(_cols(edge_name), e))})
                edges.discard(e)
            if with_nodes:
                for n in sorted(set(NODES) - nodes):  # a deleted node comes back
                    records["node"].append({"insert": {"id": n}})
                    nodes.add(n)
        out.append(({k: v for k, v in records.items() if v and (with_nodes or k != "node")}, set(edges), set(nodes)))
    return out


def _cols(edge_name):
    return ("child", "parent") if edge_name == "parent" else ("src", "dst")


CASES = {
    # name: (program, view, edge relation, recomputation from (edges, nodes), stream seed)
    "closure": (CLOSURE, "reach", "edge", lambda e, n: closure(e), 1),
    "same_generation": (SAME_GENERATION, "sg", "parent", lambda e, n: same_generation(e), 2),
    "complement": (COMPLEMENT, "unreachable", "edge", lambda e, n: complement(n, e), 3),
    "squares": (SQUARES, "square", "edge", lambda e, n: squares(e), 4),
}


def _stream(case, ticks, pool=None):
    _, _, edge_name, _, seed = CASES[case]
    return graph_stream(seed, ticks, edge_name, with_nodes=(case == "complement"),
                        pool=pool or (SQUARE_EDGES if case == "squares" else None))


def _runtime(case, backend, spark, options=None):
    plan = compile_plan(compile_program(CASES[case][0]))
    if backend == "reference":
        return plan, ReferenceRuntime(plan)
    from dbsp.spark import SparkRuntime

    return plan, SparkRuntime(plan, spark, **(options or {}))


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def check_stream(case, backend, spark=None, ticks=8, options=None, pool=None):
    _, view, _, recompute, _ = CASES[case]
    plan, rt = _runtime(case, backend, spark, options)
    integrated, before, seen = ZSet(), set(), 0
    for t, (records, edges, nodes) in enumerate(_stream(case, ticks, pool)):
        changes = {name: changes_from_records(r, plan.inputs[name]) for name, r in records.items()}
        delta = rt.step(changes).outputs[view]
        after = recompute(edges, nodes)
        expected = ZSet([(row, 1) for row in after - before] + [(row, -1) for row in before - after])
        assert delta == expected, f"{case} on {backend}, tick {t}: delta {dict(delta)} != {dict(expected)}"
        integrated = integrated + delta
        assert dict(integrated) == dict.fromkeys(after, 1), f"{case} on {backend}, tick {t}"
        before, seen = after, max(seen, len(after))
    return seen


@pytest.mark.parametrize("case", list(CASES))
def test_every_tick_equals_recomputation_on_the_reference(case):
    assert check_stream(case, "reference", ticks=12), "the view should not stay empty"


@pytest.mark.parametrize("case", list(CASES))
def test_every_tick_equals_recomputation_on_spark(case, spark):
    check_stream(case, "spark", spark, ticks=7)


# The Spark runtime's other paths (tests/dbsp/test_properties.py MODES): Arrow joins
# against fetched state, state spilled to Spark after every tick, and everything on
# Spark. Three ticks on a path-shaped graph of 4 nodes (the third deletes a node):
# these paths run Spark jobs per inner iteration, several seconds per tick.
@pytest.mark.parametrize("case, mode", [
    ("complement", {"driver_max_rows": 0, "vector_min_rows": 0}),
    ("closure", {"recent_max": 1}),
    ("closure", {"driver_max_rows": 0, "arrow_max_rows": 0, "recent_max": 0}),
], ids=["arrow", "spilling", "all-spark"])
def test_other_spark_paths_equal_recomputation(spark, case, mode):
    """Justified over 20 s in all: one stream per path, the shortest with a node deletion."""
    check_stream(case, "spark", spark, ticks=3, options=mode, pool=[(0, 1), (1, 2), (2, 3), (3, 0), (1, 3)])


def test_streams_delete_nodes_and_edges():
    """The streams do what the tests above rely on: nodes leave with their edges, edges
    are inserted and deleted, and views shrink as well as grow."""
    for case in CASES:
        stream = _stream(case, 12)
        kinds = {next(iter(r)) for records, _, _ in stream for rs in records.values() for r in rs}
        assert kinds == {"insert", "delete"}
        node_deleted = any(len([r for r in records.get(CASES[case][2], []) if "delete" in r]) >= 2 for records, _, _ in stream)
        assert node_deleted, case
        sizes = [len(CASES[case][3](e, n)) for _, e, n in stream]
        assert any(b < a for a, b in zip(sizes, sizes[1:])), f"{case}: {sizes}"


# ---- PyDBSP ---------------------------------------------------------------------------------
def _pydbsp_rules(case):
    """The same programs in PyDBSP's terms (variables ?X, negation !rel); x != y
    becomes a `neq` relation of facts over the nodes (PyDBSP has no comparisons)."""
    from pydbsp.datalog import Variable

    X, Y, Z, P, A, B, C, D = (Variable(f"?{v}") for v in "XYZPABCD")
    tc = [(("reach", (X, Y)), ("edge", (X, Y))), (("reach", (X, Z)), ("reach", (X, Y)), ("edge", (Y, Z)))]
    if case == "closure":
        return tc
    if case == "same_generation":
        return [(("sg", (X, Y)), ("parent", (X, P)), ("parent", (Y, P)), ("neq", (X, Y))),
                (("sg", (X, Y)), ("parent", (X, A)), ("sg", (A, B)), ("parent", (Y, B)))]
    if case == "complement":
        return tc + [(("unreachable", (X, Y)), ("node", (X,)), ("node", (Y,)), ("!reach", (X, Y)))]
    neq = [("neq", pair) for pair in ((A, B), (A, C), (A, D), (B, C), (B, D), (C, D))]
    return [
        (("cycle4", (A, B, C, D)), ("edge", (A, B)), ("edge", (B, C)), ("edge", (C, D)), ("edge", (D, A)), *neq),
        (("triangle_edge", (X, Y)), ("edge", (X, Y)), ("edge", (Y, Z)), ("edge", (Z, X)),
         ("neq", (X, Y)), ("neq", (Y, Z)), ("neq", (X, Z))),
        (("square", (A, B, C, D)), ("cycle4", (A, B, C, D)), ("!triangle_edge", (A, B)), ("!triangle_edge", (B, C)),
         ("!triangle_edge", (C, D)), ("!triangle_edge", (D, A))),
    ]


def _pydbsp_run(case, ticks):
    """PyDBSP's view after each tick of the same stream."""
    from pydbsp.datalog_stratified import IncrementalDatalogStratified
    from pydbsp.zset import ZSet as PZSet

    view = CASES[case][1]
    d = IncrementalDatalogStratified()
    d.push_rules(PZSet(dict.fromkeys(_pydbsp_rules(case), 1)))
    d.push_facts(PZSet({("neq", (a, b)): 1 for a in NODES for b in NODES if a != b}))
    views = []
    for records, _, _ in _stream(case, ticks):
        facts = {}
        for name, rs in records.items():
            for r in rs:
                (kind, row), = r.items()
                fact = (name, tuple(row.values()))
                facts[fact] = facts.get(fact, 0) + (1 if kind == "insert" else -1)
        d.push_facts(PZSet(facts))
        state = d.saturate()
        views.append({args for (rel, args), w in state.inner.items() if rel == view and w > 0})
    return views


@pytest.mark.parametrize("case", ["closure", "same_generation"])
def test_pydbsp_agrees_at_every_tick(case):
    expected = [CASES[case][3](e, n) for _, e, n in _stream(case, 12)]
    assert _pydbsp_run(case, 12) == expected


@pytest.mark.parametrize("case", ["complement", "squares"])
def test_pydbsp_with_negation_agrees_but_for_stale_rows(case):
    """PyDBSP 2.1.0's known disagreement: a fact deleted from a positive atom of a rule
    with a negation does not retract what the rule derived from it, e.g. once a node is
    deleted the complement keeps that node's pairs (and a square keeps standing after
    its edges go). So it is checked here for what holds: it never misses a row; in the
    complement only pairs of a deleted node are extra, in the squares only squares of
    an earlier tick; and other ticks agree exactly. Our
    engine equals the recomputation at every tick (the tests above)."""
    stream = _stream(case, 12)
    expected = [CASES[case][3](e, n) for _, e, n in stream]
    theirs = _pydbsp_run(case, 12)
    agreed = 0
    for t, ((records, _, nodes), ours, pydbsp) in enumerate(zip(stream, expected, theirs)):
        extra = pydbsp - ours
        assert ours <= pydbsp, f"tick {t}: PyDBSP misses {ours - pydbsp}"
        if case == "complement":  # pairs as if the deleted node were still there
            assert all(set(pair) - nodes for pair in extra), f"tick {t}: {extra}"
        else:  # squares whose edges are gone
            assert extra <= set().union(*expected[:t]), f"tick {t}: PyDBSP derives {extra - set().union(*expected[:t])}"
        agreed += not extra
    assert 0 < agreed < len(stream), "the known disagreement is gone or everywhere: look again"
