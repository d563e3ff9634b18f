"""The tick loop: apply a run's pending pushes in input-log order, one tick at a time.

Only the run's lease holder runs it (workers/leases.py). Each tick's output deltas,
frontier and stats, the pushes' applied marks and the run's current tick are committed
in one transaction, which also checks (fencing) that this worker still holds the lease
and that the run is still at the previous tick; only after the commit is the tick
published. Every tick is logged as one key=value line (run, tick, pushes, rows, ms,
lag, worker).
"""
from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import IntegrityError, transaction

from circuits.consumers import delta_message
from circuits.models import Push, Run, RunStatus, TickOutput
from circuits.run_control import lag_of

from . import dispatch, engines, leases, snapshots
from .broadcast import publish, publish_error, publish_status
from .identity import worker_id

log = logging.getLogger("workers.ticks")


class TickConflict(Exception):
    """The database moved under the tick (another writer, a stop): do not commit."""


def process(run_id: int) -> int:
    """Apply every pending push of a running run; returns the number of ticks applied."""
    run = Run.objects.filter(pk=run_id).only("status").first()
    if run is None:
        return 0
    if run.status in (RunStatus.STOPPED, RunStatus.FAILED):
        stop(run_id)
        return 0
    if run.status != RunStatus.RUNNING:
        return 0  # created (start_run does it) or paused (resume wakes it again)
    if leases.holder(run_id) is not None and not Push.objects.filter(run_id=run_id, applied_tick__isnull=True).exists():
        return 0  # a wake-up whose pushes an earlier tick already took: no write, no lock
    epoch = leases.acquire(run_id)
    if epoch is None:
        holder = leases.holder(run_id)
        if holder is not None:  # someone else holds the run: hand the wake-up to them
            dispatch.to_worker(process_task(), run_id, holder.worker)
        return 0
    return drain(run_id, epoch)


def process_task():
    from .tasks import process_run

    return process_run


def stop(run_id: int) -> None:
    """Free what this worker holds for a stopped or failed run."""
    if engines.release(run_id):
        log.info("event=released run=%s worker=%s", run_id, worker_id())
    leases.release(run_id)
    snapshots.discard(run_id)


def drain(run_id: int, epoch: int) -> int:
    applied = 0
    while True:
        run = Run.objects.select_related("version").filter(pk=run_id).first()
        if run is None or run.status in (RunStatus.STOPPED, RunStatus.FAILED):
            stop(run_id)
            return applied
        if run.status != RunStatus.RUNNING:
            return applied  # paused: hold ticks, keep the runtime and the lease
        batch = list(Push.objects.filter(run=run, applied_tick__isnull=True).order_by("sequence")[: settings.TICK_MAX_PUSHES])
        if not batch:
            if applied and snapshots.due(run_id, run.current_tick, idle=True):
                snapshots.write(run_id, engines.runtime_for(run), epoch)
            return applied
        started = time.perf_counter()
        try:
            rt = engines.runtime_for(run)
            result = rt.step(engines.changes_of(batch, rt.plan))
            deltas = result.outputs_json()
        except Exception as e:  # a failing tick fails the run visibly, never silently
            fail(run_id, run.current_tick + 1, e)
            return applied
        try:
            with transaction.atomic():
                leases.fence(run_id, epoch)
                out = TickOutput.objects.create(
                    run=run, tick=result.tick, deltas=deltas, frontier=result.frontier, stats=result.stats, ms=result.ms,
                )
                marked = Push.objects.filter(pk__in=[p.pk for p in batch], applied_tick__isnull=True).update(applied_tick=result.tick)
                moved = Run.objects.filter(
                    pk=run_id, current_tick=result.tick - 1, status__in=[RunStatus.RUNNING, RunStatus.PAUSED]
                ).update(current_tick=result.tick, worker=worker_id())
                if marked != len(batch) or not moved:
                    raise TickConflict(f"run {run_id} tick {result.tick}: the input log or the run changed meanwhile")
                lag = lag_of(run_id)
                message = delta_message(out, lag)
                transaction.on_commit(lambda: publish(run_id, message))
        except (leases.LeaseLost, TickConflict, IntegrityError) as e:
            # Our runtime is a tick ahead of the database: drop it. The lease holder (or
            # a later wake-up of ours) continues from what is committed.
            engines.release(run_id)
            log.warning("event=tick_discarded run=%s tick=%s reason=%r worker=%s", run_id, result.tick, str(e), worker_id())
            return applied
        log.info(
            "event=tick run=%s tick=%s pushes=%d rows=%d ms=%.1f engine_ms=%.1f lag_pushes=%d worker=%s epoch=%d",
            run_id, result.tick, len(batch), sum(p.row_count for p in batch), (time.perf_counter() - started) * 1000,
            result.ms, lag["pushes"], worker_id(), epoch,
        )
        applied += 1
        if snapshots.due(run_id, result.tick, idle=False):
            snapshots.write(run_id, rt, epoch)


def fail(run_id: int, tick: int, error: Exception) -> None:
    text = f"{type(error).__name__}: {error}"
    log.exception("event=tick_failed run=%s tick=%s worker=%s error=%r", run_id, tick, worker_id(), text)
    engines.release(run_id)
    failed = Run.objects.filter(pk=run_id, status__in=[RunStatus.CREATED, RunStatus.RUNNING, RunStatus.PAUSED]).update(
        status=RunStatus.FAILED, error=text
    )
    leases.release(run_id)
    if failed:
        publish_error(run_id, tick, text)
        publish_status(Run(pk=run_id))
