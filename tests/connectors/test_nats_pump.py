"""NATS JetStream connectors against a real nats-server -js of the tests' own, pumped as
the run's lease holder pumps them: a source logs each message once with the stream
sequence after it (a new pump resumes there: no duplicate, no gap; a push that failed to
commit is read again), a bad message fails the source naming its sequence and column,
and a sink publishes each tick once: a retried tick is dropped by JetStream's duplicate
window, and a new sink reads its last whole tick back from the stream."""
import asyncio
import json
import uuid

import nats
import pytest

from connectors.models import Connector
from connectors.pump import Pump
from runs.models import Push, TickOutput
from tests.connectors.conftest import declare, fail_the_first_push, order, pump_until, pushed_rows

pytestmark = pytest.mark.django_db(transaction=True)


def nats_do(url, work):
    """Runs `work(js, jsm)` on a connection of the test's own; returns its result."""
    async def main():
        nc = await nats.connect(url)
        try:
            return await work(nc.jetstream(), nc.jsm())
        finally:
            await nc.close()

    return asyncio.run(main())


def new_stream(url, *subjects):
    name = f"S{uuid.uuid4().hex[:8]}"

    async def work(js, jsm):
        await jsm.add_stream(name=name, subjects=list(subjects))

    nats_do(url, work)
    return name


def publish(url, subject, values) -> list[int]:
    async def work(js, jsm):
        return [(await js.publish(subject, v if isinstance(v, bytes) else json.dumps(v).encode())).seq for v in values]

    return nats_do(url, work)


def messages(url, stream) -> list:
    """Every message of the stream: (headers, value)."""
    async def work(js, jsm):
        info = await jsm.stream_info(stream)
        out = []
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            m = await jsm.get_msg(stream, seq)
            out.append((m.headers or {}, m.data))
        return out

    return nats_do(url, work)


def test_nats_source_logs_each_message_once_and_resumes_after_the_stored_sequence(nats_server, held_run, client_for):
    subject = f"orders.{uuid.uuid4().hex[:6]}"
    stream = new_stream(nats_server.url, subject)
    seqs = publish(nats_server.url, subject, [{"insert": order(i)} for i in range(25)])
    source = declare(client_for, held_run, name="orders-in", kind="nats_source", node="orders",
                     config={"servers": nats_server.url, "stream": stream, "max_batch": 10})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 25, "25 records")
    assert Connector.objects.get(pk=source.pk).position == {"stream_seq": seqs[-1]}
    assert [p.row_count for p in Push.objects.filter(run=held_run).order_by("sequence")] == [10, 10, 5]

    # A new pump (the worker restarted) reads only the messages after the stored sequence.
    pump.close_all_but(set())
    seqs += publish(nats_server.url, subject, [{"insert": order(i)} for i in range(25, 30)] + [{"delete": order(3)}])
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).position == {"stream_seq": seqs[-1]},
               "the last message")
    pump.close_all_but(set())
    rows = pushed_rows(held_run)
    assert [r["id"] for r, w in rows if w > 0] == list(range(30))
    assert [r for r, w in rows if w < 0] == [order(3)]
    assert Connector.objects.get(pk=source.pk).records_in == 31


def test_a_push_that_fails_to_commit_is_read_again(nats_server, held_run, client_for):
    subject = f"again.{uuid.uuid4().hex[:6]}"
    stream = new_stream(nats_server.url, subject)
    publish(nats_server.url, subject, [{"insert": order(i)} for i in range(6)])
    source = declare(client_for, held_run, name="orders-in", kind="nats_source", node="orders",
                     config={"servers": nats_server.url, "stream": stream, "subject": subject})
    pump = Pump()
    fail_the_first_push(pump, held_run)
    [last] = publish(nats_server.url, subject, [{"insert": order(6)}])
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).position == {"stream_seq": last}, "the end")
    assert [r["id"] for r, _ in pushed_rows(held_run)] == list(range(7))
    pump.close_all_but(set())


@pytest.mark.parametrize("value, message", [
    (json.dumps({"insert": order(1, amount="many")}), "column 'amount': expected an integer (bigint), got 'many'"),
    (json.dumps({"insert": {"id": 1, "colour": "red"}}), "column 'colour': unknown column 'colour' (columns: id, customer, amount)"),
    ('{"insert": {"id": 1', "not JSON: Expecting ',' delimiter at line 1 column 20"),
])
def test_a_bad_message_fails_the_source_naming_its_sequence_and_column(nats_server, held_run, client_for, value, message):
    subject = f"bad.{uuid.uuid4().hex[:6]}"
    stream = new_stream(nats_server.url, subject)
    [_, bad] = publish(nats_server.url, subject, [{"insert": order(0)}, value.encode()])
    source = declare(client_for, held_run, name="orders-in", kind="nats_source", node="orders",
                     config={"servers": nats_server.url, "stream": stream})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the source to fail")
    source.refresh_from_db()
    assert source.last_error.startswith(f"connector 'orders-in' (nats_source) at {stream}#{bad}"), source.last_error
    assert source.last_error.endswith(message), source.last_error
    assert source.records_in == 0 and not Push.objects.filter(run=held_run).exists()


