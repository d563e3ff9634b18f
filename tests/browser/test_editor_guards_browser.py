"""Issue 14, the editor's guards as a user meets them, in Debian's Chromium at 1440x900
against the real stack (uvicorn + Celery worker + Spark):

- a palette node dropped near any edge of the canvas shows whole (not cut off, not under
  the minimap);
- "Start run" on edited, unsaved work asks for a version message; accepted, the version is
  saved with it (shown in the history) and the run is of that version;
- leaving with unsaved changes asks first (an in-app link, reload and closing the tab:
  the browser's beforeunload prompt); without changes nothing asks;
- a save's error banner goes once the document is valid again: never "error" beside
  "✓ valid", also when the edit lands while the refused save is still on its way.

Screenshots: tests/artifacts/editor-guards-*.png."""
import re

import pytest
from playwright.sync_api import expect

from circuits import services
from runs.models import Run
from tests.browser.editor_steps import drop_from_palette, node, select
from tests.browser.user_steps import PASSWORD, answered, log_in, pages, shot
from tests.browser.chromium import next_frame, settled_box, until
from tests.conftest import example

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def browser(live_stack):
    with pages(live_stack.base_url) as new_page:
        yield new_page


def box_of(locator):
    b = locator.bounding_box()
    return b["x"], b["y"], b["width"], b["height"]


def test_a_node_dropped_near_each_edge_shows_whole(browser, make_user):
    user = make_user("dropper", PASSWORD)
    circuit = services.create_circuit(user, "Big orders", "", "private", example("big_orders"))
    page = browser()
    log_in(page, "dropper")
    page.goto(f"/#/circuits/{circuit.id}")
    expect(page.get_by_test_id("circuit-node")).to_have_count(3)
    canvas = page.get_by_test_id("editor-canvas")
    # The whole canvas in sight first (at 1440x900 its bottom is just below the fold), so
    # that no drag scrolls the page under the pointer.
    page.evaluate("() => { const r = document.querySelector('[data-testid=editor-canvas]').getBoundingClientRect();"
                  " window.scrollBy(0, r.bottom - window.innerHeight + 8); }")
    cx, cy, cw, ch = box_of(canvas)
    mx, my, mw, mh = box_of(page.locator(".react-flow__minimap"))
    # Near each edge and corner: (x, y) inside the canvas, a few pixels from its border;
    # the last is on the minimap itself.
    spots = {"right": (cw - 6, ch / 3), "bottom": (cw / 3, ch - 6), "left": (6, ch / 2), "top": (cw / 2, 6),
             "top-right": (cw - 6, 6), "bottom-left": (6, ch - 6), "minimap": (mx - cx + mw / 2, my - cy + mh / 2)}
    ox, oy, ow, oh = box_of(node(page, "big"))
    spots["onto the node 'big'"] = (ox - cx + ow / 2, oy - cy + oh / 2)  # lands beside it, not on it
    for n, (where, (x, y)) in enumerate(spots.items(), start=4):
        drop_from_palette(page, "filter", int(x), int(y))
        expect(page.get_by_test_id("circuit-node")).to_have_count(n)
        dropped = page.get_by_test_id("node-panel").get_attribute("data-node-id")
        assert dropped.startswith("filter"), f"dropped a filter at the {where}, got {dropped}"
        settled_box(node(page, dropped))  # the node is measured, drawn and kept in sight
        # (Dragging may scroll the page: every box is read as it is now.)
        cx, cy, cw, ch = box_of(canvas)
        mx, my, mw, mh = box_of(page.locator(".react-flow__minimap"))
        nx, ny, nw, nh = box_of(node(page, dropped))
        assert cx <= nx and nx + nw <= cx + cw and cy <= ny and ny + nh <= cy + ch, \
            f"dropped at the {where} edge, {dropped} is cut off: node {(nx, ny, nw, nh)}, canvas {(cx, cy, cw, ch)}"
        assert not (nx < mx + mw and mx < nx + nw and ny < my + mh and my < ny + nh), f"dropped at the {where}, {dropped} is under the minimap"
        for other in page.get_by_test_id("circuit-node").all():
            if other.get_attribute("data-node-id") != dropped:
                x, y, w, h = box_of(other)
                assert not (nx < x + w and x < nx + nw and ny < y + h and y < ny + nh), \
                    f"dropped at the {where}, {dropped} covers {other.get_attribute('data-node-id')}"
    shot(page, "editor-guards-drop-near-edges")


