"""dbspweb/local_postgres.py as ./scripts/run calls it: `start FOLDER` makes a cluster with
logical WAL and prints its URL; started again (running, or after `stop`) it answers on the
same port (the demo circuit's connectors keep pointing at it); a folder it cannot use is
an error saying why, on stderr, with exit status 1."""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg

from dbspweb.local_postgres import is_logical


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dbspweb.local_postgres", *args], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1])


def test_start_stop_and_start_again_on_the_same_port():
    folder = Path(tempfile.mkdtemp(prefix="dbspweb-localpg-")) / "postgres"
    try:
        if os.geteuid() == 0:  # the server runs as the postgres user: a folder closed to it is refused, saying so
            closed = cli("start", str(folder))
            assert closed.returncode == 1 and "cannot reach" in closed.stderr, closed.stderr
            folder.parent.chmod(0o755)
            shutil.rmtree(folder)
        first = cli("start", str(folder))
        assert first.returncode == 0, first.stderr
        url = first.stdout.strip()
        assert is_logical(url)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE DATABASE kept")
        assert cli("start", str(folder)).stdout.strip() == url  # running already: the same server
        assert cli("stop", str(folder)).returncode == 0
        assert not is_logical(url)
        again = cli("start", str(folder))
        assert again.returncode == 0 and again.stdout.strip() == url, again.stderr
        with psycopg.connect(url) as conn:  # the same cluster, its data kept
            assert conn.execute("SELECT 1 FROM pg_database WHERE datname = 'kept'").fetchone() == (1,)
    finally:
        cli("stop", str(folder))
        shutil.rmtree(folder.parent, ignore_errors=True)


def test_a_folder_it_cannot_use_is_an_error_saying_why():
    done = cli("start", "/proc/dbspweb-no")
    assert done.returncode == 1
    assert "/proc/dbspweb-no" in done.stderr and done.stdout == ""
