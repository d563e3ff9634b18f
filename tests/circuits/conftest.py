import pytest
from rest_framework.test import APIClient

from circuits import services
from tests.conftest import example


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """These tests create many users; hashing is not what they test."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def client_for():
    def make(user=None):
        client = APIClient()
        if user is not None:
            client.force_authenticate(user)
        return client

    return make


@pytest.fixture
def circuit_of(db):
    def make(owner, visibility="private", name="Big orders"):
        return services.create_circuit(owner, name, "", visibility, example("big_orders"))

    return make
