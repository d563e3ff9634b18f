"""Fixed points in nested time: the transitive-closure oracle of shared/DBSP.md, other
recursive queries (an aggregate, a three-way join inside the recursion), hand-built
circuits with δ0 / I / ∫, validation of subcircuits, and a property test that the
incremental Spark form equals recomputation at every tick for random edge changes."""
import json
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbsp import TickFailed, ZSet, compile_plan
from dbsp.operators.fixedpoint import FixedPointDiverged
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from dbsp.validate import validate
from tests.dbsp.recursive_circuits import hops_from_roots, same_generation, transitive_closure
from tests.dbsp.test_properties import EXAMPLES, MODES, run_both

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def pairs(spec: str) -> set[tuple[int, int]]:
    return {(int(p[0]), int(p[1])) for p in spec.split()}


def edge_records(sign, spec):
    return [{sign: {"src": a, "dst": b}} for a, b in sorted(pairs(spec))]


ORACLE_TICKS = [
    {"edges": edge_records("insert", "01 12 23")},
    {"edges": edge_records("insert", "34")},
    {"edges": edge_records("delete", "12")},
    {"edges": edge_records("insert", "12") + edge_records("delete", "01")},
]
ORACLE_CLOSURES = [pairs("01 02 03 12 13 23"), pairs("01 02 03 12 13 23 04 14 24 34"), pairs("01 23 24 34"), pairs("12 13 14 23 24 34")]


def _runtime(document, spark=None, **options):
    plan = compile_plan(document)
    if spark is None:
        return plan, ReferenceRuntime(plan)
    from dbsp.spark import SparkRuntime

    return plan, SparkRuntime(plan, spark, **options)


@pytest.mark.parametrize("backend", ["reference", "spark"])
def test_transitive_closure_oracle(backend, request):
    spark = request.getfixturevalue("spark") if backend == "spark" else None
    plan, rt = _runtime(transitive_closure(), spark)
    closure = ZSet()
    for t, (tick, expected) in enumerate(zip(ORACLE_TICKS, ORACLE_CLOSURES)):
        result = rt.step({"edges": changes_from_records(tick["edges"], plan.inputs["edges"])})
        delta = result.outputs["closure"]
        closure = closure + delta
        assert dict(closure) == {p: 1 for p in expected}, f"tick {t}"
        if t == 2:
            assert dict(delta) == {p: -1 for p in pairs("02 03 04 12 13 14")}
        mark = result.frontier["tc"]
        # iteration k holds the paths of at most k+1 edges, so settling takes at least
        # as many iterations as the longest shortest path (3 edges at tick 0 and 1)
        assert mark["tick"] == t and mark["converged"] is True and mark["iteration"] >= [3, 4, 2, 3][t]
        assert result.frontier["paths"] == mark  # every inner node reports the same progress


def test_hops_from_roots_aggregate_inside_the_recursion():
    plan, rt = _runtime(hops_from_roots())
    step = lambda **changes: rt.step({k: changes_from_records(v, plan.inputs[k]) for k, v in changes.items()}).outputs["hops"]
    hops = step(edges=edge_records("insert", "01 12 23 02"), roots=[{"insert": {"node": 0}}])
    assert dict(hops) == {(0, 0): 1, (1, 1): 1, (2, 1): 1, (3, 2): 1}
    # Deleting the shortcut 0->2 makes 2 and 3 one hop further: old rows retracted, new ones inserted.
    delta = step(edges=edge_records("delete", "02"))
    assert dict(delta) == {(2, 1): -1, (2, 2): 1, (3, 2): -1, (3, 3): 1}
    # A cycle back to the root changes nothing (the root stays at 0 hops).
    assert dict(step(edges=edge_records("insert", "30"))) == {}


def test_same_generation_three_way_join_inside_the_recursion():
    plan, rt = _runtime(same_generation())
    family = [("b", "a"), ("c", "a"), ("d", "b"), ("e", "c"), ("f", "d"), ("g", "e")]
    ids = {name: i for i, name in enumerate("abcdefg")}
    records = [{"insert": {"child": ids[c], "parent": ids[p]}} for c, p in family]
    sg = rt.step({"parents": changes_from_records(records, plan.inputs["parents"])}).outputs["same_generation"]
    names = {(("abcdefg"[x]), ("abcdefg"[y])) for (x, y), w in sg}
    # siblings b~c; cousins d~e (parents b~c); second cousins f~g (parents d~e); symmetric
    assert names == {("b", "c"), ("c", "b"), ("d", "e"), ("e", "d"), ("f", "g"), ("g", "f")}
    cut = rt.step({"parents": changes_from_records([{"delete": {"child": ids["e"], "parent": ids["c"]}}], plan.inputs["parents"])})
    assert {("abcdefg"[x], "abcdefg"[y], w) for (x, y), w in cut.outputs["same_generation"]} == {
        ("d", "e", -1), ("e", "d", -1), ("f", "g", -1), ("g", "f", -1)}


