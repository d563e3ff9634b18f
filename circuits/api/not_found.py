"""Any /api/ path no route matches: 404 with the error body (not Django's HTML page)."""
from drf_spectacular.utils import extend_schema
from rest_framework import permissions
from rest_framework.response import Response
from rest_framework.views import APIView


@extend_schema(exclude=True)
class NotFoundView(APIView):
    permission_classes = [permissions.AllowAny]
    authentication_classes = []

    def _answer(self, request, *args, **kwargs):
        return Response({"detail": f"No API endpoint {request.method} {request.path}; see /api/docs/.", "errors": []},
                        status=404)

    get = post = put = patch = delete = head = options = _answer
