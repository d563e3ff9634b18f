"""PostgreSQL connectors against a real PostgreSQL with wal_level=logical
(tests/postgres_cluster.py), pumped as the run's lease holder pumps them.

Source: a table's snapshot and then its inserts, updates and deletes reach the input log
exactly once: the records pushed, integrated, equal the source table's final contents
read with plain SQL (an oracle sharing no code with the connector), also across new
pumps (a restart from the stored position), a transaction larger than one push, and a
slot that was never advanced (its changes at or below the stored LSN are skipped).
Sink: both modes hold what the ticks' deltas integrate to, a tick is applied once even
when written again or when the run's database forgot it."""
import pytest
import psycopg

from connectors import postgres
from connectors.models import Connector
from connectors.pump import Pump
from runs.models import Push, TickOutput
from tests.connectors.conftest import declare, pump_until, pushed_rows

pytestmark = pytest.mark.django_db(transaction=True)


def sql(url, *statements, fetch=False):
    with psycopg.connect(url, autocommit=True) as conn:
        out = None
        for statement in statements:
            cur = conn.execute(statement)
            if fetch:
                out = cur.fetchall()
        return out


def source_table(url, amount_type="bigint", rows=()):
    sql(url, "CREATE SCHEMA IF NOT EXISTS shop",
        f"CREATE TABLE shop.orders (id bigint PRIMARY KEY, customer text, amount {amount_type})",
        "ALTER TABLE shop.orders REPLICA IDENTITY FULL")
    if rows:
        insert(url, rows)


def insert(url, rows):
    with psycopg.connect(url) as conn:  # one transaction
        conn.cursor().executemany("INSERT INTO shop.orders VALUES (%s, %s, %s)", rows)


def table_now(url) -> dict:
    """The source table's contents, as rows -> multiplicity (the oracle)."""
    out = {}
    for i, c, a in sql(url, "SELECT id, customer, amount FROM shop.orders", fetch=True):
        key = (i, c, a)
        out[key] = out.get(key, 0) + 1
    return out


def integrated(run) -> dict:
    out = {}
    for row, weight in pushed_rows(run):
        key = (row["id"], row["customer"], row["amount"])
        out[key] = out.get(key, 0) + weight
    return {k: w for k, w in out.items() if w}


def caught_up(run, url):
    return lambda: integrated(run) == table_now(url)


def slot_of(connector) -> tuple:
    return postgres.slot_name(f"dbspweb-run{connector.run_id}-{connector.name}")


def test_snapshot_then_changes_arrive_exactly_once(cdc_postgres, held_run, client_for, monkeypatch):
    url = cdc_postgres.new_database()
    source_table(url, rows=[(i, f"c{i % 5}", i * 10) for i in range(25)])
    source = declare(client_for, held_run, name="orders-in", kind="postgres_source", node="orders",
                     config={"dsn": url, "table": "shop.orders", "max_batch": 10})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in >= 10, "the snapshot's first push")
    assert Connector.objects.get(pk=source.pk).position["snapshot"] == 10
    # changes while the snapshot is read: they come after it, none in it, none lost
    insert(url, [(100, "late", 1000)])
    sql(url, "UPDATE shop.orders SET amount = amount + 1 WHERE id < 5",  # rows already pushed
        "UPDATE shop.orders SET customer = 'moved' WHERE id = 20",  # a row not yet read
        "DELETE FROM shop.orders WHERE id IN (3, 21)")
    pump_until(pump, held_run, caught_up(held_run, url), "the snapshot and the changes")
    position = Connector.objects.get(pk=source.pk).position
    assert "snapshot" not in position
    # each update is a delete of the old row and an insert of the new, in that order
    rows = pushed_rows(held_run)
    assert rows.index(({"id": 20, "customer": "moved", "amount": 200}, 1)) == rows.index(
        ({"id": 20, "customer": "c0", "amount": 200}, -1)) + 1
    # the slot was advanced to the stored position once the push committed
    confirmed = sql(url, f"SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = '{slot_of(source)}'",
                    fetch=True)[0][0]
    assert confirmed == position["lsn"]

    # A new pump (a restart) resumes at the stored LSN; one transaction larger than a push is split.
    insert(url, [(200 + i, "bulk", i) for i in range(25)])
    pump = Pump()
    pump_until(pump, held_run, lambda: "txn" in Connector.objects.get(pk=source.pk).position, "half a transaction")
    assert Connector.objects.get(pk=source.pk).position["done"] == 10
    pump = Pump()  # a restart inside the transaction
    pump_until(pump, held_run, caught_up(held_run, url), "the big transaction")
    assert Push.objects.filter(run=held_run).order_by("-sequence").first().row_count == 5

    # The slot not advanced (a crash after the push committed, before the advance): nothing twice.
    monkeypatch.setattr(postgres.PostgresSource, "advanced", lambda self, position: setattr(self, "at", dict(position)))
    sql(url, "DELETE FROM shop.orders WHERE id >= 200 AND id < 210")
    pump_until(Pump(), held_run, caught_up(held_run, url), "deletes, slot kept back")
    insert(url, [(300, "after", 3)])
    pump_until(Pump(), held_run, caught_up(held_run, url), "one more insert")
    assert sum(1 for r, w in pushed_rows(held_run) if r["id"] == 300) == 1
    assert sum(1 for r, w in pushed_rows(held_run) if r["id"] == 205) == 2  # its insert and its delete, once each


