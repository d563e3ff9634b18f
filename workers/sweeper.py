"""The sweeper: re-drive runs whose work would otherwise wait forever.

- A running run with no live lease (its worker died, or shut down): send it to the
  shared queue; the worker that takes it acquires the lease, restores the state
  (snapshot + replay of the applied input log) and applies the pending pushes.
- A running run whose holder is alive but whose pushes have waited longer than
  DBSPWEB_SWEEP_STALE: the wake-up was lost (a Redis restart drops queued task
  messages; the acknowledged pushes are in the database): wake the holder again.
- A created run nobody started within DBSPWEB_SWEEP_STALE: its start message was lost.
- A verification still queued after DBSPWEB_SWEEP_STALE: its message was lost (a
  Redis restart): send it again (a verification is claimed once, so a duplicate
  message does nothing).
- A run this process still holds in memory but that was stopped or failed meanwhile
  (the stop message was lost): free it, on the worker's main thread.
- A run this process holds whose input log is not all folded into its input tables
  (runs/input_tables.py) and that had no push for DBSPWEB_FOLD_QUIET seconds, none
  waiting: fold it now, on the worker's main thread (pushes never fold; a quiet run's
  next delete check then reads few unfolded pushes). A run that is never quiet (a
  change stream) is folded too once its unfolded pushes hold more than
  DBSPWEB_FOLD_BEHIND_ROWS (100k) rows: each push's delete check looks its rows up
  among all of them (their row keys are kept per process, runs/input_tables.py
  `_unfolded_keys`, but they take memory and a scan a check).

Each worker pool (the workers consuming one CELERY_QUEUE) sweeps only its own runs
(`Run.queue`), so pools may share a database. Run by every worker's heartbeat thread;
also a Celery task (`workers.sweep`).
"""
from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import F, Q, Sum
from django.utils import timezone

from runs.models import Push, Run, RunStatus, Verification, VerificationStatus

from . import dispatch, engines
from .identity import worker_id
from .models import RunLease, WorkerHeartbeat

log = logging.getLogger(__name__)


def sweep() -> dict:
    now = timezone.now()
    stale = now - timedelta(seconds=settings.SWEEP_STALE)
    live = {lease.run_id: lease.worker for lease in RunLease.objects.filter(expires_at__gt=now)}
    mine = Run.objects.filter(Q(queue=settings.CELERY_TASK_DEFAULT_QUEUE) | Q(queue=""))  # this worker pool's runs
    taken_over, woken, started, freed = [], [], [], []
    for run_id in mine.filter(status=RunStatus.RUNNING).values_list("pk", flat=True):
        if run_id not in live:
            if dispatch._send(dispatch.PROCESS_RUN, run_id, None):
                taken_over.append(run_id)
    waiting = (
        Push.objects.filter(applied_tick__isnull=True, received_at__lt=stale, run__in=mine.filter(status=RunStatus.RUNNING))
        .order_by().values_list("run_id", flat=True).distinct()
    )
    for run_id in waiting:
        if run_id in live and dispatch.to_worker(dispatch.PROCESS_RUN, run_id, live[run_id]):
            woken.append(run_id)
    for run_id in mine.filter(status=RunStatus.CREATED, created_at__lt=stale).values_list("pk", flat=True):
        if run_id not in live and dispatch._send(dispatch.START_RUN, run_id, None):
            started.append(run_id)
    verifications = []
    queued = Verification.objects.filter(status=VerificationStatus.QUEUED, created_at__lt=stale, run__in=mine)
    for vid in queued.values_list("pk", flat=True):
        if dispatch.verify(vid):
            verifications.append(vid)
    held = engines.held_runs()
    if held:
        for run_id in Run.objects.filter(Q(pk__in=held) & Q(status__in=[RunStatus.STOPPED, RunStatus.FAILED])).values_list("pk", flat=True):
            if dispatch.to_worker(dispatch.STOP_RUN, run_id, worker_id()):
                freed.append(run_id)
        folded = fold_quiet(held, now)
    else:
        folded = []
    WorkerHeartbeat.objects.filter(last_seen__lt=now - timedelta(days=1)).delete()
    found = {"taken_over": taken_over, "woken": woken, "started": started, "freed": freed, "verifications": verifications}
    if any(found.values()) or folded:
        log.info("event=sweep worker=%s taken_over=%s woken=%s started=%s freed=%s verifications=%s folded=%s",
                 worker_id(), taken_over, woken, started, freed, verifications, folded)
    return found


def fold_quiet(held: list[int], now) -> list[int]:
    """Send this worker a fold of each held run with unfolded pushes that is quiet, or
    whose unfolded pushes hold more than FOLD_BEHIND_ROWS rows (the fold itself yields
    to waiting pushes: input_tables.fold_idle)."""
    quiet = now - timedelta(seconds=settings.FOLD_QUIET)
    behind = Run.objects.filter(pk__in=held, status=RunStatus.RUNNING, input_rows_through__lt=F("last_sequence"))
    sent = []
    for run_id, through in behind.values_list("pk", "input_rows_through"):
        latest = Push.objects.filter(run_id=run_id).order_by("-sequence").values_list("received_at", "applied_tick").first()
        due = latest and latest[0] < quiet and latest[1] is not None
        if not due:
            unfolded = Push.objects.filter(run_id=run_id, sequence__gt=through).aggregate(rows=Sum("row_count"))["rows"]
            due = (unfolded or 0) > settings.FOLD_BEHIND_ROWS
        if due and dispatch.to_worker(dispatch.FOLD_INPUTS, run_id, worker_id()):
            sent.append(run_id)
    return sent
