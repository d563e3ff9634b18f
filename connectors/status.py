"""A connector's status as shown (the API, the run page, /metrics): its state with its
run's, its lag (a source's as its client last said; a sink's in ticks), its rows/s."""
from __future__ import annotations

import time

from .models import Connector, State
from .rates import rows_per_second


def shown_state(state: str, run_status: str) -> str:
    """A connector's state as shown: a running connector of a paused run is paused too."""
    return State.PAUSED if state == State.RUNNING and run_status == "paused" else state


def lag_of(connector: Connector, current_tick: int) -> tuple[int | None, str]:
    """(lag, unit): a source's as its client last said; a sink's in ticks, from its run's last committed tick."""
    if connector.is_source:
        return (connector.lag, connector.lag_unit or "records") if connector.lag is not None else (None, "")
    return max(0, current_tick - connector.last_tick), "ticks"


def rate_of(samples, count: int, created_at) -> float:
    return rows_per_second(samples, time.time(), count, created_at.timestamp() if created_at else time.time())

