"""Run endpoints (in-process; tests/live/ runs them with a real worker): the runs of a
circuit, start, detail, stop, the input log, completion, outputs at a tick, deltas paged."""
import pytest

from circuits.models import CircuitGrant, Push, Run, TickOutput

pytestmark = pytest.mark.django_db

ADA = {"id": 1, "customer": "ada", "amount": 250}
BOB = {"id": 2, "customer": "bob", "amount": 300}


@pytest.fixture
def run(make_user, circuit_of):
    alice = make_user("alice")
    circuit = circuit_of(alice, "public")
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running", current_tick=2, last_sequence=2)
    Push.objects.create(run=run, sequence=1, input="orders", records=[{"data": ADA, "weight": 1}], row_count=1, applied_tick=0)
    Push.objects.create(run=run, sequence=2, input="orders", records=[{"data": BOB, "weight": 1}], row_count=1)
    TickOutput.objects.create(run=run, tick=0, deltas={"big_orders": [{"data": ADA, "weight": 1}]})
    TickOutput.objects.create(run=run, tick=1, deltas={"big_orders": [{"data": BOB, "weight": 1}]})
    TickOutput.objects.create(run=run, tick=2, deltas={"big_orders": [{"data": ADA, "weight": -1}]})
    return run


def test_run_detail_has_its_interface_and_lag(run, client_for):
    body = client_for().get(f"/api/runs/{run.pk}/").json()
    assert body["status"] == "running" and body["version"] == 1 and body["current_tick"] == 2
    assert body["inputs"][0]["name"] == "orders" and [c["name"] for c in body["inputs"][0]["schema"]] == ["id", "customer", "amount"]
    assert body["views"] == ["big_orders"]
    assert (body["lag"]["pushes"], body["lag"]["rows"]) == (1, 1)  # push 2 is not applied yet


def test_runs_of_a_circuit_and_starting_one(run, client_for, make_user):
    api = client_for(run.created_by)
    listed = api.get(f"/api/circuits/{run.circuit_id}/runs/").json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == run.pk
    started = api.post(f"/api/circuits/{run.circuit_id}/runs/")
    assert started.status_code == 201 and started.json()["status"] == "created"
    bob = make_user("bob")
    assert client_for(bob).post(f"/api/circuits/{run.circuit_id}/runs/").status_code == 403
    CircuitGrant.objects.create(circuit=run.circuit, user=bob, can_operate=True)
    assert client_for(bob).post(f"/api/circuits/{run.circuit_id}/runs/").status_code == 201
    assert Run.objects.filter(circuit=run.circuit).count() == 3


def test_stop_is_final_and_idempotent(run, client_for):
    api = client_for(run.created_by)
    stopped = api.post(f"/api/runs/{run.pk}/stop/")
    assert stopped.status_code == 200 and stopped.json()["status"] == "stopped"
    assert api.post(f"/api/runs/{run.pk}/stop/").json()["status"] == "stopped"
    refused = api.post(f"/api/runs/{run.pk}/inputs/orders/push/", [{"insert": ADA}], format="json")
    assert refused.status_code == 409 and "stopped" in refused.json()["detail"]


def test_input_log_and_completion(run, client_for):
    api = client_for()
    log = api.get(f"/api/runs/{run.pk}/pushes/").json()
    assert [(p["token"], p["applied_tick"]) for p in log] == [(f"{run.pk}:1", 0), (f"{run.pk}:2", None)]
    assert api.get(f"/api/runs/{run.pk}/completion/", {"token": f"{run.pk}:1"}).json() == {"token": f"{run.pk}:1", "status": "complete", "tick": 0}
    assert api.get(f"/api/runs/{run.pk}/completion/", {"token": f"{run.pk}:2"}).json()["status"] == "pending"
    assert api.get(f"/api/runs/{run.pk}/completion/", {"token": "x"}).status_code == 400
    assert api.get(f"/api/runs/{run.pk}/completion/", {"token": f"{run.pk}:9"}).status_code == 404
    assert api.get(f"/api/runs/{run.pk}/completion/", {"token": f"{run.pk + 1}:1"}).status_code == 400


