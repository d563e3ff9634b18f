"""GET /api/runs/<id>/explain/?view=&row=&tick=: a row's derivation down to the input rows
and the pushes (sequence, time, who) that brought them; for a row that changed at the
tick, the tick's input changes that caused it. The pushes go through the push endpoint
(which records who pushed) and are marked applied as a worker would."""
import json

import pytest

from circuits import services
from runs.models import Push, Run
from tests.conftest import example

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("api_answers_follow_the_schema")]

TICKS = [  # examples/circuits/transitive_closure.pushes.jsonl
    [{"insert": {"src": 0, "dst": 1}}, {"insert": {"src": 1, "dst": 2}}, {"insert": {"src": 2, "dst": 3}}],
    [{"insert": {"src": 3, "dst": 4}}],
    [{"delete": {"src": 1, "dst": 2}}],
    [{"insert": {"src": 1, "dst": 2}}, {"delete": {"src": 0, "dst": 1}}],
]


@pytest.fixture
def run(make_user, client_for):
    return closure_run(make_user("alice"), client_for, "private")


def closure_run(alice, client_for, visibility: str) -> Run:
    """A transitive-closure run of alice's whose TICKS were pushed (over the push
    endpoint, which records who pushed) and marked applied as a worker would."""
    circuit = services.create_circuit(alice, "Closure", "", visibility, example("transitive_closure"))
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    api = client_for(alice)
    for tick, records in enumerate(TICKS):
        response = api.post(f"/api/runs/{run.pk}/inputs/edges/push/", records, format="json")
        assert response.status_code == 202
        Push.objects.filter(run=run, sequence=response.json()["sequence"]).update(applied_tick=tick)
    Run.objects.filter(pk=run.pk).update(current_tick=len(TICKS) - 1)
    run.refresh_from_db()
    return run


def get(api, run, **params):
    params = {k: json.dumps(v) if k == "row" and not isinstance(v, str) else v for k, v in params.items()}
    return api.get(f"/api/runs/{run.pk}/explain/", params)


def steps(step):
    yield step
    for group in step["groups"]:
        for use in group["uses"]:
            if "step" in use:
                yield from steps(use["step"])


def test_a_path_is_explained_over_iterations_down_to_the_edges_and_their_push(run, client_for):
    body = get(client_for(run.created_by), run, view="closure", row={"src": 0, "dst": 3}, tick=0).json()
    assert (body["tick"], body["weight"], body["before"], body["truncated"]) == (0, 1, 0, False)
    joins = [(s["iteration"], s["row"]) for s in steps(body["contents"]) if s["kind"] == "join"]
    assert joins == [(2, {"src": 0, "mid": 2, "dst": 3}), (1, {"src": 0, "mid": 1, "dst": 2})]
    pairs = [[u["row"] for u in g["uses"]] for s in steps(body["contents"]) if s["kind"] == "join" for g in s["groups"]]
    assert pairs[0] == [{"src": 0, "mid": 2}, {"mid": 2, "dst": 3}]  # path 0->2 (iteration 1) and edge 2->3
    assert [(i["input"], i["row"], i["weight"]) for i in body["inputs"]] == [
        ("edges", {"src": 0, "dst": 1}, 1), ("edges", {"src": 1, "dst": 2}, 1), ("edges", {"src": 2, "dst": 3}, 1)]
    first = Push.objects.get(run=run, sequence=1)
    for item in body["inputs"]:
        assert item["pushes_count"] == 1
        assert item["pushes"] == [{"sequence": 1, "tick": 0, "received_at": first.received_at.isoformat(), "user": "alice",
                                   "weight": 1, "row": item["row"]}]


def test_a_deleted_row_is_explained_by_the_change_that_removed_it(run, client_for):
    body = get(client_for(run.created_by), run, view="closure", row={"src": 0, "dst": 3}, tick=2).json()
    assert body["contents"] is None and (body["before"], body["weight"]) == (1, 0)
    assert (body["change"]["before"], body["change"]["after"]) == (1, 0)
    assert [(c["input"], c["row"], c["before"], c["after"], [p["sequence"] for p in c["pushes"]]) for c in body["causes"]] == [
        ("edges", {"src": 1, "dst": 2}, 1, 0, [3])]


