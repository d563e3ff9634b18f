"""GET /api/runs/<id>/: status, interface, lag and the worker holding the run."""
import pytest

from runs.models import Run
from tests.runs.ticked_run import run  # noqa: F401 - run is a fixture

pytestmark = pytest.mark.django_db


def test_run_detail_has_its_interface_and_lag(run, client_for):
    body = client_for().get(f"/api/runs/{run.pk}/").json()
    assert body["status"] == "running" and body["version"] == 1 and body["current_tick"] == 2
    assert body["inputs"][0]["name"] == "orders" and [c["name"] for c in body["inputs"][0]["schema"]] == ["id", "customer", "amount"]
    assert body["views"] == ["big_orders"]
    assert (body["lag"]["pushes"], body["lag"]["rows"]) == (1, 1)  # push 2 is not applied yet


def test_run_detail_names_the_worker_holding_its_lease(run, client_for):
    from datetime import timedelta

    from django.utils import timezone

    from workers.models import RunLease

    api = client_for()
    assert api.get(f"/api/runs/{run.pk}/").json()["worker"] == ""
    now = timezone.now()
    lease = RunLease.objects.create(run=run, worker="celery@host-a:42", acquired_at=now, expires_at=now + timedelta(minutes=1))
    assert api.get(f"/api/runs/{run.pk}/").json()["worker"] == "celery@host-a:42"
    assert api.get(f"/api/circuits/{run.circuit_id}/runs/").json()["results"][0]["worker"] == "celery@host-a:42"
    lease.expires_at = now - timedelta(seconds=1)  # the worker died; nobody owns the run now
    lease.save()
    assert api.get(f"/api/runs/{run.pk}/").json()["worker"] == ""
