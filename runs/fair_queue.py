"""Fair queueing of the recomputations a request can ask for (explain, inspect, verify):
each runs on the verification queue's worker(s), for seconds to minutes, so no requester
may fill that queue and starve the others (issue 31).

- Who asks: a `Requester` is a signed-in user (`user:<id>`) or, without a session, a
  client address (`anon:<address>`, as DRF's throttles count it: REMOTE_ADDR, or the
  address NUM_PROXIES from the right of X-Forwarded-For behind proxies).
- Priority: the circuit's owner and its operators first (Celery priority 0), then other
  signed-in readers (3), then anonymous readers of a shared run (6): the Redis broker
  keeps one list per priority step and a worker always takes the best one first
  (kombu's PRIORITY_STEPS), so an owner's request waits at most for the one job running.
- Caps: each requester may have RECOMPUTE_MAX_PER_REQUESTER requests queued or running;
  the readers who do not operate a run (everyone but its owner and operators), all
  together, RECOMPUTE_MAX_PER_RUN on that run. One more is refused with 429 and a
  Retry-After (RECOMPUTE_RETRY_AFTER_S) and changes nothing.
- A slot is a member of a Redis sorted set scored by its expiry, taken and counted in one
  Lua script (atomic across web processes); the worker frees it when the job ends
  (`release`), and a slot whose worker crashed expires after RECOMPUTE_SLOT_TTL_S.
  Redis unreachable: admitted (the broker is the same Redis; the send will say so).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from django.conf import settings

from circuits.services import ServiceError

log = logging.getLogger(__name__)

OPERATOR, READER, ANONYMOUS = 0, 3, 6  # Celery priorities on Redis: lower goes first

_ACQUIRE = """
local now, expires = tonumber(ARGV[1]), tonumber(ARGV[2])
local member = ARGV[5]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 1 end
if KEYS[2] ~= KEYS[1] then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 2 end
  redis.call('ZADD', KEYS[2], expires, member)
  redis.call('EXPIREAT', KEYS[2], math.ceil(expires))
end
redis.call('ZADD', KEYS[1], expires, member)
redis.call('EXPIREAT', KEYS[1], math.ceil(expires))
redis.call('SET', KEYS[3], KEYS[1] .. '\\n' .. KEYS[2], 'EXAT', math.ceil(expires))
return 0
"""

_RELEASE = """
local held = redis.call('GET', KEYS[1])
if not held then return 0 end
local cut = string.find(held, '\\n', 1, true)
redis.call('ZREM', string.sub(held, 1, cut - 1), ARGV[1])
redis.call('ZREM', string.sub(held, cut + 1), ARGV[1])
redis.call('DEL', KEYS[1])
return 1
"""

_redis = None


def _client():
    global _redis
    if _redis is None:
        import redis

        _redis = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
    return _redis


def _key(*parts) -> str:
    return ":".join([settings.CELERY_TASK_DEFAULT_QUEUE, "recompute", *map(str, parts)])


@dataclass(frozen=True)
class Requester:
    ident: str  # user:<id> or anon:<address>
    priority: int  # OPERATOR, READER or ANONYMOUS

    @property
    def operates(self) -> bool:
        return self.priority == OPERATOR


#: Work queued by the system itself (tests, the sweeper): first, and never capped.
SYSTEM = Requester("system", OPERATOR)


def requester_of(request, run) -> Requester:
    """Who is asking about `run`, and how urgent their requests are."""
    from rest_framework.throttling import BaseThrottle

    from circuits.access import can_operate

    user = request.user
    if user.is_authenticated:
        return Requester(f"user:{user.pk}", OPERATOR if can_operate(user, run.circuit) else READER)
    return Requester(f"anon:{BaseThrottle().get_ident(request)}", ANONYMOUS)


def too_many(requester: Requester, what: str, limit: int, scope: str) -> ServiceError:
    retry = settings.RECOMPUTE_RETRY_AFTER_S
    return ServiceError(
        f"Too many {what}: {scope} {limit} queued or running explanations, inspections and verifications at a time. "
        f"Try again in {retry} s, or when one of them is done.", 429,
        [{"field": "requester", "message": f"{requester.ident} is at its limit of {limit}" if scope.startswith("you")
          else f"the run's shared readers are at their limit of {limit}"}], headers={"Retry-After": str(retry)})


def admit(requester: Requester, run_id: int, kind: str, job_id: int) -> None:
    """Take a slot for a queued job (kind: explain, inspect, verify) or raise the 429.
    Call it inside the transaction that creates the job: the 429 rolls it back."""
    if requester is SYSTEM:
        return
    member = f"{kind}:{job_id}"
    now = time.time()
    own = _key("requester", requester.ident)
    shared = own if requester.operates else _key("run", run_id)
    try:
        refused = _client().eval(_ACQUIRE, 3, own, shared, _key("job", member), now, now + settings.RECOMPUTE_SLOT_TTL_S,
                                 settings.RECOMPUTE_MAX_PER_REQUESTER, settings.RECOMPUTE_MAX_PER_RUN, member)
    except Exception as e:  # noqa: BLE001 - Redis down: admit (the broker is down too; the send says so)
        log.warning("event=recompute_slot_failed requester=%s job=%s error=%r", requester.ident, member, e)
        return
    if refused == 1:
        log.info("event=recompute_refused requester=%s run=%s kind=%s scope=requester", requester.ident, run_id, kind)
        raise too_many(requester, "requests", settings.RECOMPUTE_MAX_PER_REQUESTER, "you may have")
    if refused == 2:
        log.info("event=recompute_refused requester=%s run=%s kind=%s scope=run", requester.ident, run_id, kind)
        raise too_many(requester, "requests on this run", settings.RECOMPUTE_MAX_PER_RUN,
                       "the readers who do not operate it may have")


def release(kind: str, job_id: int) -> None:
    """The job ended (done, failed, or not to be done): its slot is free."""
    member = f"{kind}:{job_id}"
    try:
        _client().eval(_RELEASE, 1, _key("job", member), member)
    except Exception as e:  # noqa: BLE001 - the slot expires by itself
        log.warning("event=recompute_release_failed job=%s error=%r", member, e)


def held(requester: Requester) -> int:
    """How many slots the requester holds now (expired ones not counted)."""
    return _client().zcount(_key("requester", requester.ident), time.time(), "+inf")


def clear() -> None:
    """Forget every slot on this queue (tests; an operator resetting the caps)."""
    client = _client()
    for key in client.scan_iter(match=_key("*"), count=500):
        client.delete(key)