def test_a_snapshot_interrupted_by_a_restart_resumes_after_its_last_row(cdc_postgres, held_run, client_for):
    """The exported snapshot dies with its connection: the rest of the table is read in a
    new snapshot, and each change applies by the snapshot its row's key was read in."""
    url = cdc_postgres.new_database()
    source_table(url, rows=[(i, f"c{i}", i) for i in range(30)])
    source = declare(client_for, held_run, name="o", kind="postgres_source", node="orders",
                     config={"dsn": url, "table": "shop.orders", "max_batch": 10})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 10, "the first 10 rows")
    assert Connector.objects.get(pk=source.pk).position["after"] == ["9"]
    pump.close_all_but(set())  # the worker died: its snapshot is gone
    # changes between the first snapshot and the second, in keys read and keys not read yet
    sql(url, "UPDATE shop.orders SET amount = -1 WHERE id IN (2, 12)",
        "UPDATE shop.orders SET id = 5000 WHERE id = 3",  # a read key moves past the read range
        "UPDATE shop.orders SET id = 9 * 1000 + 1, customer = 'x' WHERE id = 15",
        "UPDATE shop.orders SET id = -15 WHERE id = 9001",  # a key not read moves into the read range
        "DELETE FROM shop.orders WHERE id IN (4, 14)")
    insert(url, [(-1, "new-low", 1), (100, "new-high", 1)])
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in >= 20, "the resumed snapshot")
    pump.close_all_but(set())  # and once more, in the second snapshot
    sql(url, "UPDATE shop.orders SET amount = -2 WHERE id IN (2, 12, 25)", "DELETE FROM shop.orders WHERE id = 26")
    insert(url, [(101, "newer", 2)])
    pump = Pump()
    pump_until(pump, held_run, caught_up(held_run, url), "the table")
    assert "segments" in Connector.objects.get(pk=source.pk).position  # changes before the last snapshot may still come
    sql(url, "UPDATE shop.orders SET amount = -3 WHERE id IN (0, 29)")
    pump_until(pump, held_run, caught_up(held_run, url), "the changes after")
    assert "segments" not in Connector.objects.get(pk=source.pk).position
    assert all(w in (1, -1) for _, w in pushed_rows(held_run)) and min(integrated(held_run).values()) == 1


def test_a_server_gone_away_is_retried_and_loses_nothing(cdc_postgres, held_run, client_for):
    url = cdc_postgres.new_database()
    source_table(url, rows=[(i, "a", i) for i in range(5)])
    sink_url = cdc_postgres.new_database()
    store_ticks(held_run, {0: ROWS[0]})
    source = declare(client_for, held_run, name="o", kind="postgres_source", node="orders",
                     config={"dsn": url, "table": "shop.orders"})
    sink = declare(client_for, held_run, name="s", kind="postgres_sink", node="big_orders",
                   config={"dsn": sink_url, "table": "big", "mode": "changelog"})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 5, "the snapshot")
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 0, "tick 0")
    for database in (url, sink_url):  # the connectors' sessions are cut (a server restart, a network cut)
        sql(database, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                      " WHERE datname = current_database() AND pid <> pg_backend_pid()")
    insert(url, [(10, "b", 10)])
    store_ticks(held_run, {1: ROWS[2]})
    pump_until(pump, held_run, lambda: Connector.objects.filter(state="retrying").count() == 2, "both to retry")
    for connector in Connector.objects.filter(run=held_run):
        assert connector.last_error.startswith(f"{connector.label()}: PostgreSQL: "), connector.last_error
    pump_until(pump, held_run, lambda: caught_up(held_run, url)() and Connector.objects.get(pk=sink.pk).last_tick == 1,
               "the recovery")
    assert set(Connector.objects.values_list("state", flat=True)) == {"running"}
    assert sql(sink_url, "SELECT tick, count(*) FROM big GROUP BY tick ORDER BY tick", fetch=True) == [(0, 3), (1, 3)]


