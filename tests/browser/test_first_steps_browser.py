"""Issue 14: what a new user meets first, in Debian's Chromium (Playwright, no downloaded
browser) at 1440x900 against the real stack (uvicorn + Celery worker + Spark).

The run dashboard shows its outputs without scrolling, charts row counts and scalar views
(never sums of ids), colours nodes on a neutral scale with a legend, and asks before
stopping a run. The editor opens the Big orders demo and an imported document without
positions with no node on another or under the minimap, edits window durations as a
number and a unit, finds "sum" by name, pastes beside the original, asks before leaving
unsaved work or running it, shows a version diff's old and new values, and deletes a
circuit after confirmation. Screenshots go to tests/artifacts/first-steps-*.png.

Each test takes 25-50 s on the 2-core machine (a live run on Spark, a real browser, ELK
loaded on demand): each walks a whole first-visit path, so there are only three.
"""
import copy
import json
import re
import time

import httpx
import pytest
from playwright.sync_api import expect

from circuits import services
from tests.browser.chromium import TIMEOUT_S, answered, settled, settled_zoom
from tests.browser.user_steps import pages
from tests.browser.editor_steps import node, select
from tests.conftest import ARTIFACTS, EXAMPLES, example

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

VIEWPORT = {"width": 1440, "height": 900}
PASSWORD = "first-steps-123"


@pytest.fixture
def browser(live_stack):
    with pages(live_stack.base_url, viewport=VIEWPORT, accept_downloads=True) as new_page:
        yield new_page


def log_in(page, username):
    page.goto("/")
    page.get_by_test_id("login-username").fill(username)
    page.get_by_test_id("login-password").fill(PASSWORD)
    page.get_by_test_id("login-submit").click()
    expect(page.get_by_test_id("current-user")).to_have_text(username)


def shot(page, name):
    page.screenshot(path=str(ARTIFACTS / f"first-steps-{name}.png"))


def node_boxes(page):
    """The page boxes of the canvas's nodes, by id, once they stopped moving."""
    return settled(page, """() => Object.fromEntries([...document.querySelectorAll('[data-testid=circuit-node]')]
        .map(el => { const r = el.getBoundingClientRect(); return [el.dataset.nodeId, [r.x, r.y, r.width, r.height]]; }))""")


def overlaps(a, b):
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def assert_apart(page):
    """No node on another, none under the minimap, all inside the canvas."""
    boxes = node_boxes(page)
    ids = sorted(boxes)
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            assert not overlaps(boxes[a], boxes[b]), f"{a} {boxes[a]} overlaps {b} {boxes[b]}"
    minimap = page.locator(".react-flow__minimap").bounding_box()
    canvas = page.get_by_test_id("editor-canvas").bounding_box()
    for n, box in boxes.items():
        assert not overlaps(box, [minimap["x"], minimap["y"], minimap["width"], minimap["height"]]), f"{n} is under the minimap"
        assert canvas["x"] <= box[0] and box[0] + box[2] <= canvas["x"] + canvas["width"], f"{n} is cut off"
        assert canvas["y"] <= box[1] and box[1] + box[3] <= canvas["y"] + canvas["height"], f"{n} is cut off"
    return boxes


def wait_apart(page):
    """assert_apart once the editor laid out (ELK loads on first use): each try reads the
    boxes once they stopped moving (animation frames), until the one deadline."""
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        try:
            return assert_apart(page)
        except AssertionError:
            if time.monotonic() > deadline:
                raise


