"""One check of pushed values on every way in (issues 30 and 31): a JSON push with a
session (the browser's form), a JSON push with an API token (the push lane,
runs/api/push_lane.py, in the real ASGI app), a CSV body and a CSV file upload refuse
the same values with the same errors (a CSV's message has its line in front), each
naming the row and the column, store nothing, and accept the same values as the same
row."""
from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from circuits import services
from circuits.services import plan_for
from dbsp import arrow_change
from runs.api import push_lane
from runs.models import Push, Run

pytestmark = pytest.mark.django_db(transaction=True)

DOC = {"nodes": [{"id": "t", "kind": "input", "params": {"schema": [
    {"name": "id", "type": "bigint", "nullable": False}, {"name": "n", "type": "bigint"}, {"name": "x", "type": "double"},
    {"name": "s", "type": "string"}, {"name": "xs", "type": "array<double>"}]}},
    {"id": "v", "kind": "output", "params": {}}],
    "edges": [{"from": {"node": "t", "port": "out"}, "to": {"node": "v", "port": "in"}}]}

#: (column, the value as JSON text, as CSV field text, what the error says)
REFUSED = [
    ("n", "-9223372036854775809", "-9223372036854775809", "-9223372036854775809 is out of the bigint range"),
    ("n", "-9223372036854776832", "-9223372036854776832", "-9223372036854776832 is out of the bigint range"),
    ("n", "9223372036854775808", "9223372036854775808", "9223372036854775808 is out of the bigint range"),
    ("n", "18446744073709551616", "18446744073709551616", "18446744073709551616 is out of the bigint range"),
    ("n", "1e19", "1e19", "1e+19 is not an exact integer"),
    ("n", "1.5", "1.5", "expected an integer (bigint), got 1.5"),
    ("n", "NaN", "NaN", "expected an integer (bigint), got nan"),
    ("n", "Infinity", "Infinity", "expected an integer (bigint), got inf"),
    ("n", '"many"', "many", "expected an integer (bigint), got 'many'"),
    ("x", "NaN", "NaN", "nan is not a finite number"),
    ("x", "-Infinity", "-Infinity", "-inf is not a finite number"),
    ("x", "1e400", "1e400", "inf is not a finite number"),
    ("x", '"x"', "x", "expected a number (double), got 'x'"),
    ("s", '"a\\u0000b"', "a\x00b", "contains a NUL character"),
    ("xs", "[1, NaN]", '"[1, NaN]"', "element 1: nan is not a finite number"),
    ("id", "null", "", "null in a non-null column"),
]
#: (column, JSON text, CSV text, the value stored)
ACCEPTED = [
    ("n", "1e3", "1e3", 1000),
    ("n", "7.0", "7.0", 7),
    ("n", "9007199254740993", "9007199254740993", 9007199254740993),
    ("n", "-9223372036854775808", "-9223372036854775808", -9223372036854775808),
    ("n", "9223372036854775807", "9223372036854775807", 9223372036854775807),
    ("x", "-0.0", "-0.0", 0.0),
    ("x", "3", "3", 3.0),
]


@pytest.fixture(autouse=True)
def _lane_connection_closed():
    yield
    push_lane.close_connection()


@pytest.fixture
def run(make_user):
    alice = make_user("alice")
    circuit = services.create_circuit(alice, "Values", "", "private", DOC)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    run.token = Token.objects.create(user=alice).key
    return run


def path(run):
    return f"/api/runs/{run.pk}/inputs/t/push/"


def json_body(column, text):
    """Row 0 plain, row 1 holding the value."""
    return f'[{{"insert": {{"id": 1}}}}, {{"insert": {{"id": 2, "{column}": {text}}}}}]'.encode()


def csv_body(column, text):
    if column == "id":
        return f"id,n\n1,\n{text},\n".encode()
    return f"id,{column}\n1,\n2,{text}\n".encode()


def every_way(run, column, json_text, csv_text):
    """{way: (status, body)} for the same value pushed every way."""
    session = Client()
    session.force_login(run.created_by)
    answers = {"session JSON": session.post(path(run), json_body(column, json_text), content_type="application/json")}

    async def lane():
        transport = httpx.ASGITransport(app=_app())
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            return await client.post(path(run), content=json_body(column, json_text),
                                     headers={"Authorization": f"Token {run.token}", "Content-Type": "application/json"})

    answers["token JSON (lane)"] = asyncio.run(lane())
    api = APIClient()
    api.force_authenticate(run.created_by)
    answers["CSV body"] = api.generic("POST", path(run), csv_body(column, csv_text), content_type="text/csv")
    upload = SimpleUploadedFile("t.csv", csv_body(column, csv_text), content_type="text/csv")
    answers["CSV upload"] = api.post(path(run), {"file": upload}, format="multipart")
    return {way: (a.status_code, a.json()) for way, a in answers.items()}


