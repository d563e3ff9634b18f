"""Hypothesis fuzz through the real API (Django's test client, the real parsers, views,
services and database): push bodies (JSON and CSV), expressions and whole documents,
with hostile strings (lone surrogates, NUL, huge numbers, deep nesting) mixed in.
Every answer is below 500; a refused request (4xx) stores nothing (the row counts of
circuits, versions, runs and pushes are the same after it); an accepted one stored no
lone surrogate (the newest push, version and circuit are read back).

Bounded: derandomized, a fixed number of examples per test (FUZZ_EXAMPLES); the file
takes 45-65 s on the 2-core machine (4 tests, the longest ~23 s).
"""
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from circuits.api.parsers import lone_surrogate_paths
from circuits.models import Circuit, CircuitVersion
from runs.models import Push, Run
from tests.conftest import example

pytestmark = pytest.mark.django_db

FUZZ_EXAMPLES = 120
fuzz = settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])

hostile_text = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["\ud800", "a\udfff", "\x00", "\ud83d\ude00", "'; DROP TABLE x; --", "%" * 30 + "b",
                     "9" * 5000, "1e400", "NaN", "-0", "\u2028", "<script>"]),
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                    st.floats(allow_nan=False, allow_infinity=False), hostile_text)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_text, inner, max_size=4),
                           max_leaves=20)


def dumped(value) -> bytes:
    """JSON text as a client would send it; lone surrogates become \\u escapes."""
    return json.dumps(value, ensure_ascii=True).encode()


def counts():
    return Circuit.objects.count(), CircuitVersion.objects.count(), Run.objects.count(), Push.objects.count()


def assert_answered(response, before):
    assert response.status_code < 500, response.content[:500]
    if response.status_code >= 400:
        assert counts() == before, response.content[:300]
        return
    push = Push.objects.order_by("-pk").first()
    newest = [push.records if push is not None else None,  # (stored as Arrow or JSON: read back as records)
              CircuitVersion.objects.order_by("-pk").values_list("document", flat=True).first(),
              list(Circuit.objects.order_by("-updated_at").values_list("name", "description").first() or ())]
    assert lone_surrogate_paths(newest) == []


@pytest.fixture
def owner(make_user):
    return make_user("fuzzer")


@pytest.fixture
def api(owner, client_for):
    return client_for(owner)


@pytest.fixture
def run(owner):
    from circuits import services

    circuit = services.create_circuit(owner, "fuzzed", "", "private", example("big_orders"))
    return Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=owner, status="running")


bigint = st.integers(min_value=-(2**63), max_value=2**63 - 1)
typed_row = st.fixed_dictionaries({"id": bigint, "customer": st.one_of(st.none(), hostile_text, st.sampled_from(["\ud800x", "\udc00"])),
                                   "amount": st.one_of(st.none(), bigint)})
row = st.one_of(typed_row, st.fixed_dictionaries({"id": scalars, "customer": scalars, "amount": scalars}))
record = st.one_of(
    st.builds(lambda r: {"insert": r}, row), st.builds(lambda r: {"delete": r}, row),
    st.builds(lambda w, r: {"weight": w, "data": r}, scalars, row), json_values,
)
push_body = st.one_of(st.lists(st.builds(lambda r: {"insert": r}, typed_row), min_size=1, max_size=3),  # hostile strings reach the log
                      st.lists(record, max_size=5), st.builds(lambda rs: {"records": rs}, st.lists(record, max_size=5)), json_values)


@fuzz
@given(body=push_body)
def test_push_bodies(api, run, body):
    before = counts()
    response = api.generic("POST", f"/api/runs/{run.pk}/inputs/orders/push/", dumped(body), content_type="application/json")
    assert_answered(response, before)


csv_cell = st.one_of(hostile_text, st.integers().map(str), st.sampled_from(["", "\"", "\"a,b\"", "-1", "1e400"]))
csv_header = st.one_of(st.just(["id", "customer", "amount"]), st.just(["id", "_weight", "amount"]),
                       st.lists(st.sampled_from(["id", "customer", "amount", "_weight", "x", ""]), max_size=5))


@fuzz
@given(header=csv_header, rows=st.lists(st.lists(csv_cell, max_size=5), max_size=5),
       raw=st.one_of(st.none(), st.binary(max_size=30)))
def test_csv_pushes(api, run, header, rows, raw):
    text = "\n".join(",".join(cells) for cells in [header, *rows])
    body = text.encode("utf-8", "surrogatepass") + (raw or b"")
    before = counts()
    response = api.generic("POST", f"/api/runs/{run.pk}/inputs/orders/push/", body, content_type="text/csv")
    assert_answered(response, before)


expression_token = st.sampled_from([
    "amount", "customer", "id", "1", "1.5", "1e400", "9" * 400, "'x'", "'\ud800'", "NULL", "TRUE", "+", "-", "*", "/", "%",
    "^", "(", ")", "(", ")", ",", "AND", "OR", "NOT", "=", "<>", ">", "LIKE", "'%a%a%a%b'", "ILIKE", "IN", "IS", "CASE",
    "WHEN", "THEN", "ELSE", "END", "abs(", "round(", "concat(", "upper(", "CAST(", "AS", "BIGINT", "eval(", "reflect(",
    ";", "--", "/*", "\"", "`", "\x00",
])


def with_predicate(predicate: str) -> dict:
    doc = example("big_orders")
    next(n for n in doc["nodes"] if n["id"] == "big")["params"]["predicate"] = predicate
    return doc


@fuzz
@given(tokens=st.lists(expression_token, max_size=30))
def test_expressions(api, tokens):
    document = with_predicate(" ".join(tokens))
    for path in ("/api/validate/", "/api/circuits/"):
        before = counts()
        response = api.generic("POST", path, dumped({"name": "e", "document": document}), content_type="application/json")
        assert_answered(response, before)


node = st.fixed_dictionaries(
    {"id": hostile_text, "kind": st.sampled_from(["input", "filter", "map", "output", "fixedpoint", "join", "nope"])},
    optional={"params": st.dictionaries(hostile_text, json_values, max_size=3), "label": hostile_text,
              "subcircuit": json_values, "position": json_values},
)
edge = st.fixed_dictionaries({"from": st.fixed_dictionaries({"node": hostile_text, "port": hostile_text}),
                              "to": st.fixed_dictionaries({"node": hostile_text, "port": hostile_text})})
def labelled(label: str, node_id: str) -> dict:
    """A valid document with a hostile label and a hostile id on a node."""
    doc = example("big_orders")
    doc["nodes"][1]["label"] = label
    doc["nodes"][2]["id"] = node_id
    doc["edges"][1]["to"]["node"] = node_id
    return doc


document = st.one_of(
    st.builds(labelled, hostile_text, st.one_of(st.just("big_orders"), hostile_text)),
    st.fixed_dictionaries({"nodes": st.lists(node, max_size=5), "edges": st.lists(edge, max_size=5)}),
    json_values,
    st.integers(min_value=1, max_value=800).map(lambda d: json.loads("[" * d + "]" * d)),
)


@fuzz
@given(doc=document, name=hostile_text)
def test_documents(api, run, doc, name):
    for method, path in (("POST", "/api/validate/"), ("POST", "/api/plan/"), ("POST", "/api/circuits/"),
                         ("PATCH", f"/api/circuits/{run.circuit_id}/"), ("POST", f"/api/circuits/{run.circuit_id}/versions/")):
        before = counts()
        response = api.generic(method, path, dumped({"name": name, "document": doc}), content_type="application/json")
        assert_answered(response, before)
