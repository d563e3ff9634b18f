"""The PostgreSQL demo, "Orders from PostgreSQL": the input `orders` is fed by a
`postgres_source` reading `shop.orders`, and the view `revenue_per_region` (the sum of
`amount` by `region`) is kept in `shop.revenue_per_region` by a `postgres_sink` (both in
the document's `params.connectors`; docs/connectors.md, "Try it: the PostgreSQL demo").

./scripts/run starts a PostgreSQL with `wal_level=logical` (dbspweb/local_postgres.py)
and hands its superuser's URL to `manage.py seed_demo` in DBSPWEB_DEMO_POSTGRES_URL (or,
when it could not, the reason in DBSPWEB_DEMO_POSTGRES_UNAVAILABLE). `prepare` makes the
`shop` database there: a role `dbspweb_demo` (LOGIN REPLICATION, its password from
DBSPWEB_DEMO_PG_PASSWORD, which the connectors name in `secrets_env`), the table
`shop.orders` with REPLICA IDENTITY FULL and a few orders. The circuit is seeded either
way; without a database its description says why the connectors will not connect."""
from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit

import psycopg
from psycopg import sql

NAME = "Orders from PostgreSQL"
URL_ENV = "DBSPWEB_DEMO_POSTGRES_URL"
WHY_ENV = "DBSPWEB_DEMO_POSTGRES_UNAVAILABLE"
PASSWORD_ENV = "DBSPWEB_DEMO_PG_PASSWORD"
ROLE, DATABASE, TABLE, SINK_TABLE = "dbspweb_demo", "shop", "shop.orders", "shop.revenue_per_region"
DEFAULT_DSN = f"postgresql://{ROLE}@127.0.0.1:5432/{DATABASE}"
#: (id, region, amount): the orders the table starts with
ORDERS = [(1, "north", 120), (2, "south", 80), (3, "north", 45), (4, "east", 200), (5, "south", 150), (6, "west", 60)]


@dataclass(frozen=True)
class Demo:
    dsn: str  # the connectors' (the demo role's, no password)
    admin: str  # the superuser's, for psql
    why_not: str  # empty when the database is ready


def from_environment() -> Demo:
    """The demo database, made ready when there is one (DBSPWEB_DEMO_POSTGRES_URL)."""
    url = os.environ.get(URL_ENV, "").strip()
    if not url:
        why = os.environ.get(WHY_ENV, "").strip() or (
            f"no demo PostgreSQL was started (./scripts/run starts one; or set {URL_ENV} to a server with "
            "wal_level=logical)")
        return Demo(DEFAULT_DSN, DEFAULT_DSN.replace(ROLE, "postgres", 1), why)
    parts = urlsplit(url)
    where = f"{parts.hostname or '127.0.0.1'}:{parts.port or 5432}"
    admin = f"postgresql://{parts.username or 'postgres'}@{where}/{DATABASE}"
    dsn = f"postgresql://{ROLE}@{where}/{DATABASE}"
    password = os.environ.get(PASSWORD_ENV, "")
    if not password:
        return Demo(dsn, admin, f"{PASSWORD_ENV} is not set (./scripts/run sets it for the workers)")
    try:
        prepare(url, password)
    except psycopg.Error as error:
        return Demo(dsn, admin, f"the demo database could not be prepared at {where}: {str(error).strip()}")
    return Demo(dsn, admin, "")


def prepare(admin_url: str, password: str) -> None:
    """The role, the database, `shop.orders` (REPLICA IDENTITY FULL) with ORDERS when it
    is new; the role's password set again. Idempotent: orders already there are kept."""
    with psycopg.connect(admin_url, autocommit=True, connect_timeout=10) as conn:
        if conn.execute("SELECT current_setting('wal_level')").fetchone()[0] != "logical":
            raise psycopg.OperationalError("wal_level is not logical there (the source needs logical replication)")
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,)).fetchone()
        verb = "ALTER" if exists else "CREATE"
        conn.execute(sql.SQL(verb + " ROLE {} LOGIN REPLICATION PASSWORD {}").format(
            sql.Identifier(ROLE), sql.Literal(password)))
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone():
            # the role owns the database: its public schema takes the sink's progress table
            conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(DATABASE), sql.Identifier(ROLE)))
    shop = admin_url.rsplit("/", 1)[0] + f"/{DATABASE}"
    with psycopg.connect(shop, autocommit=True, connect_timeout=10) as conn, conn.transaction():
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS shop AUTHORIZATION {}").format(sql.Identifier(ROLE)))
        new = not conn.execute("SELECT to_regclass(%s)", (TABLE,)).fetchone()[0]
        if new:
            conn.execute("CREATE TABLE shop.orders (id bigint PRIMARY KEY, region text NOT NULL, amount bigint NOT NULL)")
            conn.execute("ALTER TABLE shop.orders REPLICA IDENTITY FULL")  # a delete carries the whole row
            conn.execute(sql.SQL("ALTER TABLE shop.orders OWNER TO {}").format(sql.Identifier(ROLE)))
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO shop.orders (id, region, amount) VALUES (%s, %s, %s)", ORDERS)


def description(demo: Demo) -> str:
    """What the demo does and the psql lines to paste, one a line (the circuit page keeps
    the lines)."""
    psql = f'psql "{demo.admin}"'
    text = (f"PostgreSQL in, PostgreSQL out: the input orders reads the table {TABLE} (a snapshot, then every change, "
            f"by logical replication), revenue_per_region sums amount by region, and the table {SINK_TABLE} follows "
            f"it. Press Start run, then add and remove orders with psql and watch the deltas arrive:\n"
            f"{psql} -c \"INSERT INTO {TABLE} VALUES (7, 'east', 90)\"\n"
            f"{psql} -c \"DELETE FROM {TABLE} WHERE id = 1\"\n"
            f"{psql} -c \"TABLE {SINK_TABLE}\"\n"
            f"The connectors sign in as {ROLE} with the password in the workers' {PASSWORD_ENV}.")
    if demo.why_not:
        text += f" The connectors will not connect here: {demo.why_not}."
    return text


def document(demo: Demo) -> dict:
    """orders -> sum(amount) by region -> revenue_per_region, with its two connectors."""
    secrets = {"password": PASSWORD_ENV}
    return {
        "format": "dbspweb.circuit", "version": 1,
        "nodes": [
            {"id": "orders", "kind": "input", "position": {"x": 0, "y": 80}, "params": {
                "schema": [{"name": "id", "type": "bigint", "nullable": False},
                           {"name": "region", "type": "string", "nullable": False},
                           {"name": "amount", "type": "bigint", "nullable": False}],
                "connectors": [{"name": "orders-pg", "kind": "postgres_source",
                                "config": {"dsn": demo.dsn, "table": TABLE}, "secrets_env": secrets}]}},
            {"id": "by_region", "kind": "aggregate", "position": {"x": 260, "y": 80}, "params": {
                "group_by": ["region"], "aggregates": [{"fn": "sum", "expr": "amount", "as": "revenue"}]}},
            {"id": "revenue_per_region", "kind": "output", "position": {"x": 520, "y": 80}, "params": {
                "connectors": [{"name": "revenue-pg", "kind": "postgres_sink",
                                "config": {"dsn": demo.dsn, "table": SINK_TABLE, "mode": "table", "key": "region"},
                                "secrets_env": secrets}]}},
        ],
        "edges": [
            {"from": {"node": "orders", "port": "out"}, "to": {"node": "by_region", "port": "in"}},
            {"from": {"node": "by_region", "port": "out"}, "to": {"node": "revenue_per_region", "port": "in"}},
        ],
    }
