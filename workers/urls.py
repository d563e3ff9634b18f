"""The workers' REST API, mounted under /api/ (dbspweb/urls.py)."""
from django.urls import path

from . import api

urlpatterns = [path("health/", api.HealthView.as_view(), name="health")]
