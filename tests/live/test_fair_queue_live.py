"""Issue 31 with real Celery workers:

- one worker: a backlog of anonymous explanations is queued on the verification queue,
  then the owner asks; the worker (started after, so it finds the whole backlog waiting)
  carries out the owner's first, and frees every requester's slot;
- the operators' lane (workers/lanes.py), two workers started by `manage.py run_workers
  --verify` as scripts/run starts them: while anonymous explanations occupy the shared
  worker, the owner's is carried out at once by the owners' worker.

(A JVM starts per worker: about a minute on a busy machine.)"""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from circuits import services
from runs import fair_queue
from runs.explain import explain_row
from runs.models import Explanation, Push, Run
from tests.circuits.conftest import client_for  # noqa: F401 - a fixture
from tests.conftest import ROOT, database_env, example

# one_backend: the subject is the order in which Celery workers take jobs off the Redis
# queues (and which worker takes them), not the database, so once, on SQLite
# (scripts/test). The explanation rows a verification worker writes are written the same
# way on PostgreSQL by tests/live/test_explain_live.py (a queued explanation carried out
# by the verification worker); the slots and lanes by tests/runs/test_fair_queue.py.
pytestmark = [pytest.mark.live, pytest.mark.one_backend, pytest.mark.django_db(transaction=True)]

TICKS = [  # examples/circuits/transitive_closure.pushes.jsonl
    [{"insert": {"src": 0, "dst": 1}}, {"insert": {"src": 1, "dst": 2}}, {"insert": {"src": 2, "dst": 3}}],
    [{"insert": {"src": 3, "dst": 4}}],
]
#: rows of the closure at tick 1: six anonymous requests, then the owner's
ANONYMOUS = [{"src": 0, "dst": 1}, {"src": 0, "dst": 2}, {"src": 0, "dst": 3}, {"src": 1, "dst": 2}, {"src": 1, "dst": 3},
             {"src": 1, "dst": 4}]
OWNERS = {"src": 0, "dst": 4}


