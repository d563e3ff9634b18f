import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_login_me_logout_with_csrf(make_user):
    make_user("alice", "s3cret-pass!")
    browser = Client(enforce_csrf_checks=True)
    me = browser.get("/api/auth/me/")
    assert me.json() == {"authenticated": False, "username": None}
    csrf = me.cookies["csrftoken"].value
    # Without the CSRF header the login is refused, as a cross-site form would be.
    assert browser.post("/api/auth/login/", {"username": "alice", "password": "s3cret-pass!"}, content_type="application/json").status_code == 403
    bad = browser.post("/api/auth/login/", {"username": "alice", "password": "nope"}, content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
    assert bad.status_code == 400 and bad.json()["detail"] == "Invalid username or password."
    ok = browser.post("/api/auth/login/", {"username": "alice", "password": "s3cret-pass!"}, content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
    assert ok.status_code == 200 and ok.json() == {"username": "alice"}
    assert browser.get("/api/auth/me/").json() == {"authenticated": True, "username": "alice"}
    csrf = browser.cookies["csrftoken"].value  # rotated at login
    assert browser.post("/api/auth/logout/", HTTP_X_CSRFTOKEN=csrf).status_code == 204
    assert browser.get("/api/auth/me/").json()["authenticated"] is False


def test_token_for_scripts(make_user, client_for):
    make_user("bob", "s3cret-pass!")
    client = client_for()
    token = client.post("/api/auth/token/", {"username": "bob", "password": "s3cret-pass!"}, format="json").json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/auth/me/").json()["username"] == "bob"


def test_app_index_is_served_with_a_csrf_cookie():
    response = Client().get("/")
    assert response.status_code in (200, 503)  # 503 says how to build the frontend
    assert "csrftoken" in response.cookies
    if response.status_code == 200:
        assert b"/static/app/" in response.content
