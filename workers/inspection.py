"""Carry out a run's inspection (runs/inspection.py): every node's delta and contents at
the tick, recomputed from the applied input log by the reference evaluator
(dbsp/capture.py), written as Arrow files the web process pages from
(runs/inspection_store.py).

Consumed by the verification queue's worker process (settings.VERIFY_QUEUE), never by
the workers that tick runs: it reads the database and computes on its own. Progress
(0..1) is written as it goes.

Cost: the reference evaluator is pure Python. For 10^6 input rows (bench/README.md,
"Node inspector") the whole inspection takes about a minute on the 2-core test machine
and about 1 GB; runs whose log holds more than INSPECT_MAX_INPUT_ROWS rows up to the
tick are refused when asked (runs/inspection.py).
"""
from __future__ import annotations

import logging
import time
from collections import defaultdict

from celery import shared_task
from django.db import close_old_connections
from django.utils import timezone

from dbsp import ZSet, compile_plan
from dbsp.capture import capture
from runs import fair_queue, inspection_store
from runs.inspection import evict
from runs.models import Inspection, VerificationStatus

from . import dispatch
from .engines import changes_of

log = logging.getLogger(__name__)


class _Progress:
    def __init__(self, inspection_id: int):
        self.id, self.last = inspection_id, 0.0

    def __call__(self, fraction: float, force: bool = False) -> None:
        if force or time.monotonic() - self.last > 0.5:
            Inspection.objects.filter(pk=self.id).update(progress=min(max(fraction, 0.0), 1.0))
            self.last = time.monotonic()


def changes_by_tick(run, plan, tick: int) -> list[dict[str, ZSet]]:
    """Each tick's input changes up to `tick`, from the applied log, as the run's worker
    applied them (workers/engines.changes_of, one tick's pushes in log order). When
    only whole tables matter and an input is keyed (upserts: a record replaces the row
    of its key, which a sum of per-tick changes does not), the tables through tick-1
    and through tick, each read from the log in order, as two changes."""
    pushes = list(run.pushes.filter(applied_tick__isnull=False, applied_tick__lte=tick).order_by("sequence"))
    if plan.whole_tables and any(plan.primary_key(name) for name in plan.inputs):
        now = changes_of(pushes, plan)
        if tick == 0:
            return [now]
        before = changes_of([p for p in pushes if p.applied_tick < tick], plan)
        rest = {name: now.get(name, ZSet()) - before.get(name, ZSet()) for name in set(now) | set(before)}
        return [{} for _ in range(tick - 1)] + [before, rest]
    by_tick = defaultdict(list)
    for p in pushes:
        by_tick[p.applied_tick].append(p)
    return [changes_of(by_tick.get(t, []), plan) for t in range(tick + 1)]


def operator_kinds(operators: dict) -> dict[str, str]:
    """node id -> operator kind, for the nodes of a plan and of its fixed points."""
    kinds = {}
    for node_id, op in operators.items():
        kinds[node_id] = op.kind
        if op.kind == "fixedpoint":
            kinds.update(operator_kinds(op.sub.operators))
    return kinds


def _iterations(iterations: dict) -> list[dict] | None:
    if not iterations:
        return None
    return [{"iteration": list(k) if isinstance(k, tuple) else k, "rows": len(z)} for k, z in iterations.items()]


def compute(inspection: Inspection, progress) -> int:
    """Recompute and store every node of the inspection's run at its tick; its bytes."""
    run = inspection.run
    plan = compile_plan(run.version.document)
    changes = changes_by_tick(run, plan, inspection.tick)
    progress(0.1, force=True)
    at = capture(plan, changes, inspection.tick, progress=lambda f: progress(0.1 + 0.6 * f))
    kinds = operator_kinds(plan.operators)
    nodes = {}
    for node_id, value in at.items():
        nodes[node_id] = {"operator": kinds.get(node_id, ""),
                          "inserted": sum(1 for _, w in value.delta if w > 0),
                          "deleted": sum(1 for _, w in value.delta if w < 0),
                          "iterations": _iterations(value.iterations)}
    progress(0.75, force=True)
    written = []

    def tables(node_id, kind):
        written.append(node_id)
        progress(0.75 + 0.25 * len(written) / (2 * len(nodes)))
        value = at[node_id]
        return inspection_store.node_table(value.delta if kind == "delta" else value.integral, plan.schemas[node_id])

    target = inspection_store.directory(run.pk, run.version_id, inspection.tick)
    return inspection_store.write(target, nodes, tables)


def inspect(inspection_id: int) -> str | None:
    """Carry out one queued inspection; returns its final status (None: not queued)."""
    claimed = Inspection.objects.filter(pk=inspection_id, status=VerificationStatus.QUEUED).update(
        status=VerificationStatus.RUNNING, progress=0.0)
    if not claimed:
        return None
    inspection = Inspection.objects.select_related("run__version").get(pk=inspection_id)
    progress = _Progress(inspection.pk)
    started = time.perf_counter()
    try:
        inspection.bytes = compute(inspection, progress)
        inspection.method, inspection.status = "reference", VerificationStatus.DONE
    except Exception as e:  # noqa: BLE001 - a failing inspection says why; the run is untouched
        log.exception("event=inspection_failed inspection=%s run=%s", inspection.pk, inspection.run_id)
        inspection.status, inspection.error = VerificationStatus.FAILED, f"{type(e).__name__}: {e}"
    inspection.progress, inspection.finished_at = 1.0, timezone.now()
    updated = Inspection.objects.filter(pk=inspection.pk).update(
        method=inspection.method, bytes=inspection.bytes, status=inspection.status, error=inspection.error,
        progress=1.0, finished_at=inspection.finished_at)
    if not updated:  # its run was deleted meanwhile: so go its files
        inspection_store.remove(inspection_store.directory(inspection.run_id, inspection.run.version_id, inspection.tick))
        return None
    log.info("event=inspected inspection=%s run=%s tick=%s status=%s bytes=%s seconds=%.1f", inspection.pk,
             inspection.run_id, inspection.tick, inspection.status, inspection.bytes, time.perf_counter() - started)
    if inspection.status == VerificationStatus.DONE:
        evict(keep=inspection)
    return inspection.status


@shared_task(name=dispatch.INSPECT_RUN)
def inspect_run(inspection_id: int) -> str | None:
    close_old_connections()
    try:
        return inspect(inspection_id)
    finally:
        fair_queue.release("inspect", inspection_id)  # its requester may queue another
