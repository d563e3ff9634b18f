"""The Nexmark event stream as a source: one input table (person, auction or bid) fed
with its share of Nexmark's events (connectors/nexmark_events.py: the 1:3:46 mix, hot
auctions and bidders, event time), at a set rate of events per second.

Three connectors with the same seed, one per table, give one consistent stream: event
n is the same event in each, so bids name auctions and people the others hold. Its
position is `{"event": n}`: events 0 to n-1 are pushed (those of this table). Event n
is a function of the seed and n alone, so a restart goes on with no duplicate and no gap.
"""
from __future__ import annotations

import time

import pyarrow as pa

from dbsp.types import Schema

from .errors import ConfigError
from .kinds import KindSpec
from .nexmark_events import AUCTION_PROPORTION, PERSON_PROPORTION, SCHEMAS, TOTAL_PROPORTION, Config, NexmarkGenerator

DEFAULT_RATE = 1_000.0
BURST_SECONDS = 2.0  # events owed never build up past this many seconds' worth
#: each table's share of the events (of TOTAL_PROPORTION)
SHARE = {"person": PERSON_PROPORTION, "auction": AUCTION_PROPORTION,
         "bid": TOTAL_PROPORTION - PERSON_PROPORTION - AUCTION_PROPORTION}
#: our column types of each Arrow type the events have
TYPES = {pa.int64(): "bigint", pa.string(): "string", pa.timestamp("us"): "timestamp"}


class NexmarkSource:
    def __init__(self, table: str, config: dict, position: dict):
        self.table = table
        self.rate = float(config.get("rate", DEFAULT_RATE))
        self.events = config.get("events")
        self.generator = NexmarkGenerator(Config(seed=int(config.get("seed", 0))))
        self.next = int((position or {}).get("event", 0))
        self.owed, self.last = 0.0, time.monotonic()
        self.cached: dict = {}

    def position(self) -> dict:
        return {"event": self.next}

    def poll(self, limit: int, decode, schema: Schema):
        now = time.monotonic()
        self.owed = min(self.owed + (now - self.last) * self.rate, max(1.0, self.rate * BURST_SECONDS))
        self.last = now
        count = min(int(self.owed), max(1, limit * TOTAL_PROPORTION // SHARE[self.table]))
        if self.events is not None:
            count = min(count, self.events - self.next)
        if count <= 0:
            return [], self.position()
        lo, hi = self.next, self.next + count
        rows = self.generator.events(lo, hi, self.cached)[self.table]
        if rows.num_rows > limit:  # the events up to the limit-th row of this table
            rows = rows.slice(0, limit)
            hi = int(self.generator.event_numbers(self.table, rows.slice(limit - 1))[0]) + 1
        self.owed -= hi - lo
        # the input's columns, named as it names them (SQL lower-cases `emailAddress`; the editor may not)
        picked = pa.table({c.name: rows.column(c.name.lower()) for c in schema.columns})
        items = [(f"nexmark {self.table} event {lo}..{hi - 1}", [{"insert": _jsonable(r)} for r in picked.to_pylist()])]
        return items, {"event": hi}

    def lag(self, position: dict) -> tuple[int, str] | None:
        """The events still to come when they are limited (`events`); None: no end."""
        return None if self.events is None else (max(0, self.events - position.get("event", 0)), "events")

    def advanced(self, position: dict) -> None:
        self.next = position["event"]

    def close(self) -> None:
        self.cached.clear()


def _jsonable(row: dict) -> dict:
    return {k: v.isoformat(sep=" ") if hasattr(v, "isoformat") else v for k, v in row.items()}


def _table(config: dict, node: str) -> str:
    return config.get("table") or node


def _check(config: dict, schema) -> str | None:
    table = config.get("table")
    if table is not None and table not in SCHEMAS:
        return f"table: one of {', '.join(SCHEMAS)}, got {table!r}"
    if schema is not None:
        fits = [t for t in ([table] if table else SCHEMAS) if _misfit(t, schema) is None]
        if not fits:
            return _misfit(table, schema) if table else "the input's columns are not those of a Nexmark table (person, auction or bid)"
    rate = config.get("rate", DEFAULT_RATE)
    if type(rate) not in (int, float) or not 0 < rate <= 10_000_000:
        return "rate: events per second (of all three tables), a number above 0 (at most 10000000)"
    events = config.get("events")
    if events is not None and (type(events) is not int or events < 0):
        return "events: the number of events in all, an integer (0 or more); leave it out for no end"
    if "seed" in config and type(config["seed"]) is not int:
        return "seed: an integer (the same seed gives the same events)"
    return None


def _misfit(table: str, schema: Schema) -> str | None:
    """Each of the input's columns must be one of the Nexmark table's, of its type."""
    theirs = {f.name: TYPES[f.type] for f in SCHEMAS[table]}
    for column in schema.columns:
        name = column.name.lower()
        if name not in theirs:
            return f"column {column.name!r} is not in Nexmark's {table} (its columns: {', '.join(theirs)})"
        if column.type != theirs[name]:
            return f"column {column.name!r} is {column.type}; Nexmark's {table}.{name} is {theirs[name]}"
    return None


def _open(opening) -> NexmarkSource:
    problem = _check(opening.config, None)
    if problem:
        raise ConfigError(problem)
    table = _table(opening.config, opening.node)
    if table not in SCHEMAS:
        raise ConfigError(f"the input {opening.node!r} is not a Nexmark table: set `table` to one of {', '.join(SCHEMAS)}")
    return NexmarkSource(table, opening.config, opening.position)


KINDS = [
    KindSpec("nexmark_source", True, frozenset({"table", "rate", "events", "seed", "max_batch"}), (), _open,
             doc="Nexmark's auction events (person, auction or bid: the table named like the input, or `table`), "
                 "at `rate` events per second, the same for the same seed", check=_check),
]