def test_a_bad_value_fails_the_source_naming_the_lsn_and_column(cdc_postgres, held_run, client_for):
    url = cdc_postgres.new_database()
    source_table(url, amount_type="numeric", rows=[(1, "a", 5)])
    source = declare(client_for, held_run, name="o", kind="postgres_source", node="orders",
                     config={"dsn": url, "table": "shop.orders"})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 1, "the snapshot")
    insert(url, [(2, "b", 7)])
    insert(url, [(3, "c", 8), (4, "d", 1.5)])
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the failure")
    source.refresh_from_db()
    lsn = sql(url, "SELECT max(lsn)::text FROM pg_logical_slot_peek_binary_changes("
                   f"'{slot_of(source)}', NULL, NULL, 'proto_version', '1', 'publication_names', '{slot_of(source)}')",
              fetch=True)
    assert source.last_error.startswith("connector 'o' (postgres_source) at LSN "), source.last_error
    assert source.last_error.endswith(" change 2, column 'amount': expected an integer (bigint), got '1.5'"), source.last_error
    assert lsn[0][0]  # the slot still holds the refused transaction
    assert [r["id"] for r, _ in pushed_rows(held_run)] == [1]  # nothing of the batch holding the refused transaction


def test_a_source_column_dropped_mid_stream_fails_the_source_naming_it(cdc_postgres, held_run, client_for):
    """The stream's relation message changes with the table: a change after the column
    went is refused naming it (not read with the column positions of the old message)."""
    url = cdc_postgres.new_database()
    source_table(url, rows=[(1, "a", 5)])
    source = declare(client_for, held_run, name="o", kind="postgres_source", node="orders",
                     config={"dsn": url, "table": "shop.orders"})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 1, "the snapshot")
    insert(url, [(2, "b", 7)])
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 2, "a change")
    sql(url, "ALTER TABLE shop.orders DROP COLUMN amount", "INSERT INTO shop.orders VALUES (3, 'c')")
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the failure")
    source.refresh_from_db()
    assert source.last_error.startswith("connector 'o' (postgres_source) at LSN "), source.last_error
    assert source.last_error.endswith(" change 1, column 'amount': table shop.orders has no column 'amount' any more"), \
        source.last_error
    assert sorted(r["id"] for r, _ in pushed_rows(held_run)) == [1, 2]


def test_a_bad_snapshot_value_names_its_row_and_column(cdc_postgres, held_run, client_for):
    url = cdc_postgres.new_database()
    source_table(url, amount_type="text", rows=[(1, "a", "5"), (2, "b", "many")])
    source = declare(client_for, held_run, name="o", kind="postgres_source", node="orders",
                     config={"dsn": url, "table": "shop.orders"})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the failure")
    source.refresh_from_db()
    assert source.last_error == ("connector 'o' (postgres_source) at shop.orders snapshot row 2, column 'amount': "
                                 "expected an integer (bigint), got 'many'")
    assert not Push.objects.filter(run=held_run).exists()


def test_a_table_without_replica_identity_full_is_refused_with_the_statement(cdc_postgres, held_run, client_for):
    url = cdc_postgres.new_database()
    source_table(url)
    sql(url, "ALTER TABLE shop.orders REPLICA IDENTITY DEFAULT")
    source = declare(client_for, held_run, name="o", kind="postgres_source", node="orders",
                     config={"dsn": url, "table": "shop.orders"})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the refusal")
    source.refresh_from_db()
    assert source.last_error == ("connector 'o' (postgres_source): table shop.orders needs REPLICA IDENTITY FULL "
                                 "(an update and a delete must carry the whole old row): run ALTER TABLE "
                                 "\"shop\".\"orders\" REPLICA IDENTITY FULL")


