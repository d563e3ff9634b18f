"""Problems found in circuit documents, expressions and pushed data."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Problem:
    """One problem, naming where it is: a node (and its port or parameter), or a row/field."""

    message: str
    node: str | None = None
    port: str | None = None
    param: str | None = None
    row: int | None = None
    field: str | None = None
    position: int | None = None  # character offset inside an expression

    def as_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


class CircuitInvalid(ValueError):
    """A circuit document failed validation; `problems` lists every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(p.message for p in problems))


class DataInvalid(ValueError):
    """Pushed rows failed validation; `problems` names each bad row and field."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(p.message for p in problems))


class ExpressionError(ValueError):
    """An expression could not be parsed, is outside the whitelist, or does not type-check."""

    def __init__(self, message: str, position: int | None = None):
        self.position = position
        super().__init__(message)


class TickFailed(RuntimeError):
    """A tick failed inside one node: names the node and its operator, and says why.

    Its message reads on its own (a run's error, the websocket `error` message and the
    CLI print it as it is): "node 'by_sensor' (aggregate): ValueError: ...". The
    original exception is the `__cause__`. Rejected input data (DataInvalid) is not
    wrapped: it already names the input, row and field."""

    def __init__(self, node: str, kind: str, cause: BaseException):
        self.node, self.kind = node, kind
        text = _short(str(cause))
        # a message that starts with the node already (FixedPointDiverged, ValueOutOfRange)
        for own in (f"node {node!r} ({kind}): ", f"node {node!r}: "):
            if text.startswith(own):
                text = text[len(own):]
                break
        self.reason = f"{type(cause).__name__}: {text}"
        super().__init__(f"node {node!r} ({kind}): {self.reason}")


class TickTooLarge(TickFailed):
    """A node would build (or built) more rows in one tick than the tick's row limit
    (dbsp.limits.TICK_MAX_ROWS; the web app's DBSPWEB_TICK_MAX_ROWS). Raised before a
    join or cartesian product is built, from counts of its keys on both sides, and after
    any node whose output passed the limit; names the node and the count. Likewise for
    the byte limit (dbsp.limits.TICK_MAX_BYTES; DBSPWEB_TICK_MAX_BYTES): names the node
    and the size."""

    def __init__(self, node: str, kind: str, rows: int, limit: int | None, built: bool, nbytes: int | None = None,
                 max_bytes: int | None = None, measured: bool = False):
        self.node, self.kind, self.rows, self.limit = node, kind, rows, limit
        self.nbytes, self.max_bytes = nbytes, max_bytes  # set when the byte limit (not the row limit) was passed
        what = "its output has" if built else "its output would have"
        if max_bytes is None:
            self.reason = (f"{what} {rows:,} rows, over the limit of {limit:,} rows one node may build in a tick "
                           "(DBSPWEB_TICK_MAX_ROWS)")
        else:
            size = (f"{_bytes(nbytes)} in {rows:,} rows" if measured
                    else f"about {_bytes(nbytes)}: {rows:,} rows of {nbytes // max(rows, 1):,} bytes")
            self.reason = (f"{what} {size}, over the limit of {_bytes(max_bytes)} one node may build in a tick "
                           "(DBSPWEB_TICK_MAX_BYTES)")
        RuntimeError.__init__(self, f"node {node!r} ({kind}): {self.reason}")


def _bytes(n: int) -> str:
    """A byte count, exact and as people read it: 3,000 bytes; 2,147,483,648 bytes (2.0 GiB)."""
    for unit, size in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if n >= size:
            return f"{n:,} bytes ({n / size:,.1f} {unit})"
    return f"{n:,} bytes"


def _short(text: str, limit: int = 1000) -> str:
    """A message without a JVM stack trace (Spark's errors carry one): its first two
    lines and its last "Caused by:" line, at most `limit` characters."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    kept = lines[:2] + [line for line in lines[2:] if line.startswith("Caused by:")][-1:]
    short = " ".join(kept)
    return short if len(short) <= limit else short[:limit - 1] + "…"
