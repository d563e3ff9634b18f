"""The shared document's websocket (circuits/collab/consumer.py) in-process, with the real
Redis channel layer and database. Each client is a pycrdt document speaking the
y-websocket protocol, as the browser's WebsocketProvider does: what one writer changes
reaches the others, a viewer's change is dropped by the server, a stranger is refused,
the document is stored (a new server loads it) and seeded from the latest version, and
taking access away closes the socket."""
from __future__ import annotations

import asyncio
import json

import pytest
from channels.db import database_sync_to_async
from tests.sockets import WAIT_S, Communicator
from django.contrib.auth.models import AnonymousUser
from pycrdt import Decoder, Doc, Encoder, Map, Text, YMessageType, YSyncMessageType, create_awareness_message, create_sync_message, create_update_message, handle_sync_message, read_message
from rest_framework.test import APIClient

from circuits import services
from circuits.collab import store
from circuits.collab.consumer import ACCESS_ENDED, ROLE_MESSAGE, CircuitDocConsumer
from circuits.models import SharedDocument, SharedDocumentUpdate
from tests.conftest import example

pytestmark = [pytest.mark.django_db(transaction=True)]


class Peer:
    """One browser: a Yjs document synced over the socket."""

    def __init__(self, comm):
        self.comm = comm
        self.doc = Doc()
        self.presence: dict[int, dict | None] = {}
        self.roles: list[str] = []  # every role the server told this client, in order

    async def receive(self, timeout=WAIT_S) -> bytes:
        out = await self.comm.receive_output(timeout)
        assert out["type"] == "websocket.send", out
        message = out["bytes"]
        if message[0] == YMessageType.SYNC:
            reply = handle_sync_message(message[1:], self.doc)
            if reply is not None:
                await self.comm.send_to(bytes_data=reply)
        elif message[0] == YMessageType.AWARENESS:
            decoder = Decoder(read_message(message[1:]))
            for _ in range(decoder.read_var_uint()):
                cid, _clock, state = decoder.read_var_uint(), decoder.read_var_uint(), decoder.read_var_string()
                self.presence[cid] = json.loads(state)
        elif message[0] == ROLE_MESSAGE:
            self.roles.append(message[1:].decode())
        return message

    async def until(self, predicate, timeout=WAIT_S):
        """Read messages until `predicate()` holds (event-driven; fails after `timeout`)."""
        async def loop():
            while not predicate():
                await self.receive(timeout)
        await asyncio.wait_for(loop(), timeout)

    async def edit(self, change):
        """Change the document locally and send the update, as the provider does."""
        updates = []
        sub = self.doc.observe(lambda event: updates.append(event.update))
        with self.doc.transaction():
            change(self.doc)
        self.doc.unobserve(sub)
        for update in updates:
            await self.comm.send_to(bytes_data=create_update_message(update))

    async def say_present(self, name: str, clock: int = 1):
        encoder = Encoder()
        encoder.write_var_uint(1)
        encoder.write_var_uint(self.doc.client_id)
        encoder.write_var_uint(clock)
        encoder.write_var_string(json.dumps({"user": {"name": name, "color": "#e11d48"}}))
        await self.comm.send_to(bytes_data=create_awareness_message(encoder.to_bytes()))

    def nodes(self) -> Map:
        return self.doc.get("nodes", type=Map)

    def node(self, node_id: str) -> dict:
        return self.nodes()[node_id].to_py()


async def join(circuit, user, query="") -> Peer:
    comm = Communicator(CircuitDocConsumer.as_asgi(), f"/ws/circuits/{circuit.pk}/doc{query}")
    comm.scope["user"] = user
    comm.scope["url_route"] = {"kwargs": {"circuit_id": str(circuit.pk)}}
    connected, code = await comm.connect()
    assert connected, code
    peer = Peer(comm)
    await comm.send_to(bytes_data=create_sync_message(peer.doc))
    await peer.until(lambda: "big" in peer.nodes())  # synced: the seeded document is here
    return peer


async def refused(circuit, user, query="") -> int:
    comm = Communicator(CircuitDocConsumer.as_asgi(), f"/ws/circuits/{circuit.pk}/doc{query}")
    comm.scope["user"] = user
    comm.scope["url_route"] = {"kwargs": {"circuit_id": str(circuit.pk)}}
    connected, code = await comm.connect()
    assert not connected
    return code


