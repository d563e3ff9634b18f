"""MQTT through paho-mqtt (MQTT 5): a source that subscribes at QoS 1 in a persistent
session and acknowledges each message only once its push is committed, and a sink that
publishes each tick's records at QoS 1.

MQTT gives at least once, not exactly once: a message whose push was committed but whose
acknowledgement did not reach the broker (a crash in between) is delivered again, and a
tick the sink published but the database did not record is published again. With a
primary key on the input (an insert replaces the row with its key), a message delivered
twice has the effect of once. docs/connectors.md says so."""
from __future__ import annotations

import queue
import threading
import time

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from . import formats
from .errors import ConfigError, RecordError, Transient
from .kinds import KindSpec

TIMEOUT = 10.0
POLL_WAIT = 0.2  # how long an idle source's poll waits for a first message (seconds)
SESSION_EXPIRY = 7 * 24 * 3600  # how long the broker keeps a source's session (and its messages) while away
RECEIVE_MAXIMUM = 1000  # QoS 1 messages the broker may send before the first acknowledgement
SECRETS = ("username", "password")


class _Client:
    """A paho client with its network thread, connected (CONNACK received) or raising."""

    def __init__(self, config: dict, secrets: dict, client_id: str, persistent: bool, manual_ack: bool,
                 on_message=None, on_subscribe=None):
        for key in ("host", "topic"):
            if not config.get(key):
                raise ConfigError(f"{key} is required")
        unknown = sorted(set(secrets or {}) - set(SECRETS))
        if unknown:
            raise ConfigError(f"unknown secret {unknown[0]!r} (secrets: {', '.join(SECRETS)})")
        self.topic = config["topic"]
        self.connected, self.broken, self.refused = threading.Event(), threading.Event(), None
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5,
                                  manual_ack=manual_ack, reconnect_on_failure=False)
        self.client.max_inflight_messages_set(RECEIVE_MAXIMUM)  # a sink's QoS 1 publishes awaiting their acks
        if secrets:
            self.client.username_pw_set(secrets.get("username"), secrets.get("password"))
        if config.get("tls"):
            self.client.tls_set()
        self.client.on_connect = self._on_connect
        # before connecting: a resumed session's messages come right after the CONNACK
        self.client.on_message, self.client.on_subscribe = on_message, on_subscribe
        self.client.on_disconnect = lambda *_: self.broken.set()
        properties = Properties(PacketTypes.CONNECT)
        properties.SessionExpiryInterval = SESSION_EXPIRY if persistent else 0
        properties.ReceiveMaximum = RECEIVE_MAXIMUM
        try:
            self.client.connect(config["host"], int(config.get("port") or 1883), keepalive=30,
                                clean_start=not persistent, properties=properties)
        except (OSError, ValueError) as e:
            raise Transient(f"MQTT: cannot connect to {config['host']}:{config.get('port') or 1883}: {e}") from None
        self.client.loop_start()
        if not self.connected.wait(TIMEOUT) or self.refused is not None:
            self.close()
            if self.refused is not None and self.refused.value in (0x86, 0x87, 0x85, 0x8C):  # bad login, not authorized, client id
                raise ConfigError(f"MQTT: the broker refused the connection: {self.refused}")
            raise Transient(f"MQTT: no connection to {config['host']}: {self.refused or 'no answer'}")

    def _on_connect(self, client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            self.refused = reason_code
        self.session_present = flags.session_present
        self.connected.set()

    def close(self) -> None:
        try:
            self.client.disconnect()
        finally:
            self.client.loop_stop()


class MqttSource(_Client):
    """Subscribes to `topic` (wildcards allowed) at QoS 1, in a session the broker keeps
    (client id `dbspweb-run<id>-<name>`, clean start off): while the source is away the
    broker queues its messages, and a message not acknowledged is delivered again when it
    reconnects. Messages are acknowledged in `advanced()`, after their push is committed.
    Its position `{"messages": n}` only counts them (the broker's session is the resume point)."""

    def __init__(self, config: dict, secrets: dict, ident: str, position: dict):
        self.messages: queue.Queue = queue.Queue()
        self.format = config.get("format", formats.FORMATS[0])
        self.count = int((position or {}).get("messages", 0))
        self.read, self.unacked = self.count, []
        self.subscribed = threading.Event()
        self.granted = None
        super().__init__(config, secrets, config.get("client_id") or ident, persistent=True, manual_ack=True,
                         on_message=lambda client, userdata, message: self.messages.put(message),
                         on_subscribe=self._on_subscribe)
        if "messages" in (position or {}) and not self.session_present:
            # It subscribed before (its position is stored from then), yet the broker has no
            # session for it: restarted without persistence, or the session expired. What was
            # published meanwhile is gone: say so (a failure, not a retry: the next connect
            # would find the session this one just made, and go on silently with a gap).
            self.close()
            raise ConfigError("MQTT: the broker has no session for this source (restarted without persistence? "
                              "expired?): messages published while it was away may be lost; restart the connector "
                              "to go on from now")
        self.client.subscribe(self.topic, qos=1)
        if not self.subscribed.wait(TIMEOUT):
            self.close()
            raise Transient(f"MQTT: the broker did not answer the subscription to {self.topic!r}")
        if self.granted is None or self.granted.is_failure or self.granted.value != 1:
            self.close()
            raise ConfigError(f"MQTT: the subscription to {self.topic!r} was not granted at QoS 1: {self.granted}")

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties):
        self.granted = reason_codes[0] if reason_codes else None
        self.subscribed.set()

    def position(self) -> dict:
        return {"messages": self.count}

    def poll(self, limit: int, decode, schema):
        """[(position text, records)] and the position after them: the messages the broker
        sent, up to `limit` records (a Debezium update is two: half as many messages)."""
        if self.broken.is_set():
            raise Transient("MQTT: the connection to the broker was lost")
        count = max(1, limit // 2) if self.format == "debezium" else limit
        items = []
        try:
            message = self.messages.get(timeout=POLL_WAIT)
        except queue.Empty:
            return [], self.position()
        while True:
            self.read += 1
            self.unacked.append((self.read, message.mid))
            position = f"{message.topic}#{self.read}"
            items.append((position, decode(position, message.payload)))
            if len(items) >= count:
                break
            try:
                message = self.messages.get_nowait()
            except queue.Empty:
                break
        return items, {"messages": self.read}

    def advanced(self, position: dict) -> None:
        """The push was committed: acknowledge its messages (the broker forgets them)."""
        self.count = position["messages"]
        for number, mid in [u for u in self.unacked if u[0] <= self.count]:
            self.client.ack(mid, 1)
        self.unacked = [u for u in self.unacked if u[0] > self.count]


class MqttSink(_Client):
    """Publishes each tick's records to `topic` at QoS 1 (an `{"insert": row}` or
    `{"delete": row}` once per unit of weight), each with the user properties `sink`
    (`dbspweb-run<id>-<name>`), `tick` and `record` (`<index>/<count>`), and waits for the
    broker's acknowledgement of every one. At least once: see the module's text."""

    def __init__(self, config: dict, secrets: dict, ident: str):
        self.ident = ident
        super().__init__(config, secrets, f"{ident}-sink", persistent=False, manual_ack=False)
        self.committed_tick = -1  # MQTT keeps nothing to read it back from

    def write(self, tick: int, rows: list[tuple[dict, int]]) -> None:
        if self.broken.is_set():
            raise Transient("MQTT: the connection to the broker was lost")
        values = [v for data, weight in rows for v in formats.encode(data, weight)]
        sent = []
        for i, value in enumerate(values):
            properties = Properties(PacketTypes.PUBLISH)
            properties.UserProperty = [("sink", self.ident), ("tick", str(tick)), ("record", f"{i}/{len(values)}")]
            info = self.client.publish(self.topic, value, qos=1, properties=properties)
            if info.rc != mqtt.MQTT_ERR_SUCCESS:
                raise Transient(f"MQTT: publishing failed: {mqtt.error_string(info.rc)}")
            sent.append(info)
        deadline = time.monotonic() + TIMEOUT + len(sent) / 1000
        for info in sent:
            try:
                info.wait_for_publish(max(0.01, deadline - time.monotonic()))
            except (ValueError, RuntimeError) as e:
                raise Transient(f"MQTT: {e}") from None
            if not info.is_published():
                raise Transient("MQTT: the broker did not acknowledge every message of the tick in time"
                                + (" (the connection was lost)" if self.broken.is_set() else ""))


def _check(config: dict, schema) -> str | None:
    port = config.get("port")
    if port is not None and (type(port) is not int or not 0 < port < 65536):
        return "port: an integer from 1 to 65535"
    if config.get("tls") is not None and type(config["tls"]) is not bool:
        return "tls: true or false"
    if config.get("client_id") is not None and (not isinstance(config["client_id"], str) or not config["client_id"]):
        return "client_id: a string"
    return None


KINDS = [
    KindSpec("mqtt_source", True, frozenset({"host", "port", "topic", "tls", "client_id", "format", "columns", "max_batch"}),
             ("host", "topic"), lambda o: MqttSource(o.config, o.secrets, o.ident, o.position),
             formats=formats.FORMATS, doc="subscribes to an MQTT topic at QoS 1 in a persistent session (at least once)",
             check=_check),
    KindSpec("mqtt_sink", False, frozenset({"host", "port", "topic", "tls"}), ("host", "topic"),
             lambda o: MqttSink(o.config, o.secrets, o.ident),
             doc="publishes each tick's delta to an MQTT topic at QoS 1 (at least once)", check=_check),
]
