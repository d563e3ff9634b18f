"""REST views: parse, authorise, delegate to circuits.services, serialise."""
from django.db.models import Q
from django.http import Http404
from django.shortcuts import get_object_or_404
from rest_framework import permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import services
from ..models import Circuit, Run
from .serializers import CircuitSerializer, NewVersionSerializer, PushSerializer, RunSerializer, VersionSerializer


def require_owner(request, circuit: Circuit) -> None:
    if not request.user.is_authenticated or circuit.owner_id != request.user.pk:
        raise PermissionDenied("Only the circuit's owner may do this.")


def visible_run(request, pk) -> Run:
    """A run the user may see (its circuit's visibility rules), else 404."""
    run = get_object_or_404(Run.objects.select_related("circuit", "version"), pk=pk)
    if not Circuit.visible_to(request.user).filter(pk=run.circuit_id).exists():
        raise Http404
    return run


class CircuitViewSet(viewsets.ModelViewSet):
    serializer_class = CircuitSerializer
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]

    def get_queryset(self):
        user = self.request.user
        if self.action == "list":
            # Lists show the user's own circuits and public ones; unlisted need the link.
            mine = Q(owner=user) if user.is_authenticated else Q(pk__in=[])
            qs = Circuit.objects.filter(mine | Q(visibility="public"))
        else:
            qs = Circuit.visible_to(user)
        qs = qs.select_related("owner").prefetch_related("versions")
        if q := self.request.query_params.get("search"):
            qs = qs.filter(Q(name__icontains=q) | Q(description__icontains=q))
        return qs

    def perform_create(self, serializer):
        data = serializer.validated_data
        if "document" not in data:
            from rest_framework.exceptions import ValidationError

            raise ValidationError({"document": ["This field is required."]})
        serializer.instance = services.create_circuit(
            self.request.user, data["name"], data.get("description", ""), data["visibility"], data["document"]
        )

    def perform_update(self, serializer):
        require_owner(self.request, serializer.instance)
        document = serializer.validated_data.pop("document", None)
        if document is not None:
            services.add_version(serializer.instance, document)
        serializer.save()

    def perform_destroy(self, instance):
        require_owner(self.request, instance)
        instance.delete()

    @action(detail=True, methods=["get", "post"], serializer_class=NewVersionSerializer)
    def versions(self, request, pk=None):
        circuit = self.get_object()
        if request.method == "GET":
            return Response(VersionSerializer(circuit.versions.order_by("-number"), many=True).data)
        require_owner(request, circuit)
        body = NewVersionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        version = services.add_version(circuit, body.validated_data["document"])
        return Response(VersionSerializer(version).data, status=status.HTTP_201_CREATED)

    @action(detail=True, methods=["get", "post"], serializer_class=RunSerializer)
    def runs(self, request, pk=None):
        circuit = self.get_object()
        if request.method == "GET":
            page = self.paginate_queryset(circuit.runs.select_related("version").order_by("-id"))
            return self.get_paginated_response(RunSerializer(page, many=True, context={}).data)
        require_owner(request, circuit)
        run = services.start_run(circuit, request.user)
        return Response(RunSerializer(run).data, status=status.HTTP_201_CREATED)


class ValidateView(APIView):
    """POST a circuit document; get every problem back. Nothing is saved."""

    permission_classes = [permissions.AllowAny]

    def post(self, request):
        problems = services.validate_document(request.data.get("document", request.data) if isinstance(request.data, dict) else request.data)
        return Response({"valid": not problems, "errors": problems})


class OperatorCatalogView(APIView):
    """Every operator kind: group, ports, linearity and documentation (the palette)."""

    permission_classes = [permissions.AllowAny]

    def get(self, request):
        from dbsp.catalog import operator_catalog

        return Response(operator_catalog())


class CircuitFormatView(APIView):
    """The JSON Schema of circuit documents (dbsp/circuit.schema.json)."""

    permission_classes = [permissions.AllowAny]

    def get(self, request):
        from dbsp.catalog import circuit_json_schema

        return Response(circuit_json_schema())


class RunView(APIView):
    def get(self, request, pk):
        return Response(RunSerializer(visible_run(request, pk)).data)


class RunStopView(APIView):
    def post(self, request, pk):
        run = visible_run(request, pk)
        require_owner(request, run.circuit)
        return Response(RunSerializer(services.stop_run(run)).data)


class PushView(APIView):
    """POST change records to one input of a run; 202 with a completion token."""

    def post(self, request, pk, input_name):
        run = visible_run(request, pk)
        require_owner(request, run.circuit)
        entry, created = services.push(run, input_name, request.data, request.headers.get("Idempotency-Key"))
        body = {"token": entry.token, "sequence": entry.sequence, "duplicate": not created}
        return Response(body, status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK)


class CompletionView(APIView):
    def get(self, request, pk):
        run = visible_run(request, pk)
        return Response(services.completion(run, request.query_params.get("token", "")))


class PushLogView(APIView):
    def get(self, request, pk):
        run = visible_run(request, pk)
        return Response(PushSerializer(run.pushes.order_by("sequence"), many=True).data)


class OutputsView(APIView):
    """Each output view's integrated contents at `?tick=` (default: the current tick)."""

    def get(self, request, pk):
        run = visible_run(request, pk)
        tick = request.query_params.get("tick")
        upto = run.current_tick if tick in (None, "") else _int_param("tick", tick)
        return Response({"tick": upto, "views": services.integrated_views(run, upto)})


class DeltasView(APIView):
    """Output deltas of the ticks after `?since=` (default -1), at most `?limit=` ticks."""

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
        raise services.ServiceError(f"Query parameter {name!r} must be an integer, got {value!r}.", 400) from None
