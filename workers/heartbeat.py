"""The worker's heartbeat thread: every DBSPWEB_HEARTBEAT_EVERY seconds it renews the
leases this process holds and its WorkerHeartbeat row. A second thread runs the
sweeper every DBSPWEB_SWEEP_EVERY seconds (it talks to the broker, which may be slow
or down; renewals never wait on it).

Why a thread in the worker process (and not Celery beat): a lease must prove that the
process holding the run's Spark state is alive. A thread of that process dies with it
(`kill -9`, OOM, a lost machine), so its leases expire; a renewal sent from another
process (beat) would keep a dead worker's runs alive. The solo pool's main thread may
be busy in a long tick; the thread keeps renewing meanwhile (py4j and the database
release the GIL). Every worker also sweeps, so there is no singleton to lose: sweeping
is idempotent and cheap.
"""
from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from . import leases
from .identity import own_queue, worker_id
from .models import WorkerHeartbeat

log = logging.getLogger(__name__)
_threads: list[threading.Thread] = []
_stop = threading.Event()


def beat(started_at=None) -> None:
    now = timezone.now()
    WorkerHeartbeat.objects.update_or_create(
        worker=worker_id(), defaults={"queue": own_queue(), "last_seen": now, "started_at": started_at or now}
    )
    leases.renew_mine()


def _heartbeat_loop() -> None:
    started_at = timezone.now()
    while not _stop.is_set():
        try:
            close_old_connections()
            beat(started_at)
        except Exception:  # noqa: BLE001 - the database is away: try again next beat
            log.exception("event=heartbeat_failed worker=%s", worker_id())
        _stop.wait(settings.HEARTBEAT_EVERY)


def _sweep_loop() -> None:
    """Its own thread: a sweep sends to the broker, and a broker that is down may hold a
    send for seconds; lease renewals must never wait on that."""
    from . import dispatch, sweeper

    dispatch.own_connection()
    while not _stop.wait(settings.SWEEP_EVERY):
        try:
            close_old_connections()
            sweeper.sweep()
        except Exception:  # noqa: BLE001 - the database or broker is away: try again next sweep
            log.exception("event=sweep_failed worker=%s", worker_id())


def start() -> None:
    global _threads
    if any(t.is_alive() for t in _threads):
        return
    _stop.clear()
    beat()
    _threads = [threading.Thread(target=_heartbeat_loop, name="dbspweb-heartbeat", daemon=True),
                threading.Thread(target=_sweep_loop, name="dbspweb-sweeper", daemon=True)]
    for thread in _threads:
        thread.start()
    log.info("event=heartbeat_started worker=%s queue=%s every=%.1fs lease_ttl=%.1fs sweep_every=%.1fs", worker_id(),
             own_queue(), settings.HEARTBEAT_EVERY, settings.LEASE_TTL, settings.SWEEP_EVERY)


def stop() -> None:
    """A clean shutdown: stop renewing, give the runs up at once, leave the live set."""
    _stop.set()
    for thread in _threads:
        thread.join(timeout=5)
    leases.release_all()
    WorkerHeartbeat.objects.filter(worker=worker_id()).delete()
