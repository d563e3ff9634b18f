"""Explain a row on the run page, in Debian's Chromium against the real stack (uvicorn,
the Celery worker ticking on Spark): the transitive closure of edges pushed from the
form. Explain on the output row path (0,3) shows its derivation over the fixed point's
iterations (a join at iteration 2 of the path (0,2) found at iteration 1 and the edge
(2,3)), down to the three edges and the push that brought them, by the user who pushed.
Explain on the change +(0,4) of tick 1 names the input change that caused it: edge
(3,4), push #2. Screenshots at 1440x900: tests/artifacts/explain-path.png,
explain-pushes.png, explain-change.png."""
import re

import pytest
from playwright.sync_api import expect

from tests.browser.chromium import new_context, shared_browser
from tests.browser.test_run_dashboard_browser import log_in, start_run_from_the_circuit_page
from tests.conftest import ARTIFACTS, example

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(live_stack):
    browser = shared_browser()
    context = new_context(browser, base_url=live_stack.base_url, viewport={"width": 1440, "height": 900})
    yield context.new_page()
    context.close()


def push_edges(page, edges):
    for src, dst in edges:
        page.get_by_test_id("push-field-edges-src").fill(str(src))
        page.get_by_test_id("push-field-edges-dst").fill(str(dst))
        page.get_by_test_id("push-stage-insert-edges").click()
    page.get_by_test_id("push-staged-edges").click()
    expect(page.get_by_test_id("push-result-edges")).to_contain_text(f"Accepted {len(edges)} change")


def cell(page, index, text):
    return page.locator(f"td:nth-child({index})", has_text=re.compile(f"^{text}$"))


def test_explain_a_path_of_the_transitive_closure_and_a_change(live_stack, page, make_user):
    from circuits import services

    user = make_user("explainer", "dash-pass-123")
    circuit = services.create_circuit(user, "Closure", "", "private", example("transitive_closure"))
    log_in(page, "explainer")
    run_id = start_run_from_the_circuit_page(page, circuit.pk)
    push_edges(page, [(0, 1), (1, 2), (2, 3)])
    expect(page.get_by_test_id("run-tick")).to_have_text("0")
    push_edges(page, [(3, 4)])
    expect(page.get_by_test_id("run-tick")).to_have_text("1")
    rows = page.get_by_test_id("view-table-closure").get_by_test_id("view-row")
    expect(rows).to_have_count(10)

    # why is (0,3) in the closure? a path over iterations, the edges, their push
    rows.filter(has=cell(page, 1, "0")).filter(has=cell(page, 2, "3")).get_by_test_id("explain-row").click()
    panel = page.get_by_test_id("explain-panel")
    expect(panel.get_by_test_id("explain-target")).to_have_text("closure {src: 0, dst: 3} at tick 1")
    contents = panel.get_by_test_id("explain-contents")
    joins = contents.locator("[data-testid=explain-step][data-kind=join]")
    expect(joins).to_have_count(2)
    expect(joins.nth(0)).to_have_attribute("data-iteration", "2")
    expect(joins.nth(0)).to_contain_text("{src: 0, mid: 2, dst: 3}")
    expect(joins.nth(1)).to_have_attribute("data-iteration", "1")
    expect(joins.nth(1)).to_contain_text("{src: 0, mid: 1, dst: 2}")
    expect(contents.get_by_text("⤷ pair on mid = 2")).to_be_visible()
    inputs = contents.locator("[data-testid=explain-step][data-kind=input]")
    expect(inputs).to_have_count(3)
    expect(inputs).to_contain_text(["{src: 0, dst: 1}", "{src: 1, dst: 2}", "{src: 2, dst: 3}"])
    expect(inputs.nth(0)).to_contain_text("push #1 · tick 0")
    expect(inputs.nth(0)).to_contain_text("explainer")
    pushes = panel.get_by_test_id("explain-push")
    expect(pushes).to_have_count(3)
    expect(pushes.nth(0)).to_contain_text("#1")
    expect(pushes.nth(0)).to_contain_text("explainer")
    page.screenshot(path=str(ARTIFACTS / "explain-path.png"))
    panel.get_by_test_id("explain-pushes").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "explain-pushes.png"))
    panel.get_by_role("button", name="Close").click()
    expect(panel).to_have_count(0)

    # why did (0,4) appear at tick 1? the edge (3,4) pushed then
    page.get_by_test_id("delta-feed-closure").get_by_test_id("delta-row").filter(
        has_text="tick 1  {src: 0, dst: 4}").get_by_test_id("explain-delta").click()
    change = panel.get_by_test_id("explain-change")
    expect(change.get_by_test_id("explain-cause")).to_have_count(1)
    expect(change.get_by_test_id("explain-cause")).to_have_text("edges {src: 3, dst: 4} 0 → 1 (push #2 by explainer)")
    expect(panel.get_by_test_id("explain-summary")).to_have_text("Weight 1 at tick 1 (was 0 before it).")
    page.screenshot(path=str(ARTIFACTS / "explain-change.png"))
