"""Watching a run together (runs/consumers.py, runs/watchers.py; docs/collaboration.md),
the run websocket in-process with the real Redis channel layer and the real Redis
presence list:

- presence: pages that `join` see each other (names, their own socket marked, guests
  with no user), a leave updates the others at once, a socket whose server crashed (no
  disconnect ran) is reaped after the TTL, a quiet socket that speaks again comes back;
  sockets that never joined (scripts) get no presence traffic;
- share_view: relayed to the others (not back to the presenter), validated (tick within
  the run's ticks, node in its circuit, types, unknown fields, guests, join first: a clear
  error naming the field, nothing relayed), rate-limited; the last presenter wins;
- access: a grant removed closes the socket and the others' lists drop it."""
import asyncio

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import AnonymousUser

from runs import consumers, watchers
from runs.consumers import ACCESS_ENDED
from runs.models import Run, TickOutput
from tests.runs.test_consumer import _no_task_messages, connect, setup_run  # noqa: F401
from tests.runs.test_consumer_access import rest
from tests.watching import forget_presence_lists

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def joined(run, user, query=""):
    """A run page's socket: connected, snapshot and status read, `join` sent; returns it
    and its first presence message."""
    comm, connected, code = await connect(run, user, query)
    assert connected, code
    assert [(await comm.receive_json_from())["type"] for _ in range(2)] == ["snapshot", "status"]
    await comm.send_json_to({"type": "join"})
    return comm, await next_of(comm, "presence")


async def next_of(comm, kind):
    """The next message of this type (presence lists that are not the one awaited are
    skipped by the callers through `presence_where`)."""
    while True:
        message = await comm.receive_json_from()
        if message["type"] == kind:
            return message
        assert message["type"] in ("presence", "pong"), message


async def presence_where(comm, condition, ping_every=None):
    """Presence messages until one whose list of names ("guest" for a guest) satisfies
    `condition` (pinging meanwhile when asked: a watcher heard from stays on the list)."""
    return await presence_with(comm, lambda ws: condition([w["name"] or "guest" for w in ws]), ping_every)


async def presence_with(comm, condition, ping_every=None):
    """Presence messages until one whose watchers satisfy `condition`."""
    async def wait():
        while True:
            message = await comm.receive_json_from()
            if message["type"] == "presence" and condition(message["watchers"]):
                return message

    if ping_every is None:
        return await wait()
    waiter = asyncio.ensure_future(wait())
    while not waiter.done():
        await comm.send_json_to({"type": "ping"})
        await asyncio.wait([waiter], timeout=ping_every)
    return waiter.result()


def names(presence) -> list[str]:
    return [w["name"] or "guest" for w in presence["watchers"]]


@pytest.fixture(autouse=True)
def _fresh_lists():
    forget_presence_lists()


@pytest.fixture
def grant(make_user):
    def make(run, *usernames):
        from circuits.models import CircuitGrant

        users = [make_user(u) for u in usernames]
        for u in users:
            CircuitGrant.objects.create(circuit=run.circuit, user=u, can_edit=False)
        return users

    return database_sync_to_async(make)


async def test_watchers_see_each_other_join_and_leave(make_user, grant):
    run = await database_sync_to_async(setup_run)(make_user, "public")
    alice = run.created_by
    (bob,) = await grant(run, "bob")
    a, first = await joined(run, alice)
    assert names(first) == ["alice"] and first["watchers"][0]["id"] == first["you"]
    assert first["watchers"][0] == {"id": first["you"], "user": alice.pk, "name": "alice", "sharing": False, "view": None}
    b, bobs = await joined(run, bob)
    assert names(bobs) == ["alice", "bob"] and bobs["you"] == bobs["watchers"][1]["id"] != first["you"]
    await presence_where(a, lambda n: n == ["alice", "bob"])
    guest, guests = await joined(run, AnonymousUser())
    assert guests["watchers"][2]["user"] is None and names(guests) == ["alice", "bob", "guest"]
    # A script that never joined sees none of it, and is on nobody's list.
    script, connected, _ = await connect(run, bob)
    assert connected
    await script.receive_json_from()
    await script.receive_json_from()
    await b.disconnect()
    await presence_where(a, lambda n: n == ["alice", "guest"])
    await presence_where(guest, lambda n: n == ["alice", "guest"])
    assert await script.receive_nothing(timeout=0.3)
    for comm in (a, guest, script):
        await comm.disconnect()
    assert await watchers.listing(run.pk) == []


