"""Engine snapshots in the worker, on real Spark and the real database: written every
DBSPWEB_SNAPSHOT_EVERY ticks and recorded, the newest kept; a worker taking the run over
restores the newest one, replays the log after it, and continues exactly like an
uninterrupted runtime; a damaged snapshot falls back to replaying the whole log."""
import json
import random

import pytest

from circuits import services
from runs.models import Push, Run
from dbsp import compile_plan
from tests.conftest import example
from workers import engines, leases, snapshots
from workers.models import Snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def weights(result):
    return {v: sorted(json.dumps(r, sort_keys=True) for r in rows) for v, rows in result.outputs_json().items()}


@pytest.fixture
def run_with_history(django_user_model, spark, tmp_path, settings):
    """A transactions run at tick 11 (one push per tick), snapshots written as a worker
    would with DBSPWEB_SNAPSHOT_EVERY=4 and DBSPWEB_SNAPSHOT_KEEP=2."""
    from dbsp.spark import SparkRuntime

    settings.SNAPSHOT_DIR, settings.SNAPSHOT_EVERY, settings.SNAPSHOT_KEEP = tmp_path, 4, 2

    alice = django_user_model.objects.create_user("alice", password="x")
    circuit = services.create_circuit(alice, "t", "", "private", example("transactions"))
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    leases.acquire(run.pk)
    rng, plan = random.Random(9), compile_plan(circuit.latest_version.document)
    live = SparkRuntime(plan, spark)
    for tick in range(12):
        records = [{"data": {"id": tick * 2 + k, "from_acct": rng.randint(1, 4), "to_acct": rng.randint(1, 4),
                             "amount": rng.randint(1, 9)}, "weight": 1} for k in range(2)]
        push = Push.objects.create(run=run, sequence=tick + 1, input="transactions", records=records, row_count=2, applied_tick=tick)
        live.step(engines.changes_of([push], plan))
        if snapshots.due(run.pk, tick, idle=True):
            snapshots.write(run.pk, live, epoch=1)
    Run.objects.filter(pk=run.pk).update(current_tick=11, last_sequence=12)
    return Run.objects.select_related("version").get(pk=run.pk), live, plan


def test_takeover_restores_the_newest_snapshot_and_continues_identically(run_with_history, tmp_path, caplog):
    run, live, plan = run_with_history
    # ticks 3, 7, 11 were due; the newest two are kept, on disk and in the database.
    assert list(Snapshot.objects.filter(run=run).values_list("tick", flat=True)) == [11, 7]
    assert not (tmp_path / f"run-{run.pk}" / "tick-3").exists()
    Snapshot.objects.filter(run=run, tick=11).delete()  # as if tick 11's snapshot was never written
    engines._runtimes.pop(run.pk, None)  # a worker that never held the run
    with caplog.at_level("INFO", logger="workers.engines"):
        restored = engines.runtime_for(run)
    assert "snapshot_tick=7 replayed_ticks=4 replayed_pushes=4" in caplog.text
    assert restored.tick == live.tick == 11
    change = engines.changes_of([Push(input="transactions", records=[
        {"data": {"id": 99, "from_acct": 1, "to_acct": 2, "amount": 5}, "weight": 1}], row_count=1)], plan)
    assert weights(restored.step(change)) == weights(live.step(change))
    engines.release(run.pk)


def test_a_damaged_snapshot_falls_back_to_the_whole_log(run_with_history, tmp_path, caplog):
    run, live, plan = run_with_history
    for snap in Snapshot.objects.filter(run=run):
        (tmp_path / f"run-{run.pk}" / f"tick-{snap.tick}" / "state.pkl").write_bytes(b"not a pickle")
    engines._runtimes.pop(run.pk, None)
    with caplog.at_level("INFO", logger="workers"):
        restored = engines.runtime_for(run)
    assert "event=restore_failed" in caplog.text and "snapshot_tick=none" in caplog.text
    change = engines.changes_of([Push(input="transactions", records=[
        {"data": {"id": 98, "from_acct": 3, "to_acct": 1, "amount": 7}, "weight": 1}], row_count=1)], plan)
    assert weights(restored.step(change)) == weights(live.step(change))
    snapshots.discard(run.pk)
    assert not Snapshot.objects.filter(run=run).exists() and not (tmp_path / f"run-{run.pk}").exists()
    engines.release(run.pk)


def test_snapshots_are_due_when_idle_and_at_most_every_4x_when_busy(django_user_model, settings):
    settings.SNAPSHOT_EVERY = 10
    alice = django_user_model.objects.create_user("bob", password="x")
    circuit = services.create_circuit(alice, "t", "", "private", example("big_orders"))
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    assert not snapshots.due(run.pk, 8, idle=True) and snapshots.due(run.pk, 9, idle=True)
    assert not snapshots.due(run.pk, 38, idle=False) and snapshots.due(run.pk, 39, idle=False)
    Snapshot.objects.create(run=run, tick=9, path="/nowhere")
    assert not snapshots.due(run.pk, 18, idle=True) and snapshots.due(run.pk, 19, idle=True)
    settings.SNAPSHOT_EVERY = 0
    assert not snapshots.due(run.pk, 1000, idle=True)


def test_a_worker_that_lost_the_run_records_no_snapshot(run_with_history, monkeypatch):
    from workers import identity

    run, live, _ = run_with_history
    before = list(Snapshot.objects.filter(run=run).values_list("tick", flat=True))
    monkeypatch.setitem(identity._me, "worker", "someone-else:1")
    assert snapshots.write(run.pk, live, epoch=1) is None
    assert list(Snapshot.objects.filter(run=run).values_list("tick", flat=True)) == before
