"""Issue 29, "add and delete at once", in Debian's Chromium at 1440x900 against the real
stack. Alice and Bob both edit a circuit (Bob granted "can edit").

Alice's socket is held (Playwright's websocket route keeps what she sends and what she is
sent) while she adds a filter and wires the filter "big" into it, and Bob, at the same
time, deletes "big". When her socket is let go, both edits merge: her new node stays, the
wire from the deleted "big" goes with it (no dangling wire), and both pages show the same
circuit. Alice wires what is left into a valid circuit and saves it: the version and both
pages after a reload hold exactly that.

Screenshot: tests/artifacts/coedit-add-delete.png."""
import pytest
from playwright.sync_api import expect

from tests.browser.editor_steps import connect, drop_from_palette, node, rename_selected, select
from tests.browser.user_steps import big_orders_shared_with_bob, open_as, pages, shot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

EDGES = "() => [...document.querySelectorAll('.react-flow__edge')].map((e) => e.dataset.id).sort()"
NODES = "() => [...document.querySelectorAll('[data-testid=circuit-node]')].map((n) => n.dataset.nodeId).sort()"


class HeldSocket:
    """A page's shared-document socket through Playwright: while `holding`, nothing passes
    either way (a slow network); `release` delivers what was kept, in order."""

    def __init__(self, page):
        self.holding = False
        self.up: list = []
        self.down: list = []
        page.route_web_socket("**/ws/circuits/*/doc**", self._route)

    def _route(self, ws):
        server = ws.connect_to_server()
        self.client, self.server = ws, server
        ws.on_message(lambda m: self.up.append(m) if self.holding else server.send(m))
        server.on_message(lambda m: self.down.append(m) if self.holding else ws.send(m))

    def release(self):
        self.holding = False
        for message in self.up:
            self.server.send(message)
        for message in self.down:
            self.client.send(message)
        self.up.clear()
        self.down.clear()


def circuit_on(page):
    return page.evaluate(NODES), page.evaluate(EDGES)


def test_one_wires_a_new_node_to_a_node_the_other_deletes_at_once(live_stack, make_user):
    circuit = big_orders_shared_with_bob(make_user)
    with pages(live_stack.base_url) as new_page:
        a, b = new_page(), new_page()
        alices_socket = HeldSocket(a)
        for page, who in ((a, "alice"), (b, "bob")):
            open_as(page, who, circuit)
        for page in (a, b):
            expect(page.get_by_test_id("presence").get_by_test_id("avatar")).to_have_count(1)

        alices_socket.holding = True
        # Alice adds a filter "big2" and wires big -> big2 (her socket holds it).
        canvas = a.get_by_test_id("editor-canvas").bounding_box()
        drop_from_palette(a, "filter", int(canvas["width"] / 2), int(canvas["height"] - 120))
        rename_selected(a, "big2")
        connect(a, "big", "out", "big2", "in")
        # Bob, meanwhile, deletes "big" (and the wires he knows of).
        select(b, "big")
        b.get_by_test_id("delete").click()
        expect(node(b, "big")).to_have_count(0)
        expect(node(b, "big2")).to_have_count(0)  # Alice's edits have not reached him

        alices_socket.release()
        for page in (a, b):
            expect(node(page, "big2")).to_have_count(1)
            expect(node(page, "big")).to_have_count(0)
            expect(page.locator(".react-flow__edge")).to_have_count(0)  # no wire left to or from "big"
        assert circuit_on(a) == circuit_on(b) == (["big2", "big_orders", "orders"], [])
        shot(a, "coedit-add-delete")

        # Alice wires what is left into a valid circuit and saves it: the version holds the
        # merged circuit, and so does each page after a reload.
        connect(a, "orders", "out", "big2", "in")
        connect(a, "big2", "out", "big_orders", "in")
        select(a, "big2")
        a.get_by_test_id("param-predicate").fill("amount > 5")
        a.get_by_test_id("param-predicate").press("Tab")
        expect(a.get_by_test_id("validation-state")).to_have_attribute("data-valid", "true")
        wires = ["big2.out->big_orders.in", "orders.out->big2.in"]
        expect(b.locator(".react-flow__edge")).to_have_count(2)
        assert circuit_on(a) == circuit_on(b) == (["big2", "big_orders", "orders"], wires)
        a.get_by_test_id("save-version").click()
        expect(a.get_by_test_id("save-status")).to_contain_text("Saved version 2")
        saved = circuit.versions.order_by("-number").first().document
        assert sorted(n["id"] for n in saved["nodes"]) == ["big2", "big_orders", "orders"]
        assert sorted(f"{e['from']['node']}.{e['from']['port']}->{e['to']['node']}.{e['to']['port']}" for e in saved["edges"]) == wires
        for page in (a, b):
            page.on("dialog", lambda dialog: dialog.accept())
            page.reload()
            expect(page.get_by_test_id("circuit-node")).to_have_count(3)
            expect(page.locator(".react-flow__edge")).to_have_count(2)
            assert circuit_on(page) == (["big2", "big_orders", "orders"], wires)
