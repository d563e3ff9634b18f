"""Issue 29, comments pinned to nodes, in Debian's Chromium at 1440x900 against the real
stack (uvicorn, Redis channel layer). Alice owns Big orders and has shared it read-only
with Bob (a viewer, who may comment: docs/collaboration.md, "Comments").

- Alice selects the filter `big` and comments on it mentioning @bob: Bob's open page shows
  the marker on `big` at once (the document socket's comment message) and his header's
  mention badge counts 1;
- Bob opens the thread from the marker and replies (a viewer comments) but is offered no
  Resolve (a viewer who is not the thread's author); Alice sees the reply live and resolves;
  the marker goes on both pages;
- Alice deletes `big`: the thread is listed "on a removed node" on Bob's page; her Undo
  brings the node back and the thread with it;
- Alice saves a new version: the thread is still on `big` (after Bob reloads), and
  reopening it puts the marker back live;
- Bob's mentions page lists Alice's comment and leads to the thread; an anonymous visitor
  with the share link reads the thread but has no reply box.

Screenshots: tests/artifacts/comments-*.png."""
import pytest
from playwright.sync_api import expect

from circuits.models import Circuit
from tests.browser.editor_steps import select
from tests.browser.user_steps import big_orders_shared_with_bob, open_as, pages, shot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]


def marker(page, node_id):
    return page.locator(f'[data-testid="comment-marker"][data-node="{node_id}"]')


def reopen(page):
    """Reopen the resolved thread (resolved threads are folded away: unfold them first)."""
    folded = page.get_by_test_id("resolved-threads")
    if not folded.evaluate("d => d.open"):
        folded.locator("summary").click()
    page.get_by_test_id("thread-reopen").click()


def test_comments_on_a_node_live_mentions_resolve_and_kept_across_versions(live_stack, make_user):
    circuit = big_orders_shared_with_bob(make_user, can_edit=False)
    Circuit.objects.filter(pk=circuit.pk).update(visibility="unlisted")
    token = Circuit.objects.get(pk=circuit.pk).share_token
    with pages(live_stack.base_url) as new_page:
        a, b = new_page(), new_page()
        open_as(a, "alice", circuit)
        open_as(b, "bob", circuit)
        expect(b.get_by_test_id("read-only")).to_be_visible()
        expect(b.get_by_test_id("mentions-badge")).to_have_count(0)
        expect(a.get_by_test_id("avatar")).to_have_count(1)  # both sockets are open

        # Alice comments on `big`, mentioning bob.
        select(a, "big")
        a.get_by_test_id("comment-node").click()
        a.get_by_test_id("thread-start-text").fill("@bob why 100 here, not 50?")
        a.get_by_test_id("thread-start").click()
        expect(a.get_by_test_id("thread")).to_have_count(1)
        expect(marker(a, "big")).to_have_text("1")

        # Bob sees the marker and the badge at once.
        expect(marker(b, "big")).to_have_text("1")
        expect(b.get_by_test_id("mentions-badge")).to_have_text("1")
        shot(b, "comments-bob-marker-and-badge")

        # Bob opens the thread from the marker and replies; he may not resolve Alice's thread.
        marker(b, "big").click()
        thread_b = b.get_by_test_id("thread")
        expect(thread_b).to_have_count(1)
        expect(thread_b.get_by_test_id("comment")).to_have_count(1)
        expect(thread_b.locator(".mention")).to_have_text("@bob")
        expect(b.get_by_test_id("thread-resolve")).to_have_count(0)
        b.get_by_test_id("comment-reply-text").fill("The SLA says 100, @alice.")
        b.get_by_test_id("comment-reply").click()
        expect(thread_b.get_by_test_id("comment")).to_have_count(2)

        # Alice sees the reply live and resolves; the markers go.
        expect(a.get_by_test_id("thread").get_by_test_id("comment")).to_have_count(2)
        expect(a.get_by_test_id("nav-mentions")).to_have_attribute("data-unread", "1")  # bob mentioned her
        shot(a, "comments-alice-thread")
        a.get_by_test_id("thread-resolve").click()
        expect(marker(a, "big")).to_have_count(0)
        expect(marker(b, "big")).to_have_count(0)
        expect(b.get_by_test_id("resolved-threads")).to_contain_text("Resolved (1)")
        b.get_by_test_id("resolved-threads").locator("summary").click()
        expect(b.get_by_test_id("thread-resolved-by")).to_contain_text("Resolved by alice")
        shot(b, "comments-bob-resolved")

        # The thread's node is deleted: listed on a removed node; Undo brings both back.
        reopen(a)
        expect(marker(b, "big")).to_have_text("1")
        select(a, "big")
        a.get_by_test_id("delete").click()
        expect(b.locator('[data-testid="circuit-node"][data-node-id="big"]')).to_have_count(0)
        b.get_by_test_id("comments-all").click()
        expect(b.get_by_test_id("removed-threads")).to_contain_text("On a removed node (1)")
        expect(b.get_by_test_id("thread-removed-node")).to_contain_text("big")
        expect(marker(b, "big")).to_have_count(0)
        shot(b, "comments-bob-removed-node")
        a.get_by_test_id("undo").click()
        expect(marker(b, "big")).to_have_text("1")
        expect(b.get_by_test_id("removed-threads")).to_have_count(0)

        # A new version: the thread stays on `big`.
        a.get_by_test_id("thread-resolve").click()
        expect(marker(b, "big")).to_have_count(0)
        a.get_by_test_id("version-message").fill("after the review")
        a.get_by_test_id("save-version").click()
        expect(a.get_by_test_id("save-status")).to_contain_text("Saved version 2")
        b.reload()
        expect(b.get_by_test_id("circuit-node")).to_have_count(3)
        b.get_by_test_id("toggle-comments").click()
        expect(b.get_by_test_id("resolved-threads")).to_contain_text("Resolved (1)")
        reopen(a)
        expect(marker(b, "big")).to_have_text("1")
        expect(b.get_by_test_id("thread")).to_have_count(1)
        expect(b.get_by_test_id("thread")).to_have_attribute("data-node", "big")

        # Bob's mentions lead to the thread.
        b.get_by_test_id("nav-mentions").click()
        mention = b.get_by_test_id("mention")
        expect(mention).to_have_count(1)
        expect(mention).to_contain_text("alice on Big orders")
        shot(b, "comments-bob-mentions")
        mention.get_by_test_id("mention-open").click()
        expect(b.get_by_test_id("comments-panel")).to_be_visible()
        expect(b.get_by_test_id("thread")).to_have_attribute("data-node", "big")
        expect(b.get_by_test_id("mentions-badge")).to_have_count(0)

        # Someone with the share link reads, but does not write.
        c = new_page()
        c.goto(f"/#/shared/{token}")
        expect(marker(c, "big")).to_have_text("1")
        marker(c, "big").click()
        expect(c.get_by_test_id("thread").get_by_test_id("comment")).to_have_count(2)
        expect(c.get_by_test_id("comments-read-only")).to_be_visible()
        expect(c.get_by_test_id("comment-reply")).to_have_count(0)
        expect(c.get_by_test_id("comment-node")).to_have_count(0)
        shot(c, "comments-share-link-reader")
