"""Issue 28: the Nexmark demo, as a new user meets it. The seeded circuit's three
nexmark sources feed person, auction and bid on the worker; a run shows the sources
running and the views filling live. Here the demo's text runs with `events` 1,000 (the
seeded one streams 60,000 at 200 a second): once every source has pushed its events and
the run caught up, the page's views equal what a recomputation over the same events
gives (the generator's events for seed 1: bids per channel counted in Python, q4's
average closing price per category by DuckDB's own text)."""
from collections import Counter

import duckdb
import pytest
from django.conf import settings
from playwright.sync_api import expect

from bench.nexmark.queries import ORACLE
from circuits import services
from circuits.frontends import compiled_source
from circuits.management.commands.seed_demo import demos
from connectors.nexmark_events import Config, NexmarkGenerator
from tests.browser.user_steps import PASSWORD, log_in, pages, shot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]
EVENTS = 1_000
NAME = "Nexmark auctions (generated events, live queries)"


def test_the_nexmark_demo_streams_events_into_live_views(live_stack, make_user):
    [meta] = [m for m, _ in demos(settings.BASE_DIR / "examples") if m["name"] == NAME]
    text = (settings.BASE_DIR / "examples" / "sql" / "nexmark.sql").read_text()
    assert text.count('"events": 60000') == 3
    user = make_user("bidder", PASSWORD)
    services.create_circuit(user, meta["name"], meta["description"], "private",
                            compiled_source("sql", text.replace('"events": 60000', f'"events": {EVENTS}')))
    events = NexmarkGenerator(Config(seed=1)).events(0, EVENTS)
    bids = events["bid"].to_pylist()
    channels = Counter(b["channel"] for b in bids)
    top = {c: max(b["price"] for b in bids if b["channel"] == c) for c in channels}
    db = duckdb.connect()
    for name, table in events.items():
        db.register(name, table)
    categories = {c: avg for c, avg in db.execute(ORACLE["q4"]).fetchall()}
    assert len(channels) > 4 and categories  # the load reaches both views

    with pages(live_stack.base_url) as new_page:
        page = new_page()
        log_in(page, "bidder")
        page.get_by_test_id("circuit-item").get_by_role("link", name=NAME).click()
        page.get_by_test_id("start-run").click()
        expect(page.get_by_test_id("run-status")).to_have_text("running")
        for source, table in (("people", "person"), ("auctions", "auction"), ("bids", "bid")):
            expect(page.get_by_test_id(f"connector-in-{source}")).to_have_text(str(len(events[table])))
        expect(page.get_by_test_id("run-lag")).to_have_text("0 pushes")

        rows = page.get_by_test_id("view-table-channels").get_by_test_id("view-row")
        expect(rows).to_have_count(len(channels))
        for channel in ("Google", "Facebook", "Baidu", "Apple"):
            row = rows.filter(has_text=channel)
            expect(row).to_contain_text(str(channels[channel]))
            expect(row).to_contain_text(str(top[channel]))
        prices = page.get_by_test_id("view-table-category_prices").get_by_test_id("view-row")
        expect(prices).to_have_count(len(categories))
        shown = {int(row.locator("td").nth(0).inner_text()): float(row.locator("td").nth(1).inner_text()) for row in prices.all()}
        assert shown.keys() == categories.keys()
        for category, avg in categories.items():
            assert shown[category] == pytest.approx(avg, rel=1e-9), category
        page.get_by_test_id("connectors-section").scroll_into_view_if_needed()
        shot(page, "nexmark-demo-run")
