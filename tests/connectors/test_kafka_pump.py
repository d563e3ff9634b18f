"""Kafka connectors against a real Kafka protocol (librdkafka's mock cluster), pumped as
the run's lease holder pumps them: a source's records are logged exactly once with its
position (a new pump, as after a crash, resumes there; a pump whose lease was taken
pushes nothing), a bad record fails the connector naming its position and column and
stores nothing, and a sink writes each tick once, even when the database forgot that it
did (a crash between the Kafka commit and the database's)."""
import json
import uuid

import pytest

from connectors.models import Connector
from connectors.pump import Pump
from runs.models import Push, TickOutput
from tests.connectors.conftest import declare, fail_the_first_push, order, pump_until, pushed_rows
from workers.models import RunLease

pytestmark = pytest.mark.django_db(transaction=True)


def test_kafka_source_logs_each_record_once_with_its_position(kafka, held_run, client_for):
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    kafka.produce(topic, [{"insert": order(i)} for i in range(30)])
    source = declare(client_for, held_run, name="orders-in", kind="kafka_source", node="orders",
                     config={"bootstrap_servers": kafka.bootstrap, "topic": topic, "format": "insert_delete"})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 30, "30 records")
    source.refresh_from_db()
    assert sorted(r["id"] for r, _ in pushed_rows(held_run)) == list(range(30))
    assert sum(source.position["offsets"].values()) == 30  # the next offset of each partition

    # A new pump (the worker restarted) resumes from the stored offsets: only new records.
    kafka.produce(topic, [{"insert": order(i)} for i in range(30, 40)] + [{"delete": order(3)}])
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).records_in >= 41, "41 records")
    assert Connector.objects.get(pk=source.pk).records_in == 41
    rows = pushed_rows(held_run)
    assert sorted(r["id"] for r, w in rows if w > 0) == list(range(40))
    assert [r for r, w in rows if w < 0] == [order(3)]

    # The lease was taken over (another worker, a higher epoch): the old pump pushes nothing.
    RunLease.objects.filter(run=held_run).update(worker="someone-else:1", epoch=held_run.epoch + 1)
    kafka.produce(topic, [{"insert": order(i)} for i in range(40, 45)])
    before = (Push.objects.filter(run=held_run).count(), Connector.objects.get(pk=source.pk).position)
    from workers.leases import LeaseLost
    for _ in range(20):
        try:
            pump.pump_run(held_run, held_run.epoch, held_run.fence)
        except LeaseLost:
            break
    else:
        pytest.fail("the old pump never tried to push the new records")
    assert (Push.objects.filter(run=held_run).count(), Connector.objects.get(pk=source.pk).position) == before


@pytest.mark.parametrize("value, message", [
    (json.dumps({"insert": order(1, amount="many")}), "column 'amount': expected an integer (bigint), got 'many'"),
    (json.dumps({"insert": {"id": None, "customer": "x", "amount": 1}}), "column 'id': null in a non-null column"),
    (json.dumps({"insert": {"id": 1, "colour": "red"}}), "column 'colour': unknown column 'colour' (columns: id, customer, amount)"),
    ('{"insert": {"id": 1', "not JSON: Expecting ',' delimiter at line 1 column 20"),
])
def test_a_bad_record_fails_the_source_naming_its_position_and_column(kafka, held_run, client_for, value, message):
    topic = f"bad-{uuid.uuid4().hex[:8]}"
    kafka.produce(topic, [json.dumps({"insert": order(0)}), json.dumps({"insert": order(1)}), value], partition=0)
    source = declare(client_for, held_run, name="orders-in", kind="kafka_source", node="orders",
                     config={"bootstrap_servers": kafka.bootstrap, "topic": topic})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the source to fail")
    status = client_for(held_run.owner).get(f"/api/runs/{held_run.pk}/connectors/orders-in/").json()
    assert status["state"] == "failed"
    assert status["last_error"].startswith(f"connector 'orders-in' (kafka_source) at {topic}[0]@2")
    assert status["last_error"].endswith(message), status["last_error"]
    assert status["error_at"] and status["records_in"] == 0
    assert not Push.objects.filter(run=held_run).exists()  # nothing of the batch


