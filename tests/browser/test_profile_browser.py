"""The operator profile and the frontier on the run page, in Debian's Chromium against the
real stack (uvicorn + Celery worker + Spark): the sensor windows demo and the transitive
closure demo are run push by push (one tick each) over REST, then looked at.

What a user checks: the metric chosen colours the graph and names itself in the legend;
the top nodes; clicking a node plots its metric over ticks (and a window's late rows, where
they happened); the frontier view's iterations per tick of the fixed point and the
waterline, windows closed and late rows of the windows (by hand: tests/dbsp/test_profile_stats.py).
"""
import json
import time

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.chromium import TIMEOUT_S, new_context, shared_browser
from tests.conftest import ARTIFACTS, EXAMPLES, example

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

PASSWORD = "prof-pass-123"


@pytest.fixture
def page(live_stack):
    browser = shared_browser()
    context = new_context(browser, base_url=live_stack.base_url, viewport={"width": 1440, "height": 900})
    yield context.new_page()
    context.close()


@pytest.fixture
def api(live_stack, make_user):
    from rest_framework.authtoken.models import Token

    user = make_user("prof", PASSWORD)
    client = httpx.Client(base_url=live_stack.base_url, headers={"Authorization": f"Token {Token.objects.create(user=user).key}"},
                          timeout=30)
    yield client
    client.close()


def run_demo(api, name) -> int:
    """A run of an example circuit with each line of its pushes file applied as one tick."""
    created = api.post("/api/circuits/", json={"name": name, "visibility": "private", "document": example(name)})
    assert created.status_code == 201, created.text
    run = api.post(f"/api/circuits/{created.json()['id']}/runs/")
    assert run.status_code == 201, run.text
    run_id = run.json()["id"]
    lines = (EXAMPLES / f"{name}.pushes.jsonl").read_text().splitlines()
    for tick, line in enumerate(lines):
        for input_name, records in json.loads(line).items():
            pushed = api.post(f"/api/runs/{run_id}/inputs/{input_name}/push/", json=records)
            assert pushed.status_code == 202, pushed.text
        deadline = time.monotonic() + TIMEOUT_S
        while (body := api.get(f"/api/runs/{run_id}/").json())["current_tick"] < tick:
            assert body["status"] != "failed", body["error"]
            assert time.monotonic() < deadline, f"tick {tick} did not come: {body}"
            time.sleep(0.2)
    return run_id


def open_run(page, run_id):
    page.goto("/")
    page.get_by_test_id("login-username").fill("prof")
    page.get_by_test_id("login-password").fill(PASSWORD)
    page.get_by_test_id("login-submit").click()
    expect(page.get_by_test_id("current-user")).to_have_text("prof")
    page.goto(f"/#/runs/{run_id}")
    expect(page.get_by_test_id("run-graph")).to_be_visible()


def points(page, test_id):
    return [json.loads(li.get_attribute("data-values")) for li in page.get_by_test_id(test_id).locator("li").all()]


