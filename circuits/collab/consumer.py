"""`ws/circuits/<id>/doc`: the circuit's shared document over the y-websocket protocol
(what the browser's `y-websocket` WebsocketProvider speaks), on pycrdt-websocket's
Channels consumer.

- Roles come from the access rules (circuits/access.py): who may edit the circuit (the
  owner, a user granted `can_edit`) is a writer, who may only read it a viewer, anyone else is refused before the handshake
  (4404 to the server's log, an HTTP 403 to the browser), as run sockets are.
- The server keeps the document: a writer's update is stored (store.py) and then sent to
  the others; a viewer's update is dropped here, so a page that let one through changes
  nothing. Awareness (presence) messages pass for both roles, with the name of the
  signed-in user written in by the server (no one appears as someone else).
- Each writer's update is recorded with its author and what it changed, as items of a
  circuit diff (circuits/authorship.py): the socket's copy of the document is read as a
  circuit document before and after the update, re-reading only what it touched
  (reading.py).
- Access is rechecked when it may have ended (`circuit_access_changed`: visibility,
  grants, share token; a deleted circuit) and every RECHECK_EVERY seconds; a socket whose
  user lost access is closed with ACCESS_ENDED (4403), one who lost edit access becomes a
  viewer.
- The socket tells its client its role (`ROLE_MESSAGE`: the type byte, then `writer` or
  `viewer` in UTF-8) when it opens and whenever it changes, so a page whose edit access
  was taken away turns read-only (and writable again when it is given back) instead of
  having its edits dropped unseen.
"""
from __future__ import annotations

import asyncio
import json
import logging
from urllib.parse import parse_qs

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.core.exceptions import ObjectDoesNotExist
from django.db import IntegrityError
from pycrdt import Decoder, Doc, Encoder, YMessageType, YSyncMessageType, create_awareness_message, create_sync_message, create_update_message, handle_sync_message, read_message
from pycrdt.websocket.django_channels_consumer import YjsConsumer

from ..access import can_edit
from ..models import Circuit
from . import store
from .reading import CircuitReading

log = logging.getLogger(__name__)

WRITER, VIEWER = "writer", "viewer"
ACCESS_ENDED = 4403
NOT_FOUND = 4404
RECHECK_EVERY = 30.0
_EMPTY_UPDATE = b"\x00\x00"
#: A message type of dbspweb's own beside y-protocols' (0 sync, 1 awareness, 2 auth, 3
#: awareness query): the client's role. frontend/src/collab/useSharedDocument.ts reads it.
ROLE_MESSAGE = 100


# dbspweb's own message type: a comment thread changed (circuits/comments/live.py): the type
# byte, then the event as JSON text (docs/collaboration.md, "Comments").
COMMENT_MESSAGE = 101


def role_message(role: str) -> bytes:
    return bytes([ROLE_MESSAGE]) + role.encode()


def room_of(circuit_id: int) -> str:
    return f"circuit-doc.{circuit_id}"


def _decode_awareness(update: bytes) -> list[tuple[int, int, dict | None]]:
    decoder = Decoder(update)
    entries = []
    for _ in range(decoder.read_var_uint()):
        client_id, clock, state = decoder.read_var_uint(), decoder.read_var_uint(), decoder.read_var_string()
        entries.append((client_id, clock, json.loads(state) if state else None))
    return entries


def _encode_awareness(entries: list[tuple[int, int, dict | None]]) -> bytes:
    encoder = Encoder()
    encoder.write_var_uint(len(entries))
    for client_id, clock, state in entries:
        encoder.write_var_uint(client_id)
        encoder.write_var_uint(clock)
        encoder.write_var_string(json.dumps(state, separators=(",", ":")) if state is not None else "null")
    return encoder.to_bytes()


