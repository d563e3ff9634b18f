"""A private PostgreSQL with `wal_level=logical` made from Debian's server binaries
(/usr/lib/postgresql/<version>/bin): initdb into a folder, a port of its own, its unix
socket in that folder. The tests' cluster (tests/postgres_cluster.py, a temporary folder
per session) and ./scripts/run's demo database (var/postgres, kept between runs) are both
one of these.

The superuser `postgres` signs in without a password (the unix socket, and TCP from
127.0.0.1); every other role with its password (scram-sha-256). initdb refuses to run as
root: as root the cluster is made and run as the `postgres` user (Debian's package
creates it), so its folder must be reachable by that user.

    python -m dbspweb.local_postgres start FOLDER   # made when missing, started; prints its URL
    python -m dbspweb.local_postgres stop FOLDER
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import psycopg

HBA = ("local all all trust\n"
       "host all postgres 127.0.0.1/32 trust\n"
       "host all all 127.0.0.1/32 scram-sha-256\n")


class NotAvailable(Exception):
    """PostgreSQL cannot be started here; the message says why."""


def binaries(install: bool = False) -> Path:
    """The newest server binaries' folder; with `install`, apt-get installs them when
    missing (as root only)."""
    def found() -> list[str]:
        return sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))

    if not found() and install and shutil.which("apt-get") and os.geteuid() == 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, capture_output=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "postgresql"], check=True, env=env, capture_output=True)
    paths = found()
    if not paths:
        raise NotAvailable("no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (apt-get install postgresql)")
    return Path(paths[-1]).parent


def is_logical(url: str) -> bool:
    """Does the server at `url` answer, with `wal_level=logical`?"""
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            return conn.execute("SHOW wal_level").fetchone()[0] == "logical"
    except psycopg.Error:
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_free(port: int) -> bool:
    """Nothing listens on it. (As PostgreSQL binds: SO_REUSEADDR, so the connections of a
    server just stopped, in TIME_WAIT, do not count.)"""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


class LocalCluster:
    """The cluster in `folder` (data/, sockets/, server.log, port). `port`: the one it was
    made with (kept in folder/port), else `port` or a free one."""

    def __init__(self, folder: Path, port: int | None = None, install: bool = False):
        self.folder = Path(folder)
        self.data, self.sockets, self.log = self.folder / "data", self.folder / "sockets", self.folder / "server.log"
        kept = self.folder / "port"
        self.port = int(kept.read_text()) if kept.exists() else (port or free_port())
        self.bin = binaries(install)
        self._as: list[str] = []
        if os.geteuid() == 0:
            try:
                self._owner = pwd.getpwnam("postgres")
            except KeyError:
                raise NotAvailable("running as root, and there is no `postgres` user to run the server as") from None
            self._as = ["runuser", "-u", "postgres", "--"]

    def url(self, database: str = "postgres", user: str = "postgres") -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    @property
    def made(self) -> bool:
        return (self.data / "PG_VERSION").exists()

    def _run(self, *args: str) -> None:
        done = subprocess.run([*self._as, *args], capture_output=True, text=True)
        if done.returncode != 0:
            tail = self.log.read_text()[-1500:] if self.log.exists() else ""
            raise NotAvailable(f"{Path(args[0]).name} failed: {(done.stderr or done.stdout).strip()[-1500:]}\n{tail}".strip())

    def make(self) -> None:
        """initdb (once), trusting `postgres` and asking every other role for its password."""
        self.sockets.mkdir(parents=True, exist_ok=True)
        if self._as:
            for path in (self.folder, self.sockets):
                os.chown(path, self._owner.pw_uid, self._owner.pw_gid)
            if subprocess.run([*self._as, "test", "-w", str(self.folder)]).returncode != 0:
                raise NotAvailable(f"the server runs as the postgres user, which cannot reach {self.folder} "
                                   "(a parent folder is closed to others: chmod o+x it, or use another folder)")
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                  "-E", "UTF8", "--locale=C.UTF-8")
        (self.data / "pg_hba.conf").write_text(HBA)
        (self.folder / "port").write_text(str(self.port))

    def running(self) -> bool:
        return is_logical(self.url())

    def start(self, fsync: bool = True) -> str:
        """Made when missing, started unless it is running already: its superuser's URL."""
        if not self.made:
            self.make()
        if self.running():
            return self.url()
        if not _port_free(self.port):
            raise NotAvailable(f"port {self.port} (kept in {self.folder / 'port'}) is taken by another program")
        options = (f"-c wal_level=logical -c max_replication_slots=20 -c max_wal_senders=20 -c port={self.port} "
                   f"-c listen_addresses=127.0.0.1 -c unix_socket_directories={self.sockets}")
        if not fsync:
            options += " -c fsync=off"
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "-t", "120",
                  "-o", options, "start")
        deadline = time.monotonic() + 60
        while not self.running():  # pg_ctl -w waited for it; this only confirms
            if time.monotonic() > deadline:
                raise NotAvailable(f"PostgreSQL did not answer on port {self.port}: {self.log.read_text()[-1500:]}")
            time.sleep(0.2)
        return self.url()

    def stop(self, immediate: bool = False) -> None:
        if self.made:
            subprocess.run([*self._as, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m",
                            "immediate" if immediate else "fast", "-w", "stop"], capture_output=True)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print(__doc__.strip().splitlines()[-2].strip(), file=sys.stderr)
        return 2
    command, folder = argv
    try:
        install = command == "start" and os.environ.get("DBSPWEB_NO_INSTALL", "0") != "1"
        cluster = LocalCluster(Path(folder).resolve(), install=install)
        if command == "start":
            print(cluster.start())
        else:
            cluster.stop()
    except (NotAvailable, subprocess.CalledProcessError, OSError) as error:
        print(str(error).strip() or repr(error), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
