"""Debian's Chromium, driven by Playwright (never a downloaded browser)."""
import os
from pathlib import Path

import pytest

from tests.conftest import ARTIFACTS

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
#: headless as root on a closed network: no sandbox, no GPU, no background connections
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


def launch(pw):
    """A headless Chromium from /usr/bin (scripts/test installs it); screenshots go to ARTIFACTS."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Debian's chromium is required at {CHROMIUM} (scripts/test installs it)")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # Playwright's sync API runs an event loop
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