def test_profile_heatmap_top_nodes_series_and_window_frontier(page, api):
    run_id = run_demo(api, "sensor_windows")
    open_run(page, run_id)
    # by default the graph shows each node's share of the latest tick's time (live)
    expect(page.get_by_test_id("graph-caption")).to_contain_text("share of the tick's time")
    page.get_by_test_id("profile-metric-ms").check()
    legend = page.get_by_test_id("heat-legend-title")
    expect(legend).to_have_text("Fill: time (ms), total over ticks 0–4:")
    expect(page.get_by_test_id("heat-scale")).to_be_visible()

    # rows in: the readings node took every pushed record (3 + 2 + 2 + 1 + 1)
    page.get_by_test_id("profile-metric-rows_in").check()
    expect(legend).to_have_text("Fill: rows in, total over ticks 0–4:")
    expect(page.get_by_test_id("heat-readings")).to_have_attribute("data-value", "9 rows")
    top = page.get_by_test_id("profile-top")
    expect(top.locator("li").first).to_contain_text("rows")
    expect(page.get_by_test_id("profile-top-readings")).to_have_attribute("data-total", "9")
    # heat: the busiest node is the darkest; a node that saw fewer rows is lighter
    outputs = page.get_by_test_id("heat-sensor_sessions").get_attribute("data-value")
    assert outputs != "9 rows"
    colour = page.get_by_test_id("graph-node-readings").get_attribute("data-heat-colour")
    assert colour != page.get_by_test_id("graph-node-sensor_averages").get_attribute("data-heat-colour")

    # late rows where they happen: on the window node, and in its series
    expect(page.get_by_test_id("heat-late-per_minute")).to_have_text("late 2")
    expect(page.get_by_test_id("heat-late-sessions")).to_have_text("late 1")
    page.get_by_test_id("graph-node-per_minute").click()
    expect(page.get_by_test_id("profile-series")).to_have_attribute("data-node", "per_minute")
    expect(page.get_by_test_id("profile-series-late")).to_contain_text("late rows: 2")
    assert [p["late rows"] for p in points(page, "profile-chart-points")] == [0, 0, 1, 0, 1]
    assert [p["rows in"] for p in points(page, "profile-chart-points")] == [3, 2, 2, 1, 1]
    expect(page.get_by_test_id("profile-paths")).to_contain_text("driver, row by row ×5")  # small ticks: on the driver
    page.get_by_test_id("profile-section").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "profile-windows-rows-in.png"))

    # Spark jobs: small ticks stay on the driver
    page.get_by_test_id("profile-metric-spark_jobs").check()
    expect(legend).to_have_text("Fill: Spark jobs, total over ticks 0–4:")
    expect(page.get_by_test_id("heat-per_minute")).to_have_attribute("data-value", "0 jobs")

    # the frontier view: newest tick first
    table = page.get_by_test_id("frontier-table-per_minute")
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(5)
    got = [(r.get_attribute("data-tick"), r.get_attribute("data-closed"), r.get_attribute("data-late")) for r in rows.all()]
    assert got == [("4", "0", "1"), ("3", "1", "0"), ("2", "0", "1"), ("1", "3", "0"), ("0", "0", "0")]
    expect(rows.nth(1)).to_contain_text("2026-11-21 10:08:30")
    sessions = [r.get_attribute("data-closed") for r in page.get_by_test_id("frontier-table-sessions").locator("tbody tr").all()]
    assert sessions == ["0", "3", "0", "0", "0"]
    page.get_by_test_id("frontier-section").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "profile-windows-frontier.png"))
    page.get_by_test_id("graph-section").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "profile-windows-heatmap.png"))


def test_frontier_of_the_transitive_closure(page, api):
    run_id = run_demo(api, "transitive_closure")
    stored = api.get(f"/api/runs/{run_id}/frontier/").json()
    (tc,) = stored["nodes"]
    open_run(page, run_id)
    rows = page.get_by_test_id("frontier-table-tc").locator("tbody tr")
    expect(rows).to_have_count(len(tc["iterations"]))
    got = [(r.get_attribute("data-iterations"), r.get_attribute("data-converged")) for r in rows.all()]
    assert got == [(str(k), "true") for k in reversed(tc["iterations"])]
    assert int(got[-1][0]) >= 3  # tick 0's chain of 3 edges: paths of 3 hops take 3 iterations at least
    expect(rows.first).to_contain_text("✓ converged")
    # the inner nodes of the fixed point are profiled too: pick one from the top list
    page.get_by_test_id("profile-metric-rows_out").check()
    expect(page.get_by_test_id("profile-top").locator("li").first).to_be_visible()
    page.get_by_test_id("profile-top").locator("button").first.click()
    expect(page.get_by_test_id("profile-chart")).to_be_visible()
    page.get_by_test_id("frontier-section").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "profile-closure-frontier.png"))
    page.get_by_test_id("graph-section").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "profile-closure-heatmap.png"))
