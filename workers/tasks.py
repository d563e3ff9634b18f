"""Celery tasks: the run lifecycle. Run workers with a non-forking pool (solo/threads).

Each worker consumes the shared queue (CELERY_QUEUE) and a queue of its own
(workers/identity.py): tasks for a run go to the run's lease holder, so the process
that keeps the run's Spark state in memory applies its ticks; a run nobody holds goes
to the shared queue and whoever takes it becomes its holder.
"""
from __future__ import annotations

import logging
import threading

from celery import shared_task
from celery.signals import celeryd_after_setup, worker_ready, worker_shutdown
from django.conf import settings

from runs import input_tables
from runs.broadcast import publish_status
from runs.models import Run, RunStatus

from . import dispatch, engines, heartbeat, identity, leases, pumps, sweeper, ticks
from . import explain, verify  # noqa: F401 - register workers.verify_run, workers.explain_row (the verification queue's)
from . import inspection  # noqa: F401 - registers workers.inspect_run (also on the verification queue)

log = logging.getLogger(__name__)


@celeryd_after_setup.connect
def own_queue(sender, instance, **kwargs):
    """Consume a queue of this worker's own besides the shared one."""
    queue = identity.become(str(sender), instance.app.conf.task_default_queue or settings.CELERY_TASK_DEFAULT_QUEUE)
    instance.app.amqp.queues.select_add(queue)
    log.info("event=worker_identity worker=%s queue=%s", identity.worker_id(), queue)


@worker_ready.connect
def warm_spark(**kwargs):
    """Start the JVM when the worker starts, not on the first run (5-9 s); then the
    heartbeat (a worker counts as live once it can run ticks); then, in the background,
    warm the JVM's code for ticks over state held in Spark (engines.warm_up: a few
    seconds; a run's first ticks would otherwise pay it, 2x the later ones)."""
    engines.spark_session()
    heartbeat.start()
    pumps.start()  # the connectors of the runs this worker holds (workers/pumps.py)
    log.info("Spark session ready")
    if settings.SPARK_WARM_UP_TICKS > 0:
        threading.Thread(target=engines.warm_up, args=(settings.SPARK_WARM_UP_TICKS,), name="spark-warm-up",
                         daemon=True).start()


@worker_shutdown.connect
def give_up_runs(**kwargs):
    try:
        pumps.stop()
        heartbeat.stop()
        engines.release_all()
    except Exception:  # noqa: BLE001 - shutting down anyway; the leases will expire
        log.exception("could not release this worker's runs")


@shared_task(name=dispatch.START_RUN)
def start_run(run_id: int) -> None:
    run = Run.objects.select_related("version").filter(pk=run_id).first()
    if run is None or run.status != RunStatus.CREATED:
        return
    epoch = leases.acquire(run_id)
    if epoch is None:
        return  # another worker is starting it
    try:
        engines.runtime_for(run)
    except Exception as e:
        ticks.fail(run_id, run.current_tick + 1, e, epoch)
        return
    if Run.objects.filter(pk=run_id, status=RunStatus.CREATED).update(status=RunStatus.RUNNING, worker=identity.worker_id()):
        log.info("event=run_started run=%s worker=%s epoch=%s", run_id, identity.worker_id(), epoch)
        publish_status(run)
    ticks.drain(run_id, epoch)


@shared_task(name=dispatch.PROCESS_RUN)
def process_run(run_id: int) -> int:
    return ticks.process(run_id)


@shared_task(name=dispatch.STOP_RUN)
def stop_run(run_id: int) -> None:
    ticks.stop(run_id)


@shared_task(name=dispatch.FOLD_INPUTS)
def fold_inputs(run_id: int) -> int:
    """A quiet run's log folded into its input tables (sent by the sweeper)."""
    return input_tables.fold_idle(run_id)


@shared_task(name="workers.sweep")
def sweep() -> dict:
    return sweeper.sweep()
