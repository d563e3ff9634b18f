"""REST views of runs: start (under its circuit), detail, stop, push, completion, the
input log, outputs and deltas. Parse, authorise, delegate to runs/, serialise."""
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from circuits.access import readable_circuits, require_operator
from circuits.api.listing import CircuitPagination
from circuits.api.parsers import PushJSONParser
from circuits.api.serializers import ErrorSerializer
from circuits.services import ServiceError

from .. import input_log, lifecycle
from ..access import readable_run
from ..outputs import integrated_views
from .csv_push import CSVParser, push_records
from .serializers import (
    CompletionSerializer, DeltasSerializer, OutputsSerializer, PushResultSerializer, PushSerializer, RunSerializer,
)

visible_run = readable_run  # the name other modules used


CIRCUIT_ID = OpenApiParameter("id", int, OpenApiParameter.PATH, description="A unique integer value identifying this circuit.")


# `/api/circuits/<id>/runs/`: GET the circuit's runs (newest first, paginated like the
# circuits list); POST starts a run of its latest version. (A comment: a docstring would
# become the endpoint's description in the API schema.)
class CircuitRunsView(APIView):
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]
    pagination_class = CircuitPagination

    def _circuit(self, request, pk):
        circuit = readable_circuits(request).filter(pk=pk).first()
        if circuit is None:
            raise Http404
        return circuit

    @extend_schema(parameters=[CIRCUIT_ID], responses=RunSerializer(many=True))
    def get(self, request, pk):
        circuit = self._circuit(request, pk)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(circuit.runs.select_related("version").order_by("-id"), request, view=self)
        return paginator.get_paginated_response(RunSerializer(page, many=True, context={}).data)

    @extend_schema(parameters=[CIRCUIT_ID], request=None, responses={201: RunSerializer})
    def post(self, request, pk):
        circuit = self._circuit(request, pk)
        require_operator(request, circuit)
        run = lifecycle.start_run(circuit, request.user)
        return Response(RunSerializer(run).data, status=status.HTTP_201_CREATED)


class RunView(APIView):
    @extend_schema(responses=RunSerializer)
    def get(self, request, pk):
        return Response(RunSerializer(visible_run(request, pk)).data)


class RunStopView(APIView):
    @extend_schema(request=None, responses=RunSerializer)
    def post(self, request, pk):
        run = visible_run(request, pk)
        require_operator(request, run.circuit)
        return Response(RunSerializer(lifecycle.stop_run(run)).data)


class PushView(APIView):
    """POST change records to one input of a run; 202 with a completion token.

    JSON: an array of `{"insert": row}`, `{"delete": row}` or `{"weight": w, "data": row}`.
    CSV: `Content-Type: text/csv` (header row = column names, optional `_weight`), or a
    multipart upload of a .csv file. Any bad row rejects the whole push."""

    parser_classes = [PushJSONParser, CSVParser, MultiPartParser]

    @extend_schema(
        request={"application/json": {"type": "array", "items": {"type": "object"}},
                 "text/csv": {"type": "string"},
                 "multipart/form-data": {"type": "object", "properties": {"file": {"type": "string", "format": "binary"}}}},
        parameters=[OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER, required=False,
                                     description="At most 200 characters. A repeated key with the same input and records "
                                                 "returns the first push's token and stores nothing (also after the run "
                                                 "stopped); with different data it is a 409.")],
        responses={202: PushResultSerializer, 200: PushResultSerializer,
                   400: OpenApiResponse(ErrorSerializer, description="A bad row (each named by row and field: wrong type, "
                                        "NULL key, weight not a nonzero int64, NUL character, ...) or a bad Idempotency-Key. "
                                        "Nothing stored."),
                   409: OpenApiResponse(ErrorSerializer, description="The run is stopped or failed, or the "
                                        "Idempotency-Key was used for a different push."),
                   413: ErrorSerializer,
                   429: OpenApiResponse(ErrorSerializer, description="Backpressure: too much unapplied input; retry after the Retry-After seconds. Nothing stored.")},
    )
    def post(self, request, pk, input_name):
        run = visible_run(request, pk)
        require_operator(request, run.circuit)
        entry, created = input_log.push(run, input_name, push_records(request, run, input_name),
                                        request.headers.get("Idempotency-Key"), user_id=request.user.pk)
        body = {"token": entry.token, "sequence": entry.sequence, "duplicate": not created}
        return Response(body, status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK)


class CompletionView(APIView):
    @extend_schema(parameters=[OpenApiParameter("token", str, required=True, description="the push's completion token")],
                   responses=CompletionSerializer)
    def get(self, request, pk):
        run = visible_run(request, pk)
        return Response(input_log.completion(run, request.query_params.get("token", "")))


class PushLogView(APIView):
    @extend_schema(responses=PushSerializer(many=True))
    def get(self, request, pk):
        run = visible_run(request, pk)
        return Response(PushSerializer(run.pushes.order_by("sequence"), many=True).data)


class OutputsView(APIView):
    """Each output view's integrated contents at `?tick=` (default: the current tick)."""

    @extend_schema(parameters=[OpenApiParameter("tick", int, description="-1 (before the first tick) up to the current "
                                                                         "tick; default: the current tick")],
                   responses=OutputsSerializer)
    def get(self, request, pk):
        run = visible_run(request, pk)
        tick = request.query_params.get("tick")
        upto = run.current_tick if tick in (None, "") else _int_param("tick", tick)
        if not -1 <= upto <= run.current_tick:
            raise ServiceError(
                f"Run {run.pk} has no tick {upto}: ticks go from -1 (before the first) to {run.current_tick} (the current one).",
                400, [{"field": "tick", "message": f"{upto} is not between -1 and the current tick {run.current_tick}"}])
        return Response({"tick": upto, "views": integrated_views(run, upto)})


class DeltasView(APIView):
    """Output deltas of the ticks after `?since=` (default -1), at most `?limit=` ticks."""

    @extend_schema(parameters=[OpenApiParameter("since", int, description="default -1"),
                               OpenApiParameter("limit", int, description="ticks per page, 1..1000 (default 100)")],
                   responses=DeltasSerializer)
    def get(self, request, pk):
        run = visible_run(request, pk)
        since = _int_param("since", request.query_params.get("since", "-1"))
        limit = min(max(_int_param("limit", request.query_params.get("limit", "100")), 1), 1000)
        ticks = list(run.ticks.filter(tick__gt=since).order_by("tick")[: limit + 1])
        more = len(ticks) > limit
        return Response({
            "ticks": [{"tick": t.tick, "views": t.deltas, "frontier": t.frontier, "stats": t.stats} for t in ticks[:limit]],
            "more": more,
        })


def _int_param(name: str, value: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ServiceError(f"Query parameter {name!r} must be an integer, got {value!r}.", 400,
                                    [{"field": name, "message": f"expected an integer, got {value!r}"}]) from None
