"""The node inspector: any node of a run (an input, an operator, an output, a node inside
a fixed point) at any tick: its delta (+/- rows), its contents (the delta integrated
through the tick), its sizes, a page at a time.

The data is the reference evaluator's (dbsp/capture.py), not the engine's own state: an
`Inspection` of (run, tick) recomputes every node at once from the input log, in the
verification queue's worker (runs/dispatch.py `inspect` -> workers/inspection.py), so a
long recomputation never holds the run's ticks. Until it is stored the endpoint answers
202 with its progress; then each request pages the stored Arrow files
(runs/inspection_store.py, runs/node_pages.py). A tick's inputs never change once
applied, so an inspection is computed once; the least recently read are evicted beyond
INSPECT_CACHE_MAX_BYTES and a deleted run's go with it.

A fixed point's own node shows its export (its one output; `export` names which when
there are several).
"""
from __future__ import annotations

import datetime as dt
import logging

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone

from circuits.services import ServiceError, plan_for

from . import dispatch, fair_queue, inspection_store
from .models import Inspection, Run, TickOutput, VerificationStatus
from .node_pages import bad, page_of, page_query

log = logging.getLogger(__name__)
KINDS = inspection_store.KINDS
USED_AT_GRAIN = dt.timedelta(seconds=30)  # how stale `used_at` may get before a read updates it
RESEND_AFTER = dt.timedelta(seconds=30)  # a queued inspection no worker took by then is sent again (a lost message)


def _tick(run: Run, params) -> int:
    text = params.get("tick")
    if text in (None, ""):
        tick = run.current_tick
    else:
        try:
            tick = int(text)
        except ValueError:
            raise bad("tick", f"expected an integer, got {text!r}") from None
    if not 0 <= tick <= run.current_tick:
        where = "the run has no tick yet" if run.current_tick < 0 else f"ticks go from 0 to {run.current_tick} (the current one)"
        raise ServiceError(f"Run {run.pk} cannot be inspected at tick {tick}: {where}.", 400,
                           [{"field": "tick", "message": f"{tick} is not between 0 and the current tick {run.current_tick}"}])
    return tick


def _operator(operators: dict, node_id: str):
    """The operator of a node of the plan or of a node inside its fixed points (nested too)."""
    if node_id in operators:
        return operators[node_id]
    for op in operators.values():
        if op.kind == "fixedpoint" and (inner := _operator(op.sub.operators, node_id)) is not None:
            return inner
    return None


def _node(run: Run, plan, node_id: str, params) -> tuple[str, str | None]:
    """(the node whose data is shown, the export shown for a fixed point)."""
    if node_id not in plan.schemas:
        raise ServiceError(f"Run {run.pk}'s circuit has no node {node_id!r}.", 404)
    op = _operator(plan.operators, node_id)
    if op is None or op.kind != "fixedpoint":
        return node_id, None
    exports = [n for n, inner in op.sub.operators.items() if inner.kind == "export"]
    export = params.get("export") or (exports[0] if exports else None)
    if export not in exports:
        raise bad("export", f"fixed point {node_id!r} has no export {export!r} (exports: {', '.join(exports)})")
    return export, export


def _too_big(run: Run, tick: int) -> None:
    rows = run.pushes.filter(applied_tick__isnull=False, applied_tick__lte=tick).aggregate(n=Sum("row_count"))["n"] or 0
    if rows > settings.INSPECT_MAX_INPUT_ROWS:
        raise ServiceError(f"Run {run.pk} has {rows} input rows up to tick {tick}: more than the inspector recomputes "
                           f"({settings.INSPECT_MAX_INPUT_ROWS}).", 400,
                           [{"field": "tick", "message": f"{rows} input rows up to tick {tick} (at most {settings.INSPECT_MAX_INPUT_ROWS})"}])


def inspection_of(run: Run, tick: int, requester: fair_queue.Requester = fair_queue.SYSTEM) -> Inspection:
    """The run's inspection of `tick`, asked of the workers when there is none yet (or
    when its files are gone), queued fairly (runs/fair_queue.py: the requester's priority;
    past its cap a 429 that records nothing); a failed one is retried by the next request
    after it. Every request for the tick shares the one inspection."""
    inspection = Inspection.objects.filter(run=run, tick=tick).first()
    if inspection is not None and inspection.status == VerificationStatus.DONE and inspection_store.manifest(
            inspection_store.directory(run.pk, run.version_id, tick)) is None:
        inspection.delete()  # evicted, or stored on another machine's disk: compute it again
        inspection = None
    if inspection is not None:
        if inspection.status == VerificationStatus.QUEUED and timezone.now() - inspection.created_at > RESEND_AFTER:
            dispatch.inspect(inspection.pk, priority=requester.priority)  # taken once, however often sent
        return inspection
    try:
        with transaction.atomic():
            inspection = Inspection.objects.create(run=run, tick=tick)
            fair_queue.admit(requester, run.pk, "inspect", inspection.pk)
            transaction.on_commit(lambda: dispatch.inspect(inspection.pk, priority=requester.priority))
    except IntegrityError:  # another request asked for it at the same moment
        inspection = Inspection.objects.get(run=run, tick=tick)
    return inspection


