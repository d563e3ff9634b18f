"""Pause, resume, stop and backpressure through the real stack (web server, Celery
workers with Spark, Redis): pause holds ticks while pushes are still logged, the
websocket shows the status and the lag, a full run answers 429, resume applies the
held pushes in order, stop frees the worker's Spark state and lease."""
import time

import pytest

from django.utils import timezone

from runs.models import Push
from tests.conftest import caught_up, example
from tests.live.stack import as_weights, integrate
from workers.models import RunLease

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


def order(i, amount=500):
    return {"insert": {"id": i, "customer": f"c{i}", "amount": amount}}


def started(api, name):
    circuit = api.post("/api/circuits/", json={"name": name, "document": example("big_orders")}).json()
    run_id = api.post(f"/api/circuits/{circuit['id']}/runs/").json()["id"]
    deadline = time.monotonic() + 90
    while api.get(f"/api/runs/{run_id}/").json()["status"] != "running":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    return run_id


def test_pause_holds_ticks_backpressure_refuses_resume_applies_in_order(cluster, make_user):
    api = cluster.client(make_user("pauser"))
    run_id = started(api, "pausable")
    push_url = f"/api/runs/{run_id}/inputs/orders/push/"
    watcher = cluster.watch(run_id, api.token)
    watcher.wait_for(lambda ms: any(m["type"] == "status" for m in ms), what="the first status")
    assert api.post(push_url, json=[order(0)]).status_code == 202
    watcher.wait_for(lambda ms: any(m["type"] == "delta" for m in ms), what="tick 0")

    paused = api.post(f"/api/runs/{run_id}/pause/")
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    watcher.wait_for(lambda ms: ms[-1]["type"] == "status" and ms[-1]["status"] == "paused", what="the paused status")
    assert api.post(f"/api/runs/{run_id}/pause/").status_code == 409
    # Pushes are logged but not applied while paused, up to the limit (25 in this stack).
    for i in range(1, 26):
        assert api.post(push_url, json=[order(i, amount=i * 10)]).status_code == 202
    refused = api.post(push_url, json=[order(99)])
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
    assert "25 pushes waiting" in refused.json()["detail"] and "the run is paused" in refused.json()["detail"]
    caught_up(run_id, cluster.logs, "the pushes' wake-ups")  # a worker that ignored the pause has applied them now
    status = api.get(f"/api/runs/{run_id}/").json()
    assert status["status"] == "paused" and status["current_tick"] == 0
    assert status["lag"] == {"pushes": 25, "rows": 25, "ticks": 1}
    assert len(watcher.deltas()) == 1
    # No tick carries the lag while paused: each accepted push sent a `lag` message.
    watcher.wait_for(lambda ms: any(m["type"] == "lag" and m["lag"]["pushes"] == 25 for m in ms), what="the paused run's lag")
    held = [m for m in watcher.of("lag") if m["tick"] == 0 and m["lag"]["pushes"]]  # not order(0)'s
    assert [m["lag"]["pushes"] for m in held] == list(range(1, 26)) and held[-1]["lag"] == status["lag"]

    assert api.post(f"/api/runs/{run_id}/resume/").json()["status"] == "running"
    watcher.wait_for(lambda ms: any(m["type"] == "delta" and m["seq"] == 1 for m in ms), what="the held pushes' tick")
    resumed = [m for m in watcher.messages if m["type"] == "status" and m["status"] == "running"]
    assert resumed and resumed[-1]["lag"]["pushes"] in (0, 25)
    tick1 = watcher.deltas()[1]
    assert tick1["lag"] == {"pushes": 0, "rows": 0, "ticks": 0}
    assert tick1["stats"]["orders"]["rows_in"] == 25 and tick1["frontier"]["big_orders"]["tick"] == 1
    # amount > 100: ids 11..25 of the held pushes, all in one tick, in log order.
    assert sorted(r["data"]["id"] for r in tick1["views"]["big_orders"]) == list(range(11, 26))
    assert set(Push.objects.filter(run_id=run_id, sequence__gt=1).values_list("applied_tick", flat=True)) == {1}
    assert api.post(push_url, json=[order(99)]).status_code == 202  # room again
    watcher.wait_for(lambda ms: any(m["type"] == "delta" and m["seq"] == 2 for m in ms), what="tick 2")
    assert integrate(watcher.messages) == as_weights(api.get(f"/api/runs/{run_id}/outputs/").json()["views"])

    # Stop: the status reaches the watcher, the holder frees its Spark state and lease.
    holder = RunLease.objects.get(run_id=run_id).worker
    assert api.post(f"/api/runs/{run_id}/stop/").json()["status"] == "stopped"
    watcher.wait_for(lambda ms: ms[-1]["type"] == "status" and ms[-1]["status"] == "stopped", what="the stopped status")
    log = f"cluster-{cluster.worker_named_by(holder)}"
    cluster.wait(lambda: f"event=released run={run_id} " in cluster.log(log), 30, "the holder to release the run")
    assert RunLease.objects.get(run_id=run_id).expires_at <= timezone.now()
    assert api.post(f"/api/runs/{run_id}/resume/").status_code == 409
    watcher.close()


def test_health_lists_the_live_workers(cluster):
    import httpx

    # The previous test's teardown emptied the tables; each worker's heartbeat (every
    # 0.5 s here) registers it again: every worker process of this cluster that is alive
    # shows up as live. Other stacks' workers (the session-wide live stack) share the
    # database and appear too, on their own heartbeat period: only this cluster's count.
    def healthy():
        alive = {f"{name}-cluster" for name, proc in cluster.workers.items() if proc.poll() is None}
        body = httpx.get(f"{cluster.base_url}/api/health/", timeout=10).json()
        live = {w["worker"].split("@")[0] for w in body["checks"].get("workers", {}).get("live", [])}
        return body["status"] == "ok" and alive and {w for w in live if w.endswith("-cluster")} == alive and body

    body = cluster.wait(healthy, 30, "a healthy answer listing every live worker of the cluster")
    assert body["checks"]["database"]["ok"] and body["checks"]["redis"]["ok"]
    cluster_workers = [w for w in body["checks"]["workers"]["live"] if w["worker"].split("@")[0].endswith("-cluster")]
    assert all(w["runs"] == 0 for w in cluster_workers)  # the earlier runs were stopped or flushed
