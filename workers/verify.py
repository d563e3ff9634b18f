"""Carry out a run's verification (runs/verify.py): recompute every view at the tick
from the applied input log, from scratch, and compare with the stored outputs.

This runs in a worker process that consumes the verification queue only
(settings.VERIFY_QUEUE): it reads the database and computes on its own, never touching
a run's lease, runtime or tick loop, so a long verification delays no tick.

How the views are recomputed:
- circuits whose query does not depend on tick boundaries (no DBSP primitives, no
  event-time windows): the query once over the whole integrated input tables, with the
  reference evaluator (dbsp/reference.py) up to VERIFY_REFERENCE_MAX_ROWS logged rows,
  and above that as batch Spark jobs (dbsp/spark/recompute.py), which share no
  incremental machinery (Δ forms, traces, driver paths) with the tick path;
- other circuits: the reference evaluator replays the log tick by tick (each tick's
  queries on whole values) and its outputs are integrated.
Progress (0..1) is written as it goes; the result lists at most ROWS_SHOWN differing
rows per view and side, with the counts.
"""
from __future__ import annotations

import logging
import time
from collections import defaultdict

from celery import shared_task
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from dbsp import ZSet, compile_plan
from dbsp.reference import ReferenceRuntime, recompute
from dbsp.verify import differences, integrate, zset_json
from runs import fair_queue
from runs.models import Verification, VerificationStatus
from runs.outputs import integrated_views

from . import dispatch
from .engines import changes_of

log = logging.getLogger(__name__)
ROWS_SHOWN = 100


def from_whole_tables(plan) -> bool:
    """Whether the views at a tick are the query over the whole input tables then."""
    return plan.whole_tables


class _Progress:
    def __init__(self, verification_id: int):
        self.id, self.last = verification_id, 0.0

    def __call__(self, fraction: float, force: bool = False) -> None:
        if force or time.monotonic() - self.last > 0.5:
            Verification.objects.filter(pk=self.id).update(progress=min(max(fraction, 0.0), 1.0))
            self.last = time.monotonic()


def recompute_views(run, tick: int, progress) -> tuple[str, dict[str, list[dict]]]:
    """(method, view -> contents at `tick` as JSON records), from the applied log."""
    plan = compile_plan(run.version.document)
    pushes = list(run.pushes.filter(applied_tick__isnull=False, applied_tick__lte=tick).order_by("sequence"))
    if from_whole_tables(plan):
        changes = changes_of(pushes, plan)  # the log as one change from empty tables
        progress(0.3, force=True)
        if sum(p.row_count for p in pushes) > settings.VERIFY_REFERENCE_MAX_ROWS:
            from dbsp.spark.recompute import recompute_on_spark

            from .engines import spark_session

            tables = {name: ZSet((row, w) for row, w in z if w > 0) if plan.primary_key(name) else z
                      for name, z in changes.items()}  # a keyed table holds its inserted rows
            return "spark", recompute_on_spark(plan, tables, spark_session())
        views = recompute(plan, changes)
        return "reference", {view: zset_json(views[view], schema) for view, schema in plan.views.items()}
    by_tick = defaultdict(list)
    for p in pushes:
        by_tick[p.applied_tick].append(p)
    reference = ReferenceRuntime(plan)
    contents: dict[str, dict] = {view: {} for view in plan.views}
    for t in range(tick + 1):
        result = reference.step(changes_of(by_tick.get(t, []), plan))
        for view, schema in plan.views.items():
            integrate(contents[view], zset_json(result.outputs[view], schema))
        progress(0.9 * (t + 1) / (tick + 1))
    return "reference", {view: [{"data": d, "weight": w} for d, w in c.values()] for view, c in contents.items()}


def _shown(found: dict) -> dict:
    return {view: {side: rows[:ROWS_SHOWN] for side, rows in sides.items()}
            | {f"{side}_count": len(rows) for side, rows in sides.items()}
            for view, sides in found.items()}


def verify(verification_id: int) -> str | None:
    """Carry out one queued verification; returns its final status (None: not queued)."""
    claimed = Verification.objects.filter(pk=verification_id, status=VerificationStatus.QUEUED).update(
        status=VerificationStatus.RUNNING, progress=0.0)
    if not claimed:
        return None
    v = Verification.objects.select_related("run__version").get(pk=verification_id)
    progress = _Progress(v.pk)
    try:
        method, expected = recompute_views(v.run, v.tick, progress)
        progress(0.95, force=True)
        found = differences(expected, integrated_views(v.run, v.tick))
        v.method, v.result, v.status = method, {"ok": not found, "views": _shown(found)}, VerificationStatus.DONE
    except Exception as e:  # noqa: BLE001 - a failing verification says why; the run is untouched
        log.exception("event=verification_failed verification=%s run=%s", v.pk, v.run_id)
        v.status, v.error = VerificationStatus.FAILED, f"{type(e).__name__}: {e}"
    v.progress, v.finished_at = 1.0, timezone.now()
    v.save(update_fields=["method", "result", "status", "error", "progress", "finished_at"])
    log.info("event=verified verification=%s run=%s tick=%s status=%s method=%s ok=%s",
             v.pk, v.run_id, v.tick, v.status, v.method, (v.result or {}).get("ok"))
    return v.status


@shared_task(name=dispatch.VERIFY_RUN)
def verify_run(verification_id: int) -> str | None:
    close_old_connections()
    try:
        return verify(verification_id)
    finally:
        fair_queue.release("verify", verification_id)  # its requester may queue another
