"""Flower runs against the project's broker with the documented command and answers."""
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT, free_port

pytestmark = pytest.mark.live


def test_flower_starts_against_the_broker_and_answers(tmp_path):
    port = free_port()
    log = open(tmp_path / "flower.log", "w")
    flower = subprocess.Popen(
        [str(Path(sys.executable).parent / "celery"), "-A", "dbspweb", "flower", f"--port={port}", "--address=127.0.0.1"],
        cwd=ROOT, env={**os.environ, "DJANGO_SETTINGS_MODULE": "dbspweb.settings"}, stdout=log, stderr=subprocess.STDOUT,
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
    finally:
        flower.terminate()
        flower.wait(timeout=30)
        log.close()
