"""Hostile push bodies at the door: a lone surrogate in a pushed value (it was accepted
and then failed the run) or JSON nested beyond DBSPWEB_MAX_JSON_DEPTH is refused with a
400 naming the path or the limit, and nothing is logged."""
import pytest

from runs.models import Push
from tests.runs.test_api_push_csv import run  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db


def push(api, run, body: bytes, content_type="application/json"):
    return api.generic("POST", f"/api/runs/{run.pk}/inputs/orders/push/", body, content_type=content_type)


def test_a_lone_surrogate_in_a_pushed_value_is_refused_naming_the_record(run, client_for):
    body = b'[{"insert": {"id": 1, "customer": "ok", "amount": 1}}, {"insert": {"id": 2, "customer": "a\\udc00", "amount": 1}}]'
    response = push(client_for(run.created_by), run, body)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "1.insert.customer"
    assert Push.objects.count() == 0


def test_deeply_nested_push_bodies_are_refused_naming_the_limit(run, client_for):
    body = b'[{"insert": {"id": 1, "customer": ' + b"[" * 50_000 + b"]" * 50_000 + b', "amount": 1}}]'
    response = push(client_for(run.created_by), run, body)
    assert response.status_code == 400 and "DBSPWEB_MAX_JSON_DEPTH" in response.json()["detail"]
    assert Push.objects.count() == 0


def test_a_csv_cell_with_surrogate_bytes_is_refused_as_not_utf8(run, client_for):
    body = "id,customer,amount\n1,".encode() + b"\xed\xa0\x80" + b",3\n"  # a surrogate encoded as if UTF-8
    response = push(client_for(run.created_by), run, body, content_type="text/csv")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "body"
    assert Push.objects.count() == 0
