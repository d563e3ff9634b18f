"""The transactions oracle of shared/DBSP.md through the whole stack: REST pushes, the
Celery worker on Spark, deltas on the websocket integrated by the watcher."""
import json
import time

import pytest
from websockets.sync.client import connect

from tests.conftest import example
from tests.live.test_slice import receive, wait_status

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

TRANSACTIONS = [(0, 1, 2, 50), (1, 2, 3, 30), (2, 3, 1, 20)]


def integrate(view: dict, rows: list[dict]) -> None:
    for r in rows:
        key = json.dumps(r["data"], sort_keys=True)
        view[key] = view.get(key, 0) + r["weight"]
        if view[key] == 0:
            del view[key]


def test_transactions_total_is_0_20_0(live_stack, token_client):
    api = token_client("oracle")
    circuit = api.post("/api/circuits/", json={"name": "Transactions", "document": example("transactions")}).json()
    run = api.post(f"/api/circuits/{circuit['id']}/runs/").json()
    assert sorted(run["views"]) == ["balance", "credits", "debits", "total"]
    wait_status(api, run["id"], "running")
    totals, balance, total = [], {}, {}
    with connect(f"{live_stack.ws_url}/ws/runs/{run['id']}/?token={api.token}", origin=live_stack.base_url, open_timeout=10) as ws:
        assert receive(ws, "snapshot")["tick"] == -1
        for tid, src, dst, amount in TRANSACTIONS:
            pushed = api.post(f"/api/runs/{run['id']}/inputs/transactions/push/",
                              json=[{"insert": {"id": tid, "from_acct": src, "to_acct": dst, "amount": amount}}])
            assert pushed.status_code == 202, pushed.text
            delta = receive(ws, "delta")
            assert delta["tick"] == tid  # one transaction per tick
            integrate(total, delta["views"]["total"])
            integrate(balance, delta["views"]["balance"])
            [(row, weight)] = total.items()
            assert weight == 1
            totals.append(json.loads(row)["total"])
            assert delta["frontier"]["total"] == {"tick": tid}
            # wait until the push is applied before the next one, so each is its own tick
            deadline = time.monotonic() + 30
            while api.get(f"/api/runs/{run['id']}/completion/", params={"token": pushed.json()["token"]}).json()["status"] != "complete":
                assert time.monotonic() < deadline
                time.sleep(0.1)
    assert totals == [0, 20, 0]
    assert {(json.loads(k)["account"], json.loads(k)["balance"]) for k in balance} == {(1, -30), (2, 20), (3, 10)}
    assert api.get(f"/api/runs/{run['id']}/outputs/").json()["views"]["total"] == [{"data": {"total": 0}, "weight": 1}]


CLOSURE_PUSHES = [
    [{"insert": {"src": 0, "dst": 1}}, {"insert": {"src": 1, "dst": 2}}, {"insert": {"src": 2, "dst": 3}}],
    [{"insert": {"src": 3, "dst": 4}}],
    [{"delete": {"src": 1, "dst": 2}}],
    [{"insert": {"src": 1, "dst": 2}}, {"delete": {"src": 0, "dst": 1}}],
]
CLOSURES = ["01 02 03 12 13 23", "01 02 03 12 13 23 04 14 24 34", "01 23 24 34", "12 13 14 23 24 34"]


def test_transitive_closure_through_the_stack_with_inner_frontiers(live_stack, token_client):
    """The recursive oracle over REST + worker + websocket; the frontier of the fixed
    point and of the nodes inside it says which inner iteration each tick settled at."""
    api = token_client("closure")
    circuit = api.post("/api/circuits/", json={"name": "Closure", "document": example("transitive_closure")}).json()
    run = api.post(f"/api/circuits/{circuit['id']}/runs/").json()
    wait_status(api, run["id"], "running")
    closure = {}
    with connect(f"{live_stack.ws_url}/ws/runs/{run['id']}/?token={api.token}", origin=live_stack.base_url, open_timeout=10) as ws:
        receive(ws, "snapshot")
        for t, (records, expected) in enumerate(zip(CLOSURE_PUSHES, CLOSURES)):
            pushed = api.post(f"/api/runs/{run['id']}/inputs/edges/push/", json=records)
            assert pushed.status_code == 202, pushed.text
            delta = receive(ws, "delta")
            assert delta["tick"] == t
            integrate(closure, delta["views"]["closure"])
            assert {(json.loads(k)["src"], json.loads(k)["dst"]) for k in closure} == {(int(p[0]), int(p[1])) for p in expected.split()}
            assert all(w == 1 for w in closure.values())
            mark = delta["frontier"]["tc"]
            assert mark["tick"] == t and mark["converged"] is True and mark["iteration"] >= 2
            assert delta["frontier"]["paths"] == mark and "extend" in delta["stats"]
            deadline = time.monotonic() + 60
            while api.get(f"/api/runs/{run['id']}/completion/", params={"token": pushed.json()["token"]}).json()["status"] != "complete":
                assert time.monotonic() < deadline
                time.sleep(0.1)
