"""Issue 29, edit access for others and typing together, in Debian's Chromium at 1440x900
against the real stack. Alice owns a private circuit and, in the Share dialog, grants
Bob "can edit":

- Bob's page is editable (no read-only banner) but has no Rename, Share or Delete: those
  stay the owner's; Bob changes the filter's predicate and Alice sees it; Bob saves a
  version of the shared document;
- both type in the SQL pane at the same moment, keystroke by keystroke, Alice in the
  middle of the text and Bob at its start: every character of both stands, in place, on
  both screens and in the stored document;
- Alice unticks Bob's "can edit": his open socket becomes a viewer's and his page turns
  read-only (test_coedit_roles_browser.py has the rest), while he still sees Alice's typing.

Screenshots: tests/artifacts/coedit-*.png."""
import pytest
from playwright.sync_api import expect

from circuits import services
from circuits.collab import store
from circuits.models import Circuit, CircuitGrant
from tests.browser.editor_steps import select
from tests.browser.user_steps import PASSWORD, log_in, pages, shot
from tests.conftest import example

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

CARET = "([at]) => { const el = document.querySelector('[data-testid=source-text]'); el.focus(); el.setSelectionRange(at, at); }"


def test_a_granted_editor_edits_with_the_owner_and_both_type_in_the_sql_pane_at_once(live_stack, make_user):
    alice = make_user("alice", PASSWORD)
    make_user("bob", PASSWORD)
    circuit = services.create_circuit(alice, "Big orders", "", "private", example("big_orders"))
    with pages(live_stack.base_url) as new_page:
        a, b = new_page(), new_page()
        log_in(a, "alice")
        a.goto(f"/#/circuits/{circuit.id}")
        expect(a.get_by_test_id("circuit-node")).to_have_count(3)

        # Alice grants Bob "can edit" in the Share dialog.
        a.get_by_test_id("share").click()
        a.get_by_test_id("share-grantee").fill("bob")
        a.get_by_test_id("share-can-edit").check()
        a.get_by_test_id("share-grant-add").click()
        expect(a.get_by_test_id("share-grant").filter(has_text="bob").get_by_test_id("share-grant-edit")).to_have_text("can edit")
        shot(a, "coedit-share-dialog")
        a.get_by_test_id("share-close").click()
        grant = CircuitGrant.objects.get(circuit=circuit, user__username="bob")
        assert (grant.can_edit, grant.can_operate) == (True, False)

        log_in(b, "bob")
        b.goto(f"/#/circuits/{circuit.id}")
        expect(b.get_by_test_id("circuit-node")).to_have_count(3)
        expect(b.get_by_test_id("read-only")).to_have_count(0)
        expect(b.get_by_test_id("save-version")).to_be_visible()
        for owners_only in ("rename", "share", "delete-circuit"):
            expect(b.get_by_test_id(owners_only)).to_have_count(0)
        expect(a.locator('[data-testid="avatar"][data-name="bob"]')).to_have_attribute("title", "bob")  # a writer, not "(viewing)"

        # Bob changes the predicate: Alice sees it.
        select(b, "big")
        predicate = b.get_by_test_id("param-predicate")
        predicate.fill("amount > 250")
        predicate.press("Tab")
        select(a, "big")
        expect(a.get_by_test_id("param-predicate")).to_have_value("amount > 250")

        # Both open the SQL pane; Alice writes the start, Bob sees it.
        for page in (a, b):
            page.get_by_test_id("toggle-source").click()
        start = "CREATE TABLE t (a BIGINT);\nCREATE VIEW v AS SELECT a FROM t;"
        a.get_by_test_id("source-text").fill(start)
        expect(b.get_by_test_id("source-text")).to_have_value(start)

        # At once, keystroke by keystroke: Alice adds a column, Bob a comment line above.
        a.evaluate(CARET, [start.index(")")])
        b.evaluate(CARET, [0])
        alices, bobs = ", b BIGINT", "-- orders\n"
        for ch_a, ch_b in zip(alices, bobs):
            a.keyboard.type(ch_a)
            b.keyboard.type(ch_b)
        merged = "-- orders\nCREATE TABLE t (a BIGINT, b BIGINT);\nCREATE VIEW v AS SELECT a FROM t;"
        for page in (a, b):
            expect(page.get_by_test_id("source-text")).to_have_value(merged)
        # The carets stayed where each was typing.
        assert a.evaluate("document.querySelector('[data-testid=source-text]').selectionStart") == merged.index(", b BIGINT") + len(alices)
        assert b.evaluate("document.querySelector('[data-testid=source-text]').selectionStart") == len(bobs)
        shot(a, "coedit-sql-alice")
        shot(b, "coedit-sql-bob")

        # The server holds the same text (a new server would load it).
        doc, _ = store.load(Circuit.objects.get(pk=circuit.pk))
        assert str(doc.get("source", type=__import__("pycrdt").Text)) == merged

        # Bob saves a version: it has his predicate and the text both typed.
        b.get_by_test_id("version-message").fill("bob's filter")
        b.get_by_test_id("save-version").click()
        expect(b.get_by_test_id("save-status")).to_contain_text("Saved version 2")
        latest = circuit.versions.order_by("-number").first()
        assert latest.number == 2 and latest.message == "bob's filter"
        assert {n["id"]: n for n in latest.document["nodes"]}["big"]["params"]["predicate"] == "amount > 250"
        assert latest.document["metadata"]["source"] == {"language": "sql", "text": merged}

        # Alice unticks "can edit": Bob's socket is a viewer's from then on.
        a.get_by_test_id("share").click()
        a.get_by_test_id("share-grant-can-edit-bob").click()  # the box follows the server's answer
        expect(a.get_by_test_id("share-note")).to_have_text("bob may no longer edit.")
        expect(a.get_by_test_id("share-grant-can-edit-bob")).not_to_be_checked()
        shot(a, "coedit-share-lowered")
        a.get_by_test_id("share-close").click()
        grant.refresh_from_db()
        assert (grant.can_edit, grant.can_operate) == (False, False)
        expect(a.locator('[data-testid="avatar"][data-name="bob"]')).to_have_attribute("title", "bob (viewing)")
        expect(b.get_by_test_id("read-only")).to_have_text("Read-only now: alice took away your edit access to this circuit. Fork it to edit your own copy.")  # told by the socket
        b.evaluate(CARET, [0])
        b.keyboard.type("X")  # a read-only pane (and the server would drop it)
        a.evaluate(CARET, [len(merged)])
        a.keyboard.type("\n-- done")
        expect(b.get_by_test_id("source-text")).to_have_value(merged + "\n-- done")  # Bob still sees Alice's
        expect(a.get_by_test_id("source-text")).to_have_value(merged + "\n-- done")
        doc, _ = store.load(Circuit.objects.get(pk=circuit.pk))
        assert str(doc.get("source", type=__import__("pycrdt").Text)) == merged + "\n-- done"
