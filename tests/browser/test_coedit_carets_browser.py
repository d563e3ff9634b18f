"""Issue 29, live carets in the SQL pane, in Debian's Chromium at 1440x900 against the real
stack. Alice owns a circuit and has granted Bob "can edit"; both have the SQL pane open.

- Alice's caret shows on Bob's pane in her colour with her name, drawn where the character
  it is at is drawn (checked against the textarea's own font metrics: line height and the
  width of a monospace character, not the caret layer's);
- Bob types a line above it: on his screen her caret stays on the same character (Yjs
  relative positions), and so does her own;
- Alice selects a word: Bob sees exactly that word shaded in her colour; Bob's caret shows
  on Alice's pane.

Screenshots: tests/artifacts/coedit-sql-carets*.png."""
import pytest
from playwright.sync_api import expect

from tests.browser.chromium import until
from tests.browser.user_steps import big_orders_shared_with_bob, open_as, pages, shot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

CARET = "([at]) => { const el = document.querySelector('[data-testid=source-text]'); el.focus(); el.setSelectionRange(at, at); }"

#: Where the character at `at` of the textarea's text is drawn, from the textarea's own
#: style: its box, padding, line height and the width of one character of its font.
WHERE = """([at]) => {
    const el = document.querySelector('[data-testid=source-text]');
    const style = getComputedStyle(el);
    const context = document.createElement('canvas').getContext('2d');
    context.font = `${style.fontSize} ${style.fontFamily}`;
    const before = el.value.slice(0, at).split('\\n');
    const box = el.getBoundingClientRect();
    return {
        x: box.x + parseFloat(style.paddingLeft) + context.measureText('x'.repeat(before.at(-1).length)).width - el.scrollLeft,
        y: box.y + parseFloat(style.paddingTop) + (before.length - 1) * parseFloat(style.lineHeight) - el.scrollTop,
        line: parseFloat(style.lineHeight),
    };
}"""


def caret_of(page, name):
    return page.locator(f'[data-testid="remote-caret"][data-name="{name}"]')


def drawn_where_typed(page, name, at) -> bool:
    """The caret's line is drawn at the character `at`: its left edge within 2 px, its top within the line."""
    box = caret_of(page, name).bounding_box()
    where = page.evaluate(WHERE, [at])
    return box is not None and abs(box["x"] + 1 - where["x"]) <= 2 and where["y"] - 2 <= box["y"] <= where["y"] + where["line"]


def test_each_persons_caret_and_selection_show_in_the_others_sql_pane(live_stack, make_user):
    circuit = big_orders_shared_with_bob(make_user)
    with pages(live_stack.base_url) as new_page:
        a, b = new_page(), new_page()
        for page, who in ((a, "alice"), (b, "bob")):
            open_as(page, who, circuit)
            page.get_by_test_id("toggle-source").click()
        text = "CREATE TABLE orders (id BIGINT, amount BIGINT);\nCREATE VIEW big AS SELECT id FROM orders WHERE amount > 100;\n"
        a.get_by_test_id("source-text").fill(text)
        expect(b.get_by_test_id("source-text")).to_have_value(text)

        # Alice puts her caret before "SELECT" on the second line.
        at = text.index("SELECT")
        a.evaluate(CARET, [at + 1])
        a.keyboard.press("ArrowLeft")  # a real key: the caret moves as a hand moves it
        alices = caret_of(b, "alice")
        expect(alices).to_have_attribute("data-at", str(at))
        until(b, lambda: drawn_where_typed(b, "alice", at), "Alice's caret drawn before SELECT on Bob's pane")
        expect(alices.locator(".remote-caret-name")).to_have_text("alice")
        color = a.get_by_test_id("avatar-me").evaluate("el => getComputedStyle(el).backgroundColor")
        assert alices.evaluate("el => getComputedStyle(el).borderLeftColor") == color

        # Bob types a line at the top: her caret stays before SELECT, on both screens.
        b.evaluate(CARET, [0])
        b.keyboard.type("-- big ones\n")
        moved = at + len("-- big ones\n")
        expect(alices).to_have_attribute("data-at", str(moved))
        until(b, lambda: drawn_where_typed(b, "alice", moved), "Alice's caret still before SELECT")
        expect(a.get_by_test_id("source-text")).to_have_value("-- big ones\n" + text)
        assert a.evaluate("document.querySelector('[data-testid=source-text]').selectionStart") == moved
        expect(caret_of(a, "bob")).to_have_attribute("data-at", str(len("-- big ones\n")))  # Bob's, on Alice's pane

        # Alice selects "SELECT id": Bob sees it shaded in her colour.
        for _ in range(len("SELECT id")):
            a.keyboard.press("Shift+ArrowRight")
        shaded = b.locator('[data-testid="remote-selection"][data-name="alice"]')
        expect(shaded).to_have_text("SELECT id")
        expect(alices).to_have_attribute("data-at", str(moved + len("SELECT id")))
        shot(b, "coedit-sql-carets")
        shot(a, "coedit-sql-carets-alice")
