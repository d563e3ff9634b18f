"""Send run work to the right worker: a run's holder gets it on its own queue; a run
nobody holds goes to the shared queue, where any worker may take it over.

Sending is best effort: everything it drives is already committed in the database, and
the sweeper re-drives a run whose wake-up was lost (broker down or restarted).

Tasks are sent by their registered names (workers/tasks.py defines them): the modules
below the Celery entry points send work without importing them.
"""
from __future__ import annotations

import logging
import threading

from django.conf import settings

from . import lanes, leases

log = logging.getLogger(__name__)
_local = threading.local()

START_RUN = "workers.start_run"
PROCESS_RUN = "workers.process_run"
STOP_RUN = "workers.stop_run"
VERIFY_RUN = "workers.verify_run"
EXPLAIN_ROW = "workers.explain_row"
INSPECT_RUN = "workers.inspect_run"
FOLD_INPUTS = "workers.fold_inputs"


def own_connection() -> None:
    """Send from this thread over a broker connection of its own (the worker's heartbeat
    thread), never over the connections the worker's main thread uses: kombu's
    connections are not thread-safe."""
    from dbspweb.celery import app

    _local.connection = app.connection_for_write()


def _send(task: str, run_id: int, queue: str | None, priority: int | None = None) -> bool:
    from dbspweb.celery import app

    connection = getattr(_local, "connection", None)
    try:
        app.send_task(task, (run_id,), queue=queue or settings.CELERY_TASK_DEFAULT_QUEUE, retry=False, connection=connection,
                      priority=priority)
        return True
    except Exception as e:  # noqa: BLE001 - the broker is down: the sweeper will re-drive it
        log.warning("event=dispatch_failed task=%s run=%s error=%r", task, run_id, e)
        if connection is not None:
            connection.close()  # reconnects on the next send
        return False


def _queue_of(worker: str) -> str:
    from .models import WorkerHeartbeat

    return WorkerHeartbeat.objects.filter(worker=worker).values_list("queue", flat=True).first() or ""


def to_holder_or_shared(task: str, run_id: int) -> bool:
    lease = leases.holder(run_id)
    return _send(task, run_id, _queue_of(lease.worker) if lease else None)


def wake(run_id: int) -> bool:
    """New pushes or a resume: have the run's worker apply pending pushes."""
    return to_holder_or_shared(PROCESS_RUN, run_id)


#: A claimed wake-up that no worker took within this many seconds (its message lost, its
#: worker busy or gone) no longer holds back the next one.
WAKE_CLAIM_TTL_S = 10
_redis = None


def _claims():
    global _redis
    if _redis is None:
        import redis

        _redis = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
    return _redis


def _claim_key(run_id: int, since: str) -> str:
    return f"{settings.CELERY_TASK_DEFAULT_QUEUE}:wake:{run_id}:{since}"


def claim_wake(run_id: int, since: str) -> bool:
    """Pushes arriving faster than ticks send one wake-up, not one each: True (send one)
    unless a wake-up for the run is on its way, i.e. claimed and not yet taken by a
    worker (`woken`). Redis unreachable: True (a wake-up too many costs a no-op task)."""
    try:
        return bool(_claims().set(_claim_key(run_id, since), 1, nx=True, ex=WAKE_CLAIM_TTL_S))
    except Exception as e:  # noqa: BLE001
        log.warning("event=wake_claim_failed run=%s error=%r", run_id, e)
        return True


def woken(run_id: int, since: str) -> None:
    """A worker took a wake-up of the run and reads its pending pushes next: the next
    push wakes it again."""
    try:
        _claims().delete(_claim_key(run_id, since))
    except Exception as e:  # noqa: BLE001 - the claim expires by itself
        log.warning("event=wake_release_failed run=%s error=%r", run_id, e)


def start(run_id: int) -> bool:
    return _send(START_RUN, run_id, None)


def stop(run_id: int) -> bool:
    """A stopped run: its holder releases the Spark state it keeps in memory."""
    return to_holder_or_shared(STOP_RUN, run_id)


def to_worker(task: str, run_id: int, worker: str) -> bool:
    return _send(task, run_id, _queue_of(worker) or None)


def verify(verification_id: int, priority: int = 0) -> bool:
    """A queued verification: to the verification queue, whose own worker process
    recomputes it (workers/verify.py) without holding any run's ticks. `priority`: the
    requester's (runs/fair_queue.py; 0 goes first: the Redis transport keeps one list per
    priority step and a worker pops the best non-empty one). Priority 0 goes to the
    operators' lane when it is on (workers/lanes.py)."""
    return _send(VERIFY_RUN, verification_id, lanes.queue_for(priority), priority)


def explain(explanation_id: int, priority: int = 0) -> bool:
    """A queued explanation of a row (a log too large for the request): to the
    verification queue too, whose worker reads the log and computes on its own."""
    return _send(EXPLAIN_ROW, explanation_id, lanes.queue_for(priority), priority)


def inspect(inspection_id: int, priority: int = 0) -> bool:
    """A queued inspection (every node of a run at a tick): to the verification queue,
    whose worker process recomputes it (workers/inspection.py) off the runs' tick path."""
    return _send(INSPECT_RUN, inspection_id, lanes.queue_for(priority), priority)
