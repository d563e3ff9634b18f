"""Bounded documents and expressions (dbsp.limits), refused with a problem naming the
bound and where, before any recursive parser runs; and validation that does work
proportional to the document (it used to scan every edge for every node: 16k nodes took
13.5 s, 10^5 nodes did not finish in 18 minutes)."""
import pytest

from dbsp import compile_plan, limits
from dbsp.errors import CircuitInvalid, ExpressionError
from dbsp.expr import parse_expression
from dbsp.types import Schema
from dbsp.validate import validate

S = Schema.from_list([{"name": "a", "type": "bigint"}, {"name": "b", "type": "boolean"}])
INPUT = {"id": "t", "kind": "input", "params": {"schema": [{"name": "a", "type": "bigint"}, {"name": "b", "type": "boolean"}]}}


def _edge(a, b, ap="out", bp="in"):
    return {"from": {"node": a, "port": ap}, "to": {"node": b, "port": bp}}


def chain(n: int) -> dict:
    """input -> (map | filter) x (n - 2) -> output: n nodes, n - 1 edges."""
    nodes, edges, prev = [INPUT], [], "t"
    for i in range(n - 2):
        if i % 2:
            nodes.append({"id": f"n{i}", "kind": "filter", "params": {"predicate": "a > 1 AND b"}})
        else:
            nodes.append({"id": f"n{i}", "kind": "map", "params": {"columns": [{"name": "a", "expr": "a + 1"}, {"name": "b", "expr": "NOT b"}]}})
        edges.append(_edge(prev, f"n{i}"))
        prev = f"n{i}"
    nodes.append({"id": "view", "kind": "output", "params": {}})
    edges.append(_edge(prev, "view"))
    return {"nodes": nodes, "edges": edges}


def nested_fixed_points(depth: int) -> dict:
    """`depth` fixed points, each inside the one before, passing a stream through."""
    inner = {"nodes": [{"id": f"i{depth}", "kind": "import"}, {"id": f"e{depth}", "kind": "export"}],
             "edges": [_edge(f"i{depth}", f"e{depth}")]}
    for k in range(depth - 1, 0, -1):
        fp = {"id": f"f{k + 1}", "kind": "fixedpoint", "subcircuit": inner}
        inner = {"nodes": [{"id": f"i{k}", "kind": "import"}, fp, {"id": f"e{k}", "kind": "export"}],
                 "edges": [_edge(f"i{k}", f"f{k + 1}", bp=f"i{k + 1}"), _edge(f"f{k + 1}", f"e{k}", ap=f"e{k + 1}")]}
    return {"nodes": [INPUT, {"id": "f1", "kind": "fixedpoint", "subcircuit": inner}, {"id": "view", "kind": "output"}],
            "edges": [_edge("t", "f1", bp="i1"), _edge("f1", "view", ap="e1")]}


def _refused(text: str) -> ExpressionError:
    with pytest.raises(ExpressionError) as err:
        parse_expression(text, S)
    return err.value


@pytest.mark.parametrize("text", [
    "(" * 48 + "a" + ")" * 48,  # was a RecursionError (a 500 with a 4 MB debug page)
    "abs(" * 30 + "a" + ")" * 30,
    "CASE WHEN b THEN " * 30 + "1" + " END" * 30,
    "NOT " * 200 + "b",
    "- " * 2000 + "a",
])
def test_deep_nesting_is_refused_before_parsing_naming_the_limit(text):
    err = _refused(text)
    assert "MAX_EXPRESSION_NESTING" in str(err) and err.position is not None


def test_long_operator_chains_are_refused_naming_the_limit():
    err = _refused(" + ".join(["a"] * (limits.MAX_EXPRESSION_DEPTH + 5)))
    assert "MAX_EXPRESSION_DEPTH" in str(err)
    assert "MAX_EXPRESSION_CHARS" in str(_refused("a + " * 3000 + "a"))


def test_expressions_at_the_limits_are_accepted():
    n = limits.MAX_EXPRESSION_NESTING
    assert parse_expression("(" * n + "a" + ")" * n, S).type == "bigint"
    assert parse_expression("NOT " * (n - 1) + "b", S).type == "boolean"
    assert parse_expression(" + ".join(["a"] * (limits.MAX_EXPRESSION_DEPTH - 1)), S).type == "bigint"


def test_nested_fixed_points_beyond_the_limit_are_refused_naming_the_node():
    deepest = limits.MAX_FIXEDPOINT_NESTING + 1
    with pytest.raises(CircuitInvalid) as err:
        compile_plan(nested_fixed_points(deepest))
    [problem] = err.value.problems
    assert "MAX_FIXEDPOINT_NESTING" in problem.message and problem.node == f"f{deepest}" and problem.param == "subcircuit"
    assert validate(nested_fixed_points(limits.MAX_FIXEDPOINT_NESTING)) == []


def test_too_many_nodes_or_edges_are_refused_naming_the_limit():
    [problem] = validate(chain(limits.MAX_NODES + 1))
    assert "MAX_NODES" in problem.message
    doc = chain(10)
    doc["edges"] += [_edge("t", "n0")] * limits.MAX_EDGES
    [problem] = validate(doc)
    assert "MAX_EDGES" in problem.message


def test_deeply_nested_json_and_huge_documents_are_refused():
    doc = chain(4)
    junk = []
    for _ in range(100_000):  # as a JSON body nested 100,000 deep would arrive
        junk = [junk]
    doc["nodes"][1]["params"]["junk"] = junk
    [problem] = validate(doc)
    assert "MAX_JSON_DEPTH" in problem.message and problem.node == "n0"
    doc = chain(4)
    doc["nodes"][1]["label"] = "x" * limits.MAX_DOCUMENT_CHARS
    [problem] = validate(doc)
    assert "MAX_DOCUMENT_CHARS" in problem.message


@pytest.mark.timeout(120)
def test_a_document_at_the_node_limit_validates_and_compiles():
    plan = compile_plan(chain(limits.MAX_NODES))
    assert len(plan.order) == limits.MAX_NODES and plan.sources("view") == {"in": f"n{limits.MAX_NODES - 3}"}


def test_validation_reads_each_edge_a_bounded_number_of_times(monkeypatch):
    """Counted, not timed: the edges' endpoints read while validating and compiling a
    chain grow in proportion to its size (a per-node scan of every edge made them grow
    with its square), and so do the reads of a tick's wiring (Plan.sources per node)."""
    import dbsp.document as document

    reads = [0]

    class CountingEdge(document.Edge):
        def __getattribute__(self, name):
            if name in ("source", "target"):
                reads[0] += 1
            return super().__getattribute__(name)

    monkeypatch.setattr(document, "Edge", CountingEdge)

    def count(n):
        reads[0] = 0
        plan = compile_plan(chain(n))
        for node_id in plan.order:
            plan.sources(node_id)
        return reads[0]

    small, large = count(250), count(2000)
    assert large > 0
    assert large <= 8 * small * 1.25, (small, large)  # 8x the nodes: about 8x the reads, not 64x
