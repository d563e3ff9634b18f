"""Explain a row of a run (GET /api/runs/<id>/explain/): why it is in a view (or any
node) at a tick and why it changed then, down to the input rows and the pushes that
brought them (circuits with event-time windows, or z⁻¹, I, D, too: their steps can
reach earlier ticks, each input row with the pushes of its own tick).

The derivation is the engine's (dbsp/explain/, on the reference evaluator's recomputation
from the applied input log); this module reads the log, checks the request's parameters
(each bad one is a 400 naming it), and attaches to every input row of the derivation the
pushes that inserted or deleted it: through the tick for a row's contents, at the tick
for a change. Up to EXPLAIN_SYNC_MAX_ROWS logged rows through the tick (settings) it runs
in the request (about half a second at 20 000 rows, bench/README.md); above that, up to
EXPLAIN_MAX_ROWS, it is queued as an `Explanation` and carried out on the verification
queue (runs/dispatch.py `explain`, workers/explain.py), never by a worker that ticks
runs: the request answers 202 with the URL to poll. Larger logs are refused.

Queued explanations are queued fairly (runs/fair_queue.py: the requester's priority, a
cap per requester and per run, 429 past it). An identical request (same run, tick, row,
node, mode, iteration, page) gets the queued, running or done explanation already there,
taking no slot. The pages of one explanation share one replay of the log: the worker
carries out the queued pages of the same row together, and keeps the last replay
(`Values`, memoizing every node's value) for the pages asked later.
"""
from __future__ import annotations

import json
import logging
from collections import defaultdict
from dataclasses import asdict, dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from circuits.services import ServiceError, plan_for
from dbsp.errors import DataInvalid
from dbsp.explain import NotExplainable, RowNotFound, Values, explain, step_json
from dbsp.explain.scopes import scopes
from dbsp.runtime import changes_and_items, changes_from_records
from dbsp.types import coerce_row, row_to_dict

from . import dispatch, fair_queue
from .models import Explanation, ExplanationStatus, Push, Run

log = logging.getLogger(__name__)

PAGE_SIZE, MAX_PAGE_SIZE = 20, 200
PUSHES_SHOWN = 20


def _bad(field: str, message: str, detail: str | None = None) -> ServiceError:
    return ServiceError(detail or f"Query parameter {field!r}: {message}.", 400, [{"field": field, "message": message}])


def _int(params, name: str, default: int | None) -> int | None:
    value = params.get(name)
    if value in (None, ""):
        return default
    try:
        return int(value)
    except ValueError:
        raise _bad(name, f"expected an integer, got {value!r}") from None


def _row(params, schema, name: str) -> tuple:
    text = params.get("row")
    if text in (None, ""):
        raise _bad("row", f"required: the row's values as a JSON object of {name}'s columns ({', '.join(schema.names)})")
    try:
        data = json.loads(text)
    except ValueError as e:
        raise _bad("row", f"not JSON ({e})") from None
    if not isinstance(data, dict):
        raise _bad("row", f"expected a JSON object of column values, got {type(data).__name__}")
    missing = [c for c in schema.names if c not in data]
    row, problems = coerce_row(data, schema, 0)
    errors = [{"field": f"row.{p.field}" if p.field else "row", "message": p.message.removeprefix("row 0: ")} for p in problems]
    errors += [{"field": f"row.{c}", "message": f"missing column {c!r}"} for c in missing]
    if errors:
        raise ServiceError(f"The row does not fit {name!r}: " + "; ".join(f"{e['field']}: {e['message']}" for e in errors),
                           400, errors)
    return row


def _iteration(params):
    text = params.get("iteration")
    if text in (None, ""):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, list) and value and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        return tuple(value)
    raise _bad("iteration", f"expected an iteration number (or a JSON list of them for nested fixed points), got {text!r}")


def _changes(run: Run, plan, tick: int) -> tuple[list[dict], list[Push]]:
    """Each tick's input changes through `tick`, from the applied log (and the pushes)."""
    pushes = list(run.pushes.filter(applied_tick__isnull=False, applied_tick__lte=tick)
                  .select_related("user").order_by("sequence"))
    records: list[dict[str, list]] = [defaultdict(list) for _ in range(tick + 1)]
    for p in pushes:
        records[p.applied_tick][p.input].extend({"weight": r["weight"], "data": r["data"]} for r in p.records)
    return [{name: changes_from_records(recs, plan.inputs[name], plan.primary_key(name)) for name, recs in by_input.items()}
            for by_input in records], pushes


