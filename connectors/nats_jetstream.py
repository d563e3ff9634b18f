"""NATS JetStream through nats-py: a source that reads a stream from the sequence stored
with the run (a pull consumer of its own starting after it, acknowledged once the push
is committed), and a sink that publishes each record with a `Nats-Msg-Id` made of the
run, the sink, the tick and the record's index (JetStream drops a repeat within the
stream's duplicate window) and reads its last written tick back from the stream.

nats-py is asyncio; the pump is a thread. Each client owns a private event loop and runs
each call to completion on it (`_Loop`); the loop is closed with the client."""
from __future__ import annotations

import asyncio
import secrets as random_tokens
import time

import nats
import nats.errors
import nats.js.errors
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from . import formats
from .errors import ConfigError, RecordError, Rejected, Transient
from .kinds import KindSpec

START = ("earliest", "latest")
TIMEOUT = 10.0
POLL_WAIT = 0.2  # how long an idle source's poll waits for a first message (seconds)
#: an idle source asks at most this often (seconds) whether its consumer is still there: the
#: server drops it after `inactive_threshold` without pulls (a run paused that long), and a
#: pull from a consumer that is gone just finds nothing
CHECK_EVERY = 5.0
SECRETS = ("user", "password", "token")
#: headers the sink writes on every message, to find its last tick in the stream
SINK, TICK, RECORD = "Dbspweb-Sink", "Dbspweb-Tick", "Dbspweb-Record"
_ERRORS = (nats.errors.Error, asyncio.TimeoutError, OSError)


