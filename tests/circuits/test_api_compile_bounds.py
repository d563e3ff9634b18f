"""Compiling is bounded (issue 31, finding 3): SQL scripts and Datalog programs are
refused at the statement or rule that passes MAX_STATEMENTS (while parsing, before the
rest is read) or MAX_NODES (while compiling), with a 400 naming the limit and the
line:column; every compile, validate, plan and export request has a wall-clock budget
(DBSPWEB_COMPILE_SECONDS) and answers a 400 naming it when the work runs past it."""
import pytest

from circuits.models import Circuit
from dbsp.limits import MAX_NODES, MAX_STATEMENTS
from tests.conftest import example

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


@pytest.fixture(autouse=True)
def ample_budget(settings):
    """The bounds on statements and nodes are what these tests check, not the time the
    work takes on a busy machine (the budget's own test sets it to 0)."""
    settings.COMPILE_SECONDS = 3600


def _refused(response, limit: str) -> dict:
    """The one problem of a 400 that names `limit` (in the detail and the problem)."""
    assert response.status_code == 400, response.content[:500]
    body = response.json()
    assert limit in body["detail"]
    (problem,) = body["errors"]
    assert limit in problem["message"]
    return problem


def test_the_issues_ten_thousand_rule_program_is_refused_at_the_rule_past_the_limit(client_for):
    text = "\n".join(f"r{i}(x) :- e(x)." for i in range(10_000))  # the program of the issue: 179 KB
    problem = _refused(client_for().post("/api/datalog/compile/", {"text": text}, format="json"), "MAX_STATEMENTS")
    assert (problem["line"], problem["column"]) == (MAX_STATEMENTS + 1, 1)
    assert f"more than {MAX_STATEMENTS} rules and declarations" in problem["message"]
    assert Circuit.objects.count() == 0


def test_a_datalog_program_whose_circuit_passes_max_nodes_is_refused_at_its_rule(client_for):
    # each rule joins five atoms: about five nodes a rule, so rule ~400 passes MAX_NODES
    rules = [f"r{i}(x) :- e(x), e(x), e(x), e(x), e(x)." for i in range(600)]
    text = ".decl e(x: number)\n" + "\n".join(rules)
    problem = _refused(client_for().post("/api/datalog/compile/", {"text": text}, format="json"), "MAX_NODES")
    assert f"passes {MAX_NODES} nodes" in problem["message"]
    assert 2 < problem["line"] < 602 and problem["column"] == 1
    assert problem["rule"] == problem["line"] - 1  # the rule at that line


def test_one_relation_with_990_rules_compiles(client_for):
    """1,983 nodes (990 filters, a chain of 989 unions): just within MAX_NODES, so the
    count made while compiling must not refuse it."""
    text = ".decl e(x: number)\n" + "\n".join(f"r(x) :- e(x), x > {i}." for i in range(990))
    response = client_for().post("/api/datalog/compile/", {"text": text}, format="json")
    assert response.status_code == 200, response.content[:500]
    body = response.json()
    assert body["valid"] is True, body["errors"][:3]
    kinds = [n["kind"] for n in body["document"]["nodes"]]
    assert kinds.count("union") == 989 and kinds.count("filter") == 990 and kinds.count("output") == 1


def test_a_sql_script_past_max_statements_is_refused_at_that_statement(client_for):
    views = "\n".join(f"CREATE VIEW v{i} AS SELECT x FROM e;" for i in range(MAX_STATEMENTS + 50))
    text = "CREATE TABLE e (x BIGINT NOT NULL);\n" + views
    problem = _refused(client_for().post("/api/sql/compile/", {"text": text}, format="json"), "MAX_STATEMENTS")
    assert (problem["line"], problem["column"]) == (MAX_STATEMENTS + 1, 1)  # the table is statement 1
    assert f"more than {MAX_STATEMENTS} statements" in problem["message"]


def test_a_sql_script_whose_circuit_passes_max_nodes_is_refused_at_the_view(client_for):
    # each view: a union of 20 selects, so about 40 nodes a view; view ~50 passes MAX_NODES
    union = " UNION ALL ".join(f"SELECT x FROM e WHERE x > {j}" for j in range(20))
    text = "CREATE TABLE e (x BIGINT NOT NULL);\n" + "\n".join(f"CREATE VIEW v{i} AS {union};" for i in range(80))
    problem = _refused(client_for().post("/api/sql/compile/", {"text": text}, format="json"), "MAX_NODES")
    assert f"passes {MAX_NODES} nodes" in problem["message"]
    assert 2 < problem["line"] < 82 and problem["column"] >= 1
    assert problem["source"]["start"]["line"] == problem["line"]


DATALOG = ".decl e(x: number)\nr(x) :- e(x), x > 1.\n"
SQL = "CREATE TABLE e (x BIGINT NOT NULL);\nCREATE VIEW v AS SELECT x FROM e WHERE x > 1;\n"


@pytest.mark.parametrize("path, body, where", [
    ("/api/datalog/compile/", {"text": DATALOG}, "statement 1 (line 1:"),
    ("/api/sql/compile/", {"text": SQL}, "statement 1 (line 1:1)"),
    ("/api/validate/", {"document": example("transactions")}, "node "),
    ("/api/plan/", {"document": example("transactions")}, "node "),
    ("/api/sql/export/", {"document": example("transactions")}, "node "),
])
def test_every_compile_validate_and_plan_request_keeps_to_its_budget(client_for, settings, path, body, where):
    settings.COMPILE_SECONDS = 0  # spent before the work starts: the first check stops it
    response = client_for().post(path, body, format="json")
    assert response.status_code == 400, response.content[:500]
    detail = response.json()["detail"]
    assert "budget of 0 s (DBSPWEB_COMPILE_SECONDS)" in detail and where in detail
    (problem,) = response.json()["errors"]
    assert problem["field"] == "budget" and problem["limit"] == "DBSPWEB_COMPILE_SECONDS"
    settings.COMPILE_SECONDS = 60  # the same request within a budget is answered
    assert client_for().post(path, body, format="json").status_code == 200
