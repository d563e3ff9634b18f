"""Recovery, for real: two Celery worker processes (Spark local mode each) behind one
ASGI server. The worker holding a run is frozen with pushes in flight and then killed
with SIGKILL; the other one takes the run over (lease expiry, sweeper, snapshot +
replay of the input log) and every tick's output equals the reference evaluator's on
the same input, the final views equal an uninterrupted run's, each push is applied
exactly once and in order, and a watcher connected throughout sees every tick once."""
import random
import re
import signal
import time

import pytest

from runs.models import Push, Run, TickOutput
from dbsp import compile_plan
from dbsp.reference import ReferenceRuntime
from tests.conftest import caught_up, example
from tests.live.stack import as_weights, integrate
from workers import dispatch
from workers.engines import changes_of
from workers.models import RunLease, Snapshot

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

def transaction_pushes(n: int, seed: int = 5) -> list[list[dict]]:
    """n pushes of 1-3 transactions each; every 4th push also deletes an earlier one."""
    rng, live, pushes, next_id = random.Random(seed), [], [], 0
    for i in range(n):
        records = []
        for _ in range(rng.randint(1, 3)):
            row = {"id": next_id, "from_acct": rng.randint(1, 6), "to_acct": rng.randint(1, 6), "amount": rng.randint(1, 100)}
            next_id += 1
            live.append(row)
            records.append({"insert": row})
        if i % 4 == 3:
            records.append({"delete": live.pop(rng.randrange(len(live) - len(records) + 1))})
        pushes.append(records)
    return pushes


def start_run(api, document):
    circuit = api.post("/api/circuits/", json={"name": "recovery", "document": document}).json()
    run = api.post(f"/api/circuits/{circuit['id']}/runs/").json()
    deadline = time.monotonic() + 90
    while api.get(f"/api/runs/{run['id']}/").json()["status"] != "running":
        assert time.monotonic() < deadline, "the run did not start"
        time.sleep(0.2)
    return run["id"]


def push_all(api, run_id, pushes, key_prefix, deadline_s=180):
    """Push like a well-behaved client: on 429 wait Retry-After and retry the same push."""
    refused, deadline = 0, time.monotonic() + deadline_s
    for i, records in enumerate(pushes):
        while True:
            r = api.post(f"/api/runs/{run_id}/inputs/transactions/push/", json=records, headers={"Idempotency-Key": f"{key_prefix}-{i}"})
            if r.status_code != 429:
                break
            refused += 1
            assert time.monotonic() < deadline, "the run never caught up"
            time.sleep(int(r.headers["Retry-After"]))
        assert r.status_code == 202, r.text
    return refused


def wait_applied(stack, run_id, count, timeout=180):
    stack.wait(lambda: Push.objects.filter(run_id=run_id, applied_tick__isnull=False).count() == count, timeout,
               f"all {count} pushes of run {run_id} applied")


def reference_ticks(run_id):
    """Each committed tick's deltas recomputed by the reference evaluator, fed the same pushes per tick."""
    run = Run.objects.select_related("version").get(pk=run_id)
    plan = compile_plan(run.version.document)
    reference = ReferenceRuntime(plan)
    expected = []
    for tick in range(run.current_tick + 1):
        batch = list(Push.objects.filter(run_id=run_id, applied_tick=tick).order_by("sequence"))
        expected.append(as_weights(reference.step(changes_of(batch, plan)).outputs_json()))
    return expected


