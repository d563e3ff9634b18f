"""The `can_edit` grant (circuits/access.py): a grantee with it saves versions and is a
writer on the shared document's socket; a read grant makes a viewer whose updates the
server drops; lowering the grant makes the open socket a viewer's, removing it closes the
socket. Rename, delete and the share settings stay the owner's (and the permission matrix,
tests/circuits/test_permission_matrix.py, checks every route for the `editor` requester)."""
from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from pycrdt import Map, Text
from rest_framework.test import APIClient

from circuits.collab.consumer import ACCESS_ENDED
from circuits.models import CircuitGrant
from tests.circuits.test_shared_document import join, make_circuit, rest, set_param, stored
from tests.conftest import example

pytestmark = [pytest.mark.django_db(transaction=True)]


async def seen_as(owner, peer, name: str, role: str, clock: int) -> None:
    """`peer` says it is present (with `clock`) until the owner sees it with `role`; the
    socket handles its messages in order, so everything sent before is handled then."""
    for tick in range(clock, clock + 50):
        await peer.say_present(name, tick)
        try:
            await owner.until(lambda: (owner.presence.get(peer.doc.client_id) or {}).get("role") == role
                              and owner.presence[peer.doc.client_id] is not None, timeout=2)
            return
        except (asyncio.TimeoutError, TimeoutError):
            continue  # the access change had not reached the socket yet: say it again
    raise AssertionError(f"{name} never appeared as {role}")


async def closed(peer):
    while True:
        out = await peer.comm.receive_output()
        if out["type"] == "websocket.close":
            return out


def grants_of(circuit):
    return sorted(CircuitGrant.objects.filter(circuit=circuit).values_list("user__username", "can_operate", "can_edit"))


@pytest.mark.asyncio
async def test_a_can_edit_grantee_is_a_writer_whose_edit_the_owner_sees_and_is_stored(make_user):
    circuit, alice = await make_circuit(make_user, visibility="private")
    bob = await database_sync_to_async(make_user)("bob")
    answer = await rest(alice, "patch", f"/api/circuits/{circuit.pk}/share/", {"grants": [{"username": "bob", "can_edit": True}]})
    assert answer.json()["grants"] == [{"username": "bob", "can_operate": False, "can_edit": True}]
    assert await database_sync_to_async(grants_of)(circuit) == [("bob", False, True)]
    alices, bobs = await join(circuit, alice), await join(circuit, bob)
    await bobs.edit(set_param("big", "predicate", "amount > 42"))
    await bobs.edit(lambda doc: doc.get("source", type=Text).insert(0, "SELECT 1"))
    await alices.until(lambda: alices.node("big")["params"]["predicate"] == "amount > 42"
                       and str(alices.doc.get("source", type=Text)) == "SELECT 1")
    await seen_as(alices, bobs, "bob", "writer", 1)
    doc = await stored(circuit)
    assert str(doc.get("nodes", type=Map)["big"]["params"]["predicate"]) == "amount > 42"
    await alices.comm.disconnect()
    await bobs.comm.disconnect()


@pytest.mark.asyncio
async def test_a_read_only_grantees_update_is_dropped(make_user):
    circuit, alice = await make_circuit(make_user, visibility="private")
    bob = await database_sync_to_async(make_user)("bob")
    await rest(alice, "patch", f"/api/circuits/{circuit.pk}/share/", {"grants": [{"username": "bob", "can_operate": True}]})
    alices, bobs = await join(circuit, alice), await join(circuit, bob)
    await bobs.edit(set_param("big", "predicate", "amount > 0 -- not allowed"))
    await seen_as(alices, bobs, "bob", "viewer", 1)  # handled after the edit, on the same socket
    assert alices.node("big")["params"]["predicate"] == "amount > 100"
    late = await join(circuit, alice)
    assert late.node("big")["params"]["predicate"] == "amount > 100"
    for peer in (alices, bobs, late):
        await peer.comm.disconnect()


