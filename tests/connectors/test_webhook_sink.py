"""The webhook sink against a real HTTP server of the test's own (http.server in a thread
on a free port) that records each request: a POST per tick with the delta's records and
an Idempotency-Key naming the run, the connector and the tick; a 500 is tried again
(with the pump's backoff) and the same body and key arrive again; a 400 fails the
connector naming the status and the start of the answer; secrets go as headers."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from connectors.models import Connector
from connectors.pump import Pump
from runs.models import TickOutput
from tests.connectors.conftest import declare, pump_until

pytestmark = pytest.mark.django_db(transaction=True)


class Receiver:
    """Answers each POST with the next scripted status (then 200), recording every request."""

    def __init__(self):
        self.requests, self.script = [], []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                headers = {k.lower(): v for k, v in self.headers.items()}
                receiver.requests.append({"path": self.path, "headers": headers, "body": json.loads(body)})
                status, text = receiver.script.pop(0) if receiver.script else (200, "ok")
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(text.encode())

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


def order(i):
    return {"id": i, "customer": f"c{i % 5}", "amount": (i * 37) % 300}


def ticks_of(run, ticks):
    for tick, delta in ticks.items():
        TickOutput.objects.create(run=run, tick=tick, deltas={"big_orders": [{"data": d, "weight": w} for d, w in delta]})


def test_a_post_per_tick_retried_after_a_500_with_the_same_key(receiver, held_run, client_for):
    ticks = {0: [(order(1), 1), (order(2), 2)], 1: [], 2: [(order(1), -1)]}
    ticks_of(held_run, ticks)
    receiver.script = [(500, "busy")]  # the first POST fails: tried again
    sink = declare(client_for, held_run, name="hook", kind="webhook_sink", node="big_orders",
                   config={"url": receiver.url, "headers": {"X-Team": "orders"}},
                   secrets={"authorization": "Bearer s3cret"})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 2, "tick 2")
    keys = [r["headers"]["idempotency-key"] for r in receiver.requests]
    assert keys == [f"run-{held_run.pk}-hook-tick-0"] * 2 + [f"run-{held_run.pk}-hook-tick-2"]
    assert receiver.requests[0]["body"] == receiver.requests[1]["body"]  # the retry posts the same
    expected = [{"run": held_run.pk, "view": "big_orders", "tick": tick,
                 "records": [{"insert" if w > 0 else "delete": d} for d, w in delta for _ in range(abs(w))]}
                for tick, delta in ticks.items() if delta]
    assert [r["body"] for r in receiver.requests[1:]] == expected
    for request in receiver.requests:
        assert request["path"] == "/hook"
        assert request["headers"]["authorization"] == "Bearer s3cret" and request["headers"]["x-team"] == "orders"
        assert request["headers"]["content-type"] == "application/json"
    sink.refresh_from_db()
    assert sink.state == "running" and sink.errors == 1 and "HTTP 500" in sink.last_error
    assert sink.records_out == 4


def test_a_400_fails_the_connector_naming_the_status_and_the_answer(receiver, held_run, client_for):
    ticks_of(held_run, {0: [(order(1), 1)], 1: [(order(2), 1)]})
    receiver.script = [(400, "bad record: " + "x" * 300)]
    sink = declare(client_for, held_run, name="hook", kind="webhook_sink", node="big_orders",
                   config={"url": receiver.url})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).state == "failed", "the failure")
    sink.refresh_from_db()
    assert sink.last_error == (f"connector 'hook' (webhook_sink): POST {receiver.url}: HTTP 400 Bad Request: "
                               f"bad record: {'x' * 188}")
    assert sink.last_tick == -1 and len(receiver.requests) == 1  # not tried again, nothing after it


def test_a_receiver_that_is_away_is_tried_again(held_run, client_for):
    ticks_of(held_run, {0: [(order(1), 1)]})
    away = Receiver()
    url = away.url
    away.stop()  # nothing listens on that port now
    sink = declare(client_for, held_run, name="hook", kind="webhook_sink", node="big_orders", config={"url": url})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=sink.pk).state == "retrying", "a retry")
    assert f"POST {url}: ConnectError" in Connector.objects.get(pk=sink.pk).last_error


@pytest.mark.parametrize("config, message", [
    ({"url": "ftp://x/y"}, "url: an http:// or https:// URL"),
    ({"url": "http://x/y", "headers": {"Authorization": "Bearer t"}},
     "headers: 'Authorization' looks like a secret: put it in secrets"),
    ({"url": "http://x/y", "timeout_seconds": 0}, "timeout_seconds: a number of seconds above 0"),
])
def test_bad_options_are_refused_when_declared(held_run, client_for, config, message):
    r = client_for(held_run.owner).post(f"/api/runs/{held_run.pk}/connectors/", {
        "name": "hook", "kind": "webhook_sink", "node": "big_orders", "config": config}, format="json")
    assert r.status_code == 400 and message in r.content.decode(), r.content


def test_connection_tests_of_the_new_kinds(receiver, held_run, client_for, tmp_path):
    """Test connection (the editor's button): the receiver answers; a Delta table is there or not."""
    from deltalake import write_deltalake
    import pyarrow as pa

    def tested(kind, config):
        r = client_for(held_run.owner).post(f"/api/connector-kinds/{kind}/test/", {"config": config}, format="json")
        assert r.status_code == 200, r.content
        return r.json()

    assert tested("webhook_sink", {"url": receiver.url}) == {"ok": True, "error": ""}
    assert receiver.requests == []  # nothing posted by a test
    gone = Receiver()
    gone.stop()
    answer = tested("webhook_sink", {"url": gone.url})
    assert not answer["ok"] and answer["error"].startswith(f"{gone.url}: ConnectError"), answer
    missing = tmp_path / "lake"
    answer = tested("delta_source", {"path": str(missing)})
    assert not answer["ok"] and answer["error"].startswith(f"no Delta table at {missing} (yet)"), answer
    write_deltalake(str(missing), pa.table({"id": [1]}))
    assert tested("delta_source", {"path": str(missing)}) == {"ok": True, "error": ""}


def test_a_hanging_receiver_delays_only_its_own_sink(held_run, client_for, tmp_path):
    """The worker's pump writes each sink on its own thread: while a receiver takes its
    time, a file sink of the same run goes on writing ticks; the webhook shows it is
    behind, and once the receiver answers it catches up with every tick, none lost."""
    release = threading.Event()
    slow = Receiver()
    handler = slow.server.RequestHandlerClass
    answer = handler.do_POST

    def hold_then_answer(self):
        release.wait(120)
        answer(self)

    handler.do_POST = hold_then_answer
    try:
        ticks_of(held_run, {0: [(order(1), 1)], 1: [(order(2), 1)], 2: [(order(3), 1)]})
        hook = declare(client_for, held_run, name="a-hook", kind="webhook_sink", node="big_orders",
                       config={"url": slow.url, "timeout_seconds": 120})  # stepped first (by name)
        files = declare(client_for, held_run, name="b-files", kind="file_sink", node="big_orders",
                        config={"path": str(tmp_path)})
        pump = Pump(sinks_apart=True)
        pump_until(pump, held_run, lambda: Connector.objects.get(pk=files.pk).last_tick == 2, "the file sink's 3 ticks")
        assert Connector.objects.get(pk=hook.pk).last_tick == -1  # behind, and shown so
        assert sorted(p.name for p in tmp_path.glob("big_orders-*.jsonl")) == [f"big_orders-00000000000{t}.jsonl" for t in range(3)]
        release.set()
        pump_until(pump, held_run, lambda: Connector.objects.get(pk=hook.pk).last_tick == 2, "the webhook's 3 ticks")
        ticks = [r["body"]["tick"] for r in slow.requests]
        assert sorted(set(ticks)) == [0, 1, 2] and ticks == sorted(ticks)  # each tick, in order (a timeout may repeat one)
        pump.close_all_but(set())
    finally:
        release.set()
        slow.stop()
