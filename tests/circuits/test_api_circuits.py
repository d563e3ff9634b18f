import copy

import pytest

from circuits.models import Circuit, CircuitVersion
from tests.conftest import example

pytestmark = pytest.mark.django_db


def test_create_list_get_circuit(make_user, client_for):
    alice = make_user("alice")
    api = client_for(alice)
    created = api.post("/api/circuits/", {"name": "Big orders", "description": "d", "document": example("big_orders")}, format="json")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["owner"] == "alice" and body["visibility"] == "private"
    assert body["latest_version"]["number"] == 1
    assert body["latest_version"]["document"]["nodes"][1]["params"]["predicate"] == "amount > 100"
    listed = api.get("/api/circuits/").json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == body["id"]
    assert api.get(f"/api/circuits/{body['id']}/").json()["name"] == "Big orders"


def test_invalid_document_is_rejected_with_node_errors_and_nothing_saved(make_user, client_for):
    api = client_for(make_user())
    doc = copy.deepcopy(example("big_orders"))
    doc["nodes"][1]["params"]["predicate"] = "amount >> 1"
    doc["nodes"].append({"id": "x", "kind": "warp"})
    response = api.post("/api/circuits/", {"name": "broken", "document": doc}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["detail"] == "The circuit document is invalid."
    assert {e["node"] for e in body["errors"]} == {"big", "x"}
    assert Circuit.objects.count() == 0 and CircuitVersion.objects.count() == 0


def test_malformed_json_is_a_400_with_a_message(make_user, client_for):
    api = client_for(make_user())
    response = api.generic("POST", "/api/circuits/", "{not json", content_type="application/json")
    assert response.status_code == 400
    assert "JSON parse error" in response.json()["detail"]


def test_new_version_keeps_the_old_one(make_user, client_for, circuit_of):
    alice = make_user()
    circuit = circuit_of(alice)
    doc = copy.deepcopy(example("big_orders"))
    doc["nodes"][1]["params"]["predicate"] = "amount > 5"
    api = client_for(alice)
    assert api.post(f"/api/circuits/{circuit.pk}/versions/", {"document": doc}, format="json").status_code == 201
    versions = api.get(f"/api/circuits/{circuit.pk}/versions/").json()
    assert [v["number"] for v in versions] == [2, 1]
    assert versions[1]["document"]["nodes"][1]["params"]["predicate"] == "amount > 100"


def test_private_circuits_are_invisible_to_others(make_user, client_for, circuit_of):
    alice, bob = make_user("alice"), make_user("bob")
    private = circuit_of(alice, "private")
    public = circuit_of(alice, "public", name="shared")
    unlisted = circuit_of(alice, "unlisted", name="by link")
    for client in (client_for(bob), client_for()):
        assert client.get(f"/api/circuits/{private.pk}/").status_code == 404
        assert client.get(f"/api/circuits/{public.pk}/").status_code == 200
        assert client.get(f"/api/circuits/{unlisted.pk}/").status_code == 404  # needs the link
        assert client.get(f"/api/circuits/{unlisted.pk}/", HTTP_X_SHARE_TOKEN=unlisted.share_token).status_code == 200
        names = [c["name"] for c in client.get("/api/circuits/").json()["results"]]
        assert names == ["shared"]
    # Others may read a public circuit but not change it or run it.
    bob_api = client_for(bob)
    assert bob_api.patch(f"/api/circuits/{public.pk}/", {"name": "mine"}, format="json").status_code == 403
    assert bob_api.post(f"/api/circuits/{public.pk}/runs/").status_code == 403
    assert client_for().post("/api/circuits/", {"name": "x", "document": example("big_orders")}, format="json").status_code in (401, 403)
