"""Redis Streams connectors against a real redis-server of the tests' own, pumped as the
run's lease holder pumps them: a source logs each entry once with the stream id after it
(a new pump, as after a crash, resumes there: no duplicate, no gap), a bad entry fails
the source naming the entry and the column and stores nothing, and a sink appends each
tick's delta once, also when the database forgot it had (its tick key says so)."""
import json
import uuid

import pytest
import redis

from connectors.models import Connector
from connectors.pump import Pump
from runs.models import Push, TickOutput
from tests.connectors.conftest import declare, fail_the_first_push, order, pump_until, pushed_rows

pytestmark = pytest.mark.django_db(transaction=True)


def add(r, stream, records, field="value"):
    return [r.xadd(stream, {field: json.dumps(record)}).decode() for record in records]


def test_redis_source_logs_each_entry_once_and_resumes_after_the_stored_id(redis_server, held_run, client_for):
    r, stream = redis.Redis.from_url(redis_server.url), f"orders-{uuid.uuid4().hex[:8]}"
    ids = add(r, stream, [{"insert": order(i)} for i in range(25)])
    source = declare(client_for, held_run, name="orders-in", kind="redis_source", node="orders",
                     config={"url": redis_server.url, "stream": stream, "max_batch": 10})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 25, "25 records")
    source.refresh_from_db()
    assert source.position == {"after": ids[-1]}
    assert [p.row_count for p in Push.objects.filter(run=held_run).order_by("sequence")] == [10, 10, 5]

    # A new pump (the worker restarted) reads only the entries after the stored id.
    ids += add(r, stream, [{"insert": order(i)} for i in range(25, 30)] + [{"delete": order(3)}])
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).position == {"after": ids[-1]},
               "the last entry")
    rows = pushed_rows(held_run)
    assert [r["id"] for r, w in rows if w > 0] == list(range(30))  # each once, in stream order
    assert [r for r, w in rows if w < 0] == [order(3)]
    assert Connector.objects.get(pk=source.pk).records_in == 31


def test_a_push_that_fails_to_commit_is_read_again(redis_server, held_run, client_for):
    r, stream = redis.Redis.from_url(redis_server.url), f"again-{uuid.uuid4().hex[:8]}"
    ids = add(r, stream, [{"insert": order(i)} for i in range(6)])
    source = declare(client_for, held_run, name="orders-in", kind="redis_source", node="orders",
                     config={"url": redis_server.url, "stream": stream})
    pump = Pump()
    fail_the_first_push(pump, held_run)
    ids += add(r, stream, [{"insert": order(6)}])
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).position == {"after": ids[-1]}, "the end")
    assert [r["id"] for r, _ in pushed_rows(held_run)] == list(range(7))


@pytest.mark.parametrize("fields, message", [
    ({"value": json.dumps({"insert": order(1, amount="many")})}, "column 'amount': expected an integer (bigint), got 'many'"),
    ({"value": json.dumps({"insert": {"id": 1, "colour": "red"}})}, "column 'colour': unknown column 'colour' (columns: id, customer, amount)"),
    ({"value": '{"insert": {"id": 1'}, "not JSON: Expecting ',' delimiter at line 1 column 20"),
    ({"other": "x"}, "the entry has no field 'value' (fields: other)"),
])
def test_a_bad_entry_fails_the_source_naming_its_id_and_column(redis_server, held_run, client_for, fields, message):
    r, stream = redis.Redis.from_url(redis_server.url), f"bad-{uuid.uuid4().hex[:8]}"
    add(r, stream, [{"insert": order(0)}])
    bad = r.xadd(stream, fields).decode()
    source = declare(client_for, held_run, name="orders-in", kind="redis_source", node="orders",
                     config={"url": redis_server.url, "stream": stream})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the source to fail")
    source.refresh_from_db()
    assert source.last_error.startswith(f"connector 'orders-in' (redis_source) at {stream}@{bad}"), source.last_error
    assert source.last_error.endswith(message), source.last_error
    assert source.records_in == 0 and not Push.objects.filter(run=held_run).exists()


def test_start_latest_skips_what_the_stream_held(redis_server, held_run, client_for):
    r, stream = redis.Redis.from_url(redis_server.url), f"late-{uuid.uuid4().hex[:8]}"
    old = add(r, stream, [{"insert": order(i)} for i in range(3)])
    source = declare(client_for, held_run, name="late", kind="redis_source", node="orders",
                     config={"url": redis_server.url, "stream": stream, "start": "latest", "format": "json"})
    pump = Pump()
    pump.pump_run(held_run, held_run.epoch, held_run.fence)
    assert Connector.objects.get(pk=source.pk).position == {"after": old[-1]}
    new = add(r, stream, [order(7)])
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).position == {"after": new[-1]}, "the new entry")
    assert [r["id"] for r, _ in pushed_rows(held_run)] == [7]


def test_redis_sink_appends_each_tick_once(redis_server, held_run, client_for):
    r, stream = redis.Redis.from_url(redis_server.url), f"big-{uuid.uuid4().hex[:8]}"
    ticks = {0: [(order(1, 150), 1), (order(2, 200), 1)], 1: [], 2: [(order(1, 150), -1)], 3: [(order(9, 101), 2)]}
    for tick, rows in ticks.items():
        TickOutput.objects.create(run=held_run, tick=tick, deltas={"big_orders": [{"data": d, "weight": w} for d, w in rows]})
    sink = declare(client_for, held_run, name="big-out", kind="redis_sink", node="big_orders",
                   config={"url": redis_server.url, "stream": stream})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 3, "tick 3 written")

    def expected():  # the deltas recomputed here: one entry per unit of weight
        return [(tick, {("insert" if w > 0 else "delete"): d}) for tick, rows in ticks.items()
                for d, w in rows for _ in range(abs(w))]

    def written():
        return [(int(f[b"tick"]), json.loads(f[b"value"])) for _, f in r.xrange(stream)]

    assert written() == expected()
    assert r.get(f"{stream}:dbspweb-tick:{held_run.pk}-big-out") == b"3"
    # The database forgot (a crash after the script ran): the sink reads its tick key first.
    Connector.objects.filter(pk=sink.pk).update(last_tick=-1)
    ticks[4] = [(order(5, 500), 1)]
    TickOutput.objects.create(run=held_run, tick=4, deltas={"big_orders": [{"data": order(5, 500), "weight": 1}]})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 4, "tick 4 written")
    assert written() == expected()


def test_a_retried_tick_is_not_written_twice(redis_server, held_run):
    """The sink's own guard, below the pump: writing a tick again adds nothing."""
    from connectors.redis_streams import RedisSink

    stream = f"retry-{uuid.uuid4().hex[:8]}"
    sink = RedisSink({"url": redis_server.url, "stream": stream}, {}, held_run.pk, "s")
    sink.write(5, [(order(1), 1)])
    again = RedisSink({"url": redis_server.url, "stream": stream}, {}, held_run.pk, "s")
    assert again.committed_tick == 5
    again.write(5, [(order(1), 1)])
    again.write(4, [(order(2), 1)])
    assert redis.Redis.from_url(redis_server.url).xlen(stream) == 1
