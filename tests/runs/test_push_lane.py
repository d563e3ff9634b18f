"""The push lane (runs/api/push_lane.py) through the real ASGI application: a plain token
push is logged in a group commit without Django's request path, exactly as Django's view
logs it (same Push row, same answer); everything the lane does not accept is answered by
Django's view, byte for byte as with the lane off, and stores nothing."""
from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from django.core.signals import request_started
from django.test import override_settings
from rest_framework.authtoken.models import Token

from circuits.models import CircuitGrant
from circuits.services import plan_for
from dbsp import arrow_change
from runs.api import push_lane
from runs.models import Push, Run

pytestmark = pytest.mark.django_db(transaction=True)

ADA = {"id": 1, "customer": "ada", "amount": 250}
BOB = {"id": 2, "customer": "bob", "amount": 90}
HOST = "localhost"


@pytest.fixture
def app():
    from dbspweb.asgi import application

    return application


@pytest.fixture(autouse=True)
def _lane_connection_closed():
    """The lane's writer holds a connection of its own: closed after each test, so the
    test database can be flushed and dropped (PostgreSQL refuses while one is open)."""
    yield
    push_lane.close_connection()


@pytest.fixture
def run(make_user, circuit_of):
    alice = make_user("alice")
    circuit = circuit_of(alice)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    run.token = Token.objects.create(user=alice).key
    return run


@pytest.fixture
def django_requests():
    """How many requests Django's handler started (the lane's pushes start none)."""
    seen = []

    def count(sender, **kwargs):
        seen.append(kwargs.get("scope", {}).get("path"))

    request_started.connect(count)
    yield seen
    request_started.disconnect(count)


def post(app, path, body, token, headers=None, content_type="application/json"):
    async def go():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{HOST}") as client:
            return await client.post(path, content=body if isinstance(body, bytes) else json.dumps(body).encode(),
                                     headers={"Authorization": f"Token {token}", "Content-Type": content_type,
                                              **(headers or {})})

    return asyncio.run(go())


def push_path(run, input_name="orders"):
    return f"/api/runs/{run.pk}/inputs/{input_name}/push/"


def logged(run):
    """Each logged push as (sequence, input, rows as dicts with weights, row count, user)."""
    schema = plan_for(run.version).inputs["orders"]
    out = []
    for p in Push.objects.filter(run=run).order_by("sequence"):
        table = arrow_change.from_ipc(p.change)
        out.append((p.sequence, p.input, sorted(map(json.dumps, arrow_change.records_json(table, schema))), p.row_count, p.user_id))
    return out


def test_a_lane_push_is_logged_as_django_logs_it(app, run, django_requests):
    lane = post(app, push_path(run), [{"insert": ADA}, {"insert": BOB}], run.token)
    assert lane.status_code == 202, lane.text
    assert lane.json() == {"token": f"{run.pk}:1", "sequence": 1, "duplicate": False}
    assert django_requests == []  # Django's request path never ran
    with override_settings(PUSH_LANE=False):
        slow = post(app, push_path(run), [{"insert": {**ADA, "id": 3}}, {"insert": {**BOB, "id": 4}}], run.token)
    assert slow.status_code == 202 and slow.json() == {"token": f"{run.pk}:2", "sequence": 2, "duplicate": False}
    assert django_requests == [push_path(run)]
    # The same headers (the server adds its own date and server ones in production).
    assert sorted(lane.headers.keys()) == sorted(slow.headers.keys())
    for name in lane.headers:
        if name != "content-length":
            assert lane.headers[name] == slow.headers[name], name
    rows = logged(run)
    assert [r[0] for r in rows] == [1, 2] and {r[1] for r in rows} == {"orders"}
    assert rows[0][2] == sorted(json.dumps({"data": r, "weight": 1}) for r in (ADA, BOB))
    assert rows[0][3:] == rows[1][3:] == (2, run.created_by_id)  # row count, who pushed it
    assert Run.objects.get(pk=run.pk).last_sequence == 2


def test_concurrent_lane_pushes_each_logged_once_in_order_of_sequence(app, run):
    async def many():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{HOST}",
                                     headers={"Authorization": f"Token {run.token}"}) as client:
            return await asyncio.gather(*[client.post(push_path(run), json=[{"insert": {**ADA, "id": 100 + i}}])
                                          for i in range(40)])

    answers = asyncio.run(many())
    assert [a.status_code for a in answers] == [202] * 40
    sequences = sorted(a.json()["sequence"] for a in answers)
    assert sequences == list(range(1, 41))
    rows = logged(run)
    assert [r[0] for r in rows] == list(range(1, 41))
    # each client's row is in the push its token names
    by_sequence = {r[0]: r[2] for r in rows}
    for i, answer in enumerate(answers):
        assert by_sequence[answer.json()["sequence"]] == [json.dumps({"data": {**ADA, "id": 100 + i}, "weight": 1})]


