"""The node inspector on the run page, in Debian's Chromium against the real stack
(uvicorn, the Celery worker ticking on Spark, the verification queue's worker computing
inspections): click a node of the circuit graph, see its delta and its contents at two
ticks, page through a 253-row state and sort it on the server; click a node inside a
fixed point (transitive closure) and see its contents and iterations.

Expected rows are worked out by hand from the pushes. Screenshots at 1440x900:
tests/artifacts/node-inspector.png (sorted contents), node-inspector-delta.png (a
-/+ delta), node-inspector-fixedpoint.png."""
import time

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.chromium import TIMEOUT_S, new_context, next_frame, settled_box, settled_zoom, shared_browser
from tests.browser.test_run_dashboard_browser import log_in
from tests.browser.test_verify_browser import wait_applied
from tests.conftest import ARTIFACTS, example

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

TRANSACTIONS = [(0, 1, 2, 50), (1, 2, 3, 30), (2, 3, 1, 20)]  # one tick each: ticks 0, 1, 2
BULK = [(i, 9, 8, 1000 + i) for i in range(3, 253)]  # tick 3: 250 more rows (accounts 8 and 9 never meet in the join)


@pytest.fixture
def page(live_stack, verify_worker):
    browser = shared_browser()
    context = new_context(browser, base_url=live_stack.base_url, viewport={"width": 1440, "height": 900})
    yield context.new_page()
    context.close()


def insert(rows, *columns):
    return [{"insert": dict(zip(columns, row))} for row in rows]


def table_cells(page):
    """The data rows of the inspector's table (in sight), as tuples of cell texts."""
    return [tuple(row.locator("td").all_inner_texts()) for row in page.get_by_test_id("inspector-table").locator("tbody tr[data-index]").all()]


def wait_rows(page, expected, timeout=TIMEOUT_S, first=None):
    """Until the rows in sight (or the first `first` of them) are `expected`."""
    deadline = time.monotonic() + timeout
    while (cells := table_cells(page)[:first]) != expected:
        assert time.monotonic() < deadline, f"inspector rows {cells} != {expected}"
        time.sleep(0.2)


def shoot(page, name):
    page.get_by_test_id("node-inspector").evaluate("el => el.scrollIntoView({block: 'center'})")
    page.screenshot(path=str(ARTIFACTS / name))


def inspect_at(page, node, tick, kind):
    # the graph refits when the inspector opens beside it: click once the node stopped
    # moving, or a busy machine's click lands where it was (on another node)
    # and when the graph refit after all (the inspector's answer arrived in between), the
    # click selected the node that was there: click again, as a person would
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        settled_box(page.get_by_test_id(f"graph-node-{node}"))
        page.get_by_test_id(f"graph-node-{node}").click()
        next_frame(page)
        selected = page.get_by_test_id("inspector-node").inner_text()
        if selected == node:
            break
        assert time.monotonic() < deadline, f"clicking graph node {node!r} selects {selected!r}"
    if tick is not None:
        page.get_by_test_id("inspector-tick").fill(str(tick))
    page.get_by_test_id(f"inspector-kind-{kind}").click()
    table = page.get_by_test_id("inspector-table")
    expect(table).to_have_attribute("data-kind", kind)
    if tick is not None:
        expect(table).to_have_attribute("data-tick", str(tick))


