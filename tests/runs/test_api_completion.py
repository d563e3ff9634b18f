"""GET /api/runs/<id>/pushes/ (the input log) and GET /api/runs/<id>/completion/?token=."""
import pytest

from runs.models import Run
from tests.runs.ticked_run import run  # noqa: F401 - run is a fixture

pytestmark = pytest.mark.django_db


def test_input_log_and_completion(run, client_for):
    api = client_for()
    log = api.get(f"/api/runs/{run.pk}/pushes/").json()
    assert [(p["token"], p["applied_tick"]) for p in log] == [(f"{run.pk}:1", 0), (f"{run.pk}:2", None)]
    assert api.get(f"/api/runs/{run.pk}/completion/", {"token": f"{run.pk}:1"}).json() == {"token": f"{run.pk}:1", "status": "complete", "tick": 0}
    assert api.get(f"/api/runs/{run.pk}/completion/", {"token": f"{run.pk}:2"}).json()["status"] == "pending"
    assert api.get(f"/api/runs/{run.pk}/completion/", {"token": "x"}).status_code == 400
    assert api.get(f"/api/runs/{run.pk}/completion/", {"token": f"{run.pk}:9"}).status_code == 404
    assert api.get(f"/api/runs/{run.pk}/completion/", {"token": f"{run.pk + 1}:1"}).status_code == 400


@pytest.mark.parametrize("status, error, expected", [
    ("failed", "ArrowInvalid: boom", "ArrowInvalid: boom"),
    ("failed", "", "failed before this push was applied"),
    ("stopped", "", "was stopped before this push was applied"),
])
def test_completion_of_a_push_a_dead_run_never_applied_is_failed(run, client_for, status, error, expected):
    Run.objects.filter(pk=run.pk).update(status=status, error=error)
    api = client_for()
    body = api.get(f"/api/runs/{run.pk}/completion/", {"token": f"{run.pk}:2"}).json()
    assert body["status"] == "failed" and body["tick"] is None and expected in body["error"]
    applied = api.get(f"/api/runs/{run.pk}/completion/", {"token": f"{run.pk}:1"}).json()
    assert applied == {"token": f"{run.pk}:1", "status": "complete", "tick": 0}


def test_completion_stays_pending_while_paused(run, client_for):
    Run.objects.filter(pk=run.pk).update(status="paused")
    assert client_for().get(f"/api/runs/{run.pk}/completion/", {"token": f"{run.pk}:2"}).json() == {
        "token": f"{run.pk}:2", "status": "pending", "tick": None}
