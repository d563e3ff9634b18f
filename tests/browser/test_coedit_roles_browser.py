"""Issue 29, a grantee's role changing while their page is open, in Debian's Chromium at
1440x900 against the real stack. Alice owns a private circuit and has granted Bob "can
edit"; both have it open with the SQL pane.

- Alice unticks Bob's "can edit": Bob's open page turns read-only with a notice saying his
  edit access was taken away (the socket tells the page its role), while he still sees
  Alice's typing;
- the page's role message is held back (Playwright's websocket route) while Bob types: the
  server drops what he typed, and when the message arrives his page shows the document as
  the server has it (his dropped typing gone), not a copy of its own;
- Alice gives "can edit" back: Bob's page is writable again, and what he types reaches
  Alice and the stored document.

Screenshots: tests/artifacts/coedit-role-*.png."""
import pycrdt
import pytest
from playwright.sync_api import expect

from circuits.collab import store
from circuits.collab.consumer import ROLE_MESSAGE
from circuits.models import Circuit
from tests.browser.chromium import until
from tests.browser.user_steps import big_orders_shared_with_bob, open_as, pages, rest_client, shot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

CARET = "([at]) => { const el = document.querySelector('[data-testid=source-text]'); el.focus(); el.setSelectionRange(at, at); }"


def stored_text(circuit) -> str:
    doc, _ = store.load(Circuit.objects.get(pk=circuit.pk))
    return str(doc.get("source", type=pycrdt.Text))


class HeldRole:
    """Routes a page's shared-document socket through Playwright, passing every message
    except, while `holding`, the server's role messages (kept in `held` until `release`)."""

    def __init__(self, page):
        self.holding = False
        self.held: list[bytes] = []
        self.client = None
        page.route_web_socket("**/ws/circuits/*/doc**", self._route)

    def _route(self, ws):
        server = ws.connect_to_server()
        self.client = ws

        def from_server(message):
            if self.holding and isinstance(message, bytes) and message[:1] == bytes([ROLE_MESSAGE]):
                self.held.append(message)
            else:
                ws.send(message)
        server.on_message(from_server)
        ws.on_message(server.send)

    def release(self):
        self.holding = False
        for message in self.held:
            self.client.send(message)
        self.held.clear()


def test_a_lowered_grantee_turns_read_only_and_a_raised_one_writable_again(live_stack, make_user):
    circuit = big_orders_shared_with_bob(make_user)
    share = f"/api/circuits/{circuit.id}/share/"
    owner = rest_client(live_stack.base_url, circuit.owner)
    with pages(live_stack.base_url) as new_page:
        a, b = new_page(), new_page()
        bobs_socket = HeldRole(b)
        for page, who in ((a, "alice"), (b, "bob")):
            open_as(page, who, circuit)
            page.get_by_test_id("toggle-source").click()
        expect(b.get_by_test_id("read-only")).to_have_count(0)
        start = "CREATE TABLE t (a BIGINT);"
        a.get_by_test_id("source-text").fill(start)
        expect(b.get_by_test_id("source-text")).to_have_value(start)

        # Alice lowers Bob's grant; his page is told only once he has typed.
        bobs_socket.holding = True
        assert owner.patch(share, json={"grants": [{"username": "bob", "can_edit": False}]}).status_code == 200
        expect(a.locator('[data-testid="avatar"][data-name="bob"]')).to_have_attribute("title", "bob (viewing)")
        until(b, lambda: bobs_socket.held, "the server telling Bob's page it is a viewer")
        expect(b.get_by_test_id("read-only")).to_have_count(0)  # not told yet
        b.evaluate(CARET, [0])
        b.keyboard.type("X")
        expect(b.get_by_test_id("source-text")).to_have_value("X" + start)  # on his screen only
        bobs_socket.release()
        notice = b.get_by_test_id("read-only")
        expect(notice).to_have_text("Read-only now: alice took away your edit access to this circuit. Fork it to edit your own copy.")
        expect(b.get_by_test_id("source-text")).to_have_value(start)  # the server's document, his dropped "X" gone
        expect(b.get_by_test_id("source-text")).to_have_attribute("readonly", "")
        expect(b.get_by_test_id("save-version")).to_have_count(0)
        expect(b.get_by_test_id("palette")).to_have_count(0)
        a.evaluate(CARET, [len(start)])
        a.keyboard.type("\n-- by alice")
        expect(b.get_by_test_id("source-text")).to_have_value(start + "\n-- by alice")  # he still sees Alice's
        shot(b, "coedit-role-lowered")
        assert stored_text(circuit) == start + "\n-- by alice"

        # Alice gives it back: Bob's page is writable again, and his typing reaches her.
        assert owner.patch(share, json={"grants": [{"username": "bob", "can_edit": True}]}).status_code == 200
        expect(notice).to_have_count(0)
        expect(b.get_by_test_id("source-text")).not_to_have_attribute("readonly", "")
        expect(b.get_by_test_id("save-version")).to_be_visible()
        b.evaluate(CARET, [0])
        b.keyboard.type("-- bob is back\n")
        merged = "-- bob is back\n" + start + "\n-- by alice"
        for page in (a, b):
            expect(page.get_by_test_id("source-text")).to_have_value(merged)
        expect(a.locator('[data-testid="avatar"][data-name="bob"]')).to_have_attribute("title", "bob")
        shot(b, "coedit-role-raised")
        assert stored_text(circuit) == merged