@pytest.mark.parametrize("kind, node, config, message", [
    ("postgres_source", "orders", {"dsn": "postgresql://u:pw@h/db", "table": "t"},
     'dsn: no password in it; put it in secrets {"password": ...} or name an environment variable in password_env'),
    ("postgres_source", "orders", {"dsn": "postgresql://u@h/db", "table": "t", "columns": {"colour": "c"}},
     "columns: 'colour' is not a column of the input (id, customer, amount)"),
    ("postgres_source", "orders", {"dsn": "postgresql://u@h/db", "table": "t", "columns": ["id"]},
     "columns: an object mapping the input's columns to the table's"),
    ("postgres_sink", "big_orders", {"dsn": "host=h", "table": "t", "mode": "log"},
     "mode must be one of table, changelog; got 'log'"),
    ("postgres_sink", "big_orders", {"dsn": "host=h", "table": "t", "mode": "changelog", "key": "id"},
     "key: only for mode table"),
])
def test_declaring_checks_the_options(held_run, client_for, kind, node, config, message):
    r = client_for(held_run.owner).post(f"/api/runs/{held_run.pk}/connectors/",
                                        {"name": "o", "kind": kind, "node": node, "config": config}, format="json")
    assert (r.status_code, r.json()["errors"]) == (400, [{"field": "config", "message": message}])
    assert not Connector.objects.exists()


ROWS = {0: [({"id": 1, "customer": "a", "amount": 150}, 1), ({"id": 2, "customer": None, "amount": 200}, 1),
            ({"id": 3, "customer": "c", "amount": 300}, 2)],
        1: [],
        2: [({"id": 1, "customer": "a", "amount": 150}, -1), ({"id": 1, "customer": "a2", "amount": 160}, 1),
            ({"id": 3, "customer": "c", "amount": 300}, -2)],
        3: [({"id": 2, "customer": None, "amount": 200}, -1), ({"id": 9, "customer": "z", "amount": 999}, 1)]}


def store_ticks(run, ticks):
    for tick, delta in ticks.items():
        TickOutput.objects.create(run=run, tick=tick, deltas={"big_orders": [{"data": d, "weight": w} for d, w in delta]})


def integral(ticks) -> dict:
    out = {}
    for delta in ticks.values():
        for data, weight in delta:
            key = (data["id"], data["customer"], data["amount"])
            out[key] = out.get(key, 0) + weight
    return {k: w for k, w in out.items() if w}


@pytest.mark.parametrize("key", [None, "id"])
def test_sink_table_mode_holds_the_view_and_applies_each_tick_once(cdc_postgres, held_run, client_for, key):
    url = cdc_postgres.new_database()
    store_ticks(held_run, {t: ROWS[t] for t in (0, 1, 2)})
    config = {"dsn": url, "table": "public.big", "mode": "table", **({"key": key} if key else {})}
    sink = declare(client_for, held_run, name="pg-out", kind="postgres_sink", node="big_orders", config=config)
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 2, "tick 2")

    def contents():
        if key:
            return {(i, c, a): 1 for i, c, a in sql(url, "SELECT id, customer, amount FROM big", fetch=True)}
        return {(i, c, a): n for i, c, a, n in sql(url, "SELECT id, customer, amount, dbspweb_count FROM big", fetch=True)}

    expected = integral({t: ROWS[t] for t in (0, 1, 2)})
    if key:
        expected = {k: 1 for k in expected}
    assert contents() == expected
    assert sql(url, "SELECT tick FROM dbspweb_sink_progress", fetch=True) == [(2,)]
    # The run's database forgot (a crash after the target's commit): tick 2 is not applied twice.
    Connector.objects.filter(pk=sink.pk).update(last_tick=-1)
    store_ticks(held_run, {3: ROWS[3]})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 3, "tick 3")
    expected = integral(ROWS)
    assert contents() == ({k: 1 for k in expected} if key else expected)


def test_sink_changelog_mode_appends_each_tick_once(cdc_postgres, held_run, client_for):
    url = cdc_postgres.new_database()
    sql(url, "CREATE TABLE log (id bigint, customer varchar(20), amount numeric, tick bigint, weight integer, note text)")
    store_ticks(held_run, ROWS)
    sink = declare(client_for, held_run, name="pg-log", kind="postgres_sink", node="big_orders",
                   config={"dsn": url, "table": "log", "mode": "changelog"})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 3, "tick 3")
    expected = sorted((t, d["id"], d["customer"], d["amount"], w) for t, delta in ROWS.items() for d, w in delta)
    got = sql(url, "SELECT tick, id, customer, amount::bigint, weight FROM log ORDER BY 1, 2, 3, 4, 5", fetch=True)
    assert got == expected
    # Writing a tick again (a retried write) changes nothing.
    client = pump.live[sink.pk].client
    client.write(2, ROWS[2])
    assert sql(url, "SELECT tick, id, customer, amount::bigint, weight FROM log ORDER BY 1, 2, 3, 4, 5", fetch=True) == expected


