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

Watching together (docs/collaboration.md): a page that sends `join` is put on the run's
presence list (runs/watchers.py, in Redis) and gets a `presence` message whenever the
list changes; each message it sends (a ping every 15 s) keeps it there, and a socket not
heard from for watchers.TTL seconds is reaped by any other socket of the run (a crash
calls no disconnect). `share_view` (signed-in watchers only) is validated against the
run (tick within its ticks, node in its circuit), rate-limited, stored on the sender's
entry and relayed to the run's other joined sockets as `view`.
"""
import asyncio
import logging
import secrets
import time
from collections import deque
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from redis.exceptions import RedisError
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.db import DatabaseError

from circuits.models import Circuit

from . import watchers
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

#: Reap watchers not heard from (watchers.TTL) this often, on every socket of the run.
REAP_EVERY = 5.0
#: At most RELAY_LIMIT `join`/`share_view` messages per socket in any RELAY_WINDOW seconds
#: (the page sends a moving slider's tick at most every 100 ms).
RELAY_LIMIT = 20
RELAY_WINDOW = 1.0


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
        if getattr(self, "_presence_task", None) is not None:
            self._presence_task.cancel()  # the entry expires (watchers.TTL)
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
        self.watcher = None  # this socket's id on the presence list, once it joined
        self._presence_task = None
        self._recent = deque()  # when the last join/share_view messages came (rate limit)
        self._node_ids = None
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
        await self._leave()
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
            await self._leave()  # off the others' lists now, not when the close is acknowledged
            await self.close(code=ACCESS_ENDED, reason="access to this run ended")

    async def receive_json(self, content, **kwargs):
        kind = content.get("type") if isinstance(content, dict) else None
        if self.watcher is not None and not self._closed:
            if not await watchers.refresh(self.run_id, self.watcher):
                await self._join_presence(self.watcher)  # reaped while quiet: back on the list
        if kind == "ping":
            await self.send_json({"type": "pong"})
        elif kind in ("join", "share_view"):
            if not self._within_rate():
                await self._refuse(kind, None, f"too many messages: at most {RELAY_LIMIT} join/share_view messages "
                                   f"a {RELAY_WINDOW:g} s; this one was not relayed")
            elif kind == "join":
                await self._receive_join(content)
            else:
                await self._receive_share(content)
        else:
            await self.send_json({"type": "error", "error": f"Unknown message type {kind!r}; clients may send ping, join and share_view."})

    # --- watching together -------------------------------------------------------------

    def _within_rate(self) -> bool:
        now = time.monotonic()
        while self._recent and self._recent[0] <= now - RELAY_WINDOW:
            self._recent.popleft()
        if len(self._recent) >= RELAY_LIMIT:
            return False
        self._recent.append(now)
        return True

    async def _refuse(self, kind: str, field: str | None, error: str):
        message = {"type": "error", "error": f"{kind}{'.' + field if field else ''}: {error}"}
        if field:
            message["field"] = field
        await self.send_json(message)

    async def _receive_join(self, content):
        extra = sorted(set(content) - {"type"})
        if extra:
            return await self._refuse("join", extra[0], "unknown field (join has only `type`)")
        if self.watcher is None:
            self.watcher = secrets.token_urlsafe(9)
            await self._join_presence(self.watcher)
            self._presence_task = asyncio.create_task(self._reap_now_and_then())
        else:
            await self._send_presence()  # a second join: the list again, nothing changes

    async def _join_presence(self, watcher_id: str):
        user = self.scope.get("user")
        signed_in = bool(user is not None and user.is_authenticated)
        await watchers.join(self.run_id, watcher_id, user.pk if signed_in else None, user.get_username() if signed_in else "")
        await self._announce()

    async def _leave(self):
        watcher, self.watcher = getattr(self, "watcher", None), None
        task = getattr(self, "_presence_task", None)
        if task is not None:
            task.cancel()
        if watcher is None:
            return
        try:
            if await watchers.leave(self.run_id, watcher):
                await self._announce()
        except Exception:  # noqa: BLE001 - Redis is away: the entry expires (watchers.TTL)
            log.warning("run %s: could not take watcher %s off the list", self.run_id, watcher)

    async def _announce(self):
        """Tell every joined socket of the run that the list changed (each reads it)."""
        await self.channel_layer.group_send(self.group, {"type": "run.presence"})

    async def _reap_now_and_then(self):
        while True:
            await asyncio.sleep(REAP_EVERY)
            try:
                if await watchers.reap(self.run_id):
                    await self._announce()
            except Exception:  # noqa: BLE001 - Redis is away; try again next round
                pass

    async def _send_presence(self):
        if self.watcher is None or self._closed:
            return
        await self.send_json({"type": "presence", "you": self.watcher, "watchers": await watchers.listing(self.run_id)})

    async def run_presence(self, event):
        """The run's presence list changed: this socket's page gets it (if it joined)."""
        await self._send_presence()

    async def run_view(self, event):
        """A presenter's view moved: to every other joined page."""
        if self.watcher is None or self._closed or event["message"]["from"] == self.watcher:
            return
        await self.send_json(event["message"])

    async def _receive_share(self, content):
        if self.watcher is None:
            return await self._refuse("share_view", None, "send {\"type\": \"join\"} first")
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            return await self._refuse("share_view", None, "sign in to share your view (guests may follow)")
        extra = sorted(set(content) - {"type", "sharing", "tick", "node"})
        if extra:
            return await self._refuse("share_view", extra[0], "unknown field (share_view has sharing, tick, node)")
        sharing = content.get("sharing")
        if not isinstance(sharing, bool):
            return await self._refuse("share_view", "sharing", f"must be true or false, not {sharing!r}")
        view = None
        if sharing:
            tick, node = content.get("tick"), content.get("node")
            if tick is not None:
                if not isinstance(tick, int) or isinstance(tick, bool):
                    return await self._refuse("share_view", "tick", f"must be a whole number or null, not {tick!r}")
                last = self.last_seq if self.last_seq is not None and tick <= self.last_seq else await self._current_tick()
                if not 0 <= tick <= last:
                    span = f"0 to {last}" if last >= 0 else "none yet"
                    return await self._refuse("share_view", "tick", f"{tick} is not a tick of run {self.run_id} (its ticks: {span})")
            if node is not None:
                if not isinstance(node, str):
                    return await self._refuse("share_view", "node", f"must be a node id (a string) or null, not {node!r}")
                if self._node_ids is None:
                    self._node_ids = await self._circuit_node_ids()
                if node not in self._node_ids:
                    return await self._refuse("share_view", "node", f"run {self.run_id}'s circuit has no node {node[:100]!r}")
            view = {"tick": tick, "node": node}
        changed = await watchers.share(self.run_id, self.watcher, view)
        if changed:
            await self._announce()  # who shares changed: the list carries the view
        elif view is not None:
            await self.channel_layer.group_send(self.group, {"type": "run.view", "message": {
                "type": "view", "from": self.watcher, "name": user.get_username(), **view}})

    @database_sync_to_async
    def _current_tick(self) -> int:
        tick = Run.objects.filter(pk=self.run_id).values_list("current_tick", flat=True).first()
        return -1 if tick is None else tick  # deleted meanwhile: no tick is valid (the access check closes it)

    @database_sync_to_async
    def _circuit_node_ids(self) -> set[str]:
        document = Run.objects.select_related("version").get(pk=self.run_id).version.document
        ids, todo = set(), [document]
        while todo:
            for node in (todo.pop().get("nodes") or []):
                if isinstance(node, dict) and isinstance(node.get("id"), str):
                    ids.add(node["id"])
                    if isinstance(node.get("subcircuit"), dict):
                        todo.append(node["subcircuit"])
        return ids

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
