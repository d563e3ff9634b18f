from django.urls import path
from rest_framework.routers import DefaultRouter

from . import auth, views

router = DefaultRouter(trailing_slash=True)
router.register("circuits", views.CircuitViewSet, basename="circuit")

urlpatterns = [
    path("auth/me/", auth.MeView.as_view(), name="auth-me"),
    path("auth/login/", auth.LoginView.as_view(), name="auth-login"),
    path("auth/logout/", auth.LogoutView.as_view(), name="auth-logout"),
    path("auth/token/", auth.TokenView.as_view(), name="auth-token"),
    path("validate/", views.ValidateView.as_view(), name="validate"),
    path("operators/", views.OperatorCatalogView.as_view(), name="operators"),
    path("circuit-format/", views.CircuitFormatView.as_view(), name="circuit-format"),
    path("runs/<int:pk>/", views.RunView.as_view(), name="run-detail"),
    path("runs/<int:pk>/stop/", views.RunStopView.as_view(), name="run-stop"),
    path("runs/<int:pk>/inputs/<str:input_name>/push/", views.PushView.as_view(), name="run-push"),
    path("runs/<int:pk>/completion/", views.CompletionView.as_view(), name="run-completion"),
    path("runs/<int:pk>/pushes/", views.PushLogView.as_view(), name="run-pushes"),
    path("runs/<int:pk>/outputs/", views.OutputsView.as_view(), name="run-outputs"),
    path("runs/<int:pk>/deltas/", views.DeltasView.as_view(), name="run-deltas"),
] + router.urls