def test_sink_refuses_a_table_that_does_not_fit(cdc_postgres, held_run, client_for):
    url = cdc_postgres.new_database()
    sql(url, "CREATE TABLE big (id bigint, customer text, amount date)")
    store_ticks(held_run, {0: ROWS[0]})
    sink = declare(client_for, held_run, name="pg-out", kind="postgres_sink", node="big_orders",
                   config={"dsn": url, "table": "big", "key": "id"})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).state == "failed", "the refusal")
    sink.refresh_from_db()
    assert sink.last_error == ("connector 'pg-out' (postgres_sink): table public.big: column 'amount' is date; "
                               "the view's 'amount' needs bigint or numeric")
    other = declare(client_for, held_run, name="keyed", kind="postgres_sink", node="big_orders",
                    config={"dsn": url, "table": "big2", "key": ["id", "colour"]})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=other.pk).state == "failed", "the unknown key")
    assert Connector.objects.get(pk=other.pk).last_error == (
        "connector 'keyed' (postgres_sink): key: 'colour' is not a column of the view (id, customer, amount)")
    assert sql(url, "SELECT to_regclass('big2')", fetch=True) == [(None,)]  # nothing made


def test_deleting_the_source_drops_its_slot_and_publication(cdc_postgres, held_run, client_for):
    url = cdc_postgres.new_database()
    source_table(url, rows=[(1, "a", 5)])
    source = declare(client_for, held_run, name="o", kind="postgres_source", node="orders",
                     config={"dsn": url, "table": "shop.orders"})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 1, "the snapshot")
    slot = slot_of(source)
    assert Connector.objects.get(pk=source.pk).position["slot"] == slot  # the API shows which slot it holds
    held = ("SELECT (SELECT count(*) FROM pg_replication_slots WHERE database = current_database()),"
            " (SELECT count(*) FROM pg_publication)")
    assert sql(url, held, fetch=True) == [(1, 1)]
    assert client_for(held_run.owner).delete(f"/api/runs/{held_run.pk}/connectors/o/").status_code == 204
    assert sql(url, held, fetch=True) == [(0, 0)]
    # and with its run (deleted with its circuit)
    source = declare(client_for, held_run, name="o", kind="postgres_source", node="orders",
                     config={"dsn": url, "table": "shop.orders"})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 1, "the snapshot again")
    assert sql(url, held, fetch=True) == [(1, 1)]
    from circuits.services import delete_circuit

    delete_circuit(held_run.circuit)  # as DELETE /api/circuits/<id>/ does
    assert not Connector.objects.exists()
    assert sql(url, held, fetch=True) == [(0, 0)]


EVENTS = {
    "format": "dbspweb.circuit", "version": 1,
    "nodes": [
        {"id": "events", "kind": "input", "position": {"x": 0, "y": 0}, "params": {"schema": [
            {"name": "id", "type": "bigint", "nullable": False}, {"name": "score", "type": "double"},
            {"name": "ok", "type": "boolean"}, {"name": "day", "type": "date"}, {"name": "at", "type": "timestamp"},
            {"name": "label", "type": "string"}]}},
        {"id": "all_events", "kind": "output", "position": {"x": 200, "y": 0}, "params": {}},
    ],
    "edges": [{"from": {"node": "events", "port": "out"}, "to": {"node": "all_events", "port": "in"}}],
}


