"""GET/POST /api/circuits/<id>/threads/ and GET .../threads/<thread>/: threads pinned to
nodes, kept across versions, not copied by forks; hostile input is refused naming the
field and changes nothing."""
import json

import pytest

from circuits import services
from circuits.collab import store
from circuits.models import Circuit, CommentThread
from pycrdt import Map
from tests.circuits.comment_steps import counts, share, start, threads_url
from tests.conftest import example

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(make_user):
    return {n: make_user(n) for n in ("alice", "bob", "carol")}


@pytest.fixture
def circuit(people, circuit_of):
    c = circuit_of(people["alice"])
    share(c, people["bob"])  # read only
    return c


def test_a_thread_on_a_node_is_listed_with_its_first_comment(people, circuit, client_for):
    thread = start(client_for(people["alice"]), circuit, "big", "Why 100, @bob?")
    listed = client_for(people["bob"]).get(threads_url(circuit)).json()
    assert [(t["id"], t["node"], t["created_by"], t["resolved"]) for t in listed] == [(thread["id"], "big", "alice", False)]
    [comment] = listed[0]["comments"]
    assert (comment["author"], comment["body"], comment["mentions"], comment["edited_at"]) == ("alice", "Why 100, @bob?", ["bob"], None)
    detail = client_for(people["bob"]).get(f"{threads_url(circuit)}{thread['id']}/").json()
    assert detail == listed[0]


def test_a_read_only_grantee_starts_a_thread_but_a_public_reader_does_not(people, circuit, client_for):
    assert start(client_for(people["bob"]), circuit, "orders", "a viewer's question")["created_by"] == "bob"
    circuit.visibility = "public"
    circuit.save()
    before = counts()
    response = client_for(people["carol"]).post(threads_url(circuit), {"node": "big", "body": "hi"}, format="json")
    assert response.status_code == 403 and "shared with" in response.json()["detail"]
    assert client_for(people["carol"]).get(threads_url(circuit)).status_code == 200  # but reads them
    assert counts() == before


def test_the_filter_lists_open_or_resolved_threads(people, circuit, client_for):
    alice = client_for(people["alice"])
    first, second = start(alice, circuit, "big", "one"), start(alice, circuit, "orders", "two")
    alice.post(f"{threads_url(circuit)}{first['id']}/resolve/")
    ids = lambda state: [t["id"] for t in alice.get(threads_url(circuit), {"state": state}).json()]  # noqa: E731
    assert ids("open") == [second["id"]] and ids("resolved") == [first["id"]] and ids("all") == [first["id"], second["id"]]
    assert [t["id"] for t in alice.get(threads_url(circuit), {"node": "orders"}).json()] == [second["id"]]
    bad = alice.get(threads_url(circuit), {"state": "closed"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "state"


def test_an_unknown_node_is_refused_naming_it(people, circuit, client_for):
    before = counts()
    response = client_for(people["alice"]).post(threads_url(circuit), {"node": "nope", "body": "x"}, format="json")
    assert response.status_code == 400
    assert "'nope'" in response.json()["detail"] and response.json()["errors"][0]["node"] == "nope"
    assert counts() == before


def test_a_node_only_in_the_shared_document_takes_a_thread(people, circuit, client_for):
    """A node someone just added (not saved in a version yet) can be commented on."""
    doc, document_id = store.load(circuit)
    updates = []
    doc.observe(lambda e: updates.append(e.update))
    with doc.transaction():
        doc.get("nodes", type=Map)["fresh"] = Map({"kind": "filter", "order": 9})
    store.append(document_id, updates[0])
    assert start(client_for(people["alice"]), circuit, "fresh", "new node")["node"] == "fresh"


@pytest.mark.parametrize("body, field", [
    ("{not json", None),
    ("[1, 2]", None),
    ('"a string"', None),
    ('{"node": "big"}', "body"),
    ('{"body": "x"}', "node"),
    ('{"node": "big", "body": ""}', "body"),
    ('{"node": "big", "body": "   "}', "body"),
    ('{"node": "big", "body": 5}', "body"),
    ('{"node": "big", "body": null}', "body"),
    ('{"node": "big", "body": ["x"]}', "body"),
    ('{"node": 7, "body": "x"}', "node"),
    ('{"node": "big", "body": "' + "x" * 5001 + '"}', "body"),
    ('{"node": "big", "body": "a\\u0000b"}', "body"),
    ('{"node": "' + "n" * 201 + '", "body": "x"}', "node"),
])
def test_hostile_bodies_are_refused_and_change_nothing(people, circuit, client_for, body, field):
    before = counts()
    response = client_for(people["alice"]).generic("POST", threads_url(circuit), body.encode(), content_type="application/json")
    assert response.status_code == 400, response.content
    answer = response.json()
    assert answer["detail"]
    if field:
        assert field in {e.get("field") for e in answer["errors"]}, answer
    assert counts() == before


def test_a_thread_stays_on_its_node_across_versions_and_a_fork_does_not_copy_it(people, circuit, client_for):
    alice = client_for(people["alice"])
    thread = start(alice, circuit, "big", "keep me")
    document = example("big_orders")
    document["nodes"][1]["params"]["predicate"] = "amount > 5"
    assert alice.post(f"/api/circuits/{circuit.pk}/versions/", {"document": document}, format="json").status_code == 201
    listed = alice.get(threads_url(circuit)).json()
    assert [(t["id"], t["node"]) for t in listed] == [(thread["id"], "big")]
    fork = client_for(people["bob"]).post(f"/api/circuits/{circuit.pk}/fork/", {}, format="json").json()
    assert client_for(people["bob"]).get(f"/api/circuits/{fork['id']}/threads/").json() == []
    assert CommentThread.objects.filter(circuit_id=fork["id"]).count() == 0


def test_a_thread_whose_node_is_removed_is_kept(people, circuit, client_for):
    alice = client_for(people["alice"])
    thread = start(alice, circuit, "big", "about the filter")
    document = example("big_orders")  # the filter goes: orders feed the view directly
    document["nodes"] = [n for n in document["nodes"] if n["id"] != "big"]
    document["edges"] = [{"from": {"node": "orders", "port": "out"}, "to": {"node": "big_orders", "port": "in"}}]
    assert alice.post(f"/api/circuits/{circuit.pk}/versions/", {"document": document}, format="json").status_code == 201
    assert [t["id"] for t in alice.get(threads_url(circuit)).json()] == [thread["id"]]


def test_deleting_the_circuit_deletes_its_threads(people, circuit, client_for):
    start(client_for(people["alice"]), circuit)
    services.delete_circuit(Circuit.objects.get(pk=circuit.pk))
    assert CommentThread.objects.count() == 0


def test_a_stranger_does_not_see_a_private_circuits_threads(people, circuit, client_for):
    start(client_for(people["alice"]), circuit)
    assert client_for(people["carol"]).get(threads_url(circuit)).status_code == 404
    assert client_for().get(threads_url(circuit)).status_code == 404
    missing = client_for(people["alice"]).get(f"{threads_url(circuit)}99999/")
    assert missing.status_code == 404 and missing.json()["errors"][0]["field"] == "thread"
