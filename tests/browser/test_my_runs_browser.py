"""Issue 14: "My runs" lists a user's runs across circuits from GET /api/runs/ (one
request, not one per circuit), in Debian's Chromium at 1440x900 against the real stack
(uvicorn + Celery worker + Spark): two circuits with runs in different states, their
statuses and circuits shown, another user's runs absent, a status filter, and Stop
asking first (dismissed: the run goes on; accepted: it stops). Screenshot:
tests/artifacts/my-runs-*.png."""
import pytest
from playwright.sync_api import expect

from circuits import services
from runs.models import Run
from tests.browser.user_steps import PASSWORD, answered, log_in, pages, rest_client, shot, start_run, wait_status
from tests.conftest import example

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def browser(live_stack):
    with pages(live_stack.base_url) as new_page:
        yield new_page


def row(page, run_id):
    return page.locator(f'[data-testid=my-runs] [data-testid=run-row][data-run-id="{run_id}"]')


def test_my_runs_across_two_circuits_with_status_filter_and_stop_confirmation(live_stack, browser, make_user):
    runner, other = make_user("runner", PASSWORD), make_user("someone", PASSWORD)
    orders = services.create_circuit(runner, "Big orders", "", "private", example("big_orders"))
    words = services.create_circuit(runner, "Word count", "", "private", example("word_count"))
    theirs = services.create_circuit(other, "Someone's public orders", "", "public", example("big_orders"))
    client = rest_client(live_stack.base_url, runner)
    stopped = start_run(client, orders.id)
    wait_status(client, stopped, "running")
    assert client.post(f"/api/runs/{stopped}/stop/").status_code == 200
    running = start_run(client, words.id)
    wait_status(client, running, "running")
    # A run that failed, as the worker records it (its error is long and has a traceback).
    failed = Run.objects.create(circuit=orders, version=orders.latest_version, created_by=runner, status="failed",
                                current_tick=3, error="Tick 3 of node 'big' failed: " + "the reason, " * 30 + "\nTraceback ...")
    with rest_client(live_stack.base_url, other) as someone:
        not_mine = start_run(someone, theirs.id)

    page = browser()
    log_in(page, "runner")
    page.wait_for_load_state("networkidle")  # the home page's own requests are over
    requests = []
    page.on("request", lambda r: requests.append(r.url) if "/api/" in r.url else None)
    page.get_by_test_id("nav-runs").click()
    expect(page.get_by_test_id("my-runs").get_by_test_id("run-row")).to_have_count(3)
    # Newest first, each with its circuit, status, version and tick.
    ids = [int(i) for i in page.get_by_test_id("my-runs").get_by_test_id("run-row").evaluate_all("rows => rows.map(r => r.dataset.runId)")]
    assert ids == [failed.pk, running, stopped]
    assert row(page, not_mine).count() == 0
    expect(row(page, running).get_by_test_id("run-circuit")).to_have_text("Word count")
    expect(row(page, running).get_by_test_id("run-status-cell")).to_have_text("running")
    expect(row(page, stopped).get_by_test_id("run-circuit")).to_have_text("Big orders")
    expect(row(page, stopped).get_by_test_id("run-status-cell")).to_have_text("stopped")
    expect(row(page, failed.pk).get_by_test_id("run-status-cell")).to_have_text("failed")
    # The failed run's error in one line, the whole line on hover; only live runs can be stopped.
    error = row(page, failed.pk).get_by_test_id("run-error")
    expect(error).to_contain_text("Tick 3 of node 'big' failed")
    assert error.get_attribute("title") == error.inner_text()
    assert error.evaluate("el => el.scrollWidth > el.clientWidth"), "the long error should end in an ellipsis"
    assert "Traceback" not in error.get_attribute("title")
    expect(page.get_by_test_id(f"run-stop-{running}")).to_be_visible()
    expect(page.get_by_test_id(f"run-stop-{stopped}")).to_have_count(0)
    expect(page.get_by_test_id(f"run-stop-{failed.pk}")).to_have_count(0)
    # One request for the list, none per circuit.
    assert [u for u in requests if "/api/runs/" in u and "page=" in u]
    assert not [u for u in requests if "/api/circuits/" in u], requests
    shot(page, "my-runs-two-circuits")

    # The status filter asks the server for what it shows.
    page.get_by_test_id("my-runs-status").select_option("created,running,paused")
    expect(page.get_by_test_id("my-runs").get_by_test_id("run-row")).to_have_count(1)
    expect(row(page, running)).to_be_visible()
    page.get_by_test_id("my-runs-status").select_option("")
    expect(page.get_by_test_id("my-runs").get_by_test_id("run-row")).to_have_count(3)

    # Stopping asks first: dismissed, nothing changes; accepted, the run stops.
    asked, stops = [], []
    page.on("request", lambda r: stops.append(r.url) if r.method == "POST" and f"/api/runs/{running}/stop" in r.url else None)
    page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    page.get_by_test_id(f"run-stop-{running}").click()
    assert answered(page, asked) and f'Stop run #{running} of "Word count"?' in asked[0]
    expect(row(page, running)).to_have_attribute("data-status", "running")
    assert client.get(f"/api/runs/{running}/").json()["status"] == "running"
    page.once("dialog", lambda d: d.accept())
    page.get_by_test_id(f"run-stop-{running}").click()
    expect(row(page, running)).to_have_attribute("data-status", "stopped")
    # The dismissed confirm sent nothing: of the two clicks, only the accepted one asked
    # the server to stop (its request came after any the first click could have sent).
    assert len(stops) == 1, stops
    expect(page.get_by_test_id(f"run-stop-{running}")).to_have_count(0)
    assert client.get(f"/api/runs/{running}/").json()["status"] == "stopped"
    shot(page, "my-runs-after-stop")

    # The circuit page lists the same runs with the same table, Stop asking there too.
    page.get_by_role("link", name="Big orders").first.click()
    circuit_runs = page.get_by_test_id("circuit-runs")
    expect(circuit_runs.get_by_test_id("run-row")).to_have_count(2)
    expect(circuit_runs.locator(f'[data-run-id="{failed.pk}"]')).to_have_attribute("data-status", "failed")
    client.close()
