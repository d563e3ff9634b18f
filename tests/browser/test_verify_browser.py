"""The Verify button and the input tables on the run page, in Debian's Chromium against
the real stack (uvicorn, the Celery worker ticking on Spark, the verification worker).

The transactions run is verified (a check mark); then one stored output row is
tampered with in the database and Verify shows the missing row of the `total` view.
A delete of an absent row pushed from the form is refused naming the record and row.
Screenshots at 1440x900: tests/artifacts/verify-ok.png, verify-differs.png.

(About a minute: the run's ticks and two batch Spark recomputations.)"""
import time

import httpx
import pytest
from playwright.sync_api import expect

from runs.models import TickOutput
from tests.browser.chromium import TIMEOUT_S, new_context, shared_browser
from tests.browser.test_run_dashboard_browser import log_in, push_transaction, start_run_from_the_circuit_page
from tests.conftest import ARTIFACTS, example

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(live_stack, verify_worker):
    browser = shared_browser()
    context = new_context(browser, base_url=live_stack.base_url, viewport={"width": 1440, "height": 900})
    yield context.new_page()
    context.close()


def wait_applied(api, run_id, pushes, timeout=TIMEOUT_S):
    """Until the run's first `pushes` pushes are applied; returns the run's tick then."""
    deadline = time.monotonic() + timeout
    while True:
        log = api.get(f"/api/runs/{run_id}/pushes/").json()
        if len(log) >= pushes and all(p["applied_tick"] is not None for p in log[:pushes]):
            return api.get(f"/api/runs/{run_id}/").json()["current_tick"]
        assert time.monotonic() < deadline, f"run {run_id} did not apply {pushes} pushes: {log}"
        time.sleep(0.2)


@pytest.mark.timeout(600)  # two JVMs and two Spark recomputations; over 300 s seen on a loaded 2-core machine
def test_verify_shows_a_check_mark_then_the_differing_rows(live_stack, page, make_user):
    from rest_framework.authtoken.models import Token

    user = make_user("checker", "dash-pass-123")
    api = httpx.Client(base_url=live_stack.base_url, headers={"Authorization": f"Token {Token.objects.create(user=user).key}"}, timeout=30)
    circuit = api.post("/api/circuits/", json={"name": "Transactions", "visibility": "private", "document": example("transactions")}).json()
    log_in(page, "checker")
    run_id = start_run_from_the_circuit_page(page, circuit["id"])
    for n, (tid, src, dst, amount) in enumerate([(0, 1, 2, 50), (1, 2, 3, 30), (2, 3, 1, 20)], 1):
        push_transaction(page, tid, src, dst, amount)
        tick = wait_applied(api, run_id, n)
    expect(page.get_by_test_id("run-tick")).to_have_text(str(tick))
    expect(page.get_by_test_id("input-rows-count-transactions")).to_have_text("3 rows")

    # a delete of a row the input does not hold: refused, naming the record and the row
    page.get_by_test_id("push-field-transactions-id").fill("9")
    page.get_by_test_id("push-field-transactions-from_acct").fill("1")
    page.get_by_test_id("push-field-transactions-to_acct").fill("2")
    page.get_by_test_id("push-field-transactions-amount").fill("125")
    page.get_by_test_id("push-delete-transactions").click()
    expect(page.get_by_test_id("push-error-transactions")).to_contain_text(
        'record 0: transactions has no row {"id": 9, "from_acct": 1, "to_acct": 2, "amount": 125} to delete')
    assert page.get_by_test_id("push-error-transactions").inner_text().count("has no row") == 1  # said once

    page.get_by_test_id("verify-button").click()
    expect(page.get_by_test_id("verify-ok")).to_contain_text(f"✓ Tick {tick}: every output equals")
    page.get_by_test_id("verify-panel").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "verify-ok.png"))

    out = [t for t in TickOutput.objects.filter(run_id=run_id).order_by("tick") if t.deltas.get("total")][-1]
    out.deltas["total"] = [r for r in out.deltas["total"] if r["weight"] < 0]  # the stored new total is lost
    out.save()
    page.get_by_test_id("verify-button").click()
    expect(page.get_by_test_id("verify-differences")).to_contain_text("1 view differs from")
    missing = page.get_by_test_id("verify-missing-total")
    expect(missing).to_contain_text("total")
    expect(missing.locator("tbody tr")).to_have_count(1)
    expect(missing.locator("tbody td").first).to_have_text("0")
    page.get_by_test_id("verify-panel").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "verify-differs.png"))
    api.close()
