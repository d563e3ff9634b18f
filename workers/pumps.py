"""The connector pump thread of a worker: every DBSPWEB_PUMP_EVERY seconds, for each run
whose lease this process holds (and that is running), one step of its connectors
(connectors/pump.py): sources push, sinks write the committed ticks. The lease fence is
handed down, so a source's push and position commit only while this worker still holds
the run at the epoch it pumps under; a run taken over elsewhere has its clients closed
here at the next pass. Paused runs pause their connectors (nothing is polled). Each
sink writes on a thread of its own, so a hanging target delays only its own output."""
from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from connectors.models import Connector
from connectors.pump import Pump
from runs.models import Run, RunStatus

from . import dispatch, leases
from .identity import worker_id
from .models import RunLease

log = logging.getLogger(__name__)
_stop = threading.Event()
_thread: threading.Thread | None = None


def pass_once(pump: Pump) -> int:
    """One pass over the runs this worker holds; returns the records moved."""
    held = dict(RunLease.objects.filter(worker=worker_id(), expires_at__gt=timezone.now()).values_list("run_id", "epoch"))
    with_connectors = set(Connector.objects.filter(run_id__in=held).values_list("run_id", flat=True))
    runs = Run.objects.select_related("version").filter(pk__in=with_connectors, status=RunStatus.RUNNING)
    moved, keep = 0, set()
    for run in runs:
        epoch = held[run.pk]
        keep.update(Connector.objects.filter(run=run).values_list("pk", flat=True))
        try:
            moved += pump.pump_run(run, epoch, lambda run_id=run.pk, epoch=epoch: leases.fence(run_id, epoch))
        except leases.LeaseLost as e:
            log.warning("event=pump_lease_lost run=%s worker=%s reason=%r", run.pk, worker_id(), str(e))
            keep.difference_update(Connector.objects.filter(run=run).values_list("pk", flat=True))
    pump.close_all_but(keep)
    return moved


def _loop() -> None:
    dispatch.own_connection()
    pump = Pump(sinks_apart=True)  # a slow sink delays only its own output
    while not _stop.is_set():
        moved = 0
        try:
            close_old_connections()
            moved = pass_once(pump)
        except Exception:  # noqa: BLE001 - the database is away: try again next pass
            log.exception("event=pump_failed worker=%s", worker_id())
        if not moved:
            _stop.wait(settings.PUMP_EVERY)
    pump.close_all_but(set())


def start() -> None:
    global _thread
    if _thread is not None and _thread.is_alive():
        return
    _stop.clear()
    _thread = threading.Thread(target=_loop, name="dbspweb-connectors", daemon=True)
    _thread.start()


def stop() -> None:
    _stop.set()
    if _thread is not None:
        _thread.join(timeout=10)
