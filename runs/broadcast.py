"""Publish run events to the run's Channels group, from which each watcher's consumer
(runs/consumers.py) sends them to its browser. Used by the run control here and by the
workers' tick loop.

Messages are handed to one sender per process (an event loop on a thread of its own)
that publishes them in the order they were handed over, over one pool of Redis
connections. `async_to_sync(group_send)` from a sync caller used to start an event
loop and a Redis connection per message (~25 ms of a worker's tick, a third of a push's
time in a web process), and blocked the caller until Redis answered.
"""
import asyncio
import atexit
import logging
import os
import threading

from channels.layers import get_channel_layer

from .lag import lag_of
from .messages import status_message
from .models import Run

log = logging.getLogger(__name__)


class _Sender:
    """This process's publisher: a queue drained in order by a loop on its own thread."""

    def __init__(self):
        self._lock = threading.Lock()
        self._pid = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.queue: asyncio.Queue | None = None

    def send(self, group: str, event: dict) -> None:
        with self._lock:
            if self._pid != os.getpid():  # first use in this process
                self.loop, self._pid = asyncio.new_event_loop(), os.getpid()
                self.queue = asyncio.Queue()
                threading.Thread(target=self._run, name="dbspweb-publisher", daemon=True).start()
            loop, queue = self.loop, self.queue
        loop.call_soon_threadsafe(queue.put_nowait, (group, event))

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._drain())

    async def _drain(self) -> None:
        layer = get_channel_layer()
        while True:
            group, event = await self.queue.get()
            try:
                await layer.group_send(group, event)
            except Exception:  # the data is committed; watchers catch up from the database
                log.exception("%s: could not publish %s", group, event.get("message", event).get("type"))
            finally:
                self.queue.task_done()

    def flush(self, timeout: float = 5.0) -> None:
        """Wait until every message handed over so far is published (at exit, in tests)."""
        with self._lock:
            loop, queue = (self.loop, self.queue) if self._pid == os.getpid() else (None, None)
        if loop is None or not loop.is_running():
            return
        try:
            asyncio.run_coroutine_threadsafe(queue.join(), loop).result(timeout)
        except Exception:  # noqa: BLE001 - exiting anyway; watchers catch up from the database
            log.warning("could not publish every pending message within %.0f s", timeout)


_sender = _Sender()
atexit.register(_sender.flush)


def publish(run_id: int, message: dict) -> None:
    """Hand a message for the run's watchers to this process's publisher (in order)."""
    _sender.send(f"run.{run_id}", {"type": "run.message", "message": message})


def flush(timeout: float = 5.0) -> None:
    _sender.flush(timeout)


def publish_access_check(run_ids) -> None:
    """Ask every consumer watching these runs to recheck its user's access, and close
    the socket (4403) when it has ended (runs/consumers.py `run_access`)."""
    for run_id in run_ids:  # through the in-order publisher; if it fails, the periodic recheck closes them
        _sender.send(f"run.{run_id}", {"type": "run.access"})


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


def publish_lag(run_id: int, tick: int | None = None, lag: dict | None = None) -> None:
    """A `lag` message: the run's lag right after a push was accepted (a paused or slow
    run publishes no tick that would carry it). `tick` is the run's current tick when
    the lag was read (read first: the lag is at least as new), so a watcher's consumer
    drops a lag message that a later tick's delta already superseded. A push passes
    both as its transaction saw them (the run row locked: consistent, no query)."""
    if tick is not None and lag is not None:
        publish(run_id, {"type": "lag", "tick": tick, "lag": lag})
        return
    try:
        tick = Run.objects.filter(pk=run_id).values_list("current_tick", flat=True).first()
        if tick is None:
            return
        lag = lag_of(run_id)
    except Exception:  # the push is committed; the next tick or status carries the lag
        log.exception("run %s: could not read the lag", run_id)
        return
    publish(run_id, {"type": "lag", "tick": tick, "lag": lag})
