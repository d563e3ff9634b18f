"""GET /api/runs/<id>/nodes/<node>/?tick=&kind=delta|integral&page=...: the node inspector.

The first request for a tick queues its inspection and answers 202 with the progress;
the inspection is carried out by the workers' own code (workers/inspection.py: the
reference evaluator over the run's applied input log, written as Arrow files), here
called where the seam sends it (runs/dispatch.py inspect) once the request commits; a
real Celery worker on the verification queue does it in
tests/browser/test_node_inspector_browser.py. Later requests page the stored files.

Expected rows are worked out by hand from the pushes (transactions and transitive
closure demos), not taken from the code under test. A 10^6-row state is paged from
files written directly (its full recomputation is measured in bench/README.md)."""
import json
import random
import time

import pyarrow as pa
import pytest

from circuits import services
from runs import inspection_store
from runs.models import Inspection, Push, Run, TickOutput
from tests.conftest import EXAMPLES, example
from workers.inspection import inspect

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("api_answers_follow_the_schema")]

TRANSACTIONS = [(0, 1, 2, 50), (1, 2, 3, 30), (2, 3, 1, 20)]  # id, from_acct, to_acct, amount: one tick each
EDGES = [[(0, 1, 1), (1, 2, 1), (2, 3, 1)], [(3, 4, 1)], [(1, 2, -1)], [(1, 2, 1), (0, 1, -1)]]  # src, dst, weight per tick


@pytest.fixture(autouse=True)
def stored_in(settings, tmp_path, monkeypatch):
    settings.INSPECT_DIR = tmp_path / "inspect"
    sent = []
    monkeypatch.setattr("runs.dispatch.inspect", lambda inspection_id, **_: sent.append(inspection_id) or inspect(inspection_id) is not None)
    return sent


def run_of(user, name, ticks, visibility="private"):
    """A run of an example circuit whose pushes (one per tick: input -> records) are applied."""
    circuit = services.create_circuit(user, name, "", visibility, example(name))
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=user, status="running",
                             current_tick=len(ticks) - 1, last_sequence=len(ticks))
    for tick, pushes in enumerate(ticks):
        for input_name, records in pushes.items():
            Push.objects.create(run=run, sequence=tick + 1, input=input_name, records=records, row_count=len(records), applied_tick=tick)
    return run


@pytest.fixture
def transactions(make_user):
    return run_of(make_user("alice"), "transactions", [
        {"transactions": [{"data": {"id": i, "from_acct": f, "to_acct": t, "amount": a}, "weight": 1}]} for i, f, t, a in TRANSACTIONS])


@pytest.fixture
def closure(make_user):
    return run_of(make_user("carol"), "transitive_closure", [
        {"edges": [{"data": {"src": s, "dst": d}, "weight": w} for s, d, w in tick]} for tick in EDGES])


def inspected(api, url, django_capture_on_commit_callbacks, **params):
    """The first request queues the inspection (202), the worker runs on commit; then 200."""
    with django_capture_on_commit_callbacks(execute=True):
        first = api.get(url, params)
    if first.status_code == 202:
        assert first.json()["status"] == "queued" and first.json()["progress"] == 0.0
        response = api.get(url, params)
    else:
        response = first
    assert response.status_code == 200, response.json()
    assert response.json()["status"] == "done", response.json()
    return response.json()


def rows(body):
    return [(tuple(r["data"].values()), r["weight"]) for r in body["rows"]]


def test_an_intermediate_nodes_contents_and_delta_at_two_ticks(transactions, client_for, stored_in, django_capture_on_commit_callbacks):
    api = client_for(transactions.created_by)
    url = f"/api/runs/{transactions.pk}/nodes/by_account/"
    # credits per to_acct joined with debits per from_acct on the account
    body = inspected(api, url, django_capture_on_commit_callbacks, tick=2, kind="integral", sort="credits", desc=1)
    assert [c["name"] for c in body["columns"]] == ["to_acct", "credits", "from_acct", "debits"]
    assert rows(body) == [((2, 50, 2, 30), 1), ((3, 30, 3, 20), 1), ((1, 20, 1, 50), 1)]
    assert (body["tick"], body["kind"], body["count"], body["total"], body["pages"], body["operator"]) == (2, "integral", 3, 3, 1, "join")
    assert body["sizes"] | {"iterations": None} == {"delta_rows": 2, "integral_rows": 3, "inserted": 2, "deleted": 0, "iterations": None}

    body = inspected(api, url, django_capture_on_commit_callbacks, tick=1, kind="delta")
    assert rows(body) == [((2, 50, 2, 30), 1)]
    body = inspected(api, url, django_capture_on_commit_callbacks, tick=1, kind="integral")
    assert rows(body) == [((2, 50, 2, 30), 1)]
    assert len(stored_in) == 2  # one inspection per tick, each computed once, whatever node and kind are read
    assert Inspection.objects.filter(run=transactions).count() == 2


