"""Run leases: at most one worker applies a run's ticks (workers.models.RunLease).

`acquire` takes a free, expired or own lease (taking someone else's expired lease bumps
the epoch). `fence` is called inside a tick's transaction: it renews the lease only if
this (worker, epoch) still holds it; otherwise the tick must not commit.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone as dt_timezone

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from .identity import worker_id
from .models import RunLease


#: What `release` sets `expires_at` to. Not "now": a heartbeat that read the clock a
#: moment before a release would see the released lease as still live (its WHERE
#: expires_at > its now holds) and revive it for a whole TTL.
RELEASED = datetime(1970, 1, 1, tzinfo=dt_timezone.utc)


class LeaseLost(Exception):
    """This worker no longer holds the run's lease: its tick must not commit."""


def _ttl() -> timedelta:
    return timedelta(seconds=settings.LEASE_TTL)


def acquire(run_id: int) -> int | None:
    """This worker's lease epoch for the run, or None when another live worker holds it."""
    me, now = worker_id(), timezone.now()
    try:
        with transaction.atomic():
            lease = RunLease.objects.select_for_update().filter(run_id=run_id).first()
            if lease is None:
                return RunLease.objects.create(run_id=run_id, worker=me, epoch=1, acquired_at=now, expires_at=now + _ttl()).epoch
            if lease.worker == me:
                lease.expires_at = now + _ttl()
                lease.save(update_fields=["expires_at"])
                return lease.epoch
            if lease.expires_at > now:
                return None
            lease.worker, lease.epoch, lease.acquired_at, lease.expires_at = me, lease.epoch + 1, now, now + _ttl()
            lease.save()
            return lease.epoch
    except IntegrityError:  # another worker created the lease first
        return None


def holder(run_id: int) -> RunLease | None:
    """The live lease on a run, if any."""
    return RunLease.objects.filter(run_id=run_id, expires_at__gt=timezone.now()).first()


def worker_of(run_id: int) -> str:
    """The worker holding the live lease on a run ('' when none does)."""
    lease = holder(run_id)
    return lease.worker if lease is not None else ""


def fence(run_id: int, epoch: int) -> None:
    """Inside a tick's transaction: renew the lease, or raise LeaseLost if it was taken.

    An expired lease nobody took yet is still ours (the epoch did not move), so a
    worker that was merely slow keeps its run.
    """
    now = timezone.now()
    renewed = RunLease.objects.filter(run_id=run_id, worker=worker_id(), epoch=epoch).update(
        expires_at=now + _ttl(), attempts=0, attempt_note="")  # a tick commits: its attempts are over
    if not renewed:
        raise LeaseLost(f"run {run_id}: lease epoch {epoch} is no longer held by {worker_id()}")


def begin_attempt(run_id: int, epoch: int) -> tuple[int, str]:
    """Count an attempt at the run's next tick (RunLease.attempts); returns the count,
    this one included, and the note the last unfinished attempt left."""
    mine = RunLease.objects.filter(run_id=run_id, worker=worker_id(), epoch=epoch)
    if not mine.update(attempts=F("attempts") + 1):
        raise LeaseLost(f"run {run_id}: lease epoch {epoch} is no longer held by {worker_id()}")
    return mine.values_list("attempts", "attempt_note").get()


def note_attempt(run_id: int, epoch: int, note: str) -> None:
    """What the attempt in progress hit (kept if it never ends)."""
    RunLease.objects.filter(run_id=run_id, worker=worker_id(), epoch=epoch).update(attempt_note=note[:2000])


def renew_mine() -> None:
    """Heartbeat: extend every live lease this worker holds.

    A lease that expired (or was released: `release` expires it) is not revived here:
    the heartbeat may race a release, and only `acquire` or a tick's `fence` may take a
    run back (the fence checks the epoch).
    """
    now = timezone.now()
    RunLease.objects.filter(worker=worker_id(), expires_at__gt=now).update(expires_at=now + _ttl())


def release(run_id: int, epoch: int | None = None) -> None:
    """Give the run up (stopped, failed, or shutting down): others may take it at once."""
    leases = RunLease.objects.filter(run_id=run_id, worker=worker_id())
    if epoch is not None:
        leases = leases.filter(epoch=epoch)
    leases.update(expires_at=RELEASED)


def release_all() -> None:
    RunLease.objects.filter(worker=worker_id()).update(expires_at=RELEASED)
