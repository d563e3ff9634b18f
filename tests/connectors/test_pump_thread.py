"""The worker's pump pass (workers/pumps.py): it pumps only the running runs whose lease
this process holds, so pausing a run pauses its connectors and a run held elsewhere is
never pushed to; a source whose folder is missing is retrying, with the error and its
time, and runs again once the folder is there."""
import pytest

from connectors.models import Connector
from connectors.pump import Pump
from runs.models import Push, Run
from workers import pumps
from workers.identity import worker_id
from workers.models import RunLease

pytestmark = pytest.mark.django_db(transaction=True)


def declare(client_for, run, path):
    r = client_for(run.owner).post(f"/api/runs/{run.pk}/connectors/", {
        "name": "drop", "kind": "file_source", "node": "orders", "config": {"path": str(path)}}, format="json")
    assert r.status_code == 201, r.content


def test_only_running_runs_held_here_are_pumped(tmp_path, held_run, client_for):
    (tmp_path / "a.csv").write_text("id,customer,amount\n1,a,5\n")
    declare(client_for, held_run, tmp_path)
    pump = Pump()
    Run.objects.filter(pk=held_run.pk).update(status="paused")
    assert pumps.pass_once(pump) == 0 and not Push.objects.exists()
    assert client_for(held_run.owner).get(f"/api/runs/{held_run.pk}/connectors/drop/").json()["state"] == "paused"
    RunLease.objects.filter(run=held_run).update(worker="elsewhere:1")  # held by another worker
    Run.objects.filter(pk=held_run.pk).update(status="running")
    assert pumps.pass_once(pump) == 0 and not Push.objects.exists()
    RunLease.objects.filter(run=held_run).update(worker=worker_id())  # back here
    assert pumps.pass_once(pump) == 1
    assert Push.objects.get().row_count == 1


def test_a_missing_folder_is_retried_and_shown(tmp_path, held_run, client_for):
    inbox = tmp_path / "inbox"
    declare(client_for, held_run, inbox)
    pump = Pump()
    pump.pump_run(held_run, held_run.epoch, held_run.fence)
    status = client_for(held_run.owner).get(f"/api/runs/{held_run.pk}/connectors/drop/").json()
    assert status["state"] == "retrying" and status["error_at"]
    assert status["last_error"] == f"connector 'drop' (file_source): {inbox} is not there (yet)"
    inbox.mkdir()
    (inbox / "a.csv").write_text("id,customer,amount\n1,a,5\n")
    pump.waiting.clear()  # past its backoff
    assert pump.pump_run(held_run, held_run.epoch, held_run.fence) == 1
    assert Connector.objects.get().state == "running"
