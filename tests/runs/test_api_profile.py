"""GET /api/runs/<id>/profile/?metric=&from=&to=: each node's metric over ticks, totals,
the top nodes, where each tick ran, late rows of windows; bounded; bad parameters."""
import pytest

from runs import profile
from runs.models import Run, TickOutput
from tests.runs.profiled_run import profiled_run, pushes

pytestmark = pytest.mark.django_db


def by_node(body):
    return {n["node"]: n for n in body["nodes"]}


def test_rows_in_of_the_input_are_the_pushed_records_per_tick(make_user, client_for):
    run = profiled_run(make_user("alice"), "transactions")
    body = client_for().get(f"/api/runs/{run.pk}/profile/", {"metric": "rows_in"}).json()
    assert body["metric"] == "rows_in" and body["unit"] == "rows" and body["aggregate"] == "sum"
    assert body["ticks"] == [0, 1, 2] and body["from"] == 0 and body["to"] == 2 and body["bucket"] == 1
    assert not body["downsampled"] and not body["truncated"]
    pushed = [len(p["transactions"]) for p in pushes("transactions")]
    nodes = by_node(body)
    assert nodes["transactions"]["series"] == pushed and nodes["transactions"]["total"] == sum(pushed)
    assert nodes["transactions"]["kind"] == "input" and nodes["transactions"]["paths"] == ["reference"] * 3
    # the circuit's nodes in document order
    assert list(nodes)[:3] == ["transactions", "credits_by_account", "debits_by_account"]


def test_totals_and_top_nodes_follow_the_stored_stats(make_user, client_for):
    run = profiled_run(make_user("alice"), "transactions")
    stored = {t.tick: t.stats for t in TickOutput.objects.filter(run=run)}
    body = client_for().get(f"/api/runs/{run.pk}/profile/", {"metric": "ms"}).json()
    want = {node: sum(stored[t].get(node, {}).get("ms", 0) for t in stored) for node in stored[0]}
    for node, total in want.items():
        assert by_node(body)[node]["total"] == pytest.approx(total, abs=0.01)
    # the top five by total, largest first (nodes whose totals tie may come in either order)
    top = [t["node"] for t in body["top"]]
    assert len(top) == min(5, len(want)) and len(set(top)) == len(top)
    assert [want[n] for n in top] == pytest.approx(sorted(want.values(), reverse=True)[:5], abs=0.01)
    assert body["top"][0]["share"] == pytest.approx(want[top[0]] / sum(want.values()), abs=0.001)
    state = client_for().get(f"/api/runs/{run.pk}/profile/", {"metric": "state_rows"}).json()
    assert state["aggregate"] == "last"  # state rows are not summed over ticks: the latest


def test_a_range_of_ticks(make_user, client_for):
    run = profiled_run(make_user("alice"), "transactions")
    body = client_for().get(f"/api/runs/{run.pk}/profile/", {"metric": "rows_in", "from": 1, "to": 1}).json()
    assert body["ticks"] == [1] and by_node(body)["transactions"]["series"] == [len(pushes("transactions")[1]["transactions"])]
    empty = client_for().get(f"/api/runs/{run.pk}/profile/", {"from": 7}).json()
    assert empty["ticks"] == [] and empty["nodes"] == [] and empty["top"] == []


def test_late_rows_of_windows_per_tick(make_user, client_for):
    run = profiled_run(make_user("alice"), "sensor_windows")
    nodes = by_node(client_for().get(f"/api/runs/{run.pk}/profile/").json())
    # worked out by hand in tests/dbsp/test_profile_stats.py
    assert nodes["per_minute"]["late_rows"] == [0, 0, 1, 0, 1] and nodes["per_minute"]["late_rows_total"] == 2
    assert nodes["sessions"]["late_rows"] == [0, 0, 0, 0, 1]
    assert "late_rows" not in nodes["readings"]


def test_spark_jobs_and_paths_from_the_spark_runtime(make_user, client_for):
    from dbsp.spark import SparkRuntime, get_session

    spark = get_session()
    run = profiled_run(make_user("alice"), "transactions",
                       runtime_of=lambda plan: SparkRuntime(plan, spark, driver_max_rows=0, arrow_max_rows=0))
    body = client_for().get(f"/api/runs/{run.pk}/profile/", {"metric": "spark_jobs"}).json()
    nodes = by_node(body)
    stored = [t.stats for t in TickOutput.objects.filter(run=run).order_by("tick")]
    assert nodes["by_account"]["series"] == [s["by_account"]["spark_jobs"] for s in stored]
    assert body["total"] == sum(s[n]["spark_jobs"] for s in stored for n in s) > 0
    assert "spark" in nodes["by_account"]["paths"] and nodes["by_account"]["path_ticks"]["spark"] >= 1


def test_long_runs_are_downsampled_and_bounded(make_user, circuit_of, client_for, monkeypatch):
    alice = make_user("alice")
    circuit = circuit_of(alice, "public")
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running", current_tick=1199)
    TickOutput.objects.bulk_create([
        TickOutput(run=run, tick=t, deltas={}, stats={"big": {"ms": 1.0, "state_rows": t, "path": "spark" if t == 5 else "row"}})
        for t in range(1200)])
    body = client_for().get(f"/api/runs/{run.pk}/profile/").json()
    assert body["downsampled"] and body["bucket"] == 3 and len(body["ticks"]) == 400 and body["ticks"][:2] == [0, 3]
    big = by_node(body)["big"]
    assert big["series"] == [3.0] * 400 and big["total"] == 1200
    assert big["paths"][:3] == ["row", "spark", "row"]  # the bucket of ticks 3-5 ran on Spark once
    state = by_node(client_for().get(f"/api/runs/{run.pk}/profile/", {"metric": "state_rows"}).json())["big"]
    assert state["series"][:2] == [2, 5] and state["total"] == 1199  # a bucket's last value
    monkeypatch.setattr(profile, "MAX_TICKS", 1000)
    page = client_for().get(f"/api/runs/{run.pk}/profile/").json()
    assert page["truncated"] and page["from"] == 200 and page["to"] == 1199  # the newest ticks of the range
    older = client_for().get(f"/api/runs/{run.pk}/profile/", {"to": 199}).json()
    assert not older["truncated"] and older["from"] == 0 and older["to"] == 199


@pytest.mark.parametrize("params,field", [
    ({"metric": "watts"}, "metric"),
    ({"from": "soon"}, "from"),
    ({"to": "-1"}, "to"),
    ({"from": 5, "to": 2}, "to"),
])
def test_bad_parameters_are_refused_naming_the_field(make_user, client_for, params, field):
    run = profiled_run(make_user("alice"), "big_orders")
    response = client_for().get(f"/api/runs/{run.pk}/profile/", params)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field and field in response.json()["detail"]


def test_the_profile_follows_the_circuit_visibility(make_user, client_for):
    alice = make_user("alice")
    run = profiled_run(alice, "big_orders", visibility="private")
    assert client_for(make_user("bob")).get(f"/api/runs/{run.pk}/profile/").status_code == 404
    assert client_for(alice).get(f"/api/runs/{run.pk}/profile/").status_code == 200
