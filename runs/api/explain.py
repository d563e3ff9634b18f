"""GET /api/runs/<id>/explain/?view=&row=&tick=: why a row is in a view at a tick and why
it changed then, operator by operator, down to the input rows and their pushes
(runs/explain.py). Anyone who may see the run may ask. Over a large log it is queued
(202 with the URL of GET /api/runs/<id>/explain/<eid>/ to poll), fairly: 429 with
Retry-After past the requester's cap (runs/fair_queue.py)."""
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, PolymorphicProxySerializer, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from circuits.api.serializers import ErrorSerializer

from circuits.services import ServiceError

from ..access import readable_run
from ..explain import explain_row, explanation_json
from ..fair_queue import requester_of
from .serializers import ExplanationSerializer, QueuedExplanationSerializer

#: A queued explanation as its URL answers: still queued, running or failed, or done
#: (then the explanation itself, with the id, status and url of the queued one).
POLLED = PolymorphicProxySerializer(component_name="PolledExplanation", resource_type_field_name=None,
                                    serializers=[ExplanationSerializer, QueuedExplanationSerializer])


class ExplainView(APIView):
    @extend_schema(parameters=[
        OpenApiParameter("view", str, description="an output view of the circuit (or give `node`)"),
        OpenApiParameter("node", str, description="any node with rows, inside fixed points too (then `iteration`)"),
        OpenApiParameter("row", str, required=True, description='the row\'s values as a JSON object, e.g. {"src": 0, "dst": 3}'),
        OpenApiParameter("tick", int, description="0 up to the current tick; default: the current tick"),
        OpenApiParameter("iteration", str, description="a node inside a fixed point: its iteration (a JSON list when nested)"),
        OpenApiParameter("mode", str, description="contents or change (default: each that applies)"),
        OpenApiParameter("page", int, description="the page of the row's own groups (a join's pairs, a group's rows)"),
        OpenApiParameter("page_size", int, description="rows per group, 1..200 (default 20)"),
    ], responses={200: ExplanationSerializer,
                  202: OpenApiResponse(QueuedExplanationSerializer, description="a log over EXPLAIN_SYNC_MAX_ROWS rows: "
                                       "the explanation is queued: poll its url"), 400: ErrorSerializer,
                  429: OpenApiResponse(ErrorSerializer, description="the requester (or the run's shared readers) has "
                                       "as many explanations, inspections and verifications queued or running as "
                                       "allowed; Retry-After says when to try again"),
                  404: OpenApiResponse(ErrorSerializer, description="No such run (or not yours to see), or the row is "
                                                                    "not in the view at the tick and did not change")})
    def get(self, request, pk):
        run = readable_run(request, pk)
        status, body = explain_row(run, request.query_params, requester_of(request, run))
        return Response(body, status=status)


class ExplanationView(APIView):
    """A queued explanation (a log over EXPLAIN_SYNC_MAX_ROWS rows): its status, and when
    done the explanation itself, as GET /api/runs/<id>/explain/ answers it at once."""

    @extend_schema(operation_id="runs_explanation_retrieve", responses={200: POLLED, 404: OpenApiResponse(ErrorSerializer)})
    def get(self, request, pk, eid):
        run = readable_run(request, pk)
        queued = run.explanations.filter(pk=eid).first()
        if queued is None:
            raise ServiceError(f"Run {run.pk} has no explanation {eid}.", 404)
        return Response(explanation_json(queued))
