"""A real PostgreSQL with `wal_level=logical` for the PostgreSQL connectors' tests:
TEST_CDC_POSTGRES_URL when it is set and logical, else a cluster of its own (Debian's
binaries, installed with apt-get when missing): initdb into a temporary folder, a free
port, its unix socket in that folder, stopped at the session's end.

initdb refuses to run as root: as root the cluster is made and run as the `postgres`
user (Debian's package creates it)."""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import psycopg


def _binaries() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if not found and shutil.which("apt-get") and os.geteuid() == 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, capture_output=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "postgresql"], check=True, env=env, capture_output=True)
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    assert found, "no PostgreSQL server binaries (apt-get install postgresql, or set TEST_CDC_POSTGRES_URL)"
    return Path(found[-1]).parent


def _is_logical(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            return conn.execute("SHOW wal_level").fetchone()[0] == "logical"
    except psycopg.Error:
        return False


class PostgresCluster:
    """`url(db)`: a libpq URL of a database of the cluster; `new_database()` makes one."""

    def __init__(self):
        given = os.environ.get("TEST_CDC_POSTGRES_URL")
        self.folder, self.databases = None, []
        if given and _is_logical(given):
            self.base = given
            return
        from tests.conftest import free_port

        self.bin = _binaries()
        self.folder = Path(tempfile.mkdtemp(prefix="dbspweb-pg-"))
        self.port = free_port()
        data, self.sockets = self.folder / "data", self.folder / "sockets"
        self.sockets.mkdir()
        as_user = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            os.chown(self.sockets, user.pw_uid, user.pw_gid)
            as_user = ["runuser", "-u", "postgres", "--"]
        self._as = as_user
        subprocess.run([*as_user, str(self.bin / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                        "-E", "UTF8", "--locale=C.UTF-8"], check=True, capture_output=True)
        # postgres is trusted; every other role signs in with its password (the connectors' secrets are tested)
        (data / "pg_hba.conf").write_text("local all all trust\nhost all postgres 127.0.0.1/32 trust\n"
                                          "host all all 127.0.0.1/32 scram-sha-256\n")
        self.data = data
        self.base = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self.start()

    def start(self) -> None:
        """Start the server (again: the same port, the same data folder) and wait until it answers."""
        subprocess.run([*self._as, str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "server.log"),
                        "-w", "-t", "120", "-o",
                        f"-c wal_level=logical -c max_replication_slots=10 -c max_wal_senders=10 -c port={self.port} "
                        f"-c listen_addresses=127.0.0.1 -c unix_socket_directories={self.sockets} -c fsync=off",
                        "start"], check=True, capture_output=True)
        deadline = time.monotonic() + 60
        while not _is_logical(self.base):  # pg_ctl -w waited for it; this only confirms
            assert time.monotonic() < deadline, (self.folder / "server.log").read_text()[-2000:]
            time.sleep(0.2)

    def shut_down(self) -> None:
        """Stop the server (`-m fast`: clients are disconnected, what was committed is kept);
        `start()` brings it back. Only a cluster started here."""
        assert self.own, "TEST_CDC_POSTGRES_URL's server is not the tests' to stop"
        subprocess.run([*self._as, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "-t", "120", "stop"],
                       check=True, capture_output=True)

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
        if self.folder is None:  # a server of someone else's: its slots hold WAL back, so they go with the databases
            with psycopg.connect(self.base, autocommit=True) as conn:
                for name in self.databases:
                    conn.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = %s",
                                 (name,))
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            return
        subprocess.run([*self._as, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"],
                       capture_output=True)
        shutil.rmtree(self.folder, ignore_errors=True)