@pytest.mark.timeout(600)
def test_the_worker_carries_out_the_owners_explanation_before_the_anonymous_backlog(make_user, client_for, settings,
                                                                                   tmp_path):
    settings.VERIFY_QUEUE = f"{settings.CELERY_TASK_DEFAULT_QUEUE}-fair.verify"
    settings.EXPLAIN_SYNC_MAX_ROWS = 0
    alice = make_user("alice")
    circuit = services.create_circuit(alice, "Closure", "", "public", example("transitive_closure"))
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    for tick, records in enumerate(TICKS):
        response = client_for(alice).post(f"/api/runs/{run.pk}/inputs/edges/push/", records, format="json")
        assert response.status_code == 202
        Push.objects.filter(run=run, sequence=response.json()["sequence"]).update(applied_tick=tick)
    Run.objects.filter(pk=run.pk).update(current_tick=len(TICKS) - 1)
    run.refresh_from_db()

    def ask(row, requester):
        status, body = explain_row(run, {"view": "closure", "row": json.dumps(row), "tick": "1"}, requester)
        assert status == 202, body
        return body["id"]

    readers = [fair_queue.Requester(f"anon:10.0.0.{n % 2}", fair_queue.ANONYMOUS) for n in range(len(ANONYMOUS))]
    backlog = [ask(row, reader) for row, reader in zip(ANONYMOUS, readers)]
    owner = fair_queue.Requester(f"user:{alice.pk}", fair_queue.OPERATOR)
    owners = ask(OWNERS, owner)  # asked last

    log = tmp_path / "verify-worker.log"
    env = {**os.environ, **database_env(), "DJANGO_SETTINGS_MODULE": "dbspweb.settings", "PYTHONUNBUFFERED": "1",
           "CELERY_QUEUE": settings.CELERY_TASK_DEFAULT_QUEUE, "VERIFY_QUEUE": settings.VERIFY_QUEUE,
           "DBSPWEB_SPARK_WARM_UP_TICKS": "0", "SPARK_DRIVER_MEMORY": "1g"}
    with open(log, "w") as out:
        worker = subprocess.Popen(
            [str(Path(sys.executable).parent / "celery"), "-A", "dbspweb", "worker", "--pool=solo", "--loglevel=INFO",
             "-Q", settings.VERIFY_QUEUE, "--without-gossip", "--without-mingle", "-n", f"fair-{os.getpid()}@%h"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while Explanation.objects.filter(pk__in=[*backlog, owners]).exclude(status="done").exists():
            assert worker.poll() is None and time.monotonic() < deadline, log.read_text()[-5000:]
            time.sleep(0.2)
    finally:
        worker.terminate()
        worker.wait(timeout=60)
    finished = dict(Explanation.objects.filter(pk__in=[*backlog, owners]).values_list("pk", "finished_at"))
    assert finished[owners] < min(finished[pk] for pk in backlog)
    assert [fair_queue.held(r) for r in (owner, *readers)] == [0] * 7  # every slot freed by the tasks


LONG_CHAIN = 70  # edges 0→1→…→70: explaining (0, 70) replays a closure of ~2 500 rows, seconds


def _chain_run(owner, client_for, edges_by_tick):
    circuit = services.create_circuit(owner, "Chain", "", "public", example("transitive_closure"))
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=owner, status="running")
    for tick, edges in enumerate(edges_by_tick):
        records = [{"insert": {"src": s, "dst": d}} for s, d in edges]
        response = client_for(owner).post(f"/api/runs/{run.pk}/inputs/edges/push/", records, format="json")
        assert response.status_code == 202
        Push.objects.filter(run=run, sequence=response.json()["sequence"]).update(applied_tick=tick)
    Run.objects.filter(pk=run.pk).update(current_tick=len(edges_by_tick) - 1)
    run.refresh_from_db()
    return run


@pytest.mark.timeout(600)
def test_the_owners_lane_serves_the_owner_while_anonymous_jobs_occupy_the_shared_worker(make_user, client_for,
                                                                                         settings, tmp_path):
    settings.VERIFY_QUEUE = f"{settings.CELERY_TASK_DEFAULT_QUEUE}-lane.verify"
    settings.VERIFY_OWNERS_QUEUE = f"{settings.VERIFY_QUEUE}.owners"
    settings.VERIFY_OWNERS_LANE = True
    settings.EXPLAIN_SYNC_MAX_ROWS = 0
    alice = make_user("alice")
    chain = [(i, i + 1) for i in range(LONG_CHAIN)]
    shared_run = _chain_run(alice, client_for, [chain[:-1], chain[-1:]])  # read by anonymous clients
    own_run = _chain_run(alice, client_for, [chain[:3]])  # the owner's small one

    env = {**os.environ, **database_env(), "DJANGO_SETTINGS_MODULE": "dbspweb.settings", "PYTHONUNBUFFERED": "1",
           "CELERY_QUEUE": settings.CELERY_TASK_DEFAULT_QUEUE, "VERIFY_QUEUE": settings.VERIFY_QUEUE,
           "VERIFY_OWNERS_QUEUE": settings.VERIFY_OWNERS_QUEUE, "DBSPWEB_VERIFY_WORKERS": "2",  # the lane: by default
           "SPARK_DRIVER_MEMORY": "1g"}
    env.pop("DBSPWEB_VERIFY_OWNERS_LANE", None)
    name = f"lane{os.getpid()}-"
    workers = subprocess.Popen(
        [sys.executable, "manage.py", "run_workers", "--verify", "--log-dir", str(tmp_path), "--name", name, "--",
         "--without-gossip", "--without-mingle"], cwd=ROOT, env=env, stdout=open(tmp_path / "run_workers.log", "w"),
        stderr=subprocess.STDOUT, start_new_session=True)
    logs = [tmp_path / f"verify-worker-{i}.log" for i in (1, 2)]

    def text(path):
        return path.read_text() if path.exists() else ""

    def until(condition, what, seconds=300):
        deadline = time.monotonic() + seconds
        while not condition():
            assert workers.poll() is None and time.monotonic() < deadline, (
                f"{what}: " + "\n".join(text(p)[-3000:] for p in [tmp_path / "run_workers.log", *logs]))
            time.sleep(0.2)

    readers = [fair_queue.Requester(f"anon:10.0.1.{n}", fair_queue.ANONYMOUS) for n in (1, 2)]
    owner = fair_queue.Requester(f"user:{alice.pk}", fair_queue.OPERATOR)
    try:
        until(lambda: all("Spark session ready" in text(p) for p in logs), "the two verification workers started")
        # two slow anonymous explanations (ticks 0 and 1: a replay each), more than the shared worker can run at once
        anonymous = []
        for tick, reader in enumerate(readers):
            status, body = explain_row(shared_run, {"view": "closure", "row": json.dumps({"src": 0, "dst": LONG_CHAIN - 1 + tick}),
                                                    "tick": str(tick)}, reader)
            assert status == 202, body
            anonymous.append(body["id"])
        until(lambda: Explanation.objects.filter(pk__in=anonymous, status="running").exists(), "an anonymous job started")
        status, body = explain_row(own_run, {"view": "closure", "row": json.dumps({"src": 0, "dst": 3}), "tick": "0"}, owner)
        assert status == 202, body
        owners = body["id"]
        until(lambda: not Explanation.objects.filter(pk__in=[*anonymous, owners]).exclude(status="done").exists(),
              "every explanation done")
    finally:
        os.killpg(workers.pid, signal.SIGTERM)  # run_workers stops its workers (each ends its job), then itself
        try:
            workers.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(workers.pid, signal.SIGKILL)
            workers.wait()
    finished = dict(Explanation.objects.filter(pk__in=[*anonymous, owners]).values_list("pk", "finished_at"))
    assert finished[owners] < min(finished[pk] for pk in anonymous), "the owner waited for an anonymous job"
    started = text(tmp_path / "run_workers.log")
    assert f"slot=1 queues={settings.VERIFY_OWNERS_QUEUE}\n" in started, started
    assert f"slot=2 queues={settings.VERIFY_QUEUE},{settings.VERIFY_OWNERS_QUEUE}\n" in started, started
    done = [text(p).count("succeeded in") for p in logs]
    assert done == [1, 2], f"jobs per worker (owners' lane, shared): {done}"
    assert Explanation.objects.get(pk=owners).result["inputs"]  # a real explanation: the edges that derive (0, 3)
    assert [fair_queue.held(r) for r in (owner, *readers)] == [0] * 3
