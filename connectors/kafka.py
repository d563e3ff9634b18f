"""Kafka through confluent-kafka (librdkafka): a source that reads a topic from the
position stored with the run (resuming exactly where the last committed push ended),
and a sink that writes each tick's delta in one Kafka transaction."""
from __future__ import annotations

from collections.abc import Sequence

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from . import formats
from .errors import ConfigError, Transient
from .kinds import KindSpec, Opening

START = ("earliest", "latest", "stored")
TIMEOUT = 10.0


def client_config(config: dict, secrets: dict) -> dict:
    if not config.get("bootstrap_servers"):
        raise ConfigError("bootstrap_servers is required")
    return {**(config.get("options") or {}), **(secrets or {}), "bootstrap.servers": config["bootstrap_servers"]}


class Positions(Sequence):
    """The positions of a poll's messages, `topic[partition]@offset`, written out only
    when one is asked for (an error naming its record)."""

    def __init__(self, topic: str, partitions: list[int], offsets: list[int]):
        self.topic, self.partitions, self.offsets = topic, partitions, offsets

    def __len__(self) -> int:
        return len(self.offsets)

    def __getitem__(self, i: int) -> str:
        return f"{self.topic}[{self.partitions[i]}]@{self.offsets[i]}"


class KafkaSource:
    """Reads messages from every partition of one topic. Its position is
    `{"offsets": {"<partition>": <next offset>}}`, stored with each push."""

    def __init__(self, config: dict, secrets: dict, group_id: str, position: dict):
        self.format = config.get("format", formats.FORMATS[0])
        self.columns = config.get("columns")
        self.topic = config.get("topic")
        if not self.topic:
            raise ConfigError("topic is required")
        start = config.get("start", "earliest")
        if start not in START:
            raise ConfigError(f"start must be one of {', '.join(START)}; got {start!r}")
        self.consumer = Consumer({
            **client_config(config, secrets), "group.id": config.get("group_id") or group_id,
            # never jump silently: an offset the topic no longer holds (retention deleted records
            # before they were read) is an error the connector reports, not a skip
            "enable.auto.commit": False, "enable.auto.offset.store": False, "auto.offset.reset": "error",
            "isolation.level": "read_committed",
        })
        try:
            self.offsets = self._assign(start, dict((position or {}).get("offsets") or {}))
        except KafkaException as e:
            self.close()
            raise Transient(f"Kafka: {e.args[0].str() if e.args else e}") from None
        except BaseException:  # a topic not there yet (Transient), ...: the consumer must not outlive this
            self.close()
            raise

    def _assign(self, start: str, offsets: dict) -> dict:
        meta = self.consumer.list_topics(self.topic, timeout=TIMEOUT).topics.get(self.topic)
        if meta is None or meta.error is not None or not meta.partitions:
            raise Transient(f"Kafka topic {self.topic!r} is not there (yet): {meta.error if meta else 'no metadata'}")
        parts = sorted(meta.partitions)
        missing = [p for p in parts if str(p) not in offsets]
        committed = {}
        if missing and start == "stored":
            committed = {tp.partition: tp.offset for tp in self.consumer.committed(
                [TopicPartition(self.topic, p) for p in missing], timeout=TIMEOUT)}
        for p in missing:
            low, high = self.consumer.get_watermark_offsets(TopicPartition(self.topic, p), timeout=TIMEOUT)
            offsets[str(p)] = {"earliest": low, "latest": high}.get(start, committed.get(p, -1) if committed.get(p, -1) >= 0 else low)
        self.consumer.assign([TopicPartition(self.topic, p, int(offsets[str(p)])) for p in parts])
        return offsets

    def position(self) -> dict:
        return {"offsets": dict(self.offsets)}

    def poll(self, limit: int, decode, schema):
        """The records past the position and the position after them (not yet this source's
        own). A poll's messages are decoded at once when each is plainly one record of the
        format (formats.decode_many): a `formats.Batch`; otherwise message by message,
        `[(position text, records)]`, which names a bad message. A Debezium update is two
        records: half as many messages are read then."""
        payloads, positions, after = self.poll_raw(max(1, limit // 2) if self.format == "debezium" else limit)
        if payloads and self.format != "debezium":
            records = formats.decode_many(self.format, payloads, schema, self.columns)
            if records is not None:
                return formats.Batch(records, positions), after
        return [(position, decode(position, value)) for position, value in zip(positions, payloads)], after

    def poll_raw(self, max_messages: int):
        """(value bytes, their positions `topic[partition]@offset`, the position after
        them: not yet this source's own)."""
        try:
            messages = self.consumer.consume(num_messages=max_messages, timeout=0.2)
        except KafkaException as e:
            raise Transient(f"Kafka: {e}") from None
        if any(m.error() is not None for m in messages):
            messages = [m for m in messages if not self._skipped(m.error())]
        partitions, offsets = [m.partition() for m in messages], [m.offset() for m in messages]
        after = dict(self.offsets)
        after.update((str(p), o + 1) for p, o in dict(zip(partitions, offsets)).items())  # each partition's last
        return [m.value() for m in messages], Positions(self.topic, partitions, offsets), {"offsets": after}

    @staticmethod
    def _skipped(error) -> bool:
        """True for a message that is no record (the end of a partition); raises for an error."""
        if error is None:
            return False
        if error.code() == KafkaError._PARTITION_EOF:
            return True
        if error.code() == KafkaError._AUTO_OFFSET_RESET:
            raise ConfigError(f"records were lost before they were read (retention?): {error.str()}; "
                              f"declare the connector again to start over")
        raise Transient(f"Kafka: {error.str()}")

    def drained(self) -> bool:
        """Every partition read to its end (the high watermark, or past it when a transaction's
        commit marker holds the last offset): what the command line's --until-idle asks."""
        try:
            for p, offset in self.offsets.items():
                tp = TopicPartition(self.topic, int(p))
                _, high = self.consumer.get_watermark_offsets(tp, timeout=TIMEOUT, cached=False)
                if int(offset) < high and max(int(offset), self.consumer.position([tp])[0].offset) < high:
                    return False
        except KafkaException:
            return False
        return True

    def lag(self, position: dict) -> tuple[int, str] | None:
        """Records after `position`: each partition's high watermark (as the last fetch
        told, no request) minus its next offset, summed; None until every partition's is
        known. With transactions, their commit markers count as records too."""
        behind = 0
        for partition, offset in (position.get("offsets") or {}).items():
            _, high = self.consumer.get_watermark_offsets(TopicPartition(self.topic, int(partition)), cached=True)
            if high is None or high < 0:
                return None
            behind += max(0, high - int(offset))
        return behind, "records"

    def advanced(self, position: dict) -> None:
        """The position was committed with its push: remember it, and tell the consumer
        group (best effort, for tools that watch the group and for start=stored)."""
        self.offsets = dict(position["offsets"])
        try:
            self.consumer.commit(offsets=[TopicPartition(self.topic, int(p), int(o)) for p, o in self.offsets.items()],
                                 asynchronous=True)
        except KafkaException:
            pass

    def close(self) -> None:
        try:
            self.consumer.close()
        except (KafkaException, RuntimeError):
            pass


class KafkaSink:
    """Writes each tick's records to partition 0 of a topic (one partition keeps the
    ticks in order), in one transaction per tick, every message with headers `run` and
    `tick`. Its transactional.id is derived from the run and the sink, so a new writer
    (after a crash or a takeover) fences the old one and aborts its open transaction."""

    def __init__(self, config: dict, secrets: dict, transactional_id: str, run_id: int):
        self.topic = config.get("topic")
        if not self.topic:
            raise ConfigError("topic is required")
        self.run_id = str(run_id).encode()
        base = client_config(config, secrets)
        self.producer = Producer({**base, "transactional.id": transactional_id, "enable.idempotence": True,
                                  "linger.ms": 5})
        try:
            self.producer.init_transactions(TIMEOUT)
            self.committed_tick = self._last_committed_tick(base)
        except KafkaException as e:
            raise Transient(f"Kafka: {e}") from None

    def _last_committed_tick(self, base: dict) -> int:
        """The highest tick in the topic's committed messages of this run (-1 if none):
        ticks up to it were written, even if the database did not record it before a crash."""
        consumer = Consumer({**base, "group.id": "dbspweb-sink-recovery", "enable.auto.commit": False,
                             "isolation.level": "read_committed"})
        try:
            meta = consumer.list_topics(self.topic, timeout=TIMEOUT).topics.get(self.topic)
            if meta is None or meta.error is not None or 0 not in meta.partitions:
                return -1
            low, high = consumer.get_watermark_offsets(TopicPartition(self.topic, 0), timeout=TIMEOUT)
            best, start = -1, max(low, high - 1000)
            while True:
                best = max(best, self._max_tick(consumer, start, high))
                if best >= 0 or start == low:
                    return best
                start = low
        finally:
            consumer.close()

    def _max_tick(self, consumer, start: int, high: int) -> int:
        consumer.assign([TopicPartition(self.topic, 0, start)])
        best = -1
        while (m := consumer.poll(1.0)) is not None:  # None: the end of what is committed
            if m.error():
                continue
            headers = dict(m.headers() or [])
            if headers.get("run") == self.run_id and headers.get("tick"):
                best = max(best, int(headers["tick"]))
            if m.offset() >= high - 2:  # the last record before the last commit marker
                break
        return best

    def write(self, tick: int, rows: list[tuple[dict, int]]) -> None:
        values = [v for data, weight in rows for v in formats.encode(data, weight)]
        headers = [("run", self.run_id), ("tick", str(tick).encode())]
        try:
            self.producer.begin_transaction()
            for i, value in enumerate(values):
                self.producer.produce(self.topic, value, partition=0, headers=headers)
                if i % 10000 == 9999:
                    self.producer.poll(0)
            self.producer.commit_transaction(TIMEOUT * 3)
        except (KafkaException, BufferError) as e:
            try:
                self.producer.abort_transaction(TIMEOUT)
            except KafkaException:
                pass
            raise Transient(f"Kafka: {e}") from None

    def close(self) -> None:
        self.producer.flush(1)



KINDS = [
    KindSpec("kafka_source", True,
             frozenset({"bootstrap_servers", "topic", "format", "columns", "group_id", "start", "options", "max_batch"}),
             ("bootstrap_servers", "topic"),
             lambda o: KafkaSource(o.config, o.secrets, o.ident, o.position),
             formats=formats.FORMATS, doc="reads every partition of a topic",
             check=lambda config, schema: (f"start must be one of {', '.join(START)}"
                                           if config.get("start") is not None and config["start"] not in START else None)),
    KindSpec("kafka_sink", False, frozenset({"bootstrap_servers", "topic", "options"}), ("bootstrap_servers", "topic"),
             lambda o: KafkaSink(o.config, o.secrets, o.ident, o.run_id),
             doc="writes each tick's delta in one Kafka transaction"),
]
