"""Celery tasks: the run lifecycle. Run workers with a non-forking pool (solo/threads)."""
from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready

from circuits.models import Run, RunStatus

from . import engines, ticks
from .broadcast import publish_status

log = logging.getLogger(__name__)


@worker_ready.connect
def warm_spark(**kwargs):
    """Start the JVM when the worker starts, not on the first run (5-9 s)."""
    engines.spark_session()
    log.info("Spark session ready")


@shared_task(name="workers.start_run")
def start_run(run_id: int) -> None:
    run = Run.objects.select_related("version").filter(pk=run_id).first()
    if run is None or run.status != RunStatus.CREATED:
        return
    try:
        engines.runtime_for(run)
    except Exception as e:
        log.exception("run %s: could not start", run_id)
        Run.objects.filter(pk=run_id).update(status=RunStatus.FAILED, error=f"{type(e).__name__}: {e}")
        publish_status(Run.objects.get(pk=run_id))
        return
    Run.objects.filter(pk=run_id, status=RunStatus.CREATED).update(status=RunStatus.RUNNING, worker=ticks.WORKER_ID)
    publish_status(Run.objects.get(pk=run_id))
    ticks.process(run_id)


@shared_task(name="workers.process_run")
def process_run(run_id: int) -> int:
    return ticks.process(run_id)


@shared_task(name="workers.stop_run")
def stop_run(run_id: int) -> None:
    engines.release(run_id)
