"""Sharing and CSV pushes on the real stack: uvicorn, the Celery worker on Spark, Redis.

The owner shares an unlisted circuit with a link and grants a colleague `can_operate`;
the colleague pushes a CSV file; an anonymous viewer holding only the share token
watches the delta arrive on the websocket and reads the stats; after the owner revokes
the link, the same token opens nothing."""
import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from runs.models import Push
from tests.conftest import example
from tests.live.test_slice import receive, wait_status

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


def test_shared_circuit_csv_push_watched_through_the_link(live_stack, token_client):
    owner, colleague = token_client("alice"), token_client("bob")
    circuit = owner.post("/api/circuits/", json={"name": "Big orders", "visibility": "unlisted", "document": example("big_orders")}).json()
    share = owner.patch(f"/api/circuits/{circuit['id']}/share/", json={"grants": [{"username": "bob", "can_operate": True}]}).json()
    token = share["share_token"]
    anonymous = httpx.Client(base_url=live_stack.base_url, timeout=30)
    assert anonymous.get(f"/api/circuits/{circuit['id']}/").status_code == 404
    assert anonymous.get(f"/api/shared/{token}/").json()["name"] == "Big orders"

    run = colleague.post(f"/api/circuits/{circuit['id']}/runs/")  # granted: may start runs
    assert run.status_code == 201, run.text
    run = run.json()
    wait_status(colleague, run["id"], "running")

    with connect(f"{live_stack.ws_url}/ws/runs/{run['id']}/?share={token}", origin=live_stack.base_url, open_timeout=10) as ws:
        assert receive(ws, "snapshot")["views"] == {"big_orders": []}
        csv = b"id,customer,amount\n1,ada,250\n2,bob,20\n3,\"Lovelace, A.\",101\n"
        pushed = colleague.post(f"/api/runs/{run['id']}/inputs/orders/push/", files={"file": ("orders.csv", csv, "text/csv")})
        assert pushed.status_code == 202, pushed.text
        delta = receive(ws, "delta")
        assert sorted(r["data"]["id"] for r in delta["views"]["big_orders"]) == [1, 3]
        assert all(r["weight"] == 1 for r in delta["views"]["big_orders"])

    stats = anonymous.get(f"/api/runs/{run['id']}/stats/", headers={"X-Share-Token": token}).json()
    nodes = {n["node"]: n for n in stats["nodes"]}
    assert stats["tick"] == 0 and nodes["orders"]["rows_in"] == 3 and nodes["big_orders"]["rows_out"] == 2

    # A bad CSV changes nothing, even on the live stack.
    bad = colleague.post(f"/api/runs/{run['id']}/inputs/orders/push/", content=b"id,amount\n4,lots\n", headers={"Content-Type": "text/csv"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "amount"
    assert Push.objects.filter(run_id=run["id"]).count() == 1

    owner.post(f"/api/circuits/{circuit['id']}/share/revoke/")
    assert anonymous.get(f"/api/shared/{token}/").status_code == 404
    assert anonymous.get(f"/api/runs/{run['id']}/", headers={"X-Share-Token": token}).status_code == 404
    with pytest.raises(InvalidStatus):  # the handshake is refused
        connect(f"{live_stack.ws_url}/ws/runs/{run['id']}/?share={token}", origin=live_stack.base_url, open_timeout=10)
