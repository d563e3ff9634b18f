"""List columns (array<T>): pushes, flat_map's explode, the list functions, lists as
keys, and what validation refuses — on the reference, on Spark's driver paths and with
every change forced onto Spark (where a list travels as its JSON text)."""
import json

import pytest

from dbsp import ZSet, compile_plan
from dbsp.errors import DataInvalid
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from dbsp.types import Column, Schema, coerce_value, decode_list, encode_list
from dbsp.validate import validate
from tests.dbsp.helpers import circuit, dele, ins, run, schema


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


ALL_SPARK = {"driver_max_rows": 0, "arrow_max_rows": 0, "recent_max": 0}
ARROW = {"driver_max_rows": 0, "vector_min_rows": 0, "recent_max": 2}
T = schema("id:bigint", "tags:array<string>")


def explode(params=None, cols=T):
    return circuit({"t": cols}, [("op", "flat_map", {"column": "tags", **(params or {})}), ("view", "output", {})],
                   ["t.out->op.in", "op.out->view.in"])


def run_modes(document, ticks, spark):
    """Every tick's outputs (JSON records) on the reference and on Spark in three modes; all must agree."""
    from dbsp.spark import SparkRuntime

    plan = compile_plan(document)
    runtimes = [ReferenceRuntime(plan)] + [SparkRuntime(plan, spark, **mode) for mode in ({}, ARROW, ALL_SPARK)]
    ticks_out = []
    for tick in ticks:
        changes = {n: changes_from_records(r, plan.inputs[n], plan.primary_key(n)) for n, r in tick.items()}
        outs = [rt.step(changes).outputs_json() for rt in runtimes]
        for i, other in enumerate(outs[1:], 1):
            assert other == outs[0], f"runtime {i} differs at tick {len(ticks_out)}"
        ticks_out.append(outs[0])
    return ticks_out


def validate_document(doc) -> list[dict]:
    return [p.as_dict() for p in validate(doc)]


# ---- values -------------------------------------------------------------------------------
def test_a_list_value_is_coerced_element_by_element():
    col = Column("xs", "array<double>")
    assert coerce_value([1, 2.5, None], col) == (1.0, 2.5, None)
    assert coerce_value([], col) == ()
    assert coerce_value(None, col) is None
    with pytest.raises(ValueError, match="element 1: expected a number"):
        coerce_value([1, "two"], col)
    with pytest.raises(ValueError, match="expected a list"):
        coerce_value("1,2", col)
    with pytest.raises(ValueError, match="element 0: nan is not a finite number"):
        coerce_value([float("nan")], col)
    with pytest.raises(ValueError, match="element 0: expected an integer"):
        coerce_value([True], Column("ks", "array<bigint>"))


def test_the_physical_form_is_canonical_json_and_round_trips():
    assert encode_list(("a", None, "é")) == '["a",null,"é"]'
    assert encode_list([1.0, -0.0 + 0.0]) == "[1.0,0.0]"
    assert decode_list('["a",null]') == ("a", None)
    assert decode_list(("a",)) == ("a",) and decode_list(None) is None
    assert encode_list(encode_list(("a",))) == '["a"]'  # already encoded text stays as it is


def test_a_push_with_a_bad_list_names_the_row_column_and_element():
    with pytest.raises(DataInvalid) as e:
        changes_from_records([ins(id=1, tags=["a"]), ins(id=2, tags=["a", 3])], Schema((Column("id", "bigint"), Column("tags", "array<string>"))))
    [problem] = e.value.problems
    assert problem.row == 1 and problem.field == "tags" and "element 1: expected a string" in problem.message


# ---- flat_map explodes a list -------------------------------------------------------------------
def test_flat_map_explodes_a_list_keeping_duplicates_and_null_elements(spark):
    [t0, t1] = run_modes(explode({"as": "tag"}), [
        {"t": [ins(id=1, tags=["a", "b", "a"]), ins(id=2, tags=[None]), ins(id=3, tags=[]), ins(id=4, tags=None)]},
        {"t": [dele(id=1, tags=["a", "b", "a"])]},
    ], spark)
    assert t0["view"] == [{"data": {"id": 1, "tag": "a"}, "weight": 2}, {"data": {"id": 1, "tag": "b"}, "weight": 1},
                          {"data": {"id": 2, "tag": None}, "weight": 1}]
    assert t1["view"] == [{"data": {"id": 1, "tag": "a"}, "weight": -2}, {"data": {"id": 1, "tag": "b"}, "weight": -1}]