def test_start_run_on_unsaved_work_saves_a_version_with_its_message_then_runs_it(browser, make_user):
    user = make_user("starter", PASSWORD)
    circuit = services.create_circuit(user, "Big orders", "", "private", example("big_orders"))
    page = browser()
    log_in(page, "starter")
    page.goto(f"/#/circuits/{circuit.id}")
    select(page, "big")
    page.get_by_test_id("param-predicate").fill("amount > 200")
    expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "true")
    expect(page.get_by_test_id("unsaved")).to_be_visible()

    asked = []
    page.once("dialog", lambda d: (asked.append((d.type, d.message, d.default_value)), d.accept("raise the bar to 200")))
    page.get_by_test_id("start-run").click()
    expect(page.get_by_test_id("run-status")).to_have_text("running")
    kind, message, default = answered(page, asked)[0]
    assert kind == "prompt" and "Save them as version 2" in message and default == ""
    run_id = int(page.url.rsplit("/", 1)[-1])
    circuit.refresh_from_db()
    saved = circuit.latest_version
    assert (saved.number, saved.message) == (2, "raise the bar to 200")
    assert next(n for n in saved.document["nodes"] if n["id"] == "big")["params"]["predicate"] == "amount > 200"
    assert Run.objects.get(pk=run_id).version_id == saved.pk

    # The history shows the message; the circuit's runs are of version 2.
    page.goto(f"/#/circuits/{circuit.id}")
    expect(page.get_by_test_id("unsaved")).to_have_count(0)
    page.get_by_test_id("toggle-history").click()
    expect(page.get_by_test_id("version-message-2")).to_contain_text("raise the bar to 200")
    runs = page.get_by_test_id("circuit-runs")
    expect(runs.locator(f'[data-run-id="{run_id}"] td').nth(2)).to_have_text("2")
    settled_box(page.get_by_test_id("version-message-2"))  # the history's smooth scroll into view is over
    runs.scroll_into_view_if_needed()
    shot(page, "editor-guards-start-run-saved-version")


def test_leaving_unsaved_work_asks_and_leaving_saved_work_does_not(browser, make_user):
    user = make_user("leaver", PASSWORD)
    circuit = services.create_circuit(user, "Big orders", "", "private", example("big_orders"))
    page = browser()
    log_in(page, "leaver")
    dialogs = []
    answer = {"accept": False}

    def on_dialog(dialog):
        dialogs.append((dialog.type, dialog.message))
        dialog.accept() if answer["accept"] else dialog.dismiss()

    page.on("dialog", on_dialog)

    # No changes: a link, a reload and closing ask nothing.
    page.goto(f"/#/circuits/{circuit.id}")
    expect(page.get_by_test_id("circuit-node")).to_have_count(3)
    select(page, "big")  # a click (the page has been used), no edit
    page.reload()
    expect(page.get_by_test_id("circuit-node")).to_have_count(3)
    page.get_by_role("link", name="Circuits").first.click()
    expect(page.get_by_test_id("new-circuit")).to_be_visible()
    page.go_back()
    expect(page.get_by_test_id("circuit-node")).to_have_count(3)
    assert dialogs == []

    # An edit: each way out asks; dismissed, the edit stays.
    select(page, "big")
    page.get_by_test_id("param-predicate").fill("amount > 150")
    expect(page.get_by_test_id("unsaved")).to_be_visible()
    page.get_by_role("link", name="Circuits").first.click()
    assert answered(page, dialogs) and dialogs[-1][0] == "confirm" and "unsaved changes" in dialogs[-1][1]
    # The address is put back once the dismissed confirm returns (the page goes on after the event).
    expect(page).to_have_url(re.compile(rf"/#/circuits/{circuit.id}$"))
    # Reload: the browser's own prompt (beforeunload), dismissed: the page and edit stay.
    dialogs.clear()
    page.evaluate("() => setTimeout(() => location.reload(), 0)")
    assert answered(page, dialogs) and dialogs[-1][0] == "beforeunload"
    expect(page.get_by_test_id("param-predicate")).to_have_value("amount > 150")
    # Closing the tab: the same prompt; dismissed, the tab stays open.
    dialogs.clear()
    page.close(run_before_unload=True)
    assert answered(page, dialogs) and dialogs[-1][0] == "beforeunload"
    next_frame(page)  # the page goes on after the dismissed prompt: it still paints
    assert not page.is_closed()
    expect(page.get_by_test_id("unsaved")).to_be_visible()
    shot(page, "editor-guards-unsaved")

    # Saved: nothing asks any more, not a link, not a reload.
    page.get_by_test_id("save-version").click()
    expect(page.get_by_test_id("save-status")).to_contain_text("version 2")
    dialogs.clear()
    page.reload()
    expect(page.get_by_test_id("circuit-node")).to_have_count(3)
    select(page, "big")
    expect(page.get_by_test_id("param-predicate")).to_have_value("amount > 150")
    page.get_by_role("link", name="Circuits").first.click()
    expect(page.get_by_test_id("new-circuit")).to_be_visible()
    assert dialogs == []

    # Unsaved again, and the user agrees to leave: the tab closes.
    page.go_back()
    select(page, "big")
    page.get_by_test_id("param-predicate").fill("amount > 175")
    expect(page.get_by_test_id("unsaved")).to_be_visible()
    answer["accept"] = True
    page.close(run_before_unload=True)
    page.wait_for_event("close")
    assert dialogs[-1][0] == "beforeunload"