@pytest.mark.asyncio
async def test_lowering_can_edit_makes_the_open_socket_a_viewer_and_removing_the_grant_closes_it(make_user):
    circuit, alice = await make_circuit(make_user, visibility="private")
    bob = await database_sync_to_async(make_user)("bob")
    share = f"/api/circuits/{circuit.pk}/share/"
    await rest(alice, "patch", share, {"grants": [{"username": "bob", "can_edit": True}]})
    alices, bobs = await join(circuit, alice), await join(circuit, bob)
    await seen_as(alices, bobs, "bob", "writer", 1)
    assert (alices.roles, bobs.roles) == (["writer"], ["writer"])  # told when the socket opened
    await rest(alice, "patch", share, {"grants": [{"username": "bob", "can_edit": False}]})  # read only now
    await seen_as(alices, bobs, "bob", "viewer", 100)  # the same socket, downgraded
    await bobs.until(lambda: bobs.roles == ["writer", "viewer"])  # and told so, once
    await bobs.edit(set_param("big", "predicate", "amount > 1 -- after the downgrade"))
    await seen_as(alices, bobs, "bob", "viewer", 200)
    assert alices.node("big")["params"]["predicate"] == "amount > 100"
    assert str((await stored(circuit)).get("nodes", type=Map)["big"]["params"]["predicate"]) == "amount > 100"
    await rest(alice, "patch", share, {"grants": [{"username": "bob", "can_edit": True}]})  # given back
    await bobs.until(lambda: bobs.roles == ["writer", "viewer", "writer"])
    # The page starts a fresh document when its role changes (useSharedDocument.ts): this
    # client's dropped edit left a gap in its clock that the server can never fill.
    fresh = await join(circuit, bob)
    await fresh.edit(set_param("big", "predicate", "amount > 2"))
    await alices.until(lambda: alices.node("big")["params"]["predicate"] == "amount > 2")
    await fresh.comm.disconnect()
    assert alices.roles == ["writer"]  # the owner's role never changed: nothing more was said
    await rest(alice, "patch", share, {"grants": []})
    out = await asyncio.wait_for(closed(bobs), 10)
    assert out["code"] == ACCESS_ENDED
    await alices.comm.disconnect()


def test_a_can_edit_grantee_saves_versions_but_does_not_rename_delete_or_share(make_user):
    from circuits import services

    alice, bob = make_user("alice"), make_user("bob")
    circuit = services.create_circuit(alice, "Orders", "", "private", example("big_orders"))
    CircuitGrant.objects.create(circuit=circuit, user=bob, can_edit=True)
    api = APIClient()
    api.force_authenticate(bob)
    detail = api.get(f"/api/circuits/{circuit.pk}/").json()
    assert (detail["can_edit"], detail["is_owner"], detail["can_operate"]) == (True, False, False)
    saved = api.post(f"/api/circuits/{circuit.pk}/versions/", {"document": example("big_orders"), "message": "bob's"}, format="json")
    assert saved.status_code == 201 and saved.json()["number"] == 2
    assert api.patch(f"/api/circuits/{circuit.pk}/", {"name": "bob's now"}, format="json").status_code == 403
    assert api.patch(f"/api/circuits/{circuit.pk}/share/", {"grants": []}, format="json").status_code == 403
    assert api.delete(f"/api/circuits/{circuit.pk}/").status_code == 403
    circuit.refresh_from_db()
    assert circuit.name == "Orders" and circuit.versions.count() == 2
    # A plain read grant: can_edit false, and saving is refused.
    CircuitGrant.objects.filter(circuit=circuit, user=bob).update(can_edit=False)
    assert api.get(f"/api/circuits/{circuit.pk}/").json()["can_edit"] is False
    assert api.post(f"/api/circuits/{circuit.pk}/versions/", {"document": example("big_orders")}, format="json").status_code == 403


def test_the_share_settings_refuse_a_can_edit_that_is_not_a_boolean(make_user):
    from circuits import services

    alice, _ = make_user("alice"), make_user("bob")
    circuit = services.create_circuit(alice, "Orders", "", "private", example("big_orders"))
    api = APIClient()
    api.force_authenticate(alice)
    answer = api.patch(f"/api/circuits/{circuit.pk}/share/", {"grants": [{"username": "bob", "can_edit": "sometimes"}]}, format="json")
    assert answer.status_code == 400 and "can_edit" in answer.content.decode()
    assert not CircuitGrant.objects.filter(circuit=circuit).exists()