def _pending(inspection: Inspection, node_id: str, kind: str) -> dict:
    body = {"status": inspection.status, "progress": round(inspection.progress, 3), "run": inspection.run_id,
            "tick": inspection.tick, "node": node_id, "kind": kind}
    if inspection.status == VerificationStatus.FAILED:
        body["error"] = inspection.error
    return body


def _sizes(entry: dict) -> dict:
    return {"delta_rows": entry["delta"]["rows"], "integral_rows": entry["integral"]["rows"],
            "inserted": entry.get("inserted", 0), "deleted": entry.get("deleted", 0),
            "iterations": entry.get("iterations")}


def node_at(run: Run, node_id: str, params, requester: fair_queue.Requester = fair_queue.SYSTEM) -> tuple[int, dict]:
    """(HTTP status, body) of GET /api/runs/<id>/nodes/<node>/: 202 while the tick's
    inspection is computed, 200 with the page (or with status failed and the error)."""
    plan = plan_for(run.version)
    shown, export = _node(run, plan, node_id, params)
    tick = _tick(run, params)
    kind = params.get("kind") or "delta"
    if kind not in KINDS:
        raise bad("kind", f"expected delta or integral, got {kind!r}")
    schema = plan.schemas[shown]
    query = page_query(params, schema)
    _too_big(run, tick)
    inspection = inspection_of(run, tick, requester)
    if inspection.status != VerificationStatus.DONE:
        if inspection.status == VerificationStatus.FAILED:
            Inspection.objects.filter(pk=inspection.pk).delete()  # reported once; the next request tries again
            return 200, _pending(inspection, node_id, kind)
        return 202, _pending(inspection, node_id, kind)
    target = inspection_store.directory(run.pk, run.version_id, tick)
    entry = (inspection_store.manifest(target) or {"nodes": {}})["nodes"].get(shown)
    if entry is None:
        raise ServiceError(f"Run {run.pk}'s inspection of tick {tick} has no data for node {node_id!r}.", 404)
    table = inspection_store.open_table(target, entry[kind]["file"])
    count, rows = page_of(table, query, schema, cache_key=(str(target), entry[kind]["file"]))
    pages = max(1, -(-count // query.page_size))
    if query.page > pages:
        raise bad("page", f"page {query.page} is past the last page ({pages}) of {count} rows")
    now = timezone.now()
    if now - inspection.used_at > USED_AT_GRAIN:
        Inspection.objects.filter(pk=inspection.pk).update(used_at=now)
    out = TickOutput.objects.filter(run=run, tick=tick).values_list("stats", flat=True).first() or {}
    body = {"status": "done", "run": run.pk, "tick": tick, "node": node_id, "kind": kind, "columns": schema.as_list(),
            "count": count, "total": table.num_rows, "page": query.page, "page_size": query.page_size, "pages": pages,
            "rows": rows, **query.as_json(), "sizes": _sizes(entry), "stats": out.get(node_id) or out.get(shown) or {},
            "operator": getattr(_operator(plan.operators, node_id), "kind", None),
            "method": inspection.method or None}
    if export:
        body["export"] = export
    return 200, body


def evict(keep: Inspection | None = None) -> int:
    """Delete the least recently read inspections (files and rows) until the stored ones
    fit in INSPECT_CACHE_MAX_BYTES; `keep` stays. Returns how many went."""
    done = Inspection.objects.filter(status=VerificationStatus.DONE).select_related("run")
    total = sum(done.values_list("bytes", flat=True))
    gone = 0
    for inspection in done.order_by("used_at", "id"):
        if total <= settings.INSPECT_CACHE_MAX_BYTES:
            break
        if keep is not None and inspection.pk == keep.pk:
            continue
        inspection_store.remove(inspection_store.directory(inspection.run_id, inspection.run.version_id, inspection.tick))
        inspection.delete()
        total -= inspection.bytes
        gone += 1
    if gone:
        log.info("event=inspections_evicted count=%s bytes_left=%s", gone, total)
    return gone
