"""Migration 0002 on a database that already has circuits: each gets its own share token."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("circuits", "0001_initial")]


def test_existing_circuits_get_distinct_share_tokens(django_user_model):
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()  # every app: unapplying circuits may unapply dependents
    executor.migrate(BEFORE)
    try:
        old = MigrationExecutor(connection).loader.project_state(BEFORE).apps
        user = old.get_model("auth", "User").objects.create(username="old-timer")
        Circuit = old.get_model("circuits", "Circuit")
        for i in range(3):
            Circuit.objects.create(owner_id=user.pk, name=f"c{i}", visibility="unlisted")
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(latest)
    from circuits.models import Circuit as Current

    tokens = list(Current.objects.values_list("share_token", flat=True))
    assert len(tokens) == 3 and len(set(tokens)) == 3 and all(len(t) >= 40 for t in tokens)
