import pytest

from tests.live.stack import Stack

#: Short leases and sweeps so takeovers happen in seconds; a small backpressure limit; no
#: Spark warm-up (its ~20 s of background load on 2 cores would compete with 4 s leases;
#: tests/live/test_worker_warm_up.py checks it on the session's worker).
CLUSTER_ENV = {
    "DBSPWEB_LEASE_TTL": "4", "DBSPWEB_HEARTBEAT_EVERY": "0.5", "DBSPWEB_SWEEP_EVERY": "1",
    "DBSPWEB_SWEEP_STALE": "3", "DBSPWEB_SNAPSHOT_EVERY": "5", "DBSPWEB_MAX_PENDING_PUSHES": "25",
    "DBSPWEB_SPARK_WARM_UP_TICKS": "0",
}


@pytest.fixture(scope="session")
def cluster(django_db_setup, django_db_blocker, tmp_path_factory):
    """A private web server and two Celery workers (each with its own Spark) that tests
    may kill: see tests/live/stack.py."""
    log_dir = tmp_path_factory.mktemp("cluster-logs")
    env = {**CLUSTER_ENV, "DBSPWEB_SNAPSHOT_DIR": str(tmp_path_factory.mktemp("snapshots"))}
    stack = Stack(log_dir, "cluster", env)
    try:
        with django_db_blocker.unblock():
            stack.start_web()
            for name in ("w1", "w2"):
                stack.start_worker(name, wait=False)
            for name in ("w1", "w2"):
                stack.wait(lambda n=name: "Spark session ready" in stack.log(f"cluster-{n}"), 180, f"worker {name}")
        yield stack
    finally:
        stack.close()
