"""GET/POST /api/circuits/<id>/runs/: a circuit's runs, and starting one."""
import pytest

from circuits.models import CircuitGrant
from runs.models import Run
from tests.runs.ticked_run import run  # noqa: F401 - run is a fixture

pytestmark = pytest.mark.django_db


def test_runs_of_a_circuit_and_starting_one(run, client_for, make_user):
    api = client_for(run.created_by)
    listed = api.get(f"/api/circuits/{run.circuit_id}/runs/").json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == run.pk
    started = api.post(f"/api/circuits/{run.circuit_id}/runs/")
    assert started.status_code == 201 and started.json()["status"] == "created"
    bob = make_user("bob")
    assert client_for(bob).post(f"/api/circuits/{run.circuit_id}/runs/").status_code == 403
    CircuitGrant.objects.create(circuit=run.circuit, user=bob, can_operate=True)
    assert client_for(bob).post(f"/api/circuits/{run.circuit_id}/runs/").status_code == 201
    assert Run.objects.filter(circuit=run.circuit).count() == 3
