"""The run dashboard as a user sees it, in Debian's Chromium (Playwright, no downloaded
browser), against the real stack (uvicorn + Celery worker + Spark, live_stack).

The transactions example of DBSP.md is created over the REST API; the user starts a run,
pushes from the form and from a CSV file (a preview that shows a bad row first), and
watches the delta feeds, tables, graph badges and chart follow the oracle (total 0, 20,
0); the tick slider shows an earlier tick; the generator streams rows; going offline and
back catches up without gaps or duplicates; pause holds ticks back and resume catches up.
"""
import json
import time

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.chromium import TIMEOUT_S, new_context, shared_browser, until
from tests.conftest import ARTIFACTS, caught_up, example

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]



@pytest.fixture
def browser_context(live_stack):
    browser = shared_browser()
    context = new_context(browser, base_url=live_stack.base_url, viewport={"width": 1400, "height": 1000})
    yield context
    context.close()


@pytest.fixture
def owner(live_stack, make_user):
    """A user, their REST client (DRF token) and the transactions circuit created over REST."""
    from rest_framework.authtoken.models import Token

    def make(username):
        user = make_user(username, "dash-pass-123")
        token = Token.objects.create(user=user)
        client = httpx.Client(base_url=live_stack.base_url, headers={"Authorization": f"Token {token.key}"}, timeout=30)
        created = client.post("/api/circuits/", json={
            "name": "Transactions", "description": "credits, debits, balance, total", "visibility": "private",
            "document": example("transactions"),
        })
        assert created.status_code == 201, created.text
        client.circuit_id = created.json()["id"]
        return client

    clients = []
    yield lambda username: clients.append(make(username)) or clients[-1]
    for c in clients:
        c.close()


def log_in(page, username):
    page.goto("/")
    page.get_by_test_id("login-username").fill(username)
    page.get_by_test_id("login-password").fill("dash-pass-123")
    page.get_by_test_id("login-submit").click()
    expect(page.get_by_test_id("current-user")).to_have_text(username)


def start_run_from_the_circuit_page(page, circuit_id):
    page.goto(f"/#/circuits/{circuit_id}")
    page.get_by_test_id("start-run").click()
    expect(page.get_by_test_id("run-status")).to_have_text("running")
    expect(page.get_by_test_id("ws-state")).to_have_text("live")
    return int(page.url.rsplit("/", 1)[-1])


def push_transaction(page, tx_id, from_acct, to_acct, amount):
    page.get_by_test_id("push-field-transactions-id").fill(str(tx_id))
    page.get_by_test_id("push-field-transactions-from_acct").fill(str(from_acct))
    page.get_by_test_id("push-field-transactions-to_acct").fill(str(to_acct))
    page.get_by_test_id("push-field-transactions-amount").fill(str(amount))
    page.get_by_test_id("push-insert-transactions").click()
    expect(page.get_by_test_id("push-result-transactions")).to_contain_text("Accepted")


def table_rows(page, view):
    """The rows of a view's integrated table as sorted tuples of cell texts (the values,
    not the row's Explain button)."""
    rows = page.get_by_test_id(f"view-table-{view}").get_by_test_id("view-row")
    return sorted(tuple(cell.strip() for cell in row.locator("td:not(.row-action)").all_inner_texts()) for row in rows.all())


def chart_points(page):
    return {
        int(li.get_attribute("data-tick")): json.loads(li.get_attribute("data-values"))
        for li in page.get_by_test_id("chart-points").locator("li").all()
    }


def feed(page, view):
    rows = page.get_by_test_id(f"delta-feed-{view}").get_by_test_id("delta-row")
    return [(int(r.get_attribute("data-tick")), int(r.get_attribute("data-weight")), r.inner_text()) for r in rows.all()]


