"""A real Kafka wire-protocol cluster for tests: librdkafka's mock cluster, started by a
confluent-kafka client with `test.mock.num.brokers` in the test process. Other clients
(in this process or a worker's) reach it at its bootstrap address like any Kafka:
producers, transactions, consumer groups and offset commits are the real protocol."""
from __future__ import annotations

import json
import logging
import re
import time

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


class MockKafka:
    def __init__(self, brokers: int = 1):
        lines = _Lines()
        logger = logging.getLogger(f"tests.kafka.{id(lines)}")
        logger.addHandler(lines)
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
        # The cluster lives as long as this client does.
        self._owner = Producer({"test.mock.num.brokers": brokers, "logger": logger, "debug": "mock"})
        deadline = time.monotonic() + 30
        while not (found := next((m for line in lines.lines if (m := re.search(r"bootstrap\.servers=(\S+)", line))), None)):
            assert time.monotonic() < deadline, "the mock Kafka cluster did not say its address"
            self._owner.poll(0.05)
        self.bootstrap = found.group(1)
        self.producer = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 1})

    def produce(self, topic: str, values, partition: int | None = None) -> None:
        for value in values:
            data = value if isinstance(value, bytes) else (value.encode() if isinstance(value, str) else json.dumps(value).encode())
            if partition is None:
                self.producer.produce(topic, data)
            else:
                self.producer.produce(topic, data, partition=partition)
        assert self.producer.flush(30) == 0

    def read_committed(self, topic: str, partition: int = 0, timeout: float = 5.0) -> list:
        """Every committed message of a topic partition: (tick header, value)."""
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": f"reader-{time.monotonic_ns()}",
                             "enable.auto.commit": False, "isolation.level": "read_committed", "enable.partition.eof": True})
        try:
            consumer.assign([TopicPartition(topic, partition, 0)])
            out = []
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                m = consumer.poll(0.5)
                if m is None:
                    continue
                if m.error():
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        return out
                    if m.error().code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                        return out
                    continue
                headers = dict(m.headers() or [])
                out.append((int(headers["tick"]) if "tick" in headers else None, m.value()))
            return out
        finally:
            consumer.close()
