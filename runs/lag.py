"""A run's lag (accepted pushes not applied yet) and the backpressure built on it."""
from __future__ import annotations

import math

from django.conf import settings
from django.db.models import Count, Sum

from circuits.services import ServiceError

from .models import Push, Run, RunStatus


def lag_of(run_id: int) -> dict:
    """How far a run's ticks are behind its accepted pushes.

    pushes/rows: accepted but not yet applied; ticks: the ticks needed to apply them
    (at most DBSPWEB_TICK_MAX_PUSHES pushes per tick).
    """
    agg = Push.objects.filter(run_id=run_id, applied_tick__isnull=True).aggregate(n=Count("id"), rows=Sum("row_count"))
    pending = agg["n"] or 0
    return {"pushes": pending, "rows": agg["rows"] or 0, "ticks": math.ceil(pending / max(settings.TICK_MAX_PUSHES, 1))}


def with_push(lag: dict, rows: int) -> dict:
    """The lag once one more push of `rows` rows is accepted."""
    pushes = lag["pushes"] + 1
    return {"pushes": pushes, "rows": lag["rows"] + rows, "ticks": math.ceil(pushes / max(settings.TICK_MAX_PUSHES, 1))}


def refuse_when_full(run: Run) -> dict:
    """Backpressure: refuse a push (429, Retry-After) while the run already has
    DBSPWEB_MAX_PENDING_PUSHES accepted pushes waiting to be applied. Returns the lag."""
    limit = settings.MAX_PENDING_PUSHES
    lag = lag_of(run.pk)
    if lag["pushes"] < limit:
        return lag
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
