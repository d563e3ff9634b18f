"""A new user in Debian's Chromium (Playwright, no downloaded browser) builds DBSP.md's
transactions circuit from the palette by dragging and wiring, configures it in the side
panel, saves it, sees the compiled plan beside it, runs it, pushes the three transactions
from the form and sees the balances, the total 0, 20, 0 and the graph's frontier badges
advance tick by tick; exports and re-imports it; shares it and a second user opens the
link read-only (where Shift+L and the other editing shortcuts change nothing) and forks it."""
import json
import time

import pytest
from playwright.sync_api import expect

from circuits import services
from tests.browser.chromium import TIMEOUT_MS, next_frame
from tests.browser.user_steps import pages
from tests.browser.editor_steps import (
    build_transactions,
    connect,
    drag_node,
    drop_from_palette,
    drop_wire_on_canvas,
    node,
    select,
)
from tests.conftest import ARTIFACTS, example

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

TRANSACTIONS = [(0, 1, 2, 50), (1, 2, 3, 30), (2, 3, 1, 20)]


@pytest.fixture
def browser(live_stack):
    with pages(live_stack.base_url, viewport={"width": 1800, "height": 1100}, accept_downloads=True) as new_page:
        yield new_page


def log_in(page, username, password):
    page.goto("/")
    page.get_by_test_id("login-username").fill(username)
    page.get_by_test_id("login-password").fill(password)
    page.get_by_test_id("login-submit").click()
    expect(page.get_by_test_id("current-user")).to_have_text(username)


def row_cells(table):
    rows = table.get_by_test_id("view-row")
    return {tuple(rows.nth(i).locator("td:not(.row-action)").all_inner_texts()) for i in range(rows.count())}


def test_sign_up_from_the_login_page(browser):
    page = browser()
    page.goto("/")
    page.get_by_test_id("to-signup").click()
    page.get_by_test_id("signup-username").fill("newcomer")
    page.get_by_test_id("signup-password").fill("a-long-pass-123")
    page.get_by_test_id("signup-confirm").fill("a-long-pass-456")
    page.get_by_test_id("signup-submit").click()
    expect(page.get_by_test_id("signup-error")).to_contain_text("password")
    page.get_by_test_id("signup-confirm").fill("a-long-pass-123")
    page.get_by_test_id("signup-submit").click()
    expect(page.get_by_test_id("current-user")).to_have_text("newcomer")
    expect(page.get_by_test_id("new-circuit")).to_be_visible()


def sign_up(page, username, password):
    page.goto("/#/signup")
    page.get_by_test_id("signup-username").fill(username)
    page.get_by_test_id("signup-password").fill(password)
    page.get_by_test_id("signup-confirm").fill(password)
    page.get_by_test_id("signup-submit").click()
    expect(page.get_by_test_id("current-user")).to_have_text(username)


def export_json(page, path):
    """Clicks Export JSON and returns the downloaded document (kept at `path`)."""
    with page.expect_download() as download:
        page.get_by_test_id("export-json").click()
    download.value.save_as(str(path))
    return json.loads(path.read_text())


def assert_side_by_side(page):
    """The compiled plan sits to the right of the circuit editor, at the same height."""
    editor = page.get_by_test_id("circuit-editor").bounding_box()
    plan = page.get_by_test_id("plan-pane").bounding_box()
    assert plan["x"] >= editor["x"] + editor["width"] - 1, (editor, plan)
    assert plan["y"] < editor["y"] + editor["height"] and editor["y"] < plan["y"] + plan["height"], (editor, plan)
    assert plan["x"] + plan["width"] <= page.viewport_size["width"], (plan, page.viewport_size)


def assert_inside(page, inner, outer, timeout_ms=TIMEOUT_MS):
    """Waits until `inner`'s box lies within `outer`'s (e.g. a node within the canvas after a fit)."""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        a, b = inner.bounding_box(), outer.bounding_box()
        inside = (a and b and a["x"] >= b["x"] - 1 and a["y"] >= b["y"] - 1
                  and a["x"] + a["width"] <= b["x"] + b["width"] + 1 and a["y"] + a["height"] <= b["y"] + b["height"] + 1)
        if inside:
            return
        assert time.monotonic() < deadline, (a, b)
        page.wait_for_timeout(100)


