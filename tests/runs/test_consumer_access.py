"""Websocket access ends when access is taken away (runs/consumers.py `run_access`,
runs/broadcast.py `publish_access_check`): a socket opened while allowed is closed with
4403 once the share link is revoked, the grant removed, the circuit made private or
deleted, through the REST API as a user does it, with the real Redis channel layer.
A change that leaves the watcher's access alone keeps the socket open and live.

Also: a handshake while Redis is unreachable is accepted and closed with 4503 (the
client retries); an unexpected failure closes with 1011, never an HTTP 500."""
import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.contrib.auth.models import AnonymousUser
from rest_framework.test import APIClient

from runs.consumers import ACCESS_ENDED, LAYER_UNAVAILABLE, SERVER_ERROR, RunConsumer
from tests.runs.test_consumer import ROW, _no_task_messages, connect, setup_run  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def api_of(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


@database_sync_to_async
def rest(user, method, path, body=None):
    response = getattr(api_of(user), method)(path, body, format="json")
    assert response.status_code < 300, (path, response.status_code, response.content[:300])
    return response


async def opened(run, user, query=""):
    comm, connected, code = await connect(run, user, query)
    assert connected, code
    assert (await comm.receive_json_from())["type"] == "snapshot"
    assert (await comm.receive_json_from())["type"] == "status"
    return comm


async def assert_closed_for_access(comm, run):
    message = await comm.receive_output()
    assert message == {"type": "websocket.close", "code": ACCESS_ENDED, "reason": "access to this run ended"}


async def publish_delta(run, seq=1):
    await get_channel_layer().group_send(
        f"run.{run.pk}", {"type": "run.message", "message": {"type": "delta", "seq": seq, "tick": seq, "views": {}, "frontier": {}, "stats": {}, "ms": 1.0, "lag": {"pushes": 0, "rows": 0, "ticks": 0}}})


async def assert_still_live(comm, run):
    await publish_delta(run)
    assert (await comm.receive_json_from())["seq"] == 1


async def test_revoking_the_share_link_closes_sockets_opened_with_it(make_user):
    run = await database_sync_to_async(setup_run)(make_user, visibility="unlisted")
    circuit, owner = run.circuit, run.created_by
    by_link = await opened(run, AnonymousUser(), f"?share={circuit.share_token}")
    owners = await opened(run, owner)
    await rest(owner, "post", f"/api/circuits/{circuit.pk}/share/revoke/")
    await assert_closed_for_access(by_link, run)
    await assert_still_live(owners, run)  # the owner's access did not change
    await owners.disconnect()


async def test_removing_a_grant_closes_the_grantees_socket(make_user):
    run = await database_sync_to_async(setup_run)(make_user, visibility="private")
    owner = run.created_by
    bob, carol = await database_sync_to_async(make_user)("bob"), await database_sync_to_async(make_user)("carol")
    share = f"/api/circuits/{run.circuit_id}/share/"
    await rest(owner, "patch", share, {"grants": [{"username": "bob"}, {"username": "carol"}]})
    bobs, carols = await opened(run, bob), await opened(run, carol)
    await rest(owner, "patch", share, {"grants": [{"username": "carol"}]})
    await assert_closed_for_access(bobs, run)
    await assert_still_live(carols, run)
    await carols.disconnect()


@pytest.mark.parametrize("where", ["share/", ""])  # the share settings, or the circuit itself
async def test_making_the_circuit_private_closes_other_watchers(make_user, where):
    run = await database_sync_to_async(setup_run)(make_user, visibility="public")
    owner = run.created_by
    stranger = await database_sync_to_async(make_user)("stranger")
    anonymous, strangers, owners = await opened(run, AnonymousUser()), await opened(run, stranger), await opened(run, owner)
    await rest(owner, "patch", f"/api/circuits/{run.circuit_id}/{where}", {"visibility": "private"})
    await assert_closed_for_access(anonymous, run)
    await assert_closed_for_access(strangers, run)
    await assert_still_live(owners, run)
    await owners.disconnect()


async def test_deleting_the_circuit_closes_every_watcher(make_user):
    run = await database_sync_to_async(setup_run)(make_user, visibility="public")
    owner = run.created_by
    anonymous, owners = await opened(run, AnonymousUser()), await opened(run, owner)
    await rest(owner, "delete", f"/api/circuits/{run.circuit_id}/")
    await assert_closed_for_access(anonymous, run)
    await assert_closed_for_access(owners, run)


async def test_a_change_that_keeps_access_keeps_the_socket(make_user):
    run = await database_sync_to_async(setup_run)(make_user, visibility="public")
    owner = run.created_by
    await database_sync_to_async(make_user)("bob")
    anonymous = await opened(run, AnonymousUser())
    await rest(owner, "patch", f"/api/circuits/{run.circuit_id}/share/", {"grants": [{"username": "bob"}]})
    await rest(owner, "post", f"/api/circuits/{run.circuit_id}/share/revoke/")  # public: the token was not needed
    await assert_still_live(anonymous, run)
    await anonymous.disconnect()


async def test_a_handshake_while_redis_is_unreachable_closes_with_4503(make_user, settings):
    run = await database_sync_to_async(setup_run)(make_user, visibility="public")
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                                           "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]}}}  # nothing listens there
    comm, connected, _ = await connect(run, AnonymousUser())
    assert connected
    closing = await comm.receive_output()
    assert closing["type"] == "websocket.close" and closing["code"] == LAYER_UNAVAILABLE


async def test_an_unexpected_failure_closes_with_1011_not_a_500(make_user, monkeypatch):
    run = await database_sync_to_async(setup_run)(make_user, visibility="public")

    def broken(self):
        raise RuntimeError("boom: /secret/path REDIS_URL")

    monkeypatch.setattr(RunConsumer, "_visible", database_sync_to_async(broken))
    comm, connected, _ = await connect(run, AnonymousUser())
    assert connected
    closing = await comm.receive_output()
    assert closing == {"type": "websocket.close", "code": SERVER_ERROR, "reason": "server error"}
