"""GET /api/operators/ (the palette's catalog) and GET /api/circuit-format/ (the document's JSON Schema): public."""
import pytest

pytestmark = pytest.mark.django_db


def test_operator_catalog_and_circuit_format_are_public(client_for):
    catalog = client_for().get("/api/operators/").json()
    assert {"input", "join", "aggregate", "delay"} <= {o["kind"] for o in catalog}
    schema = client_for().get("/api/circuit-format/").json()
    assert schema["title"].startswith("dbspweb circuit document")
