from django.urls import re_path

from .consumer import CircuitDocConsumer

# y-websocket's provider opens `<url>/<room>`: the editor uses room "doc" (no trailing slash).
websocket_urlpatterns = [re_path(r"^ws/circuits/(?P<circuit_id>\d+)/doc/?$", CircuitDocConsumer.as_asgi())]
