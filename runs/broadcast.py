"""Publish run events to the run's Channels group, from which each watcher's consumer
(runs/consumers.py) sends them to its browser. Used by the run control here and by the
workers' tick loop."""
import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from .lag import lag_of
from .messages import status_message
from .models import Run

log = logging.getLogger(__name__)


def publish(run_id: int, message: dict) -> None:
    try:
        async_to_sync(get_channel_layer().group_send)(f"run.{run_id}", {"type": "run.message", "message": message})
    except Exception:  # the data is committed; watchers catch up from the database
        log.exception("run %s: could not publish %s", run_id, message.get("type"))


def publish_access_check(run_ids) -> None:
    """Ask every consumer watching these runs to recheck its user's access, and close
    the socket (4403) when it has ended (runs/consumers.py `run_access`)."""
    for run_id in run_ids:
        try:
            async_to_sync(get_channel_layer().group_send)(f"run.{run_id}", {"type": "run.access"})
        except Exception:  # the periodic recheck of each consumer closes it later
            log.exception("run %s: could not ask its watchers to recheck access", run_id)


def access_changed(sender, circuit_id: int, **kwargs) -> None:
    """circuits.signals.circuit_access_changed (after the commit): recheck the watchers
    of every run of the circuit."""
    publish_access_check(Run.objects.filter(circuit_id=circuit_id).values_list("pk", flat=True))


def publish_status(run) -> None:
    """A `status` message for the run as it is in the database now."""
    try:
        run = Run.objects.get(pk=run.pk)
    except Run.DoesNotExist:
        return
    publish(run.pk, status_message(run))


def publish_error(run_id: int, tick: int, error: str, node: str | None = None) -> None:
    publish(run_id, {"type": "error", "tick": tick, "node": node, "error": error})


def publish_lag(run_id: int) -> None:
    """A `lag` message: the run's lag right after a push was accepted (a paused or slow
    run publishes no tick that would carry it). `tick` is the run's current tick when
    the lag was read (read first: the lag is at least as new), so a watcher's consumer
    drops a lag message that a later tick's delta already superseded."""
    try:
        tick = Run.objects.filter(pk=run_id).values_list("current_tick", flat=True).first()
        if tick is None:
            return
        lag = lag_of(run_id)
    except Exception:  # the push is committed; the next tick or status carries the lag
        log.exception("run %s: could not read the lag", run_id)
        return
    publish(run_id, {"type": "lag", "tick": tick, "lag": lag})
