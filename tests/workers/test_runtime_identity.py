"""A worker's runtimes are kept by run id; a run that reuses the id of one the process
still holds (a database rebuilt under a live worker, as between tests) must get a
runtime of its own circuit, not the old run's (seen: a transactions run failing its
first tick with KeyError 'transactions' in another circuit's runtime)."""
import pytest

from circuits import services
from runs.models import Run
from tests.conftest import example
from workers import engines

pytestmark = pytest.mark.django_db


def test_a_new_run_with_a_held_runs_id_gets_its_own_runtime(django_user_model):
    alice = django_user_model.objects.create_user("alice", password="x")
    orders = services.create_circuit(alice, "orders", "", "private", example("big_orders"))
    transactions = services.create_circuit(alice, "tx", "", "private", example("transactions"))
    first = Run.objects.create(circuit=orders, version=orders.latest_version, created_by=alice)
    held = engines.runtime_for(first)
    assert set(held.plan.inputs) == {"orders"}
    run_id = first.pk
    first.delete()  # the database forgets it; this process still holds its runtime
    second = Run.objects.create(pk=run_id, circuit=transactions, version=transactions.latest_version, created_by=alice)
    try:
        rt = engines.runtime_for(second)
        assert set(rt.plan.inputs) == {"transactions"}
        assert engines.runtime_for(second) is rt  # and kept for the run's next ticks
    finally:
        engines.release(run_id)