@database_sync_to_async
def make_circuit(make_user, visibility="private"):
    alice = make_user("alice")
    circuit = services.create_circuit(alice, "Orders", "", visibility, example("big_orders"))
    return circuit, alice


@database_sync_to_async
def rest(user, method, path, body=None):
    client = APIClient()
    client.force_authenticate(user)
    response = getattr(client, method)(path, body, format="json")
    assert response.status_code < 300, (path, response.status_code, response.content[:300])
    return response


@database_sync_to_async
def stored(circuit):
    """The document a new server would load: read from the database alone."""
    doc, _ = store.load(type(circuit).objects.get(pk=circuit.pk))
    return doc


def set_param(node_id, name, value):
    return lambda doc: doc.get("nodes", type=Map)[node_id]["params"].__setitem__(name, value)


@pytest.mark.asyncio
async def test_the_document_is_seeded_from_the_latest_version(make_user):
    circuit, alice = await make_circuit(make_user)
    peer = await join(circuit, alice)
    version = example("big_orders")
    assert sorted(peer.nodes().keys()) == sorted(n["id"] for n in version["nodes"])
    big = next(n for n in version["nodes"] if n["id"] == "big")
    assert peer.node("big")["params"] == big["params"]
    assert peer.node("big")["kind"] == "filter"
    assert len(peer.doc.get("edges", type=Map)) == len(version["edges"])
    assert peer.doc.get("meta", type=Map)["title"] == "Orders"
    await peer.comm.disconnect()


@pytest.mark.asyncio
async def test_a_writers_edit_reaches_the_others_and_is_stored(make_user):
    circuit, alice = await make_circuit(make_user, visibility="public")
    bob = await database_sync_to_async(make_user)("bob")
    first, second, viewer = await join(circuit, alice), await join(circuit, alice), await join(circuit, bob)
    await first.edit(set_param("big", "predicate", "amount > 500"))
    for other in (second, viewer):
        await other.until(lambda o=other: o.node("big")["params"]["predicate"] == "amount > 500")
    doc = await stored(circuit)
    assert str(doc.get("nodes", type=Map)["big"]["params"]["predicate"]) == "amount > 500"
    for peer in (first, second, viewer):
        await peer.comm.disconnect()


@pytest.mark.asyncio
async def test_two_writers_change_different_fields_of_one_node_at_once_and_both_stand(make_user):
    circuit, alice = await make_circuit(make_user)
    a, b = await join(circuit, alice), await join(circuit, alice)
    # Both edit before either has seen the other's change.
    await asyncio.gather(a.edit(set_param("big", "predicate", "amount > 7")),
                         b.edit(lambda doc: doc.get("nodes", type=Map)["big"].__setitem__("position", {"x": 900, "y": 40})))
    for peer in (a, b):
        await peer.until(lambda p=peer: p.node("big")["params"]["predicate"] == "amount > 7"
                         and p.node("big").get("position") == {"x": 900, "y": 40})
    node = (await stored(circuit)).get("nodes", type=Map)["big"].to_py()
    assert node["params"]["predicate"] == "amount > 7" and node["position"] == {"x": 900, "y": 40}
    await a.comm.disconnect()
    await b.comm.disconnect()


@pytest.mark.asyncio
async def test_the_server_drops_a_viewers_edit(make_user):
    circuit, alice = await make_circuit(make_user, visibility="unlisted")
    writer = await join(circuit, alice)
    viewer = await join(circuit, AnonymousUser(), f"?share={circuit.share_token}")
    assert (writer.roles, viewer.roles) == (["writer"], ["viewer"])  # each told its role when its socket opened
    await viewer.edit(set_param("big", "predicate", "amount > 0 -- vandal"))
    await viewer.edit(lambda doc: doc.get("source", type=Text).insert(0, "vandal"))
    # Presence from a viewer passes, under the name the server knows; the writer seeing it
    # means the server has handled the viewer's updates (sent before it on one socket).
    await viewer.say_present("alice")
    await writer.until(lambda: viewer.doc.client_id in writer.presence)
    assert writer.presence[viewer.doc.client_id]["user"]["name"] == ""  # anonymous: no name to borrow
    assert writer.presence[viewer.doc.client_id]["role"] == "viewer"
    assert writer.node("big")["params"]["predicate"] == "amount > 100"  # the vandal's did not come
    def writers_edit(doc):
        set_param("big", "predicate", "amount > 300")(doc)
        doc.get("nodes", type=Map)["big"]["position"] = {"x": 1, "y": 2}  # a field the viewer left alone
    await writer.edit(writers_edit)  # one update: stored, then sent
    # (The viewer's own copy keeps its dropped change where the two collide; the position it did not touch.)
    await viewer.until(lambda: viewer.node("big").get("position") == {"x": 1, "y": 2})
    late = await join(circuit, alice)  # a new client syncs with the server's document
    assert late.node("big")["params"]["predicate"] == "amount > 300"
    assert str(late.doc.get("source", type=Text)) == ""
    doc = await stored(circuit)
    assert str(doc.get("nodes", type=Map)["big"]["params"]["predicate"]) == "amount > 300"
    assert await database_sync_to_async(lambda: SharedDocumentUpdate.objects.filter(document__circuit=circuit).count())() == 1
    for peer in (writer, viewer, late):
        await peer.comm.disconnect()