def test_postgres_types_arrive_as_the_inputs_column_types(cdc_postgres, make_user, client_for):
    """int, numeric, boolean, date, timestamptz and varchar columns (one renamed by
    `columns`) through the snapshot and the stream, compared with the rows psycopg reads
    itself (its own type conversions: no code shared with the connector's)."""
    from circuits import services
    from runs.models import Run
    from workers import leases

    owner = make_user("types")
    circuit = services.create_circuit(owner, "Events", "", "private", EVENTS)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=owner, status="running")
    run.epoch = leases.acquire(run.pk)
    run.fence = lambda: leases.fence(run.pk, run.epoch)
    url = cdc_postgres.new_database()
    sql(url, "CREATE TABLE ev (id integer PRIMARY KEY, score numeric(12, 3), ok boolean, day date, at timestamptz,"
             " name varchar(20), extra text)", "ALTER TABLE ev REPLICA IDENTITY FULL",
        "INSERT INTO ev VALUES (1, 2.5, true, '2026-02-28', '2026-02-28 23:30:00+02', 'één', 'x'),"
        " (2, NULL, NULL, NULL, NULL, NULL, NULL)")
    r = client_for(owner).post(f"/api/runs/{run.pk}/connectors/", {
        "name": "ev", "kind": "postgres_source", "node": "events",
        "config": {"dsn": url, "table": "ev", "columns": {"label": "name"}}}, format="json")
    assert r.status_code == 201, r.content
    source = Connector.objects.get(run=run, name="ev")
    pump = Pump()
    pump_until(pump, run, lambda: Connector.objects.get(pk=source.pk).records_in == 2, "the snapshot")
    sql(url, "UPDATE ev SET score = -0.125, ok = false, at = '2026-03-01 00:00:00.5+00' WHERE id = 1",
        "INSERT INTO ev VALUES (3, 1e6, true, '1999-12-31', '2000-01-01 00:00:00-05', 'three', 'y')")
    pump_until(pump, run, lambda: Connector.objects.get(pk=source.pk).records_in == 5, "the changes")

    with psycopg.connect(url) as conn:
        conn.execute("SET TimeZone = 'UTC'")
        final = conn.execute("SELECT id, score, ok, day, at, name FROM ev").fetchall()

    def as_pushed(i, score, ok, day, at, name):
        return {"id": i, "score": None if score is None else float(score), "ok": ok,
                "day": day.isoformat() if day else None,
                "at": at.replace(tzinfo=None).isoformat() if at else None, "label": name}

    got = {}
    for row, weight in pushed_rows(run):
        row = {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}
        key = tuple(sorted(row.items()))
        got[key] = got.get(key, 0) + weight
    assert {k for k, w in got.items() if w} == {tuple(sorted(as_pushed(*r).items())) for r in final}
    assert all(w in (0, 1) for w in got.values())


def test_a_role_signs_in_with_its_secret_and_needs_replication(cdc_postgres, held_run, client_for, monkeypatch):
    if not cdc_postgres.own:
        pytest.skip("roles and passwords are set on the cluster this session started")
    url = cdc_postgres.new_database()
    source_table(url, rows=[(1, "a", 5)])
    role = f"cdc_{held_run.pk}_{url.rsplit('_', 1)[1]}"
    sql(url, f"CREATE ROLE {role} LOGIN PASSWORD 'right'", f"GRANT USAGE ON SCHEMA shop TO {role}",
        f"GRANT SELECT ON shop.orders TO {role}", "CREATE TABLE shop.other (id bigint PRIMARY KEY, customer text)",
        "CREATE PUBLICATION orders_pub FOR TABLE shop.orders, shop.other")  # a user's publication of two tables
    dsn = url.replace("postgres@", f"{role}@")
    config = {"dsn": dsn, "table": "shop.orders", "publication": "orders_pub"}
    wrong = declare(client_for, held_run, name="wrong", kind="postgres_source", node="orders", config=config,
                    secrets={"password": "wrong"})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=wrong.pk).state == "failed", "the refused sign-in")
    assert "PostgreSQL refused the sign-in: " in Connector.objects.get(pk=wrong.pk).last_error
    client_for(held_run.owner).delete(f"/api/runs/{held_run.pk}/connectors/wrong/")

    monkeypatch.setenv("CDC_PASSWORD", "right")
    source = declare(client_for, held_run, name="o", kind="postgres_source", node="orders",
                     config={**config, "password_env": "CDC_PASSWORD"})
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the missing grant")
    assert Connector.objects.get(pk=source.pk).last_error.startswith(
        "connector 'o' (postgres_source): PostgreSQL refused the sign-in: connection failed: ")
    assert Connector.objects.get(pk=source.pk).last_error.endswith("must be superuser or replication role to start walsender")
    sql(url, f"ALTER ROLE {role} REPLICATION")
    r = client_for(held_run.owner).post(f"/api/runs/{held_run.pk}/connectors/o/restart/")
    assert r.status_code == 200
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 1, "the snapshot")
    sql(url, "INSERT INTO shop.other VALUES (7, 'not ours')", "TRUNCATE shop.other")
    insert(url, [(2, "b", 6)])
    pump_until(pump, held_run, caught_up(held_run, url), "a change")
    assert Connector.objects.get(pk=source.pk).state == "running"
    assert [r["id"] for r, _ in pushed_rows(held_run)] == [1, 2]  # the other table's changes are not the input's


