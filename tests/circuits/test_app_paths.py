"""The single-page app is also served at the plain paths people are sent to: share links
(/shared/<token>) and sign-up (/signup); other paths stay 404."""
import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/shared/AbC_12-x", "/shared/AbC_12-x/", "/signup", "/signup/"])
def test_share_links_and_sign_up_serve_the_app(path):
    response = Client().get(path)
    assert response.status_code in (200, 503)  # 503 says how to build the frontend
    assert "csrftoken" in response.cookies
    index = Client().get("/")
    assert response.content == index.content


@pytest.mark.parametrize("path", ["/shared/", "/shared/a/b", "/signupx", "/shared/bad token"])
def test_other_paths_are_not_the_app(path):
    assert Client().get(path).status_code == 404
