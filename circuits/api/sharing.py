"""Forks, share settings (visibility, the share token and link, grants) and share links.

A share token opens an unlisted circuit (and its runs) read-only to whoever holds it:
`GET /api/shared/<token>/`, or the header `X-Share-Token` / `?share=` on any read.
It opens nothing while the circuit is private: a private circuit is shared with named
users through grants instead. Revoking rotates the token; old links stop working.
"""
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, status
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import services
from ..access import readable_circuit, require_owner
from ..models import Circuit, Visibility
from .serializers import CircuitSerializer, ForkSerializer, ShareSettingsSerializer, ShareSettingsUpdateSerializer


class ForkView(APIView):
    """A private copy of a readable circuit for the requester (latest document as version 1)."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=ForkSerializer, responses={201: CircuitSerializer})
    def post(self, request, pk):
        source = readable_circuit(request, pk)
        body = ForkSerializer(data=request.data or {})
        body.is_valid(raise_exception=True)
        fork = services.fork_circuit(source, request.user, body.validated_data.get("name"))
        return Response(CircuitSerializer(fork, context={"request": request}).data, status=status.HTTP_201_CREATED)


def share_settings(request, circuit: Circuit) -> dict:
    api_path = reverse("shared-circuit", kwargs={"token": circuit.share_token})
    return {
        "visibility": circuit.visibility,
        "share_token": circuit.share_token,
        "share_url": request.build_absolute_uri(f"/#/shared/{circuit.share_token}"),
        "share_api_url": request.build_absolute_uri(api_path),
        "link_active": circuit.visibility != Visibility.PRIVATE,
        "grants": [{"username": g.user.username, "can_operate": g.can_operate, "can_edit": g.can_edit}
                   for g in circuit.grants.select_related("user").order_by("user__username")],
    }


class ShareSettingsView(APIView):
    """The owner's share settings. PATCH `visibility` and/or `grants` (replaces the list)."""

    @extend_schema(responses=ShareSettingsSerializer)
    def get(self, request, pk):
        circuit = readable_circuit(request, pk)
        require_owner(request, circuit)
        return Response(share_settings(request, circuit))

    @extend_schema(request=ShareSettingsUpdateSerializer, responses=ShareSettingsSerializer)
    def patch(self, request, pk):
        circuit = readable_circuit(request, pk)
        require_owner(request, circuit)
        body = ShareSettingsUpdateSerializer(data=request.data)  # both fields optional; not partial, so a grant needs its username
        body.is_valid(raise_exception=True)
        services.update_share(circuit, body.validated_data.get("visibility"), body.validated_data.get("grants"))
        return Response(share_settings(request, circuit))


class ShareRevokeView(APIView):
    """Rotate the share token: links and headers carrying the old one stop working."""

    @extend_schema(request=None, responses=ShareSettingsSerializer)
    def post(self, request, pk):
        circuit = readable_circuit(request, pk)
        require_owner(request, circuit)
        return Response(share_settings(request, services.revoke_share_token(circuit)))


class SharedCircuitView(APIView):
    """Resolve a share link: the circuit detail (read-only) for an unlisted or public circuit."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(responses=CircuitSerializer)
    def get(self, request, token):
        circuit = (Circuit.objects.filter(share_token=token, visibility__in=[Visibility.UNLISTED, Visibility.PUBLIC])
                   .select_related("owner").prefetch_related("versions", "tags").first())
        if circuit is None:
            return Response({"detail": "No circuit is shared with this link (it may have been revoked).", "errors": []},
                            status=status.HTTP_404_NOT_FOUND)
        return Response(CircuitSerializer(circuit, context={"request": request}).data)
