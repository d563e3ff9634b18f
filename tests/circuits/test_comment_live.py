"""Comments, live: a thread created, replied to or resolved over REST reaches every socket
of the circuit's shared document (message type 101, JSON), through the real Redis channel
layer, once the change has committed; a refused change sends nothing."""
from __future__ import annotations

import asyncio
import json

import pytest
from channels.db import database_sync_to_async
from rest_framework.test import APIClient

from circuits.collab.consumer import COMMENT_MESSAGE
from circuits.models import CircuitGrant
from tests.circuits.test_shared_document import join, make_circuit, rest

pytestmark = [pytest.mark.django_db(transaction=True)]


async def next_comment_event(peer, timeout=10) -> dict:
    """The next comment message this socket receives (others are handled as the browser would)."""
    async def loop():
        while True:
            message = await peer.receive(timeout)
            if message[0] == COMMENT_MESSAGE:
                return json.loads(message[1:])
    return await asyncio.wait_for(loop(), timeout)


@pytest.mark.asyncio
async def test_a_new_thread_a_reply_and_resolving_reach_everyone_with_the_circuit_open(make_user):
    circuit, alice = await make_circuit(make_user)
    bob = await database_sync_to_async(make_user)("bob")
    await database_sync_to_async(CircuitGrant.objects.create)(circuit=circuit, user=bob)  # a viewer
    a, b = await join(circuit, alice), await join(circuit, bob)
    created = (await rest(alice, "post", f"/api/circuits/{circuit.pk}/threads/", {"node": "big", "body": "@bob why 100?"})).json()
    for peer in (a, b):
        event = await next_comment_event(peer)
        assert event["type"] == "thread" and event["thread"] == created and event["mentioned"] == ["bob"]
    await rest(bob, "post", f"/api/circuits/{circuit.pk}/threads/{created['id']}/comments/", {"body": "Because."})
    for peer in (a, b):
        event = await next_comment_event(peer)
        assert [c["body"] for c in event["thread"]["comments"]] == ["@bob why 100?", "Because."] and event["mentioned"] == []
    await rest(alice, "post", f"/api/circuits/{circuit.pk}/threads/{created['id']}/resolve/")
    event = await next_comment_event(b)
    assert event["thread"]["resolved"] is True and event["thread"]["resolved_by"] == "alice"
    first = event["thread"]["comments"][0]["id"]
    # A refused change sends nothing: bob cannot edit alice's comment; then alice's own delete arrives.
    client = APIClient()
    client.force_authenticate(bob)
    refused = await database_sync_to_async(client.patch)(f"/api/circuits/{circuit.pk}/threads/{created['id']}/comments/{first}/",
                                                         {"body": "mine"}, format="json")
    assert refused.status_code == 403
    await rest(alice, "delete", f"/api/circuits/{circuit.pk}/threads/{created['id']}/comments/{first}/")
    event = await next_comment_event(b)
    assert event["type"] == "thread" and [c["author"] for c in event["thread"]["comments"]] == ["bob"]
    for peer in (a, b):
        await peer.comm.disconnect()
