"""One core against two: the child processes' command lines (taskset's CPU list, Spark's
master) and a real 1-core child pinned to one CPU, its JVM too, answering a checked run."""
from __future__ import annotations

import os
import sys

import pytest

from bench.nexmark import cores


def test_cpu_list_takes_the_lowest_allowed_cpus():
    assert cores.cpu_list(1, {0, 1}) == "0"
    assert cores.cpu_list(2, {0, 1}) == "0,1"
    assert cores.cpu_list(2, {3, 1, 6}) == "1,3"  # a process already restricted to CPUs 1, 3, 6


def test_more_cores_than_allowed_is_a_clear_error():
    with pytest.raises(ValueError, match=r"--cores: 3 cores asked, this process may use 2 \(CPUs 0,1\)"):
        cores.cpu_list(3, {0, 1})
    with pytest.raises(ValueError, match="--cores: 0 is not a core count"):
        cores.cpu_list(0, {0, 1})


def test_worker_argv_pins_the_child_and_passes_the_run():
    argv = cores.worker_argv(1, events=200_000, batch=5_000, seed=7, check="end", sss=True,
                             python="/py", available={0, 1})
    assert argv == ["taskset", "-c", "0", "/py", "-m", "bench.nexmark.worker", "--events", "200000",
                    "--batch", "5000", "--seed", "7", "--check", "end", "--sss"]
    argv = cores.worker_argv(2, events=20_000, batch=5_000, seed=1, check="tick", sss=False,
                             python="/py", available={0, 1})
    assert argv[:3] == ["taskset", "-c", "0,1"] and "--sss" not in argv and argv[-2:] == ["--check", "tick"]


def test_worker_env_sets_spark_master_only():
    base = {"SPARK_MASTER": "local[8]", "SPARK_DRIVER_MEMORY": "4g", "PYTHONPATH": "/x"}
    assert cores.worker_env(1, base) == {"SPARK_MASTER": "local[1]", "SPARK_DRIVER_MEMORY": "4g", "PYTHONPATH": "/x"}
    assert cores.worker_env(2, base)["SPARK_MASTER"] == "local[2]"
    assert base["SPARK_MASTER"] == "local[8]"  # the parent's environment is not changed


def test_turns_alternate_which_configuration_goes_first():
    assert [cores.turns([1, 2], i) for i in range(4)] == [[1, 2], [2, 1], [1, 2], [2, 1]]


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="Linux CPU affinity")
def test_a_one_core_worker_runs_pinned_and_answers_checked_runs():
    argv = cores.worker_argv(1, events=1_000, batch=500, seed=3, check="tick", sss=False, python=sys.executable)
    worker = cores.Worker.start(1, argv, cores.worker_env(1))
    try:
        cpu = cores.cpu_list(1)
        assert worker.ready["master"] == "local[1]" and worker.ready["default_parallelism"] == 1
        assert worker.ready["python_cpus"] == [int(cpu)] and worker.ready["jvm_cpus"] == cpu
        result = worker.ask({"run": "engine", "query": "q2"})
        assert result["ticks_checked"] == 2 and result["events"] == 1_000 and result["events_per_s"] > 0
        wrong = worker.ask({"run": "engine", "query": "q99"})  # a failed request is an answer, the worker goes on
        assert "error" in wrong
        assert worker.ask({"run": "engine", "query": "q0"})["ticks_checked"] == 2
    finally:
        worker.close()
    assert worker.process.returncode == 0
