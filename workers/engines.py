"""The runs this worker process holds in memory: run id -> a SparkRuntime at its tick.

If the held runtime is missing or behind the database (another worker advanced the
run, or this process restarted), it is rebuilt by replaying the applied input log,
tick by tick, without publishing anything.
"""
from __future__ import annotations

import logging
import threading
from collections import defaultdict

from django.conf import settings

from dbsp import ZSet, compile_plan
from dbsp.runtime import changes_from_records
from dbsp.spark import SparkConfig, SparkRuntime, get_session

log = logging.getLogger(__name__)
_runtimes: dict[int, SparkRuntime] = {}
_lock = threading.Lock()


def spark_session():
    return get_session(
        SparkConfig(
            master=settings.SPARK_MASTER,
            remote=settings.SPARK_REMOTE,
            shuffle_partitions=settings.SPARK_SHUFFLE_PARTITIONS,
            driver_host=settings.SPARK_DRIVER_HOST,
            driver_memory=settings.SPARK_DRIVER_MEMORY,
        )
    )


def changes_of(pushes, plan) -> dict[str, ZSet]:
    """The pushes of one tick -> one change (Z-set) per input."""
    changes: dict[str, ZSet] = {}
    for p in pushes:
        z = changes_from_records(
            [{"weight": r["weight"], "data": r["data"]} for r in p.records], plan.inputs[p.input]
        )
        changes[p.input] = changes.get(p.input, ZSet()) + z
    return changes


def runtime_for(run) -> SparkRuntime:
    """This process's runtime for `run`, at the run's current tick."""
    with _lock:
        rt = _runtimes.get(run.pk)
        if rt is not None and rt.tick == run.current_tick:
            return rt
        plan = compile_plan(run.version.document)
        rt = SparkRuntime(plan, spark_session())
        by_tick = defaultdict(list)
        for p in run.pushes.filter(applied_tick__isnull=False).order_by("sequence"):
            by_tick[p.applied_tick].append(p)
        if by_tick:
            log.info("run %s: rebuilding state by replaying %d ticks", run.pk, len(by_tick))
        for tick in range(run.current_tick + 1):
            rt.step(changes_of(by_tick.get(tick, []), plan))
        _runtimes[run.pk] = rt
        return rt


def release(run_id: int) -> None:
    with _lock:
        rt = _runtimes.pop(run_id, None)
    if rt is not None:
        rt.close()