def test_transactions_dashboard_form_csv_badges_chart_slider_generator(browser_context, owner, tmp_path):
    client = owner("dash")
    page = browser_context.new_page()
    log_in(page, "dash")
    run_id = start_run_from_the_circuit_page(page, client.circuit_id)

    # The breadcrumb names the circuit; the graph shows every node of the document.
    expect(page.get_by_test_id("breadcrumb-circuit")).to_have_text("Transactions")
    for node in ("transactions", "credits_by_account", "by_account", "sum_of_balances", "total"):
        expect(page.get_by_test_id(f"graph-node-{node}")).to_be_visible()

    # Two transactions from the form, one tick each.
    push_transaction(page, 0, 1, 2, 50)
    expect(page.get_by_test_id("run-tick")).to_have_text("0")
    push_transaction(page, 1, 2, 3, 30)
    expect(page.get_by_test_id("run-tick")).to_have_text("1")
    expect(page.get_by_test_id("view-table-total").get_by_test_id("view-row")).to_contain_text("20")
    # Frontier badges follow the ticks; the input node read one row in the last tick.
    badge = page.get_by_test_id("node-badge-transactions")
    expect(badge).to_have_attribute("data-frontier-tick", "1")
    expect(badge).to_have_attribute("data-rows-in", "1")
    expect(page.get_by_test_id("node-badge-total")).to_contain_text("tick 1")

    # CSV: a preview first. A bad amount is marked on its row and nothing can be sent.
    page.get_by_test_id("push-tab-csv-transactions").click()
    bad = tmp_path / "bad.csv"
    bad.write_text("id,from_acct,to_acct,amount\n2,3,1,20\n3,1,2,lots\n")
    page.get_by_test_id("csv-file-transactions").set_input_files(str(bad))
    expect(page.get_by_test_id("csv-summary-transactions")).to_contain_text("2 rows, 1 with errors")
    bad_row = page.locator("[data-testid=csv-row][data-error=true]")
    expect(bad_row).to_have_count(1)
    expect(bad_row).to_have_attribute("data-line", "3")
    expect(bad_row.get_by_test_id("csv-row-errors")).to_contain_text("amount must be a whole number")
    expect(page.get_by_test_id("csv-upload-submit-transactions")).to_be_disabled()
    page.screenshot(path=str(ARTIFACTS / "dashboard-csv-preview-bad-row.png"), full_page=True)

    good = tmp_path / "good.csv"
    good.write_text("id,from_acct,to_acct,amount\n2,3,1,20\n")
    page.get_by_test_id("csv-file-transactions").set_input_files(str(good))
    expect(page.get_by_test_id("csv-summary-transactions")).to_contain_text("1 row, all valid")
    page.get_by_test_id("csv-upload-submit-transactions").click()
    expect(page.get_by_test_id("csv-result-transactions")).to_contain_text("Accepted 1 row")
    expect(page.get_by_test_id("run-tick")).to_have_text("2")

    # The oracle: final balances and total 0, 20, 0 on the chart.
    expect(page.get_by_test_id("view-table-balance").get_by_test_id("view-row")).to_have_count(3)
    assert table_rows(page, "balance") == [("1", "-30"), ("2", "20"), ("3", "10")]
    expect(page.get_by_test_id("chart-last")).to_contain_text("total.total = 0")
    assert {t: v["total.total"] for t, v in chart_points(page).items()} == {0: 0, 1: 20, 2: 0}
    # The delta feed of total: + green / - red, with tick numbers, newest first.
    total_feed = feed(page, "total")
    assert [t for t, _, _ in total_feed] == sorted((t for t, _, _ in total_feed), reverse=True)
    assert (2, -1) in [(t, w) for t, w, _ in total_feed] and (1, 1) in [(t, w) for t, w, _ in total_feed]
    expect(page.get_by_test_id("delta-feed-total").locator("li.minus").first).to_be_visible()
    expect(page.get_by_test_id("node-badge-transactions")).to_have_attribute("data-frontier-tick", "2")
    page.screenshot(path=str(ARTIFACTS / "dashboard-transactions-oracle.png"), full_page=True)
    # Status, tick and lag stay in sight at the bottom of the page.
    page.get_by_test_id("delta-feed-total").scroll_into_view_if_needed()
    for fact in ("run-status", "run-tick", "run-lag", "ws-state"):
        expect(page.get_by_test_id(fact)).to_be_in_viewport()
    page.screenshot(path=str(ARTIFACTS / "dashboard-scrolled.png"))

    # The tick slider shows the outputs as they were after tick 1.
    page.get_by_test_id("tick-slider-number").fill("1")
    expect(page.get_by_test_id("past-outputs")).to_have_attribute("data-tick", "1")
    expect(page.get_by_test_id("past-table-total").get_by_test_id("view-row")).to_contain_text("20")
    # After tick 1 only account 2 has both credits and debits: balance {(2, 20)}.
    expect(page.get_by_test_id("past-table-balance").get_by_test_id("view-row")).to_have_count(1)
    expect(page.get_by_test_id("past-table-balance").get_by_test_id("view-row")).to_have_text("220")
    page.screenshot(path=str(ARTIFACTS / "dashboard-tick-slider.png"), full_page=True)

    # After a reload the feed is prefilled from the stored deltas and the chart from history.
    before = feed(page, "total")
    page.reload()
    expect(page.get_by_test_id("run-tick")).to_have_text("2")
    expect(page.get_by_test_id("delta-feed-total").get_by_test_id("delta-row")).to_have_count(len(before))
    assert [(t, w) for t, w, _ in feed(page, "total")] == [(t, w) for t, w, _ in before]
    expect(page.get_by_test_id("chart-points").locator("li")).to_have_count(3)
    assert {t: v["total.total"] for t, v in chart_points(page).items()} == {0: 0, 1: 20, 2: 0}
    expect(page.get_by_test_id("node-badge-transactions")).to_have_attribute("data-frontier-tick", "2")

    # The generator streams schema-shaped random rows until stopped.
    page.get_by_test_id("push-tab-generator-transactions").click()
    page.get_by_test_id("generator-rate-transactions").fill("20")
    page.get_by_test_id("generator-start-transactions").click()
    expect(page.get_by_test_id("generator-status-transactions")).to_contain_text("Streaming")
    page.wait_for_function(
        "() => Number(document.querySelector('[data-testid=generator-status-transactions]')?.dataset.rows) >= 20")
    page.get_by_test_id("generator-stop-transactions").click()
    expect(page.get_by_test_id("generator-status-transactions")).to_contain_text("Stopped")
    sent = int(page.get_by_test_id("generator-status-transactions").get_attribute("data-rows"))
    # Every generated row reaches the worker: the lag drains and the tables match the server's.
    expect(page.get_by_test_id("run-lag")).to_have_text("0 pushes")
    pushed = client.get(f"/api/runs/{run_id}/pushes/").json()
    assert sum(p["row_count"] for p in pushed) == 3 + sent
    server_tick = client.get(f"/api/runs/{run_id}/").json()["current_tick"]
    expect(page.get_by_test_id("run-tick")).to_have_text(str(server_tick))
    assert_tables_match_server(page, client, run_id)
    page.screenshot(path=str(ARTIFACTS / "dashboard-after-generator.png"), full_page=True)

    # A larger CSV: 300 transactions to new accounts make `credits` a long view, shown
    # paged (100 a page), virtualised (fewer rows in the DOM than on the page), sortable.
    credits = len(client.get(f"/api/runs/{run_id}/outputs/").json()["views"]["credits"])
    page.get_by_test_id("push-tab-csv-transactions").click()
    big = tmp_path / "big.csv"
    big.write_text("id,from_acct,to_acct,amount\n" + "".join(f"{10_000 + i},{1_000 + i},{2_000 + i},{i + 1}\n" for i in range(300)))
    page.get_by_test_id("csv-file-transactions").set_input_files(str(big))
    expect(page.get_by_test_id("csv-summary-transactions")).to_contain_text("300 rows, all valid")
    page.get_by_test_id("csv-upload-submit-transactions").click()
    expect(page.get_by_test_id("csv-result-transactions")).to_contain_text("Accepted 300 rows")
    expect(page.get_by_test_id("view-table-credits")).to_have_attribute("data-rows", str(credits + 300))
    expect(page.get_by_test_id("page-label-credits")).to_have_text(f"1–100 of {credits + 300}")
    in_dom = page.get_by_test_id("view-table-credits").get_by_test_id("view-row").count()
    assert 10 < in_dom < 100, in_dom
    first_row = page.get_by_test_id("view-table-credits").get_by_test_id("view-row").first.locator("td:not(.row-action)")
    page.get_by_test_id("sort-credits-credits").click()  # ascending: account 2000 got the smallest credit, 1
    expect(first_row).to_have_text(["2000", "1"])
    page.get_by_test_id("sort-credits-to_acct").click()
    page.get_by_test_id("sort-credits-to_acct").click()  # descending by account: 2299 first
    expect(first_row).to_have_text(["2299", "300"])
    page.get_by_test_id("page-next-credits").click()
    expect(page.get_by_test_id("page-label-credits")).to_have_text(f"101–200 of {credits + 300}")
    page.screenshot(path=str(ARTIFACTS / "dashboard-large-view.png"), full_page=True)