def test_a_changed_aggregate_shows_minus_and_plus_rows_and_filters(transactions, client_for, django_capture_on_commit_callbacks):
    api = client_for(transactions.created_by)
    url = f"/api/runs/{transactions.pk}/nodes/sum_of_balances/"
    body = inspected(api, url, django_capture_on_commit_callbacks, tick=2, sort="@weight")
    assert rows(body) == [((20,), -1), ((0,), 1)]  # the total of balances went from 20 to 0
    assert (body["sizes"]["inserted"], body["sizes"]["deleted"]) == (1, 1)
    assert rows(inspected(api, url, django_capture_on_commit_callbacks, tick=2, sign="negative")) == [((20,), -1)]
    assert rows(inspected(api, url, django_capture_on_commit_callbacks, tick=2, kind="integral")) == [((0,), 1)]

    balances = f"/api/runs/{transactions.pk}/nodes/balances/"
    body = inspected(api, balances, django_capture_on_commit_callbacks, tick=2, kind="integral", sort="balance")
    assert rows(body) == [((1, -30), 1), ((3, 10), 1), ((2, 20), 1)]
    assert rows(inspected(api, balances, django_capture_on_commit_callbacks, tick=2, kind="integral", filter="account:3")) == [((3, 10), 1)]
    assert rows(inspected(api, balances, django_capture_on_commit_callbacks, tick=2, kind="integral", q="-3")) == [((1, -30), 1)]
    two = inspected(api, balances, django_capture_on_commit_callbacks, tick=2, kind="integral", sort="account", page_size=2, page=2)
    assert rows(two) == [((3, 10), 1)] and (two["pages"], two["count"]) == (2, 3)


def test_an_input_and_the_runs_own_state_sizes(transactions, client_for, django_capture_on_commit_callbacks):
    TickOutput.objects.create(run=transactions, tick=2, deltas={}, stats={"transactions": {"rows_in": 1}, "by_account": {"state_rows": 6, "ms": 1.5}})
    api = client_for(transactions.created_by)
    body = inspected(api, f"/api/runs/{transactions.pk}/nodes/transactions/", django_capture_on_commit_callbacks, kind="integral")
    assert body["tick"] == 2  # the current tick by default
    assert rows(body) == [(t, 1) for t in TRANSACTIONS]
    assert body["stats"] == {"rows_in": 1}
    body = inspected(api, f"/api/runs/{transactions.pk}/nodes/by_account/", django_capture_on_commit_callbacks)
    assert body["stats"] == {"state_rows": 6, "ms": 1.5}


def test_nodes_inside_a_fixed_point(closure, client_for, django_capture_on_commit_callbacks):
    api = client_for(closure.created_by)
    paths = f"/api/runs/{closure.pk}/nodes/paths/"
    body = inspected(api, paths, django_capture_on_commit_callbacks, tick=0, kind="integral")
    assert rows(body) == [((0, 1), 1), ((0, 2), 1), ((0, 3), 1), ((1, 2), 1), ((1, 3), 1), ((2, 3), 1)]
    sizes = [i["rows"] for i in body["sizes"]["iterations"]]
    assert sizes[:3] == [3, 5, 6] and sizes[-1] == 6  # the edges, then paths of 2 hops, then of 3
    assert body["operator"] == "distinct"

    body = inspected(api, paths, django_capture_on_commit_callbacks, tick=1, kind="integral")
    assert rows(body) == [((s, d), 1) for s in range(5) for d in range(s + 1, 5)]  # 0->1->2->3->4: every pair
    body = inspected(api, paths, django_capture_on_commit_callbacks, tick=2, kind="delta")  # 1->2 deleted
    assert rows(body) == [((0, 2), -1), ((0, 3), -1), ((0, 4), -1), ((1, 2), -1), ((1, 3), -1), ((1, 4), -1)]
    body = inspected(api, paths, django_capture_on_commit_callbacks, tick=2, kind="integral")
    assert rows(body) == [((0, 1), 1), ((2, 3), 1), ((2, 4), 1), ((3, 4), 1)]

    group = inspected(api, f"/api/runs/{closure.pk}/nodes/tc/", django_capture_on_commit_callbacks, tick=2, kind="integral")
    assert group["export"] == "closure_out" and rows(group) == rows(body)  # a fixed point shows its export
    out = inspected(api, f"/api/runs/{closure.pk}/nodes/closure/", django_capture_on_commit_callbacks, tick=3, kind="integral")
    assert rows(out) == [((1, 2), 1), ((1, 3), 1), ((1, 4), 1), ((2, 3), 1), ((2, 4), 1), ((3, 4), 1)]


