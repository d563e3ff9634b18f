"""Issue 31: no requester can starve the others on explain / inspect / verify
(runs/fair_queue.py). On a public run, anonymous readers are capped (429 with
Retry-After, nothing recorded), the owner is not; identical requests share one job; the
pages of one explanation share one replay of the log; and the broker hands the verify
queue's worker the owner's job before a backlog of anonymous ones (real Redis, the real
dispatch and Celery/kombu transport)."""
import json
import uuid

import pytest
from rest_framework.test import APIClient

from runs.models import Explanation, Inspection, Verification
from tests.runs.test_api_explain import closure_run

pytestmark = pytest.mark.django_db

ROWS = [{"src": 0, "dst": 2}, {"src": 0, "dst": 3}, {"src": 1, "dst": 3}, {"src": 2, "dst": 3}]  # in the closure at tick 0


@pytest.fixture
def run(make_user, client_for):
    return closure_run(make_user("alice"), client_for, "public")


@pytest.fixture
def queued(settings, monkeypatch):
    """Every explanation is queued (none answered in the request); sends are recorded."""
    settings.EXPLAIN_SYNC_MAX_ROWS = 0
    settings.RECOMPUTE_MAX_PER_REQUESTER, settings.RECOMPUTE_MAX_PER_RUN = 2, 3
    # the tasks run here, inside the test's transaction: they must not close its connection
    monkeypatch.setattr("workers.explain.close_old_connections", lambda: None)
    sent = []
    for kind in ("explain", "inspect", "verify"):
        monkeypatch.setattr(f"runs.dispatch.{kind}", lambda job, priority=0, kind=kind: sent.append((kind, job, priority)) or True)
    return sent


def anonymous(address="10.0.0.1"):
    return APIClient(REMOTE_ADDR=address)


def explain(api, run, row, tick=0, **params):
    return api.get(f"/api/runs/{run.pk}/explain/", {"view": "closure", "row": json.dumps(row), "tick": tick, **params})


def test_an_anonymous_reader_past_the_cap_gets_429_with_retry_after_and_nothing_queued(
        run, queued, client_for, settings, django_capture_on_commit_callbacks):
    reader = anonymous()
    with django_capture_on_commit_callbacks(execute=True):
        first, second = (explain(reader, run, row) for row in ROWS[:2])
    assert (first.status_code, second.status_code) == (202, 202)
    assert [(k, p) for k, _, p in queued] == [("explain", 6), ("explain", 6)]  # anonymous: behind the owner's 0

    before = Explanation.objects.count()
    refused = explain(reader, run, ROWS[2])
    assert refused.status_code == 429
    assert refused["Retry-After"] == str(settings.RECOMPUTE_RETRY_AFTER_S)
    assert refused.json()["errors"] == [{"field": "requester", "message": "anon:10.0.0.1 is at its limit of 2"}]
    assert Explanation.objects.count() == before and len(queued) == 2  # nothing recorded, nothing sent
    # the same cap counts inspections (and verifications) too
    assert reader.get(f"/api/runs/{run.pk}/nodes/closure/", {"tick": 1}).status_code == 429
    assert not Inspection.objects.exists()

    # the owner is not held back by the readers: first in line, and a cap of its own
    owner = client_for(run.created_by)
    with django_capture_on_commit_callbacks(execute=True):
        assert explain(owner, run, ROWS[2]).status_code == 202
        assert owner.get(f"/api/runs/{run.pk}/nodes/closure/", {"tick": 1}).status_code == 202
    assert [(k, p) for k, _, p in queued[2:]] == [("explain", 0), ("inspect", 0)]

    # the worker's task frees the reader's slot when its job ends: the next one is admitted
    from workers.explain import explain_row

    assert explain_row(first.json()["id"]) == "done"
    assert explain(reader, run, ROWS[2]).status_code == 202


def test_the_shared_readers_of_one_run_together_are_capped(run, queued, client_for):
    for n, row in enumerate(ROWS[:3]):  # three addresses, one request each: the run's cap of 3
        assert explain(anonymous(f"10.0.0.{n}"), run, row).status_code == 202
    refused = explain(anonymous("10.0.0.9"), run, ROWS[3])
    assert refused.status_code == 429 and refused.has_header("Retry-After")
    assert refused.json()["errors"][0]["message"] == "the run's shared readers are at their limit of 3"
    assert explain(client_for(run.created_by), run, ROWS[3]).status_code == 202  # the owner is not a shared reader


def test_a_verification_past_the_operators_cap_is_refused_and_an_identical_one_is_shared(run, queued, client_for):
    owner = client_for(run.created_by)
    one = owner.post(f"/api/runs/{run.pk}/verify/?tick=0")
    assert owner.post(f"/api/runs/{run.pk}/verify/?tick=0").json()["id"] == one.json()["id"]  # still queued: shared
    assert owner.post(f"/api/runs/{run.pk}/verify/?tick=1").status_code == 202
    refused = owner.post(f"/api/runs/{run.pk}/verify/?tick=2")
    assert refused.status_code == 429 and refused.has_header("Retry-After")
    assert Verification.objects.count() == 2


def test_an_expired_slot_frees_itself(run, queued, settings):
    """A worker that crashed never frees its job's slot: the slot expires instead."""
    settings.RECOMPUTE_SLOT_TTL_S = 0
    reader = anonymous()
    for row in ROWS:
        assert explain(reader, run, row).status_code == 202


