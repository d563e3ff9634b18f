"""GET /api/health/: 200 when the database, Redis and at least one worker answer, else
503; each check reports ok, ms and what failed."""
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import permissions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from .health import check


class HealthCheckSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    ms = serializers.FloatField()
    error = serializers.CharField(required=False, help_text="what failed")


class HealthSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["ok", "unavailable"])
    checks = serializers.DictField(child=HealthCheckSerializer(), help_text="database, redis, workers (with `live`: "
                                                                             "[{worker, last_seen, runs}])")


class HealthView(APIView):
    permission_classes = [permissions.AllowAny]
    authentication_classes = []

    @extend_schema(responses={200: HealthSerializer,
                              503: OpenApiResponse(HealthSerializer, description="A check failed (its `error` says why).")})
    def get(self, request):
        ok, checks = check()
        return Response({"status": "ok" if ok else "unavailable", "checks": checks}, status=200 if ok else 503)