@pytest.mark.parametrize("params, field", [
    ({"tick": "3"}, "tick"), ({"tick": "-1"}, "tick"), ({"tick": "x"}, "tick"), ({"kind": "all"}, "kind"),
    ({"page": "0"}, "page"), ({"page": "two"}, "page"), ({"page_size": "5000"}, "page_size"),
    ({"sort": "__w"}, "sort"), ({"sort": "nope"}, "sort"), ({"desc": "maybe"}, "desc"),
    ({"filter": "nope:1"}, "filter"), ({"filter": "amount:lots"}, "filter"), ({"filter": "amount"}, "filter"),
    ({"filter": "amount:1.5"}, "filter"), ({"sign": "plus"}, "sign"), ({"q": "x" * 201}, "q"),
])
def test_bad_parameters_are_a_400_naming_them_and_start_nothing(transactions, client_for, stored_in, params, field):
    response = client_for(transactions.created_by).get(f"/api/runs/{transactions.pk}/nodes/transactions/", params)
    assert response.status_code == 400, response.json()
    assert response.json()["errors"][0]["field"] == field
    assert not Inspection.objects.exists() and not stored_in


def test_a_page_past_the_last_is_a_400(transactions, client_for, django_capture_on_commit_callbacks):
    api = client_for(transactions.created_by)
    url = f"/api/runs/{transactions.pk}/nodes/transactions/"
    inspected(api, url, django_capture_on_commit_callbacks, kind="integral")
    response = api.get(url, {"kind": "integral", "page": 2})
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "page"


def test_an_unknown_node_is_a_404(transactions, client_for, stored_in):
    response = client_for(transactions.created_by).get(f"/api/runs/{transactions.pk}/nodes/nope/")
    assert response.status_code == 404 and "no node 'nope'" in response.json()["detail"]
    assert not stored_in


def test_others_see_nothing_of_a_private_run(transactions, client_for, make_user, stored_in):
    url = f"/api/runs/{transactions.pk}/nodes/transactions/"
    assert client_for(make_user("mallory")).get(url).status_code == 404
    assert client_for().get(url).status_code == 404
    assert not stored_in


def test_a_failed_inspection_says_why_and_the_next_request_tries_again(transactions, client_for, monkeypatch, django_capture_on_commit_callbacks):
    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr("runs.inspection_store.write", broken)
    api = client_for(transactions.created_by)
    url = f"/api/runs/{transactions.pk}/nodes/transactions/"
    with django_capture_on_commit_callbacks(execute=True):
        assert api.get(url).status_code == 202
    body = api.get(url).json()
    assert (body["status"], body["error"]) == ("failed", "RuntimeError: disk full")
    monkeypatch.undo()
    monkeypatch.setattr("runs.dispatch.inspect", lambda inspection_id, **_: inspect(inspection_id) is not None)
    assert rows(inspected(api, url, django_capture_on_commit_callbacks)) == [(TRANSACTIONS[2], 1)]


def test_inspections_are_evicted_least_recently_read_first_and_go_with_their_run(transactions, client_for, settings, django_capture_on_commit_callbacks):
    api = client_for(transactions.created_by)
    url = f"/api/runs/{transactions.pk}/nodes/transactions/"
    inspected(api, url, django_capture_on_commit_callbacks, tick=0)
    first = Inspection.objects.get(tick=0)
    settings.INSPECT_CACHE_MAX_BYTES = first.bytes  # room for one
    inspected(api, url, django_capture_on_commit_callbacks, tick=1)
    assert list(Inspection.objects.values_list("tick", flat=True)) == [1]
    assert not inspection_store.directory(transactions.pk, transactions.version_id, 0).exists()
    assert inspection_store.directory(transactions.pk, transactions.version_id, 1).exists()

    with django_capture_on_commit_callbacks(execute=True):
        services.delete_circuit(transactions.circuit)
    assert not inspection_store.run_directory(transactions.pk).exists()