async def test_a_crashed_socket_is_reaped_and_a_quiet_one_comes_back(make_user, grant, monkeypatch):
    monkeypatch.setattr(watchers, "TTL", 1.5)
    monkeypatch.setattr(consumers, "REAP_EVERY", 0.2)
    run = await database_sync_to_async(setup_run)(make_user)
    (bob,) = await grant(run, "bob")
    a, _ = await joined(run, run.created_by)
    b, _ = await joined(run, bob)
    await presence_where(a, lambda n: n == ["alice", "bob"])
    # Bob's server dies: its task is gone, no disconnect runs, his entry stays in Redis...
    b.future.cancel()
    assert names({"watchers": await watchers.listing(run.pk)}) == ["alice", "bob"]
    # ...until alice's socket (heard from: she pings) reaps it after the TTL.
    await presence_where(a, lambda n: n == ["alice"], ping_every=0.4)
    # A socket that stays quiet past the TTL goes too, and is back when it speaks again.
    c, _ = await joined(run, bob)
    await presence_where(a, lambda n: n == ["alice", "bob"], ping_every=0.4)
    await presence_where(a, lambda n: n == ["alice"], ping_every=0.4)
    await c.send_json_to({"type": "ping"})
    await presence_where(a, lambda n: n == ["alice", "bob"], ping_every=0.4)
    await a.disconnect()
    await c.disconnect()


async def test_shared_view_is_relayed_to_the_others_and_last_presenter_wins(make_user, grant):
    run = await database_sync_to_async(setup_run)(make_user, "public")
    (bob,) = await grant(run, "bob")
    await database_sync_to_async(lambda: [TickOutput.objects.create(run=run, tick=t, deltas={}) for t in (1, 2)])()
    await database_sync_to_async(lambda: Run.objects.filter(pk=run.pk).update(current_tick=2))()
    a, mine = await joined(run, run.created_by)
    b, _ = await joined(run, bob)
    guest, _ = await joined(run, AnonymousUser())
    await a.send_json_to({"type": "share_view", "sharing": True, "tick": 1, "node": None})
    for comm in (b, guest):
        started = await presence_with(comm, lambda ws: any(w["sharing"] for w in ws))
        sharer = started["watchers"][0]
        assert (sharer["name"], sharer["sharing"], sharer["view"]) == ("alice", True, {"tick": 1, "node": None})
    # Moving it: a `view` to the others; the presenter gets nothing back.
    await a.send_json_to({"type": "share_view", "sharing": True, "tick": 2, "node": "big"})
    for comm in (b, guest):
        assert await next_of(comm, "view") == {"type": "view", "from": mine["you"], "name": "alice", "tick": 2, "node": "big"}
    # A late comer gets the view with the list.
    late, lates = await joined(run, bob)
    assert lates["watchers"][0]["view"] == {"tick": 2, "node": "big"}
    # Bob starts sharing: alice's sharing is off (last one wins), on every page.
    await b.send_json_to({"type": "share_view", "sharing": True, "tick": 0, "node": "orders"})
    took_over = await presence_with(a, lambda ws: ws[1]["sharing"])
    assert [(w["name"], w["sharing"], w["view"]) for w in took_over["watchers"]] == [
        ("alice", False, None), ("bob", True, {"tick": 0, "node": "orders"}), ("", False, None), ("bob", False, None)]
    # Stopping: the list says nobody shares.
    await b.send_json_to({"type": "share_view", "sharing": False})
    await presence_with(guest, lambda ws: len(ws) == 4 and not any(w["sharing"] for w in ws))
    for comm in (a, b, guest, late):
        await comm.disconnect()


BAD = [
    ({"type": "share_view", "sharing": True, "tick": 3, "node": None}, "tick", "share_view.tick: 3 is not a tick of run"),
    ({"type": "share_view", "sharing": True, "tick": -1, "node": None}, "tick", "share_view.tick: -1 is not a tick of run"),
    ({"type": "share_view", "sharing": True, "tick": "1", "node": None}, "tick", "share_view.tick: must be a whole number or null, not '1'"),
    ({"type": "share_view", "sharing": True, "tick": True, "node": None}, "tick", "share_view.tick: must be a whole number or null"),
    ({"type": "share_view", "sharing": True, "tick": 0, "node": "nope"}, "node", "share_view.node: run {run}'s circuit has no node 'nope'"),
    ({"type": "share_view", "sharing": True, "tick": 0, "node": 7}, "node", "share_view.node: must be a node id"),
    ({"type": "share_view", "sharing": "yes"}, "sharing", "share_view.sharing: must be true or false, not 'yes'"),
    ({"type": "share_view", "sharing": True, "tick": 0, "colour": "red"}, "colour", "share_view.colour: unknown field"),
    ({"type": "join", "as": "bob"}, "as", "join.as: unknown field"),
]