REFUSED = {
    "unknown column": ([{"insert": {**ADA, "colour": "red"}}], {}, 400),
    "wrong type": ([{"insert": {**ADA, "amount": "lots"}}], {}, 400),
    "NULL key": ([{"insert": {**ADA, "id": None}}], {}, 400),
    "not an array": (b'"ada"', {}, 400),
    "malformed JSON": (b'[{"insert": {"id": 1,', {}, 400),
    "NaN": (b'[{"insert": {"id": 1, "customer": "ada", "amount": NaN}}]', {}, 400),
    "delete of an absent row": ([{"delete": ADA}], {}, 400),
    "unknown input": ([{"insert": ADA}], {"input": "shipments"}, 404),
    "bad token": ([{"insert": ADA}], {"token": "0" * 40}, 403),
    # out of the bigint range: orjson reads these as doubles (-2^63 and 2^64 as floats),
    # which the lane used to take as -9223372036854775808 (issue 30)
    "bigint below the range": ([{"insert": {**ADA, "id": -9223372036854775809}}], {}, 400),
    "bigint far below the range": ([{"insert": {**ADA, "id": -9223372036854776832}}], {}, 400),
    "bigint above the range": ([{"insert": {**ADA, "id": 9223372036854775808}}], {}, 400),
    "bigint above 2^64": ([{"insert": {**ADA, "amount": 18446744073709551616}}], {}, 400),
    "an integral double past 2^53": (b'[{"insert": {"id": 1, "customer": "ada", "amount": 1e19}}]', {}, 400),
}


@pytest.mark.parametrize("case", REFUSED)
def test_what_the_lane_refuses_django_answers_as_with_the_lane_off(app, run, case, django_requests):
    body, how, status = REFUSED[case]
    path, token = push_path(run, how.get("input", "orders")), how.get("token", run.token)
    with_lane = post(app, path, body, token)
    assert django_requests == [path]  # Django answered it
    with override_settings(PUSH_LANE=False):
        without = post(app, path, body, token)
    assert with_lane.status_code == without.status_code == status, with_lane.text
    assert with_lane.content == without.content
    assert Push.objects.filter(run=run).count() == 0 and Run.objects.get(pk=run.pk).last_sequence == 0


def test_a_user_who_may_not_operate_the_run_is_answered_by_django(app, run, make_user, django_requests):
    bob = make_user("bob")
    bob_token = Token.objects.create(user=bob).key
    hidden = post(app, push_path(run), [{"insert": ADA}], bob_token)  # a private circuit: 404
    run.circuit.visibility = "public"
    run.circuit.save()
    seen = post(app, push_path(run), [{"insert": ADA}], bob_token)  # may read, may not operate: 403
    assert (hidden.status_code, seen.status_code) == (404, 403)
    assert len(django_requests) == 2 and Push.objects.count() == 0
    CircuitGrant.objects.create(circuit=run.circuit, user=bob, can_operate=True)
    granted = post(app, push_path(run), [{"insert": ADA}], bob_token)
    assert granted.status_code == 202 and len(django_requests) == 2  # the lane took it
    assert logged(run)[0][4] == bob.pk


def test_stopped_runs_and_session_cookies_go_to_django(app, run, django_requests):
    cookie = post(app, push_path(run), [{"insert": ADA}], run.token, headers={"Cookie": "sessionid=abc"})
    assert cookie.status_code == 202 and django_requests == [push_path(run)]  # Django took it (token auth)
    Run.objects.filter(pk=run.pk).update(status="stopped")
    stopped = post(app, push_path(run), [{"insert": BOB}], run.token)
    assert stopped.status_code == 409 and "stopped" in stopped.json()["detail"]
    assert len(django_requests) == 2 and Push.objects.filter(run=run).count() == 1


