"""One error body for every API failure: {"detail": str, "errors": [...]}.

`errors` lists machine-readable problems, each naming its node/port/param or row/field.
"""
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import DataError
from rest_framework import status
from rest_framework.exceptions import Throttled
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from ..services import ServiceError


def exception_handler(exc, context):
    if isinstance(exc, ServiceError):
        return Response({"detail": exc.detail, "errors": exc.errors}, status=exc.status, headers=exc.headers or None)
    if isinstance(exc, RequestDataTooBig):  # else Django answers an HTML 400
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return Response({"detail": f"The request body is over the limit of {limit} bytes (DBSPWEB_MAX_BODY_BYTES).",
                         "errors": [{"field": "body", "message": f"more than {limit} bytes"}]},
                        status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    if isinstance(exc, DataError) and "NUL" in str(exc):
        # A safety net: every stored value is checked for NUL characters (services.nul_paths),
        # but PostgreSQL also refuses them in lookups (e.g. a share token); SQLite does not.
        return Response({"detail": "The request contains a NUL character (\\u0000), which the database cannot take.",
                         "errors": [{"message": "contains a NUL character (\\u0000)"}]},
                        status=status.HTTP_400_BAD_REQUEST)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, Throttled):  # DRF has set Retry-After
        scope, rate = getattr(context.get("request"), "throttled_by", ("requests", "?"))
        wait = response.headers.get("Retry-After", "a few")
        response.data = {"detail": f"Too many requests (limit {scope}: {rate}); try again in {wait} s.",
                         "errors": [{"field": "throttle", "message": f"{scope} over {rate}"}]}
        return response
    data = response.data
    if isinstance(data, dict) and set(data) == {"detail"}:
        response.data = {"detail": str(data["detail"]), "errors": []}
    elif response.status_code == status.HTTP_400_BAD_REQUEST:
        errors = list(_flatten(data, ""))
        response.data = {"detail": "The request is invalid.", "errors": errors}
    return response


def _flatten(data, field: str):
    """DRF's nested validation errors -> one problem per message, the field as a dotted
    path (`grants.1.username`); `non_field_errors` names the enclosing field."""
    if isinstance(data, dict):
        for key, value in data.items():
            sub = field if key == "non_field_errors" else (f"{field}.{key}" if field else str(key))
            yield from _flatten(value, sub)
    elif isinstance(data, list):
        nested = any(isinstance(item, (dict, list)) for item in data)
        for i, item in enumerate(data):
            if nested and isinstance(item, (dict, list)):
                if item:
                    yield from _flatten(item, f"{field}.{i}" if field else str(i))
            elif not nested or item:
                yield from _flatten(item, field)
    else:
        yield {"field": field, "message": str(data)} if field else {"message": str(data)}


def csrf_failure(request, reason=""):
    """CSRF failures under /api/ answer with the error body, not Django's HTML page."""
    from django.http import JsonResponse
    from django.views.csrf import csrf_failure as django_csrf_failure

    if request.path.startswith("/api/"):
        return JsonResponse({"detail": f"CSRF verification failed: {reason}. Send the csrftoken cookie's value "
                                       "in the X-CSRFToken header (GET /api/auth/me/ sets the cookie).",
                             "errors": []}, status=403)
    return django_csrf_failure(request, reason)
