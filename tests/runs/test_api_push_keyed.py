"""Pushes to an input with a `primary_key` (upsert semantics, dbsp/upsert.py) through the
API: a NULL key and a weight other than ±1 are refused naming the row and field, and
nothing is stored."""
import copy

import pytest

from circuits import services
from runs.models import Push, Run
from tests.conftest import example

pytestmark = pytest.mark.django_db


def keyed_orders() -> dict:
    doc = copy.deepcopy(example("big_orders"))
    doc["nodes"][0]["params"]["primary_key"] = ["id"]
    doc["nodes"][0]["params"]["schema"][0]["nullable"] = True  # the key makes it NOT NULL anyway
    return doc


@pytest.fixture
def run(make_user):
    alice = make_user("alice")
    circuit = services.create_circuit(alice, "Keyed orders", "", "private", keyed_orders())
    return Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")


def url(run):
    return f"/api/runs/{run.pk}/inputs/orders/push/"


def test_the_run_reports_the_key_column_as_not_null(run, client_for):
    [orders] = client_for(run.created_by).get(f"/api/runs/{run.pk}/").json()["inputs"]
    assert orders["schema"][0] == {"name": "id", "type": "bigint", "nullable": False}


def test_a_null_key_rejects_the_whole_push(run, client_for):
    response = client_for(run.created_by).post(url(run), [
        {"insert": {"id": 1, "customer": "ada", "amount": 250}},
        {"insert": {"id": None, "customer": "bob", "amount": 300}},
    ], format="json")
    assert response.status_code == 400, response.json()
    body = response.json()
    assert "nothing was stored" in body["detail"]
    assert [(e["row"], e["field"]) for e in body["errors"]] == [(1, "id")]
    assert "null" in body["errors"][0]["message"]
    assert Push.objects.count() == 0 and Run.objects.get(pk=run.pk).last_sequence == 0


def test_a_weight_other_than_one_is_refused_with_the_other_problems(run, client_for):
    response = client_for(run.created_by).post(url(run), [
        {"weight": 1, "data": {"id": 1, "customer": "ada"}},
        {"weight": 2, "data": {"id": 2, "customer": "bob"}},
        {"insert": {"id": None}},
        {"weight": -3, "data": {"id": 3}},
    ], format="json")
    assert response.status_code == 400
    assert [(e["row"], e["field"]) for e in response.json()["errors"]] == [(1, "weight"), (2, "id"), (3, "weight")]
    assert Push.objects.count() == 0


def test_csv_null_key_is_refused(run, client_for):
    response = client_for(run.created_by).generic("POST", url(run), b"id,customer\n1,ada\n,bob\n", content_type="text/csv")
    assert response.status_code == 400
    assert [(e["row"], e["line"], e["field"]) for e in response.json()["errors"]] == [(1, 3, "id")]
    assert Push.objects.count() == 0


def test_upserts_of_one_key_keep_the_last_record(run, client_for):
    response = client_for(run.created_by).post(url(run), [
        {"insert": {"id": 1, "customer": "ada", "amount": 1}},
        {"insert": {"id": 1, "customer": "ada", "amount": 2}},
        {"delete": {"id": 2}},
    ], format="json")
    assert response.status_code == 202
    assert Push.objects.get().records == [
        {"data": {"id": 1, "customer": "ada", "amount": 2}, "weight": 1},
        {"data": {"id": 2, "customer": None, "amount": None}, "weight": -1},
    ]
