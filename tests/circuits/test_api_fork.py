"""POST /api/circuits/<id>/fork/: a private copy for the requester."""
import copy

import pytest

from circuits import services
from circuits.models import Circuit
from tests.conftest import example

pytestmark = pytest.mark.django_db


def test_fork_copies_the_latest_document_as_version_1(make_user, client_for):
    alice, bob = make_user("alice"), make_user("bob")
    source = services.create_circuit(alice, "Big orders", "desc", "public", example("big_orders"), tags=["orders"])
    doc = copy.deepcopy(example("big_orders"))
    doc["nodes"][1]["params"]["predicate"] = "amount > 7"
    services.add_version(source, doc)
    response = client_for(bob).post(f"/api/circuits/{source.pk}/fork/", format="json")
    assert response.status_code == 201, response.json()
    fork = response.json()
    assert fork["owner"] == "bob" and fork["visibility"] == "private" and fork["forked_from"] == source.pk
    assert fork["name"] == "Big orders (fork)" and fork["description"] == "desc" and fork["tags"] == ["orders"]
    assert fork["latest_version"]["number"] == 1
    assert fork["latest_version"]["document"]["nodes"][1]["params"]["predicate"] == "amount > 7"
    assert fork["can_edit"] is True
    # The fork is bob's to change; the source is untouched.
    assert client_for(bob).patch(f"/api/circuits/{fork['id']}/", {"name": "mine"}, format="json").status_code == 200
    assert Circuit.objects.get(pk=source.pk).name == "Big orders" and source.versions.count() == 2


def test_fork_with_a_name_and_of_an_unlisted_circuit_with_its_token(make_user, client_for):
    alice, bob = make_user("alice"), make_user("bob")
    source = services.create_circuit(alice, "Hidden", "", "unlisted", example("big_orders"))
    url = f"/api/circuits/{source.pk}/fork/"
    assert client_for(bob).post(url, {"name": "x"}, format="json").status_code == 404
    response = client_for(bob).post(url, {"name": "My copy"}, format="json", HTTP_X_SHARE_TOKEN=source.share_token)
    assert response.status_code == 201 and response.json()["name"] == "My copy"


def test_private_circuits_cannot_be_forked_by_others_and_anonymous_cannot_fork(make_user, client_for):
    alice, bob = make_user("alice"), make_user("bob")
    private = services.create_circuit(alice, "p", "", "private", example("big_orders"))
    public = services.create_circuit(alice, "q", "", "public", example("big_orders"))
    assert client_for(bob).post(f"/api/circuits/{private.pk}/fork/").status_code == 404
    assert client_for().post(f"/api/circuits/{public.pk}/fork/").status_code == 403
    assert client_for(alice).post(f"/api/circuits/{private.pk}/fork/").status_code == 201  # owners may copy their own
    bad = client_for(bob).post(f"/api/circuits/{public.pk}/fork/", {"name": ""}, format="json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "name"
    assert Circuit.objects.filter(owner=bob).count() == 0