@override_settings(MAX_PENDING_PUSHES=3)
def test_a_group_commit_takes_what_backpressure_allows_and_leaves_the_rest(run):
    """One batch of five pushes into a run that accepts three more: the first three are
    logged, the last two are left to Django (which answers 429), nothing of them stored;
    a push with a bad delete in the middle of the batch is left out alone."""
    pushes = [push_lane.LanePush(run.pk, "orders", run.token, [{"insert": {**ADA, "id": i}}]) for i in range(5)]
    pushes.insert(1, push_lane.LanePush(run.pk, "orders", run.token, [{"delete": BOB}]))
    results = push_lane.log_batch(pushes)
    assert [r and r.sequence for r in results] == [1, None, 2, 3, None, None]
    rows = logged(run)
    assert [r[2] for r in rows] == [[json.dumps({"data": {**ADA, "id": i}, "weight": 1})] for i in range(3)]
    assert Run.objects.get(pk=run.pk).last_sequence == 3


def test_a_delete_in_a_batch_sees_the_rows_inserted_before_it_in_the_batch(run):
    pushes = [push_lane.LanePush(run.pk, "orders", run.token, [{"insert": ADA}]),
              push_lane.LanePush(run.pk, "orders", run.token, [{"delete": ADA}]),
              push_lane.LanePush(run.pk, "orders", run.token, [{"delete": ADA}])]
    assert [r and r.sequence for r in push_lane.log_batch(pushes)] == [1, 2, None]


def test_a_push_with_a_new_idempotency_key_goes_through_the_lane_and_a_repeat_to_django(app, run, django_requests):
    """A new key: the lane logs the push with it (202, the same headers as Django's). The
    same key again: Django answers, 200 with the first push's token for the same data,
    409 for other data, and stores nothing."""
    first = post(app, push_path(run), [{"insert": ADA}], run.token, headers={"Idempotency-Key": "order-1"})
    assert first.status_code == 202 and first.json() == {"token": f"{run.pk}:1", "sequence": 1, "duplicate": False}
    assert django_requests == []
    assert Push.objects.get(run=run, sequence=1).idempotency_key == "order-1"
    again = post(app, push_path(run), [{"insert": ADA}], run.token, headers={"Idempotency-Key": "order-1"})
    assert again.status_code == 200 and again.json() == {"token": f"{run.pk}:1", "sequence": 1, "duplicate": True}
    other = post(app, push_path(run), [{"insert": BOB}], run.token, headers={"Idempotency-Key": "order-1"})
    assert other.status_code == 409 and "different push" in other.json()["detail"]
    assert django_requests == [push_path(run)] * 2
    with override_settings(PUSH_LANE=False):
        slow = post(app, push_path(run), [{"insert": BOB}], run.token, headers={"Idempotency-Key": "order-2"})
    assert slow.status_code == 202 and slow.json()["sequence"] == 2
    assert sorted(first.headers.keys()) == sorted(slow.headers.keys())
    assert all(first.headers[n] == slow.headers[n] for n in first.headers if n != "content-length")
    assert [(p.sequence, p.idempotency_key) for p in Push.objects.filter(run=run).order_by("sequence")] == [
        (1, "order-1"), (2, "order-2")]


@pytest.mark.parametrize("key", ["k" * 201, "a\x00b"])
def test_an_idempotency_key_django_refuses_is_answered_by_django(app, run, django_requests, key):
    with_lane = post(app, push_path(run), [{"insert": ADA}], run.token, headers={"Idempotency-Key": key})
    with override_settings(PUSH_LANE=False):
        without = post(app, push_path(run), [{"insert": ADA}], run.token, headers={"Idempotency-Key": key})
    assert with_lane.status_code == without.status_code == 400 and with_lane.content == without.content
    assert len(django_requests) == 2 and Push.objects.filter(run=run).count() == 0


def test_one_idempotency_key_twice_in_a_batch_is_logged_once(run):
    """Two pushes with one key in one group commit: the first is logged with it, the
    second is left to Django (which then finds the first); other keys go in."""
    pushes = [push_lane.LanePush(run.pk, "orders", run.token, [{"insert": ADA}], "k1"),
              push_lane.LanePush(run.pk, "orders", run.token, [{"insert": ADA}], "k1"),
              push_lane.LanePush(run.pk, "orders", run.token, [{"insert": BOB}], "k2")]
    assert [r and r.sequence for r in push_lane.log_batch(pushes)] == [1, None, 2]
    assert [r and r.sequence for r in push_lane.log_batch(pushes[:1])] == [None]  # used in the run now
    assert [(p.sequence, p.idempotency_key) for p in Push.objects.filter(run=run).order_by("sequence")] == [(1, "k1"), (2, "k2")]