@pytest.mark.parametrize("value, message", [
    (json.dumps({"insert": order(3, amount=1.5)}), "column 'amount': expected an integer (bigint), got 1.5"),
    ('{"insert": {"id": 3, "customer": "x", "amount": NaN}}', "column 'amount': expected an integer (bigint), got nan"),
    (json.dumps([{"insert": order(3)}, {"insert": {"id": "3"}}]), "column 'id': expected an integer (bigint), got '3'"),
])
def test_a_bad_record_among_many_partitions_is_named_at_its_own(kafka, held_run, client_for, value, message):
    """A poll's messages decoded at once (the fast path) or one by one (NaN is not JSON to
    the fast path; an array is two records): the error names the bad message's partition
    and offset all the same, and nothing of the batch is stored."""
    topic = f"bad-{uuid.uuid4().hex[:8]}"
    kafka.produce(topic, [json.dumps({"insert": order(i)}) for i in range(10, 20)], partition=0)
    kafka.produce(topic, [json.dumps({"insert": order(i)}) for i in range(3)] + [value], partition=1)
    source = declare(client_for, held_run, name="orders-in", kind="kafka_source", node="orders",
                     config={"bootstrap_servers": kafka.bootstrap, "topic": topic})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the source to fail")
    error = Connector.objects.get(pk=source.pk).last_error
    assert error.startswith(f"connector 'orders-in' (kafka_source) at {topic}[1]@3"), error
    assert error.endswith(message), error
    assert not Push.objects.filter(run=held_run).exists()


def test_arrays_and_single_records_mixed_are_all_logged(kafka, held_run, client_for):
    topic = f"mixed-{uuid.uuid4().hex[:8]}"
    values = [json.dumps({"insert": order(i)}) for i in range(20)]
    values[5] = json.dumps([{"insert": order(5)}, {"insert": order(20)}, {"delete": order(5)}])
    kafka.produce(topic, values, partition=0)
    source = declare(client_for, held_run, name="orders-in", kind="kafka_source", node="orders",
                     config={"bootstrap_servers": kafka.bootstrap, "topic": topic})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 22, "22 records")
    rows = pushed_rows(held_run)
    assert sorted(r["id"] for r, w in rows if w > 0) == [i for i in range(21) if i != 5]
    assert Connector.objects.get(pk=source.pk).position["offsets"]["0"] == 20


def test_kafka_sink_writes_each_tick_once_in_a_transaction(kafka, held_run, client_for):
    topic = f"big-{uuid.uuid4().hex[:8]}"
    ticks = {0: [(order(1, 150), 1), (order(2, 200), 1)], 1: [], 2: [(order(1, 150), -1)], 3: [(order(9, 101), 2)]}
    for tick, rows in ticks.items():
        TickOutput.objects.create(run=held_run, tick=tick, deltas={"big_orders": [{"data": d, "weight": w} for d, w in rows]})
    sink = declare(client_for, held_run, name="big-out", kind="kafka_sink", node="big_orders",
                   config={"bootstrap_servers": kafka.bootstrap, "topic": topic})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 3, "tick 3 written")

    def expected():
        return sorted((tick, json.dumps({("insert" if w > 0 else "delete"): d}, separators=(",", ":"), sort_keys=True).encode())
                      for tick, rows in ticks.items() for d, w in rows for _ in range(abs(w)))

    assert sorted(kafka.read_committed(topic)) == expected()
    # The database forgot (a crash after Kafka committed): a new writer reads the topic's last tick first.
    Connector.objects.filter(pk=sink.pk).update(last_tick=-1)
    ticks[4] = [(order(5, 500), 1)]
    TickOutput.objects.create(run=held_run, tick=4, deltas={"big_orders": [{"data": order(5, 500), "weight": 1}]})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 4, "tick 4 written")
    assert sorted(kafka.read_committed(topic)) == expected()


def test_a_push_that_fails_to_commit_is_read_again(kafka, held_run, client_for):
    """The consumer read past the stored position and the push did not commit (here its
    fence raises, as when the database goes away): the same pump must not skip those records."""
    topic = f"again-{uuid.uuid4().hex[:8]}"
    kafka.produce(topic, [{"insert": order(i)} for i in range(10)], partition=0)
    source = declare(client_for, held_run, name="orders-in", kind="kafka_source", node="orders",
                     config={"bootstrap_servers": kafka.bootstrap, "topic": topic})
    pump = Pump()
    fail_the_first_push(pump, held_run)
    kafka.produce(topic, [{"insert": order(i)} for i in range(10, 12)], partition=0)
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).position["offsets"]["0"] == 12,
               "the end of the topic")
    assert [r["id"] for r, _ in pushed_rows(held_run)] == list(range(12))