@pytest.mark.asyncio
async def test_presence_carries_the_signed_in_name_and_leaving_removes_it(make_user):
    circuit, alice = await make_circuit(make_user, visibility="public")
    bob = await database_sync_to_async(make_user)("bob")
    a, b = await join(circuit, alice), await join(circuit, bob)
    await b.say_present("alice")  # bob claims to be alice
    await a.until(lambda: b.doc.client_id in a.presence)
    assert a.presence[b.doc.client_id]["user"] == {"name": "bob", "color": "#e11d48"}
    assert a.presence[b.doc.client_id]["role"] == "viewer"
    # Someone arriving later sees who is there without waiting for them to move.
    c = await join(circuit, alice)
    await c.until(lambda: b.doc.client_id in c.presence)
    await b.comm.disconnect()
    await a.until(lambda: a.presence.get(b.doc.client_id, {}) is None)
    await a.comm.disconnect()
    await c.comm.disconnect()


@pytest.mark.asyncio
async def test_no_access_is_refused(make_user):
    circuit, alice = await make_circuit(make_user, visibility="unlisted")
    mallory = await database_sync_to_async(make_user)("mallory")
    assert await refused(circuit, mallory) == 4404
    assert await refused(circuit, AnonymousUser()) == 4404
    assert await refused(circuit, AnonymousUser(), "?share=wrong") == 4404


@pytest.mark.asyncio
async def test_the_document_survives_a_restart_and_compacts(make_user):
    circuit, alice = await make_circuit(make_user)
    peer = await join(circuit, alice)
    for i in range(5):
        await peer.edit(set_param("big", "predicate", f"amount > {i}"))
    await peer.edit(lambda doc: doc.get("source", type=Text).insert(0, "select 1"))
    await peer.comm.disconnect()  # the socket closes: the updates are compacted (waited for)
    rows = await database_sync_to_async(lambda: (SharedDocument.objects.filter(circuit=circuit).count(),
                                                 SharedDocumentUpdate.objects.filter(document__circuit=circuit).count()))()
    assert rows == (1, 0)
    # A new server process: nothing in memory, the document comes from the database.
    again = await join(circuit, alice)
    assert again.node("big")["params"]["predicate"] == "amount > 4"
    assert str(again.doc.get("source", type=Text)) == "select 1"
    await again.comm.disconnect()


@pytest.mark.asyncio
async def test_revoking_access_closes_the_socket(make_user):
    circuit, alice = await make_circuit(make_user, visibility="private")
    bob = await database_sync_to_async(make_user)("bob")
    share = f"/api/circuits/{circuit.pk}/share/"
    await rest(alice, "patch", share, {"grants": [{"username": "bob"}]})
    bobs, alices, late = await join(circuit, bob), await join(circuit, alice), await join(circuit, alice)
    await rest(alice, "patch", share, {"grants": []})

    async def closed(peer):
        while True:
            out = await peer.comm.receive_output()
            if out["type"] == "websocket.close":
                return out
    out = await asyncio.wait_for(closed(bobs), 10)
    assert out["code"] == ACCESS_ENDED
    await alices.edit(set_param("big", "predicate", "amount > 1"))  # the owner's sockets are still live
    await late.until(lambda: late.node("big")["params"]["predicate"] == "amount > 1")
    await alices.comm.disconnect()
    await late.comm.disconnect()


