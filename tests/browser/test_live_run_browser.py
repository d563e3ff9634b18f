"""A person in Debian's Chromium (driven by Playwright, no downloaded browser): logs in,
opens a circuit, starts a run, pushes rows from the form and sees the deltas arrive."""

import pytest
from playwright.sync_api import expect

from circuits import services
from tests.browser.chromium import new_context, shared_browser
from tests.conftest import ARTIFACTS, example

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]



@pytest.fixture
def page(live_stack):
    browser = shared_browser()
    context = new_context(browser, base_url=live_stack.base_url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    yield page
    context.close()


def log_in(page, username, password):
    page.goto("/")
    page.get_by_test_id("login-username").fill(username)
    page.get_by_test_id("login-password").fill(password)
    page.get_by_test_id("login-submit").click()


def test_login_start_push_and_see_the_delta(page, make_user):
    demo = make_user("demo", "demo-pass-123")
    services.create_circuit(demo, "Big orders", "filter demo", "private", example("big_orders"))

    log_in(page, "demo", "wrong")
    expect(page.get_by_test_id("login-error")).to_contain_text("Invalid username or password")
    page.get_by_test_id("login-password").fill("demo-pass-123")
    page.get_by_test_id("login-submit").click()
    expect(page.get_by_test_id("current-user")).to_have_text("demo")

    page.get_by_test_id("circuit-item").get_by_role("link", name="Big orders").click()
    expect(page.get_by_test_id("circuit-name")).to_have_text("Big orders")
    expect(page.get_by_test_id("circuit-node")).to_have_count(3)
    page.get_by_test_id("start-run").click()
    expect(page.get_by_test_id("run-status")).to_have_text("running")
    expect(page.get_by_test_id("ws-state")).to_have_text("live")

    page.get_by_test_id("push-field-orders-id").fill("1")
    page.get_by_test_id("push-field-orders-customer").fill("ada")
    page.get_by_test_id("push-field-orders-amount").fill("250")
    page.get_by_test_id("push-insert-orders").click()

    arrived = page.get_by_test_id("delta-feed-big_orders").get_by_test_id("delta-row")
    expect(arrived).to_have_count(1)
    expect(arrived.first).to_have_attribute("data-tick", "0")
    expect(arrived.first).to_have_attribute("data-weight", "1")
    expect(arrived.first).to_contain_text("ada")
    expect(page.get_by_test_id("view-table-big_orders").get_by_test_id("view-row")).to_have_count(1)
    expect(page.get_by_test_id("run-tick")).to_have_text("0")
    page.screenshot(path=str(ARTIFACTS / "run-dashboard-insert.png"), full_page=True)

    # A row that fails the filter produces no output; deleting the big one retracts it.
    page.get_by_test_id("push-field-orders-id").fill("2")
    page.get_by_test_id("push-field-orders-amount").fill("5")
    page.get_by_test_id("push-insert-orders").click()
    expect(page.get_by_test_id("run-tick")).to_have_text("1")
    page.get_by_test_id("push-field-orders-id").fill("1")
    page.get_by_test_id("push-field-orders-amount").fill("250")
    page.get_by_test_id("push-delete-orders").click()
    expect(arrived).to_have_count(2)
    expect(arrived.first).to_have_attribute("data-weight", "-1")
    expect(arrived.first).to_have_attribute("data-tick", "2")
    expect(page.get_by_test_id("view-table-big_orders").get_by_test_id("view-row")).to_have_count(0)

    # Reloading the page rebuilds the view from the snapshot: still empty, tick 2.
    page.reload()
    expect(page.get_by_test_id("run-tick")).to_have_text("2")
    expect(page.get_by_test_id("view-table-big_orders").get_by_test_id("view-row")).to_have_count(0)
    page.screenshot(path=str(ARTIFACTS / "run-dashboard-after-delete.png"), full_page=True)


def start_a_run(page, make_user, username, name, example_name):
    """A new user with one circuit logs in, opens it and starts a run."""
    user = make_user(username, "demo-pass-123")
    services.create_circuit(user, name, "", "private", example(example_name))
    log_in(page, username, "demo-pass-123")
    page.get_by_test_id("circuit-item").first.get_by_role("link").click()
    page.get_by_test_id("start-run").click()
    expect(page.get_by_test_id("run-status")).to_have_text("running")


def test_bad_value_in_the_push_form_shows_the_error(page, make_user):
    start_a_run(page, make_user, "demo2", "Big orders", "big_orders")
    # id is NOT NULL in the schema: leaving it empty is caught before sending, under the field.
    page.get_by_test_id("push-field-orders-amount").fill("300")
    page.get_by_test_id("push-insert-orders").click()
    expect(page.get_by_test_id("push-field-error-orders-id")).to_have_text("id must not be empty (the column is not nullable)")
    expect(page.get_by_test_id("delta-feed-big_orders").get_by_test_id("delta-row")).to_have_count(0)


def test_push_a_list_from_the_form_and_see_it_exploded(page, make_user):
    """The order_tags demo: a list typed as JSON text in the push form; a bad element is
    caught in the form (named by its index); the exploded tags are counted live."""
    start_a_run(page, make_user, "demo3", "Order tags", "order_tags")

    page.get_by_test_id("push-field-orders-id").fill("1")
    page.get_by_test_id("push-field-orders-customer").fill("ann")
    page.get_by_test_id("push-field-orders-tags").fill('["gift", 7]')
    page.get_by_test_id("push-insert-orders").click()
    expect(page.get_by_test_id("push-field-error-orders-tags")).to_contain_text("tags element 1 must be a string")

    page.get_by_test_id("push-field-orders-tags").fill('["gift", "urgent", "gift"]')
    page.get_by_test_id("push-insert-orders").click()
    counts = page.get_by_test_id("view-table-tag_counts").get_by_test_id("view-row")
    expect(counts).to_have_count(2)
    expect(counts.filter(has_text="gift").first).to_contain_text("2")  # the list's duplicate counts twice
    sizes = page.get_by_test_id("view-table-order_sizes").get_by_test_id("view-row")
    expect(sizes).to_have_count(1)
    expect(sizes.first).to_contain_text("3")  # cardinality
    expect(sizes.first).to_contain_text("true")  # array_contains(tags, 'urgent')
    page.screenshot(path=str(ARTIFACTS / "run-dashboard-lists.png"), full_page=True)
