"""Run control: pause and resume (stop is in views.py). The owner and users granted
can_operate, like stop and push; an illegal transition is a 409 that names the run's status."""
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import run_control
from .serializers import RunSerializer
from .views import require_operator, visible_run


class RunPauseView(APIView):
    """POST: hold the run's ticks; pushes are still accepted (up to the backpressure limit)."""

    @extend_schema(request=None, responses=RunSerializer)
    def post(self, request, pk):
        run = visible_run(request, pk)
        require_operator(request, run.circuit)
        return Response(RunSerializer(run_control.pause_run(run)).data)


class RunResumeView(APIView):
    """POST: continue a paused run from its first unapplied push."""

    @extend_schema(request=None, responses=RunSerializer)
    def post(self, request, pk):
        run = visible_run(request, pk)
        require_operator(request, run.circuit)
        return Response(RunSerializer(run_control.resume_run(run)).data)
