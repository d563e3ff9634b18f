"""POST /api/runs/<id>/verify/?tick=N queues a verification and hands it to the workers
after the commit (runs/dispatch.py verify); GET polls it. (The verification itself:
tests/workers/test_verify.py; through a real worker: tests/live/test_verify_live.py.)"""
import pytest

from runs.models import Verification
from tests.runs.ticked_run import run  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("api_answers_follow_the_schema")]


@pytest.fixture
def sent(monkeypatch):
    sent = []
    monkeypatch.setattr("runs.dispatch.verify", lambda verification_id, **_: sent.append(verification_id) or True)
    return sent


def test_post_queues_a_verification_of_the_current_tick(run, client_for, sent, django_capture_on_commit_callbacks):
    api = client_for(run.created_by)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"/api/runs/{run.pk}/verify/")
    assert response.status_code == 202
    body = response.json()
    assert (body["tick"], body["status"], body["progress"], body["run"]) == (2, "queued", 0.0, run.pk)
    assert sent == [body["id"]]
    assert body["url"] == f"/api/runs/{run.pk}/verify/{body['id']}/"
    assert api.get(body["url"]).json()["status"] == "queued"


def test_a_done_verification_shows_its_result(run, client_for, sent):
    api = client_for(run.created_by)
    vid = api.post(f"/api/runs/{run.pk}/verify/?tick=1").json()["id"]
    missing = {"data": {"id": 1}, "weight": 1}
    Verification.objects.filter(pk=vid).update(status="done", progress=1.0, method="reference",
                                               result={"ok": False, "views": {"big_orders": {"missing": [missing], "extra": []}}})
    body = api.get(f"/api/runs/{run.pk}/verify/{vid}/").json()
    assert (body["ok"], body["tick"], body["method"], body["views"]["big_orders"]["missing"]) == (False, 1, "reference", [missing])
    assert [v["id"] for v in api.get(f"/api/runs/{run.pk}/verify/").json()] == [vid]


@pytest.mark.parametrize("tick, field", [("3", "tick"), ("-1", "tick"), ("x", "tick")])
def test_a_tick_the_run_does_not_have_is_a_400(run, client_for, sent, tick, field):
    response = client_for(run.created_by).post(f"/api/runs/{run.pk}/verify/?tick={tick}")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field
    assert not Verification.objects.exists() and not sent


def test_only_operators_verify_and_others_see_nothing_of_private_runs(run, client_for, make_user, sent):
    stranger = client_for(make_user("mallory"))
    assert stranger.post(f"/api/runs/{run.pk}/verify/").status_code == 403  # a public circuit: visible, not operable
    assert client_for().post(f"/api/runs/{run.pk}/verify/").status_code in (401, 403)
    assert stranger.get(f"/api/runs/{run.pk}/verify/999/").status_code == 404
    assert not sent
