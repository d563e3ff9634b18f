"""POST /api/auth/register/: Django's password validators, then a logged-in session."""
import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db


def csrf_client():
    browser = Client(enforce_csrf_checks=True)
    token = browser.get("/api/auth/me/").cookies["csrftoken"].value
    return browser, token


def test_register_logs_the_new_user_in():
    browser, csrf = csrf_client()
    response = browser.post("/api/auth/register/", {"username": "dora", "password": "kestrel-orbit-91", "email": "dora@example.org"},
                            content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
    assert response.status_code == 201 and response.json() == {"username": "dora"}
    assert browser.get("/api/auth/me/").json() == {"authenticated": True, "username": "dora"}
    user = get_user_model().objects.get(username="dora")
    assert user.email == "dora@example.org" and user.check_password("kestrel-orbit-91")


def test_register_without_email_and_without_csrf():
    browser, csrf = csrf_client()
    body = {"username": "eve", "password": "kestrel-orbit-91"}
    assert browser.post("/api/auth/register/", body, content_type="application/json").status_code == 403
    assert browser.post("/api/auth/register/", body, content_type="application/json", HTTP_X_CSRFTOKEN=csrf).status_code == 201


@pytest.mark.parametrize("body, field, words", [
    ({"username": "frank", "password": "short"}, "password", "too short"),
    ({"username": "frank", "password": "password123"}, "password", "too common"),
    ({"username": "frank", "password": "83920174629"}, "password", "entirely numeric"),
    ({"username": "frankfurter", "password": "frankfurter1"}, "password", "too similar"),
    ({"username": "bad name!", "password": "kestrel-orbit-91"}, "username", "valid username"),
    ({"username": "frank", "password": "kestrel-orbit-91", "email": "nope"}, "email", "valid email"),
    ({"password": "kestrel-orbit-91"}, "username", "required"),
])
def test_bad_registrations_name_the_field_and_create_nobody(body, field, words):
    browser, csrf = csrf_client()
    response = browser.post("/api/auth/register/", body, content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert any(e["field"] == field and words in e["message"] for e in errors), errors
    assert not get_user_model().objects.exists()


def test_usernames_are_unique_case_insensitively(make_user):
    make_user("Grace")
    browser, csrf = csrf_client()
    response = browser.post("/api/auth/register/", {"username": "grace", "password": "kestrel-orbit-91"},
                            content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "username"
