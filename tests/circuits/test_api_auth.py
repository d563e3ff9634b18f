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


def test_passwords_are_argon2_and_older_pbkdf2_ones_still_sign_in(settings):
    """The project's hashers (this directory's conftest swaps in MD5 for speed): a new
    password is hashed with Argon2id; a PBKDF2 hash made before still signs in, and is
    rehashed with Argon2 then (bench/sign_in.py: 480 -> 156 ms a sign-in)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    from dbspweb import settings as project

    settings.PASSWORD_HASHERS = project.PASSWORD_HASHERS
    users = get_user_model().objects
    assert users.create_user("new", password="s3cret-pass!").password.startswith("argon2$argon2id$")
    old = users.create_user("old")
    users.filter(pk=old.pk).update(password=make_password("s3cret-pass!", hasher="pbkdf2_sha256"))
    browser = Client()
    csrf = browser.get("/api/auth/me/").cookies["csrftoken"].value
    ok = browser.post("/api/auth/login/", {"username": "old", "password": "s3cret-pass!"}, content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
    assert ok.status_code == 200
    assert users.get(pk=old.pk).password.startswith("argon2$argon2id$")
