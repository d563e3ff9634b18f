"""The verification queue's lanes: which queue a recomputation (verify, explain,
inspect) is sent to, and which queues each verification worker consumes.

Without the operators' lane (settings.VERIFY_OWNERS_LANE off) there is one queue,
VERIFY_QUEUE, and priorities alone order it (runs/fair_queue.py): an owner's job goes
first, but still waits for the jobs already running, one per worker, which an anonymous
flood keeps busy. With the lane on, the jobs of a run's owner and operators (priority
0, runs/fair_queue.OPERATOR; the system's too) go to VERIFY_OWNERS_QUEUE instead:

- the first verification worker consumes only that queue, so it is free for an owner
  whatever the readers queued;
- the others consume both (the broker hands out priority 0 first across queues), so an
  owner's jobs also run there when they are free, and still run if the first is down.

Each job is sent once, to one queue: the broker hands a message to one worker, and the
job's claim (QUEUED → RUNNING in the database) makes a redelivery a no-op.
"""
from __future__ import annotations

from django.conf import settings

from runs.fair_queue import OPERATOR


def queue_for(priority: int | None) -> str:
    """The queue a recomputation asked at `priority` is sent to."""
    if settings.VERIFY_OWNERS_LANE and (priority or 0) <= OPERATOR:
        return settings.VERIFY_OWNERS_QUEUE
    return settings.VERIFY_QUEUE


def worker_queues(index: int, count: int) -> list[str]:
    """The queues verification worker `index` (1-based) of `count` consumes."""
    if not settings.VERIFY_OWNERS_LANE:
        return [settings.VERIFY_QUEUE]
    if index == 1 and count >= 2:
        return [settings.VERIFY_OWNERS_QUEUE]  # the operators' lane: never an anonymous job
    return [settings.VERIFY_QUEUE, settings.VERIFY_OWNERS_QUEUE]
