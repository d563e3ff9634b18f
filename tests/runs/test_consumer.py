"""The run websocket in-process (Channels' Communicator) with the real Redis
channel layer: visibility, the snapshot, live deltas, dedup and gap filling."""
import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from tests.sockets import Communicator
from django.contrib.auth.models import AnonymousUser

from circuits import services
from runs.consumers import RunConsumer
from runs.models import Run, TickOutput
from tests.conftest import example

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

ROW = {"id": 1, "customer": "ada", "amount": 250}
#: These tests commit runs that no worker should touch: live workers of the same test
#: session (tests/live) share the database and sweep the runs of their queue and of
#: queue "" (runs made outside the API); no worker pool uses this queue.
UNSWEPT = "tests-consumer-no-worker"


@pytest.fixture(autouse=True)
def _no_task_messages(monkeypatch):
    """Keep the task messages that resume/stop/push send (on commit) in this process:
    a live worker on the test queue would otherwise take these runs up."""
    sent = []
    monkeypatch.setattr("workers.dispatch._send", lambda task, run_id, queue: sent.append((task, run_id)) or True)
    return sent


def setup_run(make_user, visibility="private", status="running"):
    alice = make_user("alice")
    circuit = services.create_circuit(alice, "c", "", visibility, example("big_orders"))
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status=status,
                             current_tick=0, queue=UNSWEPT)
    TickOutput.objects.create(run=run, tick=0, deltas={"big_orders": [{"data": ROW, "weight": 1}]})
    return run


async def connect(run, user, query=""):
    app = RunConsumer.as_asgi()
    comm = Communicator(app, f"/ws/runs/{run.pk}/{query}")
    comm.scope["user"] = user
    comm.scope["url_route"] = {"kwargs": {"run_id": run.pk}}
    connected, code = await comm.connect()
    return comm, connected, code


async def test_snapshot_then_live_deltas_without_duplicates(make_user):
    run = await database_sync_to_async(setup_run)(make_user)
    comm, connected, _ = await connect(run, run.created_by)
    assert connected
    snapshot = await comm.receive_json_from()
    assert snapshot["type"] == "snapshot" and snapshot["seq"] == 0
    assert snapshot["views"] == {"big_orders": [{"data": ROW, "weight": 1}]}
    assert (await comm.receive_json_from())["type"] == "status"
    layer = get_channel_layer()
    send = lambda m: layer.group_send(f"run.{run.pk}", {"type": "run.message", "message": m})  # noqa: E731
    await send(tick_message(0, {}))  # already in the snapshot
    await send(tick_message(1, {"big_orders": [{"data": ROW, "weight": -1}]}))
    message = await comm.receive_json_from()
    assert message["seq"] == 1 and message["views"]["big_orders"][0]["weight"] == -1
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()


async def test_gap_is_filled_from_the_database(make_user):
    run = await database_sync_to_async(setup_run)(make_user)
    comm, _, _ = await connect(run, run.created_by)
    await comm.receive_json_from()
    await comm.receive_json_from()

    def add_ticks():
        for t in (1, 2):
            TickOutput.objects.create(run=run, tick=t, deltas={"big_orders": []})

    await database_sync_to_async(add_ticks)()
    # Tick 1's broadcast was lost; tick 2's arrives: the consumer sends 1 from the database first.
    await get_channel_layer().group_send(f"run.{run.pk}", {"type": "run.message", "message": tick_message(2, {})})
    assert [(await comm.receive_json_from())["seq"] for _ in range(2)] == [1, 2]
    await comm.disconnect()


async def test_reconnect_with_since_gets_only_missed_ticks(make_user):
    run = await database_sync_to_async(setup_run)(make_user)
    await database_sync_to_async(lambda: TickOutput.objects.create(run=run, tick=1, deltas={"big_orders": []}))()
    await database_sync_to_async(lambda: Run.objects.filter(pk=run.pk).update(current_tick=1))()
    comm, _, _ = await connect(run, run.created_by, "?since=0")
    first = await comm.receive_json_from()
    assert first["type"] == "status"
    missed = await comm.receive_json_from()
    assert missed["type"] == "delta" and missed["seq"] == 1
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()


