"""What the crash and broker-restart tests (tests/live/test_resilience_live.py) share: a
run's wait until its sources and sinks have caught up, the reference evaluator's views
of all the records a run was given, receivers of a test's own (an HTTP server that may be
stopped and started again on its port; an MQTT subscriber in a session the broker keeps)."""
from __future__ import annotations

import json
import queue
import threading
import uuid
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from connectors.models import Connector
from dbsp import compile_plan
from dbsp.reference import recompute
from dbsp.zset import ZSet
from runs.models import Run, TickOutput


def reference_views(run_id: int, records_by_input: dict[str, list[dict]]) -> dict[str, Counter]:
    """The reference evaluator over every record each input was given, at once (an oracle
    sharing no code with the workers' Spark ticks or the pump): view -> Counter(row json: weight)."""
    plan = compile_plan(Run.objects.get(pk=run_id).version.document)
    tables = {}
    for name, records in records_by_input.items():
        names = plan.inputs[name].names
        tables[name] = ZSet((tuple(r[k][n] for n in names), 1 if k == "insert" else -1) for r in records for k in r)
    expected = recompute(plan, tables)
    out = {}
    for view, spec in plan.views.items():
        cols = spec.names
        out[view] = Counter({json.dumps(dict(zip(cols, row)), sort_keys=True): w for row, w in expected[view]})
    return out


def tick_deltas(run_id: int, view: str) -> dict[int, Counter]:
    """Each tick's stored delta of a view (ticks that changed it): tick -> Counter(row json: weight)."""
    return {t.tick: Counter({json.dumps(r["data"], sort_keys=True): r["weight"] for r in t.deltas[view]})
            for t in TickOutput.objects.filter(run_id=run_id) if (t.deltas or {}).get(view)}


def records_delta(texts) -> Counter:
    """`{"insert": row}` / `{"delete": row}` sink records as a Z-set: Counter(row json: weight)."""
    out = Counter()
    for text in texts:
        [(key, row)] = (json.loads(text) if isinstance(text, (str, bytes)) else text).items()
        out[json.dumps(row, sort_keys=True)] += 1 if key == "insert" else -1
    return out


def integrated(deltas) -> Counter:
    acc = Counter()
    for delta in deltas:
        acc.update(delta)  # update adds negative weights too
    return Counter({k: w for k, w in acc.items() if w})


def caught_up(run_id: int, source_done) -> bool:
    """Every push applied, every sink at the run's last tick, and `source_done()`."""
    run = Run.objects.get(pk=run_id)
    sinks = Connector.objects.filter(run_id=run_id, kind__endswith="_sink")
    return (run.current_tick >= 0 and not run.pushes.filter(applied_tick__isnull=True).exists()
            and all(s.last_tick == run.current_tick for s in sinks) and source_done())


class HookReceiver:
    """An HTTP server recording each POST (Idempotency-Key, body); `stop()` closes its
    port, `start()` opens the same port again."""

    def __init__(self):
        self.requests: list[tuple[str, dict]] = []
        self.port = 0
        self.start()
        self.url = f"http://127.0.0.1:{self.port}/hook"

    def start(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                receiver.requests.append((self.headers["Idempotency-Key"], body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_port
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.serving = True

    def stop(self):
        if self.serving:
            self.serving = False
            self.server.shutdown()
            self.server.server_close()

    def by_key(self) -> dict[str, list[dict]]:
        out: dict[str, list[dict]] = {}
        for key, body in list(self.requests):
            out.setdefault(key, []).append(body)
        return out


class MqttSubscriber:
    """A test's own MQTT 5 subscriber at QoS 1 in a session the broker keeps (clean start
    off, a long expiry): what the broker queued for it while it was away (a broker restart)
    arrives when it reconnects (paho reconnects by itself)."""

    def __init__(self, broker, topic: str):
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        self.received: queue.Queue = queue.Queue()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"peer-{uuid.uuid4().hex[:8]}",
                                  protocol=mqtt.MQTTv5)
        self.client.reconnect_delay_set(min_delay=1, max_delay=2)
        subscribed = threading.Event()
        self.client.on_connect = lambda client, *a: client.subscribe(topic, qos=1)
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.on_message = lambda client, userdata, m: self.received.put(m)
        properties = Properties(PacketTypes.CONNECT)
        properties.SessionExpiryInterval = 3600
        self.client.connect(broker.host, broker.port, clean_start=False, properties=properties)
        self.client.loop_start()
        assert subscribed.wait(30), "the subscriber did not subscribe"
        self.messages: list[tuple[int, str, str, str]] = []  # (tick, record "i/n", sink, payload)

    def drain(self) -> list[tuple[int, str, str, str]]:
        while True:
            try:
                m = self.received.get_nowait()
            except queue.Empty:
                return self.messages
            props = dict(m.properties.UserProperty)
            self.messages.append((int(props["tick"]), props["record"], props["sink"], m.payload.decode()))

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()


def mqtt_ticks(messages) -> tuple[dict[int, Counter], int]:
    """The subscriber's messages deduplicated by (tick, record index) as MQTT's at least
    once allows (a repeat must be the same record): tick -> delta, and the repeats' count.
    A tick missing a record index is a gap: the assertion names it."""
    seen: dict[tuple[int, int], str] = {}
    counts: dict[int, int] = {}
    repeats = 0
    for tick, record, _sink, payload in messages:
        index, count = map(int, record.split("/"))
        counts.setdefault(tick, count)
        assert counts[tick] == count, f"tick {tick}: record counts {counts[tick]} and {count}"
        if (tick, index) in seen:
            assert seen[(tick, index)] == payload, f"tick {tick} record {index} came again different"
            repeats += 1
        seen[(tick, index)] = payload
    for tick, count in counts.items():
        missing = [i for i in range(count) if (tick, i) not in seen]
        assert not missing, f"tick {tick}: records {missing} of {count} never arrived"
    out: dict[int, Counter] = {}
    for (tick, _), payload in sorted(seen.items()):
        out.setdefault(tick, Counter()).update(records_delta([payload]))
    return {t: Counter({k: w for k, w in d.items() if w}) for t, d in out.items()}, repeats
