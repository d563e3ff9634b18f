"""GET /api/runs/<id>/deltas/?since=&limit=: stored output deltas, paged."""
import pytest

from tests.runs.ticked_run import ADA, run  # noqa: F401 - run is a fixture

pytestmark = pytest.mark.django_db


def test_deltas_since_a_tick_paged(run, client_for):
    api = client_for()
    first = api.get(f"/api/runs/{run.pk}/deltas/", {"since": -1, "limit": 2}).json()
    assert [t["tick"] for t in first["ticks"]] == [0, 1] and first["more"] is True
    rest = api.get(f"/api/runs/{run.pk}/deltas/", {"since": 1, "limit": 2}).json()
    assert [t["tick"] for t in rest["ticks"]] == [2] and rest["more"] is False
    assert rest["ticks"][0]["views"]["big_orders"] == [{"data": ADA, "weight": -1}]
    assert api.get(f"/api/runs/{run.pk}/deltas/", {"since": "x"}).status_code == 400