def assert_tables_match_server(page, client, run_id):
    outputs = client.get(f"/api/runs/{run_id}/outputs/").json()["views"]
    for view in ("balance", "total", "credits"):
        rows = outputs[view]
        expect(page.get_by_test_id(f"view-table-{view}")).to_have_attribute("data-rows", str(len(rows)))
        if len(rows) <= 60:  # not virtualised: every row is in the DOM
            columns = list(rows[0]["data"]) if rows else []
            expected = sorted(tuple("null" if r["data"][c] is None else str(r["data"][c]) for c in columns) for r in rows)
            assert table_rows(page, view) == expected, view


def test_reconnect_after_going_offline_catches_up_without_gaps(browser_context, owner):
    client = owner("dash_offline")
    page = browser_context.new_page()
    log_in(page, "dash_offline")
    run_id = start_run_from_the_circuit_page(page, client.circuit_id)
    push_transaction(page, 0, 1, 2, 50)
    expect(page.get_by_test_id("run-tick")).to_have_text("0")

    browser_context.set_offline(True)
    expect(page.get_by_test_id("ws-state")).not_to_have_text("live")
    # While the page is offline, two more ticks happen (pushed by a script over REST).
    push = f"/api/runs/{run_id}/inputs/transactions/push/"
    assert client.post(push, json=[{"insert": {"id": 1, "from_acct": 2, "to_acct": 3, "amount": 30}}]).status_code == 202
    wait_for_tick(client, run_id, 1)
    assert client.post(push, json=[{"insert": {"id": 2, "from_acct": 3, "to_acct": 1, "amount": 20}}]).status_code == 202
    wait_for_tick(client, run_id, 2)
    expect(page.get_by_test_id("run-tick")).to_have_text("0")
    page.screenshot(path=str(ARTIFACTS / "dashboard-offline.png"), full_page=True)

    browser_context.set_offline(False)
    expect(page.get_by_test_id("ws-state")).to_have_text("live")
    expect(page.get_by_test_id("run-tick")).to_have_text("2")
    # Every tick's deltas arrived exactly once: the feeds hold each stored delta row once,
    # and the integrated tables equal the server's.
    stored = client.get(f"/api/runs/{run_id}/deltas/?since=-1").json()["ticks"]
    for view in ("credits", "balance", "total"):
        expected = sorted((t["tick"], r["weight"]) for t in stored for r in t["views"].get(view, []))
        expect(page.get_by_test_id(f"delta-feed-{view}").get_by_test_id("delta-row")).to_have_count(len(expected))
        assert sorted((t, w) for t, w, _ in feed(page, view)) == expected, view
    assert table_rows(page, "balance") == [("1", "-30"), ("2", "20"), ("3", "10")]
    assert {t: v["total.total"] for t, v in chart_points(page).items()} == {0: 0, 1: 20, 2: 0}
    page.screenshot(path=str(ARTIFACTS / "dashboard-back-online.png"), full_page=True)


