"""A connector's rows per second over the last RATE_WINDOW seconds, from samples of its
record counter ([unix time, count], oldest first) that the pump writes with the counter
itself (so no extra write): one sample a second at most, those older than the window
dropped but one (the count just before it)."""
from __future__ import annotations

RATE_WINDOW = 30.0  # seconds
SAMPLE_EVERY = 1.0  # seconds: a newer count within this replaces the last sample's


def sampled(samples: list | None, now: float, count: int, before: int) -> list:
    """`samples` with the counter's new value at `now` (`before`: its value until now,
    the first sample when there is none yet)."""
    out = [list(s) for s in (samples or [])] or [[now, before]]
    if len(out) >= 2 and now - out[-2][0] < SAMPLE_EVERY:
        out[-1] = [out[-1][0], count]  # within a second of the one before: keep its time, take the count
    else:
        out.append([now, count])
    start = now - RATE_WINDOW
    older = [s for s in out if s[0] <= start]
    return older[-1:] + [s for s in out if s[0] > start]


def rows_per_second(samples: list | None, now: float, count: int, since: float) -> float:
    """Records a second over the window ending now: (count now - the count at the window's
    start) / the window; a connector younger than the window is measured since `since`
    (its creation), with the count 0 then."""
    start = now - RATE_WINDOW
    base_count = 0  # the samples start with the connector's counter (connectors/pump.py)
    for t, c in samples or []:
        if t <= start:
            base_count = c
    span = now - max(start, since)
    if span <= 0:
        return 0.0
    return max(0.0, (count - base_count) / span)
