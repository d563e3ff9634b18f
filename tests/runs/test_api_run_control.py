"""POST /api/runs/<id>/pause/ and /resume/: the status machine, owner or can_operate grantees only, 409s that say why."""
import pytest

from runs.models import Run

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(make_user, circuit_of):
    alice = make_user("alice")
    circuit = circuit_of(alice, "public")
    return Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")


def post(api, run, action):
    return api.post(f"/api/runs/{run.pk}/{action}/")


def test_pause_then_resume(run, client_for):
    api = client_for(run.created_by)
    paused = post(api, run, "pause")
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    assert Run.objects.get(pk=run.pk).status == "paused"
    assert api.get(f"/api/runs/{run.pk}/").json()["status"] == "paused"
    resumed = post(api, run, "resume")
    assert resumed.status_code == 200 and resumed.json()["status"] == "running"
    assert Run.objects.get(pk=run.pk).status == "running"


@pytest.mark.parametrize(
    "status, action, message",
    [
        ("running", "resume", "Run {pk} is running; only a paused run can be resumed."),
        ("paused", "pause", "Run {pk} is paused; only a running run can be paused."),
        ("created", "pause", "Run {pk} is created; only a running run can be paused."),
        ("stopped", "pause", "Run {pk} is stopped; only a running run can be paused."),
        ("stopped", "resume", "Run {pk} is stopped; only a paused run can be resumed."),
        ("failed", "resume", "Run {pk} is failed; only a paused run can be resumed."),
    ],
)
def test_illegal_transitions_are_409_and_change_nothing(run, client_for, status, action, message):
    Run.objects.filter(pk=run.pk).update(status=status)
    response = post(client_for(run.created_by), run, action)
    assert response.status_code == 409
    assert response.json()["detail"] == message.format(pk=run.pk)
    assert response.json()["errors"][0]["field"] == "status"
    assert Run.objects.get(pk=run.pk).status == status


def test_paused_run_can_be_stopped_and_then_never_resumed(run, client_for):
    api = client_for(run.created_by)
    post(api, run, "pause")
    assert api.post(f"/api/runs/{run.pk}/stop/").json()["status"] == "stopped"
    assert post(api, run, "resume").status_code == 409


def test_only_the_owner_controls_a_run(run, client_for, make_user):
    bob = make_user("bob")
    for action in ("pause", "resume"):
        assert post(client_for(bob), run, action).status_code == 403
        assert post(client_for(), run, action).status_code in (401, 403)
    run.circuit.visibility = "private"
    run.circuit.save()
    assert post(client_for(bob), run, "pause").status_code == 404
    assert Run.objects.get(pk=run.pk).status == "running"


def test_unknown_run_is_404(client_for, make_user):
    assert client_for(make_user()).post("/api/runs/999999/pause/").status_code == 404