def test_build_run_export_reimport_share_and_fork_the_transactions_circuit(live_stack, browser):
    page = browser()
    sign_up(page, "builder", "builder-pass-123")

    page.get_by_test_id("new-circuit").click()
    build_transactions(page)
    expect(page.get_by_test_id("circuit-node")).to_have_count(8)

    # A wire the engine would reject is refused, with the reason.
    page.get_by_test_id("handle-transactions-out").drag_to(page.get_by_test_id("handle-by_account-left"))
    expect(page.get_by_test_id("editor-notice")).to_contain_text("already connected")

    # Delete and undo/redo from the keyboard.
    select(page, "total")
    page.keyboard.press("Delete")
    expect(node(page, "total")).to_have_count(0)
    page.keyboard.press("Control+z")
    expect(node(page, "total")).to_have_count(1)
    page.keyboard.press("Control+Shift+z")
    expect(node(page, "total")).to_have_count(0)
    page.keyboard.press("Control+z")
    expect(node(page, "total")).to_have_count(1)

    # Copy/paste as circuit JSON gets fresh ids; undo takes it back.
    select(page, "balances")
    page.keyboard.press("Control+c")
    page.keyboard.press("Control+v")
    expect(node(page, "balances_copy")).to_have_count(1)
    page.keyboard.press("Control+z")
    expect(node(page, "balances_copy")).to_have_count(0)
    expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "true")

    page.get_by_test_id("circuit-name-input").fill("Transactions")
    page.get_by_test_id("save-version").click()
    expect(page.get_by_test_id("circuit-name")).to_contain_text("Transactions")
    expect(page.get_by_test_id("circuit-node")).to_have_count(8)
    circuit_url = page.url

    # The compiled plan beside it shows the inserted integrators and delays.
    page.get_by_test_id("toggle-plan").click()
    expect(page.locator('[data-testid="plan-circuit-node"][data-kind="integrate"]').first).to_be_visible()
    expect(page.locator('[data-testid="plan-circuit-node"][data-kind="delay"]').first).to_be_visible()
    expect(page.get_by_test_id("plan-loading")).to_have_count(0)
    assert_side_by_side(page)
    page.screenshot(path=str(ARTIFACTS / "editor-transactions.png"), full_page=True)
    # On a 1280px-wide window too: side by side, the circuit refitted into its narrower canvas.
    page.get_by_test_id("toggle-plan").click()
    expect(page.get_by_test_id("plan-pane")).to_have_count(0)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_test_id("toggle-plan").click()
    expect(page.locator('[data-testid="plan-circuit-node"][data-kind="integrate"]').first).to_be_visible()
    assert_side_by_side(page)
    assert page.get_by_test_id("editor-canvas").bounding_box()["width"] >= 400
    expect(page.get_by_test_id("palette")).to_be_visible()
    for node_id in ("transactions", "total"):
        assert_inside(page, node(page, node_id), page.get_by_test_id("editor-canvas"))
    page.screenshot(path=str(ARTIFACTS / "editor-transactions-plan-1280.png"), full_page=True)
    page.set_viewport_size({"width": 1800, "height": 1100})

    exported_path = ARTIFACTS / "transactions.circuit.json"
    exported = export_json(page, exported_path)
    assert exported["format"] == "dbspweb.circuit"
    assert sorted(n["id"] for n in exported["nodes"]) == sorted(
        ["transactions", "credits_by_account", "debits_by_account", "by_account", "balances", "balance",
         "sum_of_balances", "total"])
    assert len(exported["edges"]) == 8

    # Run it and push the three transactions from the form.
    page.get_by_test_id("start-run").click()
    expect(page.get_by_test_id("run-status")).to_have_text("running")
    totals = page.get_by_test_id("view-table-total")
    for tick, (tid, src, dst, amount) in enumerate(TRANSACTIONS):
        for column, value in (("id", tid), ("from_acct", src), ("to_acct", dst), ("amount", amount)):
            page.get_by_test_id(f"push-field-transactions-{column}").fill(str(value))
        page.get_by_test_id("push-insert-transactions").click()
        expect(page.get_by_test_id("run-tick")).to_have_text(str(tick))
        expected_total = [0, 20, 0][tick]
        expect(totals.get_by_test_id("view-row")).to_have_count(1)
        expect(totals.get_by_test_id("view-row")).to_contain_text(str(expected_total))
        inserted = page.get_by_test_id("delta-feed-total").locator(f'[data-testid="delta-row"][data-tick="{tick}"][data-weight="1"]')
        expect(inserted).to_contain_text(f"total: {expected_total}")
        # The frontier badges on the graph advance with each push: the input read this
        # tick's row, and the output node's frontier reached the same tick.
        expect(page.get_by_test_id("graph-node-total")).to_be_visible()
        expect(page.get_by_test_id("node-badge-total")).to_have_attribute("data-frontier-tick", str(tick))
        expect(page.get_by_test_id("node-badge-total")).to_contain_text(f"tick {tick}")
        expect(page.get_by_test_id("node-badge-transactions")).to_have_attribute("data-frontier-tick", str(tick))
        expect(page.get_by_test_id("node-badge-transactions")).to_have_attribute("data-rows-in", "1")
        page.screenshot(path=str(ARTIFACTS / f"dashboard-transactions-tick-{tick}.png"), full_page=True)
    balance = page.get_by_test_id("view-table-balance")
    expect(balance.get_by_test_id("view-row")).to_have_count(3)
    assert row_cells(balance) == {("1", "-30"), ("2", "20"), ("3", "10")}
    page.screenshot(path=str(ARTIFACTS / "dashboard-transactions.png"), full_page=True)

    # Re-import the exported file into a new circuit: the same circuit, valid, saved.
    page.goto(circuit_url.split("#")[0] + "#/circuits/new")
    page.get_by_test_id("import-file").set_input_files(str(exported_path))
    expect(page.get_by_test_id("circuit-node")).to_have_count(8)
    expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "true")
    page.get_by_test_id("circuit-name-input").fill("Transactions (imported)")
    page.get_by_test_id("save-version").click()
    expect(page.get_by_test_id("circuit-name")).to_contain_text("Transactions (imported)")
    expect(page.get_by_test_id("circuit-node")).to_have_count(8)

    # Share the circuit by link; another new user opens it read-only and forks it.
    page.goto(circuit_url)
    page.get_by_test_id("share").click()
    page.get_by_test_id("share-visibility").select_option("unlisted")
    link = page.get_by_test_id("share-url")
    expect(link).not_to_have_value("")
    visitor = browser()
    sign_up(visitor, "reader", "reader-pass-123")
    visitor.goto(link.input_value())
    expect(visitor.get_by_test_id("read-only")).to_contain_text("builder")
    expect(visitor.get_by_test_id("circuit-node")).to_have_count(8)
    expect(visitor.get_by_test_id("palette")).to_have_count(0)
    # Read-only, the editing shortcuts change nothing: not auto-layout (Shift+L), delete,
    # cut, paste, group or undo; the exported document keeps the owner's positions.
    shared = export_json(visitor, ARTIFACTS / "transactions-shared.circuit.json")
    visitor.get_by_test_id("editor-canvas").click(position={"x": 8, "y": 8})
    visitor.keyboard.press("Control+a")
    visitor.keyboard.press("Control+c")
    for key in ("Shift+L", "Delete", "Backspace", "Control+x", "Control+v", "Control+g", "Control+z", "Control+Shift+z"):
        visitor.keyboard.press(key)
    next_frame(visitor)  # every key press handled, whatever it changed drawn
    expect(visitor.get_by_test_id("circuit-node")).to_have_count(8)
    expect(visitor.get_by_test_id("unsaved")).to_have_count(0)
    assert export_json(visitor, ARTIFACTS / "transactions-shared-after-keys.circuit.json") == shared
    assert {n["id"]: n.get("position") for n in shared["nodes"]} == {n["id"]: n.get("position") for n in exported["nodes"]}
    visitor.get_by_test_id("fork").click()
    expect(visitor.get_by_test_id("save-version")).to_be_visible()
    expect(visitor.get_by_test_id("circuit-node")).to_have_count(8)
    visitor.screenshot(path=str(ARTIFACTS / "editor-forked.png"), full_page=True)


