"""`manage.py seed_demo`: the demo user and one circuit per example document, idempotent;
and the PostgreSQL demo (circuits/demo_postgres.py), seeded with or without its database."""
import json
import os
from io import StringIO

import psycopg
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from circuits import demo_postgres, services
from dbsp.datalog import compile_program
from dbsp.sql import compile_sql
from circuits.models import Circuit, CircuitVersion
from tests.conftest import EXAMPLES


def example_circuits() -> dict[str, tuple[dict, dict]]:
    """name -> (meta, document) for every example circuit (x.json; x.meta.json is its
    metadata), and every SQL / Datalog example with a meta.json: compiled by the engine's
    front end, its text in metadata.source."""
    found = {}
    for path in sorted(EXAMPLES.glob("*.json")):
        if path.name.endswith(".meta.json"):
            continue
        meta_path = path.with_name(path.stem + ".meta.json")
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {"name": path.stem}
        found[meta["name"]] = (meta, json.loads(path.read_text()))
    for language, compile_text, pattern in (("sql", compile_sql, "sql/*.sql"), ("datalog", compile_program, "datalog/*.dl")):
        for path in sorted(EXAMPLES.parent.glob(pattern)):
            meta_path = path.with_name(path.stem + ".meta.json")
            if meta_path.exists():
                text = path.read_text()
                document = compile_text(text) | {"metadata": {"source": {"language": language, "text": text}}}
                found[json.loads(meta_path.read_text())["name"]] = (json.loads(meta_path.read_text()), document)
    return found


def seed(err: StringIO | None = None) -> str:
    out = StringIO()
    call_command("seed_demo", stdout=out, stderr=err or StringIO())
    return out.getvalue()


@pytest.fixture(autouse=True)
def default_demo_account(monkeypatch):
    monkeypatch.delenv("DEMO_USER", raising=False)
    monkeypatch.delenv("DEMO_PASSWORD", raising=False)
    for name in (demo_postgres.URL_ENV, demo_postgres.WHY_ENV, demo_postgres.PASSWORD_ENV):
        monkeypatch.delenv(name, raising=False)


#: the demo circuits that are not example files: the PostgreSQL demo
BUILT_IN = {"Orders from PostgreSQL"}


def test_examples_are_there():
    examples = example_circuits()
    # the documented examples (README, examples/circuits): a sanity check that the glob found them
    assert len(examples) >= 6
    assert {"Big orders", "Transactions (DBSP oracle)", "Transitive closure (DBSP oracle)", "Word count"} <= set(examples)
    # written in SQL and in Datalog, seeded with their text
    assert {"Transactions (SQL)", "Reachability (Datalog)"} <= set(examples)
    assert examples["Reachability (Datalog)"][1]["metadata"]["source"]["language"] == "datalog"


@pytest.mark.django_db
def test_seed_creates_the_demo_user_and_one_valid_circuit_per_example():
    output = seed()
    user = get_user_model().objects.get(username="demo")
    assert user.check_password("demo")
    assert "created user 'demo'" in output
    examples = example_circuits()
    circuits = {c.name: c for c in Circuit.objects.filter(owner=user)}
    assert set(circuits) == set(examples) | BUILT_IN
    assert Circuit.objects.count() == len(examples) + len(BUILT_IN)  # nothing for anyone else
    for name, (meta, document) in examples.items():
        circuit = circuits[name]
        assert f"created demo circuit {name!r}" in output
        assert circuit.description == meta.get("description", "")
        assert circuit.visibility == meta.get("visibility", "private")
        version = circuit.latest_version
        assert version is not None and version.number == 1, name
        assert version.document == document, name
        assert version.problems == [], name
        assert services.validate_document(version.document) == [], name
        plan = services.plan_for(version)  # compiles: a demo can be run
        assert plan.views, name


@pytest.mark.django_db
def test_seeding_twice_does_not_duplicate():
    seed()
    before = {c.name: (c.pk, c.latest_version.pk) for c in Circuit.objects.all()}
    output = seed()
    assert output == ""  # nothing new to create
    assert get_user_model().objects.filter(username="demo").count() == 1
    after = {c.name: (c.pk, c.latest_version.pk) for c in Circuit.objects.all()}
    assert after == before
    assert CircuitVersion.objects.count() == len(before)


@pytest.mark.django_db
def test_seed_fills_in_only_what_is_missing_and_keeps_an_existing_password(monkeypatch):
    seed()
    user = get_user_model().objects.get(username="demo")
    user.set_password("changed")
    user.save()
    Circuit.objects.get(owner=user, name="Word count").delete()
    monkeypatch.setenv("DEMO_PASSWORD", "other")
    output = seed()
    assert output.strip() == "created demo circuit 'Word count'"
    user.refresh_from_db()
    assert user.check_password("changed")
    assert Circuit.objects.filter(owner=user).count() == len(example_circuits()) + len(BUILT_IN)


@pytest.mark.django_db
def test_the_demo_account_name_and_password_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("DEMO_USER", "showcase")
    monkeypatch.setenv("DEMO_PASSWORD", "s3cret-demo")
    seed()
    user = get_user_model().objects.get(username="showcase")
    assert user.check_password("s3cret-demo")
    assert not get_user_model().objects.filter(username="demo").exists()
    assert Circuit.objects.filter(owner=user).count() == len(example_circuits()) + len(BUILT_IN)


# ---- the PostgreSQL demo ---------------------------------------------------------------------

def connectors_of(circuit) -> dict[str, dict]:
    return {c["name"]: c for n in circuit.latest_version.document["nodes"] for c in n.get("params", {}).get("connectors", [])}


