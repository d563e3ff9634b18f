"""GET /metrics: the Prometheus text exposition of the live runs and their connectors
(connectors/metrics.py). For a scraper holding `Authorization: Bearer
<DBSPWEB_METRICS_TOKEN>` (when that setting is set), or a signed-in staff user."""
from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from ..metrics import registry


def _allowed(request) -> bool | None:
    """True: allowed; False: signed in or a token given, but not allowed; None: no credentials."""
    header = request.headers.get("Authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        expected = settings.METRICS_TOKEN
        return bool(expected) and scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), expected.encode())
    user = request.user
    if user.is_authenticated:
        return bool(user.is_staff)
    return None


@require_GET
def metrics(request):
    allowed = _allowed(request)
    if allowed is None:
        response = HttpResponse("metrics: send Authorization: Bearer <DBSPWEB_METRICS_TOKEN>, or sign in as staff\n",
                                status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    if not allowed:
        return HttpResponse("metrics: not allowed (a wrong token, or not a staff user)\n", status=403,
                            content_type="text/plain")
    return HttpResponse(generate_latest(registry()), content_type=CONTENT_TYPE_LATEST)