@pytest.mark.parametrize("element,values", [("bigint", [3, -9007199254740993]), ("double", [0.5, 1e300]), ("boolean", [True, False])])
def test_flat_map_gives_the_element_type(spark, element, values):
    doc = explode(cols=schema("id:bigint", f"tags:array<{element}>"))
    assert compile_plan(doc).schemas["op"].column("tags").type == element
    [t0] = run_modes(doc, [{"t": [ins(id=1, tags=values)]}], spark)
    assert [r["data"]["tags"] for r in t0["view"]] == sorted(values)


def test_lists_pass_through_and_come_out_as_json_arrays(spark):
    doc = circuit({"t": T}, [("keep", "filter", {"predicate": "cardinality(tags) >= 1"}), ("view", "output", {})],
                  ["t.out->keep.in", "keep.out->view.in"])
    [t0] = run_modes(doc, [{"t": [ins(id=1, tags=["x", None]), ins(id=2, tags=[]), ins(id=3, tags=None)]}], spark)
    assert t0["view"] == [{"data": {"id": 1, "tags": ["x", None]}, "weight": 1}]
    assert json.loads(json.dumps(t0))  # plain JSON all the way


def test_the_list_functions_agree_on_every_path(spark):
    cols = [{"name": "n", "expr": "cardinality(tags)"}, {"name": "has_a", "expr": "array_contains(tags, 'a')"},
            {"name": "last", "expr": "element_at(tags, -1)"}, {"name": "second", "expr": "element_at(tags, 2)"},
            {"name": "zeroth", "expr": "element_at(tags, 0)"}, {"name": "id", "expr": "id"}]
    doc = circuit({"t": T}, [("m", "map", {"columns": cols}), ("view", "output", {})], ["t.out->m.in", "m.out->view.in"])
    [t0] = run_modes(doc, [{"t": [ins(id=1, tags=["a", "b"]), ins(id=2, tags=["b", None]), ins(id=3, tags=[]), ins(id=4, tags=None)]}], spark)
    rows = {r["data"]["id"]: r["data"] for r in t0["view"]}
    assert rows[1] == {"n": 2, "has_a": True, "last": "b", "second": "b", "zeroth": None, "id": 1}
    assert rows[2] == {"n": 2, "has_a": None, "last": None, "second": None, "zeroth": None, "id": 2}  # NULL among the elements: unknown
    assert rows[3] == {"n": 0, "has_a": False, "last": None, "second": None, "zeroth": None, "id": 3}
    assert rows[4] == {"n": None, "has_a": None, "last": None, "second": None, "zeroth": None, "id": 4}


# ---- lists as values of keys and rows -------------------------------------------------------------
def test_lists_group_join_and_distinct_by_value(spark):
    doc = circuit(
        {"a": T, "b": schema("k:bigint", "tags2:array<string>")},
        [("per", "aggregate", {"group_by": ["tags"], "aggregates": [{"fn": "count", "as": "n"}]}), ("groups", "output", {}),
         ("j", "join", {"left_keys": ["tags"], "right_keys": ["tags2"]}), ("joined", "output", {}),
         ("d", "distinct", {}), ("dd", "map", {"columns": [{"name": "tags", "expr": "tags"}]}), ("distinct", "output", {})],
        ["a.out->per.in", "per.out->groups.in", "a.out->j.left", "b.out->j.right", "j.out->joined.in",
         "a.out->dd.in", "dd.out->d.in", "d.out->distinct.in"],
    )
    [t0, t1] = run_modes(doc, [
        {"a": [ins(id=1, tags=["x", None]), ins(id=2, tags=["x", None]), ins(id=3, tags=["y"])], "b": [ins(k=9, tags2=["x", None])]},
        {"a": [dele(id=1, tags=["x", None])]},
    ], spark)
    assert t0["groups"] == [{"data": {"tags": ["x", None], "n": 2}, "weight": 1}, {"data": {"tags": ["y"], "n": 1}, "weight": 1}]
    assert {r["data"]["id"] for r in t0["joined"]} == {1, 2}
    assert t0["distinct"] == [{"data": {"tags": ["x", None]}, "weight": 1}, {"data": {"tags": ["y"]}, "weight": 1}]
    assert t1["groups"] == [{"data": {"tags": ["x", None], "n": 1}, "weight": 1}, {"data": {"tags": ["x", None], "n": 2}, "weight": -1}]
    assert t1["distinct"] == []  # one copy of ["x", null] is left