def test_a_million_row_state_is_paged_sorted_and_filtered(transactions, client_for):
    """The stored contents of a 10^6-row input, written as the worker writes them; every
    page request reads only what it shows (Arrow compute on the memory-mapped file)."""
    n = 1_000_000
    rng = random.Random(7)
    amounts = [rng.randrange(1, 10_000) for _ in range(n)]
    table = pa.table({"id": pa.array(range(n), pa.int64()), "from_acct": pa.array([i % 1000 for i in range(n)], pa.int64()),
                      "to_acct": pa.array([i % 997 for i in range(n)], pa.int64()), "amount": pa.array(amounts, pa.int64()),
                      inspection_store.WEIGHT: pa.array([1] * n, pa.int64())})
    target = inspection_store.directory(transactions.pk, transactions.version_id, 2)
    facts = {"operator": "input", "inserted": 1, "deleted": 0, "iterations": None}
    size = inspection_store.write(target, {"transactions": facts}, lambda node, kind: table if kind == "integral" else table.slice(0, 1))
    Inspection.objects.create(run=transactions, tick=2, status="done", progress=1.0, method="reference", bytes=size)

    api = client_for(transactions.created_by)
    url = f"/api/runs/{transactions.pk}/nodes/transactions/"
    started = time.perf_counter()
    body = api.get(url, {"kind": "integral", "page": 4000, "page_size": 200}).json()
    assert (body["count"], body["pages"]) == (n, 5000)
    assert [r["data"]["id"] for r in body["rows"]] == list(range(799_800, 800_000))

    by_amount = sorted(range(n), key=lambda i: (-amounts[i], i))  # descending, ties in stored (id) order
    body = api.get(url, {"kind": "integral", "sort": "amount", "desc": "1", "page": 3, "page_size": 100}).json()
    assert [r["data"]["id"] for r in body["rows"]] == by_amount[200:300]
    body = api.get(url, {"kind": "integral", "sort": "amount", "desc": "1", "page": 4, "page_size": 100}).json()
    assert [r["data"]["id"] for r in body["rows"]] == by_amount[300:400]

    body = api.get(url, {"kind": "integral", "filter": ["from_acct:7", "to_acct:7"], "sort": "id", "desc": "1"}).json()
    expected = [i for i in range(n - 1, -1, -1) if i % 1000 == 7 and i % 997 == 7]
    assert [r["data"]["id"] for r in body["rows"]] == expected and body["count"] == len(expected)
    print(f"paged 10^6 rows: {time.perf_counter() - started:.2f} s for 5 pages")


def test_scrolling_a_sorted_state_sorts_it_once(transactions, client_for, monkeypatch, django_capture_on_commit_callbacks):
    from runs import node_pages

    api = client_for(transactions.created_by)
    url = f"/api/runs/{transactions.pk}/nodes/transactions/"
    inspected(api, url, django_capture_on_commit_callbacks, kind="integral")
    orders = []
    order = node_pages._order
    monkeypatch.setattr(node_pages, "_order", lambda *args: orders.append(args[1]) or order(*args))
    pages = [rows(api.get(url, {"kind": "integral", "sort": "amount", "page_size": 1, "page": p}).json()) for p in (1, 2, 3)]
    assert pages == [[(TRANSACTIONS[2], 1)], [(TRANSACTIONS[1], 1)], [(TRANSACTIONS[0], 1)]]  # amounts 20, 30, 50
    assert len(orders) == 1


def test_a_queued_inspection_no_worker_took_is_sent_again(transactions, client_for, stored_in, monkeypatch):
    from datetime import timedelta

    from django.utils import timezone

    monkeypatch.setattr("runs.dispatch.inspect", lambda inspection_id, **_: stored_in.append(inspection_id) or True)  # lost
    api = client_for(transactions.created_by)
    url = f"/api/runs/{transactions.pk}/nodes/transactions/"
    inspection = Inspection.objects.create(run=transactions, tick=2)
    assert api.get(url).status_code == 202 and stored_in == []  # just queued: its message is on its way
    Inspection.objects.filter(pk=inspection.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    assert api.get(url).status_code == 202 and stored_in == [inspection.pk]


def pushed_run(user, name, lines, monkeypatch):
    """A run of an example circuit fed through the input log as a user pushes (keyed
    upserts and deletes normalised there), each line applied as one tick."""
    from runs import input_log

    monkeypatch.setattr("runs.dispatch.wake", lambda run_id: True)
    monkeypatch.setattr(input_log, "publish_lag", lambda *a: None)
    circuit = services.create_circuit(user, name, "", "private", example(name))
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=user, status="running")
    for tick, pushes in enumerate(lines):
        for input_name, records in pushes.items():
            input_log.push(Run.objects.get(pk=run.pk), input_name, records)
        run.pushes.filter(applied_tick__isnull=True).update(applied_tick=tick)
    Run.objects.filter(pk=run.pk).update(current_tick=len(lines) - 1)
    run.refresh_from_db()
    return run


