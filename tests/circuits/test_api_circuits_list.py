"""GET /api/circuits/: scope, search, tag/owner/visibility filters, pagination."""
import pytest

from circuits import services
from circuits.models import CircuitGrant
from tests.conftest import example

pytestmark = pytest.mark.django_db


def make(owner, name, visibility="private", description="", tags=()):
    return services.create_circuit(owner, name, description, visibility, example("big_orders"), tags=list(tags))


def names(response):
    assert response.status_code == 200, response.json()
    return sorted(c["name"] for c in response.json()["results"])


@pytest.fixture
def world(make_user):
    alice, bob = make_user("alice"), make_user("bob")
    make(alice, "alice private", tags=["fraud"])
    make(alice, "alice public", "public", description="Fraud detection on orders", tags=["fraud", "orders"])
    make(alice, "alice unlisted", "unlisted", tags=["orders"])
    granted = make(alice, "alice granted", "private")
    CircuitGrant.objects.create(circuit=granted, user=bob)
    make(bob, "bob private")
    make(bob, "bob public", "public", tags=["Orders"])
    return alice, bob


def test_default_list_is_mine_shared_and_public(world, client_for):
    alice, bob = world
    assert names(client_for(bob).get("/api/circuits/")) == ["alice granted", "alice public", "bob private", "bob public"]
    assert names(client_for().get("/api/circuits/")) == ["alice public", "bob public"]


def test_scopes(world, client_for):
    alice, bob = world
    api = client_for(bob)
    assert names(api.get("/api/circuits/", {"scope": "mine"})) == ["bob private", "bob public"]
    assert names(api.get("/api/circuits/", {"scope": "shared"})) == ["alice granted"]
    assert names(api.get("/api/circuits/", {"scope": "public"})) == ["alice public", "bob public"]
    assert names(client_for().get("/api/circuits/", {"scope": "mine"})) == []
    bad = api.get("/api/circuits/", {"scope": "everything"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "scope"


def test_unlisted_circuits_are_listed_only_to_their_owner(world, client_for):
    alice, bob = world
    assert "alice unlisted" in names(client_for(alice).get("/api/circuits/"))
    assert "alice unlisted" not in names(client_for(bob).get("/api/circuits/", {"visibility": "unlisted"}))


def test_search_matches_name_or_description(world, client_for):
    alice, _ = world
    api = client_for(alice)
    assert names(api.get("/api/circuits/", {"search": "FRAUD"})) == ["alice public"]  # description
    assert names(api.get("/api/circuits/", {"search": "unlisted"})) == ["alice unlisted"]


def test_filters_by_tag_owner_and_visibility(world, client_for):
    alice, bob = world
    api = client_for(alice)
    assert names(api.get("/api/circuits/", {"tag": "orders"})) == ["alice public", "alice unlisted", "bob public"]
    assert names(api.get("/api/circuits/?tag=orders&tag=fraud")) == ["alice public"]
    assert names(api.get("/api/circuits/", {"owner": "bob"})) == ["bob public"]
    assert names(api.get("/api/circuits/", {"visibility": "public", "owner": "alice"})) == ["alice public"]
    assert api.get("/api/circuits/", {"visibility": "secret"}).status_code == 400


def test_tags_are_normalised_and_editable(make_user, client_for):
    alice = make_user("alice")
    api = client_for(alice)
    created = api.post("/api/circuits/", {"name": "t", "document": example("big_orders"), "tags": ["Orders", "orders", "eu-west"]}, format="json")
    assert created.status_code == 201 and created.json()["tags"] == ["eu-west", "orders"]
    cid = created.json()["id"]
    patched = api.patch(f"/api/circuits/{cid}/", {"tags": ["fraud"]}, format="json")
    assert patched.status_code == 200 and patched.json()["tags"] == ["fraud"]
    bad = api.patch(f"/api/circuits/{cid}/", {"tags": ["not a slug!"]}, format="json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "tags.0"
    assert api.get(f"/api/circuits/{cid}/").json()["tags"] == ["fraud"]


def test_pagination_keeps_the_count_next_previous_results_shape(make_user, client_for):
    alice = make_user("alice")
    for i in range(5):
        make(alice, f"c{i}")
    api = client_for(alice)
    first = api.get("/api/circuits/", {"page_size": 2}).json()
    assert first["count"] == 5 and len(first["results"]) == 2 and first["previous"] is None
    assert "page=2" in first["next"]
    last = api.get("/api/circuits/", {"page_size": 2, "page": 3}).json()
    assert len(last["results"]) == 1 and last["next"] is None
    seen = {c["id"] for p in (1, 2, 3) for c in api.get("/api/circuits/", {"page_size": 2, "page": p}).json()["results"]}
    assert len(seen) == 5
    assert api.get("/api/circuits/", {"page": 9}).status_code == 404


def test_detail_says_what_the_requester_may_do(world, client_for):
    alice, bob = world
    public = client_for(bob).get("/api/circuits/", {"owner": "alice"}).json()["results"]
    assert all(c["can_edit"] is False and c["can_operate"] is False for c in public)
    mine = client_for(alice).get("/api/circuits/", {"scope": "mine"}).json()["results"]
    assert all(c["can_edit"] and c["can_operate"] for c in mine)