def test_dashboard_outputs_first_chart_defaults_neutral_colours_and_stop_confirm(live_stack, browser, make_user):
    from rest_framework.authtoken.models import Token

    user = make_user("newdash", PASSWORD)
    circuit = services.create_circuit(user, "Transactions", "", "private", example("transactions"))
    client = httpx.Client(base_url=live_stack.base_url, headers={"Authorization": f"Token {Token.objects.create(user=user).key}"},
                          timeout=30)
    page = browser()
    log_in(page, "newdash")
    page.goto(f"/#/circuits/{circuit.id}")
    page.get_by_test_id("start-run").click()
    expect(page.get_by_test_id("run-status")).to_have_text("running")
    run_id = int(page.url.rsplit("/", 1)[-1])
    # The three transactions of DBSP.md, one push (one tick) each, as `python -m dbsp run` reads them.
    for line in (EXAMPLES / "transactions.pushes.jsonl").read_text().splitlines():
        for input_name, records in json.loads(line).items():
            assert client.post(f"/api/runs/{run_id}/inputs/{input_name}/push/", json=records).status_code == 202
    expect(page.get_by_test_id("run-lag")).to_have_text("0 pushes")
    expect(page.get_by_test_id("view-table-total").get_by_test_id("view-row")).to_have_text("0")
    page.evaluate("window.scrollTo(0, 0)")

    # Every output is in sight without scrolling at 1440x900: its name and first row.
    for view in ("balance", "total"):
        card = page.get_by_test_id(f"output-view-{view}")
        expect(card).to_be_in_viewport()
        first_row = card.get_by_test_id("view-row").first
        box = first_row.bounding_box()
        assert box and box["y"] + box["height"] <= VIEWPORT["height"], f"{view}'s first row is below the fold: {box}"
    shot(page, "dashboard-outputs-first")

    # The chart plots the scalar total and the balance's row count by default; never the
    # sums of a column of many rows (Σ account would add account ids).
    expect(page.get_by_test_id("chart-series-total.total")).to_be_checked()
    expect(page.get_by_test_id("chart-series-balance.count(*)")).to_be_checked()
    expect(page.get_by_test_id("chart-series-balance.account")).not_to_be_checked()
    expect(page.get_by_test_id("chart-series-balance.balance")).not_to_be_checked()
    # The legend names each series and shows its latest value; the balance view has 3 rows.
    expect(page.get_by_test_id("chart-legend-balance.count(*)")).to_have_text(re.compile(r"balance rows\s*=\s*3"))
    expect(page.get_by_test_id("chart-legend-total.total")).to_have_text(re.compile(r"total\.total\s*=\s*0"))
    # The y axis labels are not clipped: every label lies inside the chart's box.
    chart = page.get_by_test_id("chart-canvas")
    chart.scroll_into_view_if_needed()
    chart_box = chart.bounding_box()
    labels = page.locator(".chart-canvas .u-axis").nth(1).locator(".u-label, div").all()
    for label in labels:
        b = label.bounding_box()
        if b and b["width"] > 0 and label.inner_text().strip():
            assert b["x"] >= chart_box["x"] - 1, f"axis label {label.inner_text()!r} is clipped at {b}"

    # Node colours: one neutral hue (no red/orange for a fast input), with a named legend.
    graph = page.get_by_test_id("run-graph")
    graph.scroll_into_view_if_needed()
    expect(page.get_by_test_id("graph-caption")).to_contain_text("share of the tick's time")
    expect(page.get_by_test_id("graph-scale")).to_be_visible()
    for node_id in ("transactions", "credits_by_account", "by_account", "balances", "total"):
        rgb = page.get_by_test_id(f"graph-node-{node_id}").evaluate("el => getComputedStyle(el).backgroundColor")
        r, g, b = (int(v) for v in re.findall(r"\d+", rgb)[:3])
        assert b >= r, f"{node_id} is filled {rgb}: reads as a warning"
    shot(page, "dashboard-graph-chart")

    # Stopping asks first: dismissed, the run goes on; accepted, it stops.
    page.evaluate("window.scrollTo(0, 0)")
    messages = []
    page.once("dialog", lambda d: (messages.append(d.message), d.dismiss()))
    page.get_by_test_id("stop-run").click()
    assert answered(page, messages) and "Stop run" in messages[0]
    expect(page.get_by_test_id("run-status")).to_have_text("running")
    page.once("dialog", lambda d: d.accept())
    page.get_by_test_id("stop-run").click()
    expect(page.get_by_test_id("run-status")).to_have_text("stopped")
    client.close()