def test_a_keyed_input_with_lists_upserts_and_deletes(make_user, client_for, monkeypatch, django_capture_on_commit_callbacks):
    lines = [json.loads(line) for line in (EXAMPLES / "order_tags.pushes.jsonl").read_text().splitlines() if line.strip()]
    run = pushed_run(make_user("dora"), "order_tags", lines, monkeypatch)
    api = client_for(run.created_by)
    orders = f"/api/runs/{run.pk}/nodes/orders/"
    # tick 1 replaces order 2; tick 2 deletes order 1 by its key and inserts order 4 without tags
    body = inspected(api, orders, django_capture_on_commit_callbacks, tick=1, sort="@weight")
    assert [(r["data"], r["weight"]) for r in body["rows"]] == [
        ({"id": 2, "customer": "bob", "tags": ["gift"]}, -1), ({"id": 2, "customer": "bob", "tags": ["gift", "fragile", "gift"]}, 1)]
    body = inspected(api, orders, django_capture_on_commit_callbacks, tick=2, kind="integral")
    assert [(r["data"], r["weight"]) for r in body["rows"]] == [
        ({"id": 2, "customer": "bob", "tags": ["gift", "fragile", "gift"]}, 1), ({"id": 3, "customer": "ann", "tags": []}, 1),
        ({"id": 4, "customer": "cy", "tags": None}, 1)]
    body = inspected(api, orders, django_capture_on_commit_callbacks, tick=2, kind="integral", filter='tags:["gift", "fragile", "gift"]')
    assert [r["data"]["id"] for r in body["rows"]] == [2]
    per_tag = f"/api/runs/{run.pk}/nodes/per_tag/"
    assert rows(inspected(api, per_tag, django_capture_on_commit_callbacks, tick=1, kind="integral")) == [
        (("fragile", 1, 1), 1), (("gift", 3, 2), 1), (("urgent", 1, 1), 1)]
    assert rows(inspected(api, per_tag, django_capture_on_commit_callbacks, tick=2, sort="@weight")) == [
        (("gift", 3, 2), -1), (("urgent", 1, 1), -1), (("gift", 2, 1), 1)]


def test_event_time_windows_tick_by_tick_agree_with_the_reference_evaluator(make_user, client_for, monkeypatch, django_capture_on_commit_callbacks):
    """A circuit whose results depend on tick boundaries is replayed tick by tick; every
    view's delta and contents equal the reference evaluator's, stepped here on its own."""
    from dbsp import compile_plan
    from dbsp.reference import ReferenceRuntime
    from dbsp.runtime import changes_from_records
    from dbsp.verify import zset_json

    lines = [json.loads(line) for line in (EXAMPLES / "sensor_windows.pushes.jsonl").read_text().splitlines() if line.strip()]
    run = pushed_run(make_user("erin"), "sensor_windows", lines, monkeypatch)
    plan = compile_plan(example("sensor_windows"))
    assert not plan.whole_tables
    oracle, emitted = ReferenceRuntime(plan), []
    for line in lines:
        emitted.append(oracle.step({n: changes_from_records(r, plan.inputs[n]) for n, r in line.items()}).outputs)
    api = client_for(run.created_by)

    def as_set(records):
        return sorted(json.dumps(r, sort_keys=True) for r in records)

    for view, schema in plan.views.items():
        for tick in (2, len(lines) - 1):
            url = f"/api/runs/{run.pk}/nodes/{view}/"
            delta = inspected(api, url, django_capture_on_commit_callbacks, tick=tick)["rows"]
            assert as_set(delta) == as_set(zset_json(emitted[tick][view], schema)), (view, tick)
            total = emitted[0][view]
            for s in range(1, tick + 1):
                total = total + emitted[s][view]
            contents = inspected(api, url, django_capture_on_commit_callbacks, tick=tick, kind="integral", page_size=1000)["rows"]
            assert as_set(contents) == as_set(zset_json(total, schema)) and contents, (view, tick)
