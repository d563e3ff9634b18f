"""Issue 27: PostgreSQL in, PostgreSQL out, the whole path as a person takes it. In the
editor they add a PostgreSQL source to the `orders` input (Test connection names the
missing REPLICA IDENTITY FULL; fixed with psql, it connects) and a PostgreSQL sink to the
`revenue_per_region` view, save and start a run. Then, with the real psql, they INSERT,
UPDATE and DELETE orders: each change's deltas arrive on the run page, and both the
run's view and the sink's table follow. The oracle is revenue per region recomputed by
PostgreSQL itself from the source table (a GROUP BY sharing no code with the run)."""
import copy
import glob
import shutil
import subprocess

import psycopg
import pytest
from playwright.sync_api import expect

from circuits import demo_postgres, services
from tests.browser.chromium import until
from tests.browser.editor_steps import node, select
from tests.browser.user_steps import PASSWORD, log_in, pages, shot

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

ORDERS = [(1, "north", 120), (2, "south", 80), (3, "north", 45), (4, "east", 200)]
ORACLE = "SELECT region, sum(amount)::bigint FROM shop.orders GROUP BY region"


def psql_binary() -> str:
    found = shutil.which("psql") or next(iter(sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"), reverse=True)), None)
    assert found, "psql is needed (Debian's postgresql-client)"
    return found


def psql(url: str, statement: str) -> None:
    """One statement through the real client, as a person types it."""
    done = subprocess.run([psql_binary(), url, "-v", "ON_ERROR_STOP=1", "-c", statement], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def rows_of(url: str, query: str) -> dict[str, int]:
    """(region, revenue) rows read with SQL; none while the table is not there yet (the sink makes it)."""
    with psycopg.connect(url) as conn:
        try:
            return {region: revenue for region, revenue in conn.execute(query).fetchall()}
        except psycopg.errors.UndefinedTable:
            return {}


def view_rows(page) -> dict[str, int]:
    """What the run page's table of the view shows."""
    rows = page.get_by_test_id("view-table-revenue_per_region").get_by_test_id("view-row")
    cells = [row.locator("td:not(.row-action)").all_inner_texts() for row in rows.all()]
    return {c[0].strip().strip('"'): int(c[1].strip()) for c in cells}


def shown(row: tuple[str, int]) -> str:
    """A row as the delta feed writes it (formatRow)."""
    return f'{{region: "{row[0]}", revenue: {row[1]}}}'


def feed_after(page, tick: int) -> dict[str, int]:
    """The delta feed's changes after `tick`, summed per row (text -> weight)."""
    total: dict[str, int] = {}
    for entry in page.get_by_test_id("delta-feed-revenue_per_region").get_by_test_id("delta-row").all():
        if int(entry.get_attribute("data-tick")) > tick:
            text = entry.get_attribute("title")
            total[text] = total.get(text, 0) + int(entry.get_attribute("data-weight"))
    return {k: w for k, w in total.items() if w}


def last_tick(page) -> int:
    ticks = [int(e.get_attribute("data-tick"))
             for e in page.get_by_test_id("delta-feed-revenue_per_region").get_by_test_id("delta-row").all()]
    return max(ticks, default=-1)


def expected_delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    delta: dict[str, int] = {}
    for region in set(before) | set(after):
        if before.get(region) != after.get(region):
            if region in before:
                delta[shown((region, before[region]))] = -1
            if region in after:
                delta[shown((region, after[region]))] = 1
    return delta


def test_a_postgres_source_and_sink_declared_in_the_editor_follow_psql(live_stack, make_user, cdc_postgres):
    url = cdc_postgres.new_database()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA shop")
        conn.execute("CREATE TABLE shop.orders (id bigint PRIMARY KEY, region text NOT NULL, amount bigint NOT NULL)")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO shop.orders VALUES (%s, %s, %s)", ORDERS)
    user = make_user("pg-demo", PASSWORD)
    document = copy.deepcopy(demo_postgres.document(demo_postgres.Demo(url, url, "")))
    for n in document["nodes"]:
        n.get("params", {}).pop("connectors", None)  # declared in the editor below
    # the demo's description (its psql lines, for this database)
    admin = url.rsplit("/", 1)[0] + "/shop"
    about = demo_postgres.description(demo_postgres.Demo(url, admin, ""))
    circuit = services.create_circuit(user, "Revenue per region", about, "private", document)

    with pages(live_stack.base_url) as new_page:
        page = new_page()
        log_in(page, "pg-demo")
        page.get_by_test_id("circuit-item").get_by_role("link", name="Revenue per region").click()
        expect(node(page, "orders")).to_have_count(1)
        # the description on the circuit page, its psql lines one a line
        page.get_by_test_id("circuit-page-description").locator("summary").click()
        description = page.get_by_test_id("circuit-page-description").locator("p")
        expect(description).to_contain_text(f'psql "{admin}" -c "INSERT INTO shop.orders VALUES (7, \'east\', 90)"')
        assert f'psql "{admin}" -c "DELETE FROM shop.orders WHERE id = 1"' in description.inner_text().splitlines()
        shot(page, "connectors-postgres-description")
        page.get_by_test_id("circuit-page-description").locator("summary").click()

        # the source: its connection test names what the table lacks; psql fixes it
        select(page, "orders")
        page.get_by_test_id("connector-add").click()
        page.get_by_test_id("connector-0-kind").select_option("postgres_source")
        expect(page.get_by_test_id("node-problems")).to_contain_text("postgres_source needs the option 'dsn'")
        page.get_by_test_id("connector-0-opt-dsn").fill(url)
        page.get_by_test_id("connector-0-opt-table").fill("shop.orders")
        page.get_by_test_id("connector-0-test").click()
        expect(page.get_by_test_id("connector-0-test-result")).to_contain_text(
            "table shop.orders needs REPLICA IDENTITY FULL")
        psql(url, "ALTER TABLE shop.orders REPLICA IDENTITY FULL")
        page.get_by_test_id("connector-0-test").click()
        expect(page.get_by_test_id("connector-0-test-result")).to_have_text("Connected.")
        expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "true")
        page.get_by_test_id("connector-0-test-result").scroll_into_view_if_needed()
        shot(page, "connectors-postgres-editor-source")

        # the sink: the view's contents kept in a table, by region
        select(page, "revenue_per_region")
        page.get_by_test_id("connector-add").click()
        page.get_by_test_id("connector-0-kind").select_option("postgres_sink")
        page.get_by_test_id("connector-0-opt-dsn").fill(url)
        page.get_by_test_id("connector-0-opt-table").fill("shop.revenue_per_region")
        page.get_by_test_id("connector-0-opt-key").fill("region")
        page.get_by_test_id("connector-0-test").click()
        expect(page.get_by_test_id("connector-0-test-result")).to_have_text("Connected.")
        expect(page.get_by_test_id("validation-state")).to_have_attribute("data-valid", "true")
        page.get_by_test_id("connector-0-test-result").scroll_into_view_if_needed()
        shot(page, "connectors-postgres-editor-sink")
        page.get_by_test_id("save-version").click()
        expect(page.get_by_test_id("save-status")).to_contain_text("version 2")
        circuit.refresh_from_db()
        nodes = {n["id"]: n for n in circuit.latest_version.document["nodes"]}
        assert nodes["orders"]["params"]["connectors"] == [
            {"name": "orders-in", "kind": "postgres_source", "config": {"dsn": url, "table": "shop.orders"}}]
        assert nodes["revenue_per_region"]["params"]["connectors"] == [
            {"name": "revenue_per_region-out", "kind": "postgres_sink",
             "config": {"dsn": url, "table": "shop.revenue_per_region", "key": "region"}}]

        page.get_by_test_id("start-run").click()
        expect(page.get_by_test_id("run-status")).to_have_text("running")
        expect(page.get_by_test_id("connector-state-orders-in")).to_have_text("running")
        expect(page.get_by_test_id("connector-state-revenue_per_region-out")).to_have_text("running")

        def follows(what: str) -> None:
            """The run page's view and the sink's table both equal the oracle."""
            oracle = rows_of(url, ORACLE)
            until(page, lambda: view_rows(page) == oracle, f"the view to show {oracle} ({what})")
            until(page, lambda: rows_of(url, "TABLE shop.revenue_per_region") == oracle,
                  f"the sink's table to hold {oracle} ({what})")

        # the snapshot
        follows("the snapshot")
        expect(page.get_by_test_id("connector-in-orders-in")).to_have_text(str(len(ORDERS)))

        # each change made with psql: its deltas on the run page, the view and the sink following
        records = len(ORDERS)
        for statement, changes in [
            ("INSERT INTO shop.orders VALUES (5, 'east', 90), (6, 'west', 60)", 2),
            ("UPDATE shop.orders SET amount = 150 WHERE id = 2", 2),  # a delete of the old row and an insert
            ("DELETE FROM shop.orders WHERE id = 6", 1),  # west's only order: west goes
        ]:
            before, tick = rows_of(url, ORACLE), last_tick(page)
            psql(url, statement)
            after = rows_of(url, ORACLE)
            delta = expected_delta(before, after)
            assert delta, statement  # each statement changes the revenue somewhere
            until(page, lambda: feed_after(page, tick) == delta, f"the deltas {delta} of {statement!r}")
            follows(statement)
            records += changes
            expect(page.get_by_test_id("connector-in-orders-in")).to_have_text(str(records))
            if statement.startswith("INSERT"):
                page.get_by_test_id("delta-feed-revenue_per_region").scroll_into_view_if_needed()
                shot(page, "connectors-postgres-run-deltas")
        assert "west" not in rows_of(url, "TABLE shop.revenue_per_region")
        expect(page.get_by_test_id("connector-state-orders-in")).to_have_text("running")
        expect(page.get_by_test_id("connector-state-revenue_per_region-out")).to_have_text("running")
        page.get_by_test_id("connectors-section").scroll_into_view_if_needed()
        shot(page, "connectors-postgres-run-status")
