"""GET /api/health/: 200 when the database, Redis and at least one worker answer, else
503; each check reports ok, ms and what failed."""
from rest_framework import permissions
from rest_framework.response import Response
from rest_framework.views import APIView


class HealthView(APIView):
    permission_classes = [permissions.AllowAny]
    authentication_classes = []

    def get(self, request):
        from workers.health import check

        ok, checks = check()
        return Response({"status": "ok" if ok else "unavailable", "checks": checks}, status=200 if ok else 503)
