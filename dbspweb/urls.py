"""Root URLs: the admin, the REST API under /api/, and the single-page app at /."""
from django.contrib import admin
from django.urls import include, path, re_path

from circuits.views_app import app_index

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("circuits.api.urls")),
    path("", app_index, name="app"),
    # Shared links and sign-up are also plain paths of the single-page app.
    re_path(r"^(?:shared/[A-Za-z0-9_-]+|signup)/?$", app_index, name="app-path"),
]
