"""Verifications (workers/verify.py) on the real database and real Spark: runs ticked by
the real tick loop (workers/ticks.drain) with the Spark engine, then recomputed from
their input log from scratch: with the reference evaluator on the whole tables, tick
by tick (an event-time window: tick boundaries matter), and as a batch Spark query
(large state). A tampered stored output is reported as missing/extra rows.

Slow-ish by nature (~80 s here, ~40 s of it the first test's JVM start and Spark ticks):
each case runs real ticks on Spark, and the batch cases a Spark recomputation."""
import json

import pytest

from circuits import services
from runs import input_log
from runs.models import Run, TickOutput, Verification
from runs.verify import request_verification
from dbsp import compile_plan
from tests.conftest import ROOT, example
from workers import engines, identity, leases, ticks
from workers.verify import from_whole_tables, verify

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quiet(settings, tmp_path, monkeypatch):
    settings.SNAPSHOT_EVERY = 0
    settings.SNAPSHOT_DIR = tmp_path / "snapshots"
    for name in ("publish", "publish_error", "publish_status"):
        monkeypatch.setattr(ticks, name, lambda *a: None)
    monkeypatch.setattr(input_log, "publish_lag", lambda *a: None)
    monkeypatch.setattr("runs.dispatch.wake", lambda run_id: True)
    monkeypatch.setattr("runs.dispatch.verify", lambda verification_id, **_: True)
    monkeypatch.setitem(identity._me, "worker", "a:1")
    yield
    for run_id in engines.held_runs():
        engines.release(run_id)


def ticked_run(user, name, ticks_of_records):
    """A run of an example circuit, each line of pushes applied as one tick on Spark."""
    circuit = services.create_circuit(user, name, "", "private", example(name))
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=user, status="running")
    epoch = leases.acquire(run.pk)
    for pushes in ticks_of_records:
        for input_name, records in pushes.items():
            input_log.push(Run.objects.get(pk=run.pk), input_name, records)
        ticks.drain(run.pk, epoch)
    run.refresh_from_db()
    assert run.current_tick == len(ticks_of_records) - 1 and run.status == "running", run.error
    return run


def checked(run, tick=None):
    v = request_verification(run, tick)
    verify(v.pk)
    v.refresh_from_db()
    assert v.status == "done" and v.progress == 1.0, v.error
    return v


def lines(name):
    return [json.loads(line) for line in (ROOT / "examples" / "circuits" / f"{name}.pushes.jsonl").read_text().splitlines()]


def tamper(run, tick, view):
    """Drop the first row of a view's stored delta at a tick; returns it."""
    out = TickOutput.objects.get(run=run, tick=tick)
    dropped = out.deltas[view].pop(0)
    out.save()
    return dropped


def test_a_relational_run_verifies_and_a_tampered_one_shows_its_rows(django_user_model):
    run = ticked_run(django_user_model.objects.create_user("a"), "transactions", lines("transactions"))
    assert from_whole_tables(compile_plan(run.version.document))
    v = checked(run)
    assert (v.method, v.result) == ("reference", {"ok": True, "views": {}})
    assert checked(run, 0).result["ok"]
    dropped = tamper(run, 1, "balance")
    later = checked(run)
    assert later.result["ok"] is False
    side = "missing" if dropped["weight"] > 0 else "extra"
    assert later.result["views"] == {"balance": {"missing": [], "extra": [], f"{side}": [{**dropped, "weight": abs(dropped["weight"])}],
                                                 "missing_count": int(side == "missing"), "extra_count": int(side == "extra")}}
    assert checked(run, 0).result["ok"]  # tick 0 is still right


def test_a_windowed_run_is_replayed_tick_by_tick(django_user_model):
    run = ticked_run(django_user_model.objects.create_user("w"), "sensor_windows", lines("sensor_windows"))
    assert not from_whole_tables(compile_plan(run.version.document))
    assert checked(run).result == {"ok": True, "views": {}}
    view = next(v for v, rows in TickOutput.objects.get(run=run, tick=0).deltas.items() if rows)
    tamper(run, 0, view)
    result = checked(run).result
    assert not result["ok"] and list(result["views"]) == [view]


@pytest.mark.parametrize("name, view, bogus", [
    ("transactions", "total", {"total": 999}),
    ("transitive_closure", "closure", {"src": 7, "dst": 7}),
])
def test_large_state_is_recomputed_as_a_batch_spark_query(django_user_model, settings, name, view, bogus):
    settings.VERIFY_REFERENCE_MAX_ROWS = 0
    run = ticked_run(django_user_model.objects.create_user("s"), name, lines(name))
    v = checked(run)
    assert (v.method, v.result) == ("spark", {"ok": True, "views": {}})
    out = TickOutput.objects.get(run=run, tick=0)
    out.deltas[view].append({"data": bogus, "weight": 1})
    out.save()
    assert checked(run).result["views"] == {view: {"missing": [], "extra": [{"data": bogus, "weight": 1}],
                                                   "missing_count": 0, "extra_count": 1}}


def test_only_queued_verifications_are_carried_out(django_user_model):
    run = ticked_run(django_user_model.objects.create_user("q"), "big_orders", [{"orders": [{"insert": {"id": 1, "customer": "a", "amount": 500}}]}])
    v = checked(run)
    assert verify(v.pk) is None  # done already: a redelivered task does nothing
    assert Verification.objects.get(pk=v.pk).status == "done"
