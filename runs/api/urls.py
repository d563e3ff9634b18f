"""The REST API of runs, mounted under /api/ (dbspweb/urls.py)."""
from django.urls import path

from . import control, explain, inputs, listing, nodes, profile, stats, verify, views

urlpatterns = [
    path("circuits/<int:pk>/runs/", views.CircuitRunsView.as_view(), name="circuit-runs"),
    path("runs/", listing.RunListView.as_view(), name="run-list"),
    path("runs/<int:pk>/stats/", stats.RunStatsView.as_view(), name="run-stats"),
    path("runs/<int:pk>/profile/", profile.RunProfileView.as_view(), name="run-profile"),
    path("runs/<int:pk>/frontier/", profile.RunFrontierView.as_view(), name="run-frontier"),
    path("runs/<int:pk>/", views.RunView.as_view(), name="run-detail"),
    path("runs/<int:pk>/stop/", views.RunStopView.as_view(), name="run-stop"),
    path("runs/<int:pk>/pause/", control.RunPauseView.as_view(), name="run-pause"),
    path("runs/<int:pk>/resume/", control.RunResumeView.as_view(), name="run-resume"),
    path("runs/<int:pk>/inputs/<str:input_name>/push/", views.PushView.as_view(), name="run-push"),
    path("runs/<int:pk>/inputs/<str:input_name>/rows/", inputs.InputRowsView.as_view(), name="run-input-rows"),
    path("runs/<int:pk>/explain/", explain.ExplainView.as_view(), name="run-explain"),
    path("runs/<int:pk>/explain/<int:eid>/", explain.ExplanationView.as_view(), name="run-explanation"),
    path("runs/<int:pk>/verify/", verify.VerifyView.as_view(), name="run-verify"),
    path("runs/<int:pk>/verify/<int:vid>/", verify.VerificationView.as_view(), name="run-verification"),
    path("runs/<int:pk>/nodes/<str:node>/", nodes.NodeView.as_view(), name="run-node"),
    path("runs/<int:pk>/completion/", views.CompletionView.as_view(), name="run-completion"),
    path("runs/<int:pk>/pushes/", views.PushLogView.as_view(), name="run-pushes"),
    path("runs/<int:pk>/outputs/", views.OutputsView.as_view(), name="run-outputs"),
    path("runs/<int:pk>/deltas/", views.DeltasView.as_view(), name="run-deltas"),
]