def test_kill_9_of_the_owner_mid_run_is_taken_over_with_identical_outputs(cluster, make_user):
    user = make_user("survivor")
    api = cluster.client(user)
    pushes = transaction_pushes(60)
    run_id = start_run(api, example("transactions"))
    watcher = cluster.watch(run_id, api.token)
    watcher.wait_for(lambda ms: any(m["type"] == "snapshot" for m in ms), what="the snapshot")

    push_all(api, run_id, pushes[:20], "a")
    wait_applied(cluster, run_id, 20)
    # The holder snapshots the run once it is idle (every 5 ticks in this stack).
    cluster.wait(lambda: Snapshot.objects.filter(run_id=run_id).exists(), 120, "a snapshot of the run")
    lease = RunLease.objects.get(run_id=run_id)
    owner = cluster.worker_named_by(lease.worker)
    survivor = next(name for name in cluster.workers if name != owner)

    # Freeze the owner so the next pushes are acknowledged but not applied, then kill it.
    cluster.freeze(owner)
    push_all(api, run_id, pushes[20:40], "b")
    assert Push.objects.filter(run_id=run_id, applied_tick__isnull=True).count() == 20
    cluster.kill(owner, signal.SIGKILL)
    killed_at = time.monotonic()
    push_all(api, run_id, pushes[40:], "c")  # while nobody holds the run: logged, applied later
    wait_applied(cluster, run_id, 60)
    recovered_after = time.monotonic() - killed_at

    lease = RunLease.objects.get(run_id=run_id)
    assert cluster.worker_named_by(lease.worker) == survivor and lease.epoch == 2
    assert f"event=recovered run={run_id}" in cluster.log(f"cluster-{survivor}")
    run = Run.objects.get(pk=run_id)
    assert run.status == "running" and run.worker == lease.worker

    # Exactly once, in order: every push has one tick, ticks follow the input log, no gap.
    applied = list(Push.objects.filter(run_id=run_id).order_by("sequence").values_list("applied_tick", flat=True))
    assert applied == sorted(applied) and None not in applied
    ticks = list(TickOutput.objects.filter(run_id=run_id).order_by("tick").values_list("tick", flat=True))
    assert ticks == list(range(run.current_tick + 1)) == sorted(set(applied))
    # Every tick, before and after the kill, equals the reference on the same input.
    stored = [as_weights(t.deltas) for t in TickOutput.objects.filter(run_id=run_id).order_by("tick")]
    assert stored == reference_ticks(run_id)
    # The survivor restored the snapshot the killed worker wrote, then replayed the log after it.
    recovered = next(line for line in cluster.log(f"cluster-{survivor}").splitlines() if f"event=recovered run={run_id}" in line)
    assert "snapshot_tick=none" not in recovered, recovered

    # The watcher, connected to the web server throughout, saw every tick exactly once.
    watcher.wait_for(lambda ms: any(m["type"] == "delta" and m["seq"] == run.current_tick for m in ms), what="the last tick")
    seqs = [m["seq"] for m in watcher.deltas()]
    assert seqs == list(range(run.current_tick + 1))
    final = api.get(f"/api/runs/{run_id}/outputs/").json()["views"]
    assert integrate(watcher.messages) == as_weights(final)
    watcher.close()

    # An uninterrupted run of the same pushes ends with the same views.
    other = start_run(api, example("transactions"))
    push_all(api, other, pushes, "u")
    wait_applied(cluster, other, 60)
    assert as_weights(api.get(f"/api/runs/{other}/outputs/").json()["views"]) == as_weights(final)
    print(f"recovered {len(pushes) - 20} pushes {recovered_after:.1f} s after the kill")

    # Bring a second worker back for the tests after this one.
    cluster.start_worker(owner + "b")


def test_a_frozen_worker_that_lost_its_run_never_writes_to_it_again(cluster, make_user):
    """SIGSTOP the holder past its lease: another worker takes the run over. SIGCONT:
    the old holder's queued wake-ups are handed to the new holder, it commits nothing."""
    api = cluster.client(make_user("zombie"))
    pushes = transaction_pushes(30, seed=11)
    run_id = start_run(api, example("transactions"))
    push_all(api, run_id, pushes[:10], "a")
    wait_applied(cluster, run_id, 10)
    old_worker = RunLease.objects.get(run_id=run_id).worker
    old = cluster.worker_named_by(old_worker)

    cluster.freeze(old)
    frozen_at_tick = Run.objects.get(pk=run_id).current_tick  # what the old holder committed
    try:
        push_all(api, run_id, pushes[10:20], "b")  # their wake-ups go to the frozen holder's queue
        wait_applied(cluster, run_id, 20)  # ... and another worker applies them after the lease expires
    finally:
        cluster.thaw(old)
    new_lease = RunLease.objects.get(run_id=run_id)
    assert cluster.worker_named_by(new_lease.worker) != old and new_lease.epoch == 2
    push_all(api, run_id, pushes[20:], "c")
    wait_applied(cluster, run_id, 30)
    # the thawed worker has taken every wake-up queued for it while frozen (and did not act)
    caught_up(run_id, lambda: cluster.log(f"cluster-{old}"), "the thawed worker's queue", queue=dispatch._queue_of(old_worker))
    ticks_by_old = [int(t) for t in re.findall(rf"event=tick run={run_id} tick=(\d+) ", cluster.log(f"cluster-{old}"))]
    assert ticks_by_old and max(ticks_by_old) <= frozen_at_tick  # nothing after the freeze
    assert RunLease.objects.get(run_id=run_id).worker == new_lease.worker
    stored = [as_weights(t.deltas) for t in TickOutput.objects.filter(run_id=run_id).order_by("tick")]
    assert stored == reference_ticks(run_id)
