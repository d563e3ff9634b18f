"""Who changed what (circuits/authorship.py): the server records the author of every
co-editing update and what it changed (the ledger), and saving a version names, for each
item of its diff from the previous version, the people who changed it. Real consumer,
real Redis channel layer, real database; each client is a pycrdt document speaking the
y-websocket protocol as the browser does (tests/circuits/test_shared_document.py)."""
from __future__ import annotations

import copy

import pytest
from channels.db import database_sync_to_async
from tests.sockets import Communicator
from pycrdt import Map, Text, create_sync_message

from circuits import services
from circuits.collab import store
from circuits.collab.consumer import CircuitDocConsumer
from circuits.models import CircuitGrant, CircuitVersion, SharedDocumentEdit, SharedDocumentUpdate
from tests.circuits.test_shared_document import Peer, rest, set_param
from tests.conftest import example

pytestmark = [pytest.mark.django_db(transaction=True)]


@database_sync_to_async
def circuit_of(make_user, name="sensor_windows", document=None):
    """alice's circuit, bob may edit it too."""
    alice, bob = make_user("alice"), make_user("bob")
    circuit = services.create_circuit(alice, "Sensors", "", "private", document or example(name))
    CircuitGrant.objects.create(circuit=circuit, user=bob, can_edit=True)
    return circuit, alice, bob


async def join(circuit, user, node="per_minute") -> Peer:
    comm = Communicator(CircuitDocConsumer.as_asgi(), f"/ws/circuits/{circuit.pk}/doc")
    comm.scope["user"] = user
    comm.scope["url_route"] = {"kwargs": {"circuit_id": str(circuit.pk)}}
    connected, code = await comm.connect()
    assert connected, code
    peer = Peer(comm)
    await comm.send_to(bytes_data=create_sync_message(peer.doc))
    await peer.until(lambda: node in peer.nodes())
    return peer


def params_of(peer, node_id) -> dict:
    return peer.node(node_id).get("params") or {}


async def save(circuit, user, document, message="") -> CircuitVersion:
    """Save a version through the REST API, as the page's "Save version" does."""
    answer = await rest(user, "post", f"/api/circuits/{circuit.pk}/versions/", {"document": document, "message": message})
    number = answer.json()["number"]
    return await database_sync_to_async(lambda: CircuitVersion.objects.get(circuit=circuit, number=number))()


@database_sync_to_async
def shared_document(circuit) -> dict:
    """What the page sends when saving: the shared document as a circuit document."""
    from circuits.collab.layout import to_document

    doc, _ = store.load(type(circuit).objects.get(pk=circuit.pk))
    return to_document(doc)[0]


def authors(version) -> dict[tuple, list[str]]:
    return {(e["change"], e.get("node"), e.get("field"), e.get("edge")): e["authors"] for e in version.authors}


@database_sync_to_async
def ledger(circuit) -> list[tuple[str, str]]:
    return list(SharedDocumentEdit.objects.filter(document__circuit=circuit).values_list("user__username", "item"))


async def close(*peers):
    for peer in peers:
        await peer.comm.disconnect()


@pytest.mark.asyncio
async def test_two_authors_of_different_params_of_one_node_are_each_named_on_their_own(make_user):
    circuit, alice, bob = await circuit_of(make_user)
    a, b = await join(circuit, alice), await join(circuit, bob)
    await a.edit(set_param("per_minute", "size", "2 minutes"))
    await b.edit(set_param("per_minute", "lateness", "45 seconds"))
    for peer in (a, b):  # each has seen the other's: the server stored both (with their authors) before sending them
        await peer.until(lambda p=peer: params_of(p, "per_minute").get("size") == "2 minutes"
                         and params_of(p, "per_minute").get("lateness") == "45 seconds")
    version = await save(circuit, alice, await shared_document(circuit), "wider windows")
    assert authors(version) == {
        ("node_changed", "per_minute", "params.size", None): ["alice"],
        ("node_changed", "per_minute", "params.lateness", None): ["bob"],
    }
    assert await ledger(circuit) == []  # read into the version
    await close(a, b)


@pytest.mark.asyncio
async def test_an_edit_undone_names_nobody_and_a_field_both_changed_names_both_in_order(make_user):
    circuit, alice, bob = await circuit_of(make_user)
    a, b = await join(circuit, alice), await join(circuit, bob)
    await a.edit(set_param("per_minute", "lateness", "10 seconds"))
    await b.until(lambda: params_of(b, "per_minute").get("lateness") == "10 seconds")
    await b.edit(set_param("per_minute", "size", "5 minutes"))
    await a.until(lambda: params_of(a, "per_minute").get("size") == "5 minutes")
    await a.edit(set_param("per_minute", "size", "3 minutes"))  # the same field after bob: both named, bob first
    await a.edit(set_param("per_minute", "lateness", "30 seconds"))  # back as it was: cancelled out
    await b.until(lambda: params_of(b, "per_minute").get("lateness") == "30 seconds")
    version = await save(circuit, bob, await shared_document(circuit))
    assert authors(version) == {("node_changed", "per_minute", "params.size", None): ["bob", "alice"]}
    await close(a, b)