def test_sink_creates_its_table_with_the_views_types(cdc_postgres, make_user, client_for):
    import datetime as dt

    from circuits import services
    from runs.models import Run
    from workers import leases

    owner = make_user("typed-sink")
    circuit = services.create_circuit(owner, "Events", "", "private", EVENTS)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=owner, status="running")
    run.epoch = leases.acquire(run.pk)
    run.fence = lambda: leases.fence(run.pk, run.epoch)
    one = {"id": 1, "score": 2.5, "ok": True, "day": "2026-02-28", "at": "2026-02-28T21:30:00.250000", "label": "één"}
    empty = {"id": 2, "score": None, "ok": None, "day": None, "at": None, "label": None}
    TickOutput.objects.create(run=run, tick=0, deltas={"all_events": [{"data": one, "weight": 1}, {"data": empty, "weight": 1}]})
    TickOutput.objects.create(run=run, tick=1, deltas={"all_events": [{"data": one, "weight": -1},
                                                                       {"data": {**one, "ok": False}, "weight": 1}]})
    url = cdc_postgres.new_database()
    r = client_for(owner).post(f"/api/runs/{run.pk}/connectors/", {
        "name": "out", "kind": "postgres_sink", "node": "all_events",
        "config": {"dsn": url, "table": "events_now", "key": ["id"]}}, format="json")
    assert r.status_code == 201, r.content
    pump_until(Pump(), run, lambda: Connector.objects.get(run=run, name="out").last_tick == 1, "tick 1")
    columns = sql(url, "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
                       " WHERE attrelid = 'events_now'::regclass AND attnum > 0 ORDER BY attnum", fetch=True)
    assert columns == [("id", "bigint"), ("score", "double precision"), ("ok", "boolean"), ("day", "date"),
                       ("at", "timestamp without time zone"), ("label", "text")]
    assert sql(url, "SELECT * FROM events_now ORDER BY id", fetch=True) == [
        (1, 2.5, False, dt.date(2026, 2, 28), dt.datetime(2026, 2, 28, 21, 30, 0, 250000), "één"),
        (2, None, None, None, None, None)]


def test_an_idle_table_does_not_hold_the_servers_wal_back(cdc_postgres, held_run, client_for, monkeypatch):
    """Writes to other tables only: the source marks its place (a logical message), its
    position and the slot move past them, and a change after that still arrives once."""
    monkeypatch.setattr(postgres, "IDLE_ADVANCE", 64 << 10)
    url = cdc_postgres.new_database()
    source_table(url, rows=[(1, "a", 5)])
    source = declare(client_for, held_run, name="o", kind="postgres_source", node="orders",
                     config={"dsn": url, "table": "shop.orders"})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 1, "the snapshot")
    assert "snapshot" not in Connector.objects.get(pk=source.pk).position
    start = Connector.objects.get(pk=source.pk).position["lsn"]
    sql(url, "CREATE TABLE busy (n bigint, pad text)",
        "INSERT INTO busy SELECT i, repeat('x', 200) FROM generate_series(1, 2000) i")
    written = sql(url, "SELECT pg_current_wal_lsn()::text", fetch=True)[0][0]

    def past(lsn):
        return lambda: postgres.pgoutput.lsn_int(Connector.objects.get(pk=source.pk).position["lsn"]) > \
            postgres.pgoutput.lsn_int(lsn)

    pump_until(pump, held_run, past(written), "the position past the other table's writes")
    confirmed = sql(url, f"SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = '{slot_of(source)}'",
                    fetch=True)[0][0]
    assert postgres.pgoutput.lsn_int(confirmed) > postgres.pgoutput.lsn_int(written) > postgres.pgoutput.lsn_int(start)
    insert(url, [(2, "b", 6)])
    pump_until(pump, held_run, caught_up(held_run, url), "a change after")
    assert [r["id"] for r, _ in pushed_rows(held_run)] == [1, 2]


