"""The websocket Origin check (dbspweb/origins.py) through the real ASGI application:
only the server's own origin (scheme, host and port exactly) and the configured
origins may open a socket. `http://localhost:31337` with a user's cookie used to pass."""
import pytest
from channels.db import database_sync_to_async
from tests.sockets import Communicator

from dbspweb.asgi import application
from tests.runs.test_consumer import _no_task_messages, setup_run  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def handshake(run, host: str, origin: str | None, scheme: str = "ws"):
    headers = [(b"host", host.encode())] + ([(b"origin", origin.encode())] if origin is not None else [])
    comm = Communicator(application, f"/ws/runs/{run.pk}/", headers=headers)
    comm.scope["scheme"] = scheme
    connected, _ = await comm.connect(timeout=5)
    await comm.disconnect()
    return connected


@pytest.mark.parametrize("host, origin, scheme, accepted", [
    ("localhost:8000", "http://localhost:8000", "ws", True),
    ("127.0.0.1:8000", "http://127.0.0.1:8000", "ws", True),
    ("localhost", "https://localhost", "wss", True),
    ("localhost:8000", "http://localhost:31337", "ws", False),  # another port: another site
    ("localhost:8000", "https://localhost:8000", "ws", False),  # another scheme
    ("localhost:8000", "http://127.0.0.1:8000", "ws", False),  # another host
    ("localhost", "http://localhost", "wss", False),  # an http page on a TLS socket
    ("evil.example:8000", "http://evil.example:8000", "ws", False),  # not an allowed host
    ("localhost:8000", None, "ws", False),  # no Origin
    ("localhost:8000", "null", "ws", False),  # sandboxed or file page
])
async def test_only_the_servers_own_origin_by_default(make_user, host, origin, scheme, accepted):
    run = await database_sync_to_async(setup_run)(make_user, visibility="public")
    assert await handshake(run, host, origin, scheme) is accepted


async def test_configured_origins_are_accepted_exactly(make_user, settings):
    settings.WEBSOCKET_ALLOWED_ORIGINS = ["https://app.example.com"]
    run = await database_sync_to_async(setup_run)(make_user, visibility="public")
    assert await handshake(run, "localhost:8000", "https://app.example.com")
    assert await handshake(run, "localhost:8000", "https://app.example.com:443")  # the default port spelled out
    assert not await handshake(run, "localhost:8000", "https://app.example.com:8443")
    assert not await handshake(run, "localhost:8000", "http://app.example.com")
    assert not await handshake(run, "localhost:8000", "https://evil.app.example.com")

