"""The SQL and Datalog panes beside the canvas, in Debian's Chromium (Playwright, no
downloaded browser): the seed's transactions views compile to a laid-out circuit whose
nodes link to their SQL both ways, an error is marked at its line:column, the circuit is
edited, saved with its SQL, and exported back to SQL (or the node SQL cannot express is
named); a transitive-closure Datalog program compiles to a fixed point linked to its rules."""
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.chromium import new_context, shared_browser
from tests.browser.editor_steps import connect, drop_from_palette, node, select
from tests.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

TRANSACTIONS_SQL = (Path(__file__).resolve().parents[2] / "examples" / "sql" / "transactions.sql").read_text()
CLOSURE = """.decl edge(src: number, dst: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
.output path
"""


@pytest.fixture
def page(live_stack, make_user):
    make_user("linguist", "linguist-pass-123")
    browser = shared_browser()
    context = new_context(browser, base_url=live_stack.base_url, viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto("/")
    page.get_by_test_id("login-username").fill("linguist")
    page.get_by_test_id("login-password").fill("linguist-pass-123")
    page.get_by_test_id("login-submit").click()
    expect(page.get_by_test_id("current-user")).to_have_text("linguist")
    yield page
    context.close()


def put_cursor(page, line: int, column: int, end: tuple[int, int] | None = None) -> None:
    """Puts the text cursor at line:column (or selects up to `end`), as a click or a drag
    in the text would (the text wraps in the pane, so arrow keys move by screen lines)."""
    page.get_by_test_id("source-text").evaluate(
        """(el, [start, end]) => {
            const offset = ([line, column]) => el.value.split('\\n').slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0) + column - 1;
            el.focus();
            el.setSelectionRange(offset(start), offset(end));
        }""", [[line, column], list(end or (line, column))])
    page.keyboard.press("Shift")  # a key up: what ends a person's selection


def selected_nodes(page) -> set[str]:
    return set(page.locator('.react-flow__node.selected [data-testid="circuit-node"]').evaluate_all(
        "els => els.map(e => e.dataset.nodeId)"))


def test_sql_pane_compile_link_error_edit_save_and_export(page):
    page.get_by_test_id("new-circuit").click()
    page.get_by_test_id("toggle-source").click()
    page.get_by_test_id("source-text").fill(TRANSACTIONS_SQL)
    page.get_by_test_id("source-compile").click()
    for view in ("credits", "debits", "balance", "total"):
        expect(node(page, view)).to_have_count(1)
    expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "true")
    # laid out: no two nodes at the same place
    boxes = [node(page, n).bounding_box() for n in ("transactions", "credits", "debits", "balance", "total")]
    assert len({(round(b["x"]), round(b["y"])) for b in boxes}) == 5

    # A node -> its SQL highlighted.
    select(page, "total")
    expect(page.get_by_test_id("source-linked-mark")).to_have_text("total")
    select(page, "balance_join")
    expect(page.get_by_test_id("source-linked-mark")).to_have_text("debits d ON c.to_acct = d.from_acct")
    page.screenshot(path=str(ARTIFACTS / "sql-pane-linked.png"))

    # The cursor in the text -> its node selected (the innermost: the join, not the view's map).
    put_cursor(page, 17, 24)
    expect(page.get_by_test_id("node-panel")).to_have_attribute("data-node-id", "balance_join")
    # A selection across two views selects the nodes of both.
    put_cursor(page, 9, 13, end=(13, 70))
    expect(page.locator('.react-flow__node.selected')).to_have_count(4)
    assert selected_nodes(page) == {"credits", "credits_group_by", "debits", "debits_group_by"}

    # The compiled circuit is edited like a drawn one, and saved with its SQL.
    select(page, "total")
    page.get_by_test_id("delete").click()
    expect(node(page, "total")).to_have_count(0)
    page.get_by_test_id("circuit-name-input").fill("Ledger from SQL")
    page.get_by_test_id("save-version").click()
    expect(page.get_by_test_id("circuit-name")).to_contain_text("Ledger from SQL")
    page.reload()
    expect(page.get_by_test_id("source-pane")).to_be_visible()  # reopened: the version keeps its SQL
    expect(page.get_by_test_id("source-text")).to_have_value(TRANSACTIONS_SQL)
    expect(node(page, "total")).to_have_count(0)
    expect(page.get_by_test_id("source-link-state")).to_contain_text("linked")

    # Export SQL of the edited circuit: the deleted view is gone.
    page.get_by_test_id("export-sql").click()
    exported = page.get_by_test_id("exported-sql")
    expect(exported).to_contain_text("CREATE VIEW balance")
    expect(exported).not_to_contain_text("CREATE VIEW total")
    page.screenshot(path=str(ARTIFACTS / "sql-pane-export.png"))

    # A node SQL cannot express: Export SQL names it and selects it.
    drop_from_palette(page, "difference", 160, 120)
    connect(page, "transactions", "out", "difference", "a")
    connect(page, "transactions", "out", "difference", "b")
    page.get_by_test_id("export-sql").click()
    expect(page.get_by_test_id("source-notice")).to_contain_text("node 'difference'")
    expect(page.get_by_test_id("source-notice")).to_contain_text("negative rows")
    expect(page.get_by_test_id("node-panel")).to_have_attribute("data-node-id", "difference")

    # An error in the text -> marked at its line:column; nothing replaces the circuit.
    broken = TRANSACTIONS_SQL.replace("SUM(amount) AS debits", "SUM(amuont) AS debits")
    page.get_by_test_id("source-text").fill(broken)
    page.get_by_test_id("source-compile").click()
    expect(page.get_by_test_id("source-problem-mark")).to_have_text("amuont")
    problem = page.get_by_test_id("source-problems")
    column = broken.split("\n")[12].index("amuont") + 1
    expect(problem).to_contain_text(f"13:{column}")
    expect(problem).to_contain_text("amuont")
    expect(node(page, "difference")).to_have_count(1)
    page.screenshot(path=str(ARTIFACTS / "sql-pane-error.png"))


