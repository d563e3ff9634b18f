"""Run leases on the real database: one holder, takeover after expiry with a new epoch,
and fencing: a worker that lost its lease cannot commit a tick."""
from datetime import timedelta

import pytest
from django.db import transaction
from django.test import override_settings
from django.utils import timezone

from circuits import services
from runs.models import Push, Run, TickOutput
from dbsp import compile_plan
from dbsp.reference import ReferenceRuntime
from tests.conftest import example
from workers import engines, identity, leases, ticks
from workers.models import RunLease

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(django_user_model):
    alice = django_user_model.objects.create_user("alice", password="x")
    circuit = services.create_circuit(alice, "c", "", "private", example("big_orders"))
    return Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")


@pytest.fixture
def as_worker(monkeypatch):
    def become(name):
        monkeypatch.setitem(identity._me, "worker", name)
    return become


def expire(run):
    RunLease.objects.filter(run=run).update(expires_at=timezone.now() - timedelta(seconds=1))


def test_one_holder_until_it_expires_then_a_new_epoch(run, as_worker):
    as_worker("a:1")
    assert leases.acquire(run.pk) == 1
    assert leases.acquire(run.pk) == 1  # renewing its own
    as_worker("b:2")
    assert leases.acquire(run.pk) is None
    assert leases.holder(run.pk).worker == "a:1"
    expire(run)
    assert leases.holder(run.pk) is None
    assert leases.acquire(run.pk) == 2
    assert RunLease.objects.get(run=run).worker == "b:2"


def test_fence_refuses_a_worker_whose_lease_was_taken(run, as_worker):
    as_worker("a:1")
    leases.acquire(run.pk)
    expire(run)
    with transaction.atomic():
        leases.fence(run.pk, 1)  # expired but not taken: still ours, renewed
    assert leases.holder(run.pk).worker == "a:1"
    expire(run)
    as_worker("b:2")
    leases.acquire(run.pk)
    as_worker("a:1")
    with pytest.raises(leases.LeaseLost):
        with transaction.atomic():
            leases.fence(run.pk, 1)


def test_release_lets_another_worker_take_the_run_at_once(run, as_worker):
    as_worker("a:1")
    leases.acquire(run.pk)
    leases.release(run.pk)
    as_worker("b:2")
    assert leases.acquire(run.pk) == 2


def test_a_heartbeat_racing_a_release_does_not_revive_the_lease(run, as_worker, monkeypatch):
    """The heartbeat thread reads the clock, then the main thread releases the run (a
    stop), then the heartbeat's renewal runs with the clock it read: the run must stay
    released, not be held for another TTL by a worker that gave it up."""
    as_worker("a:1")
    leases.acquire(run.pk)
    read_before_release = timezone.now()
    leases.release(run.pk)
    monkeypatch.setattr(leases.timezone, "now", lambda: read_before_release)
    leases.renew_mine()
    monkeypatch.undo()
    assert leases.holder(run.pk) is None
    assert RunLease.objects.get(run=run).expires_at <= timezone.now()


@override_settings(LEASE_TTL=30)
def test_heartbeat_renews_only_this_workers_leases(run, as_worker):
    from workers import heartbeat
    from workers.models import WorkerHeartbeat

    as_worker("a:1")
    leases.acquire(run.pk)
    RunLease.objects.filter(run=run).update(expires_at=timezone.now() + timedelta(seconds=1))
    heartbeat.beat()
    assert RunLease.objects.get(run=run).expires_at > timezone.now() + timedelta(seconds=25)
    assert WorkerHeartbeat.objects.get(worker="a:1")
    as_worker("b:2")
    RunLease.objects.filter(run=run).update(expires_at=timezone.now() + timedelta(seconds=1))
    heartbeat.beat()
    assert RunLease.objects.get(run=run).expires_at < timezone.now() + timedelta(seconds=2)


def test_a_tick_computed_by_a_worker_that_lost_its_lease_is_not_committed(run, as_worker, monkeypatch):
    """The engine here is the reference evaluator: this is about the commit, not Spark."""
    plan = compile_plan(run.version.document)
    monkeypatch.setattr(engines, "runtime_for", lambda r: ReferenceRuntime(plan))
    monkeypatch.setattr(ticks, "publish", lambda *a: None)
    Push.objects.create(run=run, sequence=1, input="orders", records=[{"data": {"id": 1, "customer": "a", "amount": 500}, "weight": 1}], row_count=1)
    as_worker("a:1")
    stale_epoch = leases.acquire(run.pk)
    expire(run)
    as_worker("b:2")
    leases.acquire(run.pk)
    as_worker("a:1")
    assert ticks.drain(run.pk, stale_epoch) == 0
    assert not TickOutput.objects.filter(run=run).exists()
    assert Push.objects.get(run=run).applied_tick is None and Run.objects.get(pk=run.pk).current_tick == -1
    as_worker("b:2")
    assert ticks.drain(run.pk, 2) == 1
    assert TickOutput.objects.get(run=run).deltas == {"big_orders": [{"data": {"id": 1, "customer": "a", "amount": 500}, "weight": 1}]}
    assert Run.objects.get(pk=run.pk).worker == "b:2"


def test_a_paused_run_holds_ticks(run, as_worker, monkeypatch):
    plan = compile_plan(run.version.document)
    monkeypatch.setattr(engines, "runtime_for", lambda r: ReferenceRuntime(plan))
    monkeypatch.setattr(ticks, "publish", lambda *a: None)
    Push.objects.create(run=run, sequence=1, input="orders", records=[], row_count=0)
    Run.objects.filter(pk=run.pk).update(status="paused")
    as_worker("a:1")
    assert ticks.drain(run.pk, leases.acquire(run.pk)) == 0
    assert Push.objects.get(run=run).applied_tick is None
