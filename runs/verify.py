"""Verify a run: recompute its views at a tick from the input log, from scratch, and
compare them with the incremental outputs it stored (runs/outputs.py).

`request_verification` records a `Verification` (queued) and, after the commit, hands
it to the workers through the seam (runs/dispatch.py `verify`): a worker process of its
own consumes the verification queue (workers/verify.py), so a long verification never
holds a run's tick loop. The resource reports status, progress (0..1) and the result:
`{"ok": true}` or, per differing view, the rows the incremental outputs lack
(`missing`) or have too many of (`extra`), with weights.
"""
from __future__ import annotations

from django.db import transaction

from circuits.services import ServiceError

from . import dispatch, fair_queue
from .models import Run, Verification, VerificationStatus


def request_verification(run: Run, tick: int | None = None,
                         requester: fair_queue.Requester = fair_queue.SYSTEM) -> Verification:
    """A queued verification of the run at `tick` (default: the current one): the one
    already queued or running for that tick if any (an identical request shares it), else
    a new one, queued fairly (runs/fair_queue.py: the requester's priority; past its cap
    a 429 that records nothing)."""
    tick = run.current_tick if tick is None else tick
    if not 0 <= tick <= run.current_tick:
        where = "it has no tick yet" if run.current_tick < 0 else f"ticks go from 0 to {run.current_tick} (the current one)"
        raise ServiceError(f"Run {run.pk} cannot be verified at tick {tick}: {where}.", 400,
                           [{"field": "tick", "message": f"{tick} is not between 0 and the current tick {run.current_tick}"}])
    pending = run.verifications.filter(tick=tick, status__in=(VerificationStatus.QUEUED, VerificationStatus.RUNNING))
    if (known := pending.order_by("-id").first()) is not None:
        return known
    with transaction.atomic():
        verification = Verification.objects.create(run=run, tick=tick)
        fair_queue.admit(requester, run.pk, "verify", verification.pk)
        transaction.on_commit(lambda: dispatch.verify(verification.pk, priority=requester.priority))
    return verification


def verification_json(v: Verification) -> dict:
    body = {"id": v.pk, "run": v.run_id, "tick": v.tick, "status": v.status, "progress": round(v.progress, 3),
            "method": v.method or None, "error": v.error or None,
            "created_at": v.created_at.isoformat(), "finished_at": v.finished_at.isoformat() if v.finished_at else None}
    if v.result is not None:
        body |= v.result  # ok, views (differing rows per view)
    return body