def test_editor_layout_durations_palette_paste_and_confirmations(live_stack, browser, make_user, tmp_path):
    user = make_user("neweditor", PASSWORD)
    big = services.create_circuit(user, "Big orders", "", "private", example("big_orders"))
    windows = services.create_circuit(user, "Sensor windows", "", "private", example("sensor_windows"))
    page = browser()
    log_in(page, "neweditor")

    # The Big orders demo opens with its input beside its filter, not on it.
    page.goto(f"/#/circuits/{big.id}")
    expect(page.get_by_test_id("circuit-node")).to_have_count(3)
    wait_apart(page)
    expect(page.get_by_test_id("unsaved")).to_have_count(0)  # laying out on open is no edit
    shot(page, "editor-big-orders-open")
    # ... and after a reload nothing sits under the minimap.
    page.reload()
    expect(page.get_by_test_id("circuit-node")).to_have_count(3)
    wait_apart(page)

    # A broken predicate is said on the node without widening it onto its neighbours.
    select(page, "big")
    width = node_boxes(page)["big"][2]
    page.get_by_test_id("param-predicate").fill("amount > > 100 and the rest of a long, long sentence")
    expect(page.get_by_test_id("node-errors-big")).to_be_visible()
    assert node_boxes(page)["big"][2] == width
    wait_apart(page)
    # ... once per place in the panel: under the field, not again in the node's problem list.
    expect(page.get_by_test_id("param-predicate-error")).to_be_visible()
    expect(page.get_by_test_id("node-problems")).to_have_count(0)
    shot(page, "editor-error-on-node")
    page.get_by_test_id("param-predicate").fill("amount > 100")
    expect(page.get_by_test_id("node-errors-big")).to_have_count(0)

    # A pasted node lands beside the original, not on it.
    page.get_by_test_id("copy").click()
    page.get_by_test_id("paste").click()
    expect(node(page, "big_copy")).to_have_count(1)
    boxes = node_boxes(page)
    assert not overlaps(boxes["big"], boxes["big_copy"]), (boxes["big"], boxes["big_copy"])
    shot(page, "editor-pasted")

    # Leaving with unsaved changes asks; staying keeps the edit and the address.
    expect(page.get_by_test_id("unsaved")).to_be_visible()
    asked = []
    page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    page.get_by_role("link", name="Circuits").first.click()
    assert answered(page, asked) and "unsaved changes" in asked[0]
    expect(node(page, "big_copy")).to_have_count(1)
    # The address is put back once the dismissed confirm returns (the page goes on after the event).
    expect(page).to_have_url(re.compile(rf"/#/circuits/{big.id}$"))

    # "Start run" on edited work asks to save a version first; refused, nothing is saved.
    asked.clear()
    page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    page.get_by_test_id("start-run").click()
    assert answered(page, asked) and "Save them as version 2" in asked[0]
    expect(page.get_by_test_id("unsaved")).to_be_visible()
    big.refresh_from_db()
    assert big.latest_version.number == 1

    # A document without positions is laid out on import: no pile on one spot.
    bare = copy.deepcopy(example("sensor_windows"))
    for n in bare["nodes"]:
        n.pop("position", None)
    path = tmp_path / "bare.circuit.json"
    path.write_text(json.dumps(bare))
    page.get_by_test_id("import-file").set_input_files(str(path))
    expect(page.get_by_test_id("circuit-node")).to_have_count(5)
    wait_apart(page)
    shot(page, "editor-imported-without-positions")

    # Palette search finds names first: "sum" is the aggregate (and windows), not union.
    page.get_by_test_id("palette-search").fill("sum")
    expect(page.get_by_test_id("palette-aggregate")).to_be_visible()
    expect(page.get_by_test_id("palette-union")).to_have_count(0)
    expect(page.get_by_test_id("palette-integrate")).to_have_count(0)
    page.get_by_test_id("palette-search").fill("")

    # Leave without saving (accepted), then open the windows demo: durations as number + unit.
    page.once("dialog", lambda d: d.accept())
    page.get_by_role("link", name="Circuits").first.click()
    expect(page.get_by_test_id("new-circuit")).to_be_visible()
    page.goto(f"/#/circuits/{windows.id}")
    expect(page.get_by_test_id("circuit-node")).to_have_count(5)
    select(page, "per_minute")
    expect(page.get_by_test_id("param-size")).to_have_value("1")
    expect(page.get_by_test_id("param-size-unit")).to_have_value("minutes")
    expect(page.get_by_test_id("param-lateness")).to_have_value("30")
    expect(page.get_by_test_id("param-lateness-unit")).to_have_value("seconds")
    page.get_by_test_id("param-size").fill("2")
    page.get_by_test_id("param-lateness-unit").select_option("minutes")
    page.get_by_test_id("param-lateness").fill("1")
    expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "true")
    page.get_by_test_id("version-message").fill("longer windows, a minute late")
    shot(page, "editor-window-durations")
    page.get_by_test_id("save-version").click()
    expect(page.get_by_test_id("save-status")).to_contain_text("version 2")
    windows.refresh_from_db()
    params = next(n for n in windows.latest_version.document["nodes"] if n["id"] == "per_minute")["params"]
    assert (params["size"], params["lateness"]) == ("2 minutes", "1 minute")
    assert windows.latest_version.message == "longer windows, a minute late"

    # The diff shows what a field was and what it became; history opens in view.
    page.get_by_test_id("toggle-history").click()
    expect(page.get_by_test_id("version-history")).to_be_in_viewport()
    expect(page.get_by_test_id("version-message-2")).to_contain_text("longer windows, a minute late")
    page.get_by_test_id("version-diff-1").click()
    size = page.locator('[data-testid=diff-field][data-field="params.size"]')
    expect(size).to_contain_text("1 minute")
    expect(size).to_contain_text("2 minutes")
    size.scroll_into_view_if_needed()
    shot(page, "editor-version-diff")

    # Deleting asks; dismissed keeps the circuit, accepted removes it and goes home.
    page.evaluate("window.scrollTo(0, 0)")
    asked.clear()
    page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    page.get_by_test_id("delete-circuit").click()
    assert answered(page, asked) and "Delete" in asked[0]
    expect(page.get_by_test_id("circuit-name")).to_have_text("Sensor windows")
    page.once("dialog", lambda d: d.accept())
    page.get_by_test_id("delete-circuit").click()
    expect(page.get_by_test_id("new-circuit")).to_be_visible()
    expect(page.get_by_test_id("circuit-item").filter(has_text="Sensor windows")).to_have_count(0)
    assert not type(windows).objects.filter(pk=windows.pk).exists()


