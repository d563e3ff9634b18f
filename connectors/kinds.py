"""The connector kinds: one `KindSpec` each, declared next to its client (kafka.py,
files.py, ...) and listed here. A kind says whether it is a source (feeds an input
table) or a sink (receives an output view), the options it takes, and how to open its
client. Adding a kind is a module with its client and its spec, and one line in registry.py.

A source's client:
- `position() -> dict`: where it resumes (stored with each push, in the same transaction);
- `poll(limit, decode, schema) -> ([(position text, [record, ...]), ...], position after)`:
  up to `limit` records past its position; `decode(position, payload)` reads one payload
  of a JSON or CSV format into insert/delete records (and names the record on error);
  or, decoded at once, `(formats.Batch(records, positions), position after)`;
- `advanced(position)`: the position after a poll was committed with its push;
- `close()`.
A sink's client:
- `committed_tick`: the last tick its target holds (read from the target when it can be:
  a tick up to it was written even if the database did not record it before a crash);
- `write(tick, rows)`: one tick's delta of the view, `rows` a list of `(row dict, weight)`,
  written whole or not at all; writing a tick again writes the same thing;
- `close()`.
A kind's `drop(opening)`, when it has one, is called once a connector's deletion committed
(connectors/cleanup.py), to let go of what it keeps outside (a replication slot).
Either raises `errors.Transient` (tried again with backoff), `errors.ConfigError` or
`errors.RecordError` (the connector fails until restarted).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

NAME_WORDS = ("password", "secret", "token", "key")


@dataclass(frozen=True)
class Opening:
    """What a kind's client is opened with."""

    run_id: int
    name: str  # the connector's name
    node: str  # the input table or output view
    config: dict
    secrets: dict
    position: dict  # a source's stored position ({} for a new one)

    @property
    def ident(self) -> str:
        """A name unique to this run's connector (consumer groups, transactional ids, slots)."""
        return f"dbspweb-run{self.run_id}-{self.name}"


@dataclass(frozen=True)
class KindSpec:
    name: str
    source: bool
    options: frozenset[str]
    required: tuple[str, ...]
    open: Callable[[Opening], object]
    formats: tuple[str, ...] = ()  # the choices of its `format` option, first the default
    doc: str = ""
    #: more checks of a declaration, given (config, the input's schema or None for a sink):
    #: returns a problem's text, or None
    check: Callable[[dict, object], str | None] | None = field(default=None)
    #: called when the connector is deleted (best effort), e.g. to drop a replication slot
    drop: Callable[[Opening], None] | None = field(default=None)
