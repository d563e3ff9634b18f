"""Recovery replays a relational circuit's applied log as one change: on real Spark,
the ticks after such a replay equal the ticks of a runtime that ran every tick, and
circuits whose tick boundaries matter are replayed tick by tick."""
import json
import random

import pytest

from dbsp import compile_plan
from dbsp.runtime import changes_from_records
from tests.conftest import example
from workers.engines import replay_in_one_step


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def weights(result):
    return {v: sorted(json.dumps(r, sort_keys=True) for r in rows) for v, rows in result.outputs_json().items()}


def transaction_ticks(n, rng):
    rows, ticks = [], []
    for i in range(n):
        tick = [{"insert": {"id": i * 3 + k, "from_acct": rng.randint(1, 5), "to_acct": rng.randint(1, 5),
                            "amount": rng.randint(1, 50)}} for k in range(3)]
        rows.extend(r["insert"] for r in tick)
        if i % 3 == 2:
            tick.append({"delete": rows.pop(rng.randrange(len(rows)))})
        ticks.append({"transactions": tick})
    return ticks


def word_ticks():
    texts = ["the cat sat on the mat", "the dog", "a cat and a dog", "the end"]
    ticks = [{"lines": [{"insert": {"id": i, "text": t}}]} for i, t in enumerate(texts)]
    ticks.append({"lines": [{"delete": {"id": 0, "text": texts[0]}}]})
    return ticks


@pytest.mark.parametrize("circuit, make_ticks", [
    ("transactions", lambda: transaction_ticks(12, random.Random(3))),
    ("word_count", word_ticks),
])
def test_after_a_one_step_replay_every_tick_is_as_if_uninterrupted(spark, circuit, make_ticks):
    from dbsp.spark import SparkRuntime

    plan = compile_plan(example(circuit))
    assert replay_in_one_step(plan)
    ticks = [{name: changes_from_records(records, plan.inputs[name]) for name, records in t.items()} for t in make_ticks()]
    history, future = ticks[:-2], ticks[-2:]
    uninterrupted = SparkRuntime(plan, spark)
    for change in history:
        uninterrupted.step(change)
    recovered = SparkRuntime(plan, spark)
    merged = {}
    for change in history:
        for name, z in change.items():
            merged[name] = merged.get(name) + z if name in merged else z
    recovered.step(merged)
    recovered.tick = uninterrupted.tick
    for change in future:
        expected, got = uninterrupted.step(change), recovered.step(change)
        assert weights(got) == weights(expected)
        assert got.tick == expected.tick and got.frontier == expected.frontier


def test_circuits_with_primitives_replay_tick_by_tick():
    doc = example("big_orders")
    assert replay_in_one_step(compile_plan(doc))
    doc["nodes"].insert(2, {"id": "later", "kind": "delay", "params": {}})
    doc["edges"][1] = {"from": {"node": "big", "port": "out"}, "to": {"node": "later", "port": "in"}}
    doc["edges"].append({"from": {"node": "later", "port": "out"}, "to": {"node": "big_orders", "port": "in"}})
    assert not replay_in_one_step(compile_plan(doc))
