"""Redis Streams through redis-py: a source that reads a stream from the entry id stored
with the run (XRANGE after it: no consumer group, the run's database holds the
position), and a sink that appends each tick's records in one Lua script that also
records the tick, so a tick is written whole or not at all, and once."""
from __future__ import annotations

import time

import redis

from . import formats
from .errors import ConfigError, RecordError, Rejected, Transient
from .kinds import KindSpec

START = ("earliest", "latest")
TIMEOUT = 10.0
#: the sink's script: KEYS = (stream, tick key); ARGV = (tick, value, value, ...). A tick at
#: or below the recorded one was written: nothing is added (a retried tick is skipped).
#: Redis runs a script whole, with nothing between its commands.
_WRITE_TICK = """
local done = redis.call('GET', KEYS[2])
if done and tonumber(done) >= tonumber(ARGV[1]) then return 0 end
for i = 2, #ARGV do redis.call('XADD', KEYS[1], '*', 'tick', ARGV[1], 'value', ARGV[i]) end
redis.call('SET', KEYS[2], ARGV[1])
return #ARGV - 1
"""


def _client(config: dict, secrets: dict) -> redis.Redis:
    if not config.get("url"):
        raise ConfigError("url is required")
    extra = {k: v for k, v in (secrets or {}).items() if k in ("username", "password")}
    unknown = sorted(set(secrets or {}) - {"username", "password"})
    if unknown:
        raise ConfigError(f"unknown secret {unknown[0]!r} (secrets: username, password)")
    try:
        return redis.Redis.from_url(config["url"], socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT, **extra)
    except ValueError as e:
        raise ConfigError(f"url: {e}") from None


def _stream(config: dict) -> str:
    if not config.get("stream"):
        raise ConfigError("stream is required")
    return config["stream"]


def _id_key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


