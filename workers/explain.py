"""Work out a row's explanation queued by runs/explain.py (a log too large to explain
in the request), in the worker process that consumes the verification queue
(settings.VERIFY_QUEUE): it reads the log and computes on its own, never touching a
run's lease, runtime or tick loop."""
from __future__ import annotations

from celery import shared_task
from django.db import close_old_connections

from runs import fair_queue
from runs.explain import carry_out

from . import dispatch


@shared_task(name=dispatch.EXPLAIN_ROW)
def explain_row(explanation_id: int) -> str | None:
    close_old_connections()
    try:
        return carry_out(explanation_id)
    finally:
        fair_queue.release("explain", explanation_id)  # its requester may queue another
