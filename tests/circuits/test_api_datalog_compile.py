"""POST /api/datalog/compile/: a Datalog program in, the circuit document and problems
(line:column, rule) out, nothing saved; the text's size is bounded."""
import pytest

from circuits.models import Circuit

from .frontend_runs import view_contents

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

CLOSURE = """.decl edge(src: number, dst: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
.output path
"""


def _edges(*pairs, delete=False):
    return {"edge": [{"delete" if delete else "insert": {"src": a, "dst": b}} for a, b in pairs]}


def test_transitive_closure_compiles_to_a_fixed_point_that_gives_the_closure(client_for):
    response = client_for().post("/api/datalog/compile/", {"text": CLOSURE}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is True and body["errors"] == []
    document = body["document"]
    assert [n["kind"] for n in document["nodes"]].count("fixedpoint") == 1
    fixedpoint = next(n for n in document["nodes"] if n["kind"] == "fixedpoint")
    assert fixedpoint["source"]["line"] == 2  # the stratum's first rule
    ticks = [_edges((0, 1), (1, 2), (2, 3)), _edges((1, 2), delete=True)]
    after = view_contents(document, ticks)
    pairs = lambda rows: {(dict(r)["x"], dict(r)["y"]) for r in rows}  # noqa: E731
    assert pairs(after[0]["path"]) == {(0, 1), (1, 2), (2, 3), (0, 2), (1, 3), (0, 3)}
    assert pairs(after[1]["path"]) == {(0, 1), (2, 3)}
    assert Circuit.objects.count() == 0


def test_relations_without_a_declaration_take_the_schemas_given(client_for):
    text = "path(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), edge(y, z).\n.output path\n"
    refused = client_for().post("/api/datalog/compile/", {"text": text}, format="json").json()
    assert refused["valid"] is False and refused["errors"][0]["line"] >= 1
    schemas = {"edge": [{"name": "src", "type": "bigint"}, {"name": "dst", "type": "bigint"}]}
    body = client_for().post("/api/datalog/compile/", {"text": text, "schemas": schemas}, format="json").json()
    assert body["valid"] is True
    edge = next(n for n in body["document"]["nodes"] if n["id"] == "edge")
    assert [c["name"] for c in edge["params"]["schema"]] == ["src", "dst"]


def test_an_unstratifiable_program_names_the_rules_at_their_lines(client_for):
    text = ".decl e(a: number, b: number)\np(x) :- e(x, _), !q(x).\nq(x) :- e(x, _), !p(x).\n.output p\n"
    body = client_for().post("/api/datalog/compile/", {"text": text}, format="json").json()
    assert body["valid"] is False and body["document"] is None
    assert {(p["line"], p["rule"]) for p in body["errors"]} == {(2, 1), (3, 2)}
    assert all("not stratifiable" in p["message"] for p in body["errors"])
    assert all(p["column"] >= 1 for p in body["errors"])


def test_text_over_the_limit_is_refused_naming_it(client_for, settings):
    settings.MAX_SOURCE_CHARS = 20
    response = client_for().post("/api/datalog/compile/", {"text": CLOSURE}, format="json")
    assert response.status_code == 400
    assert "20 characters" in response.json()["detail"] and "DBSPWEB_MAX_SOURCE_CHARS" in response.json()["detail"]


@pytest.mark.parametrize("body, field", [({"text": None}, "text"), ({"text": CLOSURE, "schemas": [1]}, "schemas")])
def test_malformed_requests_name_the_field(client_for, body, field):
    response = client_for().post("/api/datalog/compile/", body, format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == field
