"""Issue 29, following someone's view, in Debian's Chromium at 1440x900 against the real
stack. Alice owns a circuit; Bob, granted read access, has it open too.

- Bob clicks Alice's avatar: his page says he follows her view, and as Alice zooms and pans,
  Bob's canvas shows the same place at the same zoom (the centre of the view in the canvas's
  coordinates, read from each page's viewport transform);
- Bob pans his canvas himself: he stops following, and Alice's next pan leaves his view
  where he put it.

Screenshot: tests/artifacts/coedit-follow.png."""
import pytest
from playwright.sync_api import expect

from tests.browser.chromium import until
from tests.browser.editor_steps import _empty_canvas_point
from tests.browser.user_steps import big_orders_shared_with_bob, open_as, pages, shot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

#: The view's centre in the canvas's coordinates and its zoom, from the viewport's CSS transform.
VIEW = """() => {
    const pane = document.querySelector('[data-testid="editor-canvas"] .react-flow').getBoundingClientRect();
    const m = new DOMMatrix(getComputedStyle(document.querySelector('.react-flow__viewport')).transform);
    return [(pane.width / 2 - m.e) / m.a, (pane.height / 2 - m.f) / m.a, m.a];
}"""


def view(page):
    return page.evaluate(VIEW)


def same_view(one, other) -> bool:
    (x1, y1, z1), (x2, y2, z2) = one, other
    return abs(z1 - z2) < 0.001 and abs(x1 - x2) < 0.5 and abs(y1 - y2) < 0.5


def pan(page, dx, dy):
    x, y = _empty_canvas_point(page)
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + dx, y + dy, steps=8)
    page.mouse.up()


def test_follow_someones_view_until_you_move_yours(live_stack, make_user):
    circuit = big_orders_shared_with_bob(make_user, can_edit=False)
    with pages(live_stack.base_url) as new_page:
        a, b = new_page(), new_page()
        for page, who in ((a, "alice"), (b, "bob")):
            open_as(page, who, circuit)

        alices_avatar = b.locator('[data-testid="avatar"][data-name="alice"]')
        alices_avatar.click()
        expect(b.get_by_test_id("following")).to_have_text("Following alice’s view. Move the canvas yourself to stop.")
        expect(alices_avatar).to_have_attribute("aria-pressed", "true")

        # Alice zooms in twice and pans: Bob's canvas shows what hers shows.
        a.locator(".react-flow__controls-zoomin").click()
        a.locator(".react-flow__controls-zoomin").click()
        pan(a, -120, 80)
        until(b, lambda: same_view(view(a), view(b)), "Bob's view following Alice's")
        zoom = view(b)[2]
        assert zoom > 1.2  # (the circuit opens zoomed to fit, at most 1; two zoom-ins are well past it)
        shot(b, "coedit-follow")

        # Bob pans himself: he stops following.
        pan(b, 60, 40)
        expect(b.get_by_test_id("following")).to_have_count(0)
        expect(alices_avatar).to_have_attribute("aria-pressed", "false")
        bobs = view(b)
        # Alice pans again, then moves her pointer: once Bob sees the pointer move (presence
        # comes in order), her new view has reached him too, and his view stayed his.
        pan(a, 150, -60)
        cursor = b.get_by_test_id("peer-cursor").filter(has_text="alice")
        expect(cursor).to_have_count(1)
        before = cursor.evaluate("el => el.style.transform")
        canvas = a.get_by_test_id("editor-canvas").bounding_box()
        a.mouse.move(canvas["x"] + 30, canvas["y"] + 30)
        until(b, lambda: cursor.evaluate("el => el.style.transform") != before, "Alice's pointer moving on Bob's canvas")
        assert same_view(view(b), bobs)
        assert not same_view(view(a), view(b))
