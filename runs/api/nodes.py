"""The node inspector (runs/inspection.py): GET /api/runs/<id>/nodes/<node>/ -> one node
of the run at a tick, its delta or its contents, a page at a time."""
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, PolymorphicProxySerializer, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from circuits.api.serializers import ErrorSerializer

from ..access import readable_run
from ..fair_queue import requester_of
from ..inspection import node_at
from ..node_pages import MAX_PAGE_SIZE, SORT_WEIGHT
from .serializers import NodeInspectionPendingSerializer, NodePageSerializer

#: 200: the page, or (once) a failed inspection; 202: the inspection is being computed.
NODE_ANSWER = PolymorphicProxySerializer(component_name="NodeAnswer", resource_type_field_name=None,
                                         serializers=[NodePageSerializer, NodeInspectionPendingSerializer])


class NodeView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("tick", int, description="0 up to the current tick; default: the current tick"),
            OpenApiParameter("kind", str, enum=["delta", "integral"], description="the node's change at the tick (default) or its contents through it"),
            OpenApiParameter("page", int, description="from 1"),
            OpenApiParameter("page_size", int, description=f"1..{MAX_PAGE_SIZE}, default 100"),
            OpenApiParameter("sort", str, description=f"a column, or {SORT_WEIGHT} for the weight"),
            OpenApiParameter("desc", str, description="1: descending"),
            OpenApiParameter("filter", str, many=True, description="column:value (the column's type; repeatable, all hold)"),
            OpenApiParameter("q", str, description="a text found in any column (ignoring case)"),
            OpenApiParameter("sign", str, enum=["positive", "negative"], description="inserted (weight > 0) or deleted rows"),
            OpenApiParameter("export", str, description="a fixed point's node: which export to show (default: its first)"),
        ],
        responses={200: NODE_ANSWER, 202: NodeInspectionPendingSerializer, 400: ErrorSerializer, 404: OpenApiResponse(ErrorSerializer),
                   429: OpenApiResponse(ErrorSerializer, description="a new inspection past the requester's (or the "
                                        "run's shared readers') cap of queued and running ones; see Retry-After")})
    def get(self, request, pk, node):
        run = readable_run(request, pk)
        status, body = node_at(run, node, request.query_params, requester_of(request, run))
        return Response(body, status=status)
