"""The runs this worker process holds in memory: run id -> a SparkRuntime at its tick.

If the held runtime is missing or behind the database (another worker advanced the
run, or this process took the run over from a dead worker), it is rebuilt: from the
newest engine snapshot when there is one (workers/snapshots.py), then by replaying the
applied input log after it, tick by tick, without publishing anything.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict

from django.conf import settings

from dbsp import ZSet, arrow_change, compile_plan
from dbsp.errors import Problem
from dbsp.plan import RELATIONAL
from dbsp.types import BIGINT_MAX, BIGINT_MIN, raise_if
from dbsp.spark import SparkConfig, SparkRuntime, get_session

from . import snapshots
from .identity import worker_id

log = logging.getLogger(__name__)
_runtimes: dict[int, SparkRuntime] = {}
_lock = threading.RLock()


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


def warm_up(ticks: int) -> dict | None:
    """Run dbsp.spark.warmup on this process's session (a worker does, in the
    background, when it starts). A failure is logged, never raised: it costs speed only."""
    from dbsp.spark.trace import MERGE_POOL
    from dbsp.spark.warmup import warm_up as run

    try:
        spark = spark_session()
        # (this thread's jobs in the background pool: a run's ticks take free cores first)
        if hasattr(spark, "_jsc"):  # (Spark Connect has no scheduler pools to pick)
            spark.sparkContext.setLocalProperty("spark.scheduler.pool", MERGE_POOL)
        done = run(spark, ticks)
    except Exception:  # noqa: BLE001 - the worker runs ticks all the same, only its first ones slower
        log.exception("event=spark_warm_up_failed")
        return None
    log.info("event=spark_warm_up ticks=%s jobs=%s seconds=%s", done["ticks"], done["jobs"], done["seconds"])
    return done


def changes_of(pushes, plan, arrow: bool = False) -> dict[str, ZSet]:
    """The pushes of one tick -> one change per input, taken in push order, so that a
    keyed input (primary key: upsert) sees the last record of a key. Each push's change
    is read as logged (Arrow, or the JSON of older pushes), not validated again.

    arrow: the changes as Arrow tables (what the Spark backend steps as they are);
    otherwise Z-sets (the reference evaluator's form)."""
    tables: dict[str, list] = {}
    for p in pushes:
        tables.setdefault(p.input, []).append(p.change_table(plan.inputs[p.input]))
    changes = {}
    for name, parts in tables.items():
        schema, key = plan.inputs[name], plan.primary_key(name)
        change = arrow_change.concat(parts, schema)
        if key and len(parts) > 1:
            change = arrow_change.last_per_key(change, key)
        elif len(parts) > 1 and arrow_change.weights_may_overflow(change):
            z = arrow_change.to_zset(change, schema)  # Python ints: a sum beyond int64 fails the tick, naming the input
            raise_if([Problem(f"input {name!r}: the weights of row {row!r} sum to {w}, which does not fit in a signed "
                              "64-bit integer", node=name) for row, w in z if not BIGINT_MIN <= w <= BIGINT_MAX])
        changes[name] = change if arrow else arrow_change.to_zset(change, schema)
    return changes


def changes_for(rt, pushes) -> dict:
    """The pushes' changes in the form the runtime steps fastest: Arrow tables for the
    Spark backend (which takes them as they are), Z-sets for any other."""
    from dbsp.spark.backend import SparkRuntime as Spark  # the class itself (tests may stand in for the name)

    return changes_of(pushes, rt.plan, arrow=isinstance(rt, Spark))


def held_runs() -> list[int]:
    with _lock:
        return list(_runtimes)




def replay_in_one_step(plan) -> bool:
    """Whether the applied log may be replayed as one change instead of tick by tick.

    A relational circuit runs as D(Q(I(input))): each stateful operator keeps the
    integral of its inputs, so its state after ticks Δ1..Δn equals its state after the
    single change Δ1+…+Δn (integration is linear). The outputs of the replay are thrown
    away and the tick counter is set to the run's; every later tick is then what an
    uninterrupted run computes. Circuits with DBSP primitives (z^-1, I, D: tick
    boundaries matter) or fixed points replay tick by tick.
    """
    return not plan.literal and all(op.kind in RELATIONAL for op in plan.operators.values())


def _run_key(run) -> tuple:
    """What tells one run from another that reuses its id: its version and start time."""
    return run.version_id, run.created_at


def runtime_for(run) -> SparkRuntime:
    """This process's runtime for `run`, at the run's current tick."""
    with _lock:
        rt = _runtimes.get(run.pk)
        # (the same run: a database rebuilt under a live worker, as in tests, can give a
        # new run an id this process still holds a runtime for)
        if rt is not None and rt.tick == run.current_tick and getattr(rt, "run_key", None) == _run_key(run):
            return rt
        if rt is not None:
            _close(_runtimes.pop(run.pk))
        started = time.perf_counter()
        plan = compile_plan(run.version.document)
        session = spark_session()
        restored = snapshots.restore(run.pk, plan, run.current_tick, session)
        rt, from_tick = restored if restored else (SparkRuntime(plan, session), -1)
        rt.max_rows = settings.TICK_MAX_ROWS or None  # (DBSPWEB_TICK_MAX_ROWS, 0: none)
        rt.max_bytes = settings.TICK_MAX_BYTES or None  # (DBSPWEB_TICK_MAX_BYTES, 0: none)
        replay = list(run.pushes.filter(applied_tick__gt=from_tick, applied_tick__lte=run.current_tick).order_by("sequence"))
        collapsed = replay_in_one_step(plan)
        if not replay:
            pass
        elif collapsed:
            rt.step(changes_for(rt, replay))
            rt.tick = run.current_tick
        else:
            by_tick = defaultdict(list)
            for p in replay:
                by_tick[p.applied_tick].append(p)
            for tick in range(from_tick + 1, run.current_tick + 1):
                rt.step(changes_for(rt, by_tick.get(tick, [])))
        if run.current_tick >= 0:
            log.info(
                "event=recovered run=%s tick=%s snapshot_tick=%s replayed_ticks=%s replayed_pushes=%s replay=%s ms=%.1f worker=%s",
                run.pk, run.current_tick, from_tick if restored else "none", run.current_tick - from_tick, len(replay),
                "one_step" if collapsed else "tick_by_tick", (time.perf_counter() - started) * 1000, worker_id(),
            )
        for spec in filter(None, settings.TEST_SLOW_NODE.split(",")):
            _slow_down(rt, spec)
        rt.run_key = _run_key(run)
        _runtimes[run.pk] = rt
        return rt


def _slow_down(rt, spec: str) -> None:
    """Tests only (DBSPWEB_TEST_SLOW_NODE="node=seconds[:stuck],...", a worker setting no
    user reaches): make that node's step slow, in Python (interruptible) or in one sleep
    (stuck: only the watchdog's grace period ends it)."""
    node, _, how = spec.partition("=")
    seconds, _, mode = how.partition(":")
    executor = rt.executors.get(node)
    if executor is None:
        return
    step = executor.step

    def slow_step(inputs):
        if mode == "stuck":
            time.sleep(float(seconds))
        else:
            deadline = time.monotonic() + float(seconds)
            while time.monotonic() < deadline:
                time.sleep(0.01)
        return step(inputs)

    executor.step = slow_step


def release(run_id: int) -> bool:
    """Drop the run's runtime and free its Spark state; True if this process held one."""
    with _lock:
        rt = _runtimes.pop(run_id, None)
    if rt is None:
        return False
    _close(rt)
    return True


def release_all() -> None:
    for run_id in held_runs():
        release(run_id)


def _close(rt) -> None:
    try:
        rt.close()  # a Spark runtime unpersists its cached state
    except Exception:  # noqa: BLE001 - closing must not fail a stop
        log.exception("closing a runtime failed")
