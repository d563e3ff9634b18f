"""POST /api/sql/compile/, /api/datalog/compile/ and /api/sql/export/: program text in,
a circuit document out (or a circuit in, SQL out). Nothing is saved (circuits/frontends.py)."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import permissions, serializers
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from .. import frontends
from ..services import within_budget
from .throttles import AnonValidateThrottle
from .views import DocumentBody, _document_of

COMPILED = {200: inline_serializer("CompiledSource", {
    "valid": serializers.BooleanField(),
    "document": serializers.JSONField(allow_null=True, help_text="the circuit document; null when the text was refused"),
    "errors": serializers.ListField(child=serializers.DictField(), help_text="each with message, line and column; node where a node is at fault"),
    "schemas": serializers.DictField(help_text="the output schema inferred for each node"),
})}


class SqlCompileView(APIView):
    """POST {"text": SQL}; get the circuit its tables and views compile to, every node
    with its `source` span, or the problems each at its line:column. Nothing is saved."""

    permission_classes = [permissions.AllowAny]
    throttle_classes = [*api_settings.DEFAULT_THROTTLE_CLASSES, AnonValidateThrottle]

    @extend_schema(request=inline_serializer("SqlSource", {"text": serializers.CharField()}), responses=COMPILED)
    def post(self, request):
        text = frontends.require_source_text(_field(request, "text"), "SQL")
        with within_budget("SQL compile"):
            return Response(frontends.compile_sql_text(text))


class DatalogCompileView(APIView):
    """POST {"text": program, "schemas": {relation: columns}?}; get the circuit the
    Datalog program compiles to, or the problems each at its line:column. Nothing is saved."""

    permission_classes = [permissions.AllowAny]
    throttle_classes = [*api_settings.DEFAULT_THROTTLE_CLASSES, AnonValidateThrottle]

    @extend_schema(request=inline_serializer("DatalogSource", {
        "text": serializers.CharField(),
        "schemas": serializers.DictField(required=False, help_text="columns of input relations without a .decl"),
    }), responses=COMPILED)
    def post(self, request):
        text = frontends.require_source_text(_field(request, "text"), "Datalog")
        schemas = _field(request, "schemas")
        if schemas is not None and not isinstance(schemas, dict):
            return Response({"detail": "The request is invalid.",
                             "errors": [{"field": "schemas", "message": "an object {relation: [columns]} is expected"}]}, status=400)
        with within_budget("Datalog compile"):
            return Response(frontends.compile_datalog_text(text, schemas))


class SqlExportView(DocumentBody, APIView):
    """POST a circuit document; get {"sql": text}, or {"sql": null, "errors": [...]}
    naming the node SQL cannot express."""

    permission_classes = [permissions.AllowAny]
    throttle_classes = [*api_settings.DEFAULT_THROTTLE_CLASSES, AnonValidateThrottle]

    @extend_schema(request=OpenApiTypes.OBJECT, responses={200: inline_serializer("ExportedSql", {
        "sql": serializers.CharField(allow_null=True), "errors": serializers.ListField(child=serializers.DictField())})})
    def post(self, request):
        document = _document_of(request)
        with within_budget("SQL export"):
            return Response(frontends.export_sql_text(document))


def _field(request, name):
    return request.data.get(name) if isinstance(request.data, dict) else None
