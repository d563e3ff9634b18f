"""Spark standalone cluster (SPARK_MASTER=spark://host:port): a real standalone master and
one small worker from the pip pyspark distribution, and the engine running a circuit as an
application on it (driver here, executor in the worker's JVM), with every change forced onto
Spark (no driver-side shortcuts, traces spilled to checkpointed DataFrames), tick by tick
equal to the reference evaluator.

The pip distribution ships `sbin/spark-daemon.sh` but not `start-master.sh` /
`start-worker.sh`, which are thin wrappers around it: the fixture makes the same calls
(`spark-daemon.sh start org.apache.spark.deploy.master.Master 1 ...` and `... worker.Worker
1 spark://...`), in the foreground (SPARK_NO_DAEMONIZE) so that it owns the processes."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT, free_port
from tests.live.test_spark_connect import SCRIPT as CONNECT_SCRIPT

pytestmark = [pytest.mark.live, pytest.mark.one_backend]  # Spark deployments: nothing in them depends on the database

#: The Spark Connect test's script (its last line: session type, ticks, jobs), then one more
#: line with what only a classic session can tell: the master URL it is attached to, and how
#: many block managers it knows (the driver's, plus one per executor).
SCRIPT = CONNECT_SCRIPT + r"""
print(json.dumps({"master": session.sparkContext.master, "executor_memory": session.conf.get("spark.executor.memory"),
                  "block_managers": session.sparkContext._jsc.sc().getExecutorMemoryStatus().size()}))
"""


def _start(spark_home: Path, env: dict, log_path: Path, *args: str) -> subprocess.Popen:
    log = open(log_path, "w")
    try:
        return subprocess.Popen(
            [str(spark_home / "sbin" / "spark-daemon.sh"), "start", *args],
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
    finally:
        log.close()  # the child has its own descriptor


def _stop(proc: subprocess.Popen) -> None:
    """The daemon's process group (the scripts and their JVM): SIGTERM, then SIGKILL."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def _wait_for(text: str, log_path: Path, proc: subprocess.Popen, deadline: float, what: str) -> None:
    while text not in log_path.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"the Spark standalone {what} did not start:\n{log_path.read_text()[-3000:]}")
        time.sleep(0.5)


@pytest.fixture(scope="module")
def standalone_master(tmp_path_factory):
    """A standalone master on 127.0.0.1 and one worker (1 core, 1 GiB) registered with it."""
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    if not (spark_home / "sbin" / "spark-daemon.sh").exists():
        pytest.fail(f"{spark_home}/sbin/spark-daemon.sh is missing: the pip pyspark distribution should ship it")
    root = tmp_path_factory.mktemp("spark-standalone")
    (root / "conf").mkdir()  # an empty conf dir: no spark-env.sh / spark-defaults.conf from elsewhere
    port, webui, worker_webui = free_port(), free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_MASTER", "SPARK_REMOTE", "MASTER")}
    # (spark-daemon.sh would rsync SPARK_HOME from $SPARK_MASTER if it were set)
    env.update({"SPARK_HOME": str(spark_home), "SPARK_CONF_DIR": str(root / "conf"), "SPARK_NO_DAEMONIZE": "1",
                "SPARK_LOG_DIR": str(root), "SPARK_PID_DIR": str(root), "SPARK_LOCAL_IP": "127.0.0.1",
                "SPARK_WORKER_DIR": str(root / "work")})
    url = f"spark://127.0.0.1:{port}"
    procs = []
    try:
        deadline = time.monotonic() + 180
        procs.append(_start(spark_home, env, root / "master.log", "org.apache.spark.deploy.master.Master", "1",
                            "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(webui)))
        _wait_for("I have been elected leader", root / "master.log", procs[0], deadline, "master")
        procs.append(_start(spark_home, env, root / "worker.log", "org.apache.spark.deploy.worker.Worker", "1",
                            "--host", "127.0.0.1", "--cores", "1", "--memory", "1g", "--webui-port", str(worker_webui),
                            url))
        _wait_for("Successfully registered with master", root / "worker.log", procs[1], deadline, "worker")
        yield url, root
    finally:
        for proc in reversed(procs):
            _stop(proc)


@pytest.mark.parametrize("circuit", ["transactions", "word_count"])
def test_a_circuit_runs_on_a_standalone_cluster_like_the_reference(standalone_master, circuit):
    url, root = standalone_master
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "PYSPARK_SUBMIT_ARGS", "SPARK_CONF_DIR")}
    # a small executor that fits the worker (Spark's default of 1g would wait for it forever)
    env.update({"SPARK_MASTER": url, "SPARK_DRIVER_HOST": "127.0.0.1", "SPARK_LOCAL_IP": "127.0.0.1",
                "SPARK_EXECUTOR_MEMORY": "512m", "SPARK_EXECUTOR_CORES": "1"})
    seen = len((root / "worker.log").read_text())
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(EXAMPLES / f"{circuit}.json"), str(EXAMPLES / f"{circuit}.pushes.jsonl")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    lines = done.stdout.strip().splitlines()
    result = {**json.loads(lines[-2]), **json.loads(lines[-1])}
    assert result["session"] == "pyspark.sql.session", result  # a classic session, not Connect
    assert result["master"] == url, result  # attached to the standalone master, not local mode
    assert result["executor_memory"] == "512m", result  # SPARK_EXECUTOR_MEMORY reached the session
    assert result["ticks"] >= 3 and result["jobs"] > 0, result  # and really ran Spark jobs
    assert result["block_managers"] >= 2, result  # the driver's and an executor's, in the worker
    worker_log = (root / "worker.log").read_text()[seen:]  # and the worker launched it for this run
    assert "Asked to launch executor" in worker_log, (root / "worker.log").read_text()[-3000:]
