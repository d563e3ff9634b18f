"""The messages of the live protocol (docs/live-protocol.md), built from the database:
what the broadcast publishes and what the consumer sends on connect and on a gap."""
from __future__ import annotations

from circuits.services import plan_for

from .lag import lag_of
from .models import Run
from .outputs import integrated_views


def status_message(run: Run, lag: dict | None = None) -> dict:
    """The websocket's `status` message for a run as it is now."""
    return {
        "type": "status",
        "status": run.status,
        "tick": run.current_tick,
        "current_tick": run.current_tick,
        "error": run.error,
        "lag": lag if lag is not None else lag_of(run.pk),
    }


def snapshot_message(run: Run, lag: dict) -> dict:
    """Every output view integrated up to the current tick, with that tick's frontier and stats."""
    last = run.ticks.filter(tick=run.current_tick).only("frontier", "stats").first()
    frontier = {node: {"tick": -1} for node in plan_for(run.version).order}
    if last is not None:
        frontier.update(last.frontier)
    return {
        "type": "snapshot",
        "seq": run.current_tick,
        "tick": run.current_tick,
        "status": run.status,
        "views": integrated_views(run, run.current_tick),
        "frontier": frontier,
        "stats": last.stats if last is not None else {},
        "lag": lag,
    }


def delta_messages(run: Run, after: int, upto: int, lag: dict) -> list[dict]:
    """The stored ticks after `after` up to `upto`, as `delta` messages (a replay)."""
    return [delta_message(t, lag) for t in run.ticks.filter(tick__gt=after, tick__lte=upto).order_by("tick")]


def delta_message(tick_output, lag: dict | None = None) -> dict:
    return {
        "type": "delta",
        "seq": tick_output.tick,
        "tick": tick_output.tick,
        "views": tick_output.deltas,
        "frontier": tick_output.frontier,
        "stats": tick_output.stats,
        "ms": tick_output.ms,
        "lag": lag,
    }
