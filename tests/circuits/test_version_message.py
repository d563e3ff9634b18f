"""A version carries its author's message (issue 14): saved with POST .../versions/
{document, message}, listed and read back; optional, at most 500 characters."""
import copy

import pytest

from tests.conftest import example

pytestmark = pytest.mark.django_db


def edited():
    doc = copy.deepcopy(example("big_orders"))
    doc["nodes"][1]["params"]["predicate"] = "amount > 5"
    return doc


def test_a_version_keeps_its_message(make_user, circuit_of, client_for):
    alice = make_user("alice")
    circuit = circuit_of(alice)
    api = client_for(alice)
    saved = api.post(f"/api/circuits/{circuit.pk}/versions/", {"document": edited(), "message": "lower the bar to 5"}, format="json")
    assert saved.status_code == 201, saved.content
    assert (saved.json()["number"], saved.json()["message"]) == (2, "lower the bar to 5")
    listed = api.get(f"/api/circuits/{circuit.pk}/versions/").json()
    assert [(v["number"], v["message"]) for v in listed] == [(2, "lower the bar to 5"), (1, "")]
    assert api.get(f"/api/circuits/{circuit.pk}/versions/2/").json()["message"] == "lower the bar to 5"
    assert api.get(f"/api/circuits/{circuit.pk}/").json()["latest_version"]["message"] == "lower the bar to 5"


def test_the_message_is_optional_and_bounded(make_user, circuit_of, client_for):
    alice = make_user("alice")
    circuit = circuit_of(alice)
    api = client_for(alice)
    plain = api.post(f"/api/circuits/{circuit.pk}/versions/", {"document": edited()}, format="json")
    assert plain.status_code == 201 and plain.json()["message"] == ""
    long = api.post(f"/api/circuits/{circuit.pk}/versions/", {"document": edited(), "message": "x" * 501}, format="json")
    assert long.status_code == 400
    assert "message" in long.content.decode()
    assert [v["number"] for v in api.get(f"/api/circuits/{circuit.pk}/versions/").json()] == [2, 1]  # nothing stored