def _literal_circuit(body_nodes, body_edges, export_mode="value"):
    fp = {"id": "fp", "kind": "fixedpoint", "params": {}, "subcircuit": {
        "nodes": [{"id": "x_in", "kind": "delta0"}, *body_nodes, {"id": "res", "kind": "export", "params": {"mode": export_mode}}],
        "edges": body_edges}}
    return {"nodes": [
        {"id": "xs", "kind": "input", "params": {"schema": [{"name": "v", "type": "bigint"}]}},
        {"id": "d", "kind": "delay"},  # an outer z^-1: the circuit runs literally, as drawn
        fp, {"id": "now", "kind": "output"}, {"id": "before", "kind": "output"}],
        "edges": [{"from": {"node": "xs", "port": "out"}, "to": {"node": "fp", "port": "x_in"}},
                  {"from": {"node": "fp", "port": "res"}, "to": {"node": "now", "port": "in"}},
                  {"from": {"node": "fp", "port": "res"}, "to": {"node": "d", "port": "in"}},
                  {"from": {"node": "d", "port": "out"}, "to": {"node": "before", "port": "in"}}]}


@pytest.mark.parametrize("backend", ["reference", "spark"])
def test_hand_built_fixed_points_with_delta0_integrate_and_integral_to_limit(backend, request):
    spark = request.getfixturevalue("spark") if backend == "spark" else None
    e = lambda a, b: {"from": {"node": a, "port": "out"}, "to": {"node": b, "port": "in"}}
    # ∫ δ0(x) = x: the impulse sums to the value.
    summed = _literal_circuit([], [e("x_in", "res")], export_mode="sum")
    # lim I(δ0(x)) = x: the integral of the impulse settles on the value.
    settled = _literal_circuit([{"id": "acc", "kind": "integrate"}], [e("x_in", "acc"), e("acc", "res")])
    for document in (summed, settled):
        plan, rt = _runtime(document, spark)
        assert plan.literal
        first = rt.step({"xs": ZSet([((1,), 1), ((2,), 3)])})
        assert dict(first.outputs["now"]) == {(1,): 1, (2,): 3} and dict(first.outputs["before"]) == {}
        second = rt.step({"xs": ZSet([((5,), 1)])})
        assert dict(second.outputs["now"]) == {(5,): 1} and dict(second.outputs["before"]) == {(1,): 1, (2,): 3}


def test_a_fixed_point_that_never_settles_fails_the_tick_naming_the_node():
    # res = x ∪ z^-1(res) without distinct: the weights grow by x every iteration.
    grow = {"nodes": [
        {"id": "xs", "kind": "input", "params": {"schema": [{"name": "v", "type": "bigint"}]}},
        {"id": "loop", "kind": "fixedpoint", "params": {"max_iterations": 50}, "subcircuit": {
            "nodes": [{"id": "x_in", "kind": "import"}, {"id": "again", "kind": "delay"}, {"id": "more", "kind": "union"},
                      {"id": "res", "kind": "export"}],
            "edges": [{"from": {"node": "x_in", "port": "out"}, "to": {"node": "more", "port": "a"}},
                      {"from": {"node": "again", "port": "out"}, "to": {"node": "more", "port": "b"}},
                      {"from": {"node": "more", "port": "out"}, "to": {"node": "again", "port": "in"}},
                      {"from": {"node": "more", "port": "out"}, "to": {"node": "res", "port": "in"}}]}},
        {"id": "out", "kind": "output"}],
        "edges": [{"from": {"node": "xs", "port": "out"}, "to": {"node": "loop", "port": "x_in"}},
                  {"from": {"node": "loop", "port": "res"}, "to": {"node": "out", "port": "in"}}]}
    plan, rt = _runtime(grow)
    assert dict(rt.step({}).outputs["out"]) == {}  # nothing in, nothing grows
    with pytest.raises(TickFailed, match="^node 'loop' \\(fixedpoint\\): FixedPointDiverged: no fixed point after 50 iterations") as err:
        rt.step({"xs": ZSet([((1,), 1)])})
    assert (err.value.node, err.value.kind) == ("loop", "fixedpoint")
    assert isinstance(err.value.__cause__, FixedPointDiverged)


def _messages(document):
    return [(p.node, p.message) for p in validate(document)]


def test_subcircuit_problems_name_the_inner_node():
    doc = transitive_closure()
    inner = doc["nodes"][1]["subcircuit"]
    inner["nodes"][4]["params"]["left_keys"] = ["nowhere"]  # extend: an unknown column
    found = _messages(doc)
    assert any(node == "extend" and "unknown column 'nowhere'" in m for node, m in found), found


