"""Connectors declared where users work: in the circuit document (an input's or output's
`params.connectors`, checked with the node named; created on each run of the version when
it starts; secrets named as environment variables, read when the client opens), the kinds
endpoint the editor's form is built from, and the connection test."""
import copy
import uuid

import pytest
from django.test import override_settings

from circuits import services
from connectors.models import Connector
from connectors.kinds import secrets_of
from connectors.pump import Pump
from connectors.registry import kinds
from runs import lifecycle
from tests.conftest import example

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("api_answers_follow_the_schema")]


def with_connectors(source=None, sink=None) -> dict:
    doc = copy.deepcopy(example("big_orders"))
    nodes = {n["id"]: n for n in doc["nodes"]}
    if source is not None:
        nodes["orders"].setdefault("params", {})["connectors"] = source
    if sink is not None:
        nodes["big_orders"].setdefault("params", {})["connectors"] = sink
    return doc


def problems_of(client_for, doc) -> list[dict]:
    r = client_for(None).post("/api/validate/", {"document": doc}, format="json")
    assert r.status_code == 200, r.content
    body = r.json()
    assert "errors" in body, body
    return body["errors"]


# ---- the kinds endpoint ------------------------------------------------------------------

def test_the_kinds_endpoint_lists_each_kind_with_its_options(client_for):
    r = client_for(None).get("/api/connector-kinds/")
    assert r.status_code == 200
    kinds = {k["name"]: k for k in r.json()}
    assert {"file_source", "file_sink", "kafka_source", "kafka_sink"} <= set(kinds)
    source = kinds["file_source"]
    assert source["source"] is True and kinds["file_sink"]["source"] is False
    options = {o["name"]: o for o in source["options"]}
    assert source["options"][0] == {"name": "path", "required": True, "type": "string", "choices": []}
    assert set(options) == {"path", "format", "pattern", "columns", "max_batch", "on_error"}
    assert options["format"]["choices"][0] == "csv" and "insert_delete" in options["format"]["choices"]
    # every source takes on_error, offered as a choice (fail first: the default); no sink does
    assert all(any(o["name"] == "on_error" and o["choices"] == ["fail", "dead_letter"] for o in k["options"])
               for k in kinds.values() if k["source"])
    assert not any(o["name"] == "on_error" for k in kinds.values() if not k["source"] for o in k["options"])
    assert options["columns"]["type"] == "list" and options["max_batch"]["type"] == "integer"
    kafka = {o["name"]: o for o in kinds["kafka_source"]["options"]}
    assert [n for n, o in kafka.items() if o["required"]] == ["bootstrap_servers", "topic"]
    assert kafka["options"]["type"] == "object"


# ---- the connection test -----------------------------------------------------------------

@pytest.fixture
def editor(make_user, circuit_of, client_for):
    alice = make_user("alice")
    circuit_of(alice)
    return client_for(alice)


def test_connection(api, kind, config, secrets_env=None):
    r = api.post(f"/api/connector-kinds/{kind}/test/", {"config": config, "secrets_env": secrets_env or {}}, format="json")
    assert r.status_code == 200, r.content
    return r.json()


test_connection.__test__ = False


def test_a_file_connection_is_tested(editor, tmp_path):
    assert test_connection(editor, "file_source", {"path": str(tmp_path)}) == {"ok": True, "error": ""}
    missing = tmp_path / "nowhere"
    assert test_connection(editor, "file_source", {"path": str(missing)}) == {
        "ok": False, "error": f"{missing} is not there (yet)"}
    assert test_connection(editor, "file_source", {"path": str(tmp_path), "colour": "red"}) == {
        "ok": False, "error": "unknown option 'colour' for file_source (options: columns, format, max_batch, on_error, path, pattern)"}
    assert test_connection(editor, "file_sink", {}) == {"ok": False, "error": "file_sink needs the option 'path'"}
    assert test_connection(editor, "file_source", {"path": str(tmp_path)}, {"password": "DBSPWEB_TEST_NOT_SET_1"}) == {
        "ok": False, "error": "secret 'password': the environment variable DBSPWEB_TEST_NOT_SET_1 is not set on the worker"}


def test_a_kafka_connection_is_tested(editor, kafka):
    topic = f"test-{uuid.uuid4().hex[:8]}"
    kafka.produce(topic, [{"insert": {"id": 1}}])
    assert test_connection(editor, "kafka_source", {"bootstrap_servers": kafka.bootstrap, "topic": topic}) == {
        "ok": True, "error": ""}
    assert test_connection(editor, "kafka_sink", {"bootstrap_servers": kafka.bootstrap, "topic": topic}) == {
        "ok": True, "error": ""}


@override_settings(CONNECTOR_TEST_SECONDS=1.0)
def test_a_connection_that_does_not_answer_is_given_up(editor):
    # nothing listens on port 9: librdkafka retries until its own timeout (10 s), the test gives up after 1 s
    answer = test_connection(editor, "kafka_source", {"bootstrap_servers": "127.0.0.1:9", "topic": "t"})
    assert answer == {"ok": False, "error": "no answer within 1 s (DBSPWEB_CONNECTOR_TEST_SECONDS)"}


def test_only_users_who_edit_a_circuit_may_test(make_user, client_for, editor, tmp_path):
    body = {"config": {"path": str(tmp_path)}}
    assert client_for(None).post("/api/connector-kinds/file_source/test/", body, format="json").status_code == 403
    assert client_for(make_user("bob")).post("/api/connector-kinds/file_source/test/", body, format="json").status_code == 403
    assert editor.post("/api/connector-kinds/ftp_source/test/", body, format="json").status_code == 404
    bad = editor.post("/api/connector-kinds/file_source/test/", {"config": "path"}, format="json")
    assert bad.status_code == 400 and "config" in bad.json()["detail"] + str(bad.json().get("errors"))


