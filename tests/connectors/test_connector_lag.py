"""A connector's lag (how far behind its source's end it is, as its client knows it,
stored with its position) and rows/s, in its status and in /metrics: files left, Kafka's
high watermarks less the offsets, a Redis stream's entries after the id, NATS's pending
messages; a sink's ticks behind. Each read while the source is behind (a small
max_batch), then at its end."""
import json
import time
import uuid

import pytest
import redis
from django.test import override_settings
from prometheus_client.parser import text_string_to_metric_families

from connectors.models import Connector
from connectors.pump import Pump
from connectors.rates import RATE_WINDOW, rows_per_second, sampled
from tests.connectors.conftest import declare, order, pump_until
from tests.connectors.test_nats_pump import new_stream, publish

pytestmark = pytest.mark.django_db(transaction=True)


def one_push_then_the_end(held_run, source, total):
    """(lag, unit) after the first push of `max_batch` records, then after the last one."""
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in > 0, "the first push")
    first = Connector.objects.get(pk=source.pk)
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == total, "every record")
    pump.pump_run(held_run, held_run.epoch, held_run.fence)  # an idle step after the end
    end = Connector.objects.get(pk=source.pk)
    return (first.records_in, first.lag, first.lag_unit), (end.lag, end.lag_unit)


def test_files_left(tmp_path, held_run, client_for):
    for n in range(3):
        (tmp_path / f"{n:03d}.csv").write_text("id,customer,amount\n" + "".join(f"{i},c,{i}\n" for i in range(n * 4, n * 4 + 4)))
    source = declare(client_for, held_run, name="drop", kind="file_source", node="orders",
                     config={"path": str(tmp_path), "max_batch": 4})
    first, end = one_push_then_the_end(held_run, source, 12)
    assert first == (4, 2, "files") and end == (0, "files")


def test_kafka_records_behind(kafka, held_run, client_for):
    topic = f"lag-{uuid.uuid4().hex[:8]}"
    kafka.produce(topic, [{"insert": order(i)} for i in range(30)])
    source = declare(client_for, held_run, name="k", kind="kafka_source", node="orders",
                     config={"bootstrap_servers": kafka.bootstrap, "topic": topic, "max_batch": 10})
    (pushed, lag, unit), end = one_push_then_the_end(held_run, source, 30)
    assert (lag, unit) == (30 - pushed, "records")
    assert end == (0, "records")


def test_redis_entries_behind(redis_server, held_run, client_for):
    r, stream = redis.Redis.from_url(redis_server.url), f"lag-{uuid.uuid4().hex[:8]}"
    for i in range(25):
        r.xadd(stream, {"value": json.dumps({"insert": order(i)})})
    source = declare(client_for, held_run, name="r", kind="redis_source", node="orders",
                     config={"url": redis_server.url, "stream": stream, "max_batch": 10})
    first, end = one_push_then_the_end(held_run, source, 25)
    assert first == (10, 15, "records") and end == (0, "records")


def test_nats_messages_pending(nats_server, held_run, client_for):
    subject = f"lag.{uuid.uuid4().hex[:6]}"
    stream = new_stream(nats_server.url, subject)
    publish(nats_server.url, subject, [{"insert": order(i)} for i in range(25)])
    source = declare(client_for, held_run, name="n", kind="nats_source", node="orders",
                     config={"servers": nats_server.url, "stream": stream, "max_batch": 10})
    first, end = one_push_then_the_end(held_run, source, 25)
    assert first == (10, 15, "records") and end == (0, "records")


def test_postgres_bytes_of_wal_behind(cdc_postgres, held_run, client_for):
    from tests.connectors.test_postgres_pump import caught_up, insert, source_table, sql

    url = cdc_postgres.new_database()
    source_table(url, rows=[(i, "c", i) for i in range(5)])
    source = declare(client_for, held_run, name="pg", kind="postgres_source", node="orders",
                     config={"dsn": url, "table": "shop.orders", "max_batch": 10})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in >= 5, "the snapshot")
    for t in range(3):  # three transactions of a push each
        insert(url, [(100 + 10 * t + i, "bulk", i) for i in range(10)])
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in >= 15, "the first transaction")
    first = Connector.objects.get(pk=source.pk)
    wal_now = sql(url, f"SELECT pg_current_wal_lsn() - '{first.position['lsn']}'::pg_lsn", fetch=True)[0][0]
    assert first.records_in == 15 and first.lag_unit == "bytes" and 0 < first.lag <= wal_now  # the WAL only grows
    pump_until(pump, held_run, caught_up(held_run, url), "the transactions")


def test_rows_per_second_and_metrics(tmp_path, held_run, client_for, django_user_model):
    (tmp_path / "a.csv").write_text("id,customer,amount\n" + "".join(f"{i},c,{i}\n" for i in range(40)))
    source = declare(client_for, held_run, name="drop", kind="file_source", node="orders", config={"path": str(tmp_path)})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 40, "40 records")
    created = Connector.objects.get(pk=source.pk).created_at.timestamp()
    before = time.time()
    status = client_for(held_run.owner).get(f"/api/runs/{held_run.pk}/connectors/drop/").json()
    after = time.time()
    # younger than the window: its records over its age, measured between before and after
    assert 40 / (after - created) - 0.01 <= status["rows_per_second"] <= 40 / (before - created) + 0.01
    with override_settings(METRICS_TOKEN="t0ken-for-the-test"):
        text = client_for(None).get("/metrics", HTTP_AUTHORIZATION="Bearer t0ken-for-the-test").content.decode()
    samples = {(s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k in ("connector", "unit")))): s.value
               for family in text_string_to_metric_families(text) for s in family.samples}
    assert samples[("dbspweb_connector_lag", (("connector", "drop"), ("unit", "files")))] == 0
    assert samples[("dbspweb_connector_dead_letters_total", (("connector", "drop"),))] == 0
    assert samples[("dbspweb_connector_rows_per_second", (("connector", "drop"),))] > 0


def test_the_rate_is_the_window_s_records_over_the_window():
    samples = []
    for t in range(100):  # 10 records a second for 100 s
        samples = sampled(samples, 1000.0 + t, 10 * (t + 1), 10 * t)
    assert len(samples) <= RATE_WINDOW + 2  # bounded
    assert rows_per_second(samples, 1099.0, 1000, since=900.0) == pytest.approx(10.0)
    assert rows_per_second(samples, 1099.0 + RATE_WINDOW / 2, 1000, since=900.0) == pytest.approx(5.0)  # idle for 15 s
    assert rows_per_second(samples, 1099.0 + RATE_WINDOW, 1000, since=900.0) == 0.0
