import copy

import pytest

from dbsp import CircuitInvalid, compile_plan, validate
from tests.conftest import example

SLICE = example("big_orders")


def problems(doc):
    return [p.as_dict() for p in validate(doc)]


def test_the_example_is_valid_and_compiles():
    assert validate(SLICE) == []
    plan = compile_plan(SLICE)
    assert list(plan.inputs) == ["orders"]
    assert list(plan.views) == ["big_orders"]
    assert plan.schemas["big_orders"].names == ["id", "customer", "amount"]


def test_every_problem_is_reported_at_once_naming_its_node():
    doc = copy.deepcopy(SLICE)
    doc["nodes"][1]["params"]["predicate"] = "amount > "
    doc["nodes"].append({"id": "mystery", "kind": "teleport", "params": {}})
    doc["nodes"].append({"id": "orphan", "kind": "output", "params": {}})
    found = problems(doc)
    by_node = {p["node"]: p for p in found}
    assert set(by_node) == {"big", "mystery", "orphan"}
    assert by_node["big"]["param"] == "predicate" and "syntax error" in by_node["big"]["message"]
    assert "unknown operator 'teleport'" in by_node["mystery"]["message"]
    assert by_node["orphan"]["port"] == "in" and "not connected" in by_node["orphan"]["message"]


def test_schema_errors_name_the_parameter_and_column():
    doc = copy.deepcopy(SLICE)
    doc["nodes"][1]["params"]["predicate"] = "total > 3"
    [p] = problems(doc)
    assert p["node"] == "big" and p["param"] == "predicate"
    assert "unknown column 'total'" in p["message"] and "id, customer, amount" in p["message"]


def test_bad_input_schema():
    doc = copy.deepcopy(SLICE)
    doc["nodes"][0]["params"]["schema"][2]["type"] = "money"
    [p] = problems(doc)
    assert p["node"] == "orders" and p["param"] == "schema" and "unknown type 'money'" in p["message"]


def test_a_cycle_without_a_delay_lists_its_nodes():
    doc = copy.deepcopy(SLICE)
    doc["nodes"].append({"id": "again", "kind": "filter", "params": {"predicate": "TRUE"}})
    doc["edges"] = [
        {"from": {"node": "big", "port": "out"}, "to": {"node": "again", "port": "in"}},
        {"from": {"node": "again", "port": "out"}, "to": {"node": "big", "port": "in"}},
        {"from": {"node": "big", "port": "out"}, "to": {"node": "big_orders", "port": "in"}},
    ]
    cyc = [p for p in problems(doc) if "cycle" in p["message"]]
    assert {p["node"] for p in cyc} == {"big", "again"}
    assert "without a z^-1" in cyc[0]["message"]


@pytest.mark.parametrize("doc, needle", [
    ([], "must be a JSON object"),
    ({"nodes": "x"}, "nodes must be a list"),
    ({"nodes": [{"id": "1bad", "kind": "input"}], "edges": []}, "must be a name"),
    ({"nodes": [{"id": "a", "kind": "output"}], "edges": [{"from": {"node": "zz", "port": "out"}, "to": {"node": "a", "port": "in"}}]}, "unknown node 'zz'"),
    ({"format": "other", "nodes": []}, "format must be"),
])
def test_structural_problems(doc, needle):
    assert any(needle in p["message"] for p in problems(doc))


def test_compile_plan_raises_with_all_problems():
    with pytest.raises(CircuitInvalid) as err:
        compile_plan({"nodes": [{"id": "a", "kind": "nope"}, {"id": "b", "kind": "nope2"}], "edges": []})
    assert len(err.value.problems) == 2


from tests.dbsp.helpers import circuit, schema  # noqa: E402


def test_join_key_problems_name_the_parameter():
    doc = circuit({"a": schema("k:bigint", "v:string"), "b": schema("k:string", "v:string")},
                  [("j", "join", {"left_keys": ["k", "nope"], "right_keys": ["k"]}), ("o", "output", {})],
                  ["a.out->j.left", "b.out->j.right", "j.out->o.in"])
    [p] = problems(doc)
    assert p["node"] == "j" and p["param"] == "left_keys" and "unknown column 'nope'" in p["message"]
    doc["nodes"][2]["params"] = {"left_keys": ["k"], "right_keys": ["k"]}
    msgs = [p["message"] for p in problems(doc)]
    assert any("cannot equal" in m for m in msgs)


def test_join_column_clash_is_reported():
    doc = circuit({"a": schema("k:bigint", "v:string"), "b": schema("k:bigint", "v:string")},
                  [("j", "join", {"left_keys": ["k"], "right_keys": ["k"]}), ("o", "output", {})],
                  ["a.out->j.left", "b.out->j.right", "j.out->o.in"])
    [p] = problems(doc)
    assert "column 'v' is on both sides" in p["message"] and p["port"] == "right"


def test_union_needs_equal_columns():
    doc = circuit({"a": schema("k:bigint"), "b": schema("k:string")},
                  [("u", "union", {}), ("o", "output", {})], ["a.out->u.a", "b.out->u.b", "u.out->o.in"])
    [p] = problems(doc)
    assert p["node"] == "u" and "same columns" in p["message"]


def test_aggregate_problems():
    doc = circuit({"t": schema("k:bigint", "s:string")},
                  [("g", "aggregate", {"group_by": ["k"], "aggregates": [
                      {"fn": "sum", "expr": "s", "as": "x"}, {"fn": "median", "expr": "k", "as": "y"},
                      {"fn": "count", "as": "k"}, {"fn": "max", "expr": "k +", "as": "z"}]}), ("o", "output", {})],
                  ["t.out->g.in", "g.out->o.in"])
    msgs = [p["message"] for p in problems(doc)]
    assert any("sum(x) needs a number, got string" in m for m in msgs)
    assert any("unknown function 'median'" in m for m in msgs)
    assert any("duplicate output column 'k'" in m for m in msgs)
    assert any("max(z): syntax error" in m for m in msgs)


def test_map_expression_errors_name_the_column():
    doc = circuit({"t": schema("k:bigint")}, [("m", "map", {"columns": [{"name": "x", "expr": "k + q"}]}), ("o", "output", {})],
                  ["t.out->m.in", "m.out->o.in"])
    [p] = problems(doc)
    assert p["param"] == "columns" and "column 'x': unknown column 'q'" in p["message"]


def test_downstream_of_a_broken_node_is_not_reported_again():
    doc = circuit({"t": schema("k:bigint")},
                  [("f", "filter", {"predicate": "nope > 1"}), ("m", "map", {"columns": [{"name": "x", "expr": "k"}]}), ("o", "output", {})],
                  ["t.out->f.in", "f.out->m.in", "m.out->o.in"])
    assert [p["node"] for p in problems(doc)] == ["f"]
