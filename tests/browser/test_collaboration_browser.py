"""Issue 29, designing together, as people meet it in Debian's Chromium at 1440x900
against the real stack: three browser contexts on one circuit. A and B are both the
owner (on two machines), V is a user granted read access. A granted editor (`can_edit`)
and typing together in the SQL pane: test_co_editing_browser.py.

- each sees who else is there (avatars, named by the server), V among them as a viewer;
- A renames a node and drags another, and renames the circuit: B sees it all;
- at the same time A changes the filter's predicate and B drags that same node: both
  changes stand on every screen;
- V sees A's cursor and A's selection outlined in A's colour;
- "Save version" makes a version of the shared document.

Screenshots: tests/artifacts/collab-*.png."""
import pytest
from playwright.sync_api import expect

from circuits import services
from circuits.models import CircuitGrant
from tests.browser.chromium import until
from tests.browser.editor_steps import drag_node, node, rename_selected, select
from tests.browser.user_steps import PASSWORD, log_in, pages, shot
from tests.conftest import example

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

TRANSFORM = "id => document.querySelector(`.react-flow__node[data-id='${id}']`)?.style.transform"


def transform(page, node_id):
    return page.evaluate(TRANSFORM, node_id)


def until_transform_changes(page, node_id, before):
    page.wait_for_function(f"([id, before]) => ({TRANSFORM})(id) !== before", arg=[node_id, before])


def test_two_writers_and_a_viewer_design_together(live_stack, make_user):
    alice = make_user("alice", PASSWORD)
    bob = make_user("bob", PASSWORD)
    circuit = services.create_circuit(alice, "Big orders", "", "private", example("big_orders"))
    CircuitGrant.objects.create(circuit=circuit, user=bob)
    with pages(live_stack.base_url) as new_page:
        a, b, v = new_page(), new_page(), new_page()
        for page, who in ((a, "alice"), (b, "alice"), (v, "bob")):
            log_in(page, who)
            page.goto(f"/#/circuits/{circuit.id}")
            expect(page.get_by_test_id("circuit-node")).to_have_count(3)
        # Everyone is seen by everyone: me plus two others.
        for page in (a, b, v):
            expect(page.get_by_test_id("presence").get_by_test_id("avatar")).to_have_count(2)
        expect(b.locator('[data-testid="avatar"][data-name="alice"]')).to_have_count(1)
        expect(b.locator('[data-testid="avatar"][data-name="bob"]')).to_have_attribute("title", "bob (viewing)")
        expect(v.locator('[data-testid="avatar"][data-name="alice"]')).to_have_count(2)

        # A renames the output; B sees the new name (and its wire).
        select(a, "big_orders")
        rename_selected(a, "large_orders")
        expect(node(b, "large_orders")).to_have_count(1)
        expect(node(b, "big_orders")).to_have_count(0)
        expect(b.locator('.react-flow__edge[data-id="big.out->large_orders.in"]')).to_have_count(1)

        # A drags the input: B sees it move.
        before = transform(b, "orders")
        box = node(a, "orders").bounding_box()
        drag_node(a, "orders", box["x"] + 10, box["y"] + 160)
        until_transform_changes(b, "orders", before)

        # At once: A types a new predicate on "big" while B drags "big".
        select(a, "big")
        before_a = transform(a, "big")
        predicate = a.get_by_test_id("param-predicate")
        predicate.fill("amount > 7")
        box = node(b, "big").bounding_box()
        drag_node(b, "big", box["x"] + 10, box["y"] + 200)
        predicate.press("Tab")
        until_transform_changes(a, "big", before_a)  # B's move reached A
        moved = transform(b, "big")
        until(a, lambda: transform(a, "big") == moved, "A shows big where B put it")
        select(b, "big")
        expect(b.get_by_test_id("param-predicate")).to_have_value("amount > 7")  # A's edit reached B
        expect(a.get_by_test_id("param-predicate")).to_have_value("amount > 7")

        # V sees A's pointer on the canvas and A's selection in A's colour.
        select(a, "big")
        canvas = a.get_by_test_id("editor-canvas").bounding_box()
        a.mouse.move(canvas["x"] + canvas["width"] / 2, canvas["y"] + 60)
        expect(v.get_by_test_id("peer-cursor").filter(has_text="alice")).not_to_have_count(0)
        expect(v.locator(".peer-selection")).not_to_have_count(0)
        # The viewer cannot change anything (the page is read-only; the server drops it anyway).
        expect(v.get_by_test_id("read-only")).to_be_visible()
        expect(node(v, "large_orders")).to_have_count(1)

        # A renames the circuit: B's and V's headers follow.
        a.get_by_test_id("rename").click()
        a.get_by_test_id("circuit-name-input").fill("Large orders")
        a.get_by_test_id("rename-save").click()
        for page in (b, v):
            expect(page.get_by_test_id("circuit-name")).to_have_text("Large orders")

        shot(a, "collab-a")
        shot(b, "collab-b")
        shot(v, "collab-viewer")

        # Saving makes a version of the shared document.
        a.get_by_test_id("save-version").click()
        expect(a.get_by_test_id("unsaved")).to_have_count(0)
        latest = circuit.versions.order_by("-number").first()
        nodes = {n["id"]: n for n in latest.document["nodes"]}
        assert set(nodes) == {"orders", "big", "large_orders"}
        assert nodes["big"]["params"]["predicate"] == "amount > 7"
        assert latest.number == 2
