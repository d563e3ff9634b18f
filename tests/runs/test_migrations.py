"""runs 0001 / workers 0002 / circuits 0004: a database made by the old migrations, where
runs, their input log and tick outputs belonged to the circuits app, migrates without
losing a row; the tables keep their names and the content types follow the models."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("circuits", "0003_run_queue"), ("workers", "0001_initial"), ("runs", None)]
OLD_STATE = [("circuits", "0003_run_queue"), ("workers", "0001_initial"), ("contenttypes", "0002_remove_content_type_name")]


def test_runs_of_the_circuits_app_migrate_into_the_runs_app_with_their_data():
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    executor.migrate(BEFORE)
    try:
        old = MigrationExecutor(connection).loader.project_state(OLD_STATE).apps
        assert not any(m._meta.app_label == "runs" for m in old.get_models())
        user = old.get_model("auth", "User").objects.create(username="old-timer")
        circuit = old.get_model("circuits", "Circuit").objects.create(owner_id=user.pk, name="c", share_token="t" * 43)
        version = old.get_model("circuits", "CircuitVersion").objects.create(circuit=circuit, number=1, document={"nodes": []})
        run = old.get_model("circuits", "Run").objects.create(circuit=circuit, version=version, created_by=user,
                                                               status="running", current_tick=0, last_sequence=2)
        Push = old.get_model("circuits", "Push")
        Push.objects.create(run=run, sequence=1, input="orders", records=[{"data": {"id": 1}, "weight": 1}], row_count=1,
                            applied_tick=0, idempotency_key="k-1")
        Push.objects.create(run=run, sequence=2, input="orders", records=[{"data": {"id": 2}, "weight": -1}], row_count=1)
        old.get_model("circuits", "TickOutput").objects.create(run=run, tick=0, deltas={"big": [{"data": {"id": 1}, "weight": 1}]})
        old.get_model("workers", "RunLease").objects.create(run=run, worker="w:1", epoch=3,
                                                    acquired_at="2029-01-01T00:00:00Z", expires_at="2030-01-01T00:00:00Z")
        ContentType = old.get_model("contenttypes", "ContentType")
        ContentType.objects.filter(app_label="runs").delete()
        ContentType.objects.get_or_create(app_label="circuits", model="run")
        run_id = run.pk
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(latest)
    from django.contrib.contenttypes.models import ContentType as CurrentContentType

    from runs.models import Push as CurrentPush, Run, TickOutput
    from workers.models import RunLease

    migrated = Run.objects.get(pk=run_id)
    assert (migrated.status, migrated.current_tick, migrated.last_sequence, migrated.circuit.name) == ("running", 0, 2, "c")
    assert [(p.sequence, p.records, p.applied_tick, p.idempotency_key) for p in CurrentPush.objects.filter(run=migrated)] == [
        (1, [{"data": {"id": 1}, "weight": 1}], 0, "k-1"), (2, [{"data": {"id": 2}, "weight": -1}], None, None)]
    assert TickOutput.objects.get(run=migrated, tick=0).deltas == {"big": [{"data": {"id": 1}, "weight": 1}]}
    assert RunLease.objects.get(run=migrated).epoch == 3
    assert Run._meta.db_table == "circuits_run" and CurrentPush._meta.db_table == "circuits_push"
    assert CurrentContentType.objects.get_for_model(Run).app_label == "runs"
    assert not CurrentContentType.objects.filter(app_label="circuits", model="run").exists()
    # The unique constraints and the index came along: a second push with the same sequence is refused.
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        CurrentPush.objects.create(run=migrated, sequence=2, input="orders", records=[], row_count=0)