class RedisSource:
    """Reads the entries of one stream in id order. Its position is `{"after": "<entry
    id>"}` (every entry up to it is pushed), stored with each push; one field of each
    entry (`field`, default `value`) holds the record in the connector's format."""

    def __init__(self, config: dict, secrets: dict, position: dict):
        self.stream, self.field = _stream(config), config.get("field") or "value"
        self.format = config.get("format", formats.FORMATS[0])
        start = config.get("start", "earliest")
        if start not in START:
            raise ConfigError(f"start must be one of {', '.join(START)}; got {start!r}")
        self.redis = _client(config, secrets)
        self.read_since, self.end_seen, self._info = 0, None, None  # for `lag`
        self.after = (position or {}).get("after")
        if self.after is None:
            self.after = self._last_id() if start == "latest" else "0-0"
        self.from_start = self.after == "0-0"

    def _last_id(self) -> str:
        try:
            last = self.redis.xrevrange(self.stream, count=1)
        except redis.RedisError as e:
            raise Transient(f"Redis: {e}") from None
        return last[0][0].decode() if last else "0-0"

    def position(self) -> dict:
        return {"after": self.after}

    def poll(self, limit: int, decode, schema):
        """[(position text, records)] and the position after them (not yet this source's own).
        A Debezium update is two records: half as many entries are read then."""
        count = max(1, limit // 2) if self.format == "debezium" else limit
        try:
            entries = self.redis.xrange(self.stream, min=f"({self.after}", max="+", count=count)
        except redis.ResponseError as e:
            if str(e).startswith("WRONGTYPE"):
                raise ConfigError(f"Redis: {e} (is {self.stream!r} a stream?)") from None
            raise Transient(f"Redis: {e}") from None
        except redis.RedisError as e:
            raise Transient(f"Redis: {e}") from None
        items, after = [], self.after
        for entry_id, fields in entries:
            after = entry_id.decode()
            position = f"{self.stream}@{after}"
            value = fields.get(self.field.encode())
            if value is None:  # the connector fails on it, or it is a dead letter (on_error)
                items.append((position, Rejected(RecordError(
                    "", position, f"the entry has no field {self.field!r} "
                                  f"(fields: {', '.join(sorted(f.decode(errors='replace') for f in fields))})"),
                    {k.decode(errors="replace"): v.decode(errors="replace") for k, v in fields.items()})))
                continue
            items.append((position, decode(position, value)))
        self.read_since += len(entries)
        return items, {"after": after}

    def lag(self, position: dict) -> tuple[int, str] | None:
        """Entries after `position`: 0 at the stream's end; read from the stream's start, its
        length less the entries read; else counted from `entries-added` (XINFO STREAM, read at
        most once a second) once this client has seen the end (Redis does not count the
        entries after an id); else None. Entries deleted meanwhile (XDEL, trimming) skew it."""
        now = time.monotonic()
        if self._info is None or now - self._info[0] >= 1.0:
            try:
                self._info = (now, self.redis.xinfo_stream(self.stream))
            except redis.RedisError:
                return None
        info = self._info[1]
        last, added = _id_text(info.get("last-generated-id")), info.get("entries-added")
        after = position.get("after") or "0-0"
        if after == last:
            self.end_seen = (added, self.read_since)
            return 0, "records"
        if after == "0-0":
            return int(info.get("length") or 0), "records"
        if self.end_seen is None and self.from_start:  # read from the start: what it holds less what was read
            return max(0, int(info.get("length") or 0) - self.read_since), "records"
        if self.end_seen is None or added is None:
            return None
        seen_added, seen_read = self.end_seen
        return max(0, added - seen_added - (self.read_since - seen_read)), "records"

    def advanced(self, position: dict) -> None:
        self.after = position["after"]

    def close(self) -> None:
        self.redis.close()


def _id_text(value) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


class RedisSink:
    """Appends each tick's records to a stream (XADD, fields `tick` and `value`: an
    `{"insert": row}` or `{"delete": row}`, once per unit of weight), in one script that
    also sets `<stream>:dbspweb-tick:<run>-<name>` to the tick: `committed_tick` reads it,
    and a tick at or below it is not written again."""

    def __init__(self, config: dict, secrets: dict, run_id: int, name: str):
        self.stream = _stream(config)
        self.tick_key = f"{self.stream}:dbspweb-tick:{run_id}-{name}"
        self.redis = _client(config, secrets)
        self.script = self.redis.register_script(_WRITE_TICK)
        try:
            done = self.redis.get(self.tick_key)
        except redis.RedisError as e:
            raise Transient(f"Redis: {e}") from None
        self.committed_tick = int(done) if done is not None else -1

    def write(self, tick: int, rows: list[tuple[dict, int]]) -> None:
        values = [v for data, weight in rows for v in formats.encode(data, weight)]
        try:
            self.script(keys=[self.stream, self.tick_key], args=[tick, *values])
        except redis.ResponseError as e:
            if str(e).startswith("WRONGTYPE"):
                raise ConfigError(f"Redis: {e} (is {self.stream!r} a stream?)") from None
            raise Transient(f"Redis: {e}") from None  # e.g. OOM: the script wrote nothing
        except redis.RedisError as e:
            raise Transient(f"Redis: {e}") from None
        self.committed_tick = max(self.committed_tick, tick)

    def close(self) -> None:
        self.redis.close()


def _check_source(config: dict, schema) -> str | None:
    if config.get("start") is not None and config["start"] not in START:
        return f"start must be one of {', '.join(START)}"
    if config.get("field") is not None and (not isinstance(config["field"], str) or not config["field"]):
        return "field: the name of the entry's field that holds the record (a string)"
    return None


KINDS = [
    KindSpec("redis_source", True, frozenset({"url", "stream", "field", "format", "columns", "start", "max_batch"}),
             ("url", "stream"), lambda o: RedisSource(o.config, o.secrets, o.position),
             formats=formats.FORMATS, doc="reads a Redis stream from the entry after the stored id",
             check=_check_source),
    KindSpec("redis_sink", False, frozenset({"url", "stream"}), ("url", "stream"),
             lambda o: RedisSink(o.config, o.secrets, o.run_id, o.name),
             doc="appends each tick's delta to a Redis stream, the tick recorded in the same script"),
]