def test_a_row_pushed_twice_lists_both_pushes(run, client_for):
    body = get(client_for(run.created_by), run, view="closure", row={"src": 1, "dst": 2}, tick=3).json()
    item = next(i for i in body["inputs"] if i["row"] == {"src": 1, "dst": 2})
    assert [(p["sequence"], p["tick"], p["weight"]) for p in item["pushes"]] == [(1, 0, 1), (3, 2, -1), (4, 3, 1)]
    assert [(c["row"], [p["sequence"] for p in c["pushes"]]) for c in body["causes"]] == [({"src": 1, "dst": 2}, [4])]


def test_a_push_from_before_users_were_recorded_shows_no_user(run, client_for):
    Push.objects.filter(run=run).update(user=None)
    body = get(client_for(run.created_by), run, view="closure", row={"src": 0, "dst": 1}, tick=0).json()
    assert body["inputs"][0]["pushes"][0]["user"] is None


def test_an_inner_node_at_an_iteration_and_a_page(run, client_for):
    body = get(client_for(run.created_by), run, node="paths", iteration=1, row={"src": 0, "dst": 2}, tick=0,
               mode="contents").json()
    assert (body["node"], body["iteration"], body["contents"]["kind"], body["change"]) == ("paths", 1, "distinct", None)


@pytest.mark.parametrize("params, field", [
    ({"row": {"src": 0, "dst": 3}}, "view"),
    ({"view": "nope", "row": {"src": 0, "dst": 3}}, "view"),
    ({"view": "closure"}, "row"),
    ({"view": "closure", "row": "{not json"}, "row"),
    ({"view": "closure", "row": [0, 3]}, "row"),
    ({"view": "closure", "row": {"src": 0, "dst": 3, "colour": 1}}, "row.colour"),
    ({"view": "closure", "row": {"src": "zero", "dst": 3}}, "row.src"),
    ({"view": "closure", "row": {"src": 0}}, "row.dst"),
    ({"view": "closure", "row": {"src": 0, "dst": 3}, "tick": "9"}, "tick"),
    ({"view": "closure", "row": {"src": 0, "dst": 3}, "tick": "x"}, "tick"),
    ({"view": "closure", "row": {"src": 0, "dst": 3}, "page": "-1"}, "page"),
    ({"view": "closure", "row": {"src": 0, "dst": 3}, "page_size": "0"}, "page_size"),
    ({"view": "closure", "row": {"src": 0, "dst": 3}, "mode": "why"}, "mode"),
    ({"node": "paths", "row": {"src": 0, "dst": 3}}, "iteration"),
    ({"node": "paths", "row": {"src": 0, "dst": 3}, "iteration": "x"}, "iteration"),
    ({"node": "nope", "row": {"src": 0, "dst": 3}}, "node"),
])
def test_bad_parameters_are_a_400_naming_the_field(run, client_for, params, field):
    response = get(client_for(run.created_by), run, **params)
    assert response.status_code == 400, response.json()
    assert field in [e["field"] for e in response.json()["errors"]]


def test_a_row_not_in_the_view_is_a_404_saying_so(run, client_for):
    response = get(client_for(run.created_by), run, view="closure", row={"src": 4, "dst": 0}, tick=1)
    assert response.status_code == 404
    assert "not in 'closure' at tick 1" in response.json()["detail"]


def test_a_private_run_is_a_404_to_others(run, client_for, make_user):
    row = {"view": "closure", "row": {"src": 0, "dst": 3}, "tick": 0}
    assert get(client_for(make_user("mallory")), run, **row).status_code == 404
    assert get(client_for(), run, **row).status_code == 404


def test_a_log_larger_than_the_bound_is_refused(run, client_for, settings):
    settings.EXPLAIN_MAX_ROWS = 3
    response = get(client_for(run.created_by), run, view="closure", row={"src": 0, "dst": 3}, tick=1)
    assert response.status_code == 400 and "EXPLAIN_MAX_ROWS" in response.json()["detail"]


# ---- a log over EXPLAIN_SYNC_MAX_ROWS: queued for the verification queue's worker --------------
@pytest.fixture
def sent(monkeypatch):
    sent = []
    monkeypatch.setattr("runs.dispatch.explain", lambda explanation_id, **_: sent.append(explanation_id) or True)
    return sent


