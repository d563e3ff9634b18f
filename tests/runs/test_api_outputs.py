"""GET /api/runs/<id>/outputs/?tick=: integrated views at any tick the run reached."""
import pytest

from runs.models import Run
from tests.runs.ticked_run import BOB, run  # noqa: F401 - run is a fixture

pytestmark = pytest.mark.django_db


def test_outputs_at_any_tick(run, client_for):
    api = client_for()
    assert api.get(f"/api/runs/{run.pk}/outputs/").json() == {"tick": 2, "views": {"big_orders": [{"data": BOB, "weight": 1}]}}
    at1 = api.get(f"/api/runs/{run.pk}/outputs/", {"tick": 1}).json()["views"]["big_orders"]
    assert sorted(r["data"]["id"] for r in at1) == [1, 2]
    assert api.get(f"/api/runs/{run.pk}/outputs/", {"tick": -1}).json()["views"] == {"big_orders": []}
    assert api.get(f"/api/runs/{run.pk}/outputs/", {"tick": "now"}).status_code == 400


def test_outputs_at_a_tick_the_run_has_not_reached_is_refused(run, client_for):
    api = client_for()
    for tick in (3, 99, -2):
        response = api.get(f"/api/runs/{run.pk}/outputs/", {"tick": tick})
        assert response.status_code == 400, (tick, response.json())
        assert response.json()["errors"] == [{"field": "tick", "message": f"{tick} is not between -1 and the current tick 2"}]
    for tick in ("now", "1.5", "-"):
        response = api.get(f"/api/runs/{run.pk}/outputs/", {"tick": tick})
        assert response.status_code == 400 and response.json()["errors"][0]["field"] == "tick"
    assert api.get(f"/api/runs/{run.pk}/outputs/", {"tick": 2}).json()["tick"] == 2
    fresh = Run.objects.create(circuit=run.circuit, version=run.version, created_by=run.created_by)
    assert api.get(f"/api/runs/{fresh.pk}/outputs/").json() == {"tick": -1, "views": {"big_orders": []}}
    assert api.get(f"/api/runs/{fresh.pk}/outputs/", {"tick": 0}).status_code == 400