def test_datalog_pane_transitive_closure(page):
    page.get_by_test_id("new-circuit").click()
    page.get_by_test_id("toggle-source").click()
    page.get_by_test_id("source-tab-datalog").click()
    page.get_by_test_id("source-text").fill(CLOSURE)
    page.get_by_test_id("source-compile").click()
    expect(page.locator('[data-testid="circuit-node"][data-kind="fixedpoint"]')).to_have_count(1)
    expect(node(page, "r2_path_join")).to_have_count(1)
    expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "true")

    # A node inside the fixed point -> its rule highlighted.
    select(page, "r2_path_join")
    expect(page.get_by_test_id("source-linked-mark")).to_have_text("path(x, z) :- path(x, y), edge(y, z).")
    page.screenshot(path=str(ARTIFACTS / "datalog-pane-linked.png"))
    # The cursor in rule 1's body -> rule 1's nodes (its stratum's fixed point starts there);
    # in its head -> the head's nodes (the previous iteration, the set, the export).
    put_cursor(page, 2, 18)
    expect(page.locator('.react-flow__node.selected')).to_have_count(2)
    assert selected_nodes(page) == {"path_fixpoint", "r1_path_edge_vars"}
    put_cursor(page, 2, 3)
    expect(page.locator('.react-flow__node.selected')).to_have_count(3)
    assert selected_nodes(page) == {"path_prev", "path_set", "path_out"}

    # An unsafe variable is marked at its line:column.
    page.get_by_test_id("source-text").fill(CLOSURE.replace("edge(y, z).", "edge(y, w)."))
    page.get_by_test_id("source-compile").click()
    expect(page.get_by_test_id("source-problems")).to_contain_text("3:")
    expect(page.get_by_test_id("source-problems")).to_contain_text("unsafe variable z")
    expect(page.get_by_test_id("source-problem-mark")).to_have_count(1)
    page.screenshot(path=str(ARTIFACTS / "datalog-pane-error.png"))