class _Pushes:
    """Input row -> the pushes whose records inserted or deleted it (a keyed input: its key)."""

    def __init__(self, plan, pushes: list[Push]):
        self.plan = plan
        self.by_row: dict[tuple, list[tuple[Push, int]]] = defaultdict(list)
        for p in pushes:
            if p.input not in plan.inputs:
                continue
            _, items = changes_and_items([{"weight": r["weight"], "data": r["data"]} for r in p.records], plan.inputs[p.input])
            for row, weight in items:
                self.by_row[(p.input, self._key(p.input, row))].append((p, weight))

    def _key(self, name: str, row: tuple) -> tuple:
        key = self.plan.primary_key(name)
        return tuple(row[self.plan.inputs[name].names.index(k)] for k in key) if key else row

    def of(self, name: str, row: tuple, tick: int, only_at_tick: bool) -> tuple[list[dict], int]:
        found = [(p, w) for p, w in self.by_row.get((name, self._key(name, row)), ())
                 if p.applied_tick == tick or (not only_at_tick and p.applied_tick <= tick)]
        shown = found[-PUSHES_SHOWN:]  # the latest ones
        return [{"sequence": p.sequence, "tick": p.applied_tick, "received_at": p.received_at.isoformat(),
                 "user": p.user.username if p.user else None, "weight": w,
                 "row": row_to_dict(row, self.plan.inputs[name])} for p, w in shown], len(found)


@dataclass
class Asked:
    """A checked request: what to explain, where and how much."""

    tick: int
    view: str | None
    node: str
    mode: str | None
    page: int
    page_size: int
    row: dict  # as given (JSON values)
    iteration: int | list | None


def parse(run: Run, params) -> Asked:
    """The query parameters, checked: a 400 naming the first bad one."""
    if run.current_tick < 0:
        raise _bad("tick", "the run has no tick yet", f"Run {run.pk} has no tick yet: push some rows first.")
    tick = _int(params, "tick", run.current_tick)
    if not 0 <= tick <= run.current_tick:
        raise _bad("tick", f"{tick} is not between 0 and the current tick {run.current_tick}")
    plan = plan_for(run.version)
    view, node = params.get("view") or None, params.get("node") or None
    if (view is None) == (node is None):
        raise _bad("view", "give a view (an output of the circuit) or a node, not both" if view else
                   f"required: one of the circuit's views ({', '.join(plan.views)})")
    if view is not None and view not in plan.views:
        raise _bad("view", f"no view {view!r} in this circuit (views: {', '.join(plan.views) or 'none'})")
    if node is not None and (node not in scopes(plan) or plan.schemas.get(node) is None):
        raise _bad("node", f"no node {node!r} with rows in this circuit")
    name = view or node
    mode = params.get("mode") or None
    if mode not in (None, "contents", "change"):
        raise _bad("mode", f"expected contents or change, got {mode!r}")
    page = _int(params, "page", 0)
    page_size = _int(params, "page_size", PAGE_SIZE)
    if page < 0:
        raise _bad("page", f"must be 0 or more, got {page}")
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise _bad("page_size", f"must be between 1 and {MAX_PAGE_SIZE}, got {page_size}")
    row = _row(params, plan.schemas[name], name)
    iteration = _iteration(params)
    return Asked(tick, view, name, mode, page, page_size, row_to_dict(row, plan.schemas[name]),
                 list(iteration) if isinstance(iteration, tuple) else iteration)


#: A circuit that runs tick by tick (event-time windows, z⁻¹/I/D) is replayed one step per
#: tick, each over what the windows hold so far: its log counts once per this many ticks
#: against EXPLAIN_SYNC_MAX_ROWS (bench/README.md: 20 000 rows over 100 ticks of the sensor
#: demo take about 20 s; 2 000 over 100, 2.4 s).
TICKS_PER_ROW_COUNT = 10


