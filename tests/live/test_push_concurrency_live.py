"""Pushes racing through the real ASGI server (uvicorn) into one run: the same
Idempotency-Key with the same push from many clients at once is logged once and every
client gets its token (with other data it is refused); distinct pushes get contiguous sequence numbers, none lost, none doubled.

One uvicorn process runs Django's sync views one at a time, so this checks what a client
sees under concurrency; the database-level race (two processes inserting the same key,
settled by the unique constraint in runs/input_log.push) is not forced here."""
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from runs.models import Push
from tests.conftest import example
from tests.live.test_slice import wait_status

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

CLIENTS = 12


def test_concurrent_pushes_are_logged_exactly_once(live_stack, token_client):
    api = token_client("alice")
    circuit = api.post("/api/circuits/", json={"name": "race", "document": example("big_orders")}).json()
    run = api.post(f"/api/circuits/{circuit['id']}/runs/").json()
    wait_status(api, run["id"], "running")
    url = f"{live_stack.base_url}/api/runs/{run['id']}/inputs/orders/push/"
    headers = {"Authorization": f"Token {api.token}"}

    def push(i, key=None):
        extra = {"Idempotency-Key": key} if key else {}
        with httpx.Client(timeout=60) as http:
            return http.post(url, json=[{"insert": {"id": i, "customer": "c", "amount": 500}}], headers={**headers, **extra})

    # A client retrying one push sends the same body with the same key, from many
    # connections at once: one is logged, every client gets its token.
    with ThreadPoolExecutor(CLIENTS) as pool:
        same = list(pool.map(lambda i: push(1000, key="once"), range(CLIENTS)))
    assert all(r.status_code in (200, 202) for r in same), [r.text for r in same]
    assert sorted(r.status_code for r in same).count(202) == 1
    assert len({r.json()["token"] for r in same}) == 1
    assert Push.objects.filter(run_id=run["id"], idempotency_key="once").count() == 1
    # The same key with other data is a client bug, refused whatever the timing.
    with ThreadPoolExecutor(CLIENTS) as pool:
        other = list(pool.map(lambda i: push(2000 + i, key="once"), range(CLIENTS)))
    assert all(r.status_code == 409 for r in other), [r.text for r in other]
    assert Push.objects.filter(run_id=run["id"]).count() == 1

    with ThreadPoolExecutor(CLIENTS) as pool:
        distinct = list(pool.map(push, range(CLIENTS)))
    assert all(r.status_code == 202 for r in distinct), [r.text for r in distinct]
    sequences = sorted(r.json()["sequence"] for r in distinct)
    assert sequences == list(range(2, CLIENTS + 2))  # after the one idempotent push
    logged = list(Push.objects.filter(run_id=run["id"]).order_by("sequence").values_list("sequence", flat=True))
    assert logged == list(range(1, CLIENTS + 2))
