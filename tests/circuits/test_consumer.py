"""The run websocket in-process (Channels' WebsocketCommunicator) with the real Redis
channel layer: visibility, the snapshot, live deltas, dedup and gap filling."""
import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from circuits import services
from circuits.consumers import RunConsumer
from circuits.models import Run, TickOutput
from tests.conftest import example

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

ROW = {"id": 1, "customer": "ada", "amount": 250}


def setup_run(make_user, visibility="private"):
    alice = make_user("alice")
    circuit = services.create_circuit(alice, "c", "", visibility, example("big_orders"))
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running", current_tick=0)
    TickOutput.objects.create(run=run, tick=0, deltas={"big_orders": [{"data": ROW, "weight": 1}]})
    return run


async def connect(run, user, query=""):
    app = RunConsumer.as_asgi()
    comm = WebsocketCommunicator(app, f"/ws/runs/{run.pk}/{query}")
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
    await send({"type": "delta", "seq": 0, "tick": 0, "views": {}})  # already in the snapshot
    await send({"type": "delta", "seq": 1, "tick": 1, "views": {"big_orders": [{"data": ROW, "weight": -1}]}})
    message = await comm.receive_json_from(timeout=5)
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
    await get_channel_layer().group_send(f"run.{run.pk}", {"type": "run.message", "message": {"type": "delta", "seq": 2, "tick": 2, "views": {}}})
    assert [(await comm.receive_json_from(timeout=5))["seq"] for _ in range(2)] == [1, 2]
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
