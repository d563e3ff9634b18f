"""Engine snapshots of a run: written about every DBSPWEB_SNAPSHOT_EVERY ticks under
DBSPWEB_SNAPSHOT_DIR (a directory every worker can read: a shared volume on a cluster),
recorded as workers.models.Snapshot; recovery restores the newest one and replays the
input log after it.

The engine provides `runtime.snapshot(directory)` and
`SparkRuntime.restore(plan, directory, session=...)` (dbsp/snapshot.py); a snapshot
that cannot be restored (damaged, or from another document) is skipped and recovery
replays the whole applied input log.
"""
from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path

from django.conf import settings

from .identity import worker_id
from .models import Snapshot

log = logging.getLogger(__name__)


def supported(runtime_or_class) -> bool:
    from dbsp.spark import SparkRuntime

    return callable(getattr(runtime_or_class, "snapshot", None)) and callable(getattr(SparkRuntime, "restore", None))


def directory_for(run_id: int, tick: int) -> Path:
    return Path(settings.SNAPSHOT_DIR) / f"run-{run_id}" / f"tick-{tick}"


#: A run that never runs out of pushes is snapshotted in its tick loop after this many
#: times DBSPWEB_SNAPSHOT_EVERY ticks.
BUSY_FACTOR = 4


def due(run_id: int, tick: int, idle: bool) -> bool:
    """Whether to snapshot a run now, at `tick`.

    A snapshot runs Spark jobs (the traces' rows are collected), so it is taken when the
    tick loop runs out of pushes (`idle`) and DBSPWEB_SNAPSHOT_EVERY ticks have passed
    since the last one, off the push-to-delta path; a run that is never idle gets one
    every BUSY_FACTOR x DBSPWEB_SNAPSHOT_EVERY ticks.
    """
    every = settings.SNAPSHOT_EVERY
    if every <= 0 or tick < 0:
        return False
    last = Snapshot.objects.filter(run_id=run_id).order_by("-tick").values_list("tick", flat=True).first()
    since = tick - (last if last is not None else -1)
    return since >= (every if idle else every * BUSY_FACTOR)


def write(run_id: int, runtime, epoch: int) -> Snapshot | None:
    """Snapshot the runtime (at the tick it just committed); keep the newest few.

    Only while this worker still holds the run's lease at `epoch` (checked before and
    after writing): a worker that lost the run records nothing.
    """
    from .models import RunLease

    def holding() -> bool:
        return RunLease.objects.filter(run_id=run_id, worker=worker_id(), epoch=epoch).exists()

    if not supported(runtime) or not holding():
        return None
    tick = runtime.tick
    path = directory_for(run_id, tick)
    started = time.perf_counter()
    try:
        runtime.snapshot(str(path))  # written to a temporary file, then renamed
        if not holding():
            log.warning("event=snapshot_discarded run=%s tick=%s reason=lease_lost worker=%s", run_id, tick, worker_id())
            return None
        snap, _ = Snapshot.objects.update_or_create(run_id=run_id, tick=tick, defaults={"path": str(path), "worker": worker_id()})
    except Exception:  # a missed snapshot only makes recovery replay more
        log.exception("event=snapshot_failed run=%s tick=%s", run_id, tick)
        return None
    log.info("event=snapshot run=%s tick=%s path=%s ms=%.1f worker=%s", run_id, tick, path, (time.perf_counter() - started) * 1000, worker_id())
    for old in Snapshot.objects.filter(run_id=run_id).order_by("-tick")[settings.SNAPSHOT_KEEP:]:
        shutil.rmtree(old.path, ignore_errors=True)
        old.delete()
    return snap


def latest(run_id: int, upto_tick: int) -> Snapshot | None:
    """The newest snapshot at or before a tick whose file is there (this worker may not
    see a directory another worker wrote, if DBSPWEB_SNAPSHOT_DIR is not shared)."""
    from dbsp.snapshot import FILE

    for snap in Snapshot.objects.filter(run_id=run_id, tick__lte=upto_tick).order_by("-tick"):
        if (Path(snap.path) / FILE).exists():
            return snap
    return None


def restore(run_id: int, plan, upto_tick: int, session):
    """(runtime, tick) from the newest usable snapshot at or before `upto_tick`, or None."""
    from dbsp.spark import SparkRuntime

    if not supported(SparkRuntime):
        return None
    snap = latest(run_id, upto_tick)
    if snap is None:
        return None
    try:
        runtime = SparkRuntime.restore(plan, snap.path, session=session)
    except Exception:  # a damaged snapshot: fall back to replaying the whole log
        log.exception("event=restore_failed run=%s tick=%s path=%s", run_id, snap.tick, snap.path)
        return None
    return runtime, snap.tick


def discard(run_id: int) -> None:
    """A stopped run's snapshots: nothing will restore them again."""
    for snap in Snapshot.objects.filter(run_id=run_id):
        shutil.rmtree(snap.path, ignore_errors=True)
    Snapshot.objects.filter(run_id=run_id).delete()
    shutil.rmtree(Path(settings.SNAPSHOT_DIR) / f"run-{run_id}", ignore_errors=True)
