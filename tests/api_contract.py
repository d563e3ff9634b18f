"""The API's answers as the OpenAPI schema (/api/schema/, drf-spectacular) documents them:
`problems(method, path, response)` checks a real answer of the test client against the
operation it answers (its status code, content type and body schema), with schemathesis's
own response validation (the one tests/circuits/test_api_schemathesis.py fuzzes with)."""
import functools
import re

import requests
import schemathesis
from schemathesis.core.transport import Response


@functools.cache
def api_schema():
    from drf_spectacular.generators import SchemaGenerator

    return schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))


@functools.cache
def _templates() -> list[tuple[re.Pattern, str]]:
    """Each documented path as a pattern, the most literal first (`/explain/{eid}/`
    before `/{id}/`)."""
    paths = api_schema().raw_schema["paths"]
    found = [(re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(p)) + "$"), p) for p in paths]
    return sorted(found, key=lambda item: -len(re.sub(r"\{[^}]+\}", "", item[1])))


def operation_of(method: str, path: str):
    for pattern, template in _templates():
        if pattern.match(path) and method.lower() in api_schema().raw_schema["paths"][template]:
            return api_schema()[template][method.upper()]
    return None


def problems(method: str, path: str, response) -> list[str]:
    """What in the answer the schema does not document ([] when it conforms; [] for an
    answer outside the documented operations, such as the 404 of an unknown path)."""
    operation = operation_of(method, path)
    if operation is None:
        return []
    request = requests.Request(method.upper(), f"http://testserver{path}").prepare()
    answer = Response(status_code=response.status_code, headers={k.lower(): [v] for k, v in response.headers.items()},
                      content=response.content, request=request, elapsed=0.0, verify=True)
    try:
        operation.validate_response(answer)
    except (Exception, BaseExceptionGroup) as failures:  # schemathesis's FailureGroup (an exception group): one failure per check
        found = getattr(failures, "exceptions", None) or [failures]
        return [f"{method.upper()} {path} -> {response.status_code}: {str(f).strip()}" for f in found]
    return []
