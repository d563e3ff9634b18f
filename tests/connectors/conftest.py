"""A running run of big_orders held by this test process's lease, as a worker holds it,
for the connector pump's tests (tests/live/ runs the pump in real workers)."""
import pytest

from dbsp import arrow_change
from runs.models import Push, Run
from tests.circuits.conftest import circuit_of, client_for, fast_password_hashing  # noqa: F401
from workers import leases


@pytest.fixture
def held_run(make_user, circuit_of):
    alice = make_user("alice")
    circuit = circuit_of(alice, "private")
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    run.epoch = leases.acquire(run.pk)
    run.fence = lambda: leases.fence(run.pk, run.epoch)
    run.owner = alice
    return run


def pushed_rows(run) -> list[tuple[dict, int]]:
    """Every record the input log holds for the run, in log order: (row, weight)."""
    out = []
    for push in Push.objects.filter(run=run).order_by("sequence"):
        table = arrow_change.from_ipc(push.change)
        out += [(r["data"], r["weight"]) for r in arrow_change.records_json(table, arrow_change.input_schema(table.schema))]
    return out


def declare(client_for, run, **body):
    """A connector declared on the run through the REST API, as its owner."""
    from connectors.models import Connector

    r = client_for(run.owner).post(f"/api/runs/{run.pk}/connectors/", body, format="json")
    assert r.status_code == 201, r.content
    return Connector.objects.get(run=run, name=body["name"])


def order(i, amount=None) -> dict:
    """Row i of big_orders' input."""
    return {"id": i, "customer": f"c{i % 7}", "amount": amount if amount is not None else (i * 37) % 300}


def fail_the_first_push(pump, run) -> None:
    """Pump until the first push does not commit (its fence raises, as when the database
    goes away): the 1st fence stores the start position, the 2nd is the push's. Nothing
    is logged; the run's own fence is unchanged, so pumping goes on after."""
    calls = []

    def fence():
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the database went away")
        run.fence()

    with pytest.raises(RuntimeError):
        while len(calls) < 2:
            pump.pump_run(run, run.epoch, fence)
    assert not Push.objects.filter(run=run).exists()


def pump_until(pump, run, done, what, timeout=30):
    import time

    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        if not pump.pump_run(run, run.epoch, run.fence):
            time.sleep(0.05)


def _broker(tmp_path_factory, start):
    broker = start(tmp_path_factory.mktemp(start.__name__))
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """A redis-server of the tests' own on a free port (tests/brokers.py)."""
    from tests.brokers import start_redis

    yield from _broker(tmp_path_factory, start_redis)


@pytest.fixture(scope="session")
def nats_server(tmp_path_factory):
    """A nats-server with JetStream of the tests' own on a free port (tests/brokers.py)."""
    from tests.brokers import start_nats

    yield from _broker(tmp_path_factory, start_nats)


@pytest.fixture(scope="session")
def mqtt_broker(tmp_path_factory):
    """A mosquitto of the tests' own on a free port, with persistence (tests/brokers.py)."""
    from tests.brokers import start_mosquitto

    yield from _broker(tmp_path_factory, start_mosquitto)