def test_cycle_without_delay_inside_a_subcircuit_lists_its_nodes():
    doc = transitive_closure()
    inner = doc["nodes"][1]["subcircuit"]
    inner["nodes"] = [n for n in inner["nodes"] if n["id"] != "paths_before"]
    inner["edges"] = [e for e in inner["edges"] if "paths_before" not in (e["from"]["node"], e["to"]["node"])]
    inner["edges"].append({"from": {"node": "paths", "port": "out"}, "to": {"node": "path_ends", "port": "in"}})
    cyclic = {node for node, m in _messages(doc) if "cycle without a z^-1" in m}
    assert cyclic == {"path_ends", "extend", "longer", "all_paths", "paths"}


def test_boundary_nodes_belong_to_their_level():
    doc = transitive_closure()
    doc["nodes"].append({"id": "stray", "kind": "import"})
    doc["nodes"][1]["subcircuit"]["nodes"].append({"id": "inner_view", "kind": "output"})
    found = _messages(doc)
    assert ("stray", "node 'stray': import only belongs inside a fixed point's subcircuit") in found
    assert any(node == "inner_view" and "belongs to the top level" in m for node, m in found)


def test_fixed_point_ports_ids_and_parameters_are_checked():
    doc = transitive_closure()
    doc["edges"][1]["from"]["port"] = "nope"  # no export named so
    doc["nodes"][1]["params"]["max_iterations"] = 0
    doc["nodes"][1]["subcircuit"]["nodes"].append({"id": "edges", "kind": "map", "params": {}})  # id used outside
    messages = [m for _, m in _messages(doc)]
    assert any("duplicate node id 'edges'" in m for m in messages), messages
    doc["nodes"][1]["subcircuit"]["nodes"].pop()
    # Every problem at once: the bad port does not hide the parameter's, and the view it
    # feeds (whose input is unknown) gets no error of its own.
    assert _messages(doc) == [
        ("tc", "node 'tc' has no output port 'nope' (ports: closure_out)"),
        ("tc", "node 'tc': max_iterations must be a positive integer"),
    ]
    doc["edges"][1]["from"]["port"] = "closure_out"
    assert [m for _, m in _messages(doc)] == ["node 'tc': max_iterations must be a positive integer"]


def test_plan_describes_the_fixed_point():
    plan = compile_plan(transitive_closure()).describe()
    tc = next(n for n in plan["nodes"] if n["id"] == "tc")
    assert tc["incremental"]["form"] == "fixedpoint"
    assert "per inner iteration" in tc["incremental"]["state"][0]
    assert {n["id"] for n in tc["subcircuit"]["nodes"]} >= {"edges_in", "paths", "closure_out"}
    assert json.loads(json.dumps(plan))  # plain JSON


# ---- property: random edge changes, every tick, Spark == reference == recomputation --
NODES = st.integers(0, 4)


@st.composite
def edge_ticks(draw, columns=("src", "dst"), extra=None):
    """Ticks of inserts (duplicates allowed) and deletes of present edges; some empty."""
    present: list[tuple] = []
    ticks = []
    for _ in range(draw(st.integers(1, 5))):
        records = []
        for _ in range(draw(st.integers(0, 4))):
            if present and draw(st.booleans()):
                row = present.pop(draw(st.integers(0, len(present) - 1)))
                records.append({"delete": dict(zip(columns, row))})
            else:
                row = (draw(NODES), draw(NODES))
                present.append(row)
                records.append({"insert": dict(zip(columns, row))})
        tick = {"edges" if columns[0] == "src" else "parents": records}
        if extra is not None:
            tick |= draw(extra)
        ticks.append(tick)
    return ticks


@st.composite
def cut_ticks(draw, roots=False):
    """A chain 0 -> 1 -> ... -> n (one large component, plus a few random edges), then
    deletes of chain edges that cut it in two, and reinserts: deletions that retract
    many derived rows at once (and rebuild them)."""
    n = draw(st.integers(6, 12))
    chain = [(i, i + 1) for i in range(n)]
    extra = draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, n)), max_size=2))
    first = {"edges": [{"insert": {"src": a, "dst": b}} for a, b in chain + extra]}
    if roots:
        first["roots"] = [{"insert": {"node": 0}}]
    ticks, cut = [first], []
    for _ in range(draw(st.integers(1, 3))):
        live = [e for e in chain if e not in cut]
        if cut and draw(st.booleans()):
            edge = cut.pop()
            ticks.append({"edges": [{"insert": {"src": edge[0], "dst": edge[1]}}]})
        else:
            edge = draw(st.sampled_from(live))
            cut.append(edge)
            ticks.append({"edges": [{"delete": {"src": edge[0], "dst": edge[1]}}]})
    return ticks


