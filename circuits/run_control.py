"""The run lifecycle as a service: the status machine, pause / resume, and lag.

    created -> running <-> paused
    created | running | paused -> stopped      (the user)
    created | running | paused -> failed       (the worker, with the error)

Pause holds ticks (pushes are still accepted and logged, up to the backpressure
limit); resume continues from the first unapplied push. Every transition is published
to the run's watchers as a `status` message after it commits.
"""
from __future__ import annotations

import math

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Sum

from .models import Push, Run, RunStatus
from .services import ServiceError

#: status -> the statuses a user may move a run to from there
USER_TRANSITIONS = {
    RunStatus.CREATED: {RunStatus.STOPPED},
    RunStatus.RUNNING: {RunStatus.PAUSED, RunStatus.STOPPED},
    RunStatus.PAUSED: {RunStatus.RUNNING, RunStatus.STOPPED},
    RunStatus.STOPPED: set(),
    RunStatus.FAILED: set(),
}
_VERB = {RunStatus.PAUSED: "paused", RunStatus.RUNNING: "resumed", RunStatus.STOPPED: "stopped"}


def lag_of(run_id: int) -> dict:
    """How far a run's ticks are behind its accepted pushes.

    pushes/rows: accepted but not yet applied; ticks: the ticks needed to apply them
    (at most DBSPWEB_TICK_MAX_PUSHES pushes per tick).
    """
    agg = Push.objects.filter(run_id=run_id, applied_tick__isnull=True).aggregate(n=Count("id"), rows=Sum("row_count"))
    pending = agg["n"] or 0
    return {"pushes": pending, "rows": agg["rows"] or 0, "ticks": math.ceil(pending / max(settings.TICK_MAX_PUSHES, 1))}


def status_message(run: Run, lag: dict | None = None) -> dict:
    """The websocket's `status` message for a run as it is now."""
    return {
        "type": "status",
        "status": run.status,
        "tick": run.current_tick,
        "current_tick": run.current_tick,
        "error": run.error,
        "lag": lag if lag is not None else lag_of(run.pk),
    }


def _transition(run: Run, to: str) -> Run:
    from workers import dispatch
    from workers.broadcast import publish_status

    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run.pk)
        if to not in USER_TRANSITIONS[run.status]:
            allowed = {RunStatus.PAUSED: "running", RunStatus.RUNNING: "paused"}.get(to, "created, running or paused")
            raise ServiceError(
                f"Run {run.pk} is {run.status}; only a {allowed} run can be {_VERB[to]}.", 409,
                [{"field": "status", "status": run.status, "message": f"cannot go from {run.status} to {to}"}],
            )
        run.status = to
        run.save(update_fields=["status", "updated_at"])
        if to == RunStatus.RUNNING:
            transaction.on_commit(lambda: dispatch.wake(run.pk))
        transaction.on_commit(lambda: publish_status(run))
    return run


def pause_run(run: Run) -> Run:
    """Hold the run's ticks: a tick already computing still commits, no new one starts."""
    return _transition(run, RunStatus.PAUSED)


def resume_run(run: Run) -> Run:
    """Continue a paused run: its worker applies every push accepted meanwhile."""
    return _transition(run, RunStatus.RUNNING)


def refuse_when_full(run: Run) -> None:
    """Backpressure: refuse a push (429, Retry-After) while the run already has
    DBSPWEB_MAX_PENDING_PUSHES accepted pushes waiting to be applied."""
    limit = settings.MAX_PENDING_PUSHES
    lag = lag_of(run.pk)
    if lag["pushes"] < limit:
        return
    recent = list(run.ticks.order_by("-tick").values_list("ms", flat=True)[:20])
    tick_s = (sum(recent) / len(recent) / 1000) if recent else 1.0
    retry_after = min(60, max(1, math.ceil(lag["ticks"] * tick_s)))
    waiting = "paused; resume it to apply them" if run.status == RunStatus.PAUSED else "applying them"
    raise ServiceError(
        f"Run {run.pk} has {lag['pushes']} pushes waiting to be applied, the most it accepts "
        f"(DBSPWEB_MAX_PENDING_PUSHES={limit}); the run is {waiting}. Nothing was stored: "
        f"retry after {retry_after} s.",
        429,
        [{"field": "pending_pushes", "pending": lag["pushes"], "limit": limit, "retry_after": retry_after,
          "message": f"{lag['pushes']} of at most {limit} pushes are waiting"}],
        headers={"Retry-After": str(retry_after)},
    )