def _app():
    from dbspweb.asgi import application

    return application


def without_line(body: dict) -> dict:
    """A CSV's answer as a JSON push's: no line in the errors or their messages."""
    errors = []
    for e in body.get("errors", []):
        e = dict(e)
        line = e.pop("line", None)
        if line is not None:
            assert e["message"].startswith(f"line {line}: "), e
            e["message"] = e["message"][len(f"line {line}: "):]
        errors.append(e)
    return {**body, "errors": errors}


@pytest.mark.parametrize("column,json_text,csv_text,says", REFUSED, ids=[f"{c}={j}" for c, j, _, _ in REFUSED])
def test_a_bad_value_is_refused_alike_on_every_way_in_naming_row_and_column(run, column, json_text, csv_text, says):
    answers = every_way(run, column, json_text, csv_text)
    for way, (status, body) in answers.items():
        assert status == 400, (way, body)
        [error] = body["errors"]
        assert (error["row"], error["field"]) == (1, column), (way, error)
        assert f"row 1, column {column!r}: " in error["message"] and says in error["message"], (way, error)
        if way.startswith("CSV"):
            assert error["line"] == 3 and error["message"].startswith("line 3: row 1, "), (way, error)
    assert len({json.dumps(without_line(body), sort_keys=True) for _, body in answers.values()}) == 1, answers
    assert Push.objects.count() == 0 and Run.objects.get(pk=run.pk).last_sequence == 0


@pytest.mark.parametrize("column,json_text,csv_text,stored", ACCEPTED, ids=[f"{c}={j}" for c, j, _, _ in ACCEPTED])
def test_a_good_value_is_stored_alike_on_every_way_in(run, column, json_text, csv_text, stored):
    answers = every_way(run, column, json_text, csv_text)
    assert [status for status, _ in answers.values()] == [202] * 4, answers
    schema = plan_for(run.version).inputs["t"]
    for entry in Push.objects.filter(run=run).order_by("sequence"):
        table = arrow_change.from_ipc(entry.change)
        assert table[column].to_pylist()[1] == stored, entry.sequence
        assert type(arrow_change.records_json(table, schema)[1]["data"][column]) is type(stored)


def test_a_quote_inside_an_unquoted_csv_field_is_refused_naming_row_and_column(run, client_for):
    api = client_for(run.created_by)
    text = 'id,s\n1,"a ""quoted"" word"\n2,ab"c"d\n3,plain\n'
    response = api.generic("POST", path(run), text.encode(), content_type="text/csv")
    assert response.status_code == 400, response.json()
    [error] = response.json()["errors"]
    assert (error["row"], error["line"], error["field"]) == (1, 3, "s")
    assert error["message"].startswith("line 3: row 1, column 's': a quote inside an unquoted field")
    assert Push.objects.count() == 0
    # quoted as RFC 4180 says, the same value is taken
    fixed = api.generic("POST", path(run), 'id,s\n1,"a ""quoted"" word"\n2,"ab""c""d"\n'.encode(), content_type="text/csv")
    assert fixed.status_code == 202, fixed.json()
    assert [r["data"]["s"] for r in Push.objects.get().records] == ['a "quoted" word', 'ab"c"d']


def test_a_bad_header_quote_and_problems_on_many_rows_are_all_named(run, client_for):
    api = client_for(run.created_by)
    header = api.generic("POST", path(run), b'id,s"x"\n1,a\n', content_type="text/csv")
    assert header.status_code == 400 and header.json()["errors"][0]["line"] == 1
    text = "id,n,x\n1,NaN,1\n2,3,\n3,4,Infinity\n,5,1\n"
    response = api.generic("POST", path(run), text.encode(), content_type="text/csv")
    assert response.status_code == 400
    assert [(e["row"], e["line"], e["field"]) for e in response.json()["errors"]] == [(0, 2, "n"), (2, 4, "x"), (3, 5, "id")]
    assert Push.objects.count() == 0