async def test_private_runs_are_refused_to_others(make_user):
    run = await database_sync_to_async(setup_run)(make_user)
    bob = await database_sync_to_async(make_user)("bob")
    for user in (bob, AnonymousUser()):
        comm, connected, _ = await connect(run, user)
        assert not connected


async def test_public_runs_are_watchable_by_anyone(make_user):
    run = await database_sync_to_async(setup_run)(make_user, "public")
    comm, connected, _ = await connect(run, AnonymousUser())
    assert connected
    assert (await comm.receive_json_from())["type"] == "snapshot"
    await comm.disconnect()


async def test_unlisted_runs_need_the_share_token(make_user):
    run = await database_sync_to_async(setup_run)(make_user, "unlisted")
    circuit = await database_sync_to_async(lambda: run.circuit)()
    _, connected, _ = await connect(run, AnonymousUser())
    assert not connected
    _, connected, _ = await connect(run, AnonymousUser(), "?share=wrong")
    assert not connected
    comm, connected, _ = await connect(run, AnonymousUser(), f"?share={circuit.share_token}")
    assert connected
    assert (await comm.receive_json_from())["type"] == "snapshot"
    await comm.disconnect()


async def test_the_share_token_does_not_open_private_runs(make_user):
    run = await database_sync_to_async(setup_run)(make_user, "private")
    circuit = await database_sync_to_async(lambda: run.circuit)()
    _, connected, _ = await connect(run, AnonymousUser(), f"?share={circuit.share_token}")
    assert not connected


async def test_users_granted_a_private_circuit_watch_its_runs(make_user):
    from circuits.models import CircuitGrant

    run = await database_sync_to_async(setup_run)(make_user, "private")
    bob = await database_sync_to_async(make_user)("bob")
    _, connected, _ = await connect(run, bob)
    assert not connected
    await database_sync_to_async(lambda: CircuitGrant.objects.create(circuit_id=run.circuit_id, user=bob))()
    comm, connected, _ = await connect(run, bob)
    assert connected
    assert (await comm.receive_json_from())["type"] == "snapshot"
    await comm.disconnect()


# ---- live-runs protocol: frontier/stats/lag, status, errors, fan-out -------------------

async def receive_all(comm, n):
    return [await comm.receive_json_from() for _ in range(n)]


def add_ticks(run, ticks):
    for t in ticks:
        TickOutput.objects.create(
            run=run, tick=t, deltas={"big_orders": [{"data": {**ROW, "id": 100 + t}, "weight": 1}]},
            frontier={"orders": {"tick": t}, "big": {"tick": t}, "big_orders": {"tick": t}},
            stats={"orders": {"rows_in": 1, "ms": 0.1}, "big_orders": {"rows_out": 1, "ms": 0.2}},
        )
    Run.objects.filter(pk=run.pk).update(current_tick=max(ticks))


def delta(t):
    return tick_message(t, {"big_orders": [{"data": {**ROW, "id": 100 + t}, "weight": 1}]})


def tick_message(t, views):
    """A `delta` as a worker publishes it (runs/live_protocol.schema.json): every field."""
    return {"type": "delta", "seq": t, "tick": t, "views": views, "frontier": {"big_orders": {"tick": t}},
            "stats": {}, "ms": 1.0, "lag": {"pushes": 0, "rows": 0, "ticks": 0}}


async def test_snapshot_carries_the_frontier_stats_and_lag(make_user):
    from runs.models import Push

    run = await database_sync_to_async(setup_run)(make_user)
    await database_sync_to_async(add_ticks)(run, [1])
    await database_sync_to_async(lambda: Push.objects.create(run=run, sequence=1, input="orders", records=[], row_count=3))()
    comm, _, _ = await connect(run, run.created_by)
    snapshot, status = await receive_all(comm, 2)
    assert snapshot["type"] == "snapshot" and snapshot["seq"] == 1
    assert snapshot["frontier"] == {"orders": {"tick": 1}, "big": {"tick": 1}, "big_orders": {"tick": 1}}
    assert snapshot["stats"]["big_orders"] == {"rows_out": 1, "ms": 0.2}
    assert snapshot["lag"] == {"pushes": 1, "rows": 3, "ticks": 1}
    assert status == {"type": "status", "status": "running", "tick": 1, "current_tick": 1, "error": "",
                      "lag": {"pushes": 1, "rows": 3, "ticks": 1}}
    await comm.disconnect()


