"""The single-page app: Django serves the built frontend's index.html at /."""
from django.conf import settings
from django.http import HttpResponse
from django.utils.cache import patch_cache_control
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
    response = HttpResponse(index.read_text(encoding="utf-8"))
    # Revalidated on every load: it names the current build's hashed (long-cached) assets.
    patch_cache_control(response, no_cache=True)
    return response
