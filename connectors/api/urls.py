"""The connectors' REST API, mounted under /api/ (dbspweb/urls.py)."""
from django.urls import path

from . import views

urlpatterns = [
    path("runs/<int:pk>/connectors/", views.ConnectorsView.as_view(), name="run-connectors"),
    path("runs/<int:pk>/connectors/<str:name>/", views.ConnectorView.as_view(), name="run-connector"),
    path("runs/<int:pk>/connectors/<str:name>/restart/", views.ConnectorRestartView.as_view(), name="run-connector-restart"),
]
