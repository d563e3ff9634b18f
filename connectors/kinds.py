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
- `lag(position) -> (amount, unit) | None`, optional: how far `position` is behind the
  source's end, e.g. `(120, "records")`, `(3, "files")`, `(5_000, "bytes")`; None when it
  cannot say. Called after each poll (and on idle steps): it must be cheap (what the last
  read told, or a small request at most once a second). The pump stores it with the
  position, in the push's transaction (on an idle step only when it changed);
- `close()`.
An item's records may be an `errors.Rejected` (an empty list carrying a RecordError and
the raw payload): a record the client itself could not read. With `on_error: dead_letter`
it becomes a dead letter, otherwise the connector fails with its error; `decode` returns
one for a payload that does not parse in dead-letter mode, so clients need no change.
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

import os
from dataclasses import dataclass, field
from typing import Callable

from .errors import ConfigError

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
    #: the input's (source) or the view's (sink) schema when the opener has it (the command
    #: line); None: a kind that needs it reads the run's circuit version from the database
    schema: object = None
    #: whose connector it is, for `ident`, when not a run's (the command line's state folder)
    scope: str | None = None
    #: the editor's Test connection: sign in and check, create nothing (no slot, table, topic)
    probe: bool = False

    @property
    def ident(self) -> str:
        """A name unique to this run's connector (consumer groups, transactional ids, slots)."""
        return f"dbspweb-{self.scope or f'run{self.run_id}'}-{self.name}"


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


def secrets_of(stored: dict | None, from_env: dict | None, where: str = "on the worker") -> dict:
    """The stored secrets and those named as environment variables, read now (where the
    client opens): a variable that is not set is a ConfigError naming it."""
    secrets = dict(stored or {})
    for option, variable in (from_env or {}).items():
        value = os.environ.get(variable)
        if value is None:
            raise ConfigError(f"secret {option!r}: the environment variable {variable} is not set {where}")
        secrets[option] = value
    return secrets
