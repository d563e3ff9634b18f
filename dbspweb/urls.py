"""Root URLs: the admin, the REST API under /api/, and the single-page app at /."""
from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView

from circuits.views_app import app_index
from connectors.api.metrics import metrics

urlpatterns = [
    # Runs, the input log and tick outputs were in the circuits app's admin before the
    # runs app had them: old links keep working.
    re_path(r"^admin/circuits/(?P<rest>(?:run|push|tickoutput)/.*)$",
            RedirectView.as_view(url="/admin/runs/%(rest)s", permanent=True, query_string=True)),
    path("admin/", admin.site.urls),
    # One /api/, three layers: runs and workers first, then circuits, whose last pattern
    # answers every unmatched /api/ path.
    path("api/", include("workers.urls")),
    path("api/", include("connectors.api.urls")),
    path("api/", include("runs.api.urls")),
    path("api/", include("circuits.api.urls")),
    # Prometheus: the live runs and their connectors (docs/connectors.md, Metrics)
    path("metrics", metrics, name="metrics"),
    path("", app_index, name="app"),
    # Shared links and sign-up are also plain paths of the single-page app.
    re_path(r"^(?:shared/[A-Za-z0-9_-]+|signup)/?$", app_index, name="app-path"),
]

handler500 = "dbspweb.errors.server_error"  # JSON, no traceback (DJANGO_DEBUG=0)
