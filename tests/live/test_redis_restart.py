"""A Redis restart loses no acknowledged push. A private redis-server (no persistence,
so a restart loses every queued task message and channel-layer membership) behind a
private web server and worker: pushes acknowledged while the worker is frozen, and
while Redis is down, are all applied once, in order, after Redis comes back (pushes
whose wake-up was lost are re-driven from the database by the sweeper); a watcher
reconnecting with its last seq gets exactly the ticks it missed; a handshake while
Redis is down is closed with 4503 (docs/live-protocol.md)."""
import subprocess
import time

import pytest
import redis
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from runs.models import Push, Run, TickOutput
from tests.conftest import example, free_port
from tests.live.conftest import CLUSTER_ENV
from tests.live.stack import Stack, as_weights, integrate

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


class RedisServer:
    def __init__(self, port: int, log_path):
        self.port, self.log_path, self.proc = port, log_path, None
        self.url = f"redis://127.0.0.1:{port}/0"

    def start(self):
        self.proc = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no",
             "--logfile", str(self.log_path)],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 20
        while True:
            try:
                redis.Redis.from_url(self.url).ping()
                return
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.1)

    def kill(self):
        self.proc.kill()
        self.proc.wait(timeout=10)


@pytest.fixture
def private_stack(django_db_blocker, tmp_path):
    server = RedisServer(free_port(), tmp_path / "redis.log")
    server.start()
    stack = Stack(tmp_path, "redis", {**CLUSTER_ENV, "REDIS_URL": server.url, "CELERY_BROKER_URL": server.url,
                                      "DBSPWEB_SNAPSHOT_DIR": str(tmp_path / "snapshots")})
    try:
        stack.start_web()
        stack.start_worker("w1")
        yield stack, server
    finally:
        stack.close()
        if server.proc.poll() is None:
            server.kill()


def order(i):
    return [{"insert": {"id": i, "customer": f"c{i}", "amount": 100 + i}}]


def test_a_redis_restart_loses_no_acknowledged_push(private_stack, make_user):
    stack, server = private_stack
    api = stack.client(make_user("resilient"))
    circuit = api.post("/api/circuits/", json={"name": "r", "document": example("big_orders")}).json()
    run_id = api.post(f"/api/circuits/{circuit['id']}/runs/").json()["id"]
    stack.wait(lambda: api.get(f"/api/runs/{run_id}/").json()["status"] == "running", 90, "the run to start")
    push_url = f"/api/runs/{run_id}/inputs/orders/push/"
    watcher = stack.watch(run_id, api.token)
    for i in range(1, 4):
        assert api.post(push_url, json=order(i)).status_code == 202
    watcher.wait_for(lambda ms: any(m["type"] == "delta" for m in ms) and
                     Push.objects.filter(run_id=run_id, applied_tick__isnull=True).count() == 0, what="the first pushes")

    stack.freeze("w1")  # these pushes' wake-ups wait in Redis (or in the frozen worker's socket)
    for i in range(4, 7):
        assert api.post(push_url, json=order(i)).status_code == 202
    server.kill()  # ... and whatever waits in Redis is lost with it
    for i in range(7, 9):  # acknowledged while Redis is down: they are in the database
        response = api.post(push_url, json=order(i))
        assert response.status_code == 202, response.text
    server.start()
    stack.thaw("w1")
    stack.wait(lambda: Push.objects.filter(run_id=run_id, applied_tick__isnull=False).count() == 8, 120,
               "every acknowledged push to be applied after the restart")

    # Redis down while the worker idles: no wake-up of these pushes ever reaches a queue,
    # so only the sweeper (pushes waiting longer than DBSPWEB_SWEEP_STALE) can apply them.
    server.kill()
    for i in range(9, 11):
        assert api.post(push_url, json=order(i)).status_code == 202
    # A handshake now is accepted and closed with 4503 (retry later), not an HTTP 500.
    with connect(f"{stack.ws_url}/ws/runs/{run_id}/?token={api.token}", origin=stack.base_url, open_timeout=15) as refused:
        with pytest.raises(ConnectionClosed) as closed:
            refused.recv(timeout=15)
    assert closed.value.rcvd.code == 4503, closed.value
    server.start()
    stack.wait(lambda: Push.objects.filter(run_id=run_id, applied_tick__isnull=False).count() == 10, 120,
               "the pushes acknowledged while Redis was down to be applied")
    assert f"woken=[{run_id}]" in stack.log("redis-w1")
    applied = list(Push.objects.filter(run_id=run_id).order_by("sequence").values_list("applied_tick", flat=True))
    assert applied == sorted(applied)
    run = Run.objects.get(pk=run_id)
    assert list(TickOutput.objects.filter(run_id=run_id).order_by("tick").values_list("tick", flat=True)) == list(range(run.current_tick + 1))
    outputs = api.get(f"/api/runs/{run_id}/outputs/").json()["views"]
    assert sorted(r["data"]["id"] for r in outputs["big_orders"]) == list(range(1, 11))

    # The watcher's connection went down with Redis (or missed the lost broadcasts):
    # reconnecting with its last seq gives exactly the missed ticks.
    seen = [m["seq"] for m in watcher.deltas()]
    watcher.close()
    last = max(seen)
    again = stack.watch(run_id, api.token, since=last)
    again.wait_for(lambda ms: any(m["type"] == "delta" and m["seq"] == run.current_tick for m in ms) or last == run.current_tick,
                   what="the missed ticks")
    again.wait_for(lambda ms: any(m["type"] == "status" for m in ms), what="the status")
    resumed = [m["seq"] for m in again.deltas()]
    assert resumed == list(range(last + 1, run.current_tick + 1))
    assert seen == list(range(len(seen)))  # what it saw before was gapless too
    assert integrate(watcher.messages + again.messages) == as_weights(outputs)
    again.close()
