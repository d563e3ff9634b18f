"""The tick loop on the real database, with the reference evaluator as the engine (this
is about batching, commits, fencing and logging, not Spark): batches of at most
DBSPWEB_TICK_MAX_PUSHES pushes in log order, a failed commit drops the cached runtime,
`fail` is fenced, `stop` logs `released` only once the lease is free."""
import logging

import pytest
from django.db import OperationalError
from django.test import override_settings

from circuits import services
from runs.models import Push, Run, TickOutput
from dbsp import compile_plan
from dbsp.errors import DataInvalid, Problem
from dbsp.operators.fixedpoint import FixedPointDiverged
from dbsp.reference import ReferenceRuntime
from tests.conftest import example
from workers import engines, identity, leases, ticks
from workers.models import RunLease

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quiet(settings, tmp_path, monkeypatch):
    """No snapshots, nothing published; snapshot files (a stop discards them) under tmp."""
    settings.SNAPSHOT_EVERY = 0
    settings.SNAPSHOT_DIR = tmp_path / "snapshots"
    published = []
    monkeypatch.setattr(ticks, "publish", lambda run_id, message: published.append(message))
    monkeypatch.setattr(ticks, "publish_error", lambda *a: published.append(("error", *a)))
    monkeypatch.setattr(ticks, "publish_status", lambda run: published.append(("status", run.pk)))
    monkeypatch.setitem(identity._me, "worker", "a:1")
    return published


@pytest.fixture
def reference_engine(monkeypatch):
    """engines.runtime_for as in a worker (cached per run, rebuilt by replaying the
    applied log when missing or behind), building reference runtimes instead of Spark's."""
    monkeypatch.setattr(engines, "spark_session", lambda: None)
    monkeypatch.setattr(engines, "SparkRuntime", lambda plan, session: ReferenceRuntime(plan))
    held = []
    yield held
    for run_id in engines.held_runs():
        engines.release(run_id)


def make_run(django_user_model, name="big_orders"):
    alice = django_user_model.objects.create_user("alice", password="x")
    circuit = services.create_circuit(alice, "c", "", "private", example(name))
    return Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")


def log_push(run, input_name, *rows):
    run.refresh_from_db()
    sequence = run.last_sequence + 1
    Run.objects.filter(pk=run.pk).update(last_sequence=sequence)
    return Push.objects.create(run=run, sequence=sequence, input=input_name,
                               records=[{"data": r, "weight": 1} for r in rows], row_count=len(rows))


@override_settings(TICK_MAX_PUSHES=2)
def test_a_tick_takes_at_most_max_pushes_in_log_order(django_user_model, reference_engine, quiet,
                                                      django_capture_on_commit_callbacks):
    run = make_run(django_user_model)
    pushes = [log_push(run, "orders", {"id": i, "customer": f"c{i}", "amount": 100 + i}) for i in range(1, 6)]
    epoch = leases.acquire(run.pk)
    with django_capture_on_commit_callbacks(execute=True):
        assert ticks.drain(run.pk, epoch) == 3
    assert [Push.objects.get(pk=p.pk).applied_tick for p in pushes] == [0, 0, 1, 1, 2]
    ticks_in_order = list(TickOutput.objects.filter(run=run).order_by("tick"))
    assert [[r["data"]["id"] for r in t.deltas["big_orders"]] for t in ticks_in_order] == [[1, 2], [3, 4], [5]]
    assert [t.stats["orders"]["rows_in"] for t in ticks_in_order] == [2, 2, 1]
    assert Run.objects.get(pk=run.pk).current_tick == 2
    # The lag each tick published counts what was still waiting after it.
    assert [m["lag"]["pushes"] for m in quiet if isinstance(m, dict)] == [3, 1, 0]


@override_settings(TICK_MAX_PUSHES=2)
def test_pushes_logged_during_a_tick_go_into_the_next_one(django_user_model, reference_engine, monkeypatch):
    run = make_run(django_user_model)
    first = log_push(run, "orders", {"id": 1, "customer": "a", "amount": 500})
    real_step = ReferenceRuntime.step
    late = []

    def step_while_pushes_arrive(self, changes):
        if not late:  # pushes accepted while tick 0 is computing
            late.extend(log_push(run, "orders", {"id": i, "customer": "b", "amount": 500}) for i in (2, 3, 4))
        return real_step(self, changes)

    monkeypatch.setattr(ReferenceRuntime, "step", step_while_pushes_arrive)
    assert ticks.drain(run.pk, leases.acquire(run.pk)) == 3
    assert Push.objects.get(pk=first.pk).applied_tick == 0
    assert [Push.objects.get(pk=p.pk).applied_tick for p in late] == [1, 1, 2]
    assert [[r["data"]["id"] for r in t.deltas["big_orders"]] for t in TickOutput.objects.filter(run=run).order_by("tick")] \
        == [[1], [2, 3], [4]]


