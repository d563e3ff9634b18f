"""One version of a circuit, and the difference between two versions."""
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from ..access import readable_circuit
from ..authorship import authors_between
from ..diff import diff_documents
from ..services import ServiceError
from .serializers import VersionDiffSerializer, VersionSerializer


def version_of(circuit, number: int):
    version = circuit.versions.filter(number=number).first()
    if version is None:
        raise ServiceError(f"Circuit {circuit.pk} has no version {number}.", 404,
                           [{"field": "version", "message": f"no version {number}"}])
    return version


class VersionView(APIView):
    @extend_schema(responses=VersionSerializer)
    def get(self, request, pk, number):
        return Response(VersionSerializer(version_of(readable_circuit(request, pk), number)).data)


class VersionDiffView(APIView):
    """Nodes added/removed/changed (with the changed fields), edges added/removed and the
    document's fields changed from version a to b, with who changed each."""

    @extend_schema(responses=VersionDiffSerializer)
    def get(self, request, pk, a, b):
        circuit = readable_circuit(request, pk)
        before, after = version_of(circuit, a), version_of(circuit, b)
        diff = diff_documents(before.document, after.document)
        return Response({"circuit": circuit.pk, "a": a, "b": b, **diff, "authors": authors_between(circuit, a, b, diff)})