ROOTS = st.lists(NODES, max_size=2).map(lambda ns: {"roots": [{"insert": {"node": n}} for n in ns]})
CASES = {
    "transitive_closure": (transitive_closure, edge_ticks()),
    "hops_from_roots": (hops_from_roots, edge_ticks(extra=ROOTS)),
    "same_generation": (same_generation, edge_ticks(columns=("child", "parent"))),
    "closure_cut": (transitive_closure, cut_ticks()),
    "hops_cut": (hops_from_roots, cut_ticks(roots=True)),
}

# The recursive queries in SQL (DuckDB's WITH RECURSIVE), the second oracle for them.
RECURSIVE_SQL = {
    "closure": """WITH RECURSIVE paths(src, dst) AS (SELECT src, dst FROM edges UNION
                  SELECT p.src, e.dst FROM paths p JOIN edges e ON p.dst = e.src) SELECT src, dst, 1 FROM paths""",
    "hops": """WITH RECURSIVE h(node, hops) AS (SELECT node, 0 FROM roots UNION
               SELECT e.dst, h.hops + 1 FROM h JOIN edges e ON h.node = e.src WHERE h.hops < 50)
               SELECT node, MIN(hops), 1 FROM h GROUP BY node""",
}


def recursive_sql_equals(document, ticks, spark, mode):
    """Spark's integrated outputs equal DuckDB's recursive CTE over the edge multiset."""
    import duckdb

    from dbsp.spark import SparkRuntime
    from tests.dbsp.sql_oracle import rounded

    plan = compile_plan(document)
    rt = SparkRuntime(plan, spark, **(MODES[mode] if isinstance(mode, str) else mode))
    con = duckdb.connect()
    tables = {"edges": Counter(), "roots": Counter()}
    totals = {v: ZSet() for v in plan.views}
    for t, tick in enumerate(ticks):
        out = rt.step({n: changes_from_records(r, plan.inputs[n]) for n, r in tick.items()}).outputs
        totals = {v: totals[v] + out[v] for v in plan.views}
        for name, records in tick.items():
            for rec in records:
                row = tuple((rec.get("insert") or rec.get("delete")).values())
                tables[name][row] += 1 if "insert" in rec else -1
        con.execute("CREATE OR REPLACE TABLE edges (src BIGINT, dst BIGINT)")
        con.execute("CREATE OR REPLACE TABLE roots (node BIGINT)")
        for name, rows in tables.items():
            expanded = [list(row) for row, w in rows.items() for _ in range(w)]
            if expanded:
                con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' * len(expanded[0]))})", expanded)
        for view in plan.views:
            want = Counter({tuple(r[:-1]): r[-1] for r in con.execute(RECURSIVE_SQL[view]).fetchall()})
            assert rounded(totals[view]) == want, f"tick {t}, view {view} ({mode})"


# Every Spark job costs ~50 ms and an all-Spark tick runs several per inner iteration,
# so the all-Spark and spilling modes (the paths that copy and share Spark state between
# iterations) take fewer examples than the driver path.
SHARE = {"hybrid": 2, "spilling": 8, "all-spark": 12}


@pytest.mark.parametrize("mode", list(SHARE))
@pytest.mark.parametrize("case", list(CASES))
def test_incremental_fixed_point_equals_recomputation(spark, case, mode):
    if case.endswith("_cut") and mode != "hybrid":
        pytest.skip("a chain's many inner iterations with Spark jobs each take minutes: see test_cutting_a_chain_on_spark")
    make, ticks_strategy = CASES[case]
    document = make()

    @settings(max_examples=max(2, EXAMPLES // SHARE[mode]), deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(ticks=ticks_strategy)
    def check(ticks):
        run_both(spark, document, ticks, mode)
        if case.endswith("_cut"):
            recursive_sql_equals(document, ticks, spark, mode)

    check()


@pytest.mark.parametrize("case", ["hops_cut"])  # (closure_cut: twice as long; on the driver path above)
def test_cutting_a_chain_on_spark(spark, case):
    """The cut cases once with every change computed on Spark (state on the driver: a
    spill per inner iteration makes this minutes long), against DuckDB: a chain of 5
    edges, its middle edge deleted (retracting the paths through it), then reinserted."""
    document = CASES[case][0]()
    chain = [{"src": i, "dst": i + 1} for i in range(5)]
    first = {"edges": [{"insert": e} for e in chain]} | ({"roots": [{"insert": {"node": 0}}]} if case == "hops_cut" else {})
    ticks = [first, {"edges": [{"delete": chain[2]}]}, {"edges": [{"insert": chain[2]}]}]
    recursive_sql_equals(document, ticks, spark, {"driver_max_rows": 0, "arrow_max_rows": 0, "vector_min_rows": 0})
