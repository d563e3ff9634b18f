"""What a tick may store: its output deltas as JSON, finite, and bounded in size.

The engine fails a tick whose computation leaves the numeric range, naming the node
(dbsp/numeric.py). This is the line behind it, at the one place every tick's output
passes before it is committed: a value JSON cannot hold (NaN, ±Infinity) would make
the commit fail (SQLite's JSON_VALID check, PostgreSQL's jsonb) on every retry, and an
output of hundreds of megabytes would fill the database and every watcher's socket.
Both fail the tick with an error naming the view.
"""
from __future__ import annotations

import json

import orjson
from django.conf import settings

from runs.models import Encoded


class OutputRefused(ValueError):
    """A tick's output cannot be stored; `node` is the view it names."""

    def __init__(self, node: str, message: str):
        super().__init__(f"node '{node}' (output): {message}")
        self.node = node


def check(deltas: dict[str, list[dict]]) -> int:
    """Raise OutputRefused unless every view's rows are finite JSON and all together fit
    in DBSPWEB_TICK_MAX_OUTPUT_BYTES; returns the size in bytes."""
    return len(encode(deltas).text.encode())


def encode(deltas: dict[str, list[dict]]) -> Encoded:
    """`check`, keeping the JSON text it makes: the tick's stored deltas (one encoding per tick)."""
    limit, total, sizes, texts = settings.TICK_MAX_OUTPUT_BYTES, 0, {}, []
    for view, rows in deltas.items():
        try:
            text = _json(rows)
            sizes[view] = len(text.encode())
            texts.append(f"{json.dumps(view)}:{text}")
        except ValueError:
            raise OutputRefused(view, "a value is not a finite number (NaN or ±Infinity), which JSON cannot hold; "
                                      "the tick is not stored") from None
        total += sizes[view]
        if total > limit:
            biggest = max(sizes, key=sizes.get)
            raise OutputRefused(biggest, f"this tick's output is over {limit:,} bytes of JSON (DBSPWEB_TICK_MAX_OUTPUT_BYTES; "
                                         f"'{biggest}' alone is {sizes[biggest]:,} bytes); the tick is not stored")
    return Encoded(deltas, "{" + ",".join(texts) + "}")


def _json(rows: list[dict]) -> str:
    """The rows as compact JSON; ValueError for a value that is not a finite number.
    orjson (10x the standard library's speed) writes NaN and ±Infinity as `null`, so
    text holding a `null` anywhere is made again by the standard library, which refuses
    them; so is anything orjson cannot write (an integer beyond 64 bits)."""
    try:
        text = orjson.dumps(rows)
    except TypeError:
        text = None
    if text is None or b"null" in text:
        return json.dumps(rows, allow_nan=False, separators=(",", ":"))
    return text.decode()
