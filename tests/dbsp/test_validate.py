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


# ---- every validation error, naming its node and port/parameter --------------------
def test_a_missing_parameter_names_it():
    doc = circuit({"t": schema("k:bigint")}, [("f", "filter", {}), ("o", "output", {})], ["t.out->f.in", "f.out->o.in"])
    [p] = problems(doc)
    assert p["node"] == "f" and p["param"] == "predicate" and "predicate must be an expression" in p["message"]


def test_an_unknown_input_port_names_the_port_and_the_real_ones():
    doc = circuit({"t": schema("k:bigint")}, [("f", "filter", {"predicate": "k > 1"}), ("o", "output", {})],
                  ["t.out->f.in", "t.out->f.oops", "f.out->o.in"])
    [p] = problems(doc)
    assert p["node"] == "f" and p["port"] == "oops"
    assert "has no input port 'oops'" in p["message"] and "(ports: in)" in p["message"]


def test_an_unknown_output_port_names_the_port_and_its_consumer_is_not_blamed():
    doc = circuit({"t": schema("k:bigint")}, [("f", "filter", {"predicate": "k > 1"}), ("m", "map", {"columns": [{"name": "x", "expr": "nope"}]}),
                                              ("o", "output", {})],
                  ["t.out->f.in", "f.nowhere->m.in", "m.out->o.in"])
    [p] = problems(doc)  # m's input is unknown, so its expression is not judged
    assert p["node"] == "f" and p["port"] == "nowhere"
    assert "has no output port 'nowhere'" in p["message"] and "(ports: out)" in p["message"]


def test_a_port_with_two_incoming_edges():
    doc = circuit({"t": schema("k:bigint"), "s": schema("k:bigint")}, [("f", "filter", {"predicate": "k > 1"}), ("o", "output", {})],
                  ["t.out->f.in", "s.out->f.in", "f.out->o.in"])
    [p] = problems(doc)
    assert p["node"] == "f" and p["port"] == "in"
    assert "has 2 incoming edges" in p["message"] and "use a union" in p["message"]


def test_a_port_fed_twice_with_different_columns_blames_only_the_port():
    doc = circuit({"t": schema("k:bigint"), "s": schema("name:string")},
                  [("f", "filter", {"predicate": "k > 1"}), ("m", "map", {"columns": [{"name": "x", "expr": "k"}]}), ("o", "output", {})],
                  ["t.out->f.in", "s.out->f.in", "f.out->m.in", "m.out->o.in"])
    [p] = problems(doc)
    assert (p["node"], p["port"]) == ("f", "in") and "2 incoming edges" in p["message"]


def test_an_unconnected_input_port_and_nothing_downstream():
    doc = circuit({"a": schema("k:bigint")},
                  [("j", "join", {"left_keys": ["k"], "right_keys": ["k"]}), ("f", "filter", {"predicate": "nope"}), ("o", "output", {})],
                  ["a.out->j.left", "j.out->f.in", "f.out->o.in"])
    [p] = problems(doc)
    assert p["node"] == "j" and p["port"] == "right" and "input port 'right' is not connected" in p["message"]


def test_a_z1_on_a_loop_with_nothing_to_infer_its_schema_from():
    doc = circuit({}, [("d", "delay", {}), ("f", "filter", {"predicate": "TRUE"}), ("o", "output", {})],
                  ["d.out->f.in", "f.out->d.in", "f.out->o.in"])
    [p] = problems(doc)
    assert p["node"] == "d" and p["param"] == "schema"
    assert "cannot infer the schema of this z^-1" in p["message"] and "give it a 'schema' parameter" in p["message"]
    doc["nodes"][0]["params"]["schema"] = schema("k:bigint")
    assert problems(doc) == []


def test_a_z1_whose_declared_schema_differs_from_its_input():
    doc = circuit({}, [("d", "delay", {"schema": schema("k:string")}), ("m", "map", {"columns": [{"name": "k", "expr": "1"}]}),
                       ("o", "output", {})],
                  ["d.out->m.in", "m.out->d.in", "m.out->o.in"])
    [p] = problems(doc)
    assert p["node"] == "d" and p["param"] == "schema" and "declared schema differs from its input's" in p["message"]


def test_a_malformed_declared_schema():
    doc = circuit({"t": schema("k:bigint")}, [("d", "delay", {"schema": "k bigint"}), ("o", "output", {})], ["t.out->d.in", "d.out->o.in"])
    [p] = problems(doc)
    assert p["node"] == "d" and p["param"] == "schema" and "must be a list of {name, type}" in p["message"]


def test_a_circuit_without_an_output_view():
    doc = circuit({"t": schema("k:bigint")}, [("f", "filter", {"predicate": "k > 1"})], ["t.out->f.in"])
    [p] = problems(doc)
    assert "no output view" in p["message"] and "add an 'output' node" in p["message"]
    assert "node" not in p  # it is about the whole circuit


