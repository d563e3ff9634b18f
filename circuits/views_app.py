"""The single-page app: Django serves the built frontend's index.html at /."""
from django.conf import settings
from django.http import HttpResponse
from django.views.decorators.csrf import ensure_csrf_cookie


@ensure_csrf_cookie
def app_index(request):
    index = settings.FRONTEND_DIST / "index.html"
    if not index.exists():
        return HttpResponse(
            "<h1>dbspweb</h1><p>The frontend is not built. Run <code>npm ci && npm run build</code> "
            "in <code>frontend/</code> (scripts/run does this for you).</p>",
            status=503,
        )
    return HttpResponse(index.read_text(encoding="utf-8"))
