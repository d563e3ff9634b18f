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


def test_plan_of_a_fixed_point_without_positions_leaves_them_out(client_for):
    """A node the document did not place has no position in the plan (it was {}, which the
    browser took as placed: no layout, NaN coordinates); a fixed point's body is planned
    node by node (the answer, recursive, follows the schema's Plan: see the fixture)."""
    doc = copy.deepcopy(example("transitive_closure"))

    def unplace(nodes):
        for node in nodes:
            node.pop("position", None)
            unplace(node.get("subcircuit", {}).get("nodes", []))

    unplace(doc["nodes"])
    plan = client_for().post("/api/plan/", {"document": doc}, format="json").json()

    def walk(nodes):
        for node in nodes:
            yield node
            yield from walk(node.get("subcircuit", {}).get("nodes", []))

    nodes = list(walk(plan["nodes"]))
    assert [n["id"] for n in nodes if "position" in n] == []
    inner = [n for n in plan["nodes"] if n["kind"] == "fixedpoint"][0]["subcircuit"]["nodes"]
    assert {n["incremental"]["form"] for n in inner} >= {"boundary"}
    placed = client_for().post("/api/plan/", {"document": example("transitive_closure")}, format="json").json()
    assert all(set(n["position"]) == {"x", "y"} for n in placed["nodes"] if not n.get("inserted"))
