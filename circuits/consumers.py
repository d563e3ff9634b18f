"""`ws/runs/<id>/`: a snapshot of every output view, then one numbered message per tick.

On connect (after checking the run's circuit is visible to the user) the consumer joins
the run's group *first*, then reads the database, so no tick can fall between the
snapshot and the live stream; live messages at or below the last sequence sent are
dropped, and a gap is filled from the stored deltas. `?since=N` (a reconnect) gets the
stored deltas after N instead of a snapshot, or a snapshot when N is too far behind.
"""
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from . import services
from .models import Circuit, Run

MAX_REPLAY_TICKS = 1000


class RunConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        self.run_id = self.scope["url_route"]["kwargs"]["run_id"]
        self.last_seq = None
        if not await self._visible():
            await self.close(code=4404)  # same answer as a run that does not exist
            return
        self.group = f"run.{self.run_id}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        since = parse_qs(self.scope.get("query_string", b"").decode()).get("since", [None])[0]
        first = await self._initial(since)
        for message in first:
            await self._send(message)

    async def disconnect(self, code):
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content, **kwargs):
        if content.get("type") == "ping":
            await self.send_json({"type": "pong"})

    async def run_message(self, event):
        """A message a worker published to the run's group."""
        message = event["message"]
        if message["type"] == "delta":
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
        return run is not None and Circuit.visible_to(self.scope["user"]).filter(pk=run.circuit_id).exists()

    @database_sync_to_async
    def _initial(self, since):
        run = Run.objects.select_related("version").get(pk=self.run_id)
        try:
            since = int(since) if since is not None else None
        except ValueError:
            since = None
        if since is not None and -1 <= since <= run.current_tick and run.current_tick - since <= MAX_REPLAY_TICKS:
            return [_status(run)] + _deltas(run, since, run.current_tick)
        return [
            {
                "type": "snapshot",
                "seq": run.current_tick,
                "tick": run.current_tick,
                "status": run.status,
                "views": services.integrated_views(run, run.current_tick),
            },
            _status(run),
        ]

    @database_sync_to_async
    def _deltas_after(self, after: int, upto: int):
        return _deltas(Run.objects.get(pk=self.run_id), after, upto)


def _status(run: Run) -> dict:
    return {"type": "status", "status": run.status, "current_tick": run.current_tick, "error": run.error}


def _deltas(run: Run, after: int, upto: int) -> list[dict]:
    return [delta_message(t) for t in run.ticks.filter(tick__gt=after, tick__lte=upto).order_by("tick")]


def delta_message(tick_output) -> dict:
    return {
        "type": "delta",
        "seq": tick_output.tick,
        "tick": tick_output.tick,
        "views": tick_output.deltas,
        "frontier": tick_output.frontier,
        "stats": tick_output.stats,
        "ms": tick_output.ms,
    }