def test_union_with_unequal_columns_names_port_b():
    doc = circuit({"a": schema("k:bigint", "v:string"), "b": schema("k:bigint")},
                  [("u", "union", {}), ("o", "output", {})], ["a.out->u.a", "b.out->u.b", "u.out->o.in"])
    [p] = problems(doc)
    assert p["node"] == "u" and p["port"] == "b"
    assert "a has (k bigint, v string), b has (k bigint)" in p["message"]


TWO_CYCLES = circuit(
    {"t": schema("k:bigint")},
    [("a", "union", {}), ("b", "filter", {"predicate": "k > 0"}), ("c", "union", {}), ("d", "filter", {"predicate": "k > 0"}),
     ("bad", "filter", {"predicate": "nope > 1"}), ("after", "filter", {"predicate": "also_nope"}), ("o", "output", {}), ("o2", "output", {})],
    ["t.out->a.a", "b.out->a.b", "a.out->b.in", "t.out->c.a", "d.out->c.b", "c.out->d.in",
     "a.out->after.in", "after.out->o.in", "t.out->bad.in", "bad.out->o2.in"])


def test_every_delay_free_cycle_is_reported_with_the_other_problems():
    found = problems(TWO_CYCLES)
    cyc = {p["node"]: p["message"] for p in found if "cycle without a z^-1" in p["message"]}
    assert set(cyc) == {"a", "b", "c", "d"}
    assert cyc["a"].endswith("a -> b -> a") and cyc["b"].endswith("b -> a -> b")
    assert cyc["c"].endswith("c -> d -> c") and cyc["d"].endswith("d -> c -> d")
    rest = [p for p in found if p["node"] not in cyc]
    # the bad predicate elsewhere is reported; 'after' (fed by a cycle) is not judged
    assert [(p["node"], p["param"]) for p in rest] == [("bad", "predicate")]
    assert "unknown column 'nope'" in rest[0]["message"]


def test_a_component_with_several_cycles_is_reported_once_per_node():
    # top -> b -> mid -> top and top -> c -> mid -> top: one component; s loops on itself
    doc = circuit({"t": schema("k:bigint")},
                  [("top", "union", {}), ("b", "filter", {"predicate": "TRUE"}), ("c", "filter", {"predicate": "TRUE"}),
                   ("mid", "union", {}), ("s", "union", {}), ("o", "output", {}), ("o2", "output", {})],
                  ["t.out->top.a", "mid.out->top.b", "top.out->b.in", "top.out->c.in", "b.out->mid.a", "c.out->mid.b",
                   "top.out->o.in", "t.out->s.a", "s.out->s.b", "s.out->o2.in"])
    found = problems(doc)
    nodes = [p["node"] for p in found]
    assert sorted(nodes) == ["b", "c", "mid", "s", "top"]  # each node once
    by_node = {p["node"]: p["message"] for p in found}
    assert "b -> mid -> top -> b" in by_node["b"] and "also runs through c" in by_node["b"]
    assert "c -> mid -> top -> c" in by_node["c"] and "also runs through b" in by_node["c"]
    assert "top -> b -> mid -> top" in by_node["top"] and "also runs through c" in by_node["top"]
    assert by_node["s"].endswith("s -> s")  # a self-loop


def test_param_errors_are_reported_alongside_an_edge_error():
    doc = circuit({"t": schema("k:bigint")}, [("f", "filter", {"predicate": "zz > 1"}), ("o", "output", {}), ("o2", "output", {})],
                  ["t.out->f.in", "f.out->o.in", "f.oops->o2.in"])
    found = problems(doc)
    assert [(p["node"], p.get("port"), p.get("param")) for p in found] == [("f", "oops", None), ("f", None, "predicate")]
    assert "has no output port 'oops'" in found[0]["message"]
    assert "unknown column 'zz'" in found[1]["message"]
    doc["edges"].append({"from": {"node": "t", "port": "out"}, "to": {"node": "f", "port": "extra"}})
    found = problems(doc)
    assert {(p["node"], p.get("port"), p.get("param")) for p in found} == {("f", "oops", None), ("f", "extra", None), ("f", None, "predicate")}


def test_an_unknown_operator_on_a_loop_is_not_called_a_delay_free_cycle():
    doc = circuit({"t": schema("k:bigint")}, [("u", "union", {}), ("z", "dealy", {}), ("o", "output", {})],
                  ["t.out->u.a", "z.out->u.b", "u.out->z.in", "u.out->o.in"])
    [p] = problems(doc)
    assert p["node"] == "z" and "unknown operator 'dealy'" in p["message"]