async def test_snapshot_before_the_first_tick_has_every_node_at_tick_minus_1(make_user):
    def fresh():
        alice = make_user("alice")
        circuit = services.create_circuit(alice, "c", "", "private", example("big_orders"))
        return Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="created", queue=UNSWEPT)

    run = await database_sync_to_async(fresh)()
    comm, _, _ = await connect(run, run.created_by)
    snapshot = await comm.receive_json_from()
    assert snapshot["seq"] == -1 and snapshot["views"] == {"big_orders": []} and snapshot["stats"] == {}
    assert snapshot["frontier"] == {"orders": {"tick": -1}, "big": {"tick": -1}, "big_orders": {"tick": -1}}
    await comm.disconnect()


async def test_every_transition_is_published_as_a_status_message(make_user):
    from runs import lifecycle

    run = await database_sync_to_async(setup_run)(make_user)
    comm, _, _ = await connect(run, run.created_by)
    await receive_all(comm, 2)
    await database_sync_to_async(lifecycle.pause_run)(run)
    paused = await comm.receive_json_from()
    assert paused["type"] == "status" and paused["status"] == "paused" and paused["tick"] == 0
    await database_sync_to_async(lifecycle.resume_run)(run)
    assert (await comm.receive_json_from())["status"] == "running"
    await database_sync_to_async(lifecycle.stop_run)(run)
    assert (await comm.receive_json_from())["status"] == "stopped"
    await comm.disconnect()


async def test_worker_errors_and_failed_status_reach_the_watcher(make_user):
    from workers import leases, ticks

    run = await database_sync_to_async(setup_run)(make_user)
    comm, _, _ = await connect(run, run.created_by)
    await receive_all(comm, 2)
    epoch = await database_sync_to_async(leases.acquire)(run.pk)
    await database_sync_to_async(ticks.fail)(run.pk, 1, ArithmeticError("long overflow in node 'big'"), epoch)
    error, status = await receive_all(comm, 2)
    assert error == {"type": "error", "tick": 1, "node": None, "error": "ArithmeticError: long overflow in node 'big'"}
    assert status["status"] == "failed" and status["error"] == "ArithmeticError: long overflow in node 'big'"
    await comm.disconnect()


async def test_an_engine_error_naming_a_node_reaches_the_watcher_with_the_node(make_user):
    """A keyed input's rejected change is a DataInvalid whose problems name the input."""
    from dbsp.errors import DataInvalid, Problem
    from workers import leases, ticks

    run = await database_sync_to_async(setup_run)(make_user)
    comm, _, _ = await connect(run, run.created_by)
    await receive_all(comm, 2)
    epoch = await database_sync_to_async(leases.acquire)(run.pk)
    problem = Problem("input 'orders': two inserts for primary key [1] in one change", node="orders")
    await database_sync_to_async(ticks.fail)(run.pk, 1, DataInvalid([problem]), epoch)
    error, status = await receive_all(comm, 2)
    assert error == {"type": "error", "tick": 1, "node": "orders",
                     "error": "DataInvalid: input 'orders': two inserts for primary key [1] in one change"}
    assert status["status"] == "failed"
    await comm.disconnect()


async def test_a_worker_that_lost_the_lease_cannot_fail_the_run(make_user):
    from datetime import timedelta

    from django.utils import timezone

    from workers import identity, leases, ticks
    from workers.models import RunLease

    run = await database_sync_to_async(setup_run)(make_user)
    comm, _, _ = await connect(run, run.created_by)
    await receive_all(comm, 2)

    def lose_the_lease():
        stale = leases.acquire(run.pk)
        RunLease.objects.filter(run=run).update(worker="other:1", epoch=stale + 1, expires_at=timezone.now() + timedelta(seconds=60))
        return stale

    stale = await database_sync_to_async(lose_the_lease)()
    await database_sync_to_async(ticks.fail)(run.pk, 1, ArithmeticError("long overflow"), stale)
    assert await comm.receive_nothing(timeout=0.5)  # no error, no failed status
    run_now = await database_sync_to_async(Run.objects.get)(pk=run.pk)
    lease = await database_sync_to_async(RunLease.objects.get)(run=run)
    assert run_now.status == "running" and run_now.error == ""
    assert lease.worker == "other:1" and lease.expires_at > timezone.now()  # not released by the loser either
    assert identity.worker_id() != "other:1"
    await comm.disconnect()


