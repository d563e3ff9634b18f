"""Steps shared by the browser tests of issue 14's loose ends (editor guards, dashboard
values, My runs): a 1440x900 page in Debian's Chromium, signing in, a REST client for
setting the scene, screenshots, and dialogs answered."""
from contextlib import contextmanager

import httpx
from playwright.sync_api import expect

from tests.browser.chromium import TIMEOUT_S, answered, new_context, shared_browser  # noqa: F401 - answered: the tests' step
from tests.conftest import ARTIFACTS

VIEWPORT = {"width": 1440, "height": 900}
PASSWORD = "loose-ends-123"


@contextmanager
def pages(base_url, viewport=VIEWPORT, **options):
    """Yields `new_page()`: a fresh context (the shared Chromium's, `options` such as
    accept_downloads) and page per call, closed at the end."""
    browser = shared_browser()
    contexts = []

    def new_page():
        context = new_context(browser, base_url=base_url, viewport=viewport, **options)
        contexts.append(context)
        page = context.new_page()
        return page

    try:
        yield new_page
    finally:
        for context in contexts:
            context.close()


def log_in(page, username, password=PASSWORD):
    page.goto("/")
    page.get_by_test_id("login-username").fill(username)
    page.get_by_test_id("login-password").fill(password)
    page.get_by_test_id("login-submit").click()
    expect(page.get_by_test_id("current-user")).to_have_text(username)


def rest_client(base_url, user) -> httpx.Client:
    """The user's REST client (a DRF token), to set the scene as a script would."""
    from rest_framework.authtoken.models import Token

    token, _ = Token.objects.get_or_create(user=user)
    return httpx.Client(base_url=base_url, headers={"Authorization": f"Token {token.key}"}, timeout=30)


def start_run(client, circuit_id) -> int:
    started = client.post(f"/api/circuits/{circuit_id}/runs/")
    assert started.status_code == 201, started.text
    return started.json()["id"]


def wait_status(client, run_id, status, seconds=TIMEOUT_S):
    """Polls the run until it has `status` (a worker starts runs with Spark: seconds); a
    poll of the REST API with the one deadline."""
    import time

    deadline = time.monotonic() + seconds
    while True:
        now = client.get(f"/api/runs/{run_id}/").json()["status"]
        if now == status:
            return
        assert time.monotonic() < deadline, f"run {run_id} is {now}, not {status}"
        time.sleep(0.3)


def shot(page, name):
    """A screenshot at 1440x900 in tests/artifacts/ (looked at by whoever changes the page)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))




def big_orders_shared_with_bob(make_user, can_edit: bool = True):
    """The co-editing tests' start: alice's Big orders, granted to bob (a writer, or with
    `can_edit=False` a viewer)."""
    from circuits import services
    from circuits.models import CircuitGrant
    from tests.conftest import example

    alice, bob = make_user("alice", PASSWORD), make_user("bob", PASSWORD)
    circuit = services.create_circuit(alice, "Big orders", "", "private", example("big_orders"))
    CircuitGrant.objects.create(circuit=circuit, user=bob, can_edit=can_edit)
    return circuit


def open_as(page, username, circuit) -> None:
    """Signed in as `username`, the circuit's page with its three nodes drawn."""
    log_in(page, username)
    page.goto(f"/#/circuits/{circuit.id}")
    expect(page.get_by_test_id("circuit-node")).to_have_count(3)
