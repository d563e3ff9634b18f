"""The worker's Spark warm-up (dbsp/spark/warmup.py) runs the engine's own path for
state held in Spark, lookups partition by partition, and keeps nothing afterwards."""
import pytest


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def test_the_warm_up_looks_up_spark_levels_every_tick_and_releases_them(spark, monkeypatch):
    from dbsp.spark import backend, trace

    shipped, levels = [], []
    run_on_partitions, make_level = trace.run_on_partitions, trace.Trace._level

    def counted(spark_, selected, target):
        shipped.append(sum(len(pids) for _, pids in selected))
        return run_on_partitions(spark_, selected, target)

    def kept(self, df, rows=None):
        level = make_level(self, df, rows)
        levels.append(level)
        return level

    monkeypatch.setattr(trace, "run_on_partitions", counted)
    monkeypatch.setattr(trace.Trace, "_level", kept)
    closed = []
    close = backend.SparkRuntime.close
    monkeypatch.setattr(backend.SparkRuntime, "close", lambda self: (closed.append(self), close(self)))

    from dbsp.spark.warmup import warm_up

    scans = []
    scan = trace.scan_levels
    monkeypatch.setattr(trace, "scan_levels", lambda *a: scans.append(1) or scan(*a))
    merges = []  # (level merges run beside the ticks: one still running frees its levels as it ends)
    start_merge = trace.LevelMerge.__init__
    monkeypatch.setattr(trace.LevelMerge, "__init__", lambda self, *a: (merges.append(self), start_merge(self, *a))[1])
    done = warm_up(spark, ticks=6, load_rows=4_000)
    assert all(merge._done.wait(60) for merge in merges)
    assert done["ticks"] == 6 and done["jobs"] >= 6
    assert scans  # the second load step looked its many keys up in the first's levels (scan.py)
    # every tick looked up levels partition by partition: both join sides' traces, then distinct's
    assert len(shipped) >= 3 * 6 and sum(shipped) > 0
    assert len(levels) >= 3  # the load went to Spark: one level per trace at least
    assert len(closed) == 1 and not any(trace.level_is_held(df) for df in levels)
