"""Issue 29, "someone who goes offline keeps editing, and their edits merge on reconnect", in
Debian's Chromium at 1440x900 against the real stack. Alice owns a circuit and has granted
Bob "can edit"; both have it open.

- Alice's browser goes offline (Playwright's context.set_offline: the browser's offline
  event; the page closes its socket, as Chromium does not). She changes the filter's
  predicate and drags the input; meanwhile Bob drags the output, which the server stores
  and Alice does not see. Back online, both edits stand on both pages, in the stored
  document, and after both pages reload.
- Offline again, Alice changes the predicate and closes the tab before she is back online:
  the edit was kept in IndexedDB (y-indexeddb) and reaches Bob when she opens the circuit
  again.

Screenshots: tests/artifacts/coedit-offline-*.png."""
import pycrdt
import pytest
from playwright.sync_api import expect

from circuits.collab import store
from circuits.models import Circuit
from tests.browser.chromium import until
from tests.browser.editor_steps import drag_node, node, select
from tests.browser.user_steps import big_orders_shared_with_bob, log_in, pages, shot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

TRANSFORM = "id => document.querySelector(`.react-flow__node[data-id='${id}']`)?.style.transform"


def transform(page, node_id):
    return page.evaluate(TRANSFORM, node_id)


def moved(page, node_id, down) -> str:
    """Drags the node `down` pixels; its transform once the move is on the page."""
    before = transform(page, node_id)
    box = node(page, node_id).bounding_box()
    drag_node(page, node_id, box["x"] + 10, box["y"] + down)
    until(page, lambda: transform(page, node_id) != before, f"{node_id} moved")
    return transform(page, node_id)


def stored_node(circuit, node_id) -> dict:
    doc, _ = store.load(Circuit.objects.get(pk=circuit.pk))
    return doc.get("nodes", type=pycrdt.Map)[node_id].to_py()


def predicate_on(page, value):
    select(page, "big")
    expect(page.get_by_test_id("param-predicate")).to_have_value(value)


def set_predicate(page, value):
    select(page, "big")
    field = page.get_by_test_id("param-predicate")
    field.fill(value)
    field.press("Tab")


KEPT = """async (prefix) => {
    const names = (await indexedDB.databases()).map((d) => d.name).filter((n) => n.startsWith(prefix));
    if (names.length !== 1) return -1;
    return await new Promise((resolve, reject) => {
        const open = indexedDB.open(names[0]);
        open.onerror = reject;
        open.onsuccess = () => {
            const db = open.result;
            const count = db.transaction('updates').objectStore('updates').count();
            count.onsuccess = () => { resolve(count.result); db.close(); };
        };
    });
}"""


def kept_updates(page, circuit) -> int:
    """How many updates the page's IndexedDB copy of the circuit holds (y-indexeddb's store)."""
    return page.evaluate(KEPT, f"dbspweb.circuit.{circuit.id}.")


def open_circuit(page, circuit):
    page.goto(f"/#/circuits/{circuit.id}")
    expect(page.get_by_test_id("circuit-node")).to_have_count(3)
    expect(page.get_by_test_id("presence")).to_be_visible()  # the shared document has arrived


def test_offline_edits_merge_on_reconnect_and_survive_closing_the_tab(live_stack, make_user):
    circuit = big_orders_shared_with_bob(make_user)
    with pages(live_stack.base_url) as new_page:
        a, b = new_page(), new_page()
        for page, who in ((a, "alice"), (b, "bob")):
            log_in(page, who)
            open_circuit(page, circuit)
        expect(b.locator('[data-testid="avatar"][data-name="alice"]')).to_have_count(1)

        # Alice goes offline: her page says so.
        a.context.set_offline(True)
        expect(a.get_by_test_id("offline")).to_contain_text("your edits are kept on this device")

        # Offline, Alice changes the predicate and drags the input.
        set_predicate(a, "amount > 7")
        alices_move = moved(a, "orders", 160)
        # Meanwhile Bob drags the output: stored by the server, not seen by Alice.
        outputs_before = transform(a, "big_orders")
        position_before = stored_node(circuit, "big_orders").get("position")
        bobs_move = moved(b, "big_orders", 200)
        until(b, lambda: stored_node(circuit, "big_orders").get("position") != position_before, "Bob's move stored")
        assert transform(a, "big_orders") == outputs_before  # Alice is really offline
        assert stored_node(circuit, "big")["params"]["predicate"] == "amount > 100"  # and so are her edits
        predicate_on(b, "amount > 100")
        shot(a, "coedit-offline-editing")

        # Back online: both edits stand on both pages.
        a.context.set_offline(False)
        expect(a.get_by_test_id("offline")).to_have_count(0)
        until(a, lambda: transform(a, "big_orders") == bobs_move, "Bob's move on Alice's page")
        until(b, lambda: transform(b, "orders") == alices_move, "Alice's offline move on Bob's page")
        predicate_on(b, "amount > 7")
        predicate_on(a, "amount > 7")
        expect(b.locator('[data-testid="avatar"][data-name="alice"]')).to_have_count(1)
        shot(b, "coedit-offline-merged")
        assert stored_node(circuit, "big")["params"]["predicate"] == "amount > 7"

        # And after a reload of both pages.
        for page in (a, b):
            page.on("dialog", lambda dialog: dialog.accept())  # leave with unsaved changes: yes (they are shared)
            page.reload()
            expect(page.get_by_test_id("circuit-node")).to_have_count(3)
            predicate_on(page, "amount > 7")
            until(page, lambda page=page: transform(page, "orders") == alices_move and transform(page, "big_orders") == bobs_move,
                  f"both moves after a reload ({alices_move}, {bobs_move}; {transform(page, 'orders')}, {transform(page, 'big_orders')})")

        # Offline again, Alice edits and closes the tab before she is back.
        a.context.set_offline(True)
        expect(a.get_by_test_id("offline")).to_be_visible()
        kept = kept_updates(a, circuit)
        set_predicate(a, "amount > 9")
        until(a, lambda: kept_updates(a, circuit) > kept, "the edit kept in IndexedDB")
        context = a.context
        a.close(run_before_unload=False)
        context.set_offline(False)
        predicate_on(b, "amount > 7")  # nothing reached Bob
        again = context.new_page()
        open_circuit(again, circuit)  # the edit kept on her device joins the shared document
        predicate_on(b, "amount > 9")
        predicate_on(again, "amount > 9")
        assert stored_node(circuit, "big")["params"]["predicate"] == "amount > 9"