def test_editor_quick_add_grouping_layout_rename_and_history(live_stack, browser, make_user):
    owner = make_user("habits", "habits-pass-123")
    circuit = services.create_circuit(owner, "Transactions", "", "private", example("transactions"))
    page = browser()
    log_in(page, "habits", "habits-pass-123")
    page.get_by_test_id("circuit-item").get_by_role("link", name="Transactions").click()
    expect(page.get_by_test_id("circuit-node")).to_have_count(10)
    # Every port shows its inferred schema on hover.
    expect(page.get_by_test_id("handle-by_account-left")).to_have_attribute("title", "left: to_acct bigint not null, credits bigint")

    # Drop a wire on empty canvas: a searchable menu adds a connected node.
    drop_wire_on_canvas(page, "balances", "out")
    page.get_by_test_id("quick-add-search").fill("filter")
    page.get_by_test_id("quick-add-search").press("Enter")
    expect(node(page, "filter")).to_have_count(1)
    expect(page.locator('.react-flow__edge[data-id="balances.out->filter.in"]')).to_have_count(1)
    # Its empty predicate is an error on that node, shown on the node and in the form.
    expect(page.get_by_test_id("node-errors-filter")).to_contain_text("predicate")
    page.get_by_test_id("param-predicate").fill("balance >")
    expect(page.get_by_test_id("param-predicate-error")).to_contain_text("filter")
    page.get_by_test_id("param-predicate").fill("balance > 0")
    expect(page.get_by_test_id("node-errors-filter")).to_have_count(0)
    expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "true")

    # Select three nodes (shift-click) and group them into a fixed point; undo ungroups.
    select(page, "credits_by_account")
    node(page, "debits_by_account").locator(".op-head").click(modifiers=["Shift"])
    node(page, "by_account").locator(".op-head").click(modifiers=["Shift"])
    page.get_by_test_id("group-fixedpoint").click()
    group = node(page, "fixedpoint")
    expect(group).to_have_count(1)
    expect(page.get_by_test_id("handle-fixedpoint-transactions_in")).to_have_count(1)
    expect(page.get_by_test_id("handle-fixedpoint-by_account_out")).to_have_count(1)
    expect(node(page, "transactions_in")).to_have_attribute("data-kind", "import")
    page.screenshot(path=str(ARTIFACTS / "editor-fixedpoint-group.png"))
    page.get_by_test_id("undo").click()
    expect(group).to_have_count(0)
    expect(node(page, "credits_by_account")).to_have_count(1)
    # Redo groups again; Ungroup restores the original wiring.
    page.get_by_test_id("redo").click()
    expect(group).to_have_count(1)
    group.click(position={"x": 8, "y": 8})
    page.get_by_test_id("ungroup-fixedpoint").click()
    expect(group).to_have_count(0)
    expect(page.locator('.react-flow__edge[data-id="transactions.out->credits_by_account.in"]')).to_have_count(1)
    expect(page.locator('.react-flow__edge[data-id="by_account.out->balances.in"]')).to_have_count(1)

    page.get_by_test_id("auto-layout").click()
    page.get_by_test_id("save-version").click()
    expect(page.get_by_test_id("save-status")).to_contain_text("version 2")

    page.get_by_test_id("rename").click()
    page.get_by_test_id("circuit-name-input").fill("Ledger")
    page.get_by_test_id("rename-save").click()
    expect(page.get_by_test_id("circuit-name")).to_have_text("Ledger")

    # Restore version 1: saved as version 3, without the filter.
    page.get_by_test_id("toggle-history").click()
    expect(page.get_by_test_id("version-item")).to_have_count(2)
    page.get_by_test_id("version-restore-1").click()
    expect(page.get_by_test_id("save-status")).to_contain_text("version 3")
    expect(node(page, "filter")).to_have_count(0)
    expect(page.get_by_test_id("version-item")).to_have_count(3)
    # Copy two wired nodes, open a new circuit and paste them there (clipboard as circuit JSON).
    select(page, "balances")
    node(page, "balance").locator(".op-head").click(modifiers=["Shift"])
    page.keyboard.press("Control+c")
    page.get_by_test_id("copy").click()  # the toolbar button copies too
    page.goto("/#/circuits/new")
    expect(page.get_by_test_id("circuit-node")).to_have_count(0)
    page.get_by_test_id("editor-canvas").click(position={"x": 30, "y": 30})
    page.keyboard.press("Control+v")
    expect(page.get_by_test_id("circuit-node")).to_have_count(2)
    expect(page.locator('.react-flow__edge[data-id="balances.out->balance.in"]')).to_have_count(1)
    # The pasted map has no input yet: the engine says so, on that node.
    expect(page.get_by_test_id("node-errors-balances")).to_contain_text("in")

    circuit.refresh_from_db()
    assert circuit.name == "Ledger"
    assert circuit.latest_version.number == 3
    assert circuit.latest_version.document["nodes"] == example("transactions")["nodes"]


