"""Issue 29, watching a run together, in Debian's Chromium at 1440x900 against the real
stack (uvicorn + Celery worker + Spark). Alice's Big orders run has three ticks (the
example's three pushes); Bob and Carol are granted read access. Each in a browser context
of their own:

- all three open the run page: each sees the other two (avatars named, their own marked);
- Alice turns "Share my view" on: Bob's and Carol's pages say "Following alice’s view";
  Alice moves the tick slider to tick 0 and then 1 and clicks node `big`: their sliders
  and past outputs show the same tick (the rows worked out by hand from the pushes, with
  `amount > 100`), and their node inspectors open on `big`;
- Bob stops following and moves his slider to tick 2 himself; Alice goes back to tick 0:
  Carol follows, Bob stays at 2 (and can follow again);
- Alice closes her tab: she disappears from Bob's and Carol's pages, and so does the banner.

Screenshots: tests/artifacts/watch-together-{alice-sharing,bob-following,bob-free,alice-gone}.png."""
import json

import pytest
from playwright.sync_api import expect

from tests.browser.test_verify_browser import wait_applied
from tests.browser.user_steps import PASSWORD, log_in, pages, rest_client, shot
from tests.conftest import EXAMPLES, example
from tests.watching import forget_presence_lists

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

#: big_orders (amount > 100) after each tick of the example's pushes, worked out by hand.
BIG_AFTER = {0: ["ada"], 1: ["ada", "cy"], 2: ["cy"]}


def pushes():
    path = EXAMPLES / "big_orders.pushes.jsonl"
    return [json.loads(line)["orders"] for line in path.read_text().splitlines() if line.strip()]


def open_run(page, username, run_id):
    log_in(page, username)
    page.goto(f"/#/runs/{run_id}")
    expect(page.get_by_test_id("run-tick")).to_have_text("2")
    expect(page.get_by_test_id("avatar-me")).to_have_attribute("data-name", username)


def watchers_seen(page) -> list[str]:
    return page.get_by_test_id("watch-bar").get_by_test_id("avatar").evaluate_all("els => els.map(e => e.dataset.name)")


def expect_past(page, tick):
    """The page's tick slider is at `tick` and shows big_orders as it was after it."""
    expect(page.get_by_test_id("tick-slider-number")).to_have_value(str(tick))
    expect(page.get_by_test_id("past-outputs")).to_have_attribute("data-tick", str(tick))
    rows = page.get_by_test_id("past-table-big_orders").locator("tbody tr")
    expect(rows).to_have_count(len(BIG_AFTER[tick]))
    for customer in BIG_AFTER[tick]:
        expect(page.get_by_test_id("past-table-big_orders")).to_contain_text(customer)


def set_tick(page, tick):
    page.get_by_test_id("tick-slider-number").fill(str(tick))


@pytest.mark.timeout(600)  # a run's Spark ticks and three browsers on a loaded 2-core machine
def test_three_watch_alice_presents_bob_goes_his_own_way_alice_leaves(live_stack, make_user):
    from circuits import services
    from circuits.models import CircuitGrant

    forget_presence_lists()  # run ids repeat between tests
    alice, bob, carol = (make_user(name, PASSWORD) for name in ("alice", "bob", "carol"))
    circuit = services.create_circuit(alice, "Big orders", "", "private", example("big_orders"))
    for user in (bob, carol):
        CircuitGrant.objects.create(circuit=circuit, user=user, can_edit=False)
    api = rest_client(live_stack.base_url, alice)
    run_id = api.post(f"/api/circuits/{circuit.id}/runs/").json()["id"]
    for n, changes in enumerate(pushes(), 1):
        assert api.post(f"/api/runs/{run_id}/inputs/orders/push/", json=changes).status_code == 202
        wait_applied(api, run_id, n)
    assert api.get(f"/api/runs/{run_id}/").json()["current_tick"] == 2

    with pages(live_stack.base_url) as new_page:
        a, b, c = new_page(), new_page(), new_page()
        for page, who in ((a, "alice"), (b, "bob"), (c, "carol")):
            open_run(page, who, run_id)
        for page, others in ((a, ["bob", "carol"]), (b, ["alice", "carol"]), (c, ["alice", "bob"])):
            expect(page.get_by_test_id("watch-bar").get_by_test_id("avatar")).to_have_count(2)
            assert sorted(watchers_seen(page)) == others
            expect(page.get_by_test_id("following-banner")).to_have_count(0)

        # Alice presents: the others follow her tick and her node.
        a.get_by_test_id("share-view").click()
        expect(a.get_by_test_id("share-view")).to_have_attribute("aria-pressed", "true")
        for follower in (b, c):
            expect(follower.get_by_test_id("following-text")).to_have_text("Following alice’s view")
        set_tick(a, 0)
        expect_past(a, 0)
        for follower in (b, c):
            expect_past(follower, 0)
        set_tick(a, 1)
        a.get_by_test_id("graph-node-big").click()
        expect(a.get_by_test_id("inspector-node")).to_have_text("big")
        for follower in (b, c):
            expect_past(follower, 1)
            expect(follower.get_by_test_id("inspector-node")).to_have_text("big")
        a.get_by_test_id("past-outputs").scroll_into_view_if_needed()
        shot(a, "watch-together-alice-sharing")
        b.get_by_test_id("past-outputs").scroll_into_view_if_needed()
        shot(b, "watch-together-bob-following")  # the head (banner, avatars) is sticky

        # Bob stops following and goes his own way; Carol keeps following.
        b.get_by_test_id("stop-following").click()
        expect(b.get_by_test_id("following-banner")).to_have_count(0)
        expect(b.get_by_test_id("presenter-banner")).to_contain_text("alice is sharing their view.")
        set_tick(b, 2)
        expect_past(b, 2)
        set_tick(a, 0)
        expect_past(c, 0)
        expect_past(b, 2)  # still where he put it
        expect(b.get_by_test_id("inspector-node")).to_have_text("big")
        b.get_by_test_id("past-outputs").scroll_into_view_if_needed()
        shot(b, "watch-together-bob-free")
        # He can follow again: he is back on Alice's tick.
        b.get_by_test_id("follow-presenter").click()
        expect(b.get_by_test_id("following-text")).to_have_text("Following alice’s view")
        expect_past(b, 0)

        # Alice closes her tab: gone from the others' pages, and nobody is followed.
        a.close()
        for page, others in ((b, ["carol"]), (c, ["bob"])):
            expect(page.get_by_test_id("watch-bar").get_by_test_id("avatar")).to_have_count(1)
            assert watchers_seen(page) == others
            expect(page.get_by_test_id("following-banner")).to_have_count(0)
            expect(page.get_by_test_id("presenter-banner")).to_have_count(0)
        shot(c, "watch-together-alice-gone")
