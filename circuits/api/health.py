"""GET /api/health/: 200 when the database, Redis and at least one worker answer, else
503; each check reports ok, ms and what failed."""
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import permissions
from rest_framework.response import Response
from rest_framework.views import APIView

from .serializers import HealthSerializer


class HealthView(APIView):
    permission_classes = [permissions.AllowAny]
    authentication_classes = []

    @extend_schema(responses={200: HealthSerializer,
                              503: OpenApiResponse(HealthSerializer, description="A check failed (its `error` says why).")})
    def get(self, request):
        from workers.health import check

        ok, checks = check()
        return Response({"status": "ok" if ok else "unavailable", "checks": checks}, status=200 if ok else 503)
