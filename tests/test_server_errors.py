"""What a server error shows (dbspweb/errors.py). With DJANGO_DEBUG=0 a 500 is the
API's JSON error body: no traceback, no settings, no paths. With debug on, Django's
technical page hides the settings that hold addresses (REDIS_URL, the broker, the
channel layer, the database)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings as configured
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

DOCUMENT = {"document": {"nodes": [], "edges": []}}


@pytest.fixture
def broken_validate(monkeypatch):
    from django.urls import get_resolver

    # every view module imported first: one that imports the function by name while it is
    # patched (circuits/frontends.py) would keep the broken one for the rest of the session
    get_resolver().url_patterns

    def boom(document):
        raise RuntimeError(f"boom in {configured.BASE_DIR}")

    monkeypatch.setattr("circuits.services.inspect_document", boom)


def test_a_500_without_debug_is_json_without_a_traceback(settings, broken_validate):
    settings.DEBUG = False
    client = APIClient(raise_request_exception=False)
    for accept in ("application/json", "text/html"):
        response = client.post("/api/validate/", DOCUMENT, format="json", HTTP_ACCEPT=accept)
        assert response.status_code == 500
        assert response["Content-Type"] == "application/json"
        body = response.json()
        assert set(body) == {"detail", "errors"} and "Server error" in body["detail"]
        text = response.content.decode()
        assert "Traceback" not in text and "boom" not in text and str(configured.BASE_DIR) not in text


def test_the_debug_page_hides_addresses_and_credentials(settings, broken_validate):
    settings.DEBUG = True
    settings.REDIS_URL = "redis://:hunter2@redis.internal:6379/3"
    settings.CELERY_BROKER_URL = "redis://:hunter2@broker.internal:6379/3"
    settings.DATABASE_URL = "postgres://app:hunter2@db.internal/app"
    response = APIClient(raise_request_exception=False).post("/api/validate/", DOCUMENT, format="json", HTTP_ACCEPT="text/html")
    assert response.status_code == 500
    page = response.content.decode()
    assert "RuntimeError" in page  # the debug page itself
    assert "REDIS_URL" in page  # listed, its value hidden
    assert "hunter2" not in page and "redis.internal" not in page and "db.internal" not in page


def test_a_500_with_django_debug_unset_is_plain(tmp_path):
    """The settings' default, in a process of its own without DJANGO_DEBUG (the test
    session sets it): an unexpected error answers the plain JSON 500, no debug page."""
    code = f"""
import json, django
django.setup()
from django.core.management import call_command
from django.conf import settings
from django.test import Client
call_command("migrate", verbosity=0)
def boom(document):
    raise RuntimeError("boom in " + str(settings.BASE_DIR))
import circuits.services
circuits.services.inspect_document = boom
answers = []
for accept in ("application/json", "text/html"):
    r = Client(raise_request_exception=False).post("/api/validate/", {json.dumps(DOCUMENT)!r}, content_type="application/json",
                                                   HTTP_ACCEPT=accept, HTTP_HOST="localhost")
    answers.append({{"status": r.status_code, "type": r["Content-Type"], "text": r.content.decode()}})
print(json.dumps({{"debug": settings.DEBUG, "answers": answers}}))
"""
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_DEBUG", "DATABASE_URL")}
    env.update({"DJANGO_SETTINGS_MODULE": "dbspweb.settings", "DJANGO_SECRET_KEY": "test-only",
                "SQLITE_PATH": str(tmp_path / "db.sqlite3"), "DBSPWEB_VAR_DIR": str(tmp_path)})
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(configured.BASE_DIR), env=env, capture_output=True,
                         text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["debug"] is False
    for answer in result["answers"]:
        assert answer["status"] == 500 and answer["type"] == "application/json"
        body = json.loads(answer["text"])
        assert set(body) == {"detail", "errors"} and "Server error" in body["detail"]
        assert "Traceback" not in answer["text"] and "boom" not in answer["text"]
        assert str(configured.BASE_DIR) not in answer["text"]
