"""Versions: list, get one, diff two (GET /api/circuits/<id>/versions/<a>/diff/<b>/)."""
import copy

import pytest

from circuits import services
from circuits.diff import diff_documents
from tests.conftest import example

pytestmark = pytest.mark.django_db


def second_document():
    doc = copy.deepcopy(example("big_orders"))
    doc["nodes"][1]["params"]["predicate"] = "amount > 5"
    doc["nodes"][1]["position"] = {"x": 240, "y": 0}
    doc["nodes"].append({"id": "small", "kind": "filter", "position": {"x": 220, "y": 120}, "params": {"predicate": "amount <= 5"}})
    doc["nodes"].append({"id": "small_orders", "kind": "output", "position": {"x": 440, "y": 120}, "params": {}})
    doc["edges"].append({"from": {"node": "orders", "port": "out"}, "to": {"node": "small", "port": "in"}})
    doc["edges"].append({"from": {"node": "small", "port": "out"}, "to": {"node": "small_orders", "port": "in"}})
    return doc


@pytest.fixture
def circuit(make_user, circuit_of):
    circuit = circuit_of(make_user("alice"), "public")
    services.add_version(circuit, second_document())
    return circuit


def test_list_and_get_versions(circuit, client_for):
    api = client_for()
    assert [v["number"] for v in api.get(f"/api/circuits/{circuit.pk}/versions/").json()] == [2, 1]
    v1 = api.get(f"/api/circuits/{circuit.pk}/versions/1/")
    assert v1.status_code == 200 and v1.json()["document"]["nodes"][1]["params"]["predicate"] == "amount > 100"
    missing = api.get(f"/api/circuits/{circuit.pk}/versions/7/")
    assert missing.status_code == 404 and missing.json()["detail"] == f"Circuit {circuit.pk} has no version 7."


def test_diff_names_nodes_fields_and_edges(circuit, client_for):
    response = client_for().get(f"/api/circuits/{circuit.pk}/versions/1/diff/2/")
    assert response.status_code == 200
    body = response.json()
    assert (body["circuit"], body["a"], body["b"]) == (circuit.pk, 1, 2)
    assert [n["id"] for n in body["nodes"]["added"]] == ["small", "small_orders"]
    assert body["nodes"]["removed"] == []
    [changed] = body["nodes"]["changed"]
    assert changed["id"] == "big" and changed["fields"] == ["params.predicate", "position.x"]
    assert changed["changes"]["params.predicate"] == {"from": "amount > 100", "to": "amount > 5"}
    assert {(e["from"]["node"], e["to"]["node"]) for e in body["edges"]["added"]} == {("orders", "small"), ("small", "small_orders")}
    assert body["edges"]["removed"] == []
    back = client_for().get(f"/api/circuits/{circuit.pk}/versions/2/diff/1/").json()
    assert [n["id"] for n in back["nodes"]["removed"]] == ["small", "small_orders"] and len(back["edges"]["removed"]) == 2


def test_diff_of_a_version_with_itself_is_empty_and_unknown_versions_404(circuit, client_for):
    same = client_for().get(f"/api/circuits/{circuit.pk}/versions/2/diff/2/").json()
    assert same["nodes"] == {"added": [], "removed": [], "changed": []} and same["edges"] == {"added": [], "removed": []}
    assert client_for().get(f"/api/circuits/{circuit.pk}/versions/1/diff/3/").status_code == 404


def test_removed_field_and_rewired_edge():
    a = {"nodes": [{"id": "f", "kind": "filter", "params": {"predicate": "x > 1"}, "label": "big"}],
         "edges": [{"from": {"node": "i", "port": "out"}, "to": {"node": "f", "port": "in"}}]}
    b = {"nodes": [{"id": "f", "kind": "filter", "params": {"predicate": "x > 1"}}],
         "edges": [{"from": {"node": "j", "port": "out"}, "to": {"node": "f", "port": "in"}}]}
    d = diff_documents(a, b)
    assert d["nodes"]["changed"] == [{"id": "f", "fields": ["label"], "changes": {"label": {"from": "big", "to": None}}}]
    assert d["edges"]["added"][0]["from"]["node"] == "j" and d["edges"]["removed"][0]["from"]["node"] == "i"


def test_private_versions_are_invisible(make_user, circuit_of, client_for):
    circuit = circuit_of(make_user("alice"))
    for path in ("versions/1/", "versions/1/diff/1/"):
        assert client_for(make_user("bob" if path == "versions/1/" else "carol")).get(f"/api/circuits/{circuit.pk}/{path}").status_code == 404


def test_versions_carry_their_validation_result(circuit, client_for):
    api = client_for()
    v1 = api.get(f"/api/circuits/{circuit.pk}/versions/1/").json()
    assert v1["valid"] is True and v1["problems"] == []
    problem = {"message": "node 'big': unknown column 'amount'", "node": "big", "param": "predicate"}
    circuit.versions.filter(number=1).update(problems=[problem])  # e.g. found by a later, stricter validator
    listed = {v["number"]: v for v in api.get(f"/api/circuits/{circuit.pk}/versions/").json()}
    assert (listed[1]["valid"], listed[1]["problems"]) == (False, [problem])
    assert (listed[2]["valid"], listed[2]["problems"]) == (True, [])
    assert api.get(f"/api/circuits/{circuit.pk}/").json()["latest_version"]["valid"] is True


def test_the_schema_documents_the_validation_result_and_the_worker(client_for):
    schema = client_for().get("/api/schema/", {"format": "json"}).json()["components"]["schemas"]
    version = schema["Version"]["properties"]
    assert version["valid"]["type"] == "boolean" and version["problems"]["type"] == "array"
    assert version["problems"]["items"]["$ref"].endswith("/Problem")
    assert schema["Run"]["properties"]["worker"]["type"] == "string"
    assert set(schema["Completion"]["properties"]) >= {"status", "error"}
