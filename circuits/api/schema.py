"""OpenAPI: every operation documents the one error body ({"detail", "errors"}) for the
4xx answers the API gives (400 bad input, 403 not allowed, 404 not found or not visible,
413 a body over its byte limit, 429 throttled)."""
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter

from ..access import SHARE_HEADER, SHARE_PARAM

ERROR_CODES = {
    "400": "Bad input: `errors` names each node/port/param or row/field.",
    "403": "Not allowed (not logged in, or not the owner / not granted).",
    "404": "Not found, or not visible to the requester (private circuits answer 404, never 403).",
    "429": "Too many requests (a throttle of circuits/api/throttles.py); `Retry-After` gives the seconds to wait.",
}

# Reads of a circuit or run accept the share token of an unlisted circuit.
SHARE_PARAMETERS = [
    OpenApiParameter(SHARE_HEADER, str, OpenApiParameter.HEADER, required=False,
                     description="Share token of an unlisted circuit (read access)."),
    OpenApiParameter(SHARE_PARAM, str, OpenApiParameter.QUERY, required=False,
                     description=f"Share token of an unlisted circuit, as a query parameter (same as {SHARE_HEADER})."),
]


class ErrorBodyAutoSchema(AutoSchema):
    def _get_response_bodies(self, direction="response"):
        from .serializers import ErrorSerializer

        responses = super()._get_response_bodies(direction)
        codes = dict(ERROR_CODES)
        if self.method in ("POST", "PUT", "PATCH"):
            codes["413"] = "The request body is over its byte limit (DBSPWEB_MAX_BODY_BYTES, or DBSPWEB_MAX_DOCUMENT_BYTES for documents)."
        if self.method == "POST" and self.path.startswith("/api/runs/"):
            codes["409"] = "The run's state does not allow this (e.g. it is stopped)."
        for code, description in codes.items():
            if code not in responses:
                response = self._get_response_for_code(ErrorSerializer, code, direction=direction)
                response["description"] = description
                responses[code] = response
        return responses

    def get_override_parameters(self):
        params = list(super().get_override_parameters())
        path = self.path
        if path.startswith("/api/circuits/{id}") or path.startswith("/api/runs/"):
            names = {p.name for p in params if isinstance(p, OpenApiParameter)}
            params += [p for p in SHARE_PARAMETERS if p.name not in names]
        return params
