"""GET /api/health/: the database, Redis and live workers, 200 or 503 with per-check detail."""
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from tests.circuits.conftest import client_for  # noqa: F401 - a fixture
from workers.models import WorkerHeartbeat

pytestmark = pytest.mark.django_db


def beat(worker, seconds_ago=0):
    now = timezone.now() - timedelta(seconds=seconds_ago)
    WorkerHeartbeat.objects.create(worker=worker, queue=f"q.{worker}", started_at=now, last_seen=now)


@override_settings(LEASE_TTL=10)
def test_healthy_with_a_live_worker(client_for):
    beat("w1@host:1")
    beat("w0@host:9", seconds_ago=60)  # dead: not listed
    response = client_for().get("/api/health/")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["checks"]["database"]["ok"] and body["checks"]["redis"]["ok"]
    assert [w["worker"] for w in body["checks"]["workers"]["live"]] == ["w1@host:1"]
    assert all("ms" in c for c in body["checks"].values())


@override_settings(LEASE_TTL=10)
def test_no_live_worker_is_503_saying_what_to_start(client_for):
    beat("w0@host:9", seconds_ago=60)
    response = client_for().get("/api/health/")
    assert response.status_code == 503 and response.json()["status"] == "unavailable"
    workers = response.json()["checks"]["workers"]
    assert workers["ok"] is False and "no worker sent a heartbeat in the last 10 s" in workers["error"]
    assert response.json()["checks"]["database"]["ok"] is True


@override_settings(REDIS_URL="redis://127.0.0.1:1/0")
def test_redis_down_is_503_naming_redis(client_for):
    beat("w1@host:1")
    response = client_for().get("/api/health/")
    assert response.status_code == 503
    redis_check = response.json()["checks"]["redis"]
    assert redis_check["ok"] is False and "ConnectionError" in redis_check["error"]
