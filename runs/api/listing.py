"""`GET /api/runs/`: the requester's runs across their circuits ("My runs")."""
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions
from rest_framework.views import APIView

from circuits.api.listing import CircuitPagination
from circuits.api.serializers import ErrorSerializer

from ..listing import runs_of, statuses_of
from ..models import RunStatus
from .serializers import RunListItemSerializer


# A comment, not a docstring: the operation's description is given to extend_schema.
class RunListView(APIView):
    permission_classes = [permissions.IsAuthenticated]
    pagination_class = CircuitPagination

    @extend_schema(
        description="The requester's runs, newest first: every run of a circuit they own, and the runs they started on "
                    "a circuit shared with them. Paginated like the circuits list.",
        parameters=[OpenApiParameter("status", str, many=True, enum=RunStatus.values,
                                     description="Only runs in these statuses (repeat it, or separate them with commas).")],
        responses={200: RunListItemSerializer(many=True),
                   400: OpenApiResponse(ErrorSerializer, description="An unknown status (field 'status')."),
                   403: OpenApiResponse(ErrorSerializer, description="Not signed in.")},
    )
    def get(self, request):
        runs = runs_of(request.user, statuses_of(request.query_params.getlist("status")))
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(runs, request, view=self)
        return paginator.get_paginated_response(RunListItemSerializer(page, many=True).data)