def test_outputs_at_any_tick(run, client_for):
    api = client_for()
    assert api.get(f"/api/runs/{run.pk}/outputs/").json() == {"tick": 2, "views": {"big_orders": [{"data": BOB, "weight": 1}]}}
    at1 = api.get(f"/api/runs/{run.pk}/outputs/", {"tick": 1}).json()["views"]["big_orders"]
    assert sorted(r["data"]["id"] for r in at1) == [1, 2]
    assert api.get(f"/api/runs/{run.pk}/outputs/", {"tick": -1}).json()["views"] == {"big_orders": []}
    assert api.get(f"/api/runs/{run.pk}/outputs/", {"tick": "now"}).status_code == 400


def test_deltas_since_a_tick_paged(run, client_for):
    api = client_for()
    first = api.get(f"/api/runs/{run.pk}/deltas/", {"since": -1, "limit": 2}).json()
    assert [t["tick"] for t in first["ticks"]] == [0, 1] and first["more"] is True
    rest = api.get(f"/api/runs/{run.pk}/deltas/", {"since": 1, "limit": 2}).json()
    assert [t["tick"] for t in rest["ticks"]] == [2] and rest["more"] is False
    assert rest["ticks"][0]["views"]["big_orders"] == [{"data": ADA, "weight": -1}]
    assert api.get(f"/api/runs/{run.pk}/deltas/", {"since": "x"}).status_code == 400


def test_outputs_at_a_tick_the_run_has_not_reached_is_refused(run, client_for):
    api = client_for()
    for tick in (3, 99, -2):
        response = api.get(f"/api/runs/{run.pk}/outputs/", {"tick": tick})
        assert response.status_code == 400, (tick, response.json())
        assert response.json()["errors"] == [{"field": "tick", "message": f"{tick} is not between -1 and the current tick 2"}]
    for tick in ("now", "1.5", "-"):
        response = api.get(f"/api/runs/{run.pk}/outputs/", {"tick": tick})
        assert response.status_code == 400 and response.json()["errors"][0]["field"] == "tick"
    assert api.get(f"/api/runs/{run.pk}/outputs/", {"tick": 2}).json()["tick"] == 2
    fresh = Run.objects.create(circuit=run.circuit, version=run.version, created_by=run.created_by)
    assert api.get(f"/api/runs/{fresh.pk}/outputs/").json() == {"tick": -1, "views": {"big_orders": []}}
    assert api.get(f"/api/runs/{fresh.pk}/outputs/", {"tick": 0}).status_code == 400


@pytest.mark.parametrize("status, error, expected", [
    ("failed", "ArrowInvalid: boom", "ArrowInvalid: boom"),
    ("failed", "", "failed before this push was applied"),
    ("stopped", "", "was stopped before this push was applied"),
])
def test_completion_of_a_push_a_dead_run_never_applied_is_failed(run, client_for, status, error, expected):
    Run.objects.filter(pk=run.pk).update(status=status, error=error)
    api = client_for()
    body = api.get(f"/api/runs/{run.pk}/completion/", {"token": f"{run.pk}:2"}).json()
    assert body["status"] == "failed" and body["tick"] is None and expected in body["error"]
    applied = api.get(f"/api/runs/{run.pk}/completion/", {"token": f"{run.pk}:1"}).json()
    assert applied == {"token": f"{run.pk}:1", "status": "complete", "tick": 0}


def test_completion_stays_pending_while_paused(run, client_for):
    Run.objects.filter(pk=run.pk).update(status="paused")
    assert client_for().get(f"/api/runs/{run.pk}/completion/", {"token": f"{run.pk}:2"}).json() == {
        "token": f"{run.pk}:2", "status": "pending", "tick": None}


def test_run_detail_names_the_worker_holding_its_lease(run, client_for):
    from datetime import timedelta

    from django.utils import timezone

    from workers.models import RunLease

    api = client_for()
    assert api.get(f"/api/runs/{run.pk}/").json()["worker"] == ""
    now = timezone.now()
    lease = RunLease.objects.create(run=run, worker="celery@host-a:42", acquired_at=now, expires_at=now + timedelta(minutes=1))
    assert api.get(f"/api/runs/{run.pk}/").json()["worker"] == "celery@host-a:42"
    assert api.get(f"/api/circuits/{run.circuit_id}/runs/").json()["results"][0]["worker"] == "celery@host-a:42"
    lease.expires_at = now - timedelta(seconds=1)  # the worker died; nobody owns the run now
    lease.save()
    assert api.get(f"/api/runs/{run.pk}/").json()["worker"] == ""
