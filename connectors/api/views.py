"""/api/runs/<id>/connectors/ (GET list, POST declare) and
/api/runs/<id>/connectors/<name>/ (GET status, DELETE), /restart/ (POST: a failed
connector runs again from its stored position), /pause/ and /start/ (POST: this connector
alone), /dead-letters/ (GET: its latest dead letters, paginated). Reading follows the run's
visibility; declaring, deleting, restarting, pausing and starting need the right to operate it."""
from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from circuits.access import require_operator
from circuits.api.listing import CircuitPagination
from circuits.services import ServiceError, plan_for
from runs.access import readable_run
from runs.models import RunStatus

from .. import control
from ..models import Connector, DeadLetter
from .serializers import ConnectorSerializer, DeadLetterSerializer


def _connector(run, name) -> Connector:
    connector = Connector.objects.select_related("run").filter(run=run, name=name).first()
    if connector is None:
        raise Http404
    return connector


class ConnectorsView(APIView):
    @extend_schema(responses=ConnectorSerializer(many=True))
    def get(self, request, pk):
        run = readable_run(request, pk)
        connectors = Connector.objects.select_related("run").filter(run=run)
        return Response(ConnectorSerializer(connectors, many=True).data)

    @extend_schema(request=ConnectorSerializer, responses={201: ConnectorSerializer})
    def post(self, request, pk):
        run = readable_run(request, pk)
        require_operator(request, run.circuit)
        if run.status in (RunStatus.STOPPED, RunStatus.FAILED):
            raise ServiceError(f"Run {run.pk} is {run.status}; declare connectors on a live run.", 409)
        serializer = ConnectorSerializer(data=request.data, context={"run": run, "plan": plan_for(run.version)})
        serializer.is_valid(raise_exception=True)
        connector = serializer.save(run=run, created_by=request.user if request.user.is_authenticated else None)
        return Response(ConnectorSerializer(connector).data, status=201)


class ConnectorView(APIView):
    @extend_schema(responses=ConnectorSerializer)
    def get(self, request, pk, name):
        return Response(ConnectorSerializer(_connector(readable_run(request, pk), name)).data)

    @extend_schema(responses={204: None})
    def delete(self, request, pk, name):
        run = readable_run(request, pk)
        require_operator(request, run.circuit)
        _connector(run, name).delete()
        return Response(status=204)


def _operated(request, pk, name) -> Connector:
    run = readable_run(request, pk)
    require_operator(request, run.circuit)
    return _connector(run, name)


class ConnectorRestartView(APIView):
    @extend_schema(request=None, responses=ConnectorSerializer)
    def post(self, request, pk, name):
        return Response(ConnectorSerializer(control.start(_operated(request, pk, name))).data)


class ConnectorStartView(APIView):
    @extend_schema(request=None, responses=ConnectorSerializer,
                   description="Run this connector again (paused, retrying or failed): a source resumes at its stored "
                               "position, a sink after its last tick.")
    def post(self, request, pk, name):
        return Response(ConnectorSerializer(control.start(_operated(request, pk, name))).data)


class ConnectorPauseView(APIView):
    @extend_schema(request=None, responses=ConnectorSerializer,
                   description="Pause this connector alone (not polled or written; the run's other connectors go on); "
                               "409 for a failed one.")
    def post(self, request, pk, name):
        return Response(ConnectorSerializer(control.pause(_operated(request, pk, name))).data)


class DeadLettersView(APIView):
    pagination_class = CircuitPagination

    @extend_schema(responses=DeadLetterSerializer(many=True),
                   description="The connector's dead letters, newest first (its last DBSPWEB_DEAD_LETTERS_KEPT; the "
                               "connector's dead_letters counts them all). Paginated like the circuits list.")
    def get(self, request, pk, name):
        connector = _connector(readable_run(request, pk), name)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(DeadLetter.objects.filter(connector=connector).order_by("-id"), request, view=self)
        return paginator.get_paginated_response(DeadLetterSerializer(page, many=True).data)
