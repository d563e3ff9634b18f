"""POST /api/runs/<id>/stop/: final and idempotent; a stopped run takes no push."""
import pytest

from tests.runs.ticked_run import ADA, run  # noqa: F401 - run is a fixture

pytestmark = pytest.mark.django_db


def test_stop_is_final_and_idempotent(run, client_for):
    api = client_for(run.created_by)
    stopped = api.post(f"/api/runs/{run.pk}/stop/")
    assert stopped.status_code == 200 and stopped.json()["status"] == "stopped"
    assert api.post(f"/api/runs/{run.pk}/stop/").json()["status"] == "stopped"
    refused = api.post(f"/api/runs/{run.pk}/inputs/orders/push/", [{"insert": ADA}], format="json")
    assert refused.status_code == 409 and "stopped" in refused.json()["detail"]
