"""What a server error shows (dbspweb/errors.py). With DJANGO_DEBUG=0 a 500 is the
API's JSON error body: no traceback, no settings, no paths. With debug on, Django's
technical page hides the settings that hold addresses (REDIS_URL, the broker, the
channel layer, the database)."""
import pytest
from django.conf import settings as configured
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

DOCUMENT = {"document": {"nodes": [], "edges": []}}


@pytest.fixture
def broken_validate(monkeypatch):
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
