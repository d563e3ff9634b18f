"""Test helper for watching together (runs/watchers.py): forget every presence list of
this test session's prefix. Run ids repeat between tests (each starts from an empty
database), and a test that failed (or a page that did not close) may leave watchers in
Redis for up to watchers.TTL seconds."""
import redis
from django.conf import settings

from runs import watchers


def forget_presence_lists() -> None:
    client = redis.Redis.from_url(settings.REDIS_URL)
    prefix = watchers._keys(0)[0].rsplit(":", 1)[0]
    try:
        for key in client.scan_iter(f"{prefix}:*"):
            client.delete(key)
    finally:
        client.close()
