"""Pushes arriving faster than ticks send one wake-up per run, not one each: a push
claims the run's wake-up in Redis (real Redis) and sends it only when no claimed one is
on its way; the worker releases the claim before it reads the log, so the next push
wakes it again. A claim of a run with the same id but another creation time (an
earlier run, an earlier test) holds back nothing."""
import json

import pytest
import redis
from django.conf import settings
from django.test import override_settings

from circuits import services
from runs import input_log
from runs.models import Run
from tests.conftest import example
from workers import dispatch, ticks

pytestmark = pytest.mark.django_db(transaction=True)
QUEUE = f"{settings.CELERY_TASK_DEFAULT_QUEUE}-wake-test"


@pytest.fixture
def broker():
    client = redis.Redis.from_url(settings.REDIS_URL)
    for key in client.scan_iter(f"{QUEUE}*"):
        client.delete(key)
    yield client
    for key in client.scan_iter(f"{QUEUE}*"):
        client.delete(key)


def wakes(client):
    return [json.loads(m)["headers"]["task"] for m in client.lrange(QUEUE, 0, -1)]


@override_settings(CELERY_TASK_DEFAULT_QUEUE=QUEUE)
def test_pushes_send_one_wake_up_until_a_worker_takes_it(django_user_model, broker, monkeypatch):
    monkeypatch.setattr(ticks, "drain", lambda run_id, epoch: 0)  # the worker's tick loop is not what this is about
    alice = django_user_model.objects.create_user("alice", password="x")
    circuit = services.create_circuit(alice, "c", "", "private", example("big_orders"))
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    for i in range(5):
        input_log.push(Run.objects.get(pk=run.pk), "orders", [{"insert": {"id": i, "customer": "a", "amount": 5}}])
    assert wakes(broker) == ["workers.process_run"]
    ticks.process(run.pk)  # a worker takes it: the claim is released before the log is read
    input_log.push(Run.objects.get(pk=run.pk), "orders", [{"insert": {"id": 9, "customer": "a", "amount": 5}}])
    assert wakes(broker) == ["workers.process_run"] * 2


@override_settings(CELERY_TASK_DEFAULT_QUEUE=QUEUE)
def test_a_claim_belongs_to_one_run_and_expires():
    assert dispatch.claim_wake(7, "2026-01-01T00:00:00+00:00")
    assert not dispatch.claim_wake(7, "2026-01-01T00:00:00+00:00")
    assert dispatch.claim_wake(7, "2026-02-01T00:00:00+00:00")  # another run with the same id
    assert redis.Redis.from_url(settings.REDIS_URL).ttl(f"{QUEUE}:wake:7:2026-01-01T00:00:00+00:00") <= dispatch.WAKE_CLAIM_TTL_S
    dispatch.woken(7, "2026-01-01T00:00:00+00:00")
    assert dispatch.claim_wake(7, "2026-01-01T00:00:00+00:00")
