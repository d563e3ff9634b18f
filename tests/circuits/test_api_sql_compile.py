"""POST /api/sql/compile/: SQL views in, the circuit document and problems (line:column,
node) out, nothing saved; the text's size is bounded."""
from pathlib import Path

import pytest

from circuits.models import Circuit

from .frontend_runs import view_contents

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

ROOT = Path(__file__).resolve().parents[2]
TRANSACTIONS = (ROOT / "examples" / "sql" / "transactions.sql").read_text()


def _span_text(text: str, source: dict) -> str:
    lines = text.split("\n")
    start, end = source["start"], source["end"]
    if start["line"] == end["line"]:
        return lines[start["line"] - 1][start["column"] - 1:end["column"]]
    return lines[start["line"] - 1][start["column"] - 1:]


def test_the_seed_views_compile_to_a_circuit_that_gives_the_seed_results(client_for):
    response = client_for().post("/api/sql/compile/", {"text": TRANSACTIONS}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is True and body["errors"] == []
    document = body["document"]
    outputs = {n["id"] for n in document["nodes"] if n["kind"] == "output"}
    assert outputs == {"credits", "debits", "balance", "total"}
    assert all("source" in n for n in document["nodes"])
    # each view's output node points at the view's name in the text
    by_id = {n["id"]: n for n in document["nodes"]}
    assert _span_text(TRANSACTIONS, by_id["total"]["source"]) == "total"
    assert by_id["total"]["source"]["start"]["line"] == 20
    pushes = [{"transactions": [{"insert": {"id": i, "from_acct": f, "to_acct": t, "amount": a}}]}
              for i, (f, t, a) in enumerate([(1, 2, 50), (2, 3, 30), (3, 1, 20)])]
    after = view_contents(document, pushes)
    assert after[1]["total"] == {(("total", 20),)}
    assert after[2]["total"] == {(("total", 0),)}
    assert after[2]["balance"] == {(("account", 1), ("balance", -30)), (("account", 2), ("balance", 20)),
                                   (("account", 3), ("balance", 10))}
    assert set(body["schemas"]) >= outputs
    assert Circuit.objects.count() == 0


def test_each_broken_view_is_reported_at_its_line_and_column(client_for):
    text = TRANSACTIONS.replace("SUM(amount) AS debits", "SUM(amuont) AS debits")  # line 13
    text += "\nCREATE VIEW firsts AS SELECT id FROM transactions ORDER BY id;\n"
    response = client_for().post("/api/sql/compile/", {"text": text}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is False and body["document"] is None
    where = {(p["line"], p["column"]) for p in body["errors"]}
    lines = text.split("\n")
    unknown = next(p for p in body["errors"] if "amuont" in p["message"])
    assert unknown["line"] == 13 and lines[12][unknown["column"] - 1:].startswith("amuont")
    order = next(p for p in body["errors"] if "ORDER" in p["message"])
    clause = lines[22].index("ORDER BY id")  # the span is within the clause (at its key)
    assert order["line"] == 23 and clause < order["column"] <= clause + len("ORDER BY id")
    assert len(where) == 2
    assert Circuit.objects.count() == 0


def test_a_syntax_error_has_its_line_and_column(client_for):
    response = client_for().post("/api/sql/compile/", {"text": "CREATE TABLE t (a BIGINT);\nCREATE VIEW v AS SELEC a FROM t;"},
                                 format="json")
    errors = response.json()["errors"]
    assert response.status_code == 200 and errors and errors[0]["line"] == 2


def test_text_over_the_limit_is_refused_naming_it(client_for, settings):
    settings.MAX_SOURCE_CHARS = 100
    response = client_for().post("/api/sql/compile/", {"text": TRANSACTIONS}, format="json")
    assert response.status_code == 400
    assert "100 characters" in response.json()["detail"] and "DBSPWEB_MAX_SOURCE_CHARS" in response.json()["detail"]
    assert response.json()["errors"][0]["field"] == "text"


@pytest.mark.parametrize("body", [{}, {"text": 5}, {"text": ["CREATE TABLE t (a BIGINT);"]}, ["x"]])
def test_text_must_be_a_string(client_for, body):
    response = client_for().post("/api/sql/compile/", body, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "text"


@pytest.mark.parametrize("where", ["(" * 5000 + "a > 1" + ")" * 5000, " AND ".join(["a > 1"] * 3000)])
def test_text_nested_too_deeply_for_the_parser_is_refused_not_a_server_error(client_for, where):
    text = f"CREATE TABLE t (a BIGINT);\nCREATE VIEW v AS SELECT a FROM t WHERE {where};"
    response = client_for().post("/api/sql/compile/", {"text": text}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is False and "nests too deeply" in body["errors"][0]["message"]


def test_a_problem_the_engine_finds_in_a_compiled_node_is_placed_at_its_source(client_for, monkeypatch):
    """A narrow test with the compiler replaced: should a front end ever give a node the
    engine refuses, the problem names the node and the line:column of its source."""
    from circuits import frontends

    schema = [{"name": "a", "type": "bigint"}]
    broken = {"format": "dbspweb.circuit", "version": 1, "nodes": [
        {"id": "t", "kind": "input", "params": {"schema": schema}, "source": {"start": {"line": 1, "column": 14}, "end": {"line": 1, "column": 14}}},
        {"id": "v_where", "kind": "filter", "params": {"predicate": "nope > 1"},
         "source": {"start": {"line": 2, "column": 30}, "end": {"line": 2, "column": 37}}},
        {"id": "v", "kind": "output", "params": {}, "source": {"start": {"line": 2, "column": 13}, "end": {"line": 2, "column": 13}}},
    ], "edges": [{"from": {"node": "t", "port": "out"}, "to": {"node": "v_where", "port": "in"}},
                 {"from": {"node": "v_where", "port": "out"}, "to": {"node": "v", "port": "in"}}]}
    monkeypatch.setattr(frontends, "compile_sql", lambda text: broken)
    body = client_for().post("/api/sql/compile/", {"text": "anything"}, format="json").json()
    assert body["valid"] is False and body["document"] == broken
    problem = next(p for p in body["errors"] if p.get("node") == "v_where")
    assert (problem["line"], problem["column"]) == (2, 30)
