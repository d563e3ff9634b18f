"""Pushes the input log or the engine cannot hold are refused up front (400 naming the row
and field, nothing stored) instead of failing later (PostgreSQL, or the run at tick time):
weights beyond int64, NUL characters, non-finite numbers, over-long Idempotency-Keys.
A reused Idempotency-Key with different data is a 409."""
import pytest

from circuits import services
from runs.models import Push, Run
from tests.conftest import example

pytestmark = pytest.mark.django_db

ADA = {"id": 1, "customer": "ada", "amount": 250}


@pytest.fixture
def run(make_user, circuit_of):
    alice = make_user("alice")
    circuit = circuit_of(alice)
    return Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")


def url(run, name="orders"):
    return f"/api/runs/{run.pk}/inputs/{name}/push/"


def post_csv(api, run, text, **extra):
    return api.generic("POST", url(run), text.encode(), content_type="text/csv", **extra)


def assert_rejected(response, expected: set, status=400):
    assert response.status_code == status, response.json()
    body = response.json()
    assert set(body) == {"detail", "errors"}
    assert {(e.get("row"), e.get("field")) for e in body["errors"]} == expected, body
    assert Push.objects.count() == 0


# --- weights and bigint values: signed 64-bit -------------------------------------------

def test_weight_beyond_int64_is_refused_naming_row_and_field(run, client_for):
    """(On an input with Z-set semantics: a weight of -2^63 deletes what no table holds.)"""
    document = example("big_orders")
    document["nodes"][0]["params"]["allow_negative"] = True
    circuit = services.create_circuit(run.created_by, "Z-set orders", "", "private", document)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=run.created_by, status="running")
    api = client_for(run.created_by)
    response = api.post(url(run), [
        {"weight": 2 ** 63 - 1, "data": ADA},
        {"weight": 2 ** 70, "data": {"id": 2}},
        {"weight": -(2 ** 63) - 1, "data": {"id": 3}},
    ], format="json")
    assert_rejected(response, {(1, "weight"), (2, "weight")})
    assert "64-bit" in response.json()["errors"][0]["message"]
    ok = api.post(url(run), [{"weight": 2 ** 63 - 1, "data": ADA}, {"weight": -(2 ** 63), "data": {"id": 2}}], format="json")
    assert ok.status_code == 202
    assert [r["weight"] for r in Push.objects.get().records] == [2 ** 63 - 1, -(2 ** 63)]


def test_weights_of_one_row_summing_beyond_int64_are_refused(run, client_for):
    response = client_for(run.created_by).post(url(run), [
        {"weight": 2 ** 62, "data": ADA}, {"insert": {"id": 2}}, {"weight": 2 ** 62, "data": ADA},
    ], format="json")
    assert_rejected(response, {(0, "weight"), (2, "weight")})


def test_csv_weight_and_bigint_beyond_int64_are_refused(run, client_for):
    text = f"id,amount,_weight\n1,5,{2 ** 70}\n2,{2 ** 63},1\n3,{-(2 ** 63)},{-(2 ** 63)}\n"
    response = post_csv(client_for(run.created_by), run, text)
    assert_rejected(response, {(0, "_weight"), (1, "amount")})
    lines = {e["row"]: e["line"] for e in response.json()["errors"]}
    assert lines == {0: 2, 1: 3}


def test_json_bigint_column_beyond_int64_is_refused(run, client_for):
    response = client_for(run.created_by).post(url(run), [{"insert": {"id": 1, "amount": 2 ** 63}}], format="json")
    assert_rejected(response, {(0, "amount")})


# --- NUL characters (PostgreSQL's text/jsonb cannot store them) --------------------------

def test_nul_in_a_pushed_string_is_refused_naming_row_and_field(run, client_for):
    response = client_for(run.created_by).post(url(run), [
        {"insert": ADA},
        {"insert": {"id": 2, "customer": "bad\u0000name"}},
        {"weight": 2, "data": {"id": 3, "customer": "\u0000"}},
        {"insert": {"id": None, "customer": "a\u0000"}},  # both problems of a row are reported
    ], format="json")
    assert_rejected(response, {(1, "customer"), (2, "customer"), (3, "id"), (3, "customer")})
    assert "NUL" in response.json()["errors"][0]["message"]


def test_nul_in_a_csv_field_is_refused(run, client_for):
    response = post_csv(client_for(run.created_by), run, "id,customer\n1,ada\n2,b\u0000b\n")
    assert_rejected(response, {(1, "customer")})


