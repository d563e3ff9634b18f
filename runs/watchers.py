"""Who is watching a run (docs/collaboration.md, "Watching a run together"): the run
page's presence list, kept in Redis so every web process serving the run's sockets reads
one list, and so that a socket whose server crashed still goes.

Per run, two keys (under the channel layer's prefix, CHANNELS_PREFIX):

- `<prefix>:watchers:<run>`: a sorted set of watcher ids scored by their expiry (now +
  TTL). A socket's entry is refreshed whenever its browser sends anything (the page pings
  every 15 s); one not refreshed for TTL seconds is reaped by any other socket of the run
  (a dropped connection, a crashed tab or server: nobody called `leave`).
- `<prefix>:watchers:<run>:data`: a hash, watcher id -> JSON {id, user, name, sharing,
  view, since}.

Both keys expire themselves a while after the last refresh, so a run nobody watches
leaves nothing behind. Sharing is "last one wins": starting to share turns everyone
else's sharing off, in one Lua script (two presenters starting at once still end with one).
Presence is never stored in the database.
"""
from __future__ import annotations

import asyncio
import json
import time
import weakref

from django.conf import settings

#: A watcher not heard from for this long is taken off the list (3 heartbeats of the page).
TTL = 45.0

_REAP = """
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
for _, id in ipairs(gone) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
end
return gone
"""

# ARGV: my id, my entry's JSON (with sharing true). Turns every other sharer's sharing off.
_SHARE = """
local all = redis.call('HGETALL', KEYS[2])
for i = 1, #all, 2 do
  if all[i] ~= ARGV[1] then
    local entry = cjson.decode(all[i + 1])
    if entry['sharing'] then
      entry['sharing'] = false
      entry['view'] = cjson.null
      redis.call('HSET', KEYS[2], all[i], cjson.encode(entry))
    end
  end
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
"""

_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, object]" = weakref.WeakKeyDictionary()


def _client():
    """One asyncio Redis client per event loop (a pool is bound to the loop that made it)."""
    import redis.asyncio as redis

    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = _clients[loop] = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
    return client


def _keys(run_id: int) -> tuple[str, str]:
    prefix = settings.CHANNEL_LAYERS["default"].get("CONFIG", {}).get("prefix", "dbspweb")
    base = f"{prefix}:watchers:{run_id}"
    return base, f"{base}:data"


async def _touch(run_id: int, watcher_id: str, entry: dict | None) -> None:
    """Put the watcher's expiry at now + TTL (and its entry, when given)."""
    expiry_key, data_key = _keys(run_id)
    async with _client().pipeline(transaction=True) as pipe:
        pipe.zadd(expiry_key, {watcher_id: time.time() + TTL})
        if entry is not None:
            pipe.hset(data_key, watcher_id, json.dumps(entry))
        for key in (expiry_key, data_key):
            pipe.expire(key, int(TTL * 2) + 1)
        await pipe.execute()


async def join(run_id: int, watcher_id: str, user_id: int | None, name: str) -> None:
    entry = {"id": watcher_id, "user": user_id, "name": name, "sharing": False, "view": None, "since": time.time()}
    await _touch(run_id, watcher_id, entry)


async def refresh(run_id: int, watcher_id: str) -> bool:
    """The watcher was heard from: push its expiry on. False when its entry had gone
    (reaped while the socket stayed quiet): the caller joins again."""
    _, data_key = _keys(run_id)
    if not await _client().hexists(data_key, watcher_id):
        return False
    await _touch(run_id, watcher_id, None)
    return True


async def leave(run_id: int, watcher_id: str) -> bool:
    """Take the watcher off the list; True when it was on it."""
    expiry_key, data_key = _keys(run_id)
    async with _client().pipeline(transaction=True) as pipe:
        pipe.zrem(expiry_key, watcher_id)
        pipe.hdel(data_key, watcher_id)
        removed, _ = await pipe.execute()
    return bool(removed)


async def reap(run_id: int) -> list[str]:
    """Take off the list every watcher not heard from for TTL seconds; their ids."""
    gone = await _client().eval(_REAP, 2, *_keys(run_id), time.time())
    return [g.decode() if isinstance(g, bytes) else g for g in gone]


async def share(run_id: int, watcher_id: str, view: dict | None) -> bool:
    """Set the watcher's shared view (None: it stops sharing). Starting to share stops
    everyone else's (last one wins). True when someone's `sharing` changed (the list
    changed), False when only the view moved."""
    _, data_key = _keys(run_id)
    raw = await _client().hget(data_key, watcher_id)
    if raw is None:
        return False
    entry = json.loads(raw)
    was = entry["sharing"]
    entry["sharing"], entry["view"] = view is not None, view
    if view is None:
        await _client().hset(data_key, watcher_id, json.dumps(entry))
        return was
    await _client().eval(_SHARE, 2, *_keys(run_id), watcher_id, json.dumps(entry))
    return not was


async def listing(run_id: int) -> list[dict]:
    """Everyone on the list, the first to come first (entries as stored, `since` removed)."""
    expiry_key, data_key = _keys(run_id)
    async with _client().pipeline(transaction=False) as pipe:
        pipe.zrangebyscore(expiry_key, time.time(), "+inf")
        pipe.hgetall(data_key)
        alive, data = await pipe.execute()
    alive = {a.decode() for a in alive}
    entries = [json.loads(v) for k, v in data.items() if k.decode() in alive]
    entries.sort(key=lambda e: (e.get("since", 0), e["id"]))
    return [{k: v for k, v in e.items() if k != "since"} for e in entries]
