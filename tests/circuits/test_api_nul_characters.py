"""NUL characters (U+0000): SQLite stores them, PostgreSQL's text and jsonb columns refuse
them (a 500). Every circuit field the API stores answers 400 naming the field (documents:
the dotted path inside the document), whichever database runs."""
import copy

import pytest

from circuits import services
from circuits.models import Circuit, CircuitVersion
from tests.conftest import example

pytestmark = pytest.mark.django_db


def document_with_nul():
    doc = copy.deepcopy(example("big_orders"))
    doc["nodes"][1]["params"]["predicate"] = "amount > 100 or customer = 'a\u0000'"
    return doc


def test_nul_paths_finds_strings_and_keys():
    value = {"a": ["x", "y\u0000"], "b\u0000": 1, "c": {"d": "\u0000"}, "e": 3}
    assert sorted(map(str, services.nul_paths(value))) == sorted(map(str, [("a", 1), ("b\u0000",), ("c", "d")]))


def test_a_new_circuit_with_a_nul_in_its_document_is_refused(make_user, client_for):
    api = client_for(make_user("alice"))
    response = api.post("/api/circuits/", {"name": "c", "document": document_with_nul()}, format="json")
    assert response.status_code == 400, response.json()
    assert {"field": "document.nodes.1.params.predicate", "node": "big",
            "message": "document.nodes.1.params.predicate: contains a NUL character (\\u0000), which cannot be stored"} \
        in response.json()["errors"]
    assert Circuit.objects.count() == 0


@pytest.mark.parametrize("field, value", [("name", "a\u0000b"), ("description", "\u0000"), ("tags", ["ok", "b\u0000d"])])
def test_nul_in_name_description_or_tags_is_refused(make_user, client_for, field, value):
    api = client_for(make_user("alice"))
    body = {"name": "c", "document": example("big_orders"), field: value}
    response = api.post("/api/circuits/", body, format="json")
    assert response.status_code == 400, response.json()
    assert {e["field"].split(".")[0] for e in response.json()["errors"]} == {field}
    assert Circuit.objects.count() == 0


def test_nul_in_a_document_key_a_new_version_or_a_patch_is_refused(make_user, circuit_of, client_for):
    alice = make_user("alice")
    circuit = circuit_of(alice)
    api = client_for(alice)
    doc = copy.deepcopy(example("big_orders"))
    doc["nodes"][0]["label\u0000"] = "x"
    new_version = api.post(f"/api/circuits/{circuit.pk}/versions/", {"document": doc}, format="json")
    assert new_version.status_code == 400
    assert [e["field"] for e in new_version.json()["errors"]] == ["document.nodes.0.label\\u0000"]
    patched = api.patch(f"/api/circuits/{circuit.pk}/", {"document": document_with_nul(), "description": "new"}, format="json")
    assert patched.status_code == 400
    assert [e["field"] for e in patched.json()["errors"]] == ["document.nodes.1.params.predicate"]
    assert CircuitVersion.objects.filter(circuit=circuit).count() == 1
    assert Circuit.objects.get(pk=circuit.pk).description == ""


def test_validate_and_plan_report_the_nul(client_for):
    api = client_for()
    result = api.post("/api/validate/", {"document": document_with_nul()}, format="json").json()
    assert result["valid"] is False
    assert [e["field"] for e in result["errors"]] == ["document.nodes.1.params.predicate"]
    assert api.post("/api/plan/", {"document": document_with_nul()}, format="json").status_code == 400


def test_nul_in_list_filters_is_refused(make_user, client_for):
    api = client_for(make_user("alice"))
    for param in ("search", "tag", "owner"):
        response = api.get("/api/circuits/", {param: "a\u0000"})
        assert response.status_code == 400 and response.json()["errors"][0]["field"] == param


def test_a_nul_in_a_looked_up_value_is_a_400_not_a_500(make_user, circuit_of, client_for):
    """A share token is looked up, not stored: SQLite finds nothing (404); PostgreSQL
    refuses the query, which the error handler answers as a 400."""
    from django.db import connection

    circuit = circuit_of(make_user("alice"), "unlisted")
    response = client_for().get(f"/api/circuits/{circuit.pk}/", {"share": "x\u0000y"})
    expected = 400 if connection.vendor == "postgresql" else 404
    assert response.status_code == expected, response.content
    assert set(response.json()) == {"detail", "errors"}