def test_a_commit_failing_for_another_reason_drops_the_runtime(django_user_model, reference_engine, monkeypatch):
    """A "database is locked" at commit: the runtime stepped tick 0, the database did not.
    Kept, it would be reused once the run reaches tick 0 with other pushes (here:
    another worker applied pushes 1 and 2 as tick 0), and tick 1 would count from the
    wrong state."""
    run = make_run(django_user_model, "word_count")
    log_push(run, "lines", {"id": 1, "text": "a"})
    epoch = leases.acquire(run.pk)
    real_fence = leases.fence

    def locked(run_id, epoch):
        raise OperationalError("database is locked")

    monkeypatch.setattr(leases, "fence", locked)
    with pytest.raises(OperationalError):
        ticks.drain(run.pk, epoch)
    monkeypatch.setattr(leases, "fence", real_fence)
    assert not TickOutput.objects.filter(run=run).exists() and Run.objects.get(pk=run.pk).current_tick == -1
    assert run.pk not in engines.held_runs()

    # Meanwhile another worker applied pushes 1 and 2 as tick 0.
    log_push(run, "lines", {"id": 2, "text": "a"})
    Push.objects.filter(run=run).update(applied_tick=0)
    TickOutput.objects.create(run=run, tick=0, deltas={"counts": [{"data": {"word": "a", "n": 2}, "weight": 1}]})
    Run.objects.filter(pk=run.pk).update(current_tick=0)
    log_push(run, "lines", {"id": 3, "text": "a"})
    assert ticks.drain(run.pk, epoch) == 1
    tick1 = TickOutput.objects.get(run=run, tick=1).deltas["counts"]
    assert sorted((r["data"]["n"], r["weight"]) for r in tick1) == [(2, -1), (3, 1)]


def test_fail_is_fenced(django_user_model, quiet):
    run = make_run(django_user_model)
    stale = leases.acquire(run.pk)
    RunLease.objects.filter(run=run).update(worker="b:2", epoch=stale + 1)  # taken over
    ticks.fail(run.pk, 0, RuntimeError("boom"), stale)
    assert Run.objects.get(pk=run.pk).status == "running" and quiet == []
    assert leases.holder(run.pk).worker == "b:2"
    identity._me["worker"] = "b:2"
    ticks.fail(run.pk, 0, RuntimeError("boom"), stale + 1)
    failed = Run.objects.get(pk=run.pk)
    assert failed.status == "failed" and failed.error == "RuntimeError: boom"
    assert quiet == [("error", run.pk, 0, "RuntimeError: boom", None), ("status", run.pk)]
    assert leases.holder(run.pk) is None


def test_a_failing_tick_fails_the_run_naming_the_node(django_user_model, reference_engine, monkeypatch, quiet):
    run = make_run(django_user_model)
    log_push(run, "orders", {"id": 1, "customer": "a", "amount": 500})

    def diverges(self, changes):
        raise FixedPointDiverged("node 'big': no fixed point after 10 iterations (max_iterations)")

    monkeypatch.setattr(ReferenceRuntime, "step", diverges)
    assert ticks.drain(run.pk, leases.acquire(run.pk)) == 0
    assert Run.objects.get(pk=run.pk).status == "failed"
    assert quiet[0] == ("error", run.pk, 0, "FixedPointDiverged: node 'big': no fixed point after 10 iterations (max_iterations)", "big")
    assert run.pk not in engines.held_runs() and leases.holder(run.pk) is None


def test_the_node_an_engine_error_names():
    assert ticks.node_of(FixedPointDiverged("node 'closure': the stream it sums does not reach 0")) == "closure"
    assert ticks.node_of(DataInvalid([Problem("input 'orders': two inserts", node="orders")])) == "orders"
    assert ticks.node_of(DataInvalid([Problem("row 1: bad", row=1)])) is None
    assert ticks.node_of(ArithmeticError("long overflow in node 'big'")) is None
    assert ticks.node_of(RuntimeError("node 'big': not an engine error class")) is None


def test_stop_logs_released_after_releasing_the_lease(django_user_model, caplog, monkeypatch):
    run = make_run(django_user_model)
    engines._runtimes[run.pk] = ReferenceRuntime(compile_plan(run.version.document))
    leases.acquire(run.pk)
    logged_before_release = []
    real_release = leases.release

    def release(run_id, epoch=None):
        logged_before_release.append("event=released" in caplog.text)
        real_release(run_id, epoch)

    monkeypatch.setattr(leases, "release", release)
    with caplog.at_level(logging.INFO, logger="workers.ticks"):
        ticks.stop(run.pk)
    assert logged_before_release == [False]
    assert f"event=released run={run.pk} " in caplog.text
    assert leases.holder(run.pk) is None and run.pk not in engines.held_runs()
