"""The sweeper finds runs whose work would wait forever and re-drives them. Sends go to
a queue nobody consumes, read back from the real Redis."""
import json
from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from circuits import services
from runs.models import Push, Run, Verification
from tests.conftest import example
from workers import sweeper
from workers.models import RunLease, WorkerHeartbeat

pytestmark = pytest.mark.django_db
QUEUE = f"{settings.CELERY_TASK_DEFAULT_QUEUE}-sweeper-test"


@pytest.fixture
def broker():
    client = redis.Redis.from_url(settings.REDIS_URL)
    client.delete(QUEUE, f"{QUEUE}.w.holder", f"{QUEUE}.verify")
    yield client
    client.delete(QUEUE, f"{QUEUE}.w.holder", f"{QUEUE}.verify")


def sent(client, queue):
    return sorted((json.loads(m)["headers"]["task"], json.loads(m)["headers"]["argsrepr"]) for m in client.lrange(queue, 0, -1))


@override_settings(CELERY_TASK_DEFAULT_QUEUE=QUEUE, VERIFY_QUEUE=f"{QUEUE}.verify", SWEEP_STALE=5)
def test_sweep_re_drives_orphaned_stuck_and_unstarted_runs(django_user_model, broker):
    alice = django_user_model.objects.create_user("alice", password="x")
    circuit = services.create_circuit(alice, "c", "", "private", example("big_orders"))

    def make_run(status, minutes_old=0):
        run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status=status)
        Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(minutes=minutes_old))
        return run

    now = timezone.now()
    WorkerHeartbeat.objects.create(worker="holder:1", queue=f"{QUEUE}.w.holder", started_at=now, last_seen=now)
    orphan = make_run("running")  # its worker died: the lease expired
    RunLease.objects.create(run=orphan, worker="dead:9", acquired_at=now, expires_at=now - timedelta(seconds=1))
    stuck = make_run("running")  # a live holder, but a push waited 60 s: its wake-up was lost
    RunLease.objects.create(run=stuck, worker="holder:1", acquired_at=now, expires_at=now + timedelta(seconds=30))
    for sequence in (1, 2):  # two waiting pushes: one wake-up
        push = Push.objects.create(run=stuck, sequence=sequence, input="orders", records=[], row_count=0)
        Push.objects.filter(pk=push.pk).update(received_at=now - timedelta(seconds=60))
    elsewhere = make_run("running")  # orphaned too, but another worker pool's run: not ours to take
    Run.objects.filter(pk=elsewhere.pk).update(queue="another-pool")
    busy = make_run("running")  # a live holder with a fresh push: leave it alone
    RunLease.objects.create(run=busy, worker="holder:1", acquired_at=now, expires_at=now + timedelta(seconds=30))
    Push.objects.create(run=busy, sequence=1, input="orders", records=[], row_count=0)
    unstarted = make_run("created", minutes_old=5)  # its start message was lost
    make_run("created")  # just created: its start is on the way
    make_run("paused")
    done = make_run("stopped")
    lost = Verification.objects.create(run=done, tick=0)  # queued 5 minutes ago: its message was lost
    Verification.objects.create(run=done, tick=0)  # just queued: its message is on the way
    taken = Verification.objects.create(run=done, tick=0)  # a verify worker has it
    Verification.objects.filter(pk__in=[lost.pk, taken.pk]).update(created_at=now - timedelta(minutes=5))
    Verification.objects.filter(pk=taken.pk).update(status="running")

    found = sweeper.sweep()
    assert found == {"taken_over": [orphan.pk], "woken": [stuck.pk], "started": [unstarted.pk], "freed": [],
                     "verifications": [lost.pk]}
    assert sent(broker, f"{QUEUE}.verify") == [("workers.verify_run", f"({lost.pk},)")]
    assert sent(broker, QUEUE) == sorted([("workers.process_run", f"({orphan.pk},)"), ("workers.start_run", f"({unstarted.pk},)")])
    assert sent(broker, f"{QUEUE}.w.holder") == [("workers.process_run", f"({stuck.pk},)")]


@override_settings(CELERY_TASK_DEFAULT_QUEUE=QUEUE, FOLD_QUIET=5)
def test_a_quiet_held_run_with_an_unfolded_log_is_sent_a_fold(django_user_model, broker, monkeypatch):
    """Pushes never fold the log into the input tables: the holder folds it once the run
    is quiet (no push for FOLD_QUIET seconds, none waiting), through its own queue."""
    from workers import engines, identity

    alice = django_user_model.objects.create_user("alice", password="x")
    circuit = services.create_circuit(alice, "c", "", "private", example("big_orders"))
    now = timezone.now()
    monkeypatch.setitem(identity._me, "worker", "holder:1")
    WorkerHeartbeat.objects.create(worker="holder:1", queue=f"{QUEUE}.w.holder", started_at=now, last_seen=now)
    runs = {}
    for name, age, applied in (("quiet", 60, 0), ("busy", 1, 0), ("waiting", 60, None), ("folded", 60, 0)):
        run = runs[name] = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice,
                                              status="running", last_sequence=1)
        RunLease.objects.create(run=run, worker="holder:1", acquired_at=now, expires_at=now + timedelta(seconds=30))
        push = Push.objects.create(run=run, sequence=1, input="orders", records=[], row_count=0, applied_tick=applied)
        Push.objects.filter(pk=push.pk).update(received_at=now - timedelta(seconds=age))
    Run.objects.filter(pk=runs["folded"].pk).update(input_rows_through=1)
    monkeypatch.setattr(engines, "held_runs", lambda: [r.pk for r in runs.values()])
    sweeper.sweep()
    folds = [m for m in sent(broker, f"{QUEUE}.w.holder") if m[0] == "workers.fold_inputs"]
    assert folds == [("workers.fold_inputs", f"({runs['quiet'].pk},)")]  # (the waiting one is woken as stuck)


@override_settings(CELERY_TASK_DEFAULT_QUEUE=QUEUE, FOLD_QUIET=5, FOLD_BEHIND_ROWS=1000)
def test_a_busy_held_run_far_behind_in_folding_is_sent_a_fold(django_user_model, broker, monkeypatch):
    """A change stream is never quiet, and each push's delete check reads every unfolded
    push: once those hold more than FOLD_BEHIND_ROWS rows, the holder folds anyway."""
    from workers import engines, identity

    alice = django_user_model.objects.create_user("alice", password="x")
    circuit = services.create_circuit(alice, "c", "", "private", example("big_orders"))
    now = timezone.now()
    monkeypatch.setitem(identity._me, "worker", "holder:1")
    WorkerHeartbeat.objects.create(worker="holder:1", queue=f"{QUEUE}.w.holder", started_at=now, last_seen=now)
    runs = {}
    for name, rows, through in (("far", (600, 401), 0), ("near", (600, 400), 0), ("folded_far", (600, 401, 5), 2)):
        run = runs[name] = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice,
                                              status="running", last_sequence=len(rows), input_rows_through=through)
        RunLease.objects.create(run=run, worker="holder:1", acquired_at=now, expires_at=now + timedelta(seconds=30))
        for sequence, count in enumerate(rows, start=1):  # busy: a push a second ago
            Push.objects.create(run=run, sequence=sequence, input="orders", records=[], row_count=count, applied_tick=0)
    monkeypatch.setattr(engines, "held_runs", lambda: [r.pk for r in runs.values()])
    sweeper.sweep()
    folds = [m for m in sent(broker, f"{QUEUE}.w.holder") if m[0] == "workers.fold_inputs"]
    assert folds == [("workers.fold_inputs", f"({runs['far'].pk},)")]
