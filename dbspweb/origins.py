"""Which pages may open the app's websockets (cross-site websocket hijacking: a page on
another origin would otherwise connect with the user's session cookie).

A handshake is accepted only when its `Origin` header is exactly — scheme, host and
port — either the origin the handshake itself was made to (its Host header, which must
be in ALLOWED_HOSTS; ws -> http, wss -> https), or one of
settings.WEBSOCKET_ALLOWED_ORIGINS (env DJANGO_WEBSOCKET_ORIGINS, by default
DJANGO_CSRF_TRUSTED_ORIGINS: the public origin behind a TLS proxy). A handshake without
an Origin is refused (browsers always send one; scripts send it explicitly).
Channels' AllowedHostsOriginValidator compared only the host name, so
`http://localhost:31337` passed.
"""
from urllib.parse import urlparse

from channels.security.websocket import OriginValidator, WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host


def own_origin(scope) -> str | None:
    """The origin a handshake was made to, when its Host is an allowed host."""
    host = next((value.decode("latin1") for name, value in scope.get("headers", []) if name == b"host"), None)
    if not host:
        return None
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return None
    scheme = "https" if scope.get("scheme") in ("wss", "https") else "http"
    return f"{scheme}://{host}"


class ExactOriginValidator(OriginValidator):
    def __init__(self, application):
        super().__init__(application, allowed_origins=())

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            return await self.application(scope, receive, send)
        allowed = [*settings.WEBSOCKET_ALLOWED_ORIGINS, *filter(None, [own_origin(scope)])]
        origin = next((value.decode("latin1") for name, value in scope.get("headers", []) if name == b"origin"), None)
        if origin is not None and origin != "null":
            parsed = urlparse(origin.lower())
            if any(self.match_allowed_origin(parsed, pattern) for pattern in allowed if "://" in pattern):
                return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)