class CircuitDocConsumer(YjsConsumer):
    def make_room_name(self) -> str:
        return room_of(self.circuit_id)

    async def make_ydoc(self) -> Doc:
        doc, self.document_id = await database_sync_to_async(self._load)()
        return doc

    def _load(self):
        return store.load(Circuit.objects.get(pk=self.circuit_id))

    async def connect(self) -> None:
        self.circuit_id = int(self.scope["url_route"]["kwargs"]["circuit_id"])
        self.role = await self._role()
        self.clients: dict[int, int] = {}  # this socket's awareness client ids -> last clock
        self.presence: bytes | None = None  # this socket's last awareness update
        self._recheck = None
        self.reading: CircuitReading | None = None
        if self.role is None:
            await self.close(code=NOT_FOUND)  # same answer as a circuit that does not exist
            return
        self.room_name = self.make_room_name()
        # Join first, then read: an update sent meanwhile arrives as a group message.
        await self.channel_layer.group_add(self.room_name, self.channel_name)
        self.ydoc = await self.make_ydoc()
        self.reading = CircuitReading(self.ydoc)
        await self.accept()
        await self.send(bytes_data=create_sync_message(self.ydoc))
        await self.send(bytes_data=role_message(self.role))
        # The others present send this socket their presence (`doc_hello`).
        await self.channel_layer.group_send(self.room_name, {"type": "doc.hello", "channel": self.channel_name})
        self._recheck = asyncio.create_task(self._keep_checking())

    async def disconnect(self, code) -> None:
        if self._recheck is not None:
            self._recheck.cancel()
        if getattr(self, "reading", None) is not None:
            self.reading.close()
        if self.room_name is None or self.role is None:
            return
        await self.channel_layer.group_discard(self.room_name, self.channel_name)
        if self.clients:  # this socket's people have left: say so now, not after a timeout
            gone = _encode_awareness([(cid, clock + 1, None) for cid, clock in self.clients.items()])
            await self._broadcast(create_awareness_message(gone))
        try:
            await database_sync_to_async(store.compact)(self.document_id)
        except Exception:  # noqa: BLE001 - the updates stay appended; the next close compacts
            log.exception("circuit %s: could not compact its shared document", self.circuit_id)

    async def receive(self, text_data=None, bytes_data=None):
        if not bytes_data:
            return
        if bytes_data[0] == YMessageType.SYNC:
            await self._receive_sync(bytes_data[1:])
        elif bytes_data[0] == YMessageType.AWARENESS:
            await self._receive_awareness(read_message(bytes_data[1:]))

    async def _receive_sync(self, message: bytes) -> None:
        if message[0] == YSyncMessageType.SYNC_STEP1:
            reply = handle_sync_message(message, self.ydoc)  # what the client lacks, to it alone
            if reply is not None:
                await self.send(bytes_data=reply)
            return
        if self.role != WRITER:
            log.info("circuit %s: dropped a viewer's document update (user %s)", self.circuit_id, self.scope["user"].pk)
            return
        update = read_message(message[1:])
        if update == _EMPTY_UPDATE:
            return
        change = self.reading.apply(update)  # applied to this socket's copy; the part it touched, before and after
        author = (self.scope["user"].pk, *change) if change is not None else None
        try:  # stored (with its author) before anyone sees it
            await database_sync_to_async(store.append)(self.document_id, update, author)
        except (IntegrityError, ObjectDoesNotExist):  # the circuit was deleted meanwhile
            await self.close(code=ACCESS_ENDED, reason="this circuit was deleted")
            return
        await self._broadcast(create_update_message(update))

    async def _receive_awareness(self, update: bytes) -> None:
        user = self.scope["user"]
        entries = []
        for client_id, clock, state in _decode_awareness(update):
            if state is not None:
                state = {**state, "user": {**(state.get("user") or {}), "name": user.get_username()}, "role": self.role}
            entries.append((client_id, clock, state))
            self.clients[client_id] = clock
        message = create_awareness_message(_encode_awareness(entries))
        self.presence = message
        await self._broadcast(message)

    async def _broadcast(self, message: bytes) -> None:
        await self.channel_layer.group_send(self.room_name, {"type": "doc.message", "message": message, "sender": self.channel_name})

    # ---------------------------------------------------------------- group events

    async def doc_message(self, event) -> None:
        """Another socket's update or presence, to this client (and this socket's copy)."""
        if event["sender"] == self.channel_name:
            return
        message = event["message"]
        if message[0] == YMessageType.SYNC:
            handle_sync_message(message[1:], self.ydoc)  # (self.reading notes what it touched)
        await self.send(bytes_data=message)

    async def doc_comment(self, event) -> None:
        """A comment thread changed (circuits/comments/live.py): to this client as it is."""
        await self.send(bytes_data=bytes([COMMENT_MESSAGE]) + event["payload"])

    async def doc_hello(self, event) -> None:
        if event["channel"] != self.channel_name and self.presence is not None:
            await self.channel_layer.send(event["channel"], {"type": "doc.message", "message": self.presence, "sender": self.channel_name})

    async def doc_access(self, event) -> None:
        """Access may have ended (`circuit_access_changed`): recheck it."""
        role = await self._role()
        if role is None:
            await self.close(code=ACCESS_ENDED, reason="access to this circuit ended")
        elif role != self.role:
            self.role = role
            await self.send(bytes_data=role_message(role))

    async def _keep_checking(self):
        while True:
            await asyncio.sleep(RECHECK_EVERY)
            await self.doc_access({})

    @database_sync_to_async
    def _role(self) -> str | None:
        share = parse_qs(self.scope.get("query_string", b"").decode()).get("share", [None])[0]
        user = self.scope["user"]
        circuit = Circuit.visible_to(user, share).filter(pk=self.circuit_id).first()
        if circuit is None:
            return None
        return WRITER if can_edit(user, circuit) else VIEWER


def access_changed(sender, circuit_id: int, **kwargs) -> None:
    """circuits.signals.circuit_access_changed (after the commit): everyone editing or
    viewing the circuit rechecks their access."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(room_of(circuit_id), {"type": "doc.access"})
    except Exception:  # noqa: BLE001 - the change is committed; the periodic recheck closes them
        log.exception("circuit %s: could not ask its document sockets to recheck access", circuit_id)
