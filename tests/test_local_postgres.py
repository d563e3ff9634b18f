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


def run_script(tmp_path, script: str) -> subprocess.CompletedProcess:
    """lib.sh's steps as ./scripts/run takes them, with var/ in tmp_path."""
    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("DBSPWEB_DEMO_")}
    return subprocess.run(["/bin/bash", "-c", f'set -euo pipefail; source "{root}/scripts/lib.sh"; VAR="{tmp_path}"; {script}'],
                          env={**env, "DBSPWEB_NO_INSTALL": "1"}, capture_output=True, text=True, timeout=300)


def test_scripts_run_starts_the_demo_postgres_exports_it_and_stops_it_at_exit():
    # a var/ the postgres user reaches (the server runs as it when this runs as root)
    tmp_path = Path(tempfile.mkdtemp(prefix="dbspweb-var-"))
    tmp_path.chmod(0o755)
    done = run_script(tmp_path, 'ensure_demo_postgres "$VAR/postgres"; echo "URL=$DBSPWEB_DEMO_POSTGRES_URL"; '
                                'echo "PW=$DBSPWEB_DEMO_PG_PASSWORD"; stop_started')
    assert done.returncode == 0, done.stderr + done.stdout
    values = dict(line.split("=", 1) for line in done.stdout.splitlines() if line[:3] in ("URL", "PW="))
    assert values["URL"].startswith("postgresql://postgres@127.0.0.1:")
    assert values["PW"] and values["PW"] == (tmp_path / "demo-postgres-password").read_text().strip()
    assert not is_logical(values["URL"])  # stopped by stop_started (the scripts' exit trap)
    assert (tmp_path / "postgres" / "port").read_text() == values["URL"].split(":")[2].split("/")[0]  # made in var/
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_scripts_run_says_why_when_postgres_cannot_start(tmp_path):
    done = run_script(tmp_path, 'ensure_demo_postgres /proc/dbspweb-no; echo "WHY=$DBSPWEB_DEMO_POSTGRES_UNAVAILABLE"; '
                                'echo "URL=${DBSPWEB_DEMO_POSTGRES_URL:-}"')
    assert done.returncode == 0, done.stderr  # the rest of ./scripts/run goes on
    assert "WHY=PostgreSQL could not be started: " in done.stdout and "/proc/dbspweb-no" in done.stdout
    assert "URL=\n" in done.stdout
    assert "its circuit is seeded anyway" in done.stdout