# ---- connectors in the document ----------------------------------------------------------

FILE_IN = {"name": "orders-in", "kind": "file_source", "config": {"path": "/data/in", "format": "csv"}}
FILE_OUT = {"name": "big-out", "kind": "file_sink", "config": {"path": "/data/out"}}


@pytest.mark.parametrize("source, sink, node, message", [
    ([{**FILE_IN, "kind": "ftp_source"}], None, "orders",
     "connectors[0] 'orders-in': unknown kind 'ftp_source' (kinds: " + ", ".join(sorted(kinds())) + ")"),
    # (other kinds may follow in the lists: other modules add them)
    ([{**FILE_IN, "config": {"path": "/x", "colour": "red"}}], None, "orders",
     "connectors[0] 'orders-in': unknown option 'colour' for file_source (options: columns, format, max_batch, on_error, path, pattern)"),
    (None, [{**FILE_OUT, "config": {}}], "big_orders", "connectors[0] 'big-out': file_sink needs the option 'path'"),
    ([FILE_OUT], None, "orders", "connectors[0] 'big-out': file_sink is a sink; an input takes " + ", ".join(sorted(k for k, v in kinds().items() if v.source))),
    ([{**FILE_IN, "secrets": {"password": "x"}}], None, "orders",
     "connectors[0]: unknown field 'secrets' (fields: name, kind, config, secrets_env); secrets are named in "
     "secrets_env, never written in the document"),
    ([FILE_IN, FILE_IN], None, "orders", "connectors[1] 'orders-in': the name is used twice"),
    ([{**FILE_IN, "config": {"path": "/x", "format": "avro"}}], None, "orders",
     f"connectors[0] 'orders-in': format must be one of {', '.join(kinds()['file_source'].formats)}; got 'avro'"),
    ([{**FILE_IN, "secrets_env": {"password": "not a name"}}], None, "orders",
     "connectors[0] 'orders-in': secrets_env must map each secret option to an environment variable name"),
    ("file", None, "orders", "connectors: must be a list of {name, kind, config, secrets_env}"),
])
def test_bad_connectors_in_a_document_are_named_with_their_node(client_for, source, sink, node, message):
    problems = problems_of(client_for, with_connectors(source, sink))
    assert len(problems) == 1, problems
    assert problems[0]["node"] == node and problems[0]["param"] == "connectors"
    assert problems[0]["message"].startswith(f"node {node!r}: {message}"), problems[0]["message"]


def test_a_run_starts_with_the_connectors_its_version_declares(make_user, client_for):
    alice = make_user("alice")
    doc = with_connectors([{**FILE_IN, "secrets_env": {"password": "SOME_PASSWORD"}}], [FILE_OUT])
    assert problems_of(client_for, doc) == []
    circuit = services.create_circuit(alice, "Files", "", "private", doc)
    run = lifecycle.start_run(circuit, alice)
    rows = {c.name: c for c in Connector.objects.filter(run=run)}
    assert {n: (c.kind, c.node, c.config, c.secrets_env, c.secrets, c.created_by_id) for n, c in rows.items()} == {
        "orders-in": ("file_source", "orders", {"path": "/data/in", "format": "csv"}, {"password": "SOME_PASSWORD"}, {},
                      alice.pk),
        "big-out": ("file_sink", "big_orders", {"path": "/data/out"}, {}, {}, alice.pk)}
    listed = client_for(alice).get(f"/api/runs/{run.pk}/connectors/").json()
    assert [(c["name"], c["secrets_env"], c["state"]) for c in listed] == [
        ("big-out", {}, "running"), ("orders-in", {"password": "SOME_PASSWORD"}, "running")]
    # a second run of the version gets its own, from nothing
    again = lifecycle.start_run(circuit, alice)
    assert Connector.objects.filter(run=again).count() == 2


def test_secrets_are_read_from_the_environment_when_the_client_opens(monkeypatch):
    monkeypatch.setenv("DBSPWEB_TEST_PG_PASSWORD", "hunter2")
    assert secrets_of({"sasl.username": "ada"}, {"password": "DBSPWEB_TEST_PG_PASSWORD"}) == {
        "sasl.username": "ada", "password": "hunter2"}
    monkeypatch.delenv("DBSPWEB_TEST_PG_PASSWORD")
    with pytest.raises(Exception, match="secret 'password': the environment variable DBSPWEB_TEST_PG_PASSWORD is not set"):
        secrets_of({}, {"password": "DBSPWEB_TEST_PG_PASSWORD"})


def test_a_missing_secret_variable_fails_the_connector_naming_it(held_run, tmp_path):
    Connector.objects.create(run=held_run, name="orders-in", kind="file_source", node="orders",
                             config={"path": str(tmp_path)}, secrets_env={"password": "DBSPWEB_TEST_NOT_SET_2"})
    Pump().pump_run(held_run, held_run.epoch, held_run.fence)
    connector = Connector.objects.get(run=held_run)
    assert (connector.state, connector.errors) == ("failed", 1)
    assert connector.last_error == ("connector 'orders-in' (file_source): secret 'password': the environment variable "
                                    "DBSPWEB_TEST_NOT_SET_2 is not set on the worker")
