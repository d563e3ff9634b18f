"""`manage.py seed_demo`: the demo user and one circuit per example document, idempotent."""
import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from circuits import services
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


def seed() -> str:
    out = StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


@pytest.fixture(autouse=True)
def default_demo_account(monkeypatch):
    monkeypatch.delenv("DEMO_USER", raising=False)
    monkeypatch.delenv("DEMO_PASSWORD", raising=False)


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
    assert set(circuits) == set(examples)
    assert Circuit.objects.count() == len(examples)  # nothing for anyone else
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
    assert Circuit.objects.filter(owner=user).count() == len(example_circuits())


@pytest.mark.django_db
def test_the_demo_account_name_and_password_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("DEMO_USER", "showcase")
    monkeypatch.setenv("DEMO_PASSWORD", "s3cret-demo")
    seed()
    user = get_user_model().objects.get(username="showcase")
    assert user.check_password("s3cret-demo")
    assert not get_user_model().objects.filter(username="demo").exists()
    assert Circuit.objects.filter(owner=user).count() == len(example_circuits())
