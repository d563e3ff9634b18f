"""Issue 27, operating connectors on the run page: a file source that sends bad records to
its dead letters (`on_error: dead_letter`) and a file sink, declared in the version's
document. Bad lines show up as dead letters (count, position, column, message) while the
good ones reach the view; lag and rows/s are shown; the sink is paused alone (the source
goes on, the sink falls ticks behind), then started: it catches up, nothing lost."""
import copy
import os

import pytest
from playwright.sync_api import expect

from circuits import services
from tests.browser.user_steps import PASSWORD, log_in, pages, shot
from tests.conftest import example

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]


def drop(folder, name: str, text: str) -> None:
    temp = folder / f".{name}.tmp"
    temp.write_text(text)
    os.replace(temp, folder / name)


def with_connectors(source_dir, sink_dir) -> dict:
    document = copy.deepcopy(example("big_orders"))
    for node in document["nodes"]:
        if node["id"] == "orders":
            node.setdefault("params", {})["connectors"] = [
                {"name": "orders-in", "kind": "file_source",
                 "config": {"path": str(source_dir), "format": "csv", "on_error": "dead_letter"}}]
        if node["id"] == "big_orders":
            node.setdefault("params", {})["connectors"] = [
                {"name": "big-out", "kind": "file_sink", "config": {"path": str(sink_dir)}}]
    return document


def test_dead_letters_lag_rate_and_pause_on_the_run_page(live_stack, make_user, tmp_path):
    source_dir, sink_dir = tmp_path / "in", tmp_path / "out"
    source_dir.mkdir()
    user = make_user("operator", PASSWORD)
    services.create_circuit(user, "Big orders", "", "private", with_connectors(source_dir, sink_dir))
    with pages(live_stack.base_url) as new_page:
        page = new_page()
        log_in(page, "operator")
        page.get_by_test_id("circuit-item").get_by_role("link", name="Big orders").click()
        page.get_by_test_id("start-run").click()
        expect(page.get_by_test_id("run-status")).to_have_text("running")
        expect(page.get_by_test_id("connector-state-orders-in")).to_have_text("running")

        # 4 good lines and 2 bad ones: the good ones reach the view, the bad ones the dead letters
        drop(source_dir, "0001.csv", "id,customer,amount\n1,ada,250\n2,bob,lots\n3,cy,120\n4,dee\n5,eve,300\n6,fay,40\n")
        rows = page.get_by_test_id("view-table-big_orders").get_by_test_id("view-row")
        expect(rows).to_have_count(3)  # ada, cy, eve: amount > 100
        expect(page.get_by_test_id("connector-in-orders-in")).to_have_text("4")
        expect(page.get_by_test_id("connector-dead-orders-in")).to_have_text("2")
        letters = page.get_by_test_id("dead-letters-orders-in").get_by_test_id("dead-letter")
        expect(letters).to_have_count(2)
        expect(letters.nth(0)).to_contain_text("0001.csv:5")  # newest first
        expect(letters.nth(0)).to_contain_text("2 fields, the header has 3")
        expect(letters.nth(1)).to_contain_text("0001.csv:3")
        expect(letters.nth(1)).to_contain_text("amount")
        expect(letters.nth(1)).to_contain_text("expected an integer (bigint), got 'lots'")
        expect(page.get_by_test_id("connector-state-orders-in")).to_have_text("running")
        expect(page.get_by_test_id("connector-lag-orders-in")).to_have_text("0 files")
        expect(page.get_by_test_id("connector-rate-orders-in")).not_to_have_text("0")
        expect(page.get_by_test_id("connector-out-big-out")).to_have_text("3")
        expect(page.get_by_test_id("connector-lag-big-out")).to_have_text("0 ticks")

        # the sink paused alone: the source goes on, the sink falls behind
        page.get_by_test_id("connector-pause-big-out").click()
        expect(page.get_by_test_id("connector-state-big-out")).to_have_text("paused")
        drop(source_dir, "0002.csv", "id,customer,amount\n7,gus,500\n")
        expect(rows).to_have_count(4)
        expect(page.get_by_test_id("connector-in-orders-in")).to_have_text("5")
        expect(page.get_by_test_id("connector-lag-big-out")).to_have_text("1 tick")
        expect(page.get_by_test_id("connector-out-big-out")).to_have_text("3")
        assert len(list(sink_dir.glob("big_orders-*.jsonl"))) == 1
        page.get_by_test_id("connectors-section").scroll_into_view_if_needed()
        shot(page, "connectors-dead-letters-paused-sink")

        # started again: it catches up from its last tick
        page.get_by_test_id("connector-start-big-out").click()
        expect(page.get_by_test_id("connector-state-big-out")).to_have_text("running")
        expect(page.get_by_test_id("connector-out-big-out")).to_have_text("4")
        expect(page.get_by_test_id("connector-lag-big-out")).to_have_text("0 ticks")
        assert len(list(sink_dir.glob("big_orders-*.jsonl"))) == 2
