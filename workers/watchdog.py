"""The tick watchdog: no tick runs longer than DBSPWEB_TICK_BUDGET seconds.

A worker runs one tick at a time on its main thread (solo pool) and holds a JVM, so a
tick cannot be killed on its own. A thread of the worker process watches the tick in
progress (`watching`); when it overruns its budget the watchdog

1. cancels the tick's Spark jobs (each tick runs in a Spark job group of its own),
2. raises TickOverBudget into the tick's thread, which takes effect as soon as that
   thread runs Python again: the tick fails its run like any failing tick, naming the
   node the engine was evaluating (`Runtime.node`);
3. if the tick still has not ended DBSPWEB_TICK_GRACE seconds later (stuck in native
   code: a regex, an Arrow kernel, a JVM call that ignores cancellation), fails the run
   itself (on its own database connection, fenced by the lease epoch like any write of
   a tick), gives up the worker's other runs, and ends the process: a supervisor
   (scripts/run, compose's restart policy) starts a fresh one.
"""
from __future__ import annotations

import ctypes
import logging
import os
import threading
import time
from contextlib import contextmanager

from django.conf import settings
from django.db import close_old_connections

from . import leases
from .identity import worker_id

log = logging.getLogger(__name__)

#: The exit status of a worker the watchdog ended (a tick stuck past its grace period).
EXIT_STUCK = 70


class TickOverBudget(Exception):
    """Raised into a tick's thread by the watchdog (constructed without arguments there)."""


class _Watch:
    def __init__(self, run_id: int, epoch: int, tick: int, runtime, mark_failed):
        self.run_id, self.epoch, self.tick, self.runtime = run_id, epoch, tick, runtime
        self.mark_failed = mark_failed
        self.thread = threading.get_ident()
        self.started = time.monotonic()
        self.fired_node: str | None = None
        self.fired = False

    @property
    def group(self) -> str:
        return f"dbspweb-run-{self.run_id}-tick-{self.tick}"

    def node(self) -> str | None:
        return getattr(self.runtime, "node", None)

    def describe(self) -> str:
        node = self.fired_node or self.node()
        where = f"node '{node}' ({self._kind(node)}): " if node else ""
        return (f"{where}tick {self.tick} ran over its time budget of {settings.TICK_BUDGET:g} s "
                f"(DBSPWEB_TICK_BUDGET) and was stopped")

    def error(self) -> TickOverBudget:
        error = TickOverBudget(self.describe())
        error.node = self.fired_node or self.node()
        return error

    def _kind(self, node: str) -> str:
        op = getattr(getattr(self.runtime, "plan", None), "operators", {}).get(node)
        return getattr(op, "kind", "node")


_lock = threading.Lock()
_current: _Watch | None = None
_thread: threading.Thread | None = None


def _spark_context(runtime):
    spark = getattr(runtime, "spark", None)
    try:
        return spark.sparkContext if spark is not None else None
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext: nothing to cancel there
        return None


def _raise_in(thread_id: int, exc_type) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exc_type) if exc_type else None)


@contextmanager
def watching(run_id: int, epoch: int, tick: int, runtime, mark_failed):
    """Run the body (a tick's engine work) under the budget; an overrun raises
    TickOverBudget with the node named. `mark_failed(run_id, tick, text, node, epoch)`
    fails the run if the tick does not stop (workers/ticks.py: fenced by the epoch)."""
    global _current
    watch = _Watch(run_id, epoch, tick, runtime, mark_failed)
    sc = _spark_context(runtime)
    if sc is not None:
        sc.setJobGroup(watch.group, f"run {run_id} tick {tick}", interruptOnCancel=True)
    _ensure_thread()
    with _lock:
        _current = watch
    try:
        yield watch
    except Exception as e:
        if watch.fired:  # the exception raised into it, a Spark job cancelled under it, ...
            raise watch.error() from (None if isinstance(e, TickOverBudget) else e)
        raise
    finally:
        with _lock:
            _current = None
            if watch.fired:
                _raise_in(watch.thread, None)  # an exception set but not yet raised: drop it
        if sc is not None:
            sc.setLocalProperty("spark.jobGroup.id", None)


def _ensure_thread() -> None:
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_loop, name="dbspweb-watchdog", daemon=True)
            _thread.start()


def _loop() -> None:
    while True:
        time.sleep(min(0.25, max(settings.TICK_BUDGET / 10, 0.02)))
        with _lock:
            watch = _current
            if watch is None:
                continue
            elapsed = time.monotonic() - watch.started
            if not watch.fired and elapsed > settings.TICK_BUDGET:
                _stop_tick(watch)
        if watch.fired and elapsed > settings.TICK_BUDGET + settings.TICK_GRACE:
            with _lock:
                still_running = _current is watch
            if still_running:
                _give_up(watch)


def _stop_tick(watch: _Watch) -> None:
    """Under _lock: cancel the tick's Spark jobs and raise into its thread."""
    watch.fired, watch.fired_node = True, watch.node()
    log.error("event=tick_over_budget run=%s tick=%s node=%s budget_s=%s worker=%s", watch.run_id, watch.tick,
              watch.fired_node, settings.TICK_BUDGET, worker_id())
    sc = _spark_context(watch.runtime)
    if sc is not None:
        try:
            sc.cancelJobGroup(watch.group)
        except Exception:  # noqa: BLE001 - the JVM is in trouble: the grace period covers it
            log.exception("event=cancel_failed run=%s", watch.run_id)
    _raise_in(watch.thread, TickOverBudget)


def _give_up(watch: _Watch) -> None:
    """The tick ignored the stop: fail its run from here, then end this worker process."""
    text = f"TickOverBudget: {watch.describe()}; it did not stop within {settings.TICK_GRACE:g} s " \
           "(DBSPWEB_TICK_GRACE) and its worker was restarted"
    log.error("event=tick_stuck run=%s tick=%s node=%s worker=%s", watch.run_id, watch.tick, watch.fired_node, worker_id())
    try:
        close_old_connections()
        watch.mark_failed(watch.run_id, watch.tick, text, watch.fired_node, watch.epoch)
        leases.release_all()  # the other runs this process held move to live workers at once
    except Exception:  # noqa: BLE001 - exiting anyway: the attempt counter fails the run after takeovers
        log.exception("event=tick_stuck_fail_failed run=%s", watch.run_id)
    logging.shutdown()
    os._exit(EXIT_STUCK)