def pasted(description: str, what: str) -> list[str]:
    """The psql command line of the description that does `what`, as a shell reads it."""
    import re
    import shlex

    found = [c for c in re.findall(r'psql "[^"]+" -c "[^"]+"', description) if what in c]
    assert len(found) == 1, (what, description)
    return shlex.split(found[0])


@pytest.mark.django_db
@pytest.mark.parametrize("why", ["", "PostgreSQL is not installed and cannot be installed here"])
def test_the_postgres_demo_is_seeded_without_a_database_and_says_why_it_will_not_connect(monkeypatch, why):
    if why:
        monkeypatch.setenv(demo_postgres.WHY_ENV, why)
    err = StringIO()
    output = seed(err)
    assert "created demo circuit 'Orders from PostgreSQL'" in output
    circuit = Circuit.objects.get(name="Orders from PostgreSQL")
    expected = why or "no demo PostgreSQL was started"
    assert f"The connectors will not connect here: {expected}" in circuit.description
    assert expected in err.getvalue()
    assert 'psql "postgresql://postgres@127.0.0.1:5432/shop" -c "INSERT INTO shop.orders' in circuit.description
    connectors = connectors_of(circuit)
    assert connectors["orders-pg"]["kind"] == "postgres_source"
    assert connectors["orders-pg"]["config"] == {"dsn": "postgresql://dbspweb_demo@127.0.0.1:5432/shop",
                                                 "table": "shop.orders"}
    assert connectors["revenue-pg"]["kind"] == "postgres_sink"
    assert connectors["revenue-pg"]["config"]["key"] == "region"
    assert {c["secrets_env"]["password"] for c in connectors.values()} == {"DBSPWEB_DEMO_PG_PASSWORD"}
    version = circuit.latest_version
    assert version.problems == [] and services.validate_document(version.document) == []
    assert set(services.plan_for(version).views) == {"revenue_per_region"}


@pytest.fixture
def demo_server(cdc_postgres, monkeypatch):
    """The session's cluster as ./scripts/run's demo server (its superuser's URL and a password)."""
    if not cdc_postgres.own:
        pytest.skip("TEST_CDC_POSTGRES_URL is someone else's server: the demo's role and database are not made there")
    monkeypatch.setenv(demo_postgres.URL_ENV, cdc_postgres.base)
    monkeypatch.setenv(demo_postgres.PASSWORD_ENV, "demo-pw-1")
    yield cdc_postgres
    with psycopg.connect(cdc_postgres.base, autocommit=True) as conn:
        conn.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = 'shop'")
        conn.execute("DROP DATABASE IF EXISTS shop WITH (FORCE)")
        conn.execute("DROP ROLE IF EXISTS dbspweb_demo")


@pytest.mark.django_db
def test_the_postgres_demo_database_is_made_ready_and_its_connectors_connect(demo_server, client_for, monkeypatch):
    err = StringIO()
    seed(err)
    assert err.getvalue() == ""
    circuit = Circuit.objects.get(name="Orders from PostgreSQL")
    assert "will not connect" not in circuit.description
    admin = demo_server.base.rsplit("/", 1)[0] + "/shop"
    with psycopg.connect(admin) as conn:
        assert conn.execute("SELECT relreplident FROM pg_class WHERE oid = 'shop.orders'::regclass").fetchone() == ("f",)
        assert conn.execute("SELECT count(*) FROM shop.orders").fetchone()[0] == len(demo_postgres.ORDERS)
        assert conn.execute("SELECT rolreplication FROM pg_roles WHERE rolname = 'dbspweb_demo'").fetchone() == (True,)
    connectors = connectors_of(circuit)
    assert connectors["orders-pg"]["config"]["dsn"] == f"postgresql://dbspweb_demo@127.0.0.1:{demo_server.port}/shop"
    # the connection test (as the editor's button), the password read from the named variable
    editor = client_for(get_user_model().objects.get(username="demo"))
    for connector in connectors.values():
        r = editor.post(f"/api/connector-kinds/{connector['kind']}/test/",
                        {"config": connector["config"], "secrets_env": connector["secrets_env"]}, format="json")
        assert r.status_code == 200 and r.json()["ok"] is True, (connector["name"], r.content)
    with psycopg.connect(admin) as conn:  # a connection test leaves nothing behind: no slot, no sink table
        assert conn.execute("SELECT count(*) FROM pg_replication_slots").fetchone() == (0,)
        assert conn.execute("SELECT to_regclass('shop.revenue_per_region')").fetchone() == (None,)
    monkeypatch.setenv(demo_postgres.PASSWORD_ENV, "not-it")
    r = editor.post("/api/connector-kinds/postgres_source/test/",
                    {"config": connectors["orders-pg"]["config"], "secrets_env": connectors["orders-pg"]["secrets_env"]},
                    format="json")
    assert r.json()["ok"] is False and "password authentication failed" in r.json()["error"]
    # the description's command lines work as pasted (the real psql)
    import subprocess

    for what in ("INSERT", "DELETE"):
        done = subprocess.run(pasted(circuit.description, what), capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    with psycopg.connect(admin) as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM shop.orders ORDER BY id")]
    assert ids == sorted({i for i, _, _ in demo_postgres.ORDERS} - {1} | {7})
    # seeding again (the next ./scripts/run) keeps the user's rows and sets the password again
    monkeypatch.setenv(demo_postgres.PASSWORD_ENV, "demo-pw-2")
    assert seed(err) == ""
    assert err.getvalue() == ""
    with psycopg.connect(admin) as conn:
        assert [r[0] for r in conn.execute("SELECT id FROM shop.orders ORDER BY id")] == ids
    with psycopg.connect(connectors["orders-pg"]["config"]["dsn"], password="demo-pw-2") as conn:
        assert conn.execute("SELECT current_user").fetchone() == ("dbspweb_demo",)
