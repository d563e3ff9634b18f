"""POST /api/sql/export/: a drawn circuit in, its SQL out, or the node SQL cannot express."""
import pytest

from tests.conftest import example

from .frontend_runs import view_contents

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def test_the_drawn_seed_circuit_exports_sql_that_compiles_to_the_same_views(client_for):
    drawn = example("transactions")
    response = client_for().post("/api/sql/export/", {"document": drawn}, format="json")
    assert response.status_code == 200 and response.json()["errors"] == []
    sql = response.json()["sql"]
    assert "CREATE TABLE transactions" in sql
    compiled = client_for().post("/api/sql/compile/", {"text": sql}, format="json").json()
    assert compiled["valid"] is True
    ticks = [{"transactions": [{"insert": {"id": i, "from_acct": f, "to_acct": t, "amount": a}}]}
             for i, (f, t, a) in enumerate([(1, 2, 50), (2, 3, 30), (3, 1, 20)])]
    assert view_contents(compiled["document"], ticks) == view_contents(drawn, ticks)


def test_a_node_sql_cannot_express_is_named(client_for):
    drawn = example("transactions")
    drawn["nodes"] += [{"id": "minus", "kind": "difference", "params": {}}, {"id": "gone", "kind": "output", "params": {}}]
    out = {"node": "transactions", "port": "out"}
    drawn["edges"] += [{"from": out, "to": {"node": "minus", "port": "a"}},
                       {"from": out, "to": {"node": "minus", "port": "b"}},
                       {"from": {"node": "minus", "port": "out"}, "to": {"node": "gone", "port": "in"}}]
    response = client_for().post("/api/sql/export/", {"document": drawn}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["sql"] is None and body["errors"][0]["node"] == "minus"
    assert "difference" in body["errors"][0]["message"]


def test_an_invalid_circuit_gets_its_problems(client_for):
    response = client_for().post("/api/sql/export/", {"document": {"nodes": [{"id": "a", "kind": "nope"}], "edges": []}},
                                 format="json")
    body = response.json()
    assert response.status_code == 200 and body["sql"] is None and body["errors"][0]["node"] == "a"
