"""REST views of circuits and versions: parse, authorise, delegate to circuits.services,
serialise. The views of runs are in runs/api/."""
from django.conf import settings
from django.db import transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from .. import services
from ..access import readable_circuits, require_editor, require_owner
from .listing import CircuitPagination, listed_circuits
from .throttles import AnonValidateThrottle
from .serializers import (
    CircuitSerializer, DocumentSerializer, NewVersionSerializer, PlanSerializer, ValidationResultSerializer, VersionSerializer,
)

LIST_PARAMETERS = [
    OpenApiParameter("search", str, description="Case-insensitive match in name or description."),
    OpenApiParameter("tag", str, many=True, description="Only circuits with this tag (repeat: all of them)."),
    OpenApiParameter("owner", str, description="Owner's username."),
    OpenApiParameter("visibility", str, enum=["private", "unlisted", "public"]),
    OpenApiParameter("scope", str, enum=["mine", "shared", "public"],
                     description="mine: owned; shared: granted to you; public: everyone's public. Default: all three."),
    OpenApiParameter("page_size", int, description="Default 50, at most 200."),
]


class DocumentBody:
    """Views whose body carries a circuit document: a smaller body limit (the parser's)."""

    max_body_setting = "DBSPWEB_MAX_DOCUMENT_BYTES"

    @property
    def max_body_bytes(self) -> int:
        return settings.MAX_DOCUMENT_BODY_BYTES


@extend_schema_view(list=extend_schema(parameters=LIST_PARAMETERS))
class CircuitViewSet(DocumentBody, viewsets.ModelViewSet):
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
        if serializer.validated_data.get("visibility", serializer.instance.visibility) != serializer.instance.visibility:
            services.notify_access_changed(serializer.instance)
        if document is not None:
            services.add_version(serializer.instance, document, saver=self.request.user)
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
        require_editor(request, circuit)
        body = NewVersionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        version = services.add_version(circuit, body.validated_data["document"], body.validated_data["message"],
                                       saver=request.user)
        return Response(VersionSerializer(version).data, status=status.HTTP_201_CREATED)


class ValidateView(DocumentBody, APIView):
    """POST a circuit document; get every problem back. Nothing is saved. A document
    beyond a bound of dbsp/limits.py is refused (400 naming the limit), not inspected."""

    permission_classes = [permissions.AllowAny]
    throttle_classes = [*api_settings.DEFAULT_THROTTLE_CLASSES, AnonValidateThrottle]

    @extend_schema(request=DocumentSerializer, responses=ValidationResultSerializer)
    def post(self, request):
        document = _document_of(request)
        with services.within_budget("validation"):
            return Response(services.inspect_document(document))


class PlanView(DocumentBody, APIView):
    """POST a circuit document; get its compiled incremental plan as a circuit document."""

    permission_classes = [permissions.AllowAny]
    throttle_classes = [*api_settings.DEFAULT_THROTTLE_CLASSES, AnonValidateThrottle]

    @extend_schema(request=DocumentSerializer, responses={200: PlanSerializer})
    def post(self, request):
        document = _document_of(request)
        with services.within_budget("plan"):
            return Response(services.compiled_plan(document))


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