def test_non_finite_numbers_are_refused(make_user, client_for):
    from circuits import services
    from tests.conftest import example

    alice = make_user("alice")
    doc = example("big_orders")
    doc["nodes"][0]["params"]["schema"].append({"name": "price", "type": "double"})
    circuit = services.create_circuit(alice, "Prices", "", "private", doc)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    response = post_csv(client_for(alice), run, "id,price\n1,1.5\n2,nan\n3,-inf\n")
    assert_rejected(response, {(1, "price"), (2, "price")})
    overflow = client_for(alice).generic("POST", url(run), b'[{"insert": {"id": 1, "price": 1e999}}]',
                                         content_type="application/json")
    assert_rejected(overflow, {(0, "price")})


# --- Idempotency-Key -----------------------------------------------------------------------

def test_idempotency_key_longer_than_its_column_is_refused(run, client_for):
    api = client_for(run.created_by)
    response = api.post(url(run), [{"insert": ADA}], format="json", HTTP_IDEMPOTENCY_KEY="k" * 201)
    assert_rejected(response, {(None, "Idempotency-Key")})
    assert "Idempotency-Key" in response.json()["detail"] and "200" in response.json()["detail"]
    assert api.post(url(run), [{"insert": ADA}], format="json", HTTP_IDEMPOTENCY_KEY="k" * 200).status_code == 202


def test_reusing_a_key_for_a_different_push_is_a_conflict(run, client_for, make_user, circuit_of):
    api = client_for(run.created_by)
    first = api.post(url(run), [{"insert": ADA}], format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 202
    other_body = api.post(url(run), [{"insert": {**ADA, "amount": 251}}], format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert other_body.status_code == 409
    assert "Idempotency-Key was used for a different push" in other_body.json()["detail"]
    assert other_body.json()["errors"] == [{"field": "Idempotency-Key", "message": "this Idempotency-Key was used for a different push"}]
    more_rows = api.post(url(run), [{"insert": ADA}, {"insert": ADA}], format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert more_rows.status_code == 409
    assert Push.objects.count() == 1
    # The same push after the same normalisation (a bare object, weight 1, key order, a
    # left-out nullable column) is a retry: the first token, nothing new stored.
    same = api.post(url(run), {"weight": 1, "data": {"amount": 250, "customer": "ada", "id": 1}}, format="json",
                    HTTP_IDEMPOTENCY_KEY="k-1")
    assert same.status_code == 200 and same.json() == {"token": first.json()["token"], "sequence": 1, "duplicate": True}
    assert Push.objects.count() == 1


def test_reusing_a_key_for_another_input_is_a_conflict(make_user, client_for):
    from circuits import services

    alice = make_user("alice")
    schema = [{"name": "id", "type": "bigint"}]
    doc = {"format": "dbspweb.circuit", "version": 1,
           "nodes": [{"id": "a", "kind": "input", "params": {"schema": schema}},
                     {"id": "b", "kind": "input", "params": {"schema": schema}},
                     {"id": "both", "kind": "union", "params": {}},
                     {"id": "out", "kind": "output", "params": {}}],
           "edges": [{"from": {"node": "a", "port": "out"}, "to": {"node": "both", "port": "a"}},
                     {"from": {"node": "b", "port": "out"}, "to": {"node": "both", "port": "b"}},
                     {"from": {"node": "both", "port": "out"}, "to": {"node": "out", "port": "in"}}]}
    circuit = services.create_circuit(alice, "Two inputs", "", "private", doc)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    api = client_for(alice)
    assert api.post(url(run, "a"), [{"insert": {"id": 1}}], format="json", HTTP_IDEMPOTENCY_KEY="k").status_code == 202
    other = api.post(url(run, "b"), [{"insert": {"id": 1}}], format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert other.status_code == 409 and "different push" in other.json()["detail"]
    assert Push.objects.count() == 1


def test_a_retry_after_the_run_stopped_still_gets_its_token(run, client_for):
    api = client_for(run.created_by)
    first = api.post(url(run), [{"insert": ADA}], format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 202
    api.post(f"/api/runs/{run.pk}/stop/")
    retry = api.post(url(run), [{"insert": ADA}], format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert retry.status_code == 200 and retry.json()["token"] == first.json()["token"]
    assert api.post(url(run), [{"insert": ADA}], format="json", HTTP_IDEMPOTENCY_KEY="k-2").status_code == 409
    different = api.post(url(run), [{"insert": {"id": 9}}], format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert different.status_code == 409 and "different push" in different.json()["detail"]
    assert Push.objects.count() == 1
