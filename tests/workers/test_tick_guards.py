"""What a tick may take and store, on the real database with the reference evaluator as
the engine: a tick over its time budget fails its run naming the node it was in (the
watchdog, workers/watchdog.py); a tick that never completes, or whose commit the
database keeps refusing, fails its run after DBSPWEB_TICK_MAX_ATTEMPTS attempts instead
of being retried forever; a transient commit error is retried and never counted; an
output JSON cannot hold (NaN, Infinity) or too big fails the run naming the view."""
import math

import pytest
from django.db import OperationalError, connection

from dbsp.reference import ReferenceRuntime
from runs.models import Push, Run, TickOutput
from tests.workers.test_ticks import log_push, make_run, quiet, reference_engine  # noqa: F401 - fixtures
from workers import identity, leases, ticks
from workers.models import RunLease

pytestmark = pytest.mark.django_db

ORDER = {"id": 1, "customer": "a", "amount": 500}


def failed_with(run):
    run.refresh_from_db()
    assert run.status == "failed", f"the run is {run.status!r}, error {run.error!r}"
    return run.error


def with_output_value(monkeypatch, value):
    """The engine computes `value` as the amount of every row of every view."""
    real_step = ReferenceRuntime.step

    def step(self, changes):
        result = real_step(self, changes)
        rows = result.outputs_json()
        for view_rows in rows.values():
            for r in view_rows:
                r["data"]["amount"] = value
        result.outputs_json = lambda: rows
        return result

    monkeypatch.setattr(ReferenceRuntime, "step", step)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_a_non_finite_output_fails_the_run_naming_the_view(django_user_model, reference_engine, quiet, monkeypatch, value):
    run = make_run(django_user_model)
    log_push(run, "orders", ORDER)
    with_output_value(monkeypatch, value)
    assert ticks.drain(run.pk, leases.acquire(run.pk)) == 0
    error = failed_with(run)
    assert error.startswith("OutputRefused: node 'big_orders' (output): a value is not a finite number"), error
    assert quiet[0][:2] == ("error", run.pk) and quiet[0][4] == "big_orders"
    assert not TickOutput.objects.filter(run=run).exists()


def test_a_tick_output_over_the_size_limit_fails_the_run_naming_the_view(django_user_model, reference_engine, quiet, settings):
    settings.TICK_MAX_OUTPUT_BYTES = 1000
    run = make_run(django_user_model)
    log_push(run, "orders", *[{"id": i, "customer": "x" * 50, "amount": 500} for i in range(40)])
    assert ticks.drain(run.pk, leases.acquire(run.pk)) == 0
    error = failed_with(run)
    assert error.startswith("OutputRefused: node 'big_orders' (output): this tick's output is over 1,000 bytes"), error
    assert "DBSPWEB_TICK_MAX_OUTPUT_BYTES" in error and quiet[0][4] == "big_orders"
    assert not TickOutput.objects.filter(run=run).exists()


def test_a_commit_the_database_keeps_refusing_fails_the_run_with_its_error(django_user_model, reference_engine, quiet,
                                                                          monkeypatch, settings):
    """A value the database refuses where no check looks (here: NaN in the stats, which
    SQLite's JSON_VALID check refuses): the same tick is refused on every attempt. It
    used to be retried every few seconds forever, the run `running`, nothing shown."""
    settings.TICK_MAX_ATTEMPTS = 2
    run = make_run(django_user_model)
    log_push(run, "orders", ORDER)
    real_step = ReferenceRuntime.step
    steps = []

    def step(self, changes):
        result = real_step(self, changes)
        result.stats["big"]["ms"] = math.nan
        steps.append(result.tick)
        return result

    monkeypatch.setattr(ReferenceRuntime, "step", step)
    ticks.drain(run.pk, leases.acquire(run.pk))
    error = failed_with(run)
    # SQLite's JSON_VALID check refuses NaN with an IntegrityError, PostgreSQL's jsonb with a DataError
    refused = "DataError" if connection.vendor == "postgresql" else "IntegrityError"
    assert error.startswith("TickAbandoned: tick 0 did not complete in 2 attempts (DBSPWEB_TICK_MAX_ATTEMPTS): "
                            f"its commit was refused: {refused}"), error
    assert steps == [0, 0]
    assert not TickOutput.objects.filter(run=run).exists() and Push.objects.get(run=run).applied_tick is None


def test_a_transient_commit_error_is_retried_and_not_counted(django_user_model, reference_engine, quiet, monkeypatch, settings):
    settings.TICK_MAX_ATTEMPTS = 1
    run = make_run(django_user_model)
    log_push(run, "orders", ORDER)
    epoch = leases.acquire(run.pk)
    real_fence = leases.fence
    monkeypatch.setattr(leases, "fence", lambda run_id, epoch: (_ for _ in ()).throw(OperationalError("database is locked")))
    for _ in range(3):
        with pytest.raises(OperationalError):
            ticks.drain(run.pk, epoch)
    assert RunLease.objects.get(run=run).attempts == 0
    monkeypatch.setattr(leases, "fence", real_fence)
    assert ticks.drain(run.pk, epoch) == 1
    run.refresh_from_db()
    assert run.status == "running" and run.current_tick == 0


class WorkerDied(BaseException):
    """What a worker process killed in the middle of a tick leaves: an attempt that never ended."""


