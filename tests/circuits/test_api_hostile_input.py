"""Hostile request bodies at the door (circuits/api/parsers.py, services' limit checks):
every endpoint taking a document refuses, with a 400 (413 for bytes) naming the limit,
JSON nested beyond DBSPWEB_MAX_JSON_DEPTH (it was a RecursionError: a 500 after up to a
minute), documents beyond dbsp/limits.py (nodes, fixed-point nesting, expression
nesting) and lone surrogates anywhere; nothing is stored. A lone surrogate stored before
the door existed cannot break the list."""
import json

import pytest
from django.db import DataError, connection, transaction
from django.test import override_settings

from circuits import services
from circuits.models import Circuit, CircuitVersion
from dbsp import limits
from tests.conftest import example
from tests.dbsp.test_limits import nested_fixed_points

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(make_user):
    return make_user("alice")


@pytest.fixture
def circuit(alice, circuit_of):
    return circuit_of(alice)


def document_posts(circuit):
    """(method, path, body) of every endpoint that takes a circuit document."""
    def wrap(document_text):
        return '{"name": "x", "document": ' + document_text + "}"

    return [
        ("post", "/api/validate/", wrap),
        ("post", "/api/plan/", wrap),
        ("post", "/api/circuits/", wrap),
        ("patch", f"/api/circuits/{circuit.pk}/", wrap),
        ("post", f"/api/circuits/{circuit.pk}/versions/", wrap),
        ("post", "/api/sql/export/", wrap),
    ]


def send(client, method, path, body: str):
    return getattr(client, method)(path, body.encode("utf-8"), content_type="application/json")


def stored():
    return Circuit.objects.count(), CircuitVersion.objects.count(), [c.name for c in Circuit.objects.all()]


@pytest.mark.parametrize("depth", [990, 5_000, 100_000])
def test_deeply_nested_json_is_refused_naming_the_limit_everywhere(depth, alice, circuit, client_for):
    api, before = client_for(alice), stored()
    for method, path, wrap in document_posts(circuit):
        response = send(api, method, path, wrap("[" * depth + "]" * depth))
        assert response.status_code == 400, (path, response.status_code)
        assert "DBSPWEB_MAX_JSON_DEPTH" in response.json()["detail"], path
        assert response.json()["errors"][0]["field"] == "body"
    assert stored() == before


def test_a_document_within_the_request_depth_but_beyond_the_document_depth_names_max_json_depth(alice, client_for):
    deep = {"nodes": [{"id": "a", "kind": "input", "params": {"x": json.loads("[" * 70 + "]" * 70)}}], "edges": []}
    response = client_for(alice).post("/api/validate/", {"document": deep}, format="json")
    assert response.status_code == 400 and "MAX_JSON_DEPTH" in response.json()["detail"]


def filter_doc(predicate: str) -> dict:
    doc = example("big_orders")
    next(n for n in doc["nodes"] if n["id"] == "big")["params"]["predicate"] = predicate
    return doc


def test_48_nested_parentheses_answer_400_naming_the_limit(alice, circuit, client_for):
    api, before = client_for(alice), stored()
    text = json.dumps(filter_doc("(" * 48 + "amount > 1" + ")" * 48))
    for method, path, wrap in document_posts(circuit):
        response = send(api, method, path, wrap(text))
        assert response.status_code == 400, (path, response.status_code)
        body = response.json()
        assert "MAX_EXPRESSION_NESTING" in json.dumps(body), path
        assert body["errors"][0]["node"] == "big"
    assert stored() == before
    # Within the limit it is an ordinary document.
    ok = client_for().post("/api/validate/", {"document": filter_doc("(" * 10 + "amount > 1" + ")" * 10)}, format="json")
    assert ok.status_code == 200 and ok.json()["valid"] is True


def test_400_nested_fixed_points_and_9_nested_fixed_points_are_refused(alice, circuit, client_for):
    api, before = client_for(alice), stored()
    deep_text = json.dumps(nested_fixed_points(400))  # about 1,600 JSON levels: the door
    beyond = json.dumps(nested_fixed_points(limits.MAX_FIXEDPOINT_NESTING + 1))  # shallow JSON: dbsp/limits.py
    for method, path, wrap in document_posts(circuit):
        response = send(api, method, path, wrap(deep_text))
        assert response.status_code == 400 and "DBSPWEB_MAX_JSON_DEPTH" in response.json()["detail"], path
        response = send(api, method, path, wrap(beyond))
        assert response.status_code == 400 and "MAX_FIXEDPOINT_NESTING" in response.json()["detail"], path
    assert stored() == before


