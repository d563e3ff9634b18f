"""GET /api/circuits/<id>/versions/<a>/diff/<b>/ names who changed each item (circuits/authorship.py),
across the versions between a and b, in either direction."""
import copy

import pytest

from circuits import authorship
from circuits.collab import store
from circuits.models import Circuit, CircuitGrant
from tests.conftest import example

pytestmark = pytest.mark.django_db


def changed(document, **fields):
    document = copy.deepcopy(document)
    big = next(n for n in document["nodes"] if n["id"] == "big")
    for path, value in fields.items():
        if path == "predicate":
            big["params"]["predicate"] = value
        else:
            big[path] = value
    return document


def by_item(body) -> dict:
    return {(e["change"], e.get("node"), e.get("field"), e.get("edge")): e["authors"] for e in body["authors"]}


def test_the_diff_names_the_authors_of_each_change_across_versions(make_user, circuit_of, client_for):
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    circuit = circuit_of(alice, "public")
    for user in (bob, carol):
        CircuitGrant.objects.create(circuit=circuit, user=user, can_edit=True)
    _, document_id = store.load(Circuit.objects.get(pk=circuit.pk))  # the shared document (its ledger)
    v1 = example("big_orders")
    step1 = changed(v1, predicate="amount > 5")
    authorship.record(document_id, alice.pk, v1, step1)  # as the socket records a co-editing update
    step2 = changed(step1, position={"x": 240, "y": 0})
    authorship.record(document_id, bob.pk, step1, step2)
    saved = changed(step2, label="Big")  # carol's own change, in the document she saves
    assert client_for(carol).post(f"/api/circuits/{circuit.pk}/versions/", {"document": saved}, format="json").status_code == 201
    back = changed(saved, predicate="amount > 100")  # bob puts the predicate back as v1 had it
    authorship.record(document_id, bob.pk, saved, back)
    assert client_for(carol).post(f"/api/circuits/{circuit.pk}/versions/", {"document": back}, format="json").status_code == 201

    api = client_for()  # anyone may read a public circuit's diff
    one_two = api.get(f"/api/circuits/{circuit.pk}/versions/1/diff/2/").json()
    assert by_item(one_two) == {
        ("node_changed", "big", "label", None): ["carol"],
        ("node_changed", "big", "params.predicate", None): ["alice"],
        ("node_changed", "big", "position.x", None): ["bob"],
    }
    two_three = api.get(f"/api/circuits/{circuit.pk}/versions/2/diff/3/").json()
    assert by_item(two_three) == {("node_changed", "big", "params.predicate", None): ["bob"]}
    # From 1 to 3 the predicate changed and changed back: not listed, nobody named for it.
    one_three = api.get(f"/api/circuits/{circuit.pk}/versions/1/diff/3/").json()
    assert one_three["nodes"]["changed"][0]["fields"] == ["label", "position.x"]
    assert by_item(one_three) == {("node_changed", "big", "label", None): ["carol"],
                                  ("node_changed", "big", "position.x", None): ["bob"]}
    assert by_item(api.get(f"/api/circuits/{circuit.pk}/versions/3/diff/1/").json()) == by_item(one_three)


def test_nodes_added_in_one_version_and_changed_in_the_next_name_both(make_user, circuit_of, client_for):
    alice, bob = make_user("alice"), make_user("bob")
    circuit = circuit_of(alice)
    CircuitGrant.objects.create(circuit=circuit, user=bob, can_edit=True)
    v1 = example("big_orders")
    v2 = copy.deepcopy(v1)
    v2["nodes"].append({"id": "small", "kind": "filter", "position": {"x": 220, "y": 120}, "params": {"predicate": "amount <= 5"}})
    v2["edges"].append({"from": {"node": "orders", "port": "out"}, "to": {"node": "small", "port": "in"}})
    assert client_for(alice).post(f"/api/circuits/{circuit.pk}/versions/", {"document": v2}, format="json").status_code == 201
    v3 = copy.deepcopy(v2)
    v3["nodes"][-1]["params"]["predicate"] = "amount <= 7"
    assert client_for(bob).post(f"/api/circuits/{circuit.pk}/versions/", {"document": v3}, format="json").status_code == 201
    forward = client_for(alice).get(f"/api/circuits/{circuit.pk}/versions/1/diff/3/").json()
    assert by_item(forward) == {("node_added", "small", None, None): ["alice", "bob"],
                                ("edge_added", None, None, "orders.out->small.in"): ["alice"]}
    backward = client_for(alice).get(f"/api/circuits/{circuit.pk}/versions/3/diff/1/").json()
    assert by_item(backward) == {("node_removed", "small", None, None): ["alice"],
                                 ("edge_removed", None, None, "orders.out->small.in"): ["alice"]}


def test_the_schema_types_the_authors(client_for):
    schema = client_for().get("/api/schema/", {"format": "json"}).json()["components"]["schemas"]
    diff = schema["VersionDiff"]["properties"]
    assert diff["authors"]["items"]["$ref"].endswith("/ChangeAuthors")
    entry = schema["ChangeAuthors"]
    assert set(entry["required"]) == {"change", "authors"} and entry["properties"]["authors"]["items"]["type"] == "string"
    assert diff["document"]["type"] == "object"
