"""Issue 29, "who changed what", in Debian's Chromium at 1440x900 against the real stack
(server, Redis channel layer, database). Alice and Bob (granted "can edit") edit Big
orders together, each in their own browser context: Alice sets the predicate of "big",
Bob sets it after her and drags "big_orders" across the canvas. Alice saves a version;
the history's diff from v1 names both of them on the predicate, in the order they
changed it, and Bob alone on the position he dragged, on both pages. The version stored
says the same.

Screenshot: tests/artifacts/coedit-authors.png (Alice's history panel with the diff)."""
import pytest
from playwright.sync_api import expect

from tests.browser.editor_steps import drag_node, node, select
from tests.browser.user_steps import big_orders_shared_with_bob, open_as, pages, shot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]


def set_predicate(page, value):
    select(page, "big")
    page.get_by_test_id("param-predicate").fill(value)
    page.get_by_test_id("param-predicate").press("Tab")


def test_the_history_diff_names_who_changed_what(live_stack, make_user):
    circuit = big_orders_shared_with_bob(make_user)
    with pages(live_stack.base_url) as new_page:
        a, b = new_page(), new_page()
        for page, who in ((a, "alice"), (b, "bob")):
            open_as(page, who, circuit)
        for page in (a, b):
            expect(page.get_by_test_id("presence").get_by_test_id("avatar")).to_have_count(1)

        set_predicate(a, "amount > 5")
        select(b, "big")
        expect(b.get_by_test_id("param-predicate")).to_have_value("amount > 5")  # Alice's edit reached Bob
        set_predicate(b, "amount > 7")
        before = node(a, "big_orders").bounding_box()
        box = node(b, "big_orders").bounding_box()
        drag_node(b, "big_orders", box["x"] + 40, box["y"] + 160)
        expect(a.get_by_test_id("param-predicate")).to_have_value("amount > 7")  # Bob's reached Alice
        a.wait_for_function("([y]) => { const n = document.querySelector('[data-testid=circuit-node][data-node-id=big_orders]');"
                            " return n && n.getBoundingClientRect().y > y + 100; }", arg=[before["y"]])

        a.get_by_test_id("version-message").fill("tighter filter, outputs below")
        a.get_by_test_id("save-version").click()
        expect(a.get_by_test_id("save-status")).to_contain_text("Saved version 2")

        for page in (a, b):
            page.get_by_test_id("toggle-history").click()
            expect(page.get_by_test_id("version-item")).to_have_count(2)  # Bob's panel lists Alice's new version
            page.get_by_test_id("version-diff-1").click()
            diff = page.get_by_test_id("version-diff")
            expect(diff).to_contain_text("v1 → v2")
            predicate = diff.get_by_test_id("diff-changed").filter(has_text="node big:").locator('[data-field="params.predicate"]')
            expect(predicate).to_have_text("params.predicate: amount > 100 → amount > 7 · alice, bob")
            moved = diff.get_by_test_id("diff-changed").filter(has_text="node big_orders:")
            expect(moved.get_by_test_id("diff-field")).to_have_count(2)  # position.x and position.y
            for field in ("position.x", "position.y"):
                expect(moved.locator(f'[data-field="{field}"]').get_by_test_id("diff-authors")).to_have_text(" · bob")
        expect(a.get_by_test_id("version-diff")).to_be_in_viewport(ratio=0.99)  # the diff brings itself into view
        shot(a, "coedit-authors")

    version = circuit.versions.get(number=2)
    named = {(e["change"], e.get("node"), e.get("field")): e["authors"] for e in version.authors}
    assert named == {("node_changed", "big", "params.predicate"): ["alice", "bob"],
                     ("node_changed", "big_orders", "position.x"): ["bob"],
                     ("node_changed", "big_orders", "position.y"): ["bob"]}
