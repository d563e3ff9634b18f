"""A run's operator profile and frontier over ticks (runs/profile.py)."""
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from ..access import readable_run
from ..profile import METRICS, metric_param, run_frontier, run_profile, tick_range
from .serializers import RunFrontierSerializer, RunProfileSerializer

RANGE = [OpenApiParameter("from", int, description="first tick (default: the first stored)"),
         OpenApiParameter("to", int, description="last tick (default: the current tick)")]


class RunProfileView(APIView):
    """`?metric=ms|rows_in|rows_out|state_rows|spark_jobs&from=&to=`: per node the metric
    over ticks (downsampled past 500 points, the newest 5000 ticks of the range), its
    total, where each tick ran, and the top nodes."""

    @extend_schema(parameters=[OpenApiParameter("metric", str, enum=list(METRICS), description="default: ms"), *RANGE],
                   responses=RunProfileSerializer)
    def get(self, request, pk):
        run = readable_run(request, pk)
        metric = metric_param(request.query_params)
        first, last = tick_range(request.query_params)
        return Response(run_profile(run, metric, first, last))


class RunFrontierView(APIView):
    """`?from=&to=`: per fixed point its iterations per tick and convergence; per window
    its waterline, windows closed and late rows per tick."""

    @extend_schema(parameters=RANGE, responses=RunFrontierSerializer)
    def get(self, request, pk):
        run = readable_run(request, pk)
        first, last = tick_range(request.query_params)
        return Response(run_frontier(run, first, last))
