"""Issue 27: connectors declared where users work. In the editor a person adds a file
source to the `orders` input and a file sink to the `big_orders` view (the forms built
from the server's kinds), tests the source's connection, saves and starts a run; a CSV
file dropped in the source's folder shows up in the run's view and in the sink's file,
and the run page shows both connectors' status. A bad file fails the source, named on
the run page; fixed, Restart picks it up."""
import json
import os

import pytest
from playwright.sync_api import expect

from circuits import services
from tests.browser.editor_steps import node, select
from tests.browser.user_steps import PASSWORD, log_in, pages, shot
from tests.conftest import example

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

ROWS = [(1, "ada", 250), (2, "bob", 50), (3, "cy", 120)]


def drop(folder, name: str, text: str) -> None:
    """A file dropped in as a writer should: a temporary name, then renamed into place."""
    temp = folder / f".{name}.tmp"
    temp.write_text(text)
    os.replace(temp, folder / name)


def test_a_file_source_and_sink_declared_in_the_editor(live_stack, make_user, tmp_path):
    source_dir, sink_dir = tmp_path / "in", tmp_path / "out"
    source_dir.mkdir()
    user = make_user("streams", PASSWORD)
    circuit = services.create_circuit(user, "Big orders", "", "private", example("big_orders"))
    with pages(live_stack.base_url) as new_page:
        page = new_page()
        log_in(page, "streams")
        page.get_by_test_id("circuit-item").get_by_role("link", name="Big orders").click()
        expect(node(page, "orders")).to_have_count(1)

        # the input: a file source over the folder; its connection is tested
        select(page, "orders")
        page.get_by_test_id("connector-add").click()
        expect(page.get_by_test_id("connector-0-kind")).to_have_value("file_source")
        page.get_by_test_id("connector-0-opt-path").fill(str(tmp_path / "nowhere"))
        page.get_by_test_id("connector-0-test").click()
        expect(page.get_by_test_id("connector-0-test-result")).to_have_text(f"{tmp_path / 'nowhere'} is not there (yet)")
        page.get_by_test_id("connector-0-opt-path").fill(str(source_dir))
        page.get_by_test_id("connector-0-opt-format").select_option("csv")
        page.get_by_test_id("connector-0-test").click()
        expect(page.get_by_test_id("connector-0-test-result")).to_have_text("Connected.")
        expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "true")
        page.get_by_test_id("connectors-editor").locator("h4").scroll_into_view_if_needed()
        shot(page, "connectors-editor-source")

        # the view: a file sink; a sink is all it offers
        select(page, "big_orders")
        page.get_by_test_id("connector-add").click()
        sink_kinds = page.get_by_test_id("connector-0-kind").locator("option").all_text_contents()
        assert "file_sink" in sink_kinds and not [k for k in sink_kinds if k.endswith("_source")], sink_kinds
        page.get_by_test_id("connector-0-kind").select_option("file_sink")
        # a missing required option is the engine's error, named on the node
        expect(page.get_by_test_id("node-problems")).to_contain_text("file_sink needs the option 'path'")
        page.get_by_test_id("connector-0-opt-path").fill(str(sink_dir))
        expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "true")
        page.get_by_test_id("save-version").click()
        expect(page.get_by_test_id("save-status")).to_contain_text("version 2")
        circuit.refresh_from_db()
        nodes = {n["id"]: n for n in circuit.latest_version.document["nodes"]}
        assert nodes["orders"]["params"]["connectors"] == [
            {"name": "orders-in", "kind": "file_source", "config": {"path": str(source_dir), "format": "csv"}}]
        assert nodes["big_orders"]["params"]["connectors"] == [
            {"name": "big_orders-out", "kind": "file_sink", "config": {"path": str(sink_dir)}}]

        page.get_by_test_id("start-run").click()
        expect(page.get_by_test_id("run-status")).to_have_text("running")
        expect(page.get_by_test_id("connector-state-orders-in")).to_have_text("running")
        expect(page.get_by_test_id("connector-state-big_orders-out")).to_have_text("running")

        drop(source_dir, "0001-orders.csv", "id,customer,amount\n" + "".join(f"{i},{c},{a}\n" for i, c, a in ROWS))
        big = sorted((i, c, a) for i, c, a in ROWS if a > 100)  # the filter, recomputed
        rows = page.get_by_test_id("view-table-big_orders").get_by_test_id("view-row")
        expect(rows).to_have_count(len(big))
        for i, c, a in big:
            expect(rows.filter(has_text=c)).to_have_count(1)
        expect(page.get_by_test_id("connector-in-orders-in")).to_have_text(str(len(ROWS)))
        expect(page.get_by_test_id("connector-out-big_orders-out")).to_have_text(str(len(big)))
        written = sorted(sink_dir.glob("big_orders-*.jsonl"))
        assert [p.name for p in written] == ["big_orders-000000000000.jsonl"]
        inserts = [json.loads(line)["insert"] for line in written[0].read_text().splitlines()]
        records = sorted((r["id"], r["customer"], r["amount"]) for r in inserts)
        assert records == big
        page.get_by_test_id("connectors-section").scroll_into_view_if_needed()
        shot(page, "connectors-run-page")

        # a bad file fails the source, named on the run page; fixed in place, Restart reads it
        drop(source_dir, "0002-orders.csv", "id,customer,amount\n4,dee,many\n")
        expect(page.get_by_test_id("connector-state-orders-in")).to_have_text("failed")
        expect(page.get_by_test_id("connector-error-orders-in")).to_contain_text(
            "connector 'orders-in' (file_source) at 0002-orders.csv:2, column 'amount'")
        page.get_by_test_id("connectors-section").scroll_into_view_if_needed()
        shot(page, "connectors-run-page-failed")
        drop(source_dir, "0002-orders.csv", "id,customer,amount\n4,dee,400\n")
        page.get_by_test_id("connector-restart-orders-in").click()
        expect(page.get_by_test_id("connector-state-orders-in")).to_have_text("running")
        expect(rows).to_have_count(len(big) + 1)
        expect(page.get_by_test_id("connector-in-orders-in")).to_have_text(str(len(ROWS) + 1))
        expect(page.get_by_test_id("connector-out-big_orders-out")).to_have_text(str(len(big) + 1))
