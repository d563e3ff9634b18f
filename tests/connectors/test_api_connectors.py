"""/api/runs/<id>/connectors/: declared by those who may operate the run, seen by those
who may see it, secrets stored but never returned, every bad declaration a 400 naming
its field, and the state following the run's pause."""
import json

import pytest

from connectors.models import Connector
from runs.models import Run

pytestmark = pytest.mark.django_db

KAFKA = {"name": "orders-in", "kind": "kafka_source", "node": "orders",
         "config": {"bootstrap_servers": "127.0.0.1:9", "topic": "orders", "format": "debezium", "start": "latest",
                    "options": {"security.protocol": "SASL_PLAINTEXT", "sasl.username": "ada"}},
         "secrets": {"sasl.password": "hunter2-very-secret"}}


@pytest.fixture
def run(make_user, circuit_of):
    alice = make_user("alice")
    circuit = circuit_of(alice, "public")
    return Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")


def test_declare_list_and_status_never_return_secrets(run, client_for):
    api = client_for(run.created_by)
    r = api.post(f"/api/runs/{run.pk}/connectors/", KAFKA, format="json")
    assert r.status_code == 201, r.content
    listed = api.get(f"/api/runs/{run.pk}/connectors/")
    one = api.get(f"/api/runs/{run.pk}/connectors/orders-in/")
    for body in (r.content, listed.content, one.content):
        assert b"hunter2" not in body and b"secrets\"" not in body
    status = one.json()
    assert status | {"created_at": None} == {
        "name": "orders-in", "kind": "kafka_source", "node": "orders", "config": KAFKA["config"],
        "secret_keys": ["sasl.password"], "state": "running", "position": {}, "records_in": 0, "records_out": 0,
        "last_tick": -1, "errors": 0, "last_error": "", "error_at": None, "created_at": None, "secrets_env": {},
        "lag": None, "lag_unit": "", "rows_per_second": 0.0, "dead_letters": 0}
    assert [c["name"] for c in listed.json()] == ["orders-in"]
    # stored encrypted (tests/connectors/test_connector_secrets.py), opened for the worker
    assert Connector.objects.get().opened_secrets() == {"sasl.password": "hunter2-very-secret"}


def test_state_is_paused_with_the_run(run, client_for):
    api = client_for(run.created_by)
    api.post(f"/api/runs/{run.pk}/connectors/", KAFKA, format="json")
    assert api.post(f"/api/runs/{run.pk}/pause/").status_code == 200
    assert api.get(f"/api/runs/{run.pk}/connectors/orders-in/").json()["state"] == "paused"


@pytest.mark.parametrize("change, field, message", [
    ({"node": "big_orders"}, "node", "a source feeds an input table; inputs: orders"),
    ({"kind": "file_sink", "node": "orders"}, "node", "a sink receives an output view; views: big_orders"),
    ({"kind": "kafka_tap"}, "kind", '"kafka_tap" is not a valid choice.'),
    ({"name": "1st"}, "name", "a letter, then letters, digits, _ or - (at most 64)"),
    ({"config": {"topic": "t"}}, "config", "bootstrap_servers is required (a string)"),
    ({"config": {**KAFKA["config"], "colour": "red"}}, "config", "unknown option 'colour' for kafka_source (options: "
     "bootstrap_servers, columns, format, group_id, max_batch, on_error, options, start, topic)"),
    ({"config": {**KAFKA["config"], "on_error": "skip"}}, "config", "on_error must be one of fail, dead_letter; got 'skip'"),
    ({"config": {**KAFKA["config"], "options": {"sasl.password": "x"}}}, "config",
     "option 'sasl.password' is a secret: put it in secrets (never returned)"),
    ({"config": {**KAFKA["config"], "format": "avro"}}, "config", "format must be one of insert_delete, debezium, json, csv; got 'avro'"),
    ({"config": {**KAFKA["config"], "start": "middle"}}, "config", "start must be one of earliest, latest, stored"),
    ({"config": {**KAFKA["config"], "columns": ["id", "colour"]}}, "config", "columns: a list of the input's columns (id, customer, amount)"),
])
def test_bad_declarations_are_refused_naming_the_field(run, client_for, change, field, message):
    r = client_for(run.created_by).post(f"/api/runs/{run.pk}/connectors/", {**KAFKA, **change}, format="json")
    assert r.status_code == 400
    assert r.json()["errors"] == [{"field": field, "message": message}]
    assert not Connector.objects.exists()


def test_a_name_is_taken_once_per_run(run, client_for):
    api = client_for(run.created_by)
    assert api.post(f"/api/runs/{run.pk}/connectors/", KAFKA, format="json").status_code == 201
    r = api.post(f"/api/runs/{run.pk}/connectors/", KAFKA, format="json")
    assert (r.status_code, r.json()["errors"]) == (400, [{"field": "name", "message": f"run {run.pk} already has a connector 'orders-in'"}])


def test_only_operators_declare_and_delete(run, client_for, make_user):
    bob = make_user("bob")
    api = client_for(bob)  # the circuit is public: bob sees the run but may not operate it
    assert api.get(f"/api/runs/{run.pk}/connectors/").status_code == 200
    assert api.post(f"/api/runs/{run.pk}/connectors/", KAFKA, format="json").status_code == 403
    client_for(run.created_by).post(f"/api/runs/{run.pk}/connectors/", KAFKA, format="json")
    assert api.delete(f"/api/runs/{run.pk}/connectors/orders-in/").status_code == 403
    assert client_for(run.created_by).delete(f"/api/runs/{run.pk}/connectors/orders-in/").status_code == 204
    assert not Connector.objects.exists()
    assert client_for(run.created_by).get(f"/api/runs/{run.pk}/connectors/orders-in/").status_code == 404


def test_a_private_run_s_connectors_are_not_found_by_others(make_user, circuit_of, client_for):
    alice = make_user("alice")
    circuit = circuit_of(alice, "private")
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    assert client_for(make_user("eve")).get(f"/api/runs/{run.pk}/connectors/").status_code == 404


def test_a_stopped_run_takes_no_connectors(run, client_for):
    Run.objects.filter(pk=run.pk).update(status="stopped")
    r = client_for(run.created_by).post(f"/api/runs/{run.pk}/connectors/", KAFKA, format="json")
    assert r.status_code == 409 and "is stopped" in r.json()["detail"]


def test_restart_runs_a_failed_connector_again(run, client_for):
    api = client_for(run.created_by)
    api.post(f"/api/runs/{run.pk}/connectors/", KAFKA, format="json")
    Connector.objects.update(state="failed", last_error="boom")
    r = api.post(f"/api/runs/{run.pk}/connectors/orders-in/restart/")
    assert (r.status_code, r.json()["state"], r.json()["last_error"]) == (200, "running", "boom")
    assert json.dumps(r.json()).count("hunter2") == 0
