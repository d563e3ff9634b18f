"""What a person does in the circuit editor, as Playwright steps (no Django here, so the
steps can drive any running server)."""
from playwright.sync_api import Page, expect

from tests.browser.chromium import settled_box

# Where each node of the transactions circuit is dropped (canvas pixels) and its name.
TRANSACTIONS_LAYOUT = [
    ("input", "transactions", (90, 330)),
    ("aggregate", "credits_by_account", (330, 160)),
    ("aggregate", "debits_by_account", (330, 520)),
    ("join", "by_account", (580, 330)),
    ("map", "balances", (820, 330)),
    ("output", "balance", (1060, 200)),
    ("aggregate", "sum_of_balances", (820, 620)),
    ("output", "total", (1060, 620)),
]

TRANSACTIONS_WIRES = [
    ("transactions", "out", "credits_by_account", "in"),
    ("transactions", "out", "debits_by_account", "in"),
    ("credits_by_account", "out", "by_account", "left"),
    ("debits_by_account", "out", "by_account", "right"),
    ("by_account", "out", "balances", "in"),
    ("balances", "out", "balance", "in"),
    ("balances", "out", "sum_of_balances", "in"),
    ("sum_of_balances", "out", "total", "in"),
]


def node(page: Page, node_id: str):
    return page.locator(f'[data-testid="circuit-node"][data-node-id="{node_id}"]')


def drop_from_palette(page: Page, kind: str, x: int, y: int) -> None:
    """Drags an operator from the palette onto the canvas (HTML5 drag and drop)."""
    page.get_by_test_id("palette-search").fill("")
    page.get_by_test_id(f"palette-{kind}").drag_to(page.get_by_test_id("editor-canvas"), target_position={"x": x, "y": y})


def select(page: Page, node_id: str) -> None:
    node(page, node_id).locator(".op-head").click()
    expect(page.get_by_test_id("node-panel")).to_have_attribute("data-node-id", node_id)


def rename_selected(page: Page, new_id: str) -> None:
    field = page.get_by_test_id("node-id")
    field.fill(new_id)
    field.press("Enter")
    expect(page.get_by_test_id("node-panel")).to_have_attribute("data-node-id", new_id)


def connect(page: Page, source: str, source_port: str, target: str, target_port: str) -> None:
    """Drags a wire from an output handle to an input handle."""
    page.get_by_test_id(f"handle-{source}-{source_port}").drag_to(page.get_by_test_id(f"handle-{target}-{target_port}"))
    expect(page.locator(f'.react-flow__edge[data-id="{source}.{source_port}->{target}.{target_port}"]')).to_have_count(1)


def fill_text(page: Page, testid: str, value: str) -> None:
    page.get_by_test_id(testid).fill(value)


def configure_aggregate(page: Page, node_id: str, group_by: list[str], fn: str, expr: str, alias: str) -> None:
    select(page, node_id)
    for column in group_by:
        chip = page.get_by_test_id(f"param-group_by-col-{column}")
        chip.click()  # the chip appears once the engine has inferred the input's columns
        expect(chip).to_have_attribute("aria-pressed", "true")
    page.get_by_test_id("param-aggregates-add").click()
    page.get_by_test_id("param-aggregates-0-fn").select_option(fn)
    fill_text(page, "param-aggregates-0-expr", expr)
    fill_text(page, "param-aggregates-0-as", alias)


def build_transactions(page: Page) -> None:
    """Builds DBSP.md's transactions circuit from the palette, wires it and configures it."""
    for kind, name, (x, y) in TRANSACTIONS_LAYOUT:
        drop_from_palette(page, kind, x, y)
        # The dropped node is selected: name it in the side panel.
        expect(page.get_by_test_id("node-panel")).to_be_visible()
        rename_selected(page, name)
        expect(node(page, name)).to_have_count(1)

    select(page, "transactions")
    for i, column in enumerate(["id", "from_acct", "to_acct", "amount"]):
        page.get_by_test_id("param-schema-add").click()
        fill_text(page, f"param-schema-{i}-name", column)
        page.get_by_test_id(f"param-schema-{i}-type").select_option("bigint")

    for wire in TRANSACTIONS_WIRES:
        connect(page, *wire)

    configure_aggregate(page, "credits_by_account", ["to_acct"], "sum", "amount", "credits")
    configure_aggregate(page, "debits_by_account", ["from_acct"], "sum", "amount", "debits")

    select(page, "by_account")
    page.get_by_test_id("param-left_keys-col-to_acct").click()
    page.get_by_test_id("param-right_keys-col-from_acct").click()

    select(page, "balances")
    page.get_by_test_id("param-columns-add").click()
    fill_text(page, "param-columns-0-name", "account")
    fill_text(page, "param-columns-0-expr", "to_acct")
    page.get_by_test_id("param-columns-add").click()
    fill_text(page, "param-columns-1-name", "balance")
    fill_text(page, "param-columns-1-expr", "credits - debits")

    configure_aggregate(page, "sum_of_balances", [], "sum", "balance", "total")
    expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "true")


def _empty_canvas_point(page: Page) -> tuple[float, float]:
    """A point of the canvas with nothing on it or near it (the bare pane for 50 px around:
    a wire let go within React Flow's connection radius of a handle snaps to it instead),
    scanning from the top left."""
    point = page.evaluate("""() => {
        const canvas = document.querySelector('[data-testid="editor-canvas"]').getBoundingClientRect();
        const bare = (x, y) => {
            const hit = document.elementFromPoint(x, y);
            return hit && hit.classList.contains('react-flow__pane');
        };
        const around = [[0, 0], [-50, -50], [50, -50], [-50, 50], [50, 50], [0, 50], [50, 0], [-50, 0], [0, -50]];
        for (let y = canvas.top + 60; y < canvas.bottom - 60; y += 30)
            for (let x = canvas.left + 60; x < canvas.right - 60; x += 30)
                if (around.every(([dx, dy]) => bare(x + dx, y + dy))) return [x, y];
        return null;
    }""")
    assert point, "no empty spot on the canvas"
    return point[0], point[1]


def drop_wire_on_canvas(page: Page, source: str, port: str) -> None:
    """Drags a wire from an output handle and lets go on empty canvas."""
    handle = settled_box(page.get_by_test_id(f"handle-{source}-{port}"))
    x, y = _empty_canvas_point(page)
    page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
    page.mouse.down()
    page.mouse.move(x + 20, y + 20, steps=10)
    page.mouse.move(x, y, steps=3)
    page.mouse.up()


def drag_node(page: Page, node_id: str, to_x: float, to_y: float) -> None:
    """Drags a node by its title to page coordinates, in small steps (as a hand would)."""
    box = node(page, node_id).locator(".op-head").bounding_box()
    page.mouse.move(box["x"] + 10, box["y"] + 5)
    page.mouse.down()
    page.mouse.move(to_x, to_y, steps=12)
    page.mouse.up()
