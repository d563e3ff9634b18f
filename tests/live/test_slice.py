"""The thin vertical slice, all real: REST -> database -> Celery worker (solo pool,
Redis broker) -> Spark local mode -> Redis channel layer -> websocket client."""
import json
import time

import pytest
from websockets.sync.client import connect

from runs.models import Push, Run
from tests.conftest import example

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


def wait_status(api, run_id, status, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = api.get(f"/api/runs/{run_id}/").json()
        if body["status"] == status:
            return body
        assert body["status"] != "failed", body["error"]
        time.sleep(0.2)
    pytest.fail(f"run {run_id} did not become {status}: {body}")


def receive(ws, kind, timeout=60):
    """The next message of a type, skipping others (status updates)."""
    deadline = time.monotonic() + timeout
    while True:
        message = json.loads(ws.recv(timeout=max(deadline - time.monotonic(), 0.1)))
        if message["type"] == kind:
            return message


def test_push_over_rest_arrives_as_a_delta_on_the_websocket(live_stack, token_client):
    api = token_client("alice")
    created = api.post("/api/circuits/", json={"name": "Big orders", "document": example("big_orders")})
    assert created.status_code == 201, created.text
    circuit_id = created.json()["id"]

    started = api.post(f"/api/circuits/{circuit_id}/runs/")
    assert started.status_code == 201, started.text
    run = started.json()
    assert run["inputs"][0]["name"] == "orders" and run["views"] == ["big_orders"]
    wait_status(api, run["id"], "running")

    ws_url = f"{live_stack.ws_url}/ws/runs/{run['id']}/?token={api.token}"
    with connect(ws_url, origin=live_stack.base_url, open_timeout=10) as ws:
        snapshot = receive(ws, "snapshot")
        assert snapshot["tick"] == -1 and snapshot["views"] == {"big_orders": []}

        pushed = api.post(f"/api/runs/{run['id']}/inputs/orders/push/", json=[
            {"insert": {"id": 1, "customer": "ada", "amount": 250}},
            {"insert": {"id": 2, "customer": "bob", "amount": 20}},
        ])
        assert pushed.status_code == 202, pushed.text
        token = pushed.json()["token"]

        delta = receive(ws, "delta")
        assert delta["tick"] == 0 and delta["seq"] == 0
        assert delta["views"] == {"big_orders": [{"data": {"id": 1, "customer": "ada", "amount": 250}, "weight": 1}]}
        assert delta["frontier"]["big_orders"] == {"tick": 0}
        assert delta["stats"]["orders"]["rows_in"] == 2

        completion = api.get(f"/api/runs/{run['id']}/completion/", params={"token": token}).json()
        assert completion == {"token": token, "status": "complete", "tick": 0}

        api.post(f"/api/runs/{run['id']}/inputs/orders/push/", json=[{"delete": {"id": 1, "customer": "ada", "amount": 250}}])
        retraction = receive(ws, "delta")
        assert retraction["tick"] == 1
        assert retraction["views"]["big_orders"] == [{"data": {"id": 1, "customer": "ada", "amount": 250}, "weight": -1}]

    # The input log holds both pushes, each applied exactly once, in order.
    log = list(Push.objects.filter(run_id=run["id"]).order_by("sequence").values_list("sequence", "applied_tick"))
    assert log == [(1, 0), (2, 1)]
    assert Run.objects.get(pk=run["id"]).current_tick == 1
    # A late watcher gets the integrated view (empty again) and the history over REST.
    assert api.get(f"/api/runs/{run['id']}/outputs/").json() == {"tick": 1, "views": {"big_orders": []}}
    assert api.get(f"/api/runs/{run['id']}/outputs/", params={"tick": 0}).json()["views"]["big_orders"][0]["data"]["id"] == 1
    deltas = api.get(f"/api/runs/{run['id']}/deltas/", params={"since": -1}).json()
    assert [t["tick"] for t in deltas["ticks"]] == [0, 1] and deltas["more"] is False

    stopped = api.post(f"/api/runs/{run['id']}/stop/")
    assert stopped.json()["status"] == "stopped"
    assert api.post(f"/api/runs/{run['id']}/inputs/orders/push/", json=[]).status_code == 409


def test_pushes_before_the_run_is_running_are_kept_and_applied_in_order(live_stack, token_client):
    api = token_client("carol")
    circuit_id = api.post("/api/circuits/", json={"name": "c", "document": example("big_orders")}).json()["id"]
    run_id = api.post(f"/api/circuits/{circuit_id}/runs/").json()["id"]
    # Pushed immediately, possibly before the worker has the run: nothing acknowledged is lost.
    for i in range(5):
        r = api.post(f"/api/runs/{run_id}/inputs/orders/push/", json=[{"insert": {"id": i, "customer": "x", "amount": 200 + i}}])
        assert r.status_code == 202
    wait_status(api, run_id, "running")
    deadline = time.monotonic() + 60
    while Push.objects.filter(run_id=run_id, applied_tick__isnull=True).exists():
        assert time.monotonic() < deadline, "pushes were not applied"
        time.sleep(0.2)
    outputs = api.get(f"/api/runs/{run_id}/outputs/").json()["views"]["big_orders"]
    assert sorted(r["data"]["id"] for r in outputs) == [0, 1, 2, 3, 4]
    ticks = list(Push.objects.filter(run_id=run_id).order_by("sequence").values_list("applied_tick", flat=True))
    assert ticks == sorted(ticks)  # applied in input-log order


def test_websocket_refuses_a_private_run_to_another_user(live_stack, token_client):
    from websockets.exceptions import InvalidStatus

    owner, other = token_client("dave"), token_client("erin")
    circuit_id = owner.post("/api/circuits/", json={"name": "secret", "document": example("big_orders")}).json()["id"]
    run_id = owner.post(f"/api/circuits/{circuit_id}/runs/").json()["id"]
    with pytest.raises(InvalidStatus) as err:
        connect(f"{live_stack.ws_url}/ws/runs/{run_id}/?token={other.token}", origin=live_stack.base_url, open_timeout=10)
    assert err.value.response.status_code == 403
    assert other.get(f"/api/runs/{run_id}/").status_code == 404
