"""POST /api/validate/ reports inferred schemas per node; POST /api/plan/ shows the
compiled incremental plan (inserted integrals and delays) without saving anything."""
import copy

import pytest

from circuits.models import Circuit
from tests.conftest import example

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("api_answers_follow_the_schema")]


def test_validate_reports_the_schema_each_node_produces(client_for):
    body = client_for().post("/api/validate/", {"document": example("transactions")}, format="json").json()
    assert body["valid"] is True and body["errors"] == []
    assert [c["name"] for c in body["schemas"]["credits_by_account"]] == ["to_acct", "credits"]
    assert {"name": "balance", "type": "bigint", "nullable": True} in body["schemas"]["balances"]


def test_plan_shows_the_state_the_compiler_inserted(client_for):
    plan = client_for().post("/api/plan/", {"document": example("transactions")}, format="json").json()
    assert plan["mode"] == "incremental"
    by_id = {n["id"]: n for n in plan["nodes"]}
    assert by_id["by_account"]["incremental"]["form"] == "delta"
    assert by_id["by_account__I_left"]["kind"] == "integrate" and by_id["by_account__I_left"]["inserted"]
    assert by_id["balances"]["incremental"]["form"] == "linear"
    assert Circuit.objects.count() == 0


def test_plan_of_an_invalid_document_lists_every_problem(client_for):
    doc = copy.deepcopy(example("transactions"))
    doc["nodes"][1]["params"]["aggregates"][0]["expr"] = "amount +"
    response = client_for().post("/api/plan/", {"document": doc}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["node"] == "credits_by_account"
