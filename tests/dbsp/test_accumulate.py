"""Per-group accumulators (count/sum/avg) in their two paths: small changes probe and
write the overlay, large ones join whole columns with the base; the overlay is folded
into the base along the way. Every tick equals the reference, NULL keys included, and
the state holds exactly the groups that still have rows."""
import copy
import random

import pytest

from dbsp import ZSet, compile_plan
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from dbsp.spark import accumulate, probe
from tests.dbsp.helpers import circuit, schema

DOCUMENT = circuit(
    {"t": schema("k:bigint", "g:string", "v:bigint", "x:double")},
    [("agg", "aggregate", {"group_by": ["k", "g"], "aggregates": [
        {"fn": "count", "as": "n"}, {"fn": "sum", "expr": "v", "as": "total"}, {"fn": "avg", "expr": "x", "as": "mean"},
        {"fn": "count", "expr": "x", "as": "xs"}, {"fn": "sum", "expr": "v * 2 + 1", "as": "odd"}]}),
     ("out", "output", {})],
    ["t.out->agg.in", "agg.out->out.in"],
)


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def ticks(seed: int, n: int):
    """Random ticks, some of one or two rows (the overlay path), some of many (whole
    columns); deletes of earlier rows so groups empty out and come back."""
    rnd, live, out = random.Random(seed), [], []
    for i in range(n):
        size = rnd.choice([1, 2, 40, 150])
        records = []
        for _ in range(size):
            if live and rnd.random() < 0.35:
                records.append({"delete": live.pop(rnd.randrange(len(live)))})
            else:
                row = {"k": rnd.choice([*range(1, 13), None]), "g": rnd.choice(["a", "b", None]), "v": rnd.randint(-5, 5),
                       "x": rnd.choice([0.5, 1.25, None])}
                live.append(row)
                records.append({"insert": row})
        out.append(records)
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("keys", [["k", "g"], ["k"]])
def test_small_and_large_changes_with_folds_equal_the_reference(spark, monkeypatch, seed, keys):
    from dbsp.spark import SparkRuntime

    monkeypatch.setattr(accumulate, "FOLD_AT", 3)  # fold the overlay often
    monkeypatch.setattr(probe, "MIN_ROWS", 1)  # one bigint key: the base is probed by binary search
    calls = {"whole columns": 0, "probe of the base": 0, "fold": 0}

    def spy(name, method):
        def wrapped(self, *args):
            calls[name] += 1
            return method(self, *args)
        return wrapped

    cls = accumulate.LinearAggregateDelta
    monkeypatch.setattr(cls, "_whole_columns", spy("whole columns", cls._whole_columns))
    monkeypatch.setattr(cls, "fold", spy("fold", cls.fold))
    real_old = cls._old

    def old(self, keys):
        if self.base is not None and any(k not in self.acc for k in keys):
            calls["probe of the base"] += 1
        return real_old(self, keys)

    monkeypatch.setattr(cls, "_old", old)
    document = copy.deepcopy(DOCUMENT)
    document["nodes"][1]["params"]["group_by"] = keys
    plan = compile_plan(document)
    fast, oracle = SparkRuntime(plan, spark, driver_max_rows=4), ReferenceRuntime(plan)
    table = ZSet()
    for t, records in enumerate(ticks(seed, 30)):
        change = {"t": changes_from_records(records, plan.inputs["t"])}
        table = table + change["t"]
        executor = fast.executors["agg"]
        got, want = fast.step(change), oracle.step(change)
        assert got.outputs["out"] == want.outputs["out"], f"tick {t}"
        weights = {}
        for row, w in table:
            weights[row[:len(keys)]] = weights.get(row[:len(keys)], 0) + w
        assert executor.state_rows() == sum(1 for w in weights.values() if w), f"tick {t}: groups kept"
    assert all(calls.values()), calls  # every path was taken
    executor.fold()
    assert executor.state_rows() == executor.base.num_rows