def test_a_fixed_point_built_by_hand(live_stack, browser, make_user):
    make_user("recurser", "recurser-pass-123")
    page = browser()
    log_in(page, "recurser", "recurser-pass-123")
    page.get_by_test_id("new-circuit").click()
    drop_from_palette(page, "fixedpoint", 400, 200)
    # Dropped inside the fixed point's box, a node joins its subcircuit: a delta0 becomes its input port.
    drop_from_palette(page, "delta0", 500, 300)
    expect(page.get_by_test_id("handle-fixedpoint-delta0")).to_have_count(1)
    # A node dragged into the box joins it too.
    drop_from_palette(page, "distinct", 300, 650)
    group = node(page, "fixedpoint").bounding_box()
    drag_node(page, "distinct", group["x"] + 60, group["y"] + 140)
    expect(page.get_by_test_id("editor-notice")).to_contain_text("Moved distinct into fixed point fixedpoint")
    connect(page, "delta0", "out", "distinct", "in")
    # A wire from outside straight to a node inside is refused, with the reason.
    drop_from_palette(page, "input", 150, 650)
    page.get_by_test_id("handle-input-out").drag_to(page.get_by_test_id("handle-distinct-in"))
    expect(page.get_by_test_id("editor-notice")).to_contain_text("inside fixed point fixedpoint")
    connect(page, "input", "out", "fixedpoint", "delta0")
    page.screenshot(path=str(ARTIFACTS / "editor-fixedpoint-by-hand.png"))