def test_a_tick_that_kills_every_worker_taking_it_fails_the_run(django_user_model, reference_engine, quiet, monkeypatch,
                                                                settings):
    settings.TICK_MAX_ATTEMPTS = 2
    run = make_run(django_user_model)
    log_push(run, "orders", ORDER)

    def dies(self, changes):
        raise WorkerDied()

    monkeypatch.setattr(ReferenceRuntime, "step", dies)
    for worker in ("a:1", "b:2"):  # each takes the run over (the last one's lease expired) and dies in the tick
        identity._me["worker"] = worker
        RunLease.objects.filter(run=run).update(expires_at=leases.RELEASED)
        with pytest.raises(WorkerDied):
            ticks.drain(run.pk, leases.acquire(run.pk))
        assert Run.objects.get(pk=run.pk).status == "running"
    identity._me["worker"] = "c:3"
    RunLease.objects.filter(run=run).update(expires_at=leases.RELEASED)
    epoch = leases.acquire(run.pk)
    assert epoch == 3
    assert ticks.drain(run.pk, epoch) == 0
    error = failed_with(run)
    assert error == ("TickAbandoned: tick 0 did not complete in 2 attempts (DBSPWEB_TICK_MAX_ATTEMPTS): "
                     "its worker was lost during it each time")
    assert leases.holder(run.pk) is None


def test_the_attempt_count_restarts_with_each_committed_tick(django_user_model, reference_engine, quiet, settings):
    settings.TICK_MAX_ATTEMPTS = 1
    run = make_run(django_user_model)
    epoch = leases.acquire(run.pk)
    for i in range(3):
        log_push(run, "orders", {**ORDER, "id": i})
        assert ticks.drain(run.pk, epoch) == 1
    assert RunLease.objects.get(run=run).attempts == 0 and Run.objects.get(pk=run.pk).current_tick == 2


def test_a_tick_over_its_budget_fails_the_run_naming_the_node(django_user_model, reference_engine, quiet, settings):
    """The tick's node `big` is slow by construction (a test-only worker setting): the
    watchdog raises into the tick after the budget and the run fails naming the node."""
    settings.TICK_BUDGET, settings.TICK_GRACE = 0.3, 30
    settings.TEST_SLOW_NODE = "big=30"
    run = make_run(django_user_model)
    log_push(run, "orders", ORDER)
    assert ticks.drain(run.pk, leases.acquire(run.pk)) == 0
    error = failed_with(run)
    assert error == ("TickOverBudget: node 'big' (filter): tick 0 ran over its time budget of 0.3 s "
                     "(DBSPWEB_TICK_BUDGET) and was stopped"), error
    assert quiet[0][4] == "big"
    # The worker goes on: another run's ticks are not touched by the stopped one.
    settings.TEST_SLOW_NODE = ""
    other = Run.objects.create(circuit=run.circuit, version=run.version, created_by=run.created_by, status="running")
    log_push(other, "orders", ORDER)
    assert ticks.drain(other.pk, leases.acquire(other.pk)) == 1


def test_a_tick_over_the_row_limit_fails_the_run_naming_the_node_and_the_count(django_user_model, reference_engine, quiet,
                                                                              settings):
    """Issue 31's product, small: 12 facts make 12^4 rows at the last join; the limit
    stops it before it is built, the run fails with the node and the count (its REST
    error; the live protocol's `error` message names the node), nothing is stored."""
    settings.TICK_MAX_ROWS = 5_000
    alice, run = _product_run(django_user_model)
    error = failed_with(run)
    assert error == ("TickTooLarge: node 'r1_big_join_3' (join): its output would have 20,736 rows, over the limit of "
                     "5,000 rows one node may build in a tick (DBSPWEB_TICK_MAX_ROWS)"), error
    assert quiet[0] == ("error", run.pk, 0, error, "r1_big_join_3")
    assert not TickOutput.objects.filter(run=run).exists() and Push.objects.get(run=run).applied_tick is None
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(alice)
    detail = api.get(f"/api/runs/{run.pk}/").json()
    assert (detail["status"], detail["error"]) == ("failed", error)


def test_a_tick_over_the_byte_limit_fails_the_run_naming_the_node_and_the_size(django_user_model, reference_engine, quiet,
                                                                               settings):
    """DBSPWEB_TICK_MAX_BYTES reaches the worker's runtime: the same product under no
    row limit, 12^4 rows of four bigints and a weight (40 bytes) past a byte limit of
    800,000, fails the run naming the node and the size."""
    settings.TICK_MAX_ROWS, settings.TICK_MAX_BYTES = 0, 800_000
    alice, run = _product_run(django_user_model)
    error = failed_with(run)
    assert error == ("TickTooLarge: node 'r1_big_join_3' (join): its output would have about 829,440 bytes (810.0 KiB): "
                     "20,736 rows of 40 bytes, over the limit of 800,000 bytes (781.2 KiB) one node may build in a tick "
                     "(DBSPWEB_TICK_MAX_BYTES)"), error
    assert not TickOutput.objects.filter(run=run).exists() and Push.objects.get(run=run).applied_tick is None


def _product_run(django_user_model):
    """A running run of a 4-way cartesian product (Datalog) with 12 facts pushed (12^4 =
    20,736 rows at its last join), after the worker's attempt at its tick."""
    from circuits import services
    from dbsp.datalog import compile_program

    alice = django_user_model.objects.create_user("alice", password="x")
    document = compile_program(".decl e(a: number)\nbig(a, b, c, d) :- e(a), e(b), e(c), e(d).\n")
    circuit = services.create_circuit(alice, "product", "", "private", document)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    log_push(run, "e", *[{"a": i} for i in range(12)])
    assert ticks.drain(run.pk, leases.acquire(run.pk)) == 0
    return alice, run
