"""Starting and pausing one connector of a run (POST .../pause/, .../start/), apart from
its run: a paused connector is not polled (a source) or written (a sink); the run's other
connectors go on. A source resumes at its stored position, a sink after its last tick:
nothing is lost while it is paused. Restarting a failed one is `start` too."""
from __future__ import annotations

from circuits.services import ServiceError

from .models import Connector, State


def pause(connector: Connector) -> Connector:
    """Paused, unless it failed (a failed connector is restarted, not paused: 409)."""
    changed = Connector.objects.filter(pk=connector.pk).exclude(state=State.FAILED).update(state=State.PAUSED)
    if not changed:
        raise ServiceError(f"{connector.label()} failed; restart it (POST .../restart/) rather than pause it.", 409)
    connector.refresh_from_db()
    return connector


def start(connector: Connector) -> Connector:
    """Running again (from paused, retrying or failed): the worker's next pass takes it up
    at its stored position (a source) or after its last tick (a sink)."""
    Connector.objects.filter(pk=connector.pk).update(state=State.RUNNING)
    connector.refresh_from_db()
    return connector