async def test_reconnect_at_the_current_tick_then_a_lost_broadcast_is_filled(make_user):
    """since = the current tick: only a status on connect; the consumer still knows the
    client is at that tick, so when tick N+1's broadcast is lost, N+2 comes after N+1
    (read from the database), and neither is sent twice."""
    run = await database_sync_to_async(setup_run)(make_user)
    comm, _, _ = await connect(run, run.created_by, "?since=0")
    assert [m["type"] for m in await receive_all(comm, 1)] == ["status"]
    assert await comm.receive_nothing(timeout=0.2)
    await database_sync_to_async(add_ticks)(run, [1, 2])
    layer = get_channel_layer()
    await layer.group_send(f"run.{run.pk}", {"type": "run.message", "message": delta(2)})  # tick 1's was lost
    filled, live = await receive_all(comm, 2)
    assert (filled["type"], filled["seq"], live["seq"]) == ("delta", 1, 2)
    assert filled["views"] == {"big_orders": [{"data": {**ROW, "id": 101}, "weight": 1}]}
    for t in (1, 2, 0):  # late or repeated broadcasts
        await layer.group_send(f"run.{run.pk}", {"type": "run.message", "message": delta(t)})
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()


async def test_an_accepted_push_publishes_the_new_lag(make_user, client_for):
    """A paused run publishes no tick: the lag reaches watchers on each accepted push,
    after the push committed."""
    run = await database_sync_to_async(setup_run)(make_user, status="paused")
    comm, _, _ = await connect(run, run.created_by)
    snapshot, status = await receive_all(comm, 2)
    assert snapshot["lag"] == status["lag"] == {"pushes": 0, "rows": 0, "ticks": 0}
    api = client_for(run.created_by)
    url = f"/api/runs/{run.pk}/inputs/orders/push/"
    push = database_sync_to_async(lambda body: api.post(url, body, format="json"))
    assert (await push([{"insert": {**ROW, "id": 2}}])).status_code == 202
    assert await comm.receive_json_from() == {"type": "lag", "tick": 0, "lag": {"pushes": 1, "rows": 1, "ticks": 1}}
    assert (await push([{"insert": {**ROW, "id": 3}}, {"insert": {**ROW, "id": 4}}])).status_code == 202
    assert await comm.receive_json_from() == {"type": "lag", "tick": 0, "lag": {"pushes": 2, "rows": 3, "ticks": 1}}
    assert (await push([{"insert": {**ROW, "id": 5, "amount": "many"}}])).status_code == 400  # refused: no lag change
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()


async def test_a_lag_message_older_than_a_tick_already_sent_is_dropped(make_user):
    run = await database_sync_to_async(setup_run)(make_user)
    comm, _, _ = await connect(run, run.created_by)
    await receive_all(comm, 2)
    layer = get_channel_layer()
    send = lambda m: layer.group_send(f"run.{run.pk}", {"type": "run.message", "message": m})  # noqa: E731
    await send({"type": "lag", "tick": 0, "lag": {"pushes": 1, "rows": 1, "ticks": 1}})
    assert (await comm.receive_json_from())["lag"]["pushes"] == 1
    await database_sync_to_async(add_ticks)(run, [1])
    await send({**delta(1), "lag": {"pushes": 0, "rows": 0, "ticks": 0}})
    assert (await comm.receive_json_from())["seq"] == 1
    await send({"type": "lag", "tick": 0, "lag": {"pushes": 1, "rows": 1, "ticks": 1}})  # read before tick 1
    assert await comm.receive_nothing(timeout=0.3)
    await send({"type": "lag", "tick": 1, "lag": {"pushes": 2, "rows": 2, "ticks": 1}})
    assert (await comm.receive_json_from())["lag"]["pushes"] == 2
    await comm.disconnect()


