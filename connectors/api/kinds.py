"""/api/connector-kinds/ (GET: every kind with its options, for the editor's form) and
/api/connector-kinds/<kind>/test/ (POST {config, secrets_env}: open the kind's client and
close it; {"ok", "error"}). The test is for signed-in users who can edit some circuit
(they own one): it makes this server connect where the body says."""
from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotAuthenticated, PermissionDenied
from rest_framework.response import Response
from rest_framework.views import APIView

from circuits.models import Circuit

from ..kind_catalog import catalog, test_connection
from ..registry import kinds
from .serializers import ENV_NAME


class KindOptionSerializer(serializers.Serializer):
    name = serializers.CharField()
    required = serializers.BooleanField()
    type = serializers.ChoiceField(choices=["string", "integer", "list", "object"],
                                   help_text="how a form edits it: a line of text, a number, a JSON list or object")
    choices = serializers.ListField(child=serializers.CharField(), help_text="its values when it is one of a few, first the default")


class ConnectorKindSerializer(serializers.Serializer):
    name = serializers.CharField()
    source = serializers.BooleanField(help_text="true: feeds an input table; false: receives an output view")
    doc = serializers.CharField()
    options = KindOptionSerializer(many=True)


class ConnectionTestSerializer(serializers.Serializer):
    config = serializers.DictField(help_text="the kind's options")
    secrets_env = serializers.DictField(child=serializers.CharField(), required=False, default=dict,
                                        help_text="secret option -> the environment variable holding it (on this server)")

    def validate_secrets_env(self, value):
        for option, variable in value.items():
            if not ENV_NAME.match(variable):
                raise serializers.ValidationError(f"{option}: {variable!r} is not an environment variable name (letters, digits, _)")
        return value


class ConnectionTestResultSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    error = serializers.CharField(allow_blank=True)


class ConnectorKindsView(APIView):
    @extend_schema(responses=ConnectorKindSerializer(many=True))
    def get(self, request):
        return Response(catalog())


class ConnectionTestView(APIView):
    @extend_schema(request=ConnectionTestSerializer, responses=ConnectionTestResultSerializer)
    def post(self, request, kind):
        if not request.user.is_authenticated:
            raise NotAuthenticated("Sign in to test a connection.")
        if not Circuit.objects.filter(owner=request.user).exists():
            raise PermissionDenied("Only users who can edit a circuit (own one) may test connections.")
        if kind not in kinds():
            raise Http404
        body = ConnectionTestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return Response(test_connection(kind, body.validated_data["config"], body.validated_data["secrets_env"]))
