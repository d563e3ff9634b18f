"""Snapshot and restore: a run interrupted at any tick and restored from its snapshot
(in a fresh runtime, as another process would) produces exactly the outputs of a run
that was never interrupted — for the examples (aggregates, joins, recursion, the
primitives), and for random circuits with state both on the driver and in Spark."""
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbsp import compile_plan
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from dbsp.snapshot import SnapshotMismatch
from tests.dbsp.circuits import TICKS, circuits
from tests.dbsp.test_properties import EXAMPLES, MODES

ROOT = Path(__file__).resolve().parents[2] / "examples" / "circuits"


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def _ticks(name):
    return [json.loads(line) for line in (ROOT / f"{name}.pushes.jsonl").read_text().splitlines() if line.strip()]


def _changes(plan, tick):
    return {n: changes_from_records(r, plan.inputs[n], plan.primary_key(n)) for n, r in tick.items()}


def _make(backend, plan, spark, mode):
    if backend == "reference":
        return ReferenceRuntime(plan), {}
    from dbsp.spark import SparkRuntime

    options = {"session": spark, **MODES[mode]}
    return SparkRuntime(plan, **options), options


def interrupted_equals_uninterrupted(document, ticks, cut, tmp_path, backend="spark", spark=None, mode="hybrid"):
    plan = compile_plan(document)
    straight, options = _make(backend, plan, spark, mode)
    expected = [straight.step(_changes(plan, t)).outputs for t in ticks]
    first, _ = _make(backend, plan, spark, mode)
    got = [first.step(_changes(plan, t)).outputs for t in ticks[:cut]]
    first.snapshot(tmp_path)
    first.close()
    cls = type(first)
    resumed = cls.restore(plan, tmp_path, **options)
    assert resumed.tick == cut - 1
    for t in ticks[cut:]:
        result = resumed.step(_changes(plan, t))
        got.append(result.outputs)
    assert got == expected
    assert result.tick == len(ticks) - 1


def _literal():
    """A circuit built from primitives: running sum of the input, and D of it (= the input)."""
    return {"nodes": [
        {"id": "xs", "kind": "input", "params": {"schema": [{"name": "v", "type": "bigint"}]}},
        {"id": "total", "kind": "integrate"}, {"id": "back", "kind": "differentiate"}, {"id": "prev", "kind": "delay"},
        {"id": "sum_view", "kind": "output"}, {"id": "d_view", "kind": "output"}, {"id": "prev_view", "kind": "output"}],
        "edges": [{"from": {"node": a, "port": "out"}, "to": {"node": b, "port": "in"}} for a, b in [
            ("xs", "total"), ("total", "back"), ("total", "prev"), ("total", "sum_view"), ("back", "d_view"), ("prev", "prev_view")]]}


@pytest.mark.parametrize("backend", ["spark", "reference"])
@pytest.mark.parametrize("name", ["transactions", "word_count", "transitive_closure", "not_reachable", "sensor_windows"])
def test_examples_resume_from_a_snapshot(name, backend, tmp_path, request):
    spark = request.getfixturevalue("spark") if backend == "spark" else None
    document = json.loads((ROOT / f"{name}.json").read_text())
    ticks = _ticks(name)
    # every cut on the reference; the middle one on Spark (each Spark run costs seconds)
    for cut in range(1, len(ticks)) if backend == "reference" else [len(ticks) // 2]:
        interrupted_equals_uninterrupted(document, ticks, cut, tmp_path / str(cut), backend, spark)


def test_state_in_spark_levels_resumes(spark, tmp_path):
    """With state spilled to Spark after every tick, the snapshot holds the levels' rows."""
    document = json.loads((ROOT / "transactions.json").read_text())
    interrupted_equals_uninterrupted(document, _ticks("transactions"), 2, tmp_path, "spark", spark, mode="spilling")


@pytest.mark.parametrize("backend", ["spark", "reference"])
def test_primitives_resume(backend, tmp_path, request):
    spark = request.getfixturevalue("spark") if backend == "spark" else None
    ticks = [{"xs": [{"insert": {"v": i}}, {"insert": {"v": 1}}]} for i in range(4)]
    interrupted_equals_uninterrupted(_literal(), ticks, 2, tmp_path, backend, spark)


def test_a_snapshot_of_another_circuit_is_refused(tmp_path):
    plan = compile_plan(json.loads((ROOT / "transactions.json").read_text()))
    ReferenceRuntime(plan).snapshot(tmp_path)
    other = compile_plan(json.loads((ROOT / "word_count.json").read_text()))
    with pytest.raises(SnapshotMismatch, match="different circuit"):
        ReferenceRuntime.restore(other, tmp_path)
    with pytest.raises(SnapshotMismatch, match="cannot read"):
        ReferenceRuntime.restore(plan, tmp_path / "missing")


@pytest.mark.parametrize("mode", ["hybrid", "spilling"])
def test_random_circuits_resume_at_a_random_tick(spark, mode, tmp_path_factory):
    @settings(max_examples=max(2, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(document=circuits(), ticks=TICKS, data=st.data())
    def check(document, ticks, data):
        if len(ticks) < 2:
            return
        cut = data.draw(st.integers(1, len(ticks) - 1))
        interrupted_equals_uninterrupted(document, ticks, cut, tmp_path_factory.mktemp("snap"), "spark", spark, mode)

    check()