def test_a_large_log_is_queued_and_the_worker_answers_what_the_request_would(run, client_for, settings, sent,
                                                                            django_capture_on_commit_callbacks):
    from dbspweb.celery import app
    from runs.explain import carry_out as explain_row  # what the task runs (it also closes old connections)
    from workers import dispatch, tasks  # noqa: F401 - registers the verification queue's tasks

    assert dispatch.EXPLAIN_ROW in app.tasks
    api = client_for(run.created_by)
    at_once = get(api, run, view="closure", row={"src": 0, "dst": 4}, tick=1).json()
    settings.EXPLAIN_SYNC_MAX_ROWS = 3  # the closure's log has 4 rows through tick 1
    with django_capture_on_commit_callbacks(execute=True):
        response = get(api, run, view="closure", row={"src": 0, "dst": 4}, tick=1)
    assert response.status_code == 202
    queued = response.json()
    assert (queued["status"], queued["url"], sent) == ("queued", f"/api/runs/{run.pk}/explain/{queued['id']}/", [queued["id"]])
    assert api.get(queued["url"]).json() == queued
    assert explain_row(queued["id"]) == "done"
    done = api.get(queued["url"]).json()
    assert done.pop("status") == "done" and done.pop("id") == queued["id"] and done.pop("url") == queued["url"]
    assert done == at_once
    assert explain_row(queued["id"]) is None  # carried out once


def test_a_queued_explanation_of_a_row_not_there_fails_saying_so(run, client_for, settings, sent, make_user):
    from runs.explain import carry_out as explain_row

    settings.EXPLAIN_SYNC_MAX_ROWS = 0
    api = client_for(run.created_by)
    queued = get(api, run, view="closure", row={"src": 4, "dst": 0}, tick=1).json()
    assert explain_row(queued["id"]) == "failed"
    failed = api.get(queued["url"]).json()
    assert failed["status"] == "failed" and failed["error"]["status"] == 404
    assert "not in 'closure' at tick 1" in failed["error"]["detail"]
    assert client_for(make_user("mallory")).get(queued["url"]).status_code == 404
    assert api.get(f"/api/runs/{run.pk}/explain/999999/").status_code == 404


# ---- circuits that run tick by tick: event-time windows, z⁻¹ / I / D ----------------------
def _pushed(make_user, client_for, name, document, ticks, user="wendy"):
    owner = make_user(user)
    circuit = services.create_circuit(owner, name, "", "private", document)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=owner, status="running")
    api = client_for(owner)
    for tick, by_input in enumerate(ticks):
        for input_name, records in by_input.items():
            response = api.post(f"/api/runs/{run.pk}/inputs/{input_name}/push/", records, format="json")
            assert response.status_code == 202, response.json()
            Push.objects.filter(run=run, sequence=response.json()["sequence"]).update(applied_tick=tick)
    Run.objects.filter(pk=run.pk).update(current_tick=len(ticks) - 1)
    run.refresh_from_db()
    return run, api


def test_a_window_row_is_its_readings_and_the_late_one_with_its_push(make_user, client_for):
    """sensor_windows: s1's minute [10:00, 10:01) at tick 2 averages 20 and 22; the reading
    10:00:50 pushed at tick 2 came behind the waterline (10:02:30) and was dropped."""
    from tests.conftest import EXAMPLES

    ticks = [json.loads(line) for line in (EXAMPLES / "sensor_windows.pushes.jsonl").read_text().splitlines()[:3]]
    run, api = _pushed(make_user, client_for, "Sensors", example("sensor_windows"), ticks)
    row = {"sensor": "s1", "window_start": "2026-11-21T10:00:00", "window_end": "2026-11-21T10:01:00",
           "avg_value": 21.0, "readings": 2}
    response = get(api, run, view="sensor_averages", row=row, tick=2)
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["weight"], body["before"], body["change"]) == (1, 1, None)
    window = body["contents"]["groups"][0]["uses"][0]["step"]
    assert window["kind"] == "tumbling_window"
    members, late = window["groups"]
    assert members["label"] == "window [2026-11-21 10:00:00, 2026-11-21 10:01:00) of group sensor = 's1': 2 rows"
    assert [u["row"]["ts"] for u in members["uses"]] == ["2026-11-21T10:00:10", "2026-11-21T10:00:40"]
    assert late["label"] == "1 late row of this group was dropped at tick 2 (behind the waterline 2026-11-21 10:02:30)"
    dropped = late["uses"][0]["step"]
    assert (dropped["row"], dropped["mode"], dropped["tick"], dropped["before"], dropped["after"]) == (
        {"sensor": "s1", "ts": "2026-11-21T10:00:50", "value": 100.0}, "change", 2, 0, 1)
    assert [(p["sequence"], p["tick"], p["user"]) for p in dropped["pushes"]] == [(3, 2, "wendy")]
    assert [(i["row"]["ts"], i["tick"], [p["sequence"] for p in i["pushes"]]) for i in body["inputs"]] == [
        ("2026-11-21T10:00:10", 2, [1]), ("2026-11-21T10:00:40", 2, [1]), ("2026-11-21T10:00:50", 2, [3])]


