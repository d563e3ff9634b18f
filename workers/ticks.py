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
import re
import time

from django.conf import settings
from django.db import DatabaseError, IntegrityError, InterfaceError, OperationalError, transaction
from django.db.models import F

from dbsp.operators.fixedpoint import FixedPointDiverged
from runs.broadcast import publish, publish_error, publish_status
from runs.lag import lag_of
from runs.messages import delta_message
from runs.models import Encoded, Push, Run, RunStatus, TickOutput

from . import dispatch, engines, leases, snapshots, tick_output, watchdog
from .identity import worker_id
from .models import RunLease

log = logging.getLogger("workers.ticks")
_NODE_PREFIX = re.compile(r"node '([A-Za-z_][A-Za-z0-9_]*)'")


class TickConflict(Exception):
    """The database moved under the tick (another writer, a stop): do not commit."""


def process(run_id: int) -> int:
    """Apply every pending push of a running run; returns the number of ticks applied."""
    run = Run.objects.filter(pk=run_id).only("status", "created_at").first()
    if run is None:
        return 0
    dispatch.woken(run_id, wake_since(run))  # before the pending pushes are read (here or by the holder)
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
            dispatch.to_worker(dispatch.PROCESS_RUN, run_id, holder.worker)
        return 0
    return drain(run_id, epoch)


def wake_since(run) -> str:
    """What tells a run's wake-up claims apart from an earlier run's with the same id."""
    return run.created_at.isoformat()


def stop(run_id: int) -> None:
    """Free what this worker holds for a stopped or failed run."""
    held = engines.release(run_id)
    leases.release(run_id)
    if held:  # logged once the lease is free too: watchers of the log may rely on both
        log.info("event=released run=%s worker=%s", run_id, worker_id())
    snapshots.discard(run_id)


def lock_run(run_id: int) -> None:
    """The first statement of every transaction that writes a run's row: lock it.

    Pushes and user transitions lock the run row first, then write. A tick that took
    the row last (after its TickOutput insert had taken the foreign key's share lock on
    it) had to upgrade that lock while a push waited for the row: a deadlock on
    PostgreSQL (seen under concurrent pushes). One order everywhere: the run row, then
    the lease, the outputs and the pushes. (A no-op on SQLite, which locks the file.)
    """
    list(Run.objects.select_for_update().filter(pk=run_id).values_list("pk", flat=True))


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
        tick = run.current_tick + 1
        try:
            attempts, note = leases.begin_attempt(run_id, epoch)
        except leases.LeaseLost:
            engines.release(run_id)
            return applied
        if attempts > settings.TICK_MAX_ATTEMPTS:
            fail(run_id, tick, TickAbandoned(tick, attempts - 1, note), epoch)
            return applied
        started = time.perf_counter()
        try:
            rt = engines.runtime_for(run)
            with watchdog.watching(run_id, epoch, tick, rt, mark_failed):
                result = rt.step(engines.changes_for(rt, batch))
                deltas = result.outputs_json()
            deltas = tick_output.encode(deltas)  # refused unless storable; its JSON text is what is stored
        except Exception as e:  # a failing tick fails the run visibly, never silently
            fail(run_id, tick, e, epoch)
            return applied
        try:
            lag_pushes = commit(run, batch, result, deltas, epoch)
        except (leases.LeaseLost, TickConflict) as e:
            # Our runtime is a tick ahead of the database: drop it. The lease holder (or
            # a later wake-up of ours) continues from what is committed.
            discard(run_id, result.tick, str(e))
            return applied
        except (OperationalError, InterfaceError) as e:
            # Transient (the database is locked, the connection dropped, a deadlock): the
            # tick did not commit, or we cannot tell. The runtime may be a tick ahead of
            # the database, and a runtime whose tick matches the run's is reused as is
            # (engines.runtime_for): drop it, so that the next attempt restores from the
            # snapshot and the applied log. The task fails; the sweeper re-drives the run.
            discard(run_id, result.tick, f"{type(e).__name__}: {e}")
            _forget_attempt(run_id, epoch)
            raise
        except Exception as e:
            if isinstance(e, IntegrityError) and _moved_on(run_id, result.tick):
                discard(run_id, result.tick, str(e))  # another writer committed this tick
                return applied
            # Refused for what the tick holds (a constraint, a value the database cannot
            # store): the same tick would be refused again. Retried from the committed
            # state up to DBSPWEB_TICK_MAX_ATTEMPTS times, then the run fails with the error.
            discard(run_id, result.tick, f"{type(e).__name__}: {e}")
            leases.note_attempt(run_id, epoch, f"its commit was refused: {type(e).__name__}: {e}")
            continue
        except BaseException as e:  # a shutdown: the sweeper re-drives the run
            discard(run_id, result.tick, f"{type(e).__name__}: {e}")
            raise
        log.info(
            "event=tick run=%s tick=%s pushes=%d rows=%d ms=%.1f engine_ms=%.1f lag_pushes=%d worker=%s epoch=%d",
            run_id, result.tick, len(batch), sum(p.row_count for p in batch), (time.perf_counter() - started) * 1000,
            result.ms, lag_pushes, worker_id(), epoch,
        )
        applied += 1
        if snapshots.due(run_id, result.tick, idle=False):
            snapshots.write(run_id, rt, epoch)