def test_identical_requests_share_one_explanation_and_its_result(run, queued, client_for,
                                                                 django_capture_on_commit_callbacks):
    from workers.explain import explain_row

    reader = anonymous()
    with django_capture_on_commit_callbacks(execute=True):
        first = explain(reader, run, ROWS[1]).json()
    again = [explain(anonymous(f"10.0.1.{n}"), run, ROWS[1]).json() for n in range(5)]
    assert {a["id"] for a in again} == {first["id"]} and len(queued) == 1  # one job, one slot, one send
    assert explain_row(first["id"]) == "done"
    done = explain(reader, run, ROWS[1])
    assert done.status_code == 200 and done.json()["id"] == first["id"] and done.json()["weight"] == 1


def test_the_pages_of_one_explanation_share_one_replay(run, queued, client_for, settings, monkeypatch):
    from runs import explain as explaining
    from workers.explain import explain_row

    owner = client_for(run.created_by)
    settings.EXPLAIN_SYNC_MAX_ROWS = 10**6
    row = {"src": 0, "dst": 4}
    at_once = [explain(owner, run, row, tick=1, page=page, page_size=1).json() for page in range(4)]
    settings.EXPLAIN_SYNC_MAX_ROWS, settings.RECOMPUTE_MAX_PER_REQUESTER = 0, 10
    pages = [explain(owner, run, row, tick=1, page=page, page_size=1).json() for page in range(4)]
    assert len({p["id"] for p in pages}) == 4

    explaining._replayed.clear()
    replays = explaining.replays
    assert explain_row(pages[0]["id"]) == "done"  # carries out the queued pages of the same row with it
    assert [explain_row(p["id"]) for p in pages[1:]] == [None] * 3  # done already
    later = explain(owner, run, row, tick=1, page=4, page_size=1).json()  # asked after: the same replay
    assert explain_row(later["id"]) == "done"
    assert explaining.replays - replays == 1
    for page, expected in zip(pages, at_once):
        body = owner.get(page["url"]).json()
        assert (body.pop("status"), body.pop("id"), body.pop("url")) == ("done", page["id"], page["url"])
        assert body == expected


def test_the_broker_hands_the_worker_the_owners_job_before_the_anonymous_backlog(settings):
    """Real Redis, the real send (workers/dispatch.py) and the Celery app's transport: a
    worker of the verify queue takes the operator's job first, then signed-in readers',
    then the anonymous ones in the order they came."""
    from dbspweb.celery import app
    from runs import fair_queue
    from workers import dispatch

    settings.VERIFY_QUEUE = f"test-fair-{uuid.uuid4().hex[:8]}"
    for job in range(1, 6):
        assert dispatch.explain(job, priority=fair_queue.ANONYMOUS)
    assert dispatch.inspect(6, priority=fair_queue.READER)
    assert dispatch.verify(7, priority=fair_queue.OPERATOR)
    taken = []
    with app.connection_for_read() as connection:
        queue = connection.SimpleQueue(settings.VERIFY_QUEUE)
        try:
            for _ in range(7):
                message = queue.get(timeout=10)
                taken.append((message.headers["task"], message.decode()[0][0]))
                message.ack()
        finally:
            queue.clear()
            queue.close()
    assert taken == [(dispatch.VERIFY_RUN, 7), (dispatch.INSPECT_RUN, 6)] + [(dispatch.EXPLAIN_ROW, j) for j in range(1, 6)]


def _taken(app, queue_name: str, count: int) -> list:
    """The (task, job) of the next `count` messages a worker of `queue_name` is handed."""
    taken = []
    with app.connection_for_read() as connection:
        queue = connection.SimpleQueue(queue_name)
        try:
            for _ in range(count):
                message = queue.get(timeout=10)
                taken.append((message.headers["task"], message.decode()[0][0]))
                message.ack()
            with pytest.raises(queue.Empty):
                queue.get(timeout=0.2)  # nothing else: every job was sent to one queue only
        finally:
            queue.clear()
            queue.close()
    return taken


def test_the_operators_lane_sends_the_owners_jobs_to_their_own_queue(settings):
    """The operators' lane (workers/lanes.py) on: the jobs asked at priority 0 (owner,
    operators, the system) go to VERIFY_OWNERS_QUEUE, every other to VERIFY_QUEUE, each
    to one queue only; the first verification worker consumes only the owners' queue,
    the others both. Off: one queue, as before."""
    from dbspweb.celery import app
    from runs import fair_queue
    from workers import dispatch, lanes

    settings.VERIFY_QUEUE = f"test-lane-{uuid.uuid4().hex[:8]}"
    settings.VERIFY_OWNERS_QUEUE = f"{settings.VERIFY_QUEUE}.owners"
    settings.VERIFY_OWNERS_LANE = True
    assert dispatch.explain(1, priority=fair_queue.ANONYMOUS)
    assert dispatch.inspect(2, priority=fair_queue.READER)
    assert dispatch.verify(3, priority=fair_queue.OPERATOR)
    assert dispatch.explain(4, priority=fair_queue.OPERATOR)
    assert _taken(app, settings.VERIFY_OWNERS_QUEUE, 2) == [(dispatch.VERIFY_RUN, 3), (dispatch.EXPLAIN_ROW, 4)]
    assert _taken(app, settings.VERIFY_QUEUE, 2) == [(dispatch.INSPECT_RUN, 2), (dispatch.EXPLAIN_ROW, 1)]
    shared, owners = settings.VERIFY_QUEUE, settings.VERIFY_OWNERS_QUEUE
    assert [lanes.worker_queues(i, 3) for i in (1, 2, 3)] == [[owners], [shared, owners], [shared, owners]]
    assert lanes.worker_queues(1, 1) == [shared, owners]  # one worker alone takes everything

    settings.VERIFY_OWNERS_LANE = False
    assert [lanes.worker_queues(i, 2) for i in (1, 2)] == [[shared], [shared]]
    assert {lanes.queue_for(p) for p in (fair_queue.OPERATOR, fair_queue.READER, fair_queue.ANONYMOUS)} == {shared}