def test_nats_sink_publishes_each_tick_once(nats_server, held_run, client_for):
    subject = f"big.{uuid.uuid4().hex[:6]}"
    stream = new_stream(nats_server.url, subject)
    ticks = {0: [(order(1, 150), 1), (order(2, 200), 1)], 1: [], 2: [(order(1, 150), -1)], 3: [(order(9, 101), 2)]}
    for tick, rows in ticks.items():
        TickOutput.objects.create(run=held_run, tick=tick, deltas={"big_orders": [{"data": d, "weight": w} for d, w in rows]})
    sink = declare(client_for, held_run, name="big-out", kind="nats_sink", node="big_orders",
                   config={"servers": nats_server.url, "subject": subject})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 3, "tick 3 written")
    pump.close_all_but(set())

    def expected():  # the deltas recomputed here: one message per unit of weight
        return [(tick, {("insert" if w > 0 else "delete"): d}) for tick, rows in ticks.items()
                for d, w in rows for _ in range(abs(w))]

    def written():
        return [(int(h["Dbspweb-Tick"]), json.loads(v)) for h, v in messages(nats_server.url, stream)]

    assert written() == expected()
    # The database forgot (a crash after the publish): the new sink reads its last tick from the stream.
    Connector.objects.filter(pk=sink.pk).update(last_tick=-1)
    ticks[4] = [(order(5, 500), 1)]
    TickOutput.objects.create(run=held_run, tick=4, deltas={"big_orders": [{"data": order(5, 500), "weight": 1}]})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 4, "tick 4 written")
    pump.close_all_but(set())
    assert written() == expected()


def test_a_retried_tick_is_not_published_twice(nats_server, held_run):
    """A tick written again (its end was lost, or the database forgot it) within the
    stream's duplicate window adds nothing; a tick cut short counts as not written."""
    from connectors.nats_jetstream import NatsSink

    subject = f"retry.{uuid.uuid4().hex[:6]}"
    stream = new_stream(nats_server.url, subject)
    config = {"servers": nats_server.url, "subject": subject}
    sink = NatsSink(config, {}, "dbspweb-run1-s")
    assert sink.committed_tick == -1
    sink.write(5, [(order(1), 1), (order(2), 1)])
    sink.close()
    again = NatsSink(config, {}, "dbspweb-run1-s")
    assert again.committed_tick == 5
    again.write(5, [(order(1), 1), (order(2), 1)])
    again.close()
    assert [json.loads(v)["insert"]["id"] for _, v in messages(nats_server.url, stream)] == [1, 2]

    # A tick cut short: its first record stored, not its last.
    async def half(js, jsm):
        await js.publish(subject, b'{"insert":{"id":3}}', headers={
            "Nats-Msg-Id": "dbspweb-run1-s-6-0", "Dbspweb-Sink": "dbspweb-run1-s", "Dbspweb-Tick": "6",
            "Dbspweb-Record": "0/2"})

    nats_do(nats_server.url, half)
    third = NatsSink(config, {}, "dbspweb-run1-s")
    assert third.committed_tick == 5  # tick 6 is not whole: it is written again
    third.write(6, [({"id": 3}, 1), ({"id": 4}, 1)])
    third.close()
    assert [json.loads(v)["insert"]["id"] for _, v in messages(nats_server.url, stream)] == [1, 2, 3, 4]


def test_a_source_whose_consumer_went_away_opens_another_from_the_stored_sequence(nats_server, held_run, client_for,
                                                                                   monkeypatch):
    """The server drops an idle consumer (a run paused longer than its inactive threshold):
    the source notices, and a new consumer starts after the stored sequence."""
    from connectors import nats_jetstream

    monkeypatch.setattr(nats_jetstream, "CHECK_EVERY", 0.0)
    subject = f"gone.{uuid.uuid4().hex[:6]}"
    stream = new_stream(nats_server.url, subject)
    publish(nats_server.url, subject, [{"insert": order(1)}])
    source = declare(client_for, held_run, name="orders-in", kind="nats_source", node="orders",
                     config={"servers": nats_server.url, "stream": stream})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 1, "the first record")

    async def drop(js, jsm):
        for consumer in await jsm.consumers_info(stream):
            await jsm.delete_consumer(stream, consumer.name)

    nats_do(nats_server.url, drop)
    [last] = publish(nats_server.url, subject, [{"insert": order(2)}])
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).position == {"stream_seq": last}, "the new record")
    pump.close_all_but(set())
    assert [r["id"] for r, _ in pushed_rows(held_run)] == [1, 2]


def test_start_latest_skips_what_the_stream_held(nats_server, held_run, client_for):
    subject = f"late.{uuid.uuid4().hex[:6]}"
    stream = new_stream(nats_server.url, subject)
    old = publish(nats_server.url, subject, [{"insert": order(i)} for i in range(3)])
    source = declare(client_for, held_run, name="late", kind="nats_source", node="orders",
                     config={"servers": nats_server.url, "stream": stream, "start": "latest", "format": "json"})
    pump = Pump()
    pump.pump_run(held_run, held_run.epoch, held_run.fence)
    assert Connector.objects.get(pk=source.pk).position == {"stream_seq": old[-1]}
    [new] = publish(nats_server.url, subject, [order(7)])
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).position == {"stream_seq": new}, "the new one")
    pump.close_all_but(set())
    assert [r["id"] for r, _ in pushed_rows(held_run)] == [7]