def replay_cost(plan, rows: int, tick: int) -> int:
    """The log's rows as they weigh against EXPLAIN_SYNC_MAX_ROWS."""
    return rows if plan.whole_tables else max(rows, rows * (tick + 1) // TICKS_PER_ROW_COUNT)


def logged_rows(run: Run, tick: int) -> int:
    return run.pushes.filter(applied_tick__isnull=False, applied_tick__lte=tick).aggregate(n=Sum("row_count"))["n"] or 0


def _same(run: Run, asked: Asked, pages: bool = False):
    """The run's explanations asked with the same parameters (`pages`: but any page)."""
    wanted = asdict(asked)
    skip = {"page"} if pages else set()
    for e in run.explanations.exclude(status=ExplanationStatus.FAILED).order_by("-id")[:500]:
        if {k: v for k, v in e.params.items() if k not in skip} == {k: v for k, v in wanted.items() if k not in skip}:
            yield e


def explain_row(run: Run, params, requester: fair_queue.Requester = fair_queue.SYSTEM) -> tuple[int, dict]:
    """(HTTP status, body): 200 and the explanation, or 202 and a queued Explanation
    (an identical one asked before: that one; past the requester's cap: a 429)."""
    asked = parse(run, params)
    rows = logged_rows(run, asked.tick)
    if rows > settings.EXPLAIN_MAX_ROWS:
        raise ServiceError(
            f"Run {run.pk} has {rows} logged rows through tick {asked.tick}; explain recomputes the run and takes at "
            f"most {settings.EXPLAIN_MAX_ROWS} (EXPLAIN_MAX_ROWS).", 400,
            [{"field": "tick", "message": f"{rows} logged rows through tick {asked.tick}, more than {settings.EXPLAIN_MAX_ROWS}"}])
    if replay_cost(plan_for(run.version), rows, asked.tick) <= settings.EXPLAIN_SYNC_MAX_ROWS:
        return 200, compute(run, asked)
    known = next(_same(run, asked), None)
    if known is not None:
        return (200 if known.status == ExplanationStatus.DONE else 202), explanation_json(known)
    with transaction.atomic():
        queued = Explanation.objects.create(run=run, params=asdict(asked))
        fair_queue.admit(requester, run.pk, "explain", queued.pk)
        transaction.on_commit(lambda: dispatch.explain(queued.pk, priority=requester.priority))
    return 202, explanation_json(queued)


def explanation_json(e: Explanation) -> dict:
    body = {"id": e.pk, "status": e.status, "url": f"/api/runs/{e.run_id}/explain/{e.pk}/"}
    if e.status == ExplanationStatus.DONE:
        body |= e.result
    elif e.status == ExplanationStatus.FAILED:
        body["error"] = e.error
    return body


#: The last replay the worker made: ((run, version, created_at, tick), Values). One only:
#: a replay of 10^6 rows holds every node's value in memory.
_replayed: dict = {}
#: How many replays of a log this process made (what the page sharing saves; bench, tests).
replays = 0


def replay(run: Run, tick: int):
    """(plan, changes, pushes, Values) of the run's log through `tick`: the worker's last
    one again when it is the same run and tick (applied ticks never change)."""
    global replays
    key = (run.pk, run.version_id, run.created_at, tick)
    if key not in _replayed:
        _replayed.clear()
        plan = plan_for(run.version)
        changes, pushes = _changes(run, plan, tick)
        replays += 1
        _replayed[key] = (plan, changes, pushes, Values(plan, changes))
        log.info("event=explain_replay run=%s tick=%s", run.pk, tick)
    return _replayed[key]


def carry_out(explanation_id: int) -> str | None:
    """Work out one queued Explanation (on the verification queue's worker), and with it
    the other queued pages of the same row (one replay); its status."""
    claimed = Explanation.objects.filter(pk=explanation_id, status=ExplanationStatus.QUEUED).update(
        status=ExplanationStatus.RUNNING)
    if not claimed:
        return None
    e = Explanation.objects.select_related("run__version").get(pk=explanation_id)
    status = _carry_out(e)
    for page in _same(e.run, Asked(**e.params), pages=True):
        if page.pk != e.pk and Explanation.objects.filter(pk=page.pk, status=ExplanationStatus.QUEUED).update(
                status=ExplanationStatus.RUNNING):
            _carry_out(Explanation.objects.select_related("run__version").get(pk=page.pk))
            fair_queue.release("explain", page.pk)  # its own task finds it done
    return status


def _carry_out(e: Explanation) -> str:
    try:
        e.result, e.status = compute(e.run, Asked(**e.params), shared=True), ExplanationStatus.DONE
    except ServiceError as err:
        e.status, e.error = ExplanationStatus.FAILED, {"status": err.status, "detail": err.detail, "errors": err.errors}
    except Exception as err:  # noqa: BLE001 - a failed explanation says why; the run is untouched
        log.exception("event=explanation_failed explanation=%s run=%s", e.pk, e.run_id)
        e.status, e.error = ExplanationStatus.FAILED, {"status": 500, "detail": f"{type(err).__name__}: {err}", "errors": []}
    e.finished_at = timezone.now()
    e.save(update_fields=["result", "status", "error", "finished_at"])
    return e.status


def compute(run: Run, asked: Asked, shared: bool = False) -> dict:
    """The explanation of a checked request, from the applied log (`shared`: the
    process's last replay of it, in the worker; a request's own otherwise)."""
    tick, view, name = asked.tick, asked.view, asked.node
    if shared:
        plan, changes, pushes, values = replay(run, tick)
    else:
        plan = plan_for(run.version)
        changes, pushes = _changes(run, plan, tick)
        values = None
    row, _ = coerce_row(asked.row, plan.schemas[name], 0)
    iteration = tuple(asked.iteration) if isinstance(asked.iteration, list) else asked.iteration
    try:
        e = explain(plan, changes, tick, name, row, iteration=iteration, mode=asked.mode, page=asked.page,
                    page_size=asked.page_size, values=values)
    except NotExplainable as err:
        field = err.field if err.field in ("iteration", "mode") else ("view" if view else "node")
        raise _bad(field, str(err), f"Cannot explain this row: {err}.") from None
    except RowNotFound as err:
        raise ServiceError(f"Nothing to explain: {err}.", 404, [{"field": "row", "message": str(err)}]) from None
    except DataInvalid as err:  # a log that no longer fits the plan (not expected)
        raise ServiceError(f"The run's log cannot be replayed: {err}", 400) from None
    logged = _Pushes(plan, pushes)

    def pushes_of(step):
        # contents: the pushes through the step's tick; a change (or, run as drawn, the
        # input's value, which is the change pushed then): the pushes at it
        if not step.is_input:
            return {}
        found, count = logged.of(step.node, step.row, step.tick, only_at_tick=step.mode in ("change", "value"))
        return {"pushes": found, "pushes_count": count}

    def tree(root):
        return step_json(root, lambda key: plan.schemas[key], pushes_of) if root is not None else None

    def inputs(mode):
        out, seen = [], set()
        for s in e.inputs(mode):
            if (s.node, s.row, s.tick) in seen:
                continue
            seen.add((s.node, s.row, s.tick))
            item = {"input": s.node, "row": row_to_dict(s.row, plan.inputs[s.node]), "weight": s.after,
                    "tick": s.tick} | pushes_of(s)
            if s.mode == "change":
                item |= {"before": s.before, "after": s.after}
            out.append(item)
        return out

    def causes():
        return [{"input": s.node, "row": row_to_dict(s.row, plan.inputs[s.node]), "weight": after, "tick": s.tick,
                 "before": before, "after": after} | pushes_of(s) for s, before, after in e.causes]

    return {
        "run": run.pk, "tick": tick, "view": view, "node": name, "iteration": e.iteration[0] if len(e.iteration) == 1
        else (list(e.iteration) or None), "row": row_to_dict(row, plan.schemas[name]),
        "weight": e.weight, "before": e.before, "truncated": e.truncated,
        "contents": tree(e.contents), "change": tree(e.change),
        "inputs": inputs("contents"),
        # the tick's input changes the row's change comes from (rows that changed at the tick)
        "causes": causes(),
    }
