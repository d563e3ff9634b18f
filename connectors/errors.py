"""What a connector can hit: a record it cannot push (it fails, naming itself, the
record's position and the column; nothing of the batch is stored) or a transient trouble
(a broker away, the run's lag full: tried again with backoff)."""
from __future__ import annotations

import re

#: what the input log's and the CSV reader's messages put in front: a line, a row (of
#: the batch, not the user's: the record's position says where) and a column (named once)
_PREFIX = re.compile(r"^(?:line \d+: )?(?:(?:row|record) \d+(?:, column '[^']*')?(?::|,) )?")


def bare(message: str) -> str:
    """A problem's message without its line, row and column prefix."""
    return _PREFIX.sub("", message, count=1)


class RecordError(Exception):
    """A record that does not parse or does not fit the input's schema."""

    def __init__(self, label: str, position: str, message: str, field: str | None = None):
        self.position, self.field, self.message = position, field, message
        column = f", column {field!r}" if field else ""
        super().__init__(f"{label + ' ' if label else ''}at {position}{column}: {message}")

    def named(self, label: str) -> "RecordError":
        return RecordError(label, self.position, self.message, self.field)


class Rejected(list):
    """A record a source could not read, in place of its records (an empty list, so a
    client that counts or iterates records needs no change): with `on_error: dead_letter`
    it goes to the connector's dead letters, otherwise the connector fails with `error`."""

    def __init__(self, error: RecordError, payload=None):
        super().__init__()
        self.error, self.payload = error, payload  # the raw record (bytes, text or JSON), for the dead letter


class ConfigError(Exception):
    """A connector declared with options it cannot run with (an unknown format, a missing topic)."""


class Transient(Exception):
    """Try again later: an unreachable broker, a folder not there yet, the run's lag full."""
