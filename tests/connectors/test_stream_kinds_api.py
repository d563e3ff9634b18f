"""Declaring the stream kinds (Redis, NATS, MQTT, generator): each takes its options
(nothing is opened at declaration), and a bad option is a 400 naming it."""
import pytest

pytestmark = pytest.mark.django_db

GOOD = [
    ("redis_source", "orders", {"url": "redis://r:6379/0", "stream": "s", "field": "v", "start": "latest", "format": "json"}),
    ("redis_sink", "big_orders", {"url": "redis://r:6379/0", "stream": "s"}),
    ("nats_source", "orders", {"servers": "nats://n:4222", "stream": "S", "subject": "a.>", "start": "earliest"}),
    ("nats_sink", "big_orders", {"servers": "nats://n:4222", "subject": "a.b", "stream": "S"}),
    ("mqtt_source", "orders", {"host": "m", "port": 8883, "tls": True, "topic": "a/#", "client_id": "me", "format": "csv"}),
    ("mqtt_sink", "big_orders", {"host": "m", "topic": "a/b"}),
    ("generator_source", "orders", {"rate": 2.5, "limit": 10, "seed": 3}),
    ("generator_source", "orders", {}),
]

BAD = [
    ("redis_source", "orders", {"url": "redis://r", "stream": "s", "start": "now"}, "start must be one of earliest, latest"),
    ("redis_source", "orders", {"url": "redis://r"}, "stream is required"),
    ("redis_sink", "big_orders", {"url": "redis://r", "stream": "s", "format": "json"}, "unknown option 'format' for redis_sink"),
    ("nats_source", "orders", {"servers": "nats://n", "stream": "S", "start": 5}, "start must be one of earliest, latest"),
    ("nats_sink", "orders", {"servers": "nats://n", "subject": "a"}, "a sink receives an output view"),
    ("mqtt_source", "orders", {"host": "m", "topic": "t", "port": 70000}, "port: an integer from 1 to 65535"),
    ("mqtt_source", "orders", {"host": "m", "topic": "t", "format": "avro"}, "format must be one of insert_delete, debezium, json, csv"),
    ("mqtt_sink", "big_orders", {"host": "m", "topic": "t", "tls": "yes"}, "tls: true or false"),
    ("generator_source", "orders", {"rate": -1}, "rate: rows per second"),
]


@pytest.mark.parametrize("kind, node, config", GOOD)
def test_each_kind_is_declared_with_its_options(held_run, client_for, kind, node, config):
    r = client_for(held_run.owner).post(f"/api/runs/{held_run.pk}/connectors/",
                                        {"name": "c", "kind": kind, "node": node, "config": config}, format="json")
    assert r.status_code == 201, r.content
    assert r.json()["kind"] == kind and r.json()["config"] == config


@pytest.mark.parametrize("kind, node, config, message", BAD)
def test_a_bad_option_is_refused_naming_it(held_run, client_for, kind, node, config, message):
    r = client_for(held_run.owner).post(f"/api/runs/{held_run.pk}/connectors/",
                                        {"name": "c", "kind": kind, "node": node, "config": config}, format="json")
    assert r.status_code == 400 and message in str(r.json()), r.content
