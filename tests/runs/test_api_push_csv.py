"""CSV pushes to POST /api/runs/<id>/inputs/<name>/push/: a text/csv body or a multipart
.csv upload; every bad row and field is reported and nothing is stored."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from runs.models import Push, Run

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(make_user, circuit_of):
    alice = make_user("alice")
    circuit = circuit_of(alice)
    return Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")


def post_csv(api, run, text, **extra):
    return api.generic("POST", f"/api/runs/{run.pk}/inputs/orders/push/", text.encode(), content_type="text/csv", **extra)


def test_csv_rows_are_inserted_with_types_from_the_schema(run, client_for):
    response = post_csv(client_for(run.created_by), run, "id,customer,amount\n1,ada,250\n2,\"Lovelace, A.\",\n")
    assert response.status_code == 202, response.json()
    assert response.json()["token"] == f"{run.pk}:1"
    [push] = Push.objects.all()
    assert push.records == [
        {"data": {"id": 1, "customer": "ada", "amount": 250}, "weight": 1},
        {"data": {"id": 2, "customer": "Lovelace, A.", "amount": None}, "weight": 1},
    ]
    assert push.row_count == 2


def test_weight_column_columns_in_any_order_and_a_bom(run, client_for):
    assert post_csv(client_for(run.created_by), run, "id,amount\n1,250\n").status_code == 202  # the row it deletes
    text = "\ufeffamount,_weight,id\n250,-1,1\n7,3,2\n"
    assert post_csv(client_for(run.created_by), run, text).status_code == 202
    assert Push.objects.get(sequence=2).records == [
        {"data": {"id": 1, "customer": None, "amount": 250}, "weight": -1},
        {"data": {"id": 2, "customer": None, "amount": 7}, "weight": 3},
    ]


def test_every_bad_row_and_field_is_reported_and_nothing_stored(run, client_for):
    text = "id,customer,amount,_weight\n1,ok,5,1\nx,b,many,1\n,c,3,1\n4,d,4,0\n5,e\n6,f,1.5,1\n"
    response = post_csv(client_for(run.created_by), run, text)
    assert response.status_code == 400
    body = response.json()
    assert "nothing was stored" in body["detail"]
    found = {(e["row"], e["line"], e.get("field")) for e in body["errors"]}
    assert found == {
        (1, 3, "id"), (1, 3, "amount"),     # not integers
        (2, 4, "id"),                       # null in a non-null column
        (3, 5, "_weight"),                  # weight 0
        (4, 6, None),                       # too few fields
        (5, 7, "amount"),                   # 1.5 is not an integer
    }
    message = next(e["message"] for e in body["errors"] if e["row"] == 1 and e["field"] == "amount")
    assert message == "line 3: row 1, column 'amount': expected an integer (bigint), got 'many'"
    assert Push.objects.count() == 0 and Run.objects.get(pk=run.pk).last_sequence == 0


def test_unknown_and_duplicate_columns_in_the_header(run, client_for):
    response = post_csv(client_for(run.created_by), run, "id,colour,id\n1,red,1\n")
    assert response.status_code == 400
    assert {(e["line"], e["field"]) for e in response.json()["errors"]} == {(1, "colour"), (1, "id")}
    assert "unknown column 'colour'" in response.json()["errors"][0]["message"]
    assert Push.objects.count() == 0


def test_missing_non_null_column_is_reported_per_row(run, client_for):
    response = post_csv(client_for(run.created_by), run, "customer\nada\nbob\n")
    assert response.status_code == 400
    assert [(e["row"], e["field"]) for e in response.json()["errors"]] == [(0, "id"), (1, "id")]


def test_empty_and_non_utf8_and_malformed_csv(run, client_for):
    api = client_for(run.created_by)
    empty = post_csv(api, run, "")
    assert empty.status_code == 400 and "empty" in empty.json()["detail"]
    latin = api.generic("POST", f"/api/runs/{run.pk}/inputs/orders/push/", "id,customer\n1,Jos\xe9\n".encode("latin-1"), content_type="text/csv")
    assert latin.status_code == 400 and "not UTF-8" in latin.json()["detail"]
    quote = post_csv(api, run, 'id,customer\n1,"unterminated\n')
    assert quote.status_code == 400 and "malformed CSV" in quote.json()["errors"][0]["message"]
    assert Push.objects.count() == 0


def test_multipart_upload_of_a_csv_file(run, client_for):
    api = client_for(run.created_by)
    upload = SimpleUploadedFile("orders.csv", b"id,customer,amount\n10,zoe,900\n", content_type="text/csv")
    response = api.post(f"/api/runs/{run.pk}/inputs/orders/push/", {"file": upload}, format="multipart", HTTP_IDEMPOTENCY_KEY="csv-1")
    assert response.status_code == 202
    again = SimpleUploadedFile("orders.csv", b"id,customer,amount\n10,zoe,900\n", content_type="text/csv")
    repeat = api.post(f"/api/runs/{run.pk}/inputs/orders/push/", {"file": again}, format="multipart", HTTP_IDEMPOTENCY_KEY="csv-1")
    assert repeat.status_code == 200 and repeat.json()["duplicate"] is True
    assert Push.objects.get().records == [{"data": {"id": 10, "customer": "zoe", "amount": 900}, "weight": 1}]
    none = api.post(f"/api/runs/{run.pk}/inputs/orders/push/", {"note": "x"}, format="multipart")
    assert none.status_code == 400 and none.json()["errors"][0]["field"] == "file"


def test_typed_columns(make_user, client_for):
    from circuits import services

    alice = make_user("alice")
    doc = {"format": "dbspweb.circuit", "version": 1, "nodes": [
        {"id": "t", "kind": "input", "params": {"schema": [
            {"name": "ok", "type": "boolean"}, {"name": "x", "type": "double"},
            {"name": "d", "type": "date"}, {"name": "ts", "type": "timestamp"}]}},
        {"id": "o", "kind": "output", "params": {}}],
        "edges": [{"from": {"node": "t", "port": "out"}, "to": {"node": "o", "port": "in"}}]}
    circuit = services.create_circuit(alice, "typed", "", "private", doc)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    api = client_for(alice)
    url = f"/api/runs/{run.pk}/inputs/t/push/"
    good = api.generic("POST", url, b"ok,x,d,ts\nyes,1.5,2026-01-02,2026-01-02T03:04:05\nF,-2,,\n", content_type="text/csv")
    assert good.status_code == 202, good.json()
    assert Push.objects.get().records == [
        {"data": {"ok": True, "x": 1.5, "d": "2026-01-02", "ts": "2026-01-02T03:04:05"}, "weight": 1},
        {"data": {"ok": False, "x": -2.0, "d": None, "ts": None}, "weight": 1},
    ]
    bad = api.generic("POST", url, b"ok,x,d,ts\nmaybe,abc,2026-13-01,yesterday\n", content_type="text/csv")
    assert bad.status_code == 400
    assert sorted(e["field"] for e in bad.json()["errors"]) == ["d", "ok", "ts", "x"]


@override_settings(PUSH_MAX_ROWS=2)
def test_oversized_csv_is_refused(run, client_for):
    response = post_csv(client_for(run.created_by), run, "id\n1\n2\n3\n")
    assert response.status_code == 413 and "at most 2 records" in response.json()["detail"]
    assert response.json()["errors"][0]["field"] == "records"
    assert Push.objects.count() == 0


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=64)
def test_bodies_over_the_size_limit_are_refused_unread(run, client_for):
    api = client_for(run.created_by)
    big_csv = "id,customer,amount\n" + "".join(f"{i},c,{i}\n" for i in range(20))
    response = post_csv(api, run, big_csv)
    assert response.status_code == 413 and response.json()["errors"][0]["field"] == "body"
    big_json = [{"insert": {"id": i, "customer": "c", "amount": i}} for i in range(5)]
    as_json = api.post(f"/api/runs/{run.pk}/inputs/orders/push/", big_json, format="json")
    assert as_json.status_code == 413 and as_json.json()["errors"][0]["field"] == "body"
    upload = SimpleUploadedFile("orders.csv", big_csv.encode(), content_type="text/csv")
    assert api.post(f"/api/runs/{run.pk}/inputs/orders/push/", {"file": upload}, format="multipart").status_code == 413
    assert Push.objects.count() == 0


@pytest.mark.parametrize("value", ["-9223372036854775809", "-9223372036854776832", "9223372036854775808", "18446744073709551616"])
def test_a_bigint_out_of_range_is_refused_naming_line_and_column(run, client_for, value):
    response = post_csv(client_for(run.created_by), run, f"id,customer,amount\n1,ada,{value}\n")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (error["row"], error["line"], error["field"]) == (0, 2, "amount")
    assert "out of the bigint range" in error["message"] and value in error["message"]
    assert Push.objects.count() == 0
