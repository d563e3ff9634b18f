"""A run of the public big_orders circuit at tick 2, as a worker would have left it
(two pushes, the second not applied yet; three ticks of stored deltas), for the
in-process tests of the run endpoints (tests/live/ runs them with a real worker)."""
import pytest

from runs.models import Push, Run, TickOutput

ADA = {"id": 1, "customer": "ada", "amount": 250}
BOB = {"id": 2, "customer": "bob", "amount": 300}


@pytest.fixture
def run(make_user, circuit_of):
    alice = make_user("alice")
    circuit = circuit_of(alice, "public")
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running", current_tick=2, last_sequence=2)
    Push.objects.create(run=run, sequence=1, input="orders", records=[{"data": ADA, "weight": 1}], row_count=1, applied_tick=0)
    Push.objects.create(run=run, sequence=2, input="orders", records=[{"data": BOB, "weight": 1}], row_count=1)
    TickOutput.objects.create(run=run, tick=0, deltas={"big_orders": [{"data": ADA, "weight": 1}]})
    TickOutput.objects.create(run=run, tick=1, deltas={"big_orders": [{"data": BOB, "weight": 1}]})
    TickOutput.objects.create(run=run, tick=2, deltas={"big_orders": [{"data": ADA, "weight": -1}]})
    return run
