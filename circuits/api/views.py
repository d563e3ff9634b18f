"""REST views: parse, authorise, delegate to circuits.services, serialise."""
from django.db import transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import services
from ..access import readable_circuits, readable_run, require_operator, require_owner
from .csv_push import CSVParser, push_records
from .listing import CircuitPagination, listed_circuits
from .serializers import (
    CompletionSerializer, DeltasSerializer, OutputsSerializer,
    CircuitSerializer, DocumentSerializer, ErrorSerializer, NewVersionSerializer, PushResultSerializer, PushSerializer,
    RunSerializer, ValidationResultSerializer, VersionSerializer,
)

visible_run = readable_run  # the name other modules used

LIST_PARAMETERS = [
    OpenApiParameter("search", str, description="Case-insensitive match in name or description."),
    OpenApiParameter("tag", str, many=True, description="Only circuits with this tag (repeat: all of them)."),
    OpenApiParameter("owner", str, description="Owner's username."),
    OpenApiParameter("visibility", str, enum=["private", "unlisted", "public"]),
    OpenApiParameter("scope", str, enum=["mine", "shared", "public"],
                     description="mine: owned; shared: granted to you; public: everyone's public. Default: all three."),
    OpenApiParameter("page_size", int, description="Default 50, at most 200."),
]


@extend_schema_view(list=extend_schema(parameters=LIST_PARAMETERS))
class CircuitViewSet(viewsets.ModelViewSet):
    serializer_class = CircuitSerializer
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]
    pagination_class = CircuitPagination

    def get_queryset(self):
        qs = listed_circuits(self.request) if self.action == "list" else readable_circuits(self.request)
        return qs.select_related("owner").prefetch_related("versions", "tags")

    def perform_create(self, serializer):
        data = serializer.validated_data
        if "document" not in data:
            from rest_framework.exceptions import ValidationError

            raise ValidationError({"document": ["This field is required."]})
        serializer.instance = services.create_circuit(
            self.request.user, data["name"], data.get("description", ""), data["visibility"], data["document"],
            tags=data.get("tags"),
        )

    @transaction.atomic
    def perform_update(self, serializer):
        require_owner(self.request, serializer.instance)
        document = serializer.validated_data.pop("document", None)
        tags = serializer.validated_data.pop("tags", None)
        if document is not None:
            services.add_version(serializer.instance, document)
        if tags is not None:
            services.set_tags(serializer.instance, tags)
        serializer.save()

    def perform_destroy(self, instance):
        require_owner(self.request, instance)
        services.delete_circuit(instance)

    @extend_schema(methods=["GET"], responses=VersionSerializer(many=True))
    @extend_schema(methods=["POST"], request=NewVersionSerializer, responses={201: VersionSerializer})
    @action(detail=True, methods=["get", "post"], serializer_class=NewVersionSerializer, pagination_class=None)
    def versions(self, request, pk=None):
        circuit = self.get_object()
        if request.method == "GET":
            return Response(VersionSerializer(circuit.versions.order_by("-number"), many=True).data)
        require_owner(request, circuit)
        body = NewVersionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        version = services.add_version(circuit, body.validated_data["document"], body.validated_data["message"])
        return Response(VersionSerializer(version).data, status=status.HTTP_201_CREATED)

    @extend_schema(methods=["GET"], responses=RunSerializer(many=True))
    @extend_schema(methods=["POST"], request=None, responses={201: RunSerializer})
    @action(detail=True, methods=["get", "post"], serializer_class=RunSerializer)
    def runs(self, request, pk=None):
        circuit = self.get_object()
        if request.method == "GET":
            page = self.paginate_queryset(circuit.runs.select_related("version").order_by("-id"))
            return self.get_paginated_response(RunSerializer(page, many=True, context={}).data)
        require_operator(request, circuit)
        run = services.start_run(circuit, request.user)
        return Response(RunSerializer(run).data, status=status.HTTP_201_CREATED)


class ValidateView(APIView):
    """POST a circuit document; get every problem back. Nothing is saved."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(request=DocumentSerializer, responses=ValidationResultSerializer)
    def post(self, request):
        return Response(services.inspect_document(_document_of(request)))


class PlanView(APIView):
    """POST a circuit document; get its compiled incremental plan as a circuit document."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(request=DocumentSerializer, responses={200: OpenApiTypes.OBJECT})
    def post(self, request):
        return Response(services.compiled_plan(_document_of(request)))


def _document_of(request):
    return request.data.get("document", request.data) if isinstance(request.data, dict) else request.data


class OperatorCatalogView(APIView):
    """Every operator kind: group, ports, linearity and documentation (the palette)."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(responses={200: {"type": "array", "items": {"type": "object"}, "description": "one entry per operator kind"}})
    def get(self, request):
        from dbsp.catalog import operator_catalog

        return Response(operator_catalog())


class CircuitFormatView(APIView):
    """The JSON Schema of circuit documents (dbsp/circuit.schema.json)."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        from dbsp.catalog import circuit_json_schema

        return Response(circuit_json_schema())


class RunView(APIView):
    @extend_schema(responses=RunSerializer)
    def get(self, request, pk):
        return Response(RunSerializer(visible_run(request, pk)).data)


class RunStopView(APIView):
    @extend_schema(request=None, responses=RunSerializer)
    def post(self, request, pk):
        run = visible_run(request, pk)
        require_operator(request, run.circuit)
        return Response(RunSerializer(services.stop_run(run)).data)


class PushView(APIView):
    """POST change records to one input of a run; 202 with a completion token.

    JSON: an array of `{"insert": row}`, `{"delete": row}` or `{"weight": w, "data": row}`.
    CSV: `Content-Type: text/csv` (header row = column names, optional `_weight`), or a
    multipart upload of a .csv file. Any bad row rejects the whole push."""

    parser_classes = [JSONParser, CSVParser, MultiPartParser]

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
        entry, created = services.push(run, input_name, push_records(request, run, input_name), request.headers.get("Idempotency-Key"))
        body = {"token": entry.token, "sequence": entry.sequence, "duplicate": not created}
        return Response(body, status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK)


class CompletionView(APIView):
    @extend_schema(parameters=[OpenApiParameter("token", str, required=True, description="the push's completion token")],
                   responses=CompletionSerializer)
    def get(self, request, pk):
        run = visible_run(request, pk)
        return Response(services.completion(run, request.query_params.get("token", "")))


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
            raise services.ServiceError(
                f"Run {run.pk} has no tick {upto}: ticks go from -1 (before the first) to {run.current_tick} (the current one).",
                400, [{"field": "tick", "message": f"{upto} is not between -1 and the current tick {run.current_tick}"}])
        return Response({"tick": upto, "views": services.integrated_views(run, upto)})


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
        raise services.ServiceError(f"Query parameter {name!r} must be an integer, got {value!r}.", 400,
                                    [{"field": name, "message": f"expected an integer, got {value!r}"}]) from None
