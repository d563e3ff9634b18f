"""A real PostgreSQL with `wal_level=logical` for the PostgreSQL connectors' tests:
TEST_CDC_POSTGRES_URL when it is set and logical, else a cluster of its own
(dbspweb/local_postgres.py: Debian's binaries, installed with apt-get when missing;
initdb into a temporary folder, a free port, its unix socket in that folder), stopped at
the session's end. Its superuser signs in without a password; every other role with
its password (the connectors' secrets are tested)."""
from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

import psycopg

from dbspweb.local_postgres import LocalCluster, is_logical


class PostgresCluster:
    """`url(db)`: a libpq URL of a database of the cluster; `new_database()` makes one."""

    def __init__(self):
        given = os.environ.get("TEST_CDC_POSTGRES_URL")
        self.folder, self.databases, self.cluster = None, [], None
        if given and is_logical(given):
            self.base = given
            return
        self.folder = Path(tempfile.mkdtemp(prefix="dbspweb-pg-"))
        self.cluster = LocalCluster(self.folder, install=True)
        self.port = self.cluster.port
        self.base = self.cluster.start(fsync=False)

    def start(self) -> None:
        """Start the server (again: the same port, the same data folder) and wait until it answers."""
        self.cluster.start(fsync=False)

    def shut_down(self) -> None:
        """Stop the server (`-m fast`: clients are disconnected, what was committed is kept);
        `start()` brings it back. Only a cluster started here."""
        assert self.own, "TEST_CDC_POSTGRES_URL's server is not the tests' to stop"
        self.cluster.stop()

    @property
    def own(self) -> bool:
        """Started here (its roles and authentication are the tests' to set), not TEST_CDC_POSTGRES_URL's."""
        return self.folder is not None

    def new_database(self) -> str:
        """A fresh database of the cluster (a test's own): its URL."""
        name = f"cdc_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(self.base, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        self.databases.append(name)
        return self.base.rsplit("/", 1)[0] + f"/{name}"

    def stop(self) -> None:
        if self.cluster is None:  # a server of someone else's: its slots hold WAL back, so they go with the databases
            with psycopg.connect(self.base, autocommit=True) as conn:
                for name in self.databases:
                    conn.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = %s",
                                 (name,))
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            return
        self.cluster.stop(immediate=True)
        shutil.rmtree(self.folder, ignore_errors=True)
