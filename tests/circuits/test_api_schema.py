"""GET /api/schema/ (OpenAPI 3) and /api/docs/ (Swagger UI)."""
import pytest
from django.urls import URLPattern, URLResolver, get_resolver

pytestmark = pytest.mark.django_db


def schema(client_for):
    response = client_for().get("/api/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def test_schema_documents_every_api_route(client_for):
    doc = schema(client_for)
    assert doc["openapi"].startswith("3.")
    paths = set(doc["paths"])

    def routes(resolver, prefix=""):
        for p in resolver.url_patterns:
            if isinstance(p, URLResolver):
                yield from routes(p, prefix + str(p.pattern))
            elif isinstance(p, URLPattern) and prefix.startswith("api/") and p.name not in ("api-root", "schema", "api-docs", "api-not-found"):
                yield p.name, "/" + prefix + str(p.pattern)

    import re

    shape = lambda path: re.sub(r"\{[^}]+\}|<[^>]+>", "{}", path)  # noqa: E731
    documented = {shape(p) for p in paths}
    for name, route in routes(get_resolver()):
        if "(?P<format>" in route:
            continue
        route = re.sub(r"\(\?P<\w+>[^)]*\)", "{}", route.replace("^", "").replace("$", ""))
        assert shape(route) in documented, f"{name} ({route}) is missing from /api/schema/"


def test_every_operation_documents_the_error_body(client_for):
    doc = schema(client_for)
    error = doc["components"]["schemas"]["Error"]
    assert set(error["required"]) == {"detail", "errors"}
    problem = doc["components"]["schemas"]["Problem"]
    assert {"message", "node", "row", "field", "line"} <= set(problem["properties"])
    for path, operations in doc["paths"].items():
        for method, op in operations.items():
            for code in ("400", "403", "404"):
                ref = op["responses"][code]["content"]["application/json"]["schema"]["$ref"]
                assert ref.endswith("/Error"), (method, path, code)


def test_push_documents_json_csv_and_multipart(client_for):
    op = schema(client_for)["paths"]["/api/runs/{id}/inputs/{input_name}/push/"]["post"]
    assert set(op["requestBody"]["content"]) == {"application/json", "text/csv", "multipart/form-data"}
    assert {"202", "409", "413"} <= set(op["responses"])
    assert "Idempotency-Key" in {p["name"] for p in op["parameters"]}
    reads = schema(client_for)["paths"]["/api/circuits/{id}/"]["get"]
    assert {"X-Share-Token", "share"} <= {p["name"] for p in reads["parameters"]}


def test_swagger_ui_is_served(client_for):
    response = client_for().get("/api/docs/")
    assert response.status_code == 200
    assert b"swagger-ui" in response.content and b"/api/schema/" in response.content
    # Served by the app itself (works offline), not from a CDN.
    assert b"cdn." not in response.content and b"/static/drf_spectacular_sidecar/swagger-ui-dist/" in response.content
    import re

    from django.test import Client

    for asset in re.findall(rb'src="(/static/drf_spectacular_sidecar/[^"]+)"', response.content):
        assert Client().get(asset.decode()).status_code == 200


def test_unknown_api_paths_and_csrf_failures_answer_with_the_error_body(client_for):
    from django.test import Client

    for path in ("/api/nope/", "/api/runs/-1/", "/api/runs/1/nothing/"):
        response = client_for().get(path)
        assert response.status_code == 404 and response["Content-Type"] == "application/json", path
        assert response.json() == {"detail": f"No API endpoint GET {path}; see /api/docs/.", "errors": []}
    refused = Client(enforce_csrf_checks=True).post("/api/auth/login/", {"username": "a", "password": "b"}, content_type="application/json")
    assert refused.status_code == 403 and refused["Content-Type"] == "application/json"
    assert refused.json()["detail"].startswith("CSRF verification failed")
    assert Client().get("/no-such-page/").status_code in (200, 404, 503)  # outside /api/: the app's own answer
