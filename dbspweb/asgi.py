"""ASGI entry point: HTTP goes to Django, websockets to Channels consumers."""
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dbspweb.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs Django set up)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from runs.api.push_lane import PushLane  # noqa: E402
from runs.routing import websocket_urlpatterns as run_sockets  # noqa: E402
from circuits.collab.routing import websocket_urlpatterns as document_sockets  # noqa: E402
from circuits.ws_auth import TokenAuthMiddleware  # noqa: E402
from dbspweb.origins import ExactOriginValidator  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": PushLane(django_asgi_app),  # plain token pushes in group commits; the rest to Django
        "websocket": ExactOriginValidator(
            AuthMiddlewareStack(TokenAuthMiddleware(URLRouter(run_sockets + document_sockets)))
        ),
    }
)
