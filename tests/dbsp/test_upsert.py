"""Input tables with a primary key: upsert semantics, the same on both backends."""
import pytest

from dbsp import compile_plan, validate
from dbsp.errors import DataInvalid
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from tests.dbsp.helpers import circuit, dele, ins, schema, z

PRICES = schema("sku:string", "price:bigint", "note:string")


def keyed(key=("sku",)):
    return circuit({}, [("prices", "input", {"schema": PRICES, "primary_key": list(key)}),
                        ("total", "aggregate", {"group_by": [], "aggregates": [{"fn": "sum", "expr": "price", "as": "sum"},
                                                                                {"fn": "count", "as": "n"}]}),
                        ("table", "output", {}), ("totals", "output", {})],
                   ["prices.out->table.in", "prices.out->total.in", "total.out->totals.in"])


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


TICKS = [
    # two inserts of one key in one push: the last wins
    [ins(sku="a", price=10, note="x"), ins(sku="b", price=5, note=None), ins(sku="a", price=12, note="y")],
    # an insert whose key exists replaces the row; a delete by key ignores the other values;
    # a delete of an absent key does nothing
    [ins(sku="b", price=6, note=None), dele(sku="a", price=999, note="whatever"), dele(sku="zzz", price=1, note=None)],
    # delete then insert of one key in one push: a replacement; insert then delete: a removal
    [dele(sku="b"), ins(sku="b", price=7, note="new"), ins(sku="c", price=1, note=None), dele(sku="c")],
    # an insert equal to the current row changes nothing
    [ins(sku="b", price=7, note="new")],
]
EXPECTED = [
    z(("a", 12, "y"), ("b", 5, None)),
    z((("b", 5, None), -1), (("b", 6, None), 1), (("a", 12, "y"), -1)),
    z((("b", 6, None), -1), (("b", 7, "new"), 1)),
    z(),
]


@pytest.mark.parametrize("recent_max", [200_000, 1])  # the table on the driver; in Spark levels
def test_upsert_semantics_on_both_backends(spark, recent_max):
    from dbsp.spark import SparkRuntime

    plan = compile_plan(keyed())
    runtimes = [ReferenceRuntime(plan), SparkRuntime(plan, spark, recent_max=recent_max)]
    for tick, (records, expected) in enumerate(zip(TICKS, EXPECTED)):
        change = changes_from_records(records, plan.inputs["prices"], plan.primary_key("prices"))
        results = [rt.step({"prices": change}) for rt in runtimes]
        for result in results:
            assert result.outputs["table"] == expected, f"tick {tick}"
    assert results[0].outputs["totals"] == results[1].outputs["totals"]
    assert runtimes[0].executors["prices"].table == {("b",): ("b", 7, "new")}


def test_key_columns_are_not_null_and_weights_are_one():
    plan = compile_plan(keyed())
    assert plan.schemas["prices"].column("sku").nullable is False
    with pytest.raises(DataInvalid) as err:
        changes_from_records([ins(sku=None, price=1, note=None), ins(sku="a", price=1, note=None)], plan.inputs["prices"], ["sku"])
    assert [(p.row, p.field) for p in err.value.problems] == [(0, "sku")]
    with pytest.raises(DataInvalid) as err:
        changes_from_records([ins(sku="a", price=1, note=None), {"weight": 2, "data": {"sku": "b", "price": 1}}],
                             plan.inputs["prices"], ["sku"])
    assert [(p.row, p.field) for p in err.value.problems] == [(1, "weight")]
    assert "weight 2 on a table with a primary key" in err.value.problems[0].message


def test_an_unordered_change_with_two_inserts_of_a_key_is_rejected_and_changes_nothing():
    plan = compile_plan(keyed())
    rt = ReferenceRuntime(plan)
    rt.step({"prices": changes_from_records([ins(sku="a", price=1, note=None)], plan.inputs["prices"])})
    with pytest.raises(DataInvalid, match="two inserts for primary key"):
        rt.step({"prices": z(("a", 2, None), ("a", 3, None))})
    assert rt.executors["prices"].table == {("a",): ("a", 1, None)}


def test_composite_keys():
    plan = compile_plan(keyed(key=("sku", "note")))
    rt = ReferenceRuntime(plan)
    out = rt.step({"prices": changes_from_records([ins(sku="a", price=1, note="x"), ins(sku="a", price=2, note="y")],
                                                  plan.inputs["prices"], plan.primary_key("prices"))})
    assert out.outputs["table"] == z(("a", 1, "x"), ("a", 2, "y"))


@pytest.mark.parametrize("key,message", [
    (["colour"], "primary_key: unknown column 'colour'"),
    ("sku", "parameter 'primary_key' must be a non-empty list of column names"),
    ([], "parameter 'primary_key' must be a non-empty list of column names"),
    (["sku", "sku"], "primary_key: a column is listed twice"),
])
def test_bad_primary_keys_are_named(key, message):
    doc = keyed()
    doc["nodes"][0]["params"]["primary_key"] = key
    problems = validate(doc)
    assert problems and problems[0].node == "prices" and problems[0].param == "primary_key" and message in problems[0].message
