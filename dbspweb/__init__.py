"""The dbspweb Django project: settings, ASGI routing, Celery app, root URLs."""
from .celery import app as celery_app

__all__ = ["celery_app"]
