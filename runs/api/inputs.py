"""GET /api/runs/<id>/inputs/<input>/rows/: an input table's current contents (every
accepted push, pending ones included), paged like the circuits list (`?page=`,
`?page_size=`): {count, next, previous, results: [{"data": row, "weight": w}],
input, through_sequence}."""
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.views import APIView

from circuits.api.listing import CircuitPagination

from ..access import readable_run
from ..input_tables import rows_of
from ..interface import input_schema
from .serializers import InputRowsSerializer


class InputRowsView(APIView):
    @extend_schema(parameters=[OpenApiParameter("page", int), OpenApiParameter("page_size", int, description="default 50, at most 200")],
                   responses=InputRowsSerializer)
    def get(self, request, pk, input_name):
        run = readable_run(request, pk)
        input_schema(run, input_name)  # 404 naming the inputs
        paginator = CircuitPagination()
        page = paginator.paginate_queryset(rows_of(run, input_name).values_list("data", "weight"), request, view=self)
        response = paginator.get_paginated_response([{"data": d, "weight": w} for d, w in page])
        run.refresh_from_db(fields=["input_rows_through"])
        response.data["input"] = input_name
        response.data["through_sequence"] = run.input_rows_through
        return response
