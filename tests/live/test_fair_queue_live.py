"""Issue 31 with a real Celery worker: a backlog of anonymous explanations is queued on
the verification queue, then the owner asks; the worker (started after, so it finds the
whole backlog waiting) carries out the owner's first, and frees every requester's slot.

(A JVM starts: about a minute on a busy machine.)"""
import json
import os
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

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

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
