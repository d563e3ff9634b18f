"""The REST API of circuits, versions, sharing and accounts. dbspweb/urls.py mounts it
under /api/ after the runs' (runs/api/urls.py) and the workers' (workers/urls.py) URLs;
its last pattern answers every unmatched /api/ path."""
from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from . import auth, comments, frontends, not_found, sharing, versions, views

router = DefaultRouter(trailing_slash=True)
router.register("circuits", views.CircuitViewSet, basename="circuit")

urlpatterns = [
    path("auth/me/", auth.MeView.as_view(), name="auth-me"),
    path("auth/login/", auth.LoginView.as_view(), name="auth-login"),
    path("auth/logout/", auth.LogoutView.as_view(), name="auth-logout"),
    path("auth/token/", auth.TokenView.as_view(), name="auth-token"),
    path("auth/register/", auth.RegisterView.as_view(), name="auth-register"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("circuits/<int:pk>/versions/<int:number>/", versions.VersionView.as_view(), name="circuit-version"),
    path("circuits/<int:pk>/versions/<int:a>/diff/<int:b>/", versions.VersionDiffView.as_view(), name="circuit-version-diff"),
    path("circuits/<int:pk>/fork/", sharing.ForkView.as_view(), name="circuit-fork"),
    path("circuits/<int:pk>/share/", sharing.ShareSettingsView.as_view(), name="circuit-share"),
    path("circuits/<int:pk>/share/revoke/", sharing.ShareRevokeView.as_view(), name="circuit-share-revoke"),
    path("circuits/<int:pk>/threads/", comments.ThreadListView.as_view(), name="circuit-threads"),
    path("circuits/<int:pk>/threads/<int:thread>/", comments.ThreadView.as_view(), name="circuit-thread"),
    path("circuits/<int:pk>/threads/<int:thread>/comments/", comments.ReplyView.as_view(), name="circuit-thread-reply"),
    path("circuits/<int:pk>/threads/<int:thread>/comments/<int:comment>/", comments.CommentView.as_view(), name="circuit-comment"),
    path("circuits/<int:pk>/threads/<int:thread>/resolve/", comments.ResolveView.as_view(), name="circuit-thread-resolve"),
    path("circuits/<int:pk>/threads/<int:thread>/reopen/", comments.ReopenView.as_view(), name="circuit-thread-reopen"),
    path("mentions/", comments.MentionListView.as_view(), name="mentions"),
    path("mentions/read/", comments.MentionReadView.as_view(), name="mentions-read"),
    path("shared/<str:token>/", sharing.SharedCircuitView.as_view(), name="shared-circuit"),
    path("validate/", views.ValidateView.as_view(), name="validate"),
    path("plan/", views.PlanView.as_view(), name="plan"),
    path("sql/compile/", frontends.SqlCompileView.as_view(), name="sql-compile"),
    path("sql/export/", frontends.SqlExportView.as_view(), name="sql-export"),
    path("datalog/compile/", frontends.DatalogCompileView.as_view(), name="datalog-compile"),
    path("operators/", views.OperatorCatalogView.as_view(), name="operators"),
    path("circuit-format/", views.CircuitFormatView.as_view(), name="circuit-format"),
] + router.urls + [
    re_path(r"^", not_found.NotFoundView.as_view(), name="api-not-found"),  # last: every unmatched /api/ path
]