def commit(run, batch, result, deltas, epoch) -> int:
    """One transaction: the tick's output, the pushes' applied marks, the run's tick,
    fenced by the lease; the delta is published after it commits. Returns the pushes
    still waiting (the lag published with it)."""
    run_id = run.pk
    with transaction.atomic():
        lock_run(run_id)
        leases.fence(run_id, epoch)
        out = TickOutput.objects.create(
            run=run, tick=result.tick, deltas=deltas, frontier=result.frontier, stats=result.stats, ms=result.ms,
        )
        out.deltas = deltas.value if isinstance(deltas, Encoded) else deltas
        marked = Push.objects.filter(pk__in=[p.pk for p in batch], applied_tick__isnull=True).update(applied_tick=result.tick)
        moved = Run.objects.filter(
            pk=run_id, current_tick=result.tick - 1, status__in=[RunStatus.RUNNING, RunStatus.PAUSED]
        ).update(current_tick=result.tick, worker=worker_id())
        if marked != len(batch) or not moved:
            raise TickConflict(f"run {run_id} tick {result.tick}: the input log or the run changed meanwhile")
        lag = lag_of(run_id)
        message = delta_message(out, lag)
        transaction.on_commit(lambda message=message: publish(run_id, message))
    return lag["pushes"]


def discard(run_id: int, tick: int, reason: str) -> None:
    engines.release(run_id)
    log.warning("event=tick_discarded run=%s tick=%s reason=%r worker=%s", run_id, tick, reason, worker_id())


def _moved_on(run_id: int, tick: int) -> bool:
    """Did another writer commit `tick` (or move the run) meanwhile?"""
    return TickOutput.objects.filter(run_id=run_id, tick=tick).exists() or not Run.objects.filter(
        pk=run_id, current_tick=tick - 1, status__in=[RunStatus.RUNNING, RunStatus.PAUSED]).exists()


def _forget_attempt(run_id: int, epoch: int) -> None:
    """A transient failure is no attempt against the limit (best effort: the database may be away)."""
    try:
        RunLease.objects.filter(run_id=run_id, worker=worker_id(), epoch=epoch, attempts__gt=0).update(attempts=F("attempts") - 1)
    except DatabaseError:
        pass


def fail(run_id: int, tick: int, error: Exception, epoch: int) -> None:
    """Mark the run failed with the error, if this worker still holds its lease at
    `epoch` (fenced like a tick: a worker that lost the run must not fail it)."""
    text = f"{type(error).__name__}: {error}"
    log.error("event=tick_failed run=%s tick=%s worker=%s error=%r", run_id, tick, worker_id(), text, exc_info=error)
    engines.release(run_id)
    mark_failed(run_id, tick, text, node_of(error), epoch)


def mark_failed(run_id: int, tick: int, text: str, node: str | None, epoch: int) -> bool:
    """The database side of `fail` (also called by the watchdog, from its own thread)."""
    try:
        with transaction.atomic():
            lock_run(run_id)
            leases.fence(run_id, epoch)
            failed = Run.objects.filter(
                pk=run_id, status__in=[RunStatus.CREATED, RunStatus.RUNNING, RunStatus.PAUSED]
            ).update(status=RunStatus.FAILED, error=text)
    except leases.LeaseLost as lost:
        log.warning("event=fail_discarded run=%s tick=%s reason=%r worker=%s", run_id, tick, str(lost), worker_id())
        return False
    leases.release(run_id, epoch)
    if failed:
        publish_error(run_id, tick, text, node)
        publish_status(Run(pk=run_id))
    return bool(failed)


class TickAbandoned(Exception):
    """A tick that did not complete DBSPWEB_TICK_MAX_ATTEMPTS times: the run fails."""

    def __init__(self, tick: int, attempts: int, note: str):
        cause = note or "its worker was lost during it each time"
        super().__init__(f"tick {tick} did not complete in {attempts} attempts (DBSPWEB_TICK_MAX_ATTEMPTS): {cause}")
        found = _NODE_PREFIX.search(note or "")
        self.node = found.group(1) if found else None


def node_of(error: BaseException) -> str | None:
    """The circuit node an engine error names, if it names one: a `node` (or `node_id`)
    attribute; the node of the problems of a DataInvalid / CircuitInvalid (a keyed
    input's rejected change names its input); or a FixedPointDiverged, whose message
    starts with the node ("node 'closure': no fixed point ...")."""
    for attr in ("node", "node_id"):
        value = getattr(error, attr, None)
        if isinstance(value, str) and value:
            return value
    nodes = {p.node for p in getattr(error, "problems", None) or [] if getattr(p, "node", None)}
    if len(nodes) == 1:
        return nodes.pop()
    if isinstance(error, FixedPointDiverged):
        found = _NODE_PREFIX.match(str(error))
        if found:
            return found.group(1)
    return None
