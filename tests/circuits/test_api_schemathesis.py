"""Schemathesis fuzzes every operation of the OpenAPI schema (/api/schema/) through the
Django WSGI app in-process, on the test database, and asserts no answer is a 5xx and
every answer is what the schema documents (status code, content type, body schema).

Bounded: a few derandomized examples per operation (the whole file runs in well under
two minutes). Half of the generated path ids are swapped for real objects (a circuit
with a run, its share token, version 1, input `orders`) so requests get past the 404s;
a third of the requests are anonymous, the rest carry the owner's API token.
"""
import itertools

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, Phase, settings
from rest_framework.authtoken.models import Token
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance, status_code_conformance

from circuits import services
from runs.models import Push, Run, TickOutput
from tests.conftest import example

MAX_EXAMPLES = 8


def load_schema():
    """The schema the API serves at /api/schema/, generated at collection (no database
    needed), bound to the WSGI app so calls run in-process on the test database."""
    from drf_spectacular.generators import SchemaGenerator

    loaded = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
    loaded.app = get_wsgi_application()
    return loaded


schema = load_schema()


def test_every_operation_documents_its_answers():
    """Conformance can only check what is documented: every operation's success answer
    has a body schema (but a 204), and operation ids and enum names are the schema's own
    (drf-spectacular falls back to numeral suffixes and hashed names on collisions)."""
    from drf_spectacular.generators import SchemaGenerator

    raw = SchemaGenerator().get_schema(request=None, public=True)
    undocumented, ids = [], []
    for path, operations in raw["paths"].items():
        for method, operation in operations.items():
            ids.append(operation["operationId"])
            for code, answer in operation["responses"].items():
                if code.startswith("2") and code != "204":
                    content = answer.get("content") or {}
                    if not content or not all(media.get("schema") for media in content.values()):
                        undocumented.append(f"{method.upper()} {path} {code}")
    assert undocumented == []
    assert [i for i in ids if i[-1].isdigit()] == [] and len(set(ids)) == len(ids)
    assert [name for name in raw["components"]["schemas"] if any(c.isdigit() for c in name)] == []


@pytest.fixture(autouse=True)
def keep_the_test_connection():
    # As Django's test client does: a request must not close the test's database
    # connection (it holds the transaction every test is rolled back in).
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def objects(db, django_user_model):
    owner = django_user_model.objects.create_user("fuzz-owner")
    token = Token.objects.create(user=owner)
    circuit = services.create_circuit(owner, "fuzzed", "", "unlisted", example("big_orders"), tags=["fuzz"])
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=owner, status="running",
                             current_tick=0, last_sequence=1)
    Push.objects.create(run=run, sequence=1, input="orders", records=[], row_count=0)
    TickOutput.objects.create(run=run, tick=0, deltas={"big_orders": []}, frontier={"orders": {"tick": 0}}, stats={"orders": {"rows_in": 0}})
    return {"token": token.key, "circuit": circuit, "run": run}


counter = itertools.count()


def real_ids(case, objects) -> None:
    params = case.path_parameters or {}
    circuit, run = objects["circuit"], objects["run"]
    path = case.operation.path
    substitutes = {
        "id": run.pk if path.startswith("/api/runs/") else circuit.pk,
        "number": 1, "a": 1, "b": 1, "input_name": "orders", "token": circuit.share_token,
    }
    for name in params:
        if name in substitutes:
            params[name] = substitutes[name]


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
def test_no_server_errors_and_answers_as_documented(case, objects):
    n = next(counter)
    if n % 2 == 0:
        real_ids(case, objects)
    headers = {} if n % 3 == 0 else {"Authorization": f"Token {objects['token']}"}
    if n % 5 == 0:
        headers["X-Share-Token"] = objects["circuit"].share_token
    response = case.call(headers=headers)
    if case.operation.path == "/api/health/" and response.status_code == 503:
        # 503 is the health check's documented answer when no worker is alive (none runs here)
        assert response.json()["checks"]["workers"]["ok"] is False
        return
    assert response.status_code < 500, f"{case.method} {case.formatted_path} -> {response.status_code}\n{response.text[:2000]}"
    # The answer matches what the schema documents: its status code, content type and body.
    case.validate_response(response, checks=[status_code_conformance, content_type_conformance, response_schema_conformance])
