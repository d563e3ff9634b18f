"""Per-node stats of one tick of a run, from its stored tick output."""
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from circuits.services import ServiceError

from ..access import readable_run
from ..outputs import run_stats
from .serializers import RunStatsSerializer


class RunStatsView(APIView):
    """`?tick=` (default: the current tick): each node's frontier, rows in/out, state rows and ms."""

    @extend_schema(parameters=[OpenApiParameter("tick", int, description="default: the current tick")],
                   responses=RunStatsSerializer)
    def get(self, request, pk):
        run = readable_run(request, pk)
        tick = request.query_params.get("tick")
        if tick in (None, ""):
            tick = None
        else:
            try:
                tick = int(tick)
            except ValueError:
                raise ServiceError(f"Query parameter 'tick' must be an integer, got {tick!r}.", 400,
                                            [{"field": "tick", "message": "expected an integer"}]) from None
        return Response(run_stats(run, tick))
