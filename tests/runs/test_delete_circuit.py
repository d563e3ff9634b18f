"""Deleting a circuit (circuits layer) deletes its runs with their input log and outputs
(runs layer, through circuits.signals.circuit_deleting), and once the delete commits the
workers are told to release the engines of the runs that were active (runs/dispatch.py)."""
import pytest

from runs.models import Push, Run, TickOutput

pytestmark = pytest.mark.django_db


def test_deleting_a_circuit_deletes_its_runs_and_stops_the_active_ones(
        make_user, circuit_of, client_for, monkeypatch, django_capture_on_commit_callbacks):
    sent = []  # the task messages, kept in this process (the broker is not what is tested)
    monkeypatch.setattr("workers.dispatch._send", lambda task, run_id, queue: sent.append((task, run_id)) or True)
    alice = make_user("alice")
    circuit = circuit_of(alice)
    runs = {status: Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status=status)
            for status in ("running", "paused", "stopped", "failed")}
    Push.objects.create(run=runs["running"], sequence=1, input="orders", records=[], row_count=0, applied_tick=0)
    TickOutput.objects.create(run=runs["running"], tick=0, deltas={})
    other = circuit_of(alice, name="kept")
    kept = Run.objects.create(circuit=other, version=other.latest_version, created_by=alice, status="running")

    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(alice).delete(f"/api/circuits/{circuit.pk}/")
        assert sent == []  # nothing before the commit

    assert response.status_code == 204
    assert list(Run.objects.values_list("pk", flat=True)) == [kept.pk]
    assert not Push.objects.exists() and not TickOutput.objects.exists()
    assert sorted(sent) == sorted([("workers.stop_run", runs["running"].pk), ("workers.stop_run", runs["paused"].pk)])
