"""GET /api/runs/<id>/stats/?tick=: per-node frontier and stats of a tick."""
import pytest

from runs.models import Run, TickOutput

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(make_user, circuit_of):
    alice = make_user("alice")
    circuit = circuit_of(alice, "public")
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running", current_tick=1)
    for tick, rows in ((0, 3), (1, 1)):
        TickOutput.objects.create(
            run=run, tick=tick, deltas={}, ms=2.5 + tick,
            frontier={n: {"tick": tick} for n in ("orders", "big", "big_orders")},
            stats={"orders": {"rows_in": rows, "ms": 0.1}, "big": {"ms": 0.4, "state_rows": 0}, "big_orders": {"rows_out": rows - 1, "ms": 0.2}},
        )
    return run


def test_stats_of_the_current_tick_and_of_an_earlier_one(run, client_for):
    api = client_for()
    now = api.get(f"/api/runs/{run.pk}/stats/").json()
    assert now["tick"] == 1 and now["ms"] == 3.5
    by_node = {n["node"]: n for n in now["nodes"]}
    assert list(by_node) == ["orders", "big", "big_orders"]
    assert by_node["orders"] == {"node": "orders", "frontier": {"tick": 1}, "rows_in": 1, "ms": 0.1}
    assert by_node["big_orders"]["rows_out"] == 0
    earlier = api.get(f"/api/runs/{run.pk}/stats/", {"tick": 0}).json()
    assert earlier["tick"] == 0 and {n["node"]: n for n in earlier["nodes"]}["orders"]["rows_in"] == 3


def test_unknown_tick_bad_tick_and_fresh_run(run, client_for, make_user):
    api = client_for()
    missing = api.get(f"/api/runs/{run.pk}/stats/", {"tick": 9})
    assert missing.status_code == 404 and "no tick 9" in missing.json()["detail"]
    bad = api.get(f"/api/runs/{run.pk}/stats/", {"tick": "soon"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "tick"
    fresh = Run.objects.create(circuit=run.circuit, version=run.version, created_by=run.created_by)
    assert api.get(f"/api/runs/{fresh.pk}/stats/").json() == {"tick": -1, "ms": 0.0, "nodes": []}


def test_stats_follow_the_circuit_visibility(run, client_for, make_user):
    run.circuit.visibility = "private"
    run.circuit.save()
    assert client_for(make_user("bob")).get(f"/api/runs/{run.pk}/stats/").status_code == 404
    assert client_for(run.created_by).get(f"/api/runs/{run.pk}/stats/").status_code == 200
