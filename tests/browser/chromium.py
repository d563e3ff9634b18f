"""Debian's Chromium, driven by Playwright (never a downloaded browser), and the waits
every browser test uses."""
import json
import os
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

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


_session: dict = {}  # the one Playwright driver and Chromium of the browser tests


def shared_browser():
    """The browser tests' one Chromium (launched on first use): each test opens contexts
    of its own in it (`new_context`: cookies, storage, cache and pages of its own, closed
    by the test) instead of starting a Playwright driver and a browser each. Launched
    again if it went away. `close_shared_browser` (tests/browser/conftest.py, after the
    last browser test) ends both."""
    browser = _session.get("browser")
    if browser is None or not browser.is_connected():
        if "playwright" not in _session:
            _session["playwright"] = sync_playwright().start()
        browser = _session["browser"] = launch(_session["playwright"])
    return browser


def close_shared_browser() -> None:
    """Closes the shared Chromium and stops its Playwright driver: while one runs, the
    thread counts as inside an event loop (Playwright's sync API), which the asyncio
    tests after the browser tests could not start theirs in."""
    browser, playwright = _session.pop("browser", None), _session.pop("playwright", None)
    try:
        if browser is not None and browser.is_connected():
            browser.close()
    finally:
        if playwright is not None:
            playwright.stop()


def close_contexts() -> None:
    """Closes every context still open in the shared Chromium."""
    browser = _session.get("browser")
    if browser is not None and browser.is_connected():
        for context in list(browser.contexts):
            context.close()


def new_context(browser, **options):
    """A browser context whose actions and navigations wait TIMEOUT_MS (expect's too)."""
    context = browser.new_context(**options)
    context.set_default_timeout(TIMEOUT_MS)
    context.set_default_navigation_timeout(TIMEOUT_MS)
    return context


# Waiting on what the page does, never on the clock (issue 30). Each wait ends when its
# event comes and fails after TIMEOUT_S.

#: Called on every animation frame by `settled`: true once `read(arg)` gave the same value
#: on FRAMES consecutive frames (state kept on window under a key of its own).
_SETTLE_JS = """([key, arg, frames]) => {
    const now = JSON.stringify((%s)(arg));
    const all = window.__dbspwebSettle ??= {};
    const s = all[key] ??= {last: undefined, same: 0};
    s.same = now === s.last ? s.same + 1 : 0;
    s.last = now;
    if (s.same < frames) return false;
    delete all[key];
    return now;
}"""
_settle_keys = iter(range(1 << 62))


def settled(page, read_js: str, arg=None, frames: int = 3):
    """What the page function `read_js` (e.g. a box or a transform) reads, once it stopped
    changing: the same on `frames` consecutive animation frames, i.e. the canvas's fit,
    zoom transition or smooth scroll is over. Polls on animation frames, not on a timer."""
    key = f"k{next(_settle_keys)}"
    value = page.wait_for_function(_SETTLE_JS % read_js, arg=[key, arg, frames], polling="raf", timeout=TIMEOUT_MS)
    return json.loads(value.json_value())


def settled_box(locator) -> dict:
    """The element's box once it stopped moving (e.g. the canvas fitting its view)."""
    x, y, w, h = settled(locator.page, "el => { const r = el.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; }",
                         locator.element_handle())
    return {"x": x, "y": y, "width": w, "height": h}


def settled_zoom(locator) -> float:
    """The zoom of a canvas's `.react-flow__viewport` once its transition is over."""
    return settled(locator.page, "el => new DOMMatrix(getComputedStyle(el).transform).a", locator.element_handle())


def next_frame(page) -> None:
    """Returns once the page painted twice more: every event already dispatched to it (a
    key press, a click) has been handled and React has committed what it changed."""
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done())))")


def answered(page, messages):
    """The dialogs answered so far (`messages`, filled by a page.on/once("dialog") handler
    registered before the action), once there is one: waits for the page's dialog event.
    (Playwright dispatches events only while it runs: an event not handled yet is handled
    during this wait, by the test's handler first.)"""
    if not messages:
        page.wait_for_event("dialog", timeout=TIMEOUT_MS)
    return messages


def until(page, condition, what: str):
    """Until `condition()` (a Python check of something Playwright delivers, e.g. a route
    the test holds) is true; a poll with the one deadline: Playwright delivers routes
    only while it runs, so this lets it run in short slices."""
    deadline = time.monotonic() + TIMEOUT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {TIMEOUT_S:.0f} s waiting for {what}")
        page.wait_for_timeout(50)
