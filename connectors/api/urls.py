"""The connectors' REST API, mounted under /api/ (dbspweb/urls.py)."""
from django.urls import path

from . import kinds, views

urlpatterns = [
    path("runs/<int:pk>/connectors/", views.ConnectorsView.as_view(), name="run-connectors"),
    path("runs/<int:pk>/connectors/<str:name>/", views.ConnectorView.as_view(), name="run-connector"),
    path("runs/<int:pk>/connectors/<str:name>/restart/", views.ConnectorRestartView.as_view(), name="run-connector-restart"),
    path("runs/<int:pk>/connectors/<str:name>/pause/", views.ConnectorPauseView.as_view(), name="run-connector-pause"),
    path("runs/<int:pk>/connectors/<str:name>/start/", views.ConnectorStartView.as_view(), name="run-connector-start"),
    path("runs/<int:pk>/connectors/<str:name>/dead-letters/", views.DeadLettersView.as_view(),
         name="run-connector-dead-letters"),
    path("connector-kinds/", kinds.ConnectorKindsView.as_view(), name="connector-kinds"),
    path("connector-kinds/<str:kind>/test/", kinds.ConnectionTestView.as_view(), name="connector-kind-test"),
]
