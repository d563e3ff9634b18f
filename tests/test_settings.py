"""Settings come from the environment: SQLite by default, DATABASE_URL switches."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.one_backend  # its subject does not depend on the database: run once, on SQLite

ROOT = Path(__file__).resolve().parents[1]


def settings_with(env: dict) -> dict:
    code = ("import json, django; from django.conf import settings; django.setup(); "
            "db = settings.DATABASES['default']; "
            "print(json.dumps({'engine': db['ENGINE'], 'name': str(db['NAME']), 'host': db.get('HOST'), "
            "'redis': settings.REDIS_URL, 'spark': settings.SPARK_MASTER, 'debug': settings.DEBUG}))")
    base = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SPARK_MASTER", "DJANGO_DEBUG")}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT,
                         env={**base, "DJANGO_SETTINGS_MODULE": "dbspweb.settings", "DJANGO_SECRET_KEY": "test-only", **env},
                         capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_debug_is_off_unless_asked_for():
    assert settings_with({})["debug"] is False
    assert settings_with({"DJANGO_DEBUG": "1"})["debug"] is True


def test_defaults_are_sqlite_local_redis_and_local_spark():
    s = settings_with({})
    assert s["engine"] == "django.db.backends.sqlite3" and s["name"].endswith("db.sqlite3")
    assert s["redis"] == "redis://127.0.0.1:6379/0" and s["spark"].startswith("local[")


def test_database_url_switches_to_postgresql():
    s = settings_with({"DATABASE_URL": "postgres://u:p@db.example:5433/dbspweb", "SPARK_MASTER": "spark://m:7077"})
    assert s["engine"] == "django.db.backends.postgresql"
    assert (s["name"], s["host"]) == ("dbspweb", "db.example")
    assert s["spark"] == "spark://m:7077"


def test_production_mode_requires_a_secret_key():
    code = "import django; django.setup()"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "dbspweb.settings", "DJANGO_DEBUG": "0"}
    env.pop("DJANGO_SECRET_KEY", None)
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "DJANGO_SECRET_KEY must be set" in result.stderr


def _printed(expression: str, env: dict):
    code = f"import json, django; from django.conf import settings; django.setup(); print(json.dumps({expression}))"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_WEBSOCKET", "DJANGO_CSRF", "DBSPWEB_THROTTLE"))}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**base, "DJANGO_SETTINGS_MODULE": "dbspweb.settings", **env},
                         capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_websocket_origins_default_to_the_csrf_trusted_origins_or_their_own_variable():
    origins = "settings.WEBSOCKET_ALLOWED_ORIGINS"
    assert _printed(origins, {}) == []  # only the server's own origin (dbspweb/origins.py)
    assert _printed(origins, {"DJANGO_CSRF_TRUSTED_ORIGINS": "https://dbsp.example.org"}) == ["https://dbsp.example.org"]
    assert _printed(origins, {"DJANGO_CSRF_TRUSTED_ORIGINS": "https://x.example",
                              "DJANGO_WEBSOCKET_ORIGINS": "https://a.example, http://b.example:8080"}) == [
        "https://a.example", "http://b.example:8080"]


def test_throttle_rates_come_from_the_environment():
    rates = _printed("settings.THROTTLE_RATES", {"DBSPWEB_THROTTLE_LOGIN": "3/min", "DBSPWEB_THROTTLE_ANON": "off"})
    assert rates["login"] == "3/min" and rates["anon"] == "off"
    assert set(rates) == {"anon", "share", "login", "register", "validate"}