@pytest.mark.asyncio
async def test_the_provider_path_through_the_real_application(make_user):
    """`ws/circuits/<id>/doc` as y-websocket opens it, through dbspweb.asgi (origin check,
    token auth): the owner's token opens it, a foreign origin or no credentials do not."""
    from rest_framework.authtoken.models import Token

    from dbspweb.asgi import application

    circuit, alice = await make_circuit(make_user, visibility="private")
    token = await database_sync_to_async(lambda: Token.objects.create(user=alice).key)()

    async def opens(origin, query):
        headers = [(b"host", b"localhost:8000"), (b"origin", origin.encode())]
        comm = Communicator(application, f"/ws/circuits/{circuit.pk}/doc{query}", headers=headers)
        connected, _ = await comm.connect()
        if connected:
            first = await comm.receive_output()
            assert first["bytes"][:2] == bytes([YMessageType.SYNC, YSyncMessageType.SYNC_STEP1])
        await comm.disconnect()
        return connected

    assert await opens("http://localhost:8000", f"?token={token}")
    assert not await opens("http://localhost:31337", f"?token={token}")
    assert not await opens("http://localhost:8000", "")


@pytest.mark.asyncio
async def test_two_first_openings_at_once_seed_the_text_once(make_user):
    """Two sockets opening a never-opened circuit at the same moment: one seeded row, so the
    SQL text is there once (two seeds would merge into the text twice)."""
    alice = await database_sync_to_async(make_user)("alice")
    document = {**example("big_orders"), "metadata": {"source": {"language": "sql", "text": "SELECT * FROM orders WHERE amount > 100"}}}
    circuit = await database_sync_to_async(services.create_circuit)(alice, "From SQL", "", "private", document)
    a, b = await asyncio.gather(join(circuit, alice), join(circuit, alice))
    for peer in (a, b):
        assert str(peer.doc.get("source", type=Text)) == "SELECT * FROM orders WHERE amount > 100"
        assert peer.doc.get("meta", type=Map)["source_language"] == "sql"
    assert await database_sync_to_async(lambda: SharedDocument.objects.filter(circuit=circuit).count())() == 1
    await a.comm.disconnect()
    await b.comm.disconnect()


def test_a_seed_that_lost_the_race_reads_the_winners(make_user, monkeypatch):
    """Another server seeded the document between this one's look and its insert: the
    insert fails on the one-per-circuit rule and the winner's document is used."""
    alice = make_user("alice")
    circuit = services.create_circuit(alice, "Race", "", "private", example("big_orders"))
    winner = SharedDocument.objects.create(circuit=circuit, state=b"\x00\x00", seeded_from=1)
    real_filter = SharedDocument.objects.filter
    looked = []

    def filter_once_empty(*args, **kwargs):
        if not looked:
            looked.append(1)
            return real_filter(pk=-1)  # the look before the other server's insert
        return real_filter(*args, **kwargs)
    monkeypatch.setattr(SharedDocument.objects, "filter", filter_once_empty)
    assert store._seeded(circuit).pk == winner.pk
    assert real_filter(circuit=circuit).count() == 1


def test_a_wire_to_a_node_deleted_at_the_same_moment_is_not_read_back():
    """Two copies: one wires big -> big2 (a new node), the other deletes big. Merged, the
    wire's entry is there but the document read from it has no wire to a missing node (the
    same rule as frontend/src/collab/circuitDoc.ts's readDocument)."""
    from circuits.collab.layout import _node_map, edge_key, seed, to_document

    one = seed(example("big_orders"), "Orders")
    other = Doc()
    other.apply_update(one.get_update())
    wire = {"from": {"node": "big", "port": "out"}, "to": {"node": "big2", "port": "in"}}
    with one.transaction():
        one.get("nodes", type=Map)["big2"] = _node_map({"id": "big2", "kind": "filter", "params": {"predicate": "amount > 5"}}, 9)
        one.get("edges", type=Map)[edge_key(wire)] = {"edge": wire, "order": 9}
    with other.transaction():
        edges = other.get("edges", type=Map)
        for key, entry in list(edges.items()):  # the wires it knows of to and from big
            if "big" in (entry["edge"]["from"]["node"], entry["edge"]["to"]["node"]):
                del edges[key]
        del other.get("nodes", type=Map)["big"]
    one.apply_update(other.get_update(one.get_state()))
    other.apply_update(one.get_update(other.get_state()))
    for doc in (one, other):
        document, _ = to_document(doc)
        assert sorted(n["id"] for n in document["nodes"]) == ["big2", "big_orders", "orders"]
        assert document["edges"] == []
        assert edge_key(wire) in doc.get("edges", type=Map).keys()  # the entry stands in the CRDT; it is not read back