#: Records, in the page, whether a save error was ever on screen beside "✓ valid".
WATCH_ERROR_BESIDE_VALID = """() => {
    window.__errorBesideValid = false;
    const check = () => {
        const valid = document.querySelector('[data-testid=validation-state][data-valid=true]');
        if (valid && document.querySelector('[data-testid=save-error]')) window.__errorBesideValid = true;
    };
    new MutationObserver(check).observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
}"""


def test_a_stale_save_error_never_stands_beside_valid(browser, make_user):
    user = make_user("fixer", PASSWORD)
    circuit = services.create_circuit(user, "Big orders", "", "private", example("big_orders"))
    page = browser()
    log_in(page, "fixer")
    page.goto(f"/#/circuits/{circuit.id}")
    page.evaluate(WATCH_ERROR_BESIDE_VALID)
    select(page, "big")
    predicate = page.get_by_test_id("param-predicate")

    # A refused save says why; fixing the document takes the banner away.
    predicate.fill("amount > > 100")
    expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "false")
    page.get_by_test_id("save-version").click()
    expect(page.get_by_test_id("save-error")).to_be_visible()
    shot(page, "editor-guards-save-error")
    predicate.fill("amount > 100")
    expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "true")
    expect(page.get_by_test_id("save-error")).to_have_count(0)

    # The same when the fix is typed while the refused save is still on its way: the
    # answer about the old document must not stand beside the new one's "✓ valid".
    predicate.fill("amount > > 100")
    expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "false")
    held = []
    page.route(f"**/api/circuits/{circuit.id}/versions/", lambda route: held.append(route) if route.request.method == "POST" else route.continue_())
    page.get_by_test_id("save-version").click()
    until(page, lambda: held, "the save to be sent")
    predicate.fill("amount > 100")
    expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "true")
    held[0].continue_()
    expect(page.get_by_test_id("save-version")).to_be_enabled()
    # The user still learns the save did not happen (said as a status, not as an error of
    # the document now on screen): the refused answer has been handled ...
    expect(page.get_by_test_id("save-status")).to_contain_text("not saved")
    # ... and the edit is still valid and unsaved.
    expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "true")
    expect(page.get_by_test_id("save-error")).to_have_count(0)
    expect(page.get_by_test_id("unsaved")).to_be_visible()
    shot(page, "editor-guards-valid-after-stale-save")
    assert page.evaluate("window.__errorBesideValid") is False, "a save error stood beside '✓ valid'"
    circuit.refresh_from_db()
    assert circuit.latest_version.number == 1

    # A save that succeeds while the user goes on editing saves what was sent; the edit
    # made meanwhile stays unsaved (leaving would ask).
    page.get_by_test_id("save-version").click()
    until(page, lambda: len(held) == 2, "the second save to be sent")
    predicate.fill("amount > 120")
    held[1].continue_()
    expect(page.get_by_test_id("save-status")).to_contain_text("Saved version 2")
    expect(page.get_by_test_id("unsaved")).to_be_visible()
    circuit.refresh_from_db()
    assert next(n for n in circuit.latest_version.document["nodes"] if n["id"] == "big")["params"]["predicate"] == "amount > 100"