class _Loop:
    """A private asyncio loop: `run(coroutine)` runs it to completion, with a timeout."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()

    def run(self, coroutine, timeout: float = TIMEOUT):
        return self.loop.run_until_complete(asyncio.wait_for(coroutine, timeout))

    def close(self) -> None:
        if self.loop.is_closed():
            return
        pending = asyncio.all_tasks(self.loop)
        for task in pending:
            task.cancel()
        if pending:
            self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()


def _problem(e: BaseException) -> str:
    return f"NATS: {e.__class__.__name__}{': ' + str(e) if str(e) else ''}"


class _Client:
    """A connection to NATS on a private loop (the base of the source and the sink)."""

    def __init__(self, config: dict, secrets: dict):
        if not config.get("servers"):
            raise ConfigError("servers is required")
        unknown = sorted(set(secrets or {}) - set(SECRETS))
        if unknown:
            raise ConfigError(f"unknown secret {unknown[0]!r} (secrets: {', '.join(SECRETS)})")
        self.loop = _Loop()
        self.nc = None

        async def quiet(_error):  # errors reach the pump as exceptions of the calls
            pass

        try:
            self.nc = self.loop.run(nats.connect(
                servers=[s.strip() for s in config["servers"].split(",")], connect_timeout=5, allow_reconnect=True,
                max_reconnect_attempts=2, reconnect_time_wait=0.5, error_cb=quiet, **(secrets or {})))
        except _ERRORS as e:
            self.close()
            raise Transient(_problem(e)) from None
        self.js, self.jsm = self.nc.jetstream(timeout=TIMEOUT), self.nc.jsm(timeout=TIMEOUT)

    def close(self) -> None:
        try:
            if self.nc is not None and not self.nc.is_closed:
                self.loop.run(self.nc.close())
        except _ERRORS:
            pass
        finally:
            self.loop.close()


class NatsSource(_Client):
    """Reads one JetStream stream (or the messages of `subject` in it) in sequence
    order. Its position is `{"stream_seq": n}`: every message up to sequence n is pushed.
    It reads through a pull consumer of its own, made at open to start after the stored
    sequence (acknowledgement: all up to a message), and acknowledges a batch once its
    push is committed (so a work-queue or interest stream keeps it until then)."""

    def __init__(self, config: dict, secrets: dict, ident: str, position: dict):
        if not config.get("stream"):
            raise ConfigError("stream is required")
        start = config.get("start", "earliest")
        if start not in START:
            raise ConfigError(f"start must be one of {', '.join(START)}; got {start!r}")
        self.stream, self.subject = config["stream"], config.get("subject")
        self.format = config.get("format", formats.FORMATS[0])
        self.sub, self.consumer, self.unacked = None, f"{ident}-{random_tokens.token_hex(4)}", []
        self.pending: int | None = None  # messages after the last one read, as the server last said (`lag`)
        super().__init__(config, secrets)
        try:
            info = self.loop.run(self.jsm.stream_info(self.stream))
            self.after = (position or {}).get("stream_seq")
            if self.after is None:
                self.after = info.state.last_seq if start == "latest" else 0
            elif not self.subject and info.state.messages and info.state.first_seq > self.after + 1:
                raise ConfigError(f"messages {self.after + 1} to {info.state.first_seq - 1} of stream {self.stream!r} "
                                  f"were removed before they were read (limits?); declare the connector again to start over")
            self.read, self.checked_at = self.after, time.monotonic()
            consumer = ConsumerConfig(
                name=self.consumer, deliver_policy=DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=self.after + 1,
                ack_policy=AckPolicy.ALL, ack_wait=300, max_ack_pending=-1, inactive_threshold=120,
                filter_subject=self.subject or None)
            self.loop.run(self.jsm.add_consumer(self.stream, config=consumer))
            self.sub = self.loop.run(self.js.pull_subscribe_bind(consumer=self.consumer, stream=self.stream))
        except nats.js.errors.NotFoundError:
            self.close()
            raise Transient(f"NATS: JetStream stream {self.stream!r} is not there (yet)") from None
        except nats.js.errors.BadRequestError as e:
            self.close()
            raise ConfigError(_problem(e)) from None
        except _ERRORS as e:
            self.close()
            raise Transient(_problem(e)) from None
        except ConfigError:
            self.close()
            raise

    def position(self) -> dict:
        return {"stream_seq": self.after}

    def poll(self, limit: int, decode, schema):
        """[(position text, records)] and the position after them (not yet this source's own).
        A Debezium update is two records: half as many messages are read then."""
        count = max(1, limit // 2) if self.format == "debezium" else limit
        try:
            messages = self.loop.run(self.sub.fetch(batch=count, timeout=POLL_WAIT))
        except nats.errors.TimeoutError:
            messages = []
        except _ERRORS as e:
            raise Transient(_problem(e)) from None
        if not messages and time.monotonic() - self.checked_at >= CHECK_EVERY:
            self._check_consumer()
        items = []
        for message in messages:
            seq = message.metadata.sequence.stream
            if seq <= self.read:
                continue  # a redelivery (its acknowledgement was late) of what this client read
            self.read = seq
            self.unacked.append(message)
            position = f"{self.stream}#{seq}"
            self.pending = message.metadata.num_pending
            if message.data is None or message.data == b"":  # the connector fails on it, or a dead letter (on_error)
                items.append((position, Rejected(RecordError("", position, "an empty message (no value)"), b"")))
                continue
            items.append((position, decode(position, message.data)))
        if not messages:
            self.pending = 0  # a fetch that waited and got nothing: none pending
        return items, {"stream_seq": self.read}

    def lag(self, position: dict) -> tuple[int, str] | None:
        """Messages of its subject after the last one read, as the server said with it
        (num_pending), 0 after a fetch that got none; before any, the consumer's pending count."""
        if position.get("stream_seq") != self.read:
            return None
        if self.pending is None:
            try:
                self.pending = self.loop.run(self.sub.consumer_info()).num_pending
            except _ERRORS:
                return None
        return int(self.pending), "records"

    def _check_consumer(self) -> None:
        self.checked_at = time.monotonic()
        try:
            self.loop.run(self.sub.consumer_info())
        except nats.js.errors.NotFoundError:
            raise Transient(f"NATS: the source's consumer {self.consumer!r} is gone (idle too long?): "
                            f"opening a new one from the stored sequence") from None
        except _ERRORS as e:
            raise Transient(_problem(e)) from None

    def advanced(self, position: dict) -> None:
        """The position was committed with its push: acknowledge up to it (best effort:
        the run resumes from its database, not from the consumer)."""
        self.after = position["stream_seq"]
        done = [m for m in self.unacked if m.metadata.sequence.stream <= self.after]
        self.unacked = [m for m in self.unacked if m.metadata.sequence.stream > self.after]
        if done:
            try:
                self.loop.run(done[-1].ack())  # AckPolicy.ALL: every message up to it
                self.loop.run(self.nc.flush(TIMEOUT))
            except _ERRORS:
                pass

    def close(self) -> None:
        try:
            if self.sub is not None and self.nc is not None and self.nc.is_connected:
                self.loop.run(self.sub.unsubscribe())
                self.loop.run(self.jsm.delete_consumer(self.stream, self.consumer))
        except _ERRORS:
            pass  # an ephemeral consumer goes away by itself after inactive_threshold
        finally:
            super().close()


class NatsSink(_Client):
    """Publishes each tick's records to `subject` (an `{"insert": row}` or `{"delete":
    row}` once per unit of weight), each with `Nats-Msg-Id` `<run>-<sink>-<tick>-<index>`
    and headers naming the sink, the tick and `<index>/<count>`. The last record of a tick
    is published after the others are acknowledged: the subject's last message is this
    sink's tick end only once the whole tick is stored. `committed_tick` is read from it."""

    def __init__(self, config: dict, secrets: dict, ident: str):
        if not config.get("subject"):
            raise ConfigError("subject is required")
        self.subject, self.ident = config["subject"], ident
        super().__init__(config, secrets)
        try:
            self.stream = config.get("stream") or self.loop.run(self.jsm.find_stream_name_by_subject(self.subject))
            self.committed_tick = self._last_tick()
        except nats.js.errors.NotFoundError:
            self.close()
            raise Transient(f"NATS: no JetStream stream stores subject {self.subject!r} (yet)") from None
        except _ERRORS as e:
            self.close()
            raise Transient(_problem(e)) from None

    def _last_tick(self) -> int:
        """The last tick the subject holds whole from this sink (-1 if its last message is
        not this sink's: then the database's last tick and the duplicate window guard)."""
        try:
            last = self.loop.run(self.jsm.get_last_msg(self.stream, self.subject))
        except nats.js.errors.NotFoundError:
            return -1
        headers = last.headers or {}
        if headers.get(SINK) != self.ident or TICK not in headers:
            return -1
        tick = int(headers[TICK])
        index, _, count = headers.get(RECORD, "0/1").partition("/")
        return tick if int(index) == int(count) - 1 else tick - 1

    def write(self, tick: int, rows: list[tuple[dict, int]]) -> None:
        values = [v for data, weight in rows for v in formats.encode(data, weight)]
        count = len(values)

        def headers(i: int) -> dict:
            return {"Nats-Msg-Id": f"{self.ident}-{tick}-{i}", SINK: self.ident, TICK: str(tick), RECORD: f"{i}/{count}"}

        async def publish():
            acks = [await self.js.publish_async(self.subject, v, headers=headers(i), stream=self.stream, wait_stall=TIMEOUT)
                    for i, v in enumerate(values[:-1])]
            await asyncio.gather(*acks)
            await self.js.publish(self.subject, values[-1], headers=headers(count - 1), stream=self.stream)

        try:
            self.loop.run(publish(), timeout=TIMEOUT + count / 1000)
        except nats.js.errors.BadRequestError as e:
            raise ConfigError(_problem(e)) from None
        except _ERRORS as e:
            raise Transient(_problem(e)) from None


def _check_source(config: dict, schema) -> str | None:
    if config.get("start") is not None and config["start"] not in START:
        return f"start must be one of {', '.join(START)}"
    return None


KINDS = [
    KindSpec("nats_source", True, frozenset({"servers", "stream", "subject", "format", "columns", "start", "max_batch"}),
             ("servers", "stream"), lambda o: NatsSource(o.config, o.secrets, o.ident, o.position),
             formats=formats.FORMATS, doc="reads a JetStream stream from the message after the stored sequence",
             check=_check_source),
    KindSpec("nats_sink", False, frozenset({"servers", "subject", "stream"}), ("servers", "subject"),
             lambda o: NatsSink(o.config, o.secrets, o.ident),
             doc="publishes each tick's delta to a JetStream subject, deduplicated by message id"),
]