async def test_a_malformed_share_gets_a_clear_error_and_is_not_relayed(make_user, grant):
    run = await database_sync_to_async(setup_run)(make_user, "public")
    await database_sync_to_async(lambda: Run.objects.filter(pk=run.pk).update(current_tick=2))()
    (bob,) = await grant(run, "bob")
    a, _ = await joined(run, run.created_by)
    b, _ = await joined(run, bob)
    await presence_where(a, lambda n: n == ["alice", "bob"])
    for message, field, text in BAD:
        await a.send_json_to(message)
        error = await next_of(a, "error")
        assert error["field"] == field and error["error"].startswith(text.format(run=run.pk)), (message, error)
    assert await b.receive_nothing(timeout=0.3)  # nothing relayed, nothing changed
    assert not any(w["sharing"] for w in await watchers.listing(run.pk))
    # A guest may not present; a socket that did not join may not either.
    guest, _ = await joined(run, AnonymousUser())
    await guest.send_json_to({"type": "share_view", "sharing": True, "tick": 0, "node": None})
    assert (await next_of(guest, "error"))["error"] == "share_view: sign in to share your view (guests may follow)"
    script, _, _ = await connect(run, bob)
    await script.receive_json_from(), await script.receive_json_from()
    await script.send_json_to({"type": "share_view", "sharing": True, "tick": 0, "node": None})
    assert (await script.receive_json_from())["error"] == 'share_view: send {"type": "join"} first'
    await presence_where(b, lambda n: n == ["alice", "bob", "guest"])
    assert await b.receive_nothing(timeout=0.3)
    for comm in (a, b, guest, script):
        await comm.disconnect()


async def test_share_messages_are_rate_limited(make_user, grant, monkeypatch):
    # The window covers the whole burst however slowly a busy machine delivers it: 20 of
    # the 31 messages (the join counts) pass, whatever the timing.
    monkeypatch.setattr(consumers, "RELAY_WINDOW", 3600.0)
    run = await database_sync_to_async(setup_run)(make_user)
    await database_sync_to_async(lambda: Run.objects.filter(pk=run.pk).update(current_tick=0))()
    (bob,) = await grant(run, "bob")
    a, _ = await joined(run, run.created_by)  # one join: 1 of the 20
    b, _ = await joined(run, bob)
    await presence_where(a, lambda n: n == ["alice", "bob"])
    for i in range(30):
        await a.send_json_to({"type": "share_view", "sharing": True, "tick": 0, "node": ["orders", "big"][i % 2]})
    errors = [(await next_of(a, "error"))["error"] for _ in range(11)]
    assert set(errors) == {f"share_view: too many messages: at most {consumers.RELAY_LIMIT} join/share_view messages "
                           f"a {consumers.RELAY_WINDOW:g} s; this one was not relayed"}
    # The first share started sharing (a presence, not a view); the next 18 are relayed.
    views = [await next_of(b, "view") for _ in range(18)]
    assert [v["node"] for v in views] == [["orders", "big"][i % 2] for i in range(1, 19)]
    assert await a.receive_nothing(timeout=0.5) and await b.receive_nothing(timeout=0.5)  # no more errors, no more views
    await a.disconnect()
    await b.disconnect()


async def test_access_taken_away_closes_the_socket_and_takes_it_off_the_list(make_user, grant):
    run = await database_sync_to_async(setup_run)(make_user)
    owner = run.created_by
    (bob,) = await grant(run, "bob")
    a, _ = await joined(run, owner)
    b, _ = await joined(run, bob)
    await presence_where(a, lambda n: n == ["alice", "bob"])
    await b.send_json_to({"type": "share_view", "sharing": True, "tick": 0, "node": None})
    await presence_where(a, lambda n: True)
    await rest(owner, "patch", f"/api/circuits/{run.circuit_id}/share/", {"grants": []})
    gone = await presence_where(a, lambda n: n == ["alice"])
    assert not any(w["sharing"] for w in gone["watchers"])
    while True:
        message = await b.receive_output()
        if message["type"] == "websocket.close":
            assert message["code"] == ACCESS_ENDED
            break
    await a.disconnect()
