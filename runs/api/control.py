"""Run control: pause and resume (stop is in views.py, with the other run views). The owner and
users granted can_operate, like stop and push; an illegal transition is a 409 that names the run's status."""
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from circuits.access import require_operator

from .. import lifecycle
from ..access import readable_run as visible_run
from .serializers import RunSerializer


class RunPauseView(APIView):
    """POST: hold the run's ticks; pushes are still accepted (up to the backpressure limit)."""

    @extend_schema(request=None, responses=RunSerializer)
    def post(self, request, pk):
        run = visible_run(request, pk)
        require_operator(request, run.circuit)
        return Response(RunSerializer(lifecycle.pause_run(run)).data)


class RunResumeView(APIView):
    """POST: continue a paused run from its first unapplied push."""

    @extend_schema(request=None, responses=RunSerializer)
    def post(self, request, pk):
        run = visible_run(request, pk)
        require_operator(request, run.circuit)
        return Response(RunSerializer(lifecycle.resume_run(run)).data)
