"""Websocket token auth for scripts: `?token=<DRF token>` when there is no session."""
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware


@database_sync_to_async
def _user_for_token(key: str):
    from rest_framework.authtoken.models import Token

    token = Token.objects.select_related("user").filter(key=key).first()
    return token.user if token else None


class TokenAuthMiddleware(BaseMiddleware):
    async def __call__(self, scope, receive, send):
        user = scope.get("user")
        if user is None or not user.is_authenticated:
            key = parse_qs(scope.get("query_string", b"").decode()).get("token", [None])[0]
            if key and (found := await _user_for_token(key)) is not None:
                scope["user"] = found
        return await super().__call__(scope, receive, send)
