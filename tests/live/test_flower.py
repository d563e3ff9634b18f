"""Flower runs against the project's broker with the documented command and answers,
and sees tasks: senders publish task-sent events and workers task events (both
enabled in the Celery settings), so its task view is not empty."""
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT, free_port

pytestmark = [pytest.mark.live, pytest.mark.one_backend, pytest.mark.django_db(transaction=True)]  # the autouse live fixture reads the database


def test_flower_starts_against_the_broker_and_answers(tmp_path):
    port = free_port()
    log = open(tmp_path / "flower.log", "w")
    flower = subprocess.Popen(
        [str(Path(sys.executable).parent / "celery"), "-A", "dbspweb", "flower", f"--port={port}", "--address=127.0.0.1"],
        cwd=ROOT, env={**os.environ, "DJANGO_SETTINGS_MODULE": "dbspweb.settings", "FLOWER_UNAUTHENTICATED_API": "true"},
        stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/healthcheck", timeout=2)
                break
            except httpx.HTTPError:
                assert flower.poll() is None, (tmp_path / "flower.log").read_text()
                assert time.monotonic() < deadline, (tmp_path / "flower.log").read_text()
                time.sleep(0.3)
        assert health.status_code == 200 and health.text == "OK"
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=10)
        assert page.status_code == 200 and "Flower" in page.text
        assert "Connected to redis://" in (tmp_path / "flower.log").read_text() or "Broker: redis://" in (tmp_path / "flower.log").read_text()
        assert_flower_lists_a_sent_task(port, tmp_path / "flower.log")
    finally:
        flower.terminate()
        flower.wait(timeout=30)
        log.close()


def assert_flower_lists_a_sent_task(port: int, log_path: Path):
    """Send a task to a queue of this test's own (no worker consumes it; deleted after)
    until Flower's event receiver, which starts in the background, lists it."""
    from django.conf import settings

    from dbspweb.celery import app

    assert app.conf.worker_send_task_events and app.conf.task_send_sent_event
    queue = f"{settings.CELERY_TASK_DEFAULT_QUEUE}-flower-probe-{port}"
    sent: set[str] = set()
    try:
        deadline = time.monotonic() + 30
        while True:
            sent.add(app.send_task("workers.flower_probe", args=(port,), queue=queue).id)
            listed = httpx.get(f"http://127.0.0.1:{port}/api/tasks", params={"limit": 100}, timeout=10)
            assert listed.status_code == 200, listed.text
            seen = {task_id: task for task_id, task in listed.json().items() if task_id in sent}
            if seen:
                break
            assert time.monotonic() < deadline, f"Flower listed none of {len(sent)} sent tasks\n{log_path.read_text()}"
            time.sleep(0.5)
        assert {task["name"] for task in seen.values()} == {"workers.flower_probe"}
    finally:  # the queue, its messages and kombu's bindings for it (an exchange of its name)
        import redis

        client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
        keys = list(client.scan_iter(match=f"*{queue}*"))
        if keys:
            client.delete(*keys)
        client.close()
