"""Explain a row through the whole stack: REST pushes of the transitive-closure demo, the
Celery worker ticking on Spark, then the row explained in the request, and the same
explanation queued (as for a log over EXPLAIN_SYNC_MAX_ROWS) and carried out by the
verification queue's own worker process, polled over REST: both answers are the same.

(About a minute here: two JVMs and the run's ticks.)"""
import time

import pytest

from runs.models import Run
from tests.conftest import example
from tests.live.test_slice import wait_status
from tests.live.test_verify_live import wait_applied

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

TICKS = [
    [{"insert": {"src": 0, "dst": 1}}, {"insert": {"src": 1, "dst": 2}}, {"insert": {"src": 2, "dst": 3}}],
    [{"insert": {"src": 3, "dst": 4}}],
    [{"delete": {"src": 1, "dst": 2}}],
]


@pytest.mark.timeout(600)
def test_a_row_explained_in_the_request_and_on_the_verification_queue(live_stack, verify_worker, token_client, settings):
    from runs.explain import explain_row

    api = token_client("explainer")
    circuit = api.post("/api/circuits/", json={"name": "Closure", "document": example("transitive_closure")}).json()
    run = api.post(f"/api/circuits/{circuit['id']}/runs/").json()
    wait_status(api, run["id"], "running")
    for records in TICKS:
        pushed = api.post(f"/api/runs/{run['id']}/inputs/edges/push/", json=records)
        assert pushed.status_code == 202, pushed.text
        wait_applied(api, run["id"], pushed.json()["token"])

    params = {"view": "closure", "row": '{"src": 0, "dst": 3}', "tick": "2"}
    at_once = api.get(f"/api/runs/{run['id']}/explain/", params=params)
    assert at_once.status_code == 200, at_once.text
    body = at_once.json()
    assert [(c["row"], c["before"], c["after"], [p["user"] for p in c["pushes"]]) for c in body["causes"]] == [
        ({"src": 1, "dst": 2}, 1, 0, ["explainer"])]

    settings.EXPLAIN_SYNC_MAX_ROWS = 0  # in this process: queue it, as the server does for a large log
    status, queued = explain_row(Run.objects.get(pk=run["id"]), params)
    assert (status, queued["status"]) == (202, "queued")
    deadline = time.monotonic() + 120
    while (polled := api.get(queued["url"]).json())["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, f"the explanation was not carried out: {polled}"
        time.sleep(0.2)
    assert polled.pop("status") == "done", polled
    assert {k: v for k, v in polled.items() if k not in ("id", "url")} == body
