"""Spark Connect (SPARK_REMOTE): a local Spark Connect server from the pip pyspark
distribution (`sbin/start-connect-server.sh`), and the engine running a circuit through
it, with every change forced onto Spark (no driver-side shortcuts, traces spilled to
checkpointed DataFrames), tick by tick equal to the reference evaluator."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT, free_port

pytestmark = [pytest.mark.live, pytest.mark.one_backend]  # Spark deployments: nothing in them depends on the database

SCRIPT = r"""
import json, sys
from dbsp import compile_plan
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from dbsp.spark import SparkConfig, SparkRuntime, get_session

session = get_session(SparkConfig.from_env())
plan = compile_plan(json.load(open(sys.argv[1])))
spark = SparkRuntime(plan, session, driver_max_rows=0, recent_max=1, arrow_max_rows=0)
reference = ReferenceRuntime(plan)
weights = lambda out: {v: sorted(json.dumps(r, sort_keys=True) for r in rows) for v, rows in out.items()}
ticks = 0
for line in open(sys.argv[2]):
    pushes = json.loads(line)
    changes = {name: changes_from_records(records, plan.inputs[name]) for name, records in pushes.items()}
    got, want = weights(spark.step(changes).outputs_json()), weights(reference.step(changes).outputs_json())
    assert got == want, (ticks, got, want)
    ticks += 1
print(json.dumps({"session": type(session).__module__, "ticks": ticks, "jobs": spark.jobs}))
"""


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    script = spark_home / "sbin" / "start-connect-server.sh"
    if not script.exists():
        pytest.fail(f"{script} is missing: the pip pyspark distribution should ship it")
    logs = tmp_path_factory.mktemp("spark-connect")
    port = free_port()
    env = {**os.environ, "SPARK_HOME": str(spark_home), "SPARK_NO_DAEMONIZE": "1", "SPARK_LOG_DIR": str(logs),
           "SPARK_PID_DIR": str(logs)}
    log = open(logs / "server.log", "w")
    server = subprocess.Popen(
        [str(script), "--master", "local[2]", "--conf", f"spark.connect.grpc.binding.port={port}",
         "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 180
        while "Spark Connect server started" not in (logs / "server.log").read_text():
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the Spark Connect server did not start:\n{(logs / 'server.log').read_text()[-3000:]}")
            time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # the script's process group: the shell and its JVM
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()


@pytest.mark.parametrize("circuit", ["transactions", "word_count"])
def test_a_circuit_runs_on_spark_connect_like_the_reference(connect_server, circuit):
    env = {**os.environ, "SPARK_REMOTE": connect_server}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(EXAMPLES / f"{circuit}.json"), str(EXAMPLES / f"{circuit}.pushes.jsonl")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["session"].startswith("pyspark.sql.connect"), result  # really a Connect client
    assert result["ticks"] >= 3 and result["jobs"] > 0, result  # and really ran Spark jobs
