"""Explain a window's row on the run page, in Debian's Chromium against the real stack
(uvicorn, the Celery worker ticking on Spark): the sensor_windows demo, its pushes one
tick each. From the past-tick table of tick 2 under the tick slider, Explain on s1's
minute [10:00, 10:01) shows its two readings and the reading 10:00:50 pushed at tick 2,
dropped as late (behind the waterline 10:02:30), with its push. Screenshot at 1440x900:
tests/artifacts/explain-window-late.png."""
import json

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.chromium import new_context, shared_browser
from tests.browser.test_run_dashboard_browser import log_in, start_run_from_the_circuit_page
from tests.conftest import ARTIFACTS, EXAMPLES, example

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(live_stack):
    browser = shared_browser()
    context = new_context(browser, base_url=live_stack.base_url, viewport={"width": 1440, "height": 900})
    yield context.new_page()
    context.close()


def test_explain_a_minute_of_a_sensor_with_its_late_reading_from_a_past_tick(live_stack, page, make_user):
    from rest_framework.authtoken.models import Token

    from circuits import services

    user = make_user("windower", "dash-pass-123")
    circuit = services.create_circuit(user, "Sensor windows", "", "private", example("sensor_windows"))
    client = httpx.Client(base_url=live_stack.base_url, timeout=30,
                          headers={"Authorization": f"Token {Token.objects.create(user=user).key}"})
    log_in(page, "windower")
    run_id = start_run_from_the_circuit_page(page, circuit.pk)
    lines = (EXAMPLES / "sensor_windows.pushes.jsonl").read_text().splitlines()
    for tick, line in enumerate(lines):  # one tick each: lateness depends on the order
        for input_name, records in json.loads(line).items():
            assert client.post(f"/api/runs/{run_id}/inputs/{input_name}/push/", json=records).status_code == 202
        expect(page.get_by_test_id("run-tick")).to_have_text(str(tick))

    page.get_by_test_id("tick-slider-number").fill("2")
    past = page.get_by_test_id("past-table-sensor_averages")
    expect(page.get_by_test_id("past-outputs")).to_have_attribute("data-tick", "2")
    minute = past.get_by_test_id("view-row").filter(has_text="s1").filter(has_text="10:00:00").filter(has_text="21")
    expect(minute).to_have_count(1)
    minute.get_by_test_id("explain-row").click()

    panel = page.get_by_test_id("explain-panel")
    expect(panel.get_by_test_id("explain-target")).to_contain_text("sensor_averages")
    expect(panel.get_by_test_id("explain-target")).to_contain_text("at tick 2")
    expect(panel.get_by_test_id("explain-summary")).to_have_text("Weight 1 at tick 2 (unchanged at this tick).")
    contents = panel.get_by_test_id("explain-contents")
    window = contents.locator("[data-testid=explain-step][data-kind=tumbling_window]")
    expect(window).to_have_count(1)
    expect(contents.get_by_text("⤷ window [2026-11-21 10:00:00, 2026-11-21 10:01:00) of group sensor = 's1': 2 rows")).to_be_visible()
    expect(contents.get_by_text(
        "⤷ 1 late row of this group was dropped at tick 2 (behind the waterline 2026-11-21 10:02:30)")).to_be_visible()
    readings = contents.locator("[data-testid=explain-step][data-kind=input]")
    expect(readings).to_have_count(3)
    expect(readings.nth(0)).to_contain_text("10:00:10")
    expect(readings.nth(1)).to_contain_text("10:00:40")
    expect(contents.locator("[data-testid=explain-group][data-dropped=true]")).to_have_count(1)
    late = contents.locator("[data-testid=explain-group][data-dropped=true]").locator("[data-testid=explain-step]")
    expect(late).to_contain_text("10:00:50")
    expect(late).to_contain_text("0 → 1")
    expect(late).to_contain_text("push #3 · tick 2")
    expect(late).to_contain_text("windower")
    late.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "explain-window-late.png"))