def test_a_left_join_pads_a_list_column_with_null(spark):
    doc = circuit({"a": schema("k:bigint"), "b": schema("k2:bigint", "tags:array<bigint>")},
                  [("lj", "left_join", {"left_keys": ["k"], "right_keys": ["k2"]}), ("view", "output", {})],
                  ["a.out->lj.left", "b.out->lj.right", "lj.out->view.in"])
    [t0, t1] = run_modes(doc, [{"a": [ins(k=1), ins(k=2)], "b": [ins(k2=1, tags=[7, 8])]}, {"b": [dele(k2=1, tags=[7, 8])]}], spark)
    assert t0["view"] == [{"data": {"k": 1, "k2": 1, "tags": [7, 8]}, "weight": 1}, {"data": {"k": 2, "k2": None, "tags": None}, "weight": 1}]
    assert t1["view"] == [{"data": {"k": 1, "k2": 1, "tags": [7, 8]}, "weight": -1}, {"data": {"k": 1, "k2": None, "tags": None}, "weight": 1}]


def test_top_k_breaks_ties_on_a_list_column_the_same_way_everywhere(spark):
    doc = circuit({"t": schema("g:bigint", "tags:array<bigint>")},
                  [("top", "top_k", {"group_by": ["g"], "order_by": [{"column": "g"}], "k": 2}), ("view", "output", {})],
                  ["t.out->top.in", "top.out->view.in"])
    [t0] = run_modes(doc, [{"t": [ins(g=1, tags=[10]), ins(g=1, tags=[2, None]), ins(g=1, tags=None), ins(g=1, tags=[9])]}], spark)
    # NULL first, then '[10]' < '[2,null]' < '[9]' as text (the view lists NULLs last)
    assert [r["data"]["tags"] for r in t0["view"]] == [[10], None]


# ---- what validation refuses ------------------------------------------------------------------------
@pytest.mark.parametrize("node,message", [
    (("op", "flat_map", {"column": "tags", "separator": ","}), "'separator' applies to string columns"),
    (("op", "flat_map", {"column": "id"}), "flat_map explodes a list (array<...>) or splits a string"),
    (("op", "filter", {"predicate": "tags = tags"}), "cannot compare lists"),
    (("op", "filter", {"predicate": "array_contains(tags, 1)"}), "argument 2 must be string"),
    (("op", "map", {"columns": [{"name": "n", "expr": "length(tags)"}]}), "length() argument 1 must be string, got array<string>"),
    (("op", "aggregate", {"group_by": [], "aggregates": [{"fn": "max", "expr": "tags", "as": "m"}]}), "lists (array<string>) have no order"),
    (("op", "top_k", {"group_by": [], "order_by": [{"column": "tags"}], "k": 1}), "column 'tags' is a list"),
])
def test_validation_names_the_node_and_the_reason(node, message):
    doc = circuit({"t": T}, [node, ("view", "output", {})], ["t.out->op.in", "op.out->view.in"])
    problems = validate_document(doc)
    assert any(p["node"] == "op" and message in p["message"] for p in problems), problems


def test_a_list_cannot_be_a_primary_key():
    doc = {"nodes": [{"id": "t", "kind": "input", "params": {"schema": T, "primary_key": ["tags"]}}], "edges": []}
    [problem] = [p for p in validate_document(doc) if p.get("param") == "primary_key"]
    assert problem["node"] == "t" and "column 'tags' is a list" in problem["message"]


def test_an_unknown_element_type_is_refused():
    doc = {"nodes": [{"id": "t", "kind": "input", "params": {"schema": schema("xs:array<date>")}}], "edges": []}
    assert any("unknown type 'array<date>'" in p["message"] for p in validate_document(doc))


def test_the_order_tags_example_on_the_reference_and_spark(spark):
    from tests.conftest import EXAMPLES

    doc = json.loads((EXAMPLES / "order_tags.json").read_text())
    ticks = [json.loads(line) for line in (EXAMPLES / "order_tags.pushes.jsonl").read_text().splitlines()]
    outs = run(doc, ticks, spark)
    tags = ZSet()
    for out in outs:
        tags = tags + out["tag_counts"]
    # after the pushes: order 2 (bob: gift, fragile, gift), 3 (ann: no tags), 4 (cy: NULL tags)
    assert tags == ZSet([(("fragile", 1, 1), 1), (("gift", 2, 1), 1)])
