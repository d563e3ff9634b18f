"""The tick loop: apply a run's pending pushes in input-log order, one tick at a time.

A Redis lock makes one worker at a time own a run's tick loop. Each tick's output
deltas, frontier and stats, the pushes' applied marks and the run's current tick are
committed in one transaction; only after the commit is the tick published.
"""
from __future__ import annotations

import logging
import os
import socket

import redis
from django.conf import settings
from django.db import transaction

from circuits.consumers import delta_message
from circuits.models import Push, Run, RunStatus, TickOutput

from . import engines
from .broadcast import publish, publish_status

log = logging.getLogger(__name__)
WORKER_ID = f"{socket.gethostname()}:{os.getpid()}"


def _redis():
    return redis.Redis.from_url(settings.REDIS_URL)


def process(run_id: int) -> int:
    """Apply every pending push of a running run; returns the number of ticks applied."""
    applied = 0
    lock = _redis().lock(f"dbspweb:run:{run_id}:ticks", timeout=600, blocking_timeout=0)
    while True:
        if not lock.acquire(blocking=False):
            return applied  # another worker owns the loop; it re-checks before letting go
        try:
            applied += _drain(run_id)
        finally:
            lock.release()
        # A push committed after our last look but before the release would have found
        # the lock taken: look once more now that it is free.
        if not _pending(run_id):
            return applied


def _pending(run_id: int) -> bool:
    return Run.objects.filter(pk=run_id, status=RunStatus.RUNNING).exists() and Push.objects.filter(
        run_id=run_id, applied_tick__isnull=True
    ).exists()


def _drain(run_id: int) -> int:
    applied = 0
    while True:
        run = Run.objects.select_related("version").filter(pk=run_id).first()
        if run is None or run.status != RunStatus.RUNNING:
            return applied
        batch = list(Push.objects.filter(run=run, applied_tick__isnull=True).order_by("sequence")[: settings.TICK_MAX_PUSHES])
        if not batch:
            return applied
        try:
            rt = engines.runtime_for(run)
            result = rt.step(engines.changes_of(batch, rt.plan))
        except Exception as e:  # a failing tick fails the run visibly, never silently
            log.exception("run %s: tick failed", run_id)
            engines.release(run_id)
            Run.objects.filter(pk=run_id).update(status=RunStatus.FAILED, error=f"{type(e).__name__}: {e}")
            publish_status(Run.objects.get(pk=run_id))
            return applied
        with transaction.atomic():
            out = TickOutput.objects.create(
                run=run, tick=result.tick, deltas=result.outputs_json(), frontier=result.frontier,
                stats=result.stats, ms=result.ms,
            )
            Push.objects.filter(pk__in=[p.pk for p in batch]).update(applied_tick=result.tick)
            Run.objects.filter(pk=run_id).update(current_tick=result.tick, worker=WORKER_ID)
            message = delta_message(out)
            transaction.on_commit(lambda: publish(run_id, message))
        log.info("run %s tick %s: %d pushes, %.1f ms", run_id, result.tick, len(batch), result.ms)
        applied += 1
