"""Pushes are validated whole, logged durably with a sequence number, idempotent."""
import pytest
from django.test import override_settings

from runs.models import Push, Run

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(make_user, circuit_of):
    alice = make_user("alice")
    circuit = circuit_of(alice)
    return Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")


def url(run, name="orders"):
    return f"/api/runs/{run.pk}/inputs/{name}/push/"


def test_push_is_logged_with_a_token(run, client_for):
    api = client_for(run.created_by)
    held = api.post(url(run), [{"insert": {"id": 2, "customer": None, "amount": 3}}], format="json")
    assert held.json()["token"] == f"{run.pk}:1" and held.json()["sequence"] == 1
    response = api.post(url(run), [{"insert": {"id": 1, "customer": "a", "amount": 500}}, {"delete": {"id": 2, "customer": None, "amount": 3}}], format="json")
    assert response.status_code == 202
    assert response.json()["token"] == f"{run.pk}:2" and response.json()["sequence"] == 2
    push = Push.objects.get(sequence=2)
    assert push.records == [
        {"data": {"id": 1, "customer": "a", "amount": 500}, "weight": 1},
        {"data": {"id": 2, "customer": None, "amount": 3}, "weight": -1},
    ]
    assert push.applied_tick is None
    assert api.get(f"/api/runs/{run.pk}/completion/", {"token": f"{run.pk}:2"}).json()["status"] == "pending"
    third = api.post(url(run), {"insert": {"id": 3, "customer": "c", "amount": 1}}, format="json")
    assert third.json()["sequence"] == 3


def test_one_bad_row_rejects_the_whole_push(run, client_for):
    api = client_for(run.created_by)
    response = api.post(url(run), [
        {"insert": {"id": 1, "customer": "a", "amount": 500}},
        {"insert": {"id": 2, "customer": "b", "amount": "many"}},
        {"insert": {"id": 3, "colour": "red"}},
        {"insert": {"id": None, "customer": "b", "amount": 1}},
    ], format="json")
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert {(e["row"], e.get("field")) for e in errors} >= {(1, "amount"), (2, "colour"), (3, "id")}
    assert "nothing was stored" in response.json()["detail"]
    assert Push.objects.count() == 0
    assert Run.objects.get(pk=run.pk).last_sequence == 0


def test_idempotency_key_logs_once(run, client_for):
    api = client_for(run.created_by)
    body = [{"insert": {"id": 1, "customer": "a", "amount": 500}}]
    first = api.post(url(run), body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    again = api.post(url(run), body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 202 and again.status_code == 200
    assert again.json()["token"] == first.json()["token"] and again.json()["duplicate"] is True
    assert Push.objects.count() == 1


@override_settings(PUSH_MAX_ROWS=3)
def test_oversized_push_is_refused(run, client_for):
    response = client_for(run.created_by).post(url(run), [{"insert": {"id": i}} for i in range(4)], format="json")
    assert response.status_code == 413 and "at most 3 records" in response.json()["detail"]
    assert response.json()["errors"] == [{"field": "records", "message": "4 records; the limit is 3", "row": 3}]
    assert Push.objects.count() == 0


def test_weighted_records_and_malformed_records_are_named_per_row(run, client_for):
    api = client_for(run.created_by)
    response = api.post(url(run), [
        {"weight": 2, "data": {"id": 1, "customer": "a", "amount": 5}},
        {"weight": 0, "data": {"id": 2}},
        {"weight": "x", "data": {"id": 3}},
        "just a string",
        {"upsert": {"id": 4}},
        {"insert": {"id": 5, "amount": 1.5}},
        {"insert": {"id": 2 ** 70}},
    ], format="json")
    assert response.status_code == 400
    found = {(e["row"], e.get("field")) for e in response.json()["errors"]}
    assert found == {(1, "weight"), (2, "weight"), (3, None), (4, None), (5, "amount"), (6, "id")}
    assert Push.objects.count() == 0


def test_a_rejected_push_leaves_no_gap_in_the_sequence(run, client_for):
    api = client_for(run.created_by)
    assert api.post(url(run), [{"insert": {"id": None}}], format="json").status_code == 400
    ok = api.post(url(run), [{"weight": 2, "data": {"id": 1, "customer": "a", "amount": 5}}], format="json")
    assert ok.status_code == 202 and ok.json()["sequence"] == 1
    assert Push.objects.get().records == [{"data": {"id": 1, "customer": "a", "amount": 5}, "weight": 2}]


def test_unknown_input_and_malformed_json(run, client_for):
    api = client_for(run.created_by)
    missing = api.post(url(run, "nope"), [], format="json")
    assert missing.status_code == 404 and "no input 'nope'" in missing.json()["detail"]
    broken = api.generic("POST", url(run), "[{\"insert\": ", content_type="application/json")
    assert broken.status_code == 400 and "JSON parse error" in broken.json()["detail"]


def test_only_the_owner_pushes(run, client_for, make_user):
    bob = make_user("bob")
    assert client_for(bob).post(url(run), [], format="json").status_code == 404  # private: invisible
    run.circuit.visibility = "public"
    run.circuit.save()
    assert client_for(bob).post(url(run), [], format="json").status_code == 403
    assert client_for().post(url(run), [], format="json").status_code in (401, 403)


def test_stopped_run_refuses_pushes(run, client_for):
    run.status = "stopped"
    run.save()
    response = client_for(run.created_by).post(url(run), [{"insert": {"id": 1}}], format="json")
    assert response.status_code == 409