def test_a_shared_link_opens_read_only_and_forks(live_stack, browser, make_user):
    owner = make_user("sharer", "sharer-pass-123")
    make_user("visitor", "visitor-pass-123")
    circuit = services.create_circuit(owner, "Transactions", "", "private", example("transactions"))

    page = browser()
    log_in(page, "sharer", "sharer-pass-123")
    page.get_by_test_id(f"share-{circuit.pk}").click()
    page.get_by_test_id("share-visibility").select_option("unlisted")
    link = page.get_by_test_id("share-url")
    expect(link).not_to_have_value("")
    url = link.input_value()

    visitor = browser()
    log_in(visitor, "visitor", "visitor-pass-123")
    visitor.goto(url)
    expect(visitor.get_by_test_id("read-only")).to_be_visible()
    expect(visitor.get_by_test_id("circuit-node")).to_have_count(10)
    expect(visitor.get_by_test_id("palette")).to_have_count(0)
    expect(visitor.get_by_test_id("save-version")).to_have_count(0)
    visitor.screenshot(path=str(ARTIFACTS / "shared-read-only.png"), full_page=True)
    visitor.get_by_test_id("fork").click()
    expect(visitor.get_by_test_id("save-version")).to_be_visible()
    expect(visitor.get_by_test_id("circuit-node")).to_have_count(10)
    expect(visitor.get_by_test_id("read-only")).to_have_count(0)

    # Sharing with a named user: it shows under "Shared with me" in their list.
    page.get_by_test_id("share-grantee").fill("nobody-such")
    page.get_by_test_id("share-grant-add").click()
    expect(page.get_by_test_id("share-error")).to_contain_text("nobody-such")
    page.get_by_test_id("share-grantee").fill("visitor")
    page.get_by_test_id("share-grant-add").click()
    expect(page.get_by_test_id("share-grant")).to_have_count(1)
    expect(page.get_by_test_id("share-grant")).to_contain_text("visitor")
    visitor.goto("/#/")
    visitor.get_by_test_id("scope-shared").click()
    expect(visitor.get_by_test_id("circuit-item")).to_have_count(1)
    expect(visitor.get_by_test_id("circuit-item")).to_contain_text("Transactions")
    visitor.get_by_test_id("scope-mine").click()
    expect(visitor.get_by_test_id("circuit-item")).to_have_count(1)  # the fork
    expect(visitor.get_by_test_id("circuit-item")).to_contain_text("(fork)")

    # Revoking the token kills the old link.
    page.get_by_test_id("share-revoke").click()
    expect(link).not_to_have_value(url)
    visitor.goto(url)
    expect(visitor.get_by_test_id("shared-error")).to_be_visible()


def test_version_history_shows_the_diff_against_the_latest(live_stack, browser, make_user):
    owner = make_user("differ", "differ-pass-123")
    first = example("transactions")
    circuit = services.create_circuit(owner, "Transactions", "", "private", first)
    second = json.loads(json.dumps(first))
    second["nodes"] = [n for n in second["nodes"] if n["id"] != "debits"]
    second["edges"] = [e for e in second["edges"] if e["to"]["node"] != "debits"]
    next(n for n in second["nodes"] if n["id"] == "balances")["params"]["columns"][1]["expr"] = "debits - credits"
    services.add_version(circuit, second)
    page = browser()
    log_in(page, "differ", "differ-pass-123")
    page.goto(f"/#/circuits/{circuit.pk}")
    page.get_by_test_id("toggle-history").click()
    page.get_by_test_id("version-diff-1").click()
    diff = page.get_by_test_id("version-diff")
    expect(diff).to_contain_text("v1 → v2")
    expect(diff).to_contain_text("− node debits (output)")
    # A changed field shows what it was and what it became.
    columns = diff.locator('[data-testid=diff-field][data-field="params.columns"]')
    expect(columns).to_contain_text('"expr":"credits - debits"}] → [')
    expect(columns).to_contain_text('"expr":"debits - credits"}]')
    expect(diff).to_contain_text("− wire debits_by_account.out → debits.in")