def wait_for_tick(client, run_id, tick, timeout=TIMEOUT_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.get(f"/api/runs/{run_id}/").json()["current_tick"] >= tick:
            return
        time.sleep(0.2)
    pytest.fail(f"run {run_id} did not reach tick {tick}")


def test_pause_holds_ticks_and_resume_catches_up(browser_context, owner, live_stack):
    client = owner("dash_pause")
    page = browser_context.new_page()
    log_in(page, "dash_pause")
    run_id = start_run_from_the_circuit_page(page, client.circuit_id)
    push_transaction(page, 0, 1, 2, 50)
    expect(page.get_by_test_id("run-tick")).to_have_text("0")

    page.get_by_test_id("pause-run").click()
    expect(page.get_by_test_id("run-status")).to_have_text("paused")
    expect(page.get_by_test_id("resume-run")).to_be_enabled()

    # Paused: pushes are accepted (and counted as lag) but no tick happens.
    push_transaction(page, 1, 2, 3, 30)
    expect(page.get_by_test_id("run-lag")).to_have_text("1 push")
    # A push from somewhere else (a script over REST) reaches the page as a `lag`
    # message: the page learns of it without polling. (It inserts and deletes the same
    # row, so the outputs below are unchanged.)
    row = {"id": 99, "from_acct": 9, "to_acct": 8, "amount": 1}
    assert client.post(f"/api/runs/{run_id}/inputs/transactions/push/", json=[{"insert": row}, {"delete": row}]).status_code == 202
    expect(page.get_by_test_id("run-lag")).to_have_text("2 pushes")
    caught_up(run_id, live_stack.logs, "the pushes' wake-ups")  # a worker that ignored the pause has applied them now
    expect(page.get_by_test_id("run-tick")).to_have_text("0")
    assert client.get(f"/api/runs/{run_id}/").json()["current_tick"] == 0
    page.screenshot(path=str(ARTIFACTS / "dashboard-paused.png"), full_page=True)

    page.get_by_test_id("resume-run").click()
    expect(page.get_by_test_id("run-status")).to_have_text("running")
    expect(page.get_by_test_id("run-tick")).to_have_text("1")
    expect(page.get_by_test_id("run-lag")).to_have_text("0 pushes")
    expect(page.get_by_test_id("view-table-total").get_by_test_id("view-row")).to_contain_text("20")


def test_fixed_point_badges_show_inner_iterations(browser_context, owner):
    """Transitive closure (a fixed point): the graph draws the subcircuit inside the fixed
    point, whose badge shows the inner iteration it settled at and that it converged."""
    client = owner("dash_closure")
    created = client.post("/api/circuits/", json={"name": "Closure", "document": example("transitive_closure")})
    assert created.status_code == 201, created.text
    page = browser_context.new_page()
    log_in(page, "dash_closure")
    start_run_from_the_circuit_page(page, created.json()["id"])
    expect(page.get_by_test_id("breadcrumb-circuit")).to_have_text("Closure")
    for node in ("edges", "tc", "edges_in", "extend", "paths", "closure_out", "closure"):
        expect(page.get_by_test_id(f"graph-node-{node}")).to_be_visible()

    # Three edges staged as one batch: one push, one tick.
    for src, dst in ((0, 1), (1, 2), (2, 3)):
        page.get_by_test_id("push-field-edges-src").fill(str(src))
        page.get_by_test_id("push-field-edges-dst").fill(str(dst))
        page.get_by_test_id("push-stage-insert-edges").click()
    expect(page.get_by_test_id("staged-edges").get_by_test_id("staged-row")).to_have_count(3)
    page.get_by_test_id("push-staged-edges").click()
    expect(page.get_by_test_id("push-result-edges")).to_contain_text("Accepted 3 changes")
    expect(page.get_by_test_id("run-tick")).to_have_text("0")
    expect(page.get_by_test_id("view-table-closure").get_by_test_id("view-row")).to_have_count(6)

    tc = page.get_by_test_id("node-badge-tc")
    expect(tc).to_have_attribute("data-frontier-tick", "0")
    expect(tc).to_have_attribute("data-converged", "true")
    assert int(tc.get_attribute("data-iteration")) >= 2
    expect(tc).to_contain_text("✓")
    expect(page.get_by_test_id("node-badge-paths")).to_have_attribute("data-converged", "true")

    # Deleting edge (1,2) retracts exactly the paths through it: -{02, 03, 12, 13}.
    page.get_by_test_id("push-field-edges-src").fill("1")
    page.get_by_test_id("push-field-edges-dst").fill("2")
    page.get_by_test_id("push-delete-edges").click()
    expect(page.get_by_test_id("run-tick")).to_have_text("1")
    expect(page.get_by_test_id("view-table-closure").get_by_test_id("view-row")).to_have_count(2)
    tick1 = [(w, text) for t, w, text in feed(page, "closure") if t == 1]
    assert sorted(w for w, _ in tick1) == [-1, -1, -1, -1]
    expect(tc).to_have_attribute("data-frontier-tick", "1")
    expect(tc).to_have_attribute("data-converged", "true")
    page.screenshot(path=str(ARTIFACTS / "dashboard-fixed-point.png"), full_page=True)


@pytest.fixture
def small_backlog_stack(live_stack, django_db_blocker, tmp_path_factory):
    """A web server of its own that accepts at most 3 waiting pushes per run, in front of
    the session's worker (live_stack's queue and channel-layer prefix): the limit is the
    web server's (runs/lag.py answers the push), so no second worker and Spark is started."""
    from django.conf import settings

    from tests.live.stack import Stack

    shared = {"CELERY_QUEUE": settings.CELERY_TASK_DEFAULT_QUEUE,
              "CHANNELS_PREFIX": settings.CHANNEL_LAYERS["default"]["CONFIG"]["prefix"]}
    stack = Stack(tmp_path_factory.mktemp("backpressure-logs"), "dash429", {"DBSPWEB_MAX_PENDING_PUSHES": "3", **shared})
    try:
        with django_db_blocker.unblock():
            stack.start_web()
        yield stack
    finally:
        stack.close()


def test_generator_waits_out_backpressure_and_loses_nothing(small_backlog_stack, make_user):
    """Paused, the run accepts 3 pushes and then answers 429 with Retry-After: the
    generator shows it is waiting and retries the same batch; after resume every
    generated row is applied exactly once."""
    from rest_framework.authtoken.models import Token

    user = make_user("dash429", "dash-pass-123")
    client = httpx.Client(base_url=small_backlog_stack.base_url, timeout=30,
                          headers={"Authorization": f"Token {Token.objects.create(user=user).key}"})
    circuit = client.post("/api/circuits/", json={"name": "Transactions", "document": example("transactions")}).json()
    browser = shared_browser()
    context = new_context(browser, base_url=small_backlog_stack.base_url, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    in_flight = set()  # the pushes the page sent that have not been answered yet
    is_push = lambda r: r.method == "POST" and "/push/" in r.url  # noqa: E731
    page.on("request", lambda r: in_flight.add(r) if is_push(r) else None)
    page.on("requestfinished", lambda r: in_flight.discard(r))
    page.on("requestfailed", lambda r: in_flight.discard(r))
    log_in(page, "dash429")
    run_id = start_run_from_the_circuit_page(page, circuit["id"])
    page.get_by_test_id("pause-run").click()
    expect(page.get_by_test_id("run-status")).to_have_text("paused")

    page.get_by_test_id("push-tab-generator-transactions").click()
    page.get_by_test_id("generator-rate-transactions").fill("8")
    page.get_by_test_id("generator-start-transactions").click()
    status = page.get_by_test_id("generator-status-transactions")
    expect(status).to_contain_text("server busy (429), retrying in")
    expect(page.get_by_test_id("run-lag")).to_have_text("3 pushes")
    page.screenshot(path=str(ARTIFACTS / "dashboard-backpressure.png"), full_page=True)
    assert client.get(f"/api/runs/{run_id}/").json()["current_tick"] == -1

    page.get_by_test_id("resume-run").click()
    expect(page.get_by_test_id("run-status")).to_have_text("running")
    # The held batch goes through once the backlog drains, then streaming goes on.
    expect(status).to_contain_text("slowed by backpressure")
    page.get_by_test_id("generator-stop-transactions").click()
    expect(status).to_contain_text("Stopped")
    until(page, lambda: not in_flight, "the pushes in flight to be answered")  # one in flight when Stop was pressed still lands (and is counted)
    expect(page.get_by_test_id("run-lag")).to_have_text("0 pushes")
    pushes = client.get(f"/api/runs/{run_id}/pushes/").json()
    # Every row the page counts as accepted is in the input log, and nothing more.
    expect(status).to_have_attribute("data-rows", str(sum(p["row_count"] for p in pushes)))
    assert [p["sequence"] for p in pushes] == list(range(1, len(pushes) + 1))
    context.close()
    client.close()
