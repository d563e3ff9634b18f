"""A run's lifecycle as the user drives it: start, the status machine, pause / resume,
stop, and the runs of a deleted circuit.

    created -> running <-> paused
    created | running | paused -> stopped      (the user)
    created | running | paused -> failed       (the worker, with the error)

A start, a stop, a resume and a delete reach the workers through runs/dispatch.py,
once committed; the workers (workers/tasks.py, workers/ticks.py) take it from there.
Pause holds ticks (pushes are still accepted and logged, up to the backpressure
limit); resume continues from the first unapplied push. Every transition is published
to the run's watchers as a `status` message after it commits.
"""
from __future__ import annotations

from django.conf import settings
from django.db import transaction

from circuits.models import Circuit, CircuitVersion
from circuits.services import ServiceError
from dbsp import compile_plan
from dbsp.errors import CircuitInvalid

from . import dispatch, inspection_store
from .broadcast import publish_access_check, publish_status
from .models import Run, RunStatus

#: status -> the statuses a user may move a run to from there
USER_TRANSITIONS = {
    RunStatus.CREATED: {RunStatus.STOPPED},
    RunStatus.RUNNING: {RunStatus.PAUSED, RunStatus.STOPPED},
    RunStatus.PAUSED: {RunStatus.RUNNING, RunStatus.STOPPED},
    RunStatus.STOPPED: set(),
    RunStatus.FAILED: set(),
}
_VERB = {RunStatus.PAUSED: "paused", RunStatus.RUNNING: "resumed", RunStatus.STOPPED: "stopped"}


def start_run(circuit: Circuit, user, version: CircuitVersion | None = None) -> Run:
    version = version or circuit.latest_version
    if version is None:
        raise ServiceError("The circuit has no version to run.", 400)
    try:
        compile_plan(version.document)
    except CircuitInvalid as e:
        raise ServiceError("The circuit document is invalid.", 400, [p.as_dict() for p in e.problems]) from None
    with transaction.atomic():
        run = Run.objects.create(circuit=circuit, version=version, created_by=user, queue=settings.CELERY_TASK_DEFAULT_QUEUE)
        transaction.on_commit(lambda: dispatch.start(run.pk))
    return run


def stop_run(run: Run) -> Run:
    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run.pk)
        if run.status in (RunStatus.STOPPED, RunStatus.FAILED):
            return run
        run.status = RunStatus.STOPPED
        run.save(update_fields=["status", "updated_at"])
        transaction.on_commit(lambda: dispatch.stop(run.pk))
    publish_status(run)
    return run


def _transition(run: Run, to: str) -> Run:
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


def delete_runs_of(sender, circuit: Circuit, **kwargs) -> None:
    """circuits.signals.circuit_deleting: delete the circuit's runs (with their input log
    and outputs) before the versions they protect; once the delete commits, the workers
    release the engines of those that were active."""
    run_ids = list(circuit.runs.values_list("pk", flat=True))
    active = list(circuit.runs.exclude(status__in=[RunStatus.STOPPED, RunStatus.FAILED]).values_list("pk", flat=True))
    Run.objects.filter(pk__in=run_ids).delete()
    transaction.on_commit(lambda: publish_access_check(run_ids))  # their watchers' sockets close
    transaction.on_commit(lambda: inspection_store.discard_runs(run_ids))  # their node inspections' files
    for run_id in active:
        transaction.on_commit(lambda run_id=run_id: dispatch.stop(run_id))
