"""`ws/runs/<id>/`: a snapshot of every output view, then one numbered message per tick.

On connect (after checking the run's circuit is visible to the user) the consumer joins
the run's group *first*, then reads the database, so no tick can fall between the
snapshot and the live stream; live messages at or below the last sequence sent are
dropped, and a gap is filled from the stored deltas. `?since=N` (a reconnect) gets the
stored deltas after N instead of a snapshot, or a snapshot when N is too far behind.
`?share=<token>` opens the run of an unlisted circuit, as on REST reads.
A `lag` message (published when a push is accepted) computed before a tick the client
already got is dropped: that tick's delta carried a newer lag.
Access is rechecked when it may have ended (the share token rotated, a grant removed,
the circuit made private or deleted: `run.access` events, runs/broadcast.py) and every
REJOIN_EVERY seconds; a socket whose user lost access is closed with ACCESS_ENDED.
While Redis is unreachable a handshake is accepted and closed at once with
LAYER_UNAVAILABLE (the client retries); any other failure closes with 1011, no traceback.
The messages and close codes are documented in docs/live-protocol.md.
"""
import asyncio
import logging
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from redis.exceptions import RedisError
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.db import DatabaseError

from circuits.models import Circuit

from .lag import lag_of
from .messages import delta_messages, snapshot_message, status_message
from .models import Run

log = logging.getLogger(__name__)

MAX_REPLAY_TICKS = 1000
#: Re-join the run's group (and recheck access) this often: a Redis restart forgets
#: group memberships, and an access-check event may have been lost with it.
REJOIN_EVERY = 30.0

#: Close codes (docs/live-protocol.md). Before the handshake is accepted, a refusal is
#: an HTTP 403 to the browser (it sees 1006); these are sent after accepting.
ACCESS_ENDED = 4403  # the user may no longer see the run: do not reconnect
LAYER_UNAVAILABLE = 4503  # Redis (the channel layer) is unreachable: reconnect later
SERVER_ERROR = 1011


class RunConsumer(AsyncJsonWebsocketConsumer):
    async def __call__(self, scope, receive, send):
        """Channels' consumer, with Redis outages and unexpected errors answered by a
        clean close instead of an HTTP 500 (with a traceback page under DEBUG)."""
        self._accepted = self._closed = False

        async def tracked_send(message):
            if message["type"] == "websocket.accept":
                self._accepted = True
            elif message["type"] == "websocket.close":
                self._closed = True
            await send(message)

        try:
            await super().__call__(scope, receive, tracked_send)
        except asyncio.CancelledError:
            raise
        except (ConnectionError, OSError, RedisError) as e:
            log.warning("run websocket: the channel layer is unreachable (%s); closing with %s", e, LAYER_UNAVAILABLE)
            await self._close_after_failure(send, LAYER_UNAVAILABLE, "the server cannot reach Redis; retry")
        except Exception:  # noqa: BLE001 - logged; the client gets a close code, not a trace
            log.exception("run websocket failed")
            await self._close_after_failure(send, SERVER_ERROR, "server error")

    async def _close_after_failure(self, send, code: int, reason: str):
        if getattr(self, "_rejoin", None) is not None:
            self._rejoin.cancel()  # disconnect() will not run
        if self._closed:
            return
        try:
            if not self._accepted:
                await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": code, "reason": reason})
        except Exception:  # noqa: BLE001 - the client has gone already
            pass

    async def connect(self):
        self.run_id = self.scope["url_route"]["kwargs"]["run_id"]
        self.last_seq = None
        self._rejoin = None
        if not await self._visible():
            await self.close(code=4404)  # same answer as a run that does not exist
            return
        self.group = f"run.{self.run_id}"
        await self._join()
        await self.accept()
        since = parse_qs(self.scope.get("query_string", b"").decode()).get("since", [None])[0]
        first, seq = await self._initial(since)
        for message in first:
            await self._send(message)
        # The client has every tick up to `seq` now, also when nothing was numbered (a
        # reconnect with since = the current tick): later live deltas are deduplicated
        # and gap-filled against it.
        self.last_seq = seq
        self._rejoin = asyncio.create_task(self._keep_membership())

    async def _join(self, attempts: int = 3):
        """Join the run's group; after a Redis restart the first try may hit a pooled
        connection to the old server, so try again on a fresh one."""
        for attempt in range(attempts):
            try:
                return await self.channel_layer.group_add(self.group, self.channel_name)
            except (ConnectionError, OSError, RedisError):
                if attempt == attempts - 1:
                    raise
                await asyncio.sleep(0.2 * (attempt + 1))

    async def disconnect(self, code):
        if self._rejoin is not None:
            self._rejoin.cancel()
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def _keep_membership(self):
        while True:
            await asyncio.sleep(REJOIN_EVERY)
            await self.run_access({})
            try:
                await self._join(attempts=1)
            except Exception:  # noqa: BLE001 - Redis is away; try again next round
                pass

    async def run_access(self, event):
        """Access to the run's circuit may have ended (runs/broadcast.py
        `publish_access_check`): close the socket when the user can no longer see it."""
        try:
            visible = await self._visible()
        except DatabaseError:
            log.exception("run %s: could not recheck access", self.run_id)
            return
        if not visible:
            self.last_seq = None
            await self.close(code=ACCESS_ENDED, reason="access to this run ended")

    async def receive_json(self, content, **kwargs):
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "ping":
            await self.send_json({"type": "pong"})
        else:
            await self.send_json({"type": "error", "error": f"Unknown message type {kind!r}; clients may only send {{\"type\": \"ping\"}}."})

    async def run_message(self, event):
        """A message published to the run's group (runs/broadcast.py), to this browser."""
        if self._closed:
            return  # closed (access ended); the disconnect is on its way
        message = event["message"]
        if message["type"] == "lag":
            if self.last_seq is not None and message.get("tick", self.last_seq) < self.last_seq:
                return  # computed before a tick this client already got, whose lag is newer
        elif message["type"] == "delta":
            if self.last_seq is not None and message["seq"] <= self.last_seq:
                return  # already sent (snapshot or replay covered it)
            if self.last_seq is not None and message["seq"] > self.last_seq + 1:
                for missed in await self._deltas_after(self.last_seq, message["seq"] - 1):
                    await self._send(missed)
        await self._send(message)

    async def _send(self, message):
        if message["type"] in ("delta", "snapshot"):
            self.last_seq = message["seq"]
        await self.send_json(message)

    @database_sync_to_async
    def _visible(self) -> bool:
        run = Run.objects.filter(pk=self.run_id).only("circuit_id").first()
        share = parse_qs(self.scope.get("query_string", b"").decode()).get("share", [None])[0]
        return run is not None and Circuit.visible_to(self.scope["user"], share).filter(pk=run.circuit_id).exists()

    @database_sync_to_async
    def _initial(self, since):
        run = Run.objects.select_related("version").get(pk=self.run_id)
        lag = lag_of(run.pk)
        try:
            since = int(since) if since is not None else None
        except ValueError:
            since = None
        if since is not None and -1 <= since <= run.current_tick and run.current_tick - since <= MAX_REPLAY_TICKS:
            return [status_message(run, lag)] + delta_messages(run, since, run.current_tick, lag), run.current_tick
        return [snapshot_message(run, lag), status_message(run, lag)], run.current_tick

    @database_sync_to_async
    def _deltas_after(self, after: int, upto: int):
        return delta_messages(Run.objects.get(pk=self.run_id), after, upto, lag_of(self.run_id))