def test_a_hundred_thousand_node_document_is_refused_naming_max_nodes(alice, circuit, client_for):
    nodes = [{"id": f"n{i}", "kind": "output"} for i in range(100_000)]
    text = json.dumps({"nodes": nodes, "edges": []}, separators=(",", ":"))
    api, before = client_for(alice), stored()
    for method, path, wrap in document_posts(circuit):
        response = send(api, method, path, wrap(text))
        assert response.status_code == 400, (path, response.status_code)
        assert "MAX_NODES" in response.json()["detail"], path
    assert stored() == before


@override_settings(MAX_DOCUMENT_BODY_BYTES=1000)
def test_a_document_body_over_its_byte_limit_is_refused_unread(alice, circuit, client_for):
    api, before = client_for(alice), stored()
    text = json.dumps({"nodes": [{"id": "x" * 2000, "kind": "output"}], "edges": []})
    for method, path, wrap in document_posts(circuit):
        response = send(api, method, path, wrap(text))
        assert response.status_code == 413, path
        assert "DBSPWEB_MAX_DOCUMENT_BYTES" in response.json()["detail"]
    assert stored() == before


LONE = "\\ud800"  # as sent: a JSON escape of a lone high surrogate


def test_a_lone_surrogate_in_a_node_label_is_refused_naming_its_path(alice, circuit, client_for):
    api, before = client_for(alice), stored()
    doc = json.dumps(example("big_orders")).replace('"id": "big", ', '"id": "big", "label": "x' + LONE + '", ')
    for method, path, wrap in document_posts(circuit):
        response = send(api, method, path, wrap(doc))
        assert response.status_code == 400, (path, response.status_code)
        assert response.json()["errors"][0]["field"] == "document.nodes.1.label", path
    assert stored() == before
    assert client_for().get("/api/circuits/").status_code == 200


@pytest.mark.parametrize("body, field", [
    ('{"name": "a' + LONE + '", "document": %s}', "name"),
    ('{"name": "a", "description": "' + "\\udfff" + 'b", "document": %s}', "description"),
    ('{"name": "a", "tags": ["x' + LONE + '"], "document": %s}', "tags.0"),
    ('{"name": "a", "document": %s, "' + LONE + '": 1}', "\N{REPLACEMENT CHARACTER}"),
])
def test_a_lone_surrogate_in_any_field_or_key_is_refused(body, field, alice, client_for):
    before = stored()
    response = send(client_for(alice), "post", "/api/circuits/", body % json.dumps(example("big_orders")))
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field
    assert stored() == before


def test_surrogate_pairs_are_characters_and_are_kept(alice, client_for):
    body = '{"name": "smile \\ud83d\\ude00", "document": %s}' % json.dumps(example("big_orders"))
    response = send(client_for(alice), "post", "/api/circuits/", body)
    assert response.status_code == 201, response.json()
    assert Circuit.objects.get().name == "smile \N{GRINNING FACE}"


def test_share_settings_and_login_refuse_lone_surrogates(alice, circuit, client_for):
    api = client_for(alice)
    response = send(api, "patch", f"/api/circuits/{circuit.pk}/share/", '{"grants": [{"username": "b' + LONE + '"}]}')
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "grants.0.username"
    response = send(client_for(), "post", "/api/auth/token/", '{"username": "' + LONE + '", "password": "x"}')
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "username"


def test_a_lone_surrogate_stored_earlier_does_not_break_the_list_or_the_detail(alice, client_for):
    doc = example("big_orders")
    doc["nodes"][1]["label"] = "bad \ud800"
    if connection.vendor == "postgresql":  # jsonb refuses it: such a string cannot be stored there at all
        with pytest.raises(DataError), transaction.atomic():
            services.create_circuit(alice, "bad", "", "public", doc)
        return
    circuit = services.create_circuit(alice, "bad", "", "public", doc)  # as before the door (JSON keeps it escaped)
    for path in ("/api/circuits/", f"/api/circuits/{circuit.pk}/"):
        response = client_for().get(path)
        assert response.status_code == 200, path
        assert "\\ud800" in response.content.decode("ascii")  # escaped: valid JSON text
