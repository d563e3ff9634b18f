"""A tick's change per input from its pushes (workers/engines.py changes_of), read from
the log as stored (Arrow changes, or the JSON records of older pushes) without parsing
again, equals the row path over all the tick's records in push order: a keyed input
keeps the last record of each key across pushes, an unkeyed one sums weights."""
import pytest

from dbsp import arrow_change, compile_plan
from dbsp.runtime import changes_from_records
from runs.input_log import validated
from runs.models import Push
from tests.conftest import example
from workers.engines import changes_of

KEYED = {"format": "dbspweb.circuit", "version": 1, "nodes": [
    {"id": "stock", "kind": "input", "position": {"x": 0, "y": 0}, "params": {
        "schema": [{"name": "sku", "type": "string"}, {"name": "qty", "type": "bigint"}], "primary_key": ["sku"]}},
    {"id": "all", "kind": "output", "position": {"x": 200, "y": 0}, "params": {}}],
    "edges": [{"from": {"node": "stock", "port": "out"}, "to": {"node": "all", "port": "in"}}]}


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def logged(plan, name, batches, old_form_at=()):
    pushes = []
    for i, records in enumerate(batches):
        table, _ = validated(records, plan.inputs[name], plan.primary_key(name))
        if i in old_form_at:  # a push logged before the Arrow form: JSON records
            pushes.append(Push(input=name, records=arrow_change.records_json(table, plan.inputs[name]), row_count=len(records)))
        else:
            pushes.append(Push(input=name, change=arrow_change.to_ipc(table), row_count=len(records)))
    return pushes


def test_a_keyed_input_keeps_the_last_record_of_each_key_across_pushes():
    plan = compile_plan(KEYED)
    batches = [[{"insert": {"sku": "a", "qty": 1}}, {"insert": {"sku": "b", "qty": 2}}],
               [{"delete": {"sku": "a"}}, {"insert": {"sku": "c", "qty": 3}}],
               [{"insert": {"sku": "b", "qty": 5}}, {"insert": {"sku": "a", "qty": 9}}]]
    want = changes_from_records([r for b in batches for r in b], plan.inputs["stock"], ["sku"])
    for old in ((), (1,)):
        pushes = logged(plan, "stock", batches, old)
        assert changes_of(pushes, plan)["stock"] == want
        assert arrow_change.to_zset(changes_of(pushes, plan, arrow=True)["stock"], plan.inputs["stock"]) == want


def test_an_unkeyed_input_sums_weights_across_pushes():
    plan = compile_plan(example("big_orders"))
    ada = {"id": 1, "customer": "ada", "amount": 250}
    batches = [[{"insert": ada}, {"insert": {"id": 2, "customer": "bob", "amount": 30}}], [{"weight": 2, "data": ada}], [{"delete": ada}]]
    want = changes_from_records([r for b in batches for r in b], plan.inputs["orders"])
    pushes = logged(plan, "orders", batches, (0,))
    assert changes_of(pushes, plan)["orders"] == want
    table = changes_of(pushes, plan, arrow=True)["orders"]  # as concatenated: the backend consolidates
    assert arrow_change.to_zset(table, plan.inputs["orders"]) == want


def test_the_spark_backend_steps_the_logged_tables_as_the_reference_steps_the_rows(spark):
    """Ticks of several pushes each, to a keyed input: the Spark runtime fed the logged
    Arrow tables gives the reference evaluator's outputs fed the row path's Z-sets."""
    from dbsp.reference import ReferenceRuntime
    from dbsp.spark import SparkRuntime

    plan = compile_plan(KEYED)
    ticks = [[[{"insert": {"sku": "a", "qty": 1}}, {"insert": {"sku": "b", "qty": 2}}], [{"insert": {"sku": "a", "qty": 4}}]],
             [[{"delete": {"sku": "a"}}], [{"insert": {"sku": "a", "qty": 7}}, {"delete": {"sku": "b"}}], [{"delete": {"sku": "a"}}]]]
    fast, oracle = SparkRuntime(plan, spark), ReferenceRuntime(plan)
    for batches in ticks:
        pushes = logged(plan, "stock", batches)
        got = fast.step(changes_of(pushes, plan, arrow=True)).outputs_json()
        want = oracle.step({"stock": changes_from_records([r for b in batches for r in b], plan.inputs["stock"], ["sku"])})
        assert got == want.outputs_json()