@pytest.mark.timeout(600)  # two JVMs and a run's Spark ticks on a loaded 2-core machine
def test_inspect_nodes_at_two_ticks_page_sort_and_inside_a_fixed_point(live_stack, page, make_user):
    from rest_framework.authtoken.models import Token

    user = make_user("inspector", "dash-pass-123")
    api = httpx.Client(base_url=live_stack.base_url, headers={"Authorization": f"Token {Token.objects.create(user=user).key}"}, timeout=30)
    circuit = api.post("/api/circuits/", json={"name": "Transactions", "visibility": "private", "document": example("transactions")}).json()
    run_id = api.post(f"/api/circuits/{circuit['id']}/runs/").json()["id"]
    push = f"/api/runs/{run_id}/inputs/transactions/push/"
    columns = ("id", "from_acct", "to_acct", "amount")
    for n, tx in enumerate(TRANSACTIONS, 1):
        assert api.post(push, json=insert([tx], *columns)).status_code == 202
        wait_applied(api, run_id, n)
    assert api.post(push, json=insert(BULK, *columns)).status_code == 202
    assert wait_applied(api, run_id, 4) == 3

    log_in(page, "inspector")
    page.goto(f"/#/runs/{run_id}")
    expect(page.get_by_test_id("run-tick")).to_have_text("3")
    page.get_by_test_id("graph-section").scroll_into_view_if_needed()

    # the join of credits and debits per account: its delta at tick 2, its contents at ticks 2 and 1
    inspect_at(page, "by_account", 2, "delta")
    wait_rows(page, [("1", "20", "1", "50", "+1"), ("3", "30", "3", "20", "+1")])
    expect(page.get_by_test_id("inspector-sizes")).to_contain_text("+2 −0 (2 rows)")
    page.get_by_test_id("inspector-kind-integral").click()
    wait_rows(page, [("1", "20", "1", "50", "+1"), ("2", "50", "2", "30", "+1"), ("3", "30", "3", "20", "+1")])
    page.get_by_test_id("inspector-tick").fill("1")
    expect(page.get_by_test_id("inspector-table")).to_have_attribute("data-tick", "1")
    wait_rows(page, [("2", "50", "2", "30", "+1")])
    page.get_by_test_id("inspector-tick").fill("3")
    page.get_by_test_id("inspector-kind-delta").click()
    expect(page.get_by_test_id("inspector-empty")).to_have_text("No change at this tick.")

    # the total of balances at tick 2: its old value deleted, the new one inserted
    inspect_at(page, "sum_of_balances", 2, "delta")
    wait_rows(page, [("0", "+1"), ("20", "-1")])
    expect(page.get_by_test_id("inspector-table").locator("tr.row-minus")).to_have_count(1)
    shoot(page, "node-inspector-delta.png")

    # the input's 253 rows: paged from the server as the table scrolls, sorted there
    inspect_at(page, "transactions", None, "integral")
    expect(page.get_by_test_id("inspector-count")).to_contain_text("Contents of transactions at tick 3: 253 of 253 rows")
    expect(page.get_by_test_id("inspector-contents-rows")).to_have_text("253 rows")
    assert table_cells(page)[0] == ("0", "1", "2", "50", "+1")
    page.get_by_test_id("inspector-sort-amount").click()
    page.get_by_test_id("inspector-sort-amount").click()  # descending
    expect(page.get_by_test_id("inspector-sort-amount")).to_have_text("amount ▼")
    wait_rows(page, [(str(i), "9", "8", str(1000 + i), "+1") for i in range(252, 247, -1)], first=5)
    shoot(page, "node-inspector.png")
    page.get_by_test_id("inspector-scroll").evaluate("el => { el.scrollTop = el.scrollHeight; }")
    expect(page.get_by_test_id("inspector-table").locator("tbody tr[data-index='252']")).to_contain_text("20")
    last = table_cells(page)[-3:]
    assert last == [("0", "1", "2", "50", "+1"), ("1", "2", "3", "30", "+1"), ("2", "3", "1", "20", "+1")]
    page.get_by_test_id("inspector-search").fill("1251")
    wait_rows(page, [("251", "9", "8", "1251", "+1")])

    # a node inside a fixed point: the closure's paths
    closure = api.post("/api/circuits/", json={"name": "Closure", "visibility": "private", "document": example("transitive_closure")}).json()
    closure_run = api.post(f"/api/circuits/{closure['id']}/runs/").json()["id"]
    edges = insert([(0, 1), (1, 2), (2, 3)], "src", "dst")
    assert api.post(f"/api/runs/{closure_run}/inputs/edges/push/", json=edges).status_code == 202
    wait_applied(api, closure_run, 1)
    page.goto(f"/#/runs/{closure_run}")
    expect(page.get_by_test_id("run-tick")).to_have_text("0")
    page.get_by_test_id("graph-section").scroll_into_view_if_needed()
    inspect_at(page, "paths", 0, "integral")
    wait_rows(page, [("0", "1", "+1"), ("0", "2", "+1"), ("0", "3", "+1"), ("1", "2", "+1"), ("1", "3", "+1"), ("2", "3", "+1")])
    expect(page.get_by_test_id("inspector-iterations")).to_contain_text("3 → 5 → 6")
    expect(page.get_by_test_id("graph-node-paths")).to_have_class("run-node run-node-distinct inspected")
    page.locator(".react-flow__controls-fitview").click()  # the graph narrowed beside the inspector: fit it again
    for _ in range(3):
        page.locator(".react-flow__controls-zoomin").click()
    settled_zoom(page.get_by_test_id("graph-section").locator(".react-flow__viewport"))  # the zoom's transition is over
    shoot(page, "node-inspector-fixedpoint.png")
    api.close()