@pytest.mark.asyncio
async def test_dragging_a_node_is_one_ledger_row_per_coordinate_and_names_the_dragger(make_user):
    circuit, alice, bob = await circuit_of(make_user)
    a, b = await join(circuit, alice), await join(circuit, bob)
    for step in range(1, 121):  # a drag: one update per pointer move
        await a.edit(lambda doc, s=step: doc.get("nodes", type=Map)["per_minute"].__setitem__("position", {"x": 200 + s, "y": 10 + s}))
    await b.until(lambda: b.node("per_minute").get("position") == {"x": 320, "y": 130})
    rows = await ledger(circuit)
    assert sorted(rows) == [("alice", '["node_changed", "per_minute", "position.x", null]'),
                            ("alice", '["node_changed", "per_minute", "position.y", null]')]
    assert await database_sync_to_async(SharedDocumentUpdate.objects.count)() <= 120  # the updates themselves are kept or compacted
    version = await save(circuit, alice, await shared_document(circuit))
    assert authors(version) == {("node_changed", "per_minute", "position.x", None): ["alice"],
                                ("node_changed", "per_minute", "position.y", None): ["alice"]}
    await close(a, b)


@pytest.mark.asyncio
async def test_compaction_in_between_loses_no_authorship(make_user):
    circuit, alice, bob = await circuit_of(make_user)
    a, b = await join(circuit, alice), await join(circuit, bob)
    await a.edit(set_param("per_minute", "size", "2 minutes"))
    await b.until(lambda: params_of(b, "per_minute").get("size") == "2 minutes")
    document_id = await database_sync_to_async(lambda: circuit.shared_document.pk)()
    await database_sync_to_async(store.compact)(document_id)
    await b.edit(set_param("per_minute", "lateness", "1 minute"))
    await a.until(lambda: params_of(a, "per_minute").get("lateness") == "1 minute")
    await close(a, b)  # each socket's close compacts too
    assert await database_sync_to_async(SharedDocumentUpdate.objects.filter(document_id=document_id).count)() == 0
    version = await save(circuit, bob, await shared_document(circuit))
    assert authors(version) == {("node_changed", "per_minute", "params.size", None): ["alice"],
                                ("node_changed", "per_minute", "params.lateness", None): ["bob"]}


@pytest.mark.asyncio
async def test_nodes_and_wires_added_and_removed_are_named_and_the_rest_is_the_savers(make_user):
    circuit, alice, bob = await circuit_of(make_user, "big_orders")
    a, b = await join(circuit, alice, "big"), await join(circuit, bob, "big")

    def add_small(doc):
        doc.get("nodes", type=Map)["small"] = Map({"kind": "filter", "order": 9, "position": {"x": 220, "y": 120},
                                                    "params": Map({"predicate": "amount <= 5"})})
        doc.get("edges", type=Map)["orders.out->small.in"] = {"edge": {"from": {"node": "orders", "port": "out"},
                                                                       "to": {"node": "small", "port": "in"}}, "order": 9}
    await a.edit(add_small)
    await b.until(lambda: "small" in b.nodes())
    await b.edit(set_param("small", "predicate", "amount <= 7"))  # bob changes the node alice added
    await b.edit(lambda doc: doc.get("nodes", type=Map).pop("big_orders"))  # bob deletes a node: its wire goes with it
    await a.until(lambda: "big_orders" not in a.nodes() and params_of(a, "small").get("predicate") == "amount <= 7")
    document = await shared_document(circuit)
    document["nodes"].append({"id": "small_orders", "kind": "output", "position": {"x": 440, "y": 120}, "params": {}})
    document["edges"].append({"from": {"node": "small", "port": "out"}, "to": {"node": "small_orders", "port": "in"}})
    version = await save(circuit, alice, document)  # alice adds one more node in the JSON she saves, not co-edited
    assert authors(version) == {
        ("node_added", "small", None, None): ["alice", "bob"],
        ("node_added", "small_orders", None, None): ["alice"],  # the saver's
        ("node_removed", "big_orders", None, None): ["bob"],
        ("edge_added", None, None, "orders.out->small.in"): ["alice"],
        ("edge_added", None, None, "small.out->small_orders.in"): ["alice"],
        ("edge_removed", None, None, "big.out->big_orders.in"): ["bob"],
    }
    await close(a, b)


@pytest.mark.asyncio
async def test_typing_in_the_sql_text_names_the_typists(make_user):
    document = copy.deepcopy(example("big_orders"))
    document["metadata"] = {"source": {"language": "sql", "text": "SELECT * FROM orders WHERE amount > 100"}}
    circuit, alice, bob = await circuit_of(make_user, document=document)
    a, b = await join(circuit, alice, "big"), await join(circuit, bob, "big")
    for ch in " -- big":  # keystrokes, one update each
        await b.edit(lambda doc, c=ch: doc.get("source", type=Text).__iadd__(c))
    await a.until(lambda: str(a.doc.get("source", type=Text)).endswith("-- big"))
    assert len(await ledger(circuit)) == 1
    version = await save(circuit, alice, await shared_document(circuit))
    assert authors(version) == {("document_changed", None, "metadata.source.text", None): ["bob"]}
    await close(a, b)


@pytest.mark.asyncio
async def test_a_rest_save_without_co_editing_is_the_savers(make_user):
    circuit, alice, bob = await circuit_of(make_user, "big_orders")
    document = copy.deepcopy(example("big_orders"))
    document["nodes"][1]["params"]["predicate"] = "amount > 5"
    version = await save(circuit, bob, document)
    assert authors(version) == {("node_changed", "big", "params.predicate", None): ["bob"]}

