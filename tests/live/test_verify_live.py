"""Verify a run through the whole stack: REST pushes, the Celery worker ticking on Spark,
a verification carried out by a worker process of its own on the verification queue
(batch Spark recomputation), both outcomes: the untouched run verifies; after one
stored output row is tampered with in the database, the verification names it. A delete
of a row the input does not hold is refused by the server before anything is stored.

(Over a minute on this machine: two JVMs, a run's ticks and two Spark recomputations.)"""
import time

import pytest

from runs.models import TickOutput
from tests.conftest import example
from tests.live.test_slice import wait_status

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

TRANSACTIONS = [(0, 1, 2, 50), (1, 2, 3, 30), (2, 3, 1, 20)]


def wait_applied(api, run_id, token, timeout=60):
    deadline = time.monotonic() + timeout
    while api.get(f"/api/runs/{run_id}/completion/", params={"token": token}).json()["status"] != "complete":
        assert time.monotonic() < deadline, "the push was not applied"
        time.sleep(0.1)


def verified(api, run_id, timeout=180):
    started = api.post(f"/api/runs/{run_id}/verify/")
    assert started.status_code == 202, started.text
    seen, deadline = set(), time.monotonic() + timeout
    while True:
        body = api.get(started.json()["url"]).json()
        seen.add(body["status"])
        if body["status"] in ("done", "failed"):
            assert body["status"] == "done", body["error"]
            assert body["progress"] == 1.0 and body["method"] == "spark"
            return body
        assert time.monotonic() < deadline, f"the verification did not finish: {body}"
        time.sleep(0.2)


@pytest.mark.timeout(600)  # two JVMs and two Spark recomputations; over 300 s seen on a loaded 2-core machine
def test_a_run_verifies_and_a_tampered_output_is_named(live_stack, verify_worker, token_client):
    api = token_client("verifier")
    circuit = api.post("/api/circuits/", json={"name": "Transactions", "document": example("transactions")}).json()
    run = api.post(f"/api/circuits/{circuit['id']}/runs/").json()
    wait_status(api, run["id"], "running")
    push_url = f"/api/runs/{run['id']}/inputs/transactions/push/"
    for tid, src, dst, amount in TRANSACTIONS:
        pushed = api.post(push_url, json=[{"insert": {"id": tid, "from_acct": src, "to_acct": dst, "amount": amount}}])
        assert pushed.status_code == 202, pushed.text
        wait_applied(api, run["id"], pushed.json()["token"])

    absent = api.post(push_url, json=[{"delete": {"id": 1, "from_acct": 2, "to_acct": 3, "amount": 3}}])
    assert absent.status_code == 400
    assert absent.json()["errors"][0]["message"] == (
        'record 0: transactions has no row {"id": 1, "from_acct": 2, "to_acct": 3, "amount": 3} to delete')
    rows = api.get(f"/api/runs/{run['id']}/inputs/transactions/rows/").json()
    assert rows["count"] == 3 and rows["through_sequence"] == 3

    assert verified(api, run["id"])["ok"] is True

    out = [t for t in TickOutput.objects.filter(run_id=run["id"]).order_by("tick") if t.deltas.get("total")][-1]
    out.deltas["total"] = [r for r in out.deltas["total"] if r["weight"] < 0]  # the new total (0) is lost
    out.save()
    result = verified(api, run["id"])
    assert result["ok"] is False
    assert result["views"] == {"total": {"missing": [{"data": {"total": 0}, "weight": 1}], "extra": [],
                                         "missing_count": 1, "extra_count": 0}}
    assert "event=verified" in verify_worker.read_text()
