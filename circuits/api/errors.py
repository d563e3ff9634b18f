"""One error body for every API failure: {"detail": str, "errors": [...]}.

`errors` lists machine-readable problems, each naming its node/port/param or row/field.
"""
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from ..services import ServiceError


def exception_handler(exc, context):
    if isinstance(exc, ServiceError):
        return Response({"detail": exc.detail, "errors": exc.errors}, status=exc.status)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    data = response.data
    if isinstance(data, dict) and set(data) == {"detail"}:
        response.data = {"detail": str(data["detail"]), "errors": []}
    elif response.status_code == status.HTTP_400_BAD_REQUEST:
        errors = []
        if isinstance(data, dict):
            for field, messages in data.items():
                for m in messages if isinstance(messages, list) else [messages]:
                    errors.append({"field": field, "message": str(m)})
        else:
            errors = [{"message": str(m)} for m in (data if isinstance(data, list) else [data])]
        response.data = {"detail": "The request is invalid.", "errors": errors}
    return response
