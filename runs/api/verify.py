"""Verify a run (runs/verify.py): POST /api/runs/<id>/verify/?tick=N queues a
verification (202); GET /api/runs/<id>/verify/<vid>/ polls it (status, progress, and
when done `ok` with the differing rows per view); GET /api/runs/<id>/verify/ lists the
run's latest verifications."""
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from circuits.access import require_operator
from circuits.api.serializers import ErrorSerializer
from circuits.services import ServiceError

from ..access import readable_run
from ..fair_queue import requester_of
from ..verify import request_verification, verification_json
from .serializers import QueuedVerificationSerializer, VerificationSerializer

LATEST = 20


class VerifyView(APIView):
    @extend_schema(parameters=[OpenApiParameter("tick", int, description="0 up to the current tick; default: the current tick")],
                   request=None, responses={202: QueuedVerificationSerializer, 400: ErrorSerializer,
                                                       429: OpenApiResponse(ErrorSerializer, description="past the "
                                                                            "requester's cap; see Retry-After")})
    def post(self, request, pk):
        run = readable_run(request, pk)
        require_operator(request, run.circuit)
        tick = request.query_params.get("tick")
        if tick not in (None, ""):
            try:
                tick = int(tick)
            except ValueError:
                raise ServiceError(f"Query parameter 'tick' must be an integer, got {tick!r}.", 400,
                                   [{"field": "tick", "message": f"expected an integer, got {tick!r}"}]) from None
        else:
            tick = None
        v = request_verification(run, tick, requester_of(request, run))
        return Response(verification_json(v) | {"url": f"/api/runs/{run.pk}/verify/{v.pk}/"}, status=status.HTTP_202_ACCEPTED)

    @extend_schema(operation_id="runs_verify_list", responses={200: VerificationSerializer(many=True)})
    def get(self, request, pk):
        run = readable_run(request, pk)
        return Response([verification_json(v) for v in run.verifications.order_by("-id")[:LATEST]])


class VerificationView(APIView):
    @extend_schema(operation_id="runs_verification_retrieve", responses={200: VerificationSerializer, 404: OpenApiResponse(ErrorSerializer)})
    def get(self, request, pk, vid):
        run = readable_run(request, pk)
        v = run.verifications.filter(pk=vid).first()
        if v is None:
            raise ServiceError(f"Run {run.pk} has no verification {vid}.", 404)
        return Response(verification_json(v))
