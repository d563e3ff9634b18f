"""Backpressure on POST /api/runs/<id>/inputs/<input>/push/: a bounded number of
unapplied pushes per run; beyond it 429 with Retry-After, nothing stored; lag in status."""
import pytest
from django.test import override_settings

from runs.models import Push, Run, TickOutput

pytestmark = pytest.mark.django_db

ROW = {"id": 1, "customer": "a", "amount": 500}


@pytest.fixture
def run(make_user, circuit_of):
    alice = make_user("alice")
    circuit = circuit_of(alice)
    return Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")


def push(api, run, key=None):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    return api.post(f"/api/runs/{run.pk}/inputs/orders/push/", [{"insert": ROW}, {"insert": {**ROW, "id": 2}}], format="json", **headers)


@override_settings(MAX_PENDING_PUSHES=3, TICK_MAX_PUSHES=2)
def test_beyond_the_limit_a_push_gets_429_with_retry_after(run, client_for):
    api = client_for(run.created_by)
    for i in range(3):
        assert push(api, run, f"k{i}").status_code == 202
    refused = push(api, run)
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1
    body = refused.json()
    assert body["detail"].startswith(f"Run {run.pk} has 3 pushes waiting to be applied, the most it accepts (DBSPWEB_MAX_PENDING_PUSHES=3)")
    assert "Nothing was stored" in body["detail"]
    assert body["errors"][0] | {"retry_after": 0} == {"field": "pending_pushes", "pending": 3, "limit": 3, "retry_after": 0,
                                                      "message": "3 of at most 3 pushes are waiting"}
    assert Push.objects.filter(run=run).count() == 3 and Run.objects.get(pk=run.pk).last_sequence == 3
    # A retry of an accepted push is still answered (it adds nothing).
    again = push(api, run, "k1")
    assert again.status_code == 200 and again.json()["duplicate"] is True
    # The lag is in the run's status: 3 pushes, 6 rows, 2 ticks of at most 2 pushes.
    assert api.get(f"/api/runs/{run.pk}/").json()["lag"] == {"pushes": 3, "rows": 6, "ticks": 2}
    # Once a tick applies pushes, there is room again.
    TickOutput.objects.create(run=run, tick=0, deltas={})
    Push.objects.filter(run=run, sequence__lte=2).update(applied_tick=0)
    assert push(api, run).status_code == 202
    assert api.get(f"/api/runs/{run.pk}/").json()["lag"] == {"pushes": 2, "rows": 4, "ticks": 1}


@override_settings(MAX_PENDING_PUSHES=1)
def test_a_paused_run_says_so_when_full(run, client_for):
    Run.objects.filter(pk=run.pk).update(status="paused")
    api = client_for(run.created_by)
    assert push(api, run).status_code == 202
    refused = push(api, run)
    assert refused.status_code == 429 and "the run is paused; resume it to apply them" in refused.json()["detail"]


@override_settings(MAX_PENDING_PUSHES=1)
def test_retry_after_follows_the_recent_tick_time(run, client_for):
    api = client_for(run.created_by)
    for t in range(3):
        TickOutput.objects.create(run=run, tick=t, deltas={}, ms=4000)
    assert push(api, run).status_code == 202
    refused = push(api, run)
    assert refused.status_code == 429 and refused["Retry-After"] == "4"