def test_I_D_and_z_rows_reach_the_pushes_of_earlier_ticks(make_user, client_for):
    """x → I, D, z⁻¹ → views. Pushes: tick 0 +1 +2, tick 1 +3, tick 2 +1 −2 (run as drawn,
    a view holds the sum of what its node emitted)."""
    from tests.dbsp.helpers import circuit, dele, ins, schema

    doc = circuit({"x": schema("k:bigint")},
                  [("ix", "integrate", {}), ("dx", "differentiate", {}), ("zx", "delay", {}),
                   ("total", "output", {}), ("diff", "output", {}), ("prev", "output", {})],
                  ["x.out->ix.in", "x.out->dx.in", "x.out->zx.in", "ix.out->total.in", "dx.out->diff.in",
                   "zx.out->prev.in"])
    ticks = [{"x": [ins(k=1), ins(k=2)]}, {"x": [ins(k=3)]}, {"x": [ins(k=1), dele(k=2)]}]
    run, api = _pushed(make_user, client_for, "Streams", doc, ticks)

    body = get(api, run, view="total", row={"k": 1}, tick=2).json()
    assert (body["weight"], body["before"]) == (4, 2)
    integrate = body["change"]["groups"][0]["uses"][0]["step"]
    assert integrate["kind"] == "integrate"
    carried = integrate["groups"][0]["uses"]
    assert [(u["tick"], u["weight"], u["step"]["mode"], [p["sequence"] for p in u["step"]["pushes"]])
            for u in carried] == [(0, 1, "value", [1]), (2, 1, "value", [3])]
    assert [(c["row"], c["tick"], c["before"], c["after"], [p["sequence"] for p in c["pushes"]]) for c in body["causes"]] == [
        ({"k": 1}, 2, 1, 2, [3])]

    diff = get(api, run, view="diff", row={"k": 2}, tick=2).json()
    d = diff["change"]["groups"][0]["uses"][0]["step"]
    assert [g["label"] for g in d["groups"]] == ["D: its weight in 'x' at tick 2 (-1)", "less its weight in 'x' at tick 1 (0)"]

    prev = get(api, run, view="prev", row={"k": 3}, tick=2, mode="change").json()
    delay = prev["change"]["groups"][0]["uses"][0]["step"]
    assert (delay["kind"], delay["groups"][0]["label"]) == ("delay", "z⁻¹: the value of 'x' at tick 1")
    pushed = delay["groups"][0]["uses"][0]
    assert (pushed["tick"], [p["sequence"] for p in pushed["step"]["pushes"]]) == (1, [2])
    assert prev["causes"] == []  # nothing pushed at tick 2 carries it: the push of tick 1 does, through z⁻¹


def test_a_long_tick_by_tick_log_is_queued_sooner(make_user, client_for, settings, sent):
    """12 ticks of one row each through I: replayed tick by tick, the 12 rows weigh
    12 * 12 // 10 = 14 against EXPLAIN_SYNC_MAX_ROWS (a whole-table circuit's would weigh 12)."""
    from tests.dbsp.helpers import circuit, ins, schema

    doc = circuit({"x": schema("k:bigint")}, [("ix", "integrate", {}), ("total", "output", {})],
                  ["x.out->ix.in", "ix.out->total.in"])
    run, api = _pushed(make_user, client_for, "Long", doc, [{"x": [ins(k=t)]} for t in range(12)])
    settings.EXPLAIN_SYNC_MAX_ROWS = 14
    assert get(api, run, view="total", row={"k": 0}, tick=11).status_code == 200
    settings.EXPLAIN_SYNC_MAX_ROWS = 13
    assert get(api, run, view="total", row={"k": 0}, tick=11).status_code == 202