def test_sinks_opening_at_once_on_one_database_all_open(cdc_postgres, held_run, client_for):
    """The worker opens sinks on threads of their own: six sinks of one run, each its own
    table in one new database, opened at the same moment (the first to make
    dbspweb_sink_progress while the others do), all open and write their tick."""
    import threading

    url = cdc_postgres.new_database()
    store_ticks(held_run, {0: ROWS[0]})
    sinks = [declare(client_for, held_run, name=f"pg-{i}", kind="postgres_sink", node="big_orders",
                     config={"dsn": url, "table": f"public.big_{i}", "mode": "changelog"}) for i in range(6)]
    start, failures = threading.Barrier(len(sinks)), []
    from connectors.pump import open_client

    def opened(connector):
        try:
            start.wait()
            client = open_client(held_run, connector)
            client.write(0, ROWS[0])
            client.close()
        except Exception as e:  # noqa: BLE001 - collected and shown
            failures.append(e)

    threads = [threading.Thread(target=opened, args=(c,)) for c in sinks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert sql(url, "SELECT count(*) FROM dbspweb_sink_progress WHERE tick = 0", fetch=True) == [(6,)]


SCALARS = {
    "format": "dbspweb.circuit", "version": 1,
    "nodes": [
        {"id": "vals", "kind": "input", "position": {"x": 0, "y": 0}, "params": {"schema": [
            {"name": "id", "type": "bigint", "nullable": False}, {"name": "n", "type": "bigint"},
            {"name": "x", "type": "double"}, {"name": "s", "type": "string"}, {"name": "b", "type": "boolean"}]}},
        {"id": "all_vals", "kind": "output", "position": {"x": 200, "y": 0}, "params": {}},
    ],
    "edges": [{"from": {"node": "vals", "port": "out"}, "to": {"node": "all_vals", "port": "in"}}],
}


@pytest.mark.parametrize("at_once", [True, False])
def test_a_snapshot_read_as_columns_holds_what_psycopg_reads(cdc_postgres, make_user, client_for, monkeypatch, at_once):
    """The snapshot's rows go to the input log as Arrow columns (no dict a row) when
    every value converts; bigint, double, text and boolean values at their edges (NULLs,
    -0, exponents, int64's ends, an empty string, non-ASCII), and a numeric '12.000' read
    into a bigint column (not PostgreSQL's integer form: that push goes row by row), equal
    the rows psycopg reads itself, both with the column path and without it (at_once)."""
    from circuits import services
    from runs.models import Run
    from workers import leases

    monkeypatch.setattr(postgres.PostgresSource, "columns_at_once", at_once)
    owner = make_user("scalars")
    circuit = services.create_circuit(owner, "Scalars", "", "private", SCALARS)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=owner, status="running")
    run.epoch = leases.acquire(run.pk)
    run.fence = lambda: leases.fence(run.pk, run.epoch)
    url = cdc_postgres.new_database()
    sql(url, "CREATE TABLE vals (id bigint PRIMARY KEY, n numeric, x float8, s text, b boolean)",
        "ALTER TABLE vals REPLICA IDENTITY FULL",
        "INSERT INTO vals VALUES (1, 9223372036854775807, -0.0, '', true), (2, -9223372036854775808, 1e-05, 'één', false),"
        " (3, NULL, NULL, NULL, NULL), (4, 0, 1.5e300, 'a''b\\c', true), (5, -42, 0.1, ' x ', false)",
        "INSERT INTO vals SELECT i, i * 7, i / 3.0, 'r' || i, i % 2 = 0 FROM generate_series(6, 40) i",
        "INSERT INTO vals VALUES (41, 12.000, 2, 'numeric', true)")  # numeric's text '12.000': not an integer's form
    r = client_for(owner).post(f"/api/runs/{run.pk}/connectors/", {
        "name": "v", "kind": "postgres_source", "node": "vals",
        "config": {"dsn": url, "table": "vals", "max_batch": 20}}, format="json")
    assert r.status_code == 201, r.content
    source = Connector.objects.get(run=run, name="v")
    pump = Pump()
    pump_until(pump, run, lambda: Connector.objects.get(pk=source.pk).records_in == 41, "the snapshot")
    assert Connector.objects.get(pk=source.pk).state == "running"
    with psycopg.connect(url) as conn:
        final = conn.execute("SELECT id, n, x, s, b FROM vals").fetchall()
    expected = {(i, None if n is None else int(n), None if x is None else float(x) + 0.0, s, b) for i, n, x, s, b in final}
    pushed = [(row, w) for row, w in pushed_rows(run)]
    assert all(w == 1 for _, w in pushed) and len(pushed) == 41
    assert {(r["id"], r["n"], r["x"], r["s"], r["b"]) for r, _ in pushed} == expected
    assert [r["id"] for r, _ in pushed] == list(range(1, 42))  # in key order, each once
