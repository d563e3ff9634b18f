"""Health checks: the database, Redis (broker and channel layer) and live workers
(WorkerHeartbeat rows renewed within a lease TTL)."""
from __future__ import annotations

import time
from datetime import timedelta

import redis
from django.conf import settings
from django.db import connection
from django.utils import timezone


def _timed(check) -> dict:
    started = time.perf_counter()
    try:
        result = {"ok": True, **(check() or {})}
    except Exception as e:  # noqa: BLE001 - a failing dependency is the answer, not an error
        result = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    result["ms"] = round((time.perf_counter() - started) * 1000, 1)
    return result


def _database() -> dict:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return {"vendor": connection.vendor}


def _redis() -> dict:
    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
    try:
        client.ping()
    finally:
        client.close()
    return {}


def _workers() -> dict:
    from .models import RunLease, WorkerHeartbeat

    now = timezone.now()
    live = list(
        WorkerHeartbeat.objects.filter(last_seen__gt=now - timedelta(seconds=settings.LEASE_TTL)).order_by("worker")
        .values_list("worker", "last_seen")
    )
    if not live:
        raise RuntimeError(f"no worker sent a heartbeat in the last {settings.LEASE_TTL:g} s; start one: celery -A dbspweb worker --pool=solo")
    runs = {w: 0 for w, _ in live}
    for w in RunLease.objects.filter(expires_at__gt=now, worker__in=runs).values_list("worker", flat=True):
        runs[w] += 1
    return {"live": [{"worker": w, "last_seen": seen.isoformat(), "runs": runs[w]} for w, seen in live]}


def check() -> tuple[bool, dict]:
    checks = {"database": _timed(_database), "redis": _timed(_redis), "workers": _timed(_workers)}
    return all(c["ok"] for c in checks.values()), checks
