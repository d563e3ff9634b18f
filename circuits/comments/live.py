"""Comments, live: after the change commits, everyone with the circuit open (its shared
document's socket group, circuits/collab/consumer.py) is sent the thread as it is now
(message type 101 on `ws/circuits/<id>/doc`, docs/collaboration.md). The Baserow pattern:
the handler changes rows in a transaction; `transaction.on_commit` sends to the group, so
nobody hears of a change that was rolled back."""
from __future__ import annotations

import json
import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from ..collab.consumer import room_of

log = logging.getLogger(__name__)


def send(circuit_id: int, message: dict) -> None:
    """`message` to the circuit's document sockets once the transaction commits."""
    payload = json.dumps(message, separators=(",", ":")).encode()

    def deliver() -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        try:
            async_to_sync(layer.group_send)(room_of(circuit_id), {"type": "doc.comment", "payload": payload})
        except Exception:  # noqa: BLE001 - the change is committed; pages see it when they next load the threads
            log.exception("circuit %s: could not send a comment event to its sockets", circuit_id)

    transaction.on_commit(deliver)


def thread_changed(thread_dict: dict, mentioned: list[str] | None = None) -> None:
    send(thread_dict["circuit"], {"type": "thread", "thread": thread_dict, "mentioned": mentioned or []})


def thread_deleted(circuit_id: int, thread_id: int) -> None:
    send(circuit_id, {"type": "thread_deleted", "circuit": circuit_id, "thread": thread_id})