def test_home_demos_jsonl_csv_columns_form_checks_and_full_size_plan(live_stack, browser, make_user, tmp_path):
    owner = make_user("demoowner", PASSWORD)
    long_name = "Big orders — every order above one hundred, watched live as they arrive and leave the view"
    long_text = "input -> filter (amount > 100) -> output. " * 12
    services.create_circuit(owner, long_name, long_text, "public", example("big_orders"))
    make_user("newcomer", PASSWORD)
    page = browser()
    log_in(page, "newcomer")

    # A new user's home page offers the public demos; cards are clamped and show run status.
    demos = page.get_by_test_id("demo-circuits")
    expect(demos).to_be_visible()
    card = demos.get_by_test_id("circuit-item").first
    expect(card.locator("[data-testid^=card-run-]")).to_have_text("no runs yet")
    description = card.get_by_test_id("circuit-description")
    assert description.evaluate("el => el.scrollHeight > el.clientHeight + 2"), "the long description is not clamped"
    assert description.get_attribute("title") == long_text
    title = card.locator(".circuit-link")
    assert title.evaluate("el => el.scrollHeight > el.clientHeight + 2"), "the long title is not clamped"
    shot(page, "home-demos")

    # Open the demo, fork it, run the fork.
    title.click()
    page.get_by_test_id("fork").click()
    expect(page.get_by_test_id("start-run")).to_be_visible()
    circuit_id = int(page.url.rsplit("/", 1)[-1])

    # The compiled plan opens readable beside the editor and full size over the page.
    page.get_by_test_id("toggle-plan").click()
    expect(page.get_by_test_id("plan-pane").get_by_test_id("plan-circuit-node").first).to_be_visible()
    page.get_by_test_id("plan-full-size").click()
    pane = page.get_by_test_id("plan-pane")
    box = pane.bounding_box()
    assert box["width"] > 0.9 * VIEWPORT["width"] and box["height"] > 0.9 * VIEWPORT["height"], box
    zoom = settled_zoom(pane.locator(".react-flow__viewport"))  # once the fit's transition is over
    assert zoom >= 0.7, f"the plan opens at zoom {zoom}: labels too small to read"
    shot(page, "plan-full-size")
    page.get_by_test_id("plan-full-size").click()

    page.get_by_test_id("start-run").click()
    expect(page.get_by_test_id("run-status")).to_have_text("running")
    run_id = int(page.url.rsplit("/", 1)[-1])

    # JSONL: the demo's own push file, previewed, then sent one push per line.
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"orders": [{"insert": {"id": null, "amount": 1.5}}]}\n{"shipments": []}\n')
    page.get_by_test_id("jsonl-file").set_input_files(str(bad))
    expect(page.get_by_test_id("jsonl-summary")).to_contain_text("with errors")
    expect(page.get_by_test_id("jsonl-row").first).to_contain_text("row 0, column 'id': null in a non-null column")
    expect(page.get_by_test_id("jsonl-line-errors")).to_contain_text('line 2: unknown input "shipments"')
    expect(page.get_by_test_id("jsonl-submit")).to_be_disabled()
    page.get_by_test_id("jsonl-file").set_input_files(str(EXAMPLES / "big_orders.pushes.jsonl"))
    expect(page.get_by_test_id("jsonl-summary")).to_contain_text("3 pushes, 4 records, all valid")
    expect(page.get_by_test_id("jsonl-row")).to_have_count(3)
    shot(page, "dashboard-jsonl-preview")
    page.get_by_test_id("jsonl-submit").click()
    expect(page.get_by_test_id("jsonl-result")).to_have_text("Sent 3 pushes.")
    expect(page.get_by_test_id("run-lag")).to_have_text("0 pushes")
    rows = page.get_by_test_id("view-table-big_orders").get_by_test_id("view-row")
    expect(rows).to_have_count(1)
    expect(rows).to_have_text(re.compile(r"3\s*cy\s*120"))

    # The form checks what the server checks, under each field: id is NOT NULL; 1e3 is 1000.
    page.get_by_test_id("push-field-orders-amount").fill("1e3")
    page.get_by_test_id("push-insert-orders").click()
    expect(page.get_by_test_id("push-field-error-orders-id")).to_have_text("id must not be empty (the column is not nullable)")
    shot(page, "dashboard-field-error")
    page.get_by_test_id("push-field-orders-id").fill("7")
    page.get_by_test_id("push-insert-orders").click()
    expect(page.get_by_test_id("push-result-orders")).to_contain_text("Accepted")
    expect(rows).to_have_count(2)
    expect(page.get_by_test_id("view-table-big_orders")).to_contain_text("1000")

    # The CSV preview shows every column of the push: left-out ones as null, _weight as 1.
    page.get_by_test_id("push-tab-csv-orders").click()
    csv = tmp_path / "two.csv"
    csv.write_text("id,amount\n8,500\n")
    page.get_by_test_id("csv-file-orders").set_input_files(str(csv))
    expect(page.get_by_test_id("csv-summary-orders")).to_contain_text("1 row, all valid")
    headers = page.get_by_test_id("csv-preview-orders").locator("th").all_inner_texts()
    assert [h.strip().lower() for h in headers] == ["line", "problems", "id", "amount", "customer", "_weight"], headers
    cells = page.get_by_test_id("csv-row").first.locator("td").all_inner_texts()
    assert [c.strip() for c in cells[2:]] == ["8", "500", "null", "1"], cells
    shot(page, "dashboard-csv-every-column")

    # Back home, the fork's card says its run is running.
    page.get_by_role("link", name="Circuits").first.click()
    status = page.locator(f'[data-testid=circuit-item][data-circuit-id="{circuit_id}"]').get_by_test_id(f"card-run-{circuit_id}")
    expect(status).to_have_attribute("data-status", "running")
    expect(status).to_contain_text(f"run #{run_id}")
    shot(page, "home-run-status")

    # "My runs" lists the user's runs across circuits; stopping one asks first.
    page.get_by_test_id("nav-runs").click()
    row = page.locator(f'[data-testid=my-runs] [data-testid=run-row][data-run-id="{run_id}"]')
    expect(row).to_have_attribute("data-status", "running")
    expect(row).to_contain_text(long_name[:20])
    asked = []
    page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    page.get_by_test_id(f"run-stop-{run_id}").click()
    assert answered(page, asked) and f"Stop run #{run_id}" in asked[0]
    expect(row).to_have_attribute("data-status", "running")
    page.once("dialog", lambda d: d.accept())
    page.get_by_test_id(f"run-stop-{run_id}").click()
    expect(row).to_have_attribute("data-status", "stopped")
    expect(page.get_by_test_id(f"run-stop-{run_id}")).to_have_count(0)
    shot(page, "my-runs")
