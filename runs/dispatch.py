"""The seam between runs and the workers that execute them.

The runs layer never imports the workers: it asks for work through the functions here,
and the workers app registers what carries it out when Django starts
(workers/apps.py: Celery tasks on the right queue). Everything these functions drive is
already committed in the database; sending is best effort (a lost wake-up is re-driven
by the workers' sweeper), so each returns whether the message went out.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from django.core.exceptions import ImproperlyConfigured


@dataclass(frozen=True)
class Workers:
    start: Callable[[int], bool]  # a new run: some worker takes it and starts its engine
    stop: Callable[[int], bool]  # a stopped (or deleted) run: its worker frees what it holds
    wake: Callable[[int], bool]  # new pushes or a resume: the run's worker applies pending pushes
    worker_of: Callable[[int], str]  # the worker that owns the run now ('' when none does)
    # the verification queue's jobs, by id, each with a priority (runs/fair_queue.py: 0 first)
    verify: Callable[..., bool] | None = None  # a queued Verification: recompute and compare
    explain: Callable[..., bool] | None = None  # a queued Explanation: work out a row's derivation
    inspect: Callable[..., bool] | None = None  # a queued Inspection: every node's data at its tick
    # claim(run_id, since): False while a wake-up for the run is already on its way (sent,
    # and the worker has not started on the run since); True when one should be sent
    claim_wake: Callable[[int, str], bool] | None = None


_workers: Workers | None = None


def register(workers: Workers) -> None:
    global _workers
    _workers = workers


def _registered() -> Workers:
    if _workers is None:
        raise ImproperlyConfigured("No workers are registered to execute runs: add 'workers' to INSTALLED_APPS.")
    return _workers


def start(run_id: int) -> bool:
    return _registered().start(run_id)


def stop(run_id: int) -> bool:
    return _registered().stop(run_id)


def wake(run_id: int) -> bool:
    return _registered().wake(run_id)


def wake_pushed(run_id: int, since: str) -> bool:
    """New pushes: wake the run's worker unless a wake-up is already on its way (it
    will see these pushes too: the worker reads the log after it takes the wake-up).
    `since` tells this run apart from an earlier one with the same id (its creation)."""
    claim = _registered().claim_wake
    if claim is not None and not claim(run_id, since):
        return True
    return wake(run_id)


def worker_of(run_id: int) -> str:
    return _registered().worker_of(run_id)


def verify(verification_id: int, priority: int = 0) -> bool:
    workers = _registered()
    if workers.verify is None:
        raise ImproperlyConfigured("The registered workers do not verify runs.")
    return workers.verify(verification_id, priority=priority)


def explain(explanation_id: int, priority: int = 0) -> bool:
    workers = _registered()
    if workers.explain is None:
        raise ImproperlyConfigured("The registered workers do not explain rows.")
    return workers.explain(explanation_id, priority=priority)


def inspect(inspection_id: int, priority: int = 0) -> bool:
    workers = _registered()
    if workers.inspect is None:
        raise ImproperlyConfigured("The registered workers do not inspect runs.")
    return workers.inspect(inspection_id, priority=priority)
