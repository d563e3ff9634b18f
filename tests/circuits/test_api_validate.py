"""POST /api/validate/: a document in, node-level problems out, nothing saved."""
import pytest

from circuits.models import Circuit

pytestmark = pytest.mark.django_db


def test_validate_endpoint_saves_nothing(client_for):
    response = client_for().post("/api/validate/", {"document": {"nodes": [{"id": "a", "kind": "nope"}], "edges": []}}, format="json")
    assert response.status_code == 200
    assert response.json()["valid"] is False and response.json()["errors"][0]["node"] == "a"
    assert Circuit.objects.count() == 0
