"""Watchers on the real stack (uvicorn, Celery worker with Spark, Redis channel layer):
two watchers see identical sequences, a reconnect with `since` continues without a gap
or a duplicate, and the websocket applies the REST visibility rules."""
import time

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.conftest import example
from tests.live.stack import Watcher, as_weights, integrate

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


def running_run(api, visibility="private"):
    circuit = api.post("/api/circuits/", json={"name": "watched", "visibility": visibility, "document": example("big_orders")}).json()
    run_id = api.post(f"/api/circuits/{circuit['id']}/runs/").json()["id"]
    deadline = time.monotonic() + 90
    while api.get(f"/api/runs/{run_id}/").json()["status"] != "running":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    return run_id


def watch(live_stack, run_id, query):
    return Watcher(f"{live_stack.ws_url}/ws/runs/{run_id}/?{query}", live_stack.base_url)


def test_two_watchers_and_a_reconnect_see_the_same_gapless_stream(live_stack, token_client):
    api = token_client("watched")
    run_id = running_run(api)
    first = watch(live_stack, run_id, f"token={api.token}")
    second = watch(live_stack, run_id, f"token={api.token}")
    for w in (first, second):
        w.wait_for(lambda ms: any(m["type"] == "snapshot" for m in ms), what="the snapshot")
    url = f"/api/runs/{run_id}/inputs/orders/push/"
    for i in range(20):  # back to back: several pushes may share a tick
        assert api.post(url, json=[{"insert": {"id": i, "customer": "c", "amount": 90 + i}}]).status_code == 202
    # A third watcher drops out midway and comes back with its last seq.
    third = watch(live_stack, run_id, f"token={api.token}")
    third.wait_for(lambda ms: any(m["type"] == "snapshot" for m in ms), what="the snapshot")
    third.close()
    last_seen = max([m["seq"] for m in third.messages if m["type"] in ("snapshot", "delta")])
    for i in range(20, 40):
        assert api.post(url, json=[{"insert": {"id": i, "customer": "c", "amount": 90 + i}}]).status_code == 202
    deadline = time.monotonic() + 60
    while api.get(f"/api/runs/{run_id}/").json()["lag"]["pushes"]:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    # Read the tick after the lag reached 0: the status read with it may predate the last tick.
    final_tick = api.get(f"/api/runs/{run_id}/").json()["current_tick"]
    back = watch(live_stack, run_id, f"token={api.token}&since={last_seen}")
    for w in (first, second, back):
        w.wait_for(lambda ms: any(m["type"] == "delta" and m["seq"] == final_tick for m in ms) or last_seen == final_tick,
                   what=f"tick {final_tick}")

    def stream(w):
        return [(m["seq"], m["views"], m["frontier"], m["stats"]) for m in w.deltas()]

    assert stream(first) == stream(second)
    assert [s for s, *_ in stream(first)] == list(range(final_tick + 1))
    # The third watcher may have read a delta or two after its snapshot before it closed:
    # together with what it got back after reconnecting, it saw every tick after its
    # snapshot exactly once.
    snapshot_seq = next(m["seq"] for m in third.messages if m["type"] == "snapshot")
    third_stream = [(m["seq"], m["views"]) for m in third.messages + back.messages if m["type"] == "delta"]
    assert [s for s, _ in third_stream] == list(range(snapshot_seq + 1, final_tick + 1))
    assert [m["seq"] for m in back.messages if m["type"] == "delta"] == list(range(last_seen + 1, final_tick + 1))
    outputs = as_weights(api.get(f"/api/runs/{run_id}/outputs/").json()["views"])
    for messages in (first.messages, second.messages, third.messages + back.messages):
        assert integrate(messages) == outputs
    assert len(outputs["big_orders"]) == 29  # amounts 101..129
    for w in (first, second, back):
        w.close()


def test_websocket_visibility_follows_the_rest_rules(live_stack, token_client):
    owner, other = token_client("owner"), token_client("other")
    private, unlisted, public = (running_run(owner, v) for v in ("private", "unlisted", "public"))

    def refused(run_id, query):
        with pytest.raises(InvalidStatus) as err:
            connect(f"{live_stack.ws_url}/ws/runs/{run_id}/{query}", origin=live_stack.base_url, open_timeout=10)
        return err.value.response.status_code

    assert refused(private, f"?token={other.token}") == 403
    assert refused(private, "") == 403  # anonymous
    assert refused(private, "?token=not-a-token") == 403
    assert refused(999999, f"?token={owner.token}") == 403  # no such run: the same answer
    # an unlisted run needs its circuit's share token, as on REST
    assert refused(unlisted, f"?token={other.token}") == 403
    share = owner.get(f"/api/circuits/{owner.get(f'/api/runs/{unlisted}/').json()['circuit']}/share/").json()["share_token"]
    for run_id, query in ((private, f"?token={owner.token}"), (unlisted, f"?token={other.token}&share={share}"), (public, "")):
        w = watch(live_stack, run_id, query.lstrip("?"))
        w.wait_for(lambda ms: any(m["type"] == "snapshot" for m in ms), what="the snapshot")
        w.close()
    # A watcher of someone else's public run cannot push or control it.
    assert other.post(f"/api/runs/{public}/pause/").status_code == 403