async def test_a_client_message_other_than_ping_gets_an_error(make_user):
    run = await database_sync_to_async(setup_run)(make_user)
    comm, _, _ = await connect(run, run.created_by)
    await receive_all(comm, 2)
    await comm.send_json_to({"type": "ping"})
    assert await comm.receive_json_from() == {"type": "pong"}
    await comm.send_json_to({"type": "subscribe"})
    error = await comm.receive_json_from()
    assert error["type"] == "error" and "'subscribe'" in error["error"]
    await comm.disconnect()


async def test_reconnect_too_far_behind_gets_a_fresh_snapshot(make_user, monkeypatch):
    import runs.consumers

    monkeypatch.setattr(runs.consumers, "MAX_REPLAY_TICKS", 2)
    run = await database_sync_to_async(setup_run)(make_user)
    await database_sync_to_async(add_ticks)(run, [1, 2, 3, 4])
    near, _, _ = await connect(run, run.created_by, "?since=2")
    first = await receive_all(near, 3)
    assert [m["type"] for m in first] == ["status", "delta", "delta"] and [m["seq"] for m in first[1:]] == [3, 4]
    assert all(m["lag"] == {"pushes": 0, "rows": 0, "ticks": 0} for m in first[1:])
    far, _, _ = await connect(run, run.created_by, "?since=0")
    snapshot = await far.receive_json_from()
    assert snapshot["type"] == "snapshot" and snapshot["seq"] == 4 and len(snapshot["views"]["big_orders"]) == 5
    ahead, _, _ = await connect(run, run.created_by, "?since=99")  # from another run's numbering: a snapshot
    assert (await ahead.receive_json_from())["type"] == "snapshot"
    for comm in (near, far, ahead):
        await comm.disconnect()


async def test_two_watchers_see_identical_sequences_through_duplicates_and_gaps(make_user):
    run = await database_sync_to_async(setup_run)(make_user)
    one, _, _ = await connect(run, run.created_by)
    await receive_all(one, 2)
    two, _, _ = await connect(run, run.created_by, "?since=0")
    await receive_all(two, 1)  # status; nothing missed
    await database_sync_to_async(add_ticks)(run, [1, 2, 3, 4, 5])
    layer = get_channel_layer()
    # Broadcasts arrive duplicated, out of order and with losses (3 is never sent).
    for t in (1, 1, 2, 4, 2, 5, 5):
        await layer.group_send(f"run.{run.pk}", {"type": "run.message", "message": delta(t)})
    seen_one, seen_two = await receive_all(one, 5), await receive_all(two, 5)
    assert [m["seq"] for m in seen_one] == [1, 2, 3, 4, 5]
    assert [(m["seq"], m["views"]) for m in seen_one] == [(m["seq"], m["views"]) for m in seen_two]
    assert await one.receive_nothing(timeout=0.3) and await two.receive_nothing(timeout=0.3)
    await one.disconnect()
    await two.disconnect()


async def test_a_hundred_watchers_through_the_redis_channel_layer_see_the_same_stream(make_user):
    run = await database_sync_to_async(setup_run)(make_user, "public")
    await database_sync_to_async(add_ticks)(run, list(range(1, 21)))
    await database_sync_to_async(lambda: Run.objects.filter(pk=run.pk).update(current_tick=0))()
    watchers = []
    for _ in range(100):
        comm, connected, _ = await connect(run, AnonymousUser())
        assert connected
        assert [m["type"] for m in await receive_all(comm, 2)] == ["snapshot", "status"]
        watchers.append(comm)
    layer = get_channel_layer()
    for t in range(1, 21):
        await layer.group_send(f"run.{run.pk}", {"type": "run.message", "message": delta(t)})
    streams = [[(m["seq"], m["views"]) for m in await receive_all(comm, 20)] for comm in watchers]
    assert [seq for seq, _ in streams[0]] == list(range(1, 21))
    assert all(stream == streams[0] for stream in streams)
    for comm in watchers:
        await comm.disconnect()
