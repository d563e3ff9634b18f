"""A connector's stored secrets are encrypted at rest (connectors/secrets.py): the database
row holds no plaintext, the worker's client gets the plaintext (a Redis ACL user signs in
with it), a key that does not open them fails the connector with a ConfigError naming the
secret (not a crash), keys rotate, existing rows are encrypted by the data migration, and
the secrets appear in no answer or export."""
import importlib
import json
import uuid

import pytest
import redis
from cryptography.fernet import Fernet
from django.apps import apps
from django.core.management import call_command
from django.db import connection

from connectors.models import Connector
from connectors.pump import Pump
from tests.connectors.conftest import declare, order, pump_until, pushed_rows

pytestmark = pytest.mark.django_db(transaction=True)
PASSWORD = "hunter2-plain-secret"


def stored_row(connector) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT secrets FROM connectors_connector WHERE id = %s", [connector.pk])
        return str(cursor.fetchone()[0])


@pytest.fixture
def acl_stream(redis_server):
    """A stream readable only by an ACL user signing in with PASSWORD."""
    r = redis.Redis.from_url(redis_server.url)
    user = f"reader-{uuid.uuid4().hex[:6]}"
    r.acl_setuser(user, enabled=True, passwords=[f"+{PASSWORD}"], commands=["+@all"], keys=["*"])
    stream = f"s-{uuid.uuid4().hex[:8]}"
    r.xadd(stream, {"value": json.dumps({"insert": order(1)})})
    yield user, stream
    r.acl_deluser(user)


def declare_with_password(client_for, held_run, redis_server, user, stream, name="guarded"):
    return declare(client_for, held_run, name=name, kind="redis_source", node="orders",
                   config={"url": redis_server.url, "stream": stream}, secrets={"username": user, "password": PASSWORD})


def test_the_row_holds_no_plaintext_and_the_worker_signs_in_with_it(redis_server, acl_stream, held_run, client_for):
    user, stream = acl_stream
    source = declare_with_password(client_for, held_run, redis_server, user, stream)
    row = stored_row(source)
    assert PASSWORD not in row and user not in row and "password" in row  # the names stay readable
    assert all(v.startswith("gAAAA") for v in Connector.objects.get(pk=source.pk).secrets.values())
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 1, "the entry")
    assert [r["id"] for r, _ in pushed_rows(held_run)] == [1]
    # a wrong password really is refused by the server (the test above is not vacuous)
    with pytest.raises(redis.AuthenticationError):
        redis.Redis.from_url(redis_server.url, username=user, password="wrong").ping()


def test_a_key_that_does_not_open_them_fails_the_connector_naming_the_secret(redis_server, acl_stream, held_run,
                                                                              client_for, settings):
    user, stream = acl_stream
    source = declare_with_password(client_for, held_run, redis_server, user, stream)
    settings.SECRETS_KEYS = [Fernet.generate_key().decode()]  # not the key they were stored with
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the failure")
    source.refresh_from_db()
    assert source.last_error.startswith("connector 'guarded' (redis_source): secret ")
    assert "cannot be decrypted with DBSPWEB_SECRETS_KEY" in source.last_error
    assert PASSWORD not in source.last_error


def test_keys_rotate(redis_server, acl_stream, held_run, client_for, settings):
    user, stream = acl_stream
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.SECRETS_KEYS = [old]
    source = declare_with_password(client_for, held_run, redis_server, user, stream)
    settings.SECRETS_KEYS = [new, old]  # the new key first: both open them
    assert Connector.objects.get(pk=source.pk).opened_secrets()["password"] == PASSWORD
    call_command("rotate_connector_secrets")
    settings.SECRETS_KEYS = [new]  # the old key dropped
    assert Connector.objects.get(pk=source.pk).opened_secrets() == {"username": user, "password": PASSWORD}
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 1, "the entry")


def test_the_data_migration_encrypts_existing_rows(held_run):
    plain = Connector.objects.create(run=held_run, name="old", kind="redis_source", node="orders",
                                     config={"url": "redis://x", "stream": "s"}, secrets={"password": PASSWORD})
    assert PASSWORD in stored_row(plain)  # as rows were before the migration
    migration = importlib.import_module("connectors.migrations.0005_encrypt_secrets")
    migration.encrypt(apps, None)
    assert PASSWORD not in stored_row(plain)
    assert Connector.objects.get(pk=plain.pk).opened_secrets() == {"password": PASSWORD}
    migration.decrypt(apps, None)  # and back
    assert Connector.objects.get(pk=plain.pk).secrets == {"password": PASSWORD}


def test_no_answer_or_export_holds_them(redis_server, acl_stream, held_run, client_for):
    user, stream = acl_stream
    source = declare_with_password(client_for, held_run, redis_server, user, stream)
    tokens = list(Connector.objects.get(pk=source.pk).secrets.values())
    api = client_for(held_run.owner)
    version = api.get(f"/api/circuits/{held_run.circuit_id}/").json()
    answers = [api.get(f"/api/runs/{held_run.pk}/connectors/"), api.get(f"/api/runs/{held_run.pk}/connectors/guarded/"),
               api.get(f"/api/runs/{held_run.pk}/"), api.get(f"/api/circuits/{held_run.circuit_id}/"),
               api.post("/api/sql/export/", {"document": held_run.version.document}, format="json")]
    assert all(a.status_code == 200 for a in answers), [a.status_code for a in answers]
    assert version["id"] == held_run.circuit_id
    for answer in answers:
        body = answer.content.decode()
        assert PASSWORD not in body and not any(t in body for t in tokens)
    assert api.get(f"/api/runs/{held_run.pk}/connectors/guarded/").json()["secret_keys"] == ["password", "username"]
