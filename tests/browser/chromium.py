"""Debian's Chromium, driven by Playwright (never a downloaded browser)."""
import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.conftest import ARTIFACTS

#: The one wait every browser test uses, for an element, a navigation, a tick or a run
#: to start: generous, since a busy machine is slow, not wrong (a passing wait ends when
#: its event comes; only a failing test waits this long). DBSPWEB_TEST_TIMEOUT_S sets it.
TIMEOUT_S = float(os.environ.get("DBSPWEB_TEST_TIMEOUT_S", "90"))
TIMEOUT_MS = int(TIMEOUT_S * 1000)
expect.set_options(timeout=TIMEOUT_MS)

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
    return pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS, timeout=TIMEOUT_MS)


def new_context(browser, **options):
    """A browser context whose actions and navigations wait TIMEOUT_MS (expect's too)."""
    context = browser.new_context(**options)
    context.set_default_timeout(TIMEOUT_MS)
    context.set_default_navigation_timeout(TIMEOUT_MS)
    return context
